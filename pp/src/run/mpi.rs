//! `pp run -- mpirun ...`: an MPI program's ranks are the processors. `pp run` compiles the
//! tracer `pmpi.c` with the MPI compiler wrapper (`$PP_MPICC`, else `mpicc`), preloads it into
//! the ranks (the launcher passes the environment on to them), and merges the text log each
//! rank writes at `MPI_Finalize` into one log (docs/mpi.md).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Failure, fail};

/// The tracer's source.
const PMPI_C: &str = include_str!("pmpi.c");

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
    let source = dir.join("pmpi.c");
    let library = dir.join("libpp_pmpi.so");
    std::fs::write(&source, PMPI_C)
        .map_err(|e| fail(1, format!("cannot write {}: {e}", source.display())))?;
    let mpicc = std::env::var("PP_MPICC").unwrap_or_else(|_| "mpicc".into());
    let out = Command::new(&mpicc)
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&library)
        .arg(&source)
        .output()
        .map_err(|e| {
            fail(
                1,
                if e.kind() == std::io::ErrorKind::NotFound {
                    format!(
                        "{mpicc} not found: pp run builds its MPI tracer with the MPI compiler wrapper (tools/system-packages.sh installs Open MPI; PP_MPICC names another)"
                    )
                } else {
                    format!("cannot run {mpicc}: {e}")
                },
            )
        })?;
    if !out.status.success() {
        let first = String::from_utf8_lossy(&out.stderr)
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string();
        return Err(fail(
            1,
            format!("{mpicc} could not build the MPI tracer: {first}"),
        ));
    }
    Ok(library)
}

/// A fresh folder beside the log for the tracer and the ranks' logs.
pub fn scratch(log: &Path) -> Result<PathBuf, Failure> {
    let base = log.parent().unwrap_or(Path::new("."));
    let stem = log
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pp.log".into());
    for k in 0..100 {
        let dir = base.join(format!(".{stem}.mpi-{}-{k}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(1, format!("cannot create {}: {e}", dir.display()))),
        }
    }
    Err(fail(
        1,
        format!("cannot create a folder in {}", base.display()),
    ))
}

/// The ranks' logs in `dir` (`rank.rank<r>`) merged into `log`: one header with `p` from rank
/// 0's and `params`, then every rank's events (a text log's reader sorts them by time). Says
/// which ranks wrote nothing; `None` when no rank wrote a log.
pub fn merge(dir: &Path, log: &Path, params: &[String]) -> Result<Option<usize>, Failure> {
    let read = |r: usize| std::fs::read_to_string(dir.join(format!("rank.rank{r}"))).ok();
    let Some(first) = read(0) else {
        return Ok(None);
    };
    let header = first.lines().next().unwrap_or("");
    let p: usize = header
        .strip_prefix("pplog 1 p=")
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| fail(1, format!("rank 0's log has no header: {header}")))?;
    let mut text = format!("pplog 1 p={p}");
    for param in params {
        text.push(' ');
        text.push_str(param);
    }
    text.push('\n');
    let mut missing = Vec::new();
    for r in 0..p {
        match if r == 0 { Some(first.clone()) } else { read(r) } {
            Some(rank) => {
                for line in rank.lines().skip(1) {
                    text.push_str(line);
                    text.push('\n');
                }
            }
            None => missing.push(r),
        }
    }
    if !missing.is_empty() {
        eprintln!(
            "pp run: warning: ranks {missing:?} of {p} wrote no log (they did not reach MPI_Finalize, or the launcher did not pass LD_PRELOAD on): their time is idle"
        );
    }
    files::output::write(log, text.as_bytes())
        .map_err(|e| fail(1, format!("{}: {}", log.display(), e.reason())))?;
    Ok(Some(p))
}
