//! `pp run -- mpirun ...`: an MPI program's ranks are the processors. `pp run` compiles the
//! tracer ([`TRACER_C`], from `pmpi/`) with the MPI compiler wrapper (`$PP_MPICC`, else
//! `mpicc`), preloads it into the ranks (the launcher passes the environment on to them), and
//! merges the text log each rank writes at `MPI_Finalize` into one log (docs/mpi.md). In a
//! hybrid MPI + OpenMP program each rank's OMPT tool writes its OpenMP threads' log too, and
//! the merge makes them threads of the run (docs/mpi.md, "Hybrid MPI + OpenMP").

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::failure::{Failure, fail};
use crate::log::{LogReader, TextWriter};

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

/// The ranks' logs in `dir` (`rank.rank<r>`, the tracer's) merged into `log`: one header with
/// `p` and `params`, then every rank's events (a text log's reader sorts them by time). A rank
/// whose OMPT tool wrote a log too (`rank.omp<r>`) is merged with it: its OpenMP threads are
/// threads `r·T .. r·T+T-1`, `T` the largest first team of any rank, and `p = ranks × T`
/// (docs/mpi.md, "Hybrid MPI + OpenMP"). Says which ranks wrote nothing and what else was not
/// recorded (to `warn`); `None` when no rank wrote a log.
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
    let Some(size) = ranks
        .iter()
        .find_map(|&r| read(r).as_deref().and_then(header_p))
    else {
        return Ok(None);
    };
    let tracers: Vec<Option<String>> = (0..size)
        .map(|r| read(r).filter(|t| header_p(t).is_some()))
        .collect();
    let missing: Vec<usize> = (0..size).filter(|&r| tracers[r].is_none()).collect();
    if !missing.is_empty() {
        warn(format!(
            "ranks {missing:?} of {size} wrote no log (they stopped before MPI_Finalize, or the launcher did not pass LD_PRELOAD on): their time is idle"
        ));
    }
    // Ranks whose OMPT log is there but cannot be merged (said here, once).
    let mut said = vec![false; size];
    let omp: Vec<Option<OmpLog>> = (0..size)
        .map(|r| {
            let tracer = tracers[r].as_deref()?;
            let omp = match OmpLog::read(dir, r) {
                Ok(omp) => omp?,
                Err(why) => {
                    said[r] = true;
                    warn(why);
                    return None;
                }
            };
            if comment(tracer, "ompt_epoch").is_none_or(|e| e == 0) {
                said[r] = true;
                warn(format!(
                    "rank {r}: its OpenMP threads are not in the log: the OMPT tool's clock is not CLOCK_MONOTONIC (PP_CLOCK=tsc?), so its events cannot be placed beside the MPI calls'"
                ));
                return None;
            }
            Some(omp)
        })
        .collect();
    let threads = omp.iter().flatten().map(|o| o.p).max().unwrap_or(1);
    // Ranks that loaded an OpenMP runtime and wrote no OMPT log, by runtime.
    let without = |runtime: &str| -> Vec<usize> {
        let loaded = format!("# openmp_runtime {runtime}");
        (0..size)
            .filter(|&r| {
                omp[r].is_none()
                    && !said[r]
                    && tracers[r]
                        .as_deref()
                        .is_some_and(|t| t.lines().any(|l| l == loaded))
            })
            .collect()
    };
    let alone = |threads: usize| {
        if threads > 1 {
            format!("each is its thread r*{threads} alone, its other threads idle")
        } else {
            "each rank is one thread".to_string()
        }
    };
    let gomp = without("libgomp");
    if !gomp.is_empty() {
        warn(format!(
            "ranks {gomp:?}: their OpenMP threads are not recorded: the program uses GCC's OpenMP runtime (libgomp), which has no tools interface (OMPT); build it with clang -fopenmp (OMPI_CC=clang mpicc -fopenmp) to record them ({})",
            alone(threads)
        ));
    }
    let omp_silent = without("libomp");
    if !omp_silent.is_empty() {
        warn(format!(
            "ranks {omp_silent:?}: their OpenMP threads are not recorded: LLVM's OpenMP runtime did not load the OMPT tool, or the rank opened no parallel region ({})",
            alone(threads)
        ));
    }
    if threads > 1 {
        let plain: Vec<usize> = (0..size)
            .filter(|&r| {
                tracers[r].is_some()
                    && omp[r].is_none()
                    && !said[r]
                    && !gomp.contains(&r)
                    && !omp_silent.contains(&r)
            })
            .collect();
        if !plain.is_empty() {
            warn(format!(
                "ranks {plain:?}: no OpenMP threads recorded (no OpenMP runtime seen, or no OMPT log): {}",
                alone(threads)
            ));
        }
        for (r, o) in omp.iter().enumerate() {
            if let Some(o) = o.as_ref().filter(|o| o.p < threads) {
                warn(format!(
                    "rank {r}: its first parallel region had {} threads, another rank's {threads}: its threads {}..{} are idle",
                    o.p,
                    r * threads + o.p,
                    (r + 1) * threads - 1
                ));
            }
        }
    }
    let mut merged: Vec<Vec<Entry>> = Vec::new();
    for r in 0..size {
        let Some(tracer) = tracers[r].as_deref() else {
            continue;
        };
        if let Some(n) = comment(tracer, "unrecorded_calls").filter(|&n| n > 0) {
            warn(format!(
                "rank {r}: {n} blocking MPI calls of threads the OMPT tool does not record (MPI_THREAD_MULTIPLE) are not in the log: their time counts as the threads' work"
            ));
        }
        let rank = Rank { r, size, threads };
        merged.push(match &omp[r] {
            Some(o) => rank.hybrid(tracer, o),
            None => rank.mpi_only(tracer),
        });
    }
    pair_messages(&mut merged, threads);
    let mut text = format!("pplog 1 p={}", size * threads);
    for param in params {
        text.push(' ');
        text.push_str(param);
    }
    text.push('\n');
    for entry in merged.iter().flatten() {
        match entry {
            Entry::Event { t, thread, rest } => {
                text.push_str(&format!("{t} {thread} {rest}\n"));
            }
            Entry::Other(line) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    files::output::write(log, text.as_bytes())
        .map_err(|e| fail(1, format!("{}: {}", log.display(), e.reason())))?;
    Ok(Some(size * threads))
}

/// A line of the merged log: an event (its time on rank 0's clock, its thread in the merged
/// log, and the rest of its line), or a line passed on as it is (a comment, or a line the
/// reader will report).
enum Entry {
    Event { t: u64, thread: usize, rest: String },
    Other(String),
}

/// The number `# <name> <n>` of a tracer log says.
fn comment(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        l.strip_prefix("# ")?
            .strip_prefix(name)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// A rank's OMPT log, in the text encoding, and its `p` (the rank's first team).
struct OmpLog {
    p: usize,
    text: String,
}

impl OmpLog {
    /// Rank `r`'s OMPT log (`rank.omp<r>`, else what it left in `rank.omp<r>.tmp`), or `None`
    /// when its tool wrote none; an error says why it cannot be read.
    fn read(dir: &Path, r: usize) -> Result<Option<OmpLog>, String> {
        let done = dir.join(format!("rank.omp{r}"));
        let path = if done.is_file() {
            done
        } else {
            let tmp = dir.join(format!("rank.omp{r}.tmp"));
            if !tmp.is_file() {
                return Ok(None);
            }
            tmp
        };
        let bad = |e: String| {
            format!(
                "rank {r}: its OpenMP threads' log cannot be read ({e}): they are not in the log"
            )
        };
        let mut reader = LogReader::open(&path).map_err(|e| bad(e.to_string()))?;
        let header = reader.header().clone();
        let mut w = TextWriter::new(Vec::new(), &header).map_err(|e| bad(e.to_string()))?;
        while let Some(e) = reader.next_event() {
            let e = e.map_err(|e| bad(e.to_string()))?;
            w.write_event(&e, reader.symbols())
                .map_err(|e| bad(e.to_string()))?;
        }
        let bytes = w.finish().map_err(|e| bad(e.to_string()))?;
        Ok(Some(OmpLog {
            p: header.p.max(1) as usize,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }))
    }
}

/// Where an event of a hybrid rank goes among the rank's: its time on the rank's clock, then
/// before (0), inside (1) or after (2) the rank's part of the run, then the tool's events (0)
/// before the tracer's (1) at one time, then the order of its log.
type Order = (u64, u8, u8, usize);

/// One rank in the merged log: rank `r` of `size`, its threads from `r * threads`.
struct Rank {
    r: usize,
    size: usize,
    threads: usize,
}

/// A tracer line's time, thread (`<rank>` or `<rank>:<k>`: `k` is the OMPT tool's id of the
/// calling thread) and the rest.
fn split_event(line: &str) -> Option<(u64, Option<usize>, &str)> {
    let (t, rest) = line.split_once(' ')?;
    let (thread, rest) = rest.split_once(' ')?;
    let k = match thread.split_once(':') {
        Some((_, k)) => Some(k.parse().ok()?),
        None => None,
    };
    Some((t.parse().ok()?, k, rest))
}

impl Rank {
    /// The thread of the rank's OpenMP thread `k` (its first: MPI's, when `k` is unknown).
    fn thread(&self, k: Option<usize>) -> usize {
        self.r * self.threads + k.unwrap_or(0)
    }

    /// A tracer event's rest, with the thread ids it names in the merged log: a collective's
    /// root and the MPI region's team are ranks' first threads. (`send` and `recv` keep their
    /// peer's rank until [`pair_messages`].)
    fn tracer_rest(&self, rest: &str) -> String {
        if self.threads == 1 {
            return rest.to_string();
        }
        if rest.starts_with("region_begin ") {
            let team: Vec<String> = (0..self.size)
                .map(|r| (r * self.threads).to_string())
                .collect();
            return format!("{rest} team={}", team.join(","));
        }
        if rest.starts_with("coll ") {
            return rest
                .split(' ')
                .map(|w| {
                    match w
                        .strip_prefix("root=")
                        .and_then(|v| v.parse::<usize>().ok())
                    {
                        Some(root) => format!("root={}", root * self.threads),
                        None => w.to_string(),
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
        }
        rest.to_string()
    }

    /// A rank without OpenMP threads: the tracer's log as it is, on the rank's first thread.
    /// Its CPU samples lose the run-queue delay the tracer read because the OMPT tool was
    /// loaded: a rank of one thread is measured as without the tool.
    fn mpi_only(&self, tracer: &str) -> Vec<Entry> {
        let offset = offsets(tracer);
        tracer
            .lines()
            .skip(1)
            .map(|line| match split_event(line) {
                Some((t, _, rest)) => Entry::Event {
                    t: offset(t),
                    thread: self.thread(None),
                    rest: match rest.strip_prefix("cpu ") {
                        Some(sample) => {
                            format!("cpu {}", sample.split(' ').next().unwrap_or(sample))
                        }
                        None => self.tracer_rest(rest),
                    },
                },
                None => Entry::Other(line.to_string()),
            })
            .collect()
    }

    /// A rank with its OMPT log: the OpenMP threads' events, and the MPI calls on the threads
    /// that made them. The tool records the threads' work and regions; the tracer adds the
    /// MPI region, the calls' waits, messages and CPU samples. The rank's part of the run is
    /// the tracer's: from `MPI_Init` to `MPI_Finalize` (its `start` and `stop`), and the
    /// tool's events outside it are moved to its ends (their CPU samples dropped), so that
    /// the threads' states carry on and no time outside it counts.
    fn hybrid(&self, tracer: &str, omp: &OmpLog) -> Vec<Entry> {
        let offset = offsets(tracer);
        let epoch = comment(tracer, "ompt_epoch").unwrap_or(0);
        let mut other = Vec::new();
        // (time on the rank's clock, before / inside / after the window, source, line order)
        let mut events: Vec<(Order, usize, String)> = Vec::new();
        let (mut first, mut last) = (None, None);
        for (i, line) in tracer.lines().skip(1).enumerate() {
            let Some((t, k, rest)) = split_event(line) else {
                other.push(Entry::Other(line.to_string()));
                continue;
            };
            match rest.split(' ').next() {
                Some("start") => first = Some(first.map_or(t, |f: u64| f.min(t))),
                Some("stop") => last = Some(last.map_or(t, |l: u64| l.max(t))),
                Some("work_begin" | "work_end") => {}
                _ => events.push(((t, 1, 1, i), self.thread(k), self.tracer_rest(rest))),
            }
        }
        let first = first.unwrap_or(0);
        let last = last.unwrap_or(u64::MAX).max(first);
        for (i, line) in omp.text.lines().skip(1).enumerate() {
            let Some((t, k, rest)) = line.split_once(' ').and_then(|(t, rest)| {
                let (k, rest) = rest.split_once(' ')?;
                Some((t.parse::<u64>().ok()?, k.parse::<usize>().ok()?, rest))
            }) else {
                continue; // the text writer's comments
            };
            let t = epoch.saturating_add(t);
            let (t, place) = if t < first {
                (first, 0)
            } else if t > last {
                (last, 2)
            } else {
                (t, 1)
            };
            if place != 1 && rest.starts_with("cpu ") {
                continue;
            }
            events.push(((t, place, 0, i), self.thread(Some(k)), self.omp_rest(rest)));
        }
        events.sort_by_key(|e| e.0);
        let mut out = other;
        out.extend(
            events
                .into_iter()
                .map(|((t, ..), thread, rest)| Entry::Event {
                    t: offset(t),
                    thread,
                    rest,
                }),
        );
        out
    }

    /// An OMPT event's rest with the merged log's ids: its regions' ids made unique among the
    /// ranks (`(id + 1) × ranks + r`: 0 stays the MPI region's), their teams and a waker
    /// (`by=`) moved to the rank's threads, a region without a team given the rank's team.
    fn omp_rest(&self, rest: &str) -> String {
        let mut words: Vec<String> = rest.split(' ').map(str::to_string).collect();
        let id = |w: &str| {
            w.parse::<usize>()
                .map(|id| ((id + 1) * self.size + self.r).to_string())
                .unwrap_or_else(|_| w.to_string())
        };
        let local = |list: &str| {
            list.split(',')
                .map(|k| match k.parse::<usize>() {
                    Ok(k) => self.thread(Some(k)).to_string(),
                    Err(_) => k.to_string(),
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        match words[0].as_str() {
            "region_begin" if words.len() >= 3 => {
                words[1] = id(&words[1]);
                match words.iter().position(|w| w.starts_with("team=")) {
                    Some(i) => words[i] = format!("team={}", local(&words[i][5..])),
                    None => {
                        let team: Vec<String> = (0..self.threads)
                            .map(|k| self.thread(Some(k)).to_string())
                            .collect();
                        words.push(format!("team={}", team.join(",")));
                    }
                }
            }
            "region_end" if words.len() >= 2 => words[1] = id(&words[1]),
            _ => {
                for w in words.iter_mut() {
                    if let Some(by) = w.strip_prefix("by=") {
                        *w = format!("by={}", local(by));
                    }
                }
            }
        }
        words.join(" ")
    }
}

/// Gives each `send` and `recv` its peer's thread. The tracer knows ranks only: a send names
/// the rank it goes to, a receive the rank it came from. MPI matches a receive to the oldest
/// send not matched yet on its channel (communicator, source rank, destination rank, tag),
/// whichever threads made them; so does this, in time order, and each then names the other's
/// thread, so that pp's matching of threads finds the same pairs. A message without its pair
/// names the peer rank's first thread.
fn pair_messages(ranks: &mut [Vec<Entry>], threads: usize) {
    type Channel = (usize, usize, String, String);
    /// A `send` or `recv`: its time, its rank's place in `ranks` and its index there.
    type At = (u64, usize, usize);
    // Per channel: its sends and its receives.
    let mut channels: std::collections::HashMap<Channel, [Vec<At>; 2]> =
        std::collections::HashMap::new();
    let parse = |rest: &str| -> Option<(bool, usize, String, String)> {
        let mut w = rest.split(' ');
        let send = match w.next()? {
            "send" => true,
            "recv" => false,
            _ => return None,
        };
        let peer = w.next()?.parse().ok()?;
        let tag = w.next()?.to_string();
        let _bytes = w.next()?;
        let comm = w.find(|x| x.starts_with("comm=")).unwrap_or("").to_string();
        Some((send, peer, tag, comm))
    };
    for (ri, entries) in ranks.iter().enumerate() {
        for (i, e) in entries.iter().enumerate() {
            let Entry::Event { t, thread, rest } = e else {
                continue;
            };
            let Some((send, peer, tag, comm)) = parse(rest) else {
                continue;
            };
            let rank = thread / threads;
            let key = if send {
                (rank, peer, tag, comm)
            } else {
                (peer, rank, tag, comm)
            };
            channels.entry(key).or_default()[usize::from(!send)].push((*t, ri, i));
        }
    }
    let thread_of = |ranks: &[Vec<Entry>], (_, ri, i): At| match &ranks[ri][i] {
        Entry::Event { thread, .. } => *thread,
        Entry::Other(_) => 0,
    };
    let mut peers = Vec::new();
    for (_, [mut sends, mut recvs]) in channels {
        sends.sort_unstable();
        recvs.sort_unstable();
        for k in 0..sends.len().max(recvs.len()) {
            let (s, r) = (sends.get(k).copied(), recvs.get(k).copied());
            if let (Some(s), Some(r)) = (s, r) {
                peers.push((s, thread_of(ranks, r)));
                peers.push((r, thread_of(ranks, s)));
            } else if let Some(one) = s.or(r) {
                peers.push((one, usize::MAX));
            }
        }
    }
    for ((_, ri, i), peer) in peers {
        if let Entry::Event { rest, .. } = &mut ranks[ri][i] {
            let mut w: Vec<&str> = rest.split(' ').collect();
            let rank: usize = w[1].parse().unwrap_or(0);
            let thread = if peer == usize::MAX {
                rank * threads
            } else {
                peer
            };
            let thread = thread.to_string();
            w[1] = &thread;
            *rest = w.join(" ");
        }
    }
}

/// A rank's clock moved onto rank 0's: by the offsets the tracer measured at `MPI_Init` and
/// `MPI_Finalize` (`# clock_offset <local ns> <offset ns>`), interpolated linearly between
/// them (the clocks may drift apart), the first alone when there is one.
fn offsets(rank: &str) -> impl Fn(u64) -> u64 {
    let offsets: Vec<(u64, i64)> = rank
        .lines()
        .filter_map(|l| {
            let mut w = l.strip_prefix("# clock_offset ")?.split_whitespace();
            Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
        })
        .collect();
    move |t: u64| -> u64 {
        let o = match offsets.as_slice() {
            [] => 0,
            [(_, o)] => *o,
            [(ta, oa), (tb, ob), ..] if tb > ta => {
                let f = (t as f64 - *ta as f64) / (*tb - *ta) as f64;
                oa + ((ob - oa) as f64 * f).round() as i64
            }
            [(_, o), ..] => *o,
        };
        (i128::from(t) + i128::from(o)).clamp(0, i128::from(u64::MAX)) as u64
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
        let moved: Vec<u64> = [1000, 1500, 2000].map(offsets(rank)).to_vec();
        assert_eq!(moved, [1050, 1600, 2150]);
        assert_eq!(offsets("pplog 1 p=2\n# clock_offset 10 -20\n")(15), 0);
        assert_eq!(offsets("pplog 1 p=2\n5 1 start\n")(5), 5);
        // The lines that are no event pass as they are, in place.
        let dir = test_support::scratch("merge-passes-lines");
        std::fs::write(
            dir.join("rank.rank0"),
            "pplog 1 p=2\n# clock_offset 5 0\n10 0 start\n90 0 stop\n",
        )
        .unwrap();
        std::fs::write(dir.join("rank.rank1"), rank).unwrap();
        let log = dir.join("pp.log");
        assert_eq!(merge(&dir, &log, &[], &mut |_| {}).unwrap(), Some(2));
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "pplog 1 p=2\n# clock_offset 5 0\n10 0 start\n90 0 stop\n\
             # clock_offset 1000 50\n1050 1 start\n1600 1 recv 0 1 8\n2150 1 stop\n\
             # clock_offset 2000 150\nnot an event\n"
        );
    }

    /// Rank `r` of two: the tracer's log (MPI_Init at 1000, MPI_Finalize at 2000, a receive
    /// (rank 0) or a send (rank 1) made by OpenMP thread `k`) and its OMPT tool's (time 0 at
    /// 900: serial work from the program's start, one region of 2 threads where thread 0
    /// waits 100 ns at the barrier, serial work until the exit at 2100).
    fn hybrid_rank(dir: &Path, r: usize, k: usize) {
        let call = if r == 0 {
            format!(
                "1500 0:{k} work_end\n1500 0:{k} wait_begin recv\n1800 0:{k} recv 1 7 8\n\
                 1800 0:{k} wait_end recv\n1801 0:{k} work_begin\n"
            )
        } else {
            format!("1700 1:{k} send 0 7 8\n")
        };
        std::fs::write(
            dir.join(format!("rank.rank{r}")),
            format!(
                "pplog 1 p=2\n# clock_offset 1000 0\n1000 {r} start\n1000 {r} region_begin 0 mpi\n\
                 1001 {r} cpu 10 3\n1002 {r} work_begin\n{call}2000 {r} work_end\n2000 {r} region_end 0\n\
                 2000 {r} stop\n# clock_offset 2000 0\n# ompt_epoch 900\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("rank.omp{r}")),
            "pplog 1 p=2\n0 0 start\n0 0 cpu 5\n0 0 work_begin\n200 0 work_end\n\
             200 0 region_begin 0 compute\n201 0 work_begin\n201 1 start\n201 1 work_begin\n\
             400 0 work_end\n400 0 wait_begin barrier implicit_barrier\n500 1 work_end\n\
             500 1 wait_begin barrier implicit_barrier\n501 0 wait_end barrier implicit_barrier\n\
             501 1 wait_end barrier implicit_barrier\n502 0 region_end 0\n502 0 work_begin\n\
             1200 0 work_end\n1200 0 stop\n1300 1 stop\n",
        )
        .unwrap();
    }

    #[test]
    fn a_hybrid_ranks_openmp_threads_are_its_threads_and_its_calls_on_the_callers() {
        let dir = test_support::scratch("merge-hybrid");
        // Rank 0's master receives what rank 1's second thread sent (MPI_THREAD_MULTIPLE).
        hybrid_rank(&dir, 0, 0);
        hybrid_rank(&dir, 1, 1);
        let log = dir.join("pp.log");
        let mut warnings = Vec::new();
        let merged = merge(&dir, &log, &[], &mut |w| warnings.push(w)).unwrap();
        assert_eq!(merged, Some(4));
        assert!(warnings.is_empty(), "{warnings:?}");
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "pplog 1 p=4");
        let has = |l: &str| assert!(lines.contains(&l), "no `{l}` in\n{text}");
        // The program's start and exit move to MPI_Init and MPI_Finalize; the sample at the
        // start is dropped; the MPI region's team is the ranks' first threads; the tracer's
        // own work intervals give way to the tool's.
        has("1000 0 start");
        has("1000 0 work_begin");
        has("1000 0 region_begin 0 mpi team=0,2");
        has("2000 0 stop");
        has("2000 1 stop");
        has("2000 3 stop");
        assert!(!text.contains("cpu 5"), "{text}");
        assert!(!text.contains("1002 0 work_begin"), "{text}");
        // Each rank's region has an id of its own and the rank's threads as its team.
        has("1100 0 region_begin 2 compute team=0,1");
        has("1100 2 region_begin 3 compute team=2,3");
        has("1402 2 region_end 3");
        // The message: on the threads that made the calls, each naming the other's thread.
        has("1500 0 wait_begin recv");
        has("1800 0 recv 3 7 8");
        has("1700 3 send 0 7 8");
        // Every thread starts once and stops once, and the profile reads without a warning.
        let mut reader = LogReader::open(&log).unwrap();
        let profile = crate::profile::profile_log(&mut reader, None, None)
            .into_profile("pp.log")
            .unwrap();
        assert!(
            profile.warnings.is_empty(),
            "{:?}\n{text}",
            profile.warnings
        );
        use crate::profile::Category;
        let t0 = &profile.by_thread[0];
        // Thread 0: its receive waits 200 ns for the send (sl) and 100 ns for the transfer
        // (cl); it waits 100 ns at the barrier while thread 1 works (li), 1 ns after, and is
        // idle 1 ns at each of the region's ends where nobody works (sl); the rest is work.
        let got = [
            Category::Li,
            Category::Ip,
            Category::Sl,
            Category::Cl,
            Category::Pc,
        ]
        .map(|c| t0.get(c));
        assert_eq!(got, [100, 0, 203, 100, 597], "{text}");
        assert_eq!(profile.window, (1000, 2000));
    }

    #[test]
    fn a_rank_without_its_openmp_threads_is_named() {
        let dir = test_support::scratch("merge-hybrid-plain-rank");
        hybrid_rank(&dir, 0, 0);
        hybrid_rank(&dir, 1, 0);
        std::fs::remove_file(dir.join("rank.omp1")).unwrap();
        let log = dir.join("pp.log");
        let mut warnings = Vec::new();
        assert_eq!(
            merge(&dir, &log, &[], &mut |w| warnings.push(w)).unwrap(),
            Some(4)
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("ranks [1]: no OpenMP threads recorded"),
            "{warnings:?}"
        );
        let text = std::fs::read_to_string(&log).unwrap();
        // Rank 1 is its tracer's log alone, on thread 2, its samples without the run-queue
        // delay; its send names rank 0's receiver.
        assert!(text.contains("\n1000 2 start\n"), "{text}");
        assert!(text.contains("\n1001 2 cpu 10\n"), "{text}");
        assert!(text.contains("\n1001 0 cpu 10 3\n"), "{text}");
        assert!(text.contains("\n1700 2 send 0 7 8\n"), "{text}");
        assert!(text.contains("\n1800 0 recv 2 7 8\n"), "{text}");
    }

    #[test]
    fn what_is_not_recorded_is_said_once_a_rank() {
        // Rank 0: 2 threads, and 3 calls of an unrecorded thread; rank 1: a first team of 1.
        let dir = test_support::scratch("merge-hybrid-said");
        hybrid_rank(&dir, 0, 0);
        hybrid_rank(&dir, 1, 0);
        let tracer = std::fs::read_to_string(dir.join("rank.rank0")).unwrap();
        std::fs::write(
            dir.join("rank.rank0"),
            tracer + "# openmp_runtime libomp\n# unrecorded_calls 3\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("rank.omp1"),
            "pplog 1 p=1\n0 0 start\n0 0 work_begin\n1200 0 work_end\n1200 0 stop\n",
        )
        .unwrap();
        let log = dir.join("pp.log");
        let mut warnings = Vec::new();
        assert_eq!(
            merge(&dir, &log, &[], &mut |w| warnings.push(w)).unwrap(),
            Some(4)
        );
        assert_eq!(
            warnings,
            [
                "rank 1: its first parallel region had 1 threads, another rank's 2: its threads 3..3 are idle",
                "rank 0: 3 blocking MPI calls of threads the OMPT tool does not record (MPI_THREAD_MULTIPLE) are not in the log: their time counts as the threads' work",
            ]
        );

        // The tool's clock is another (PP_CLOCK=tsc): the rank is its tracer's log alone,
        // said once although its program loaded LLVM's runtime.
        let tracer = std::fs::read_to_string(dir.join("rank.rank0")).unwrap();
        std::fs::write(
            dir.join("rank.rank0"),
            tracer.replace("# ompt_epoch 900\n", "# ompt_epoch 0\n"),
        )
        .unwrap();
        let mut warnings = Vec::new();
        assert_eq!(
            merge(&dir, &log, &[], &mut |w| warnings.push(w)).unwrap(),
            Some(2)
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].starts_with("rank 0: its OpenMP threads are not in the log: the OMPT tool's clock is not CLOCK_MONOTONIC"),
            "{warnings:?}"
        );
        assert!(
            warnings[1].starts_with("rank 0: 3 blocking MPI calls"),
            "{warnings:?}"
        );
    }

    proptest::proptest! {
        /// Whichever threads of their ranks send and receive, every message keeps MPI's
        /// pairing once each names the other's thread: pp's matching of threads (per
        /// communicator, sender, receiver and tag, oldest first) gives each receive its own
        /// send, and leaves no send unreceived.
        #[test]
        fn paired_messages_match_as_mpi_matched_them(
            ranks in 1usize..4,
            threads in 1usize..4,
            messages in proptest::collection::vec(
                (0usize..4, 0usize..4, 0usize..4, 0usize..4, 0u32..3, 0u64..1000, 1u64..50),
                0..40,
            ),
        ) {
            // (source rank, its thread, destination rank, its thread, tag, send time, delay):
            // per channel, receives complete in the order of the sends (MPI's non-overtaking
            // order), each after its send; no two sends at one time (a log orders those by
            // its lines, which this test does not keep).
            let mut by_channel: std::collections::BTreeMap<(usize, usize, u32), Vec<_>> =
                Default::default();
            for (id, &(sr, st, dr, dt, tag, t, d)) in messages.iter().enumerate() {
                let (sr, dr) = (sr % ranks, dr % ranks);
                by_channel
                    .entry((sr, dr, tag))
                    .or_default()
                    .push((t * 64 + id as u64, sr * threads + st % threads, dr * threads + dt % threads, d, id));
            }
            let mut merged: Vec<Vec<Entry>> = (0..ranks).map(|_| Vec::new()).collect();
            let mut recv_times = Vec::new();
            for ((sr, dr, tag), mut sends) in by_channel {
                sends.sort_unstable();
                let mut last = 0;
                for (t, from, to, d, id) in sends {
                    let received = (t + d).max(last + 1);
                    last = received;
                    recv_times.push(received);
                    merged[sr].push(Entry::Event { t, thread: from, rest: format!("send {dr} {tag} {id}") });
                    merged[dr].push(Entry::Event { t: received, thread: to, rest: format!("recv {sr} {tag} {id}") });
                }
            }
            pair_messages(&mut merged, threads);
            let mut all: Vec<(u64, bool, usize, String)> = merged
                .into_iter()
                .flatten()
                .filter_map(|e| match e {
                    Entry::Event { t, thread, rest } => Some((t, rest.starts_with("recv"), thread, rest)),
                    Entry::Other(_) => None,
                })
                .collect();
            all.sort();
            let mut matching = crate::messages::Messages::default();
            for (t, _, thread, rest) in &all {
                let w: Vec<&str> = rest.split(' ').collect();
                let (peer, tag, id): (u32, u32, u64) =
                    (w[1].parse().unwrap(), w[2].parse().unwrap(), w[3].parse().unwrap());
                let me = *thread as u32;
                if w[0] == "send" {
                    matching.send(None, me, peer, tag, crate::messages::Sent { t: *t, bytes: id });
                } else {
                    let sent = matching.recv(None, peer, me, tag);
                    proptest::prop_assert_eq!(sent.map(|s| s.bytes), Some(id), "{:?}", all);
                }
            }
            proptest::prop_assert_eq!(matching.unreceived().0, 0);
        }
    }
}
