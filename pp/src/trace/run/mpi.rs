//! `pp run -- mpirun ...`: an MPI program's ranks are the processors. `pp run` compiles the
//! tracer ([`TRACER_C`], from `pmpi/`) with the MPI compiler wrapper (`$PP_MPICC`, else
//! `mpicc`), preloads it into the ranks (the launcher passes the environment on to them), and
//! merges the text log each rank writes at `MPI_Finalize` into one log (docs/mpi.md).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::failure::{Failure, fail};

/// The tracer's C source: its three files, compiled as one.
pub const TRACER_C: &str = concat!(
    include_str!("pmpi/tracer.c"),
    include_str!("pmpi/c_calls.c"),
    include_str!("pmpi/fortran_calls.c"),
);

/// Launchers whose program's ranks are traced.
const LAUNCHERS: [&str; 6] = [
    "mpirun",
    "mpiexec",
    "orterun",
    "mpirun.openmpi",
    "mpiexec.openmpi",
    "mpiexec.hydra",
];

/// Whether `program` is an MPI launcher (by its file name).
pub fn is_launcher(program: &OsString) -> bool {
    Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| LAUNCHERS.contains(&n) || n == "mpirun.mpich" || n == "mpiexec.mpich")
}

/// The tracer compiled into `dir` (which pp run removes afterwards).
pub fn build_tracer(dir: &Path) -> Result<PathBuf, Failure> {
    let mpicc = std::env::var("PP_MPICC").unwrap_or_else(|_| "mpicc".into());
    crate::trace::mpicc::build(
        &mpicc,
        &["-shared", "-fPIC", "-O2"],
        TRACER_C,
        dir,
        "libpp_pmpi.so",
        "the MPI tracer",
        "pp run -- mpirun (PP_MPICC names another compiler wrapper)",
    )
    .map_err(|e| fail(1, e))
}

/// A fresh folder beside the log for the tracer and the ranks' logs.
pub fn scratch(log: &Path) -> Result<PathBuf, Failure> {
    let base = log.parent().unwrap_or(Path::new("."));
    let stem = log
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pp.log".into());
    crate::trace::mpicc::scratch(base, &format!(".{stem}.mpi")).map_err(|e| fail(1, e))
}

/// The ranks' logs in `dir` (`rank.rank<r>`) merged into `log`: one header with `p` from rank
/// 0's and `params`, then every rank's events (a text log's reader sorts them by time). Says
/// which ranks wrote nothing (to `warn`); `None` when no rank wrote a log.
pub fn merge(
    dir: &Path,
    log: &Path,
    params: &[String],
    warn: &mut dyn FnMut(String),
) -> Result<Option<usize>, Failure> {
    let read = |r: usize| std::fs::read_to_string(dir.join(format!("rank.rank{r}"))).ok();
    // A rank stopped before MPI_Finalize (a crash, a signal) leaves its log empty: p comes
    // from the first rank whose log has its header.
    let header_p = |text: &str| -> Option<usize> {
        text.lines()
            .next()?
            .strip_prefix("pplog 1 p=")?
            .trim()
            .parse()
            .ok()
    };
    let mut ranks: Vec<usize> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_prefix("rank.rank")?
                    .parse()
                    .ok()
            })
            .collect()
        })
        .unwrap_or_default();
    ranks.sort_unstable();
    let Some(p) = ranks
        .iter()
        .find_map(|&r| read(r).as_deref().and_then(header_p))
    else {
        return Ok(None);
    };
    let mut text = format!("pplog 1 p={p}");
    for param in params {
        text.push(' ');
        text.push_str(param);
    }
    text.push('\n');
    let mut missing = Vec::new();
    for r in 0..p {
        match read(r).filter(|t| header_p(t).is_some()) {
            Some(rank) => align(&rank, &mut text),
            None => missing.push(r),
        }
    }
    if !missing.is_empty() {
        warn(format!(
            "ranks {missing:?} of {p} wrote no log (they stopped before MPI_Finalize, or the launcher did not pass LD_PRELOAD on): their time is idle"
        ));
    }
    files::output::write(log, text.as_bytes())
        .map_err(|e| fail(1, format!("{}: {}", log.display(), e.reason())))?;
    Ok(Some(p))
}

/// Appends the events of one rank's log (after its header) to `out`, their times moved onto
/// rank 0's clock: by the offsets the tracer measured at `MPI_Init` and `MPI_Finalize`
/// (`# clock_offset <local ns> <offset ns>`), interpolated linearly between them (the clocks
/// may drift apart), the first alone when there is one. Other lines pass as they are (the
/// reader reports what is wrong with them).
fn align(rank: &str, out: &mut String) {
    let offsets: Vec<(u64, i64)> = rank
        .lines()
        .filter_map(|l| {
            let mut w = l.strip_prefix("# clock_offset ")?.split_whitespace();
            Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
        })
        .collect();
    let offset = |t: u64| -> i64 {
        match offsets.as_slice() {
            [] => 0,
            [(_, o)] => *o,
            [(ta, oa), (tb, ob), ..] if tb > ta => {
                let f = (t as f64 - *ta as f64) / (*tb - *ta) as f64;
                oa + ((ob - oa) as f64 * f).round() as i64
            }
            [(_, o), ..] => *o,
        }
    };
    for line in rank.lines().skip(1) {
        let moved = line.split_once(' ').and_then(|(t, rest)| {
            let t: u64 = t.parse().ok()?;
            let t = (i128::from(t) + i128::from(offset(t))).clamp(0, i128::from(u64::MAX));
            Some(format!("{t} {rest}"))
        });
        match moved {
            Some(m) => out.push_str(&m),
            None => out.push_str(line),
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_stopped_before_finalize_is_named_and_the_others_are_merged() {
        // Rank 0 crashed: the tracer had opened its log and written nothing to it.
        let dir = test_support::scratch("merge-crashed-rank");
        std::fs::write(dir.join("rank.rank0"), "").unwrap();
        std::fs::write(
            dir.join("rank.rank1"),
            "pplog 1 p=2\n10 1 start\n10 1 work_begin\n90 1 work_end\n90 1 stop\n",
        )
        .unwrap();
        let log = dir.join("pp.log");
        let mut warnings = Vec::new();
        let merged = merge(&dir, &log, &["n=1".into()], &mut |w| warnings.push(w)).unwrap();
        assert_eq!(merged, Some(2));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0]
                .starts_with("ranks [0] of 2 wrote no log (they stopped before MPI_Finalize"),
            "{warnings:?}"
        );
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.starts_with("pplog 1 p=2 n=1\n10 1 start\n"), "{text}");

        // No rank wrote its log: nothing to merge, and nothing written.
        let dir = test_support::scratch("merge-no-rank");
        std::fs::write(dir.join("rank.rank0"), "").unwrap();
        let log = dir.join("pp.log");
        assert_eq!(merge(&dir, &log, &[], &mut |_| {}).unwrap(), None);
        assert!(!log.exists());
    }

    #[test]
    fn times_move_onto_rank_0s_clock_between_the_two_offsets() {
        let rank = "pplog 1 p=2\n# clock_offset 1000 50\n1000 1 start\n1500 1 recv 0 1 8\n\
                    2000 1 stop\n# clock_offset 2000 150\nnot an event\n";
        let mut out = String::new();
        align(rank, &mut out);
        assert_eq!(
            out,
            "# clock_offset 1000 50\n1050 1 start\n1600 1 recv 0 1 8\n2150 1 stop\n\
             # clock_offset 2000 150\nnot an event\n"
        );
        let mut out = String::new();
        align("pplog 1 p=2\n# clock_offset 10 -20\n15 1 start\n", &mut out);
        assert_eq!(out, "# clock_offset 10 -20\n0 1 start\n");
        let mut out = String::new();
        align("pplog 1 p=2\n5 1 start\n", &mut out);
        assert_eq!(out, "5 1 start\n");
    }
}
