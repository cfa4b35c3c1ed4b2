//! The C + MPI skeleton of an MPI log (docs/skeletons.md#mpi-skeletons): `DIR/skeleton.c`, one
//! function per rank that follows its divided signature (loops as `for` loops, computation
//! spinning on the thread CPU clock, the same messages to the same peers with their bytes / K,
//! the same collectives), and a `Makefile` that builds it with `mpicc`. `pp skeleton run DIR`
//! builds it and runs it under `pp run -- mpirun`, whose PMPI tracer records its log.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use anyhow::{Context, Result, bail};

use super::hybrid::{self, Layout};
use super::{Item, Programs, SkelStep, Skeleton};
use crate::signature::Op;

/// The C file's name in a skeleton's directory.
pub const SOURCE: &str = "skeleton.c";

/// The program `make` builds from it.
pub const PROGRAM: &str = "skeleton";

/// The threshold at which an MPI log's steps are clustered by their operations alone (any two
/// computations and byte counts are alike), when the seed's threshold divides the ranks' loops
/// differently.
pub const BY_OPERATIONS: f64 = 1.0;

/// Sends left outstanding before the skeleton completes them all (`MPI_Waitall`).
pub const PENDING: usize = 1024;

/// The Makefile written beside the source.
pub const MAKEFILE: &str = "\
# pp skeleton (docs/skeletons.md#mpi-skeletons): make builds the skeleton with the MPI compiler
# wrapper; pp skeleton run DIR builds it and runs it under pp run -- mpirun.
MPICC ?= mpicc
CFLAGS ?= -O2
skeleton: skeleton.c
\t$(MPICC) $(CFLAGS) -std=c11 -Wall -o $@ skeleton.c
";

/// Whether `s` has message operations: an MPI log's skeleton.
pub fn is_mpi(s: &dyn Programs) -> bool {
    let mpi = |st: &SkelStep| matches!(st.op, Op::Send { .. } | Op::Recv { .. } | Op::Coll { .. });
    let mut any = false;
    for i in 0..s.threads().len() {
        s.each(i, &mut |it| any = any || it.count(&mpi) > 0);
        if any {
            return true;
        }
    }
    false
}

/// [`walk`] over the `i`-th thread's program of `s`.
fn walk_thread(s: &dyn Programs, i: usize, f: &mut impl FnMut(&SkelStep, u64)) {
    s.each(i, &mut |it| walk(std::slice::from_ref(it), 1, f));
}

/// Calls `f` with every step of `items` and how many times it runs.
pub(super) fn walk(items: &[Item], times: u64, f: &mut impl FnMut(&SkelStep, u64)) {
    for i in items {
        match i {
            Item::Step(s) => f(s, times),
            Item::Loop { count, body } => walk(body, times.saturating_mul(*count), f),
        }
    }
}

/// The largest byte count a step of `s` moves (the buffers are this × p).
fn largest(s: &dyn Programs) -> u64 {
    let mut most = 0;
    for i in 0..s.threads().len() {
        walk_thread(s, i, &mut |st, _| most = most.max(st.bytes));
    }
    most
}

/// Checks that `s` can run as MPI ranks: a rank per thread, or a rank per T threads whose first
/// makes the MPI calls and opens OpenMP regions ([`hybrid`]), peers among the ranks, every
/// message sent as often as it is received, every rank in the same collectives as often, and
/// buffers an `int` can count. Returns the hybrid generator's warnings.
pub fn check(s: &dyn Programs) -> Result<Vec<String>> {
    let p = s.head().p;
    let threads = s.threads();
    let layout = hybrid::layout(s)?;
    let mut sent: BTreeMap<(u32, u32, u32), u64> = BTreeMap::new();
    let mut received: BTreeMap<(u32, u32, u32), u64> = BTreeMap::new();
    let mut colls: BTreeMap<String, BTreeMap<u32, u64>> = BTreeMap::new();
    let mut problem = None;
    for (i, &thread) in threads.iter().enumerate() {
        if thread >= p {
            bail!("thread {thread} is not a rank below p = {p}");
        }
        walk_thread(s, i, &mut |st, n| match &st.op {
            Op::Send { peer, tag } | Op::Recv { peer, tag } if *peer >= p => {
                problem.get_or_insert(format!(
                    "rank {thread}: a message with rank {peer}, not below p = {p} (tag {tag})"
                ));
            }
            Op::Send { peer, tag } => *sent.entry((thread, *peer, *tag)).or_default() += n,
            Op::Recv { peer, tag } => *received.entry((*peer, thread, *tag)).or_default() += n,
            Op::Coll { .. } => {}
            Op::RegionBegin { name } | Op::PartBegin { name }
                if name != "mpi" && layout.is_none() =>
            {
                problem.get_or_insert(format!(
                    "thread {thread}: region {name}: an OpenMP region in a run without MPI messages"
                ));
            }
            _ => {}
        });
        if let Some(p) = problem.take() {
            bail!("{p}");
        }
    }
    for (i, &thread) in threads.iter().enumerate() {
        let mut mine: BTreeMap<String, u64> = BTreeMap::new();
        walk_thread(s, i, &mut |st, n| {
            if let Op::Coll { op, .. } = &st.op {
                *mine.entry(op.clone()).or_default() += n;
            }
        });
        for (op, n) in mine {
            colls.entry(op).or_default().insert(thread, n);
        }
    }
    for (key, n) in &sent {
        let got = received.get(key).copied().unwrap_or(0);
        if got != *n {
            bail!(
                "rank {} sends {n} messages to rank {} with tag {} but rank {} receives {got}: the ranks' loops were divided differently, and the skeleton would not end",
                key.0,
                key.1,
                key.2,
                key.1
            );
        }
    }
    if let Some((key, n)) = received.iter().find(|(k, _)| !sent.contains_key(k)) {
        bail!(
            "rank {} receives {n} messages from rank {} with tag {} that rank {} never sends: the skeleton would not end",
            key.1,
            key.0,
            key.2,
            key.0
        );
    }
    let ranks: Vec<u32> = match &layout {
        Some(l) => l.masters.clone(),
        None => threads.clone(),
    };
    for (op, per) in &colls {
        let counts: Vec<u64> = ranks
            .iter()
            .map(|r| per.get(r).copied().unwrap_or(0))
            .collect();
        if counts.windows(2).any(|w| w[0] != w[1]) {
            bail!(
                "collective {op}: the ranks take part different numbers of times ({}): the skeleton would not end",
                ranks
                    .iter()
                    .zip(&counts)
                    .map(|(r, c)| format!("rank {r}: {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let most = largest(s);
    let buffer = u128::from(most) * u128::from(p.max(1));
    if buffer > i32::MAX as u128 {
        bail!(
            "a step moves {most} bytes: with p = {p} the skeleton's buffers would pass 2 GiB (MPI counts are int); a larger --scale divides them"
        );
    }
    match &layout {
        Some(l) => hybrid::check(s, l),
        None => Ok(Vec::new()),
    }
}

/// The C source of `s` (checked by [`check`] first).
pub fn source(s: &dyn Programs) -> String {
    let mut out = Vec::new();
    let _ = write_source(&mut out, s);
    String::from_utf8(out).expect("C source is UTF-8")
}

/// Writes the C source of `s` (checked by [`check`] first) to `c`, a top-level item at a time.
pub fn write_source(c: &mut dyn io::Write, s: &dyn Programs) -> io::Result<()> {
    let layout = hybrid::layout(s).ok().flatten();
    write_source_as(c, s, layout.as_ref()).map(|_| ())
}

/// [`write_source`] with the run's layout (`None`: a rank per thread); returns the hybrid
/// writer, which writes `regions.c`.
fn write_source_as<'a>(
    c: &mut dyn io::Write,
    s: &dyn Programs,
    layout: Option<&'a Layout>,
) -> io::Result<Option<hybrid::Writer<'a>>> {
    let h = s.head();
    let per_rank = layout.map_or(1, |l| l.per_rank);
    let (openmp, init) = if layout.is_some() {
        (
            "#include <omp.h>\n",
            "int provided;\n    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);",
        )
    } else {
        ("", "MPI_Init(&argc, &argv);")
    };
    let p = h.p.max(1);
    let buffer = (largest(s) * u64::from(p)).max(1);
    write!(
        c,
        r#"/* pp skeleton (docs/skeletons.md#mpi-skeletons), K = {k}, of {log}.
 * Build: make -C DIR. Run: pp skeleton run DIR (pp run -- mpirun -np {ranks} DIR/skeleton). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
{openmp}#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define P {ranks}
#define BUFFER {buffer}
#define PENDING {PENDING}
#define W MPI_COMM_WORLD

static char *out, *in;
static MPI_Request pending[PENDING];
static int npending;
/* Receives posted by this thread (a hybrid rank's master; its OpenMP workers post none). */
static _Thread_local int nrecv;

/* Every send and receive outstanding completes. */
static void complete(void) {{
    MPI_Waitall(npending, pending, MPI_STATUSES_IGNORE);
    npending = 0;
    nrecv = 0;
}}

/* The receives posted since the last wait end, with every send outstanding, when the rank
   does anything but another receive: one MPI_Waitall, as the application's. */
static void settle(void) {{
    if (nrecv > 0) complete();
}}

static long long cpu_ns(void) {{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}}

/* Computation: spin on the thread's CPU clock (never sleep). */
static void spin(long long ns) {{
    if (ns <= 0) return;
    settle();
    long long end = cpu_ns() + ns;
    while (cpu_ns() < end) {{
    }}
}}

/* A wait whose partner is not in the skeleton: its time. */
__attribute__((unused)) static void pause_ns(long long ns) {{
    settle();
    struct timespec t = {{ns / 1000000000LL, ns % 1000000000LL}};
    nanosleep(&t, NULL);
}}

static void snd(int peer, int tag, int bytes) {{
    settle();
    if (npending == PENDING) complete();
    MPI_Isend(out, bytes, MPI_BYTE, peer, tag, W, &pending[npending++]);
}}

/* A receive, into its own slot of the buffer, completed by the next settle(). */
static void rcv(int peer, int tag) {{
    if (npending == PENDING) complete();
    nrecv++;
    MPI_Irecv(in + (nrecv % P) * (BUFFER / P), BUFFER / P, MPI_BYTE, peer, tag, W,
              &pending[npending++]);
}}
"#,
        k = h.k,
        log = h.source_log.replace("*/", "* /"),
        ranks = p / per_rank,
    )?;
    let threads = s.threads();
    let call = |st: &SkelStep| call(st, per_rank);
    let mut writer = None;
    if let Some(l) = layout {
        let workers: Vec<u32> = threads
            .iter()
            .copied()
            .filter(|t| t % l.per_rank != 0)
            .collect();
        let w = hybrid::Writer::new(l, workers.clone());
        w.prelude(c)?;
        for (i, &t) in threads.iter().enumerate() {
            if workers.contains(&t) {
                let mut items = Vec::new();
                s.each(i, &mut |it| items.push(it.clone()));
                w.part(c, t, &items)?;
            }
        }
        writer = Some(w);
    }
    let mut ranks = Vec::new();
    for (i, &thread) in threads.iter().enumerate() {
        if thread % per_rank != 0 {
            continue;
        }
        ranks.push(thread);
        writeln!(c, "\nstatic void rank_{thread}(void) {{")?;
        if let Some(w) = writer.as_mut() {
            let mut items = Vec::new();
            s.each(i, &mut |it| items.push(it.clone()));
            w.master(c, thread, &items, &call)?;
        } else {
            let mut result = Ok(());
            s.each(i, &mut |it| {
                if result.is_ok() {
                    result = body(c, std::slice::from_ref(it), 1, 0, &call);
                }
            });
            result?;
        }
        writeln!(c, "}}")?;
    }
    if let Some(w) = &writer {
        w.finish(c)?;
    }
    write!(
        c,
        r#"
int main(int argc, char **argv) {{
    {init}
    int rank, size;
    MPI_Comm_rank(W, &rank);
    MPI_Comm_size(W, &size);
    if (size != P) {{
        if (rank == 0) fprintf(stderr, "skeleton: made for %d ranks, run with %d (mpirun -np %d)\n", P, size, P);
        MPI_Finalize();
        return 2;
    }}
    out = calloc(BUFFER, 1);
    in = calloc(BUFFER, 1);
    if (!out || !in) {{
        fprintf(stderr, "skeleton: rank %d: cannot allocate 2 x %lld bytes\n", rank, (long long)BUFFER);
        MPI_Abort(W, 2);
    }}
    switch (rank) {{
"#
    )?;
    for thread in &ranks {
        writeln!(c, "    case {}: rank_{thread}(); break;", thread / per_rank)?;
    }
    write!(
        c,
        r#"    default: break;
    }}
    complete();
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}}
"#
    )?;
    Ok(writer)
}

fn body(
    c: &mut dyn io::Write,
    items: &[Item],
    depth: usize,
    var: usize,
    call: &dyn Fn(&SkelStep) -> Option<String>,
) -> io::Result<()> {
    let pad = "    ".repeat(depth);
    for i in items {
        match i {
            Item::Step(st) => {
                if st.cpu_ns > 0 {
                    writeln!(c, "{pad}spin({});", st.cpu_ns)?;
                }
                if let Some(call) = call(st) {
                    writeln!(c, "{pad}{call}")?;
                }
            }
            Item::Loop { count, body: b } => {
                writeln!(
                    c,
                    "{pad}for (long long i{var} = 0; i{var} < {count}LL; i{var}++) {{"
                )?;
                body(c, b, depth + 1, var + 1, call)?;
                writeln!(c, "{pad}}}")?;
            }
        }
    }
    Ok(())
}

/// The C statement of a step's operation, if it has one (`per_rank`: the threads of a rank,
/// whose first names it in the log's peers and roots).
fn call(st: &SkelStep, per_rank: u32) -> Option<String> {
    let b = st.bytes;
    Some(match &st.op {
        Op::Send { peer, tag } => format!("snd({}, {tag}, {b});", peer / per_rank),
        Op::Recv { peer, tag } => format!("rcv({}, {tag});", peer / per_rank),
        Op::Coll { op, root } => {
            let r = root.unwrap_or(0) / per_rank;
            match op.as_str() {
                "barrier" => "MPI_Barrier(W);".into(),
                "bcast" => format!("MPI_Bcast(in, {b}, MPI_BYTE, {r}, W);"),
                "reduce" => format!("MPI_Reduce(out, in, {b}, MPI_BYTE, MPI_BOR, {r}, W);"),
                "allreduce" => format!("MPI_Allreduce(out, in, {b}, MPI_BYTE, MPI_BOR, W);"),
                "scan" => format!("MPI_Scan(out, in, {b}, MPI_BYTE, MPI_BOR, W);"),
                "exscan" => format!("MPI_Exscan(out, in, {b}, MPI_BYTE, MPI_BOR, W);"),
                "reduce_scatter" | "reduce_scatter_block" => {
                    format!("MPI_Reduce_scatter_block(out, in, {b} / P, MPI_BYTE, MPI_BOR, W);")
                }
                "alltoall" | "alltoallv" => {
                    format!("MPI_Alltoall(out, {b} / P, MPI_BYTE, in, {b} / P, MPI_BYTE, W);")
                }
                "allgather" | "allgatherv" => {
                    format!("MPI_Allgather(out, {b}, MPI_BYTE, in, {b}, MPI_BYTE, W);")
                }
                "gather" | "gatherv" => {
                    format!("MPI_Gather(out, {b}, MPI_BYTE, in, {b}, MPI_BYTE, {r}, W);")
                }
                "scatter" | "scatterv" => {
                    format!("MPI_Scatter(out, {b}, MPI_BYTE, in, {b}, MPI_BYTE, {r}, W);")
                }
                other => format!("MPI_Barrier(W); /* {} */", other.replace("*/", "* /")),
            }
        }
        // A collective's wait (the barrier wait the tracer records after it): the collective
        // above it waited.
        Op::Wait { kind, object, .. } if kind == "barrier" && object.is_some() => return None,
        // An MPI_Waitall that completed sends only (or an MPI_Probe).
        Op::Wait { kind, .. } if kind == "recv" || kind == "send" => "complete();".into(),
        Op::Wait { .. } => format!("pause_ns({});", st.op_ns),
        Op::Copy => format!("memcpy(in, out, {b});"),
        Op::RegionBegin { .. }
        | Op::RegionEnd
        | Op::PartBegin { .. }
        | Op::PartEnd
        | Op::Release { .. }
        | Op::Stop => {
            return None;
        }
    })
}

/// Writes `DIR/skeleton.c` and `DIR/Makefile` for `s` (after [`check`]), and for a hybrid
/// skeleton `DIR/regions.c`.
pub fn write(dir: &Path, s: &dyn Programs) -> Result<()> {
    check(s)?;
    let layout = hybrid::layout(s)?;
    let path = dir.join(SOURCE);
    let mut writer = None;
    let written = std::fs::File::create(&path).and_then(|f| {
        let mut out = io::BufWriter::with_capacity(1 << 16, f);
        writer = write_source_as(&mut out, s, layout.as_ref())?;
        io::Write::flush(&mut out)
    });
    written.with_context(|| format!("{}: cannot write", path.display()))?;
    if let Some(w) = writer {
        let path = dir.join(hybrid::REGIONS);
        let mut text = Vec::new();
        w.regions(&mut text)?;
        std::fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    let path = dir.join("Makefile");
    let makefile = if layout.is_some() {
        hybrid::MAKEFILE
    } else {
        MAKEFILE
    };
    std::fs::write(&path, makefile).with_context(|| format!("{}: cannot write", path.display()))
}

/// Builds the skeleton in `dir` (`make -C DIR`) and runs it under `pp run -- mpirun -np P`
/// (with Open MPI's `--oversubscribe`, and `mpirun_args` before the program), which records its
/// log into `log`. Returns `pp run`'s status.
pub fn run(dir: &Path, s: &Skeleton, log: &Path, mpirun_args: &[String]) -> Result<ExitStatus> {
    for w in check(s)? {
        eprintln!("pp: warning: {w}");
    }
    let ranks = hybrid::layout(s)?.map_or(s.p, |l| l.masters.len() as u32);
    let make = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(dir)
        .arg(PROGRAM)
        .status()
        .context("make: cannot run it (an MPI skeleton is built with make and mpicc)")?;
    if !make.success() {
        bail!(
            "make -C {}: failed ({make}): is mpicc installed (tools/system-packages.sh)?",
            dir.display()
        );
    }
    let program: PathBuf = std::path::absolute(dir.join(PROGRAM))
        .with_context(|| format!("{}: cannot resolve", dir.display()))?;
    let open_mpi = Command::new("mpirun")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("Open MPI"))
        .unwrap_or(false);
    let pp = std::env::current_exe().context("cannot find pp's own program")?;
    let mut command = Command::new(pp);
    command
        .arg("run")
        .arg("--param")
        .arg("skeleton=1")
        .arg("--param")
        .arg(format!("k={}", s.k))
        .arg("--log")
        .arg(log)
        .arg("--")
        .arg("mpirun");
    if open_mpi {
        command.arg("--oversubscribe");
    }
    command
        .arg("-np")
        .arg(ranks.to_string())
        .args(mpirun_args)
        .arg(&program);
    command
        .status()
        .context("pp run: cannot start it for the skeleton")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skeleton::ThreadProgram;

    fn step(cpu_ns: u64, bytes: u64, op: Op) -> Item {
        Item::Step(SkelStep {
            cpu_ns,
            wall_ns: cpu_ns,
            op_ns: 0,
            op_cpu_ns: 0,
            bytes,
            op,
        })
    }

    fn skeleton(threads: Vec<Vec<Item>>) -> Skeleton {
        Skeleton {
            k: 4.0,
            p: threads.len() as u32,
            source_log: "app.log".into(),
            source_wall_ns: 1_000_000,
            threshold: 0.05,
            compression: 10.0,
            omp_blocktime_ms: None,
            threads: threads
                .into_iter()
                .enumerate()
                .map(|(t, items)| ThreadProgram {
                    thread: t as u32,
                    items,
                })
                .collect(),
        }
    }

    fn exchange(me: u32, peer: u32, count: u64) -> Vec<Item> {
        vec![
            Item::Loop {
                count,
                body: vec![
                    step(1000, 4096, Op::Send { peer, tag: 7 }),
                    step(10, 4096, Op::Recv { peer, tag: 7 }),
                ],
            },
            step(
                5,
                8,
                Op::Coll {
                    op: "allreduce".into(),
                    root: None,
                },
            ),
            step(
                0,
                0,
                Op::Wait {
                    kind: "barrier".into(),
                    object: Some("allreduce".into()),
                    by: None,
                },
            ),
            step(me as u64, 0, Op::Stop),
        ]
    }

    #[test]
    fn the_source_follows_each_ranks_program() {
        let s = skeleton(vec![exchange(0, 1, 5), exchange(1, 0, 5)]);
        check(&s).unwrap();
        let c = source(&s);
        assert!(c.contains("#define P 2\n#define BUFFER 8192\n"), "{c}");
        assert!(
            c.contains(
                "static void rank_0(void) {\n    for (long long i0 = 0; i0 < 5LL; i0++) {\n        spin(1000);\n        snd(1, 7, 4096);\n        spin(10);\n        rcv(1, 7);\n    }\n    spin(5);\n    MPI_Allreduce(out, in, 8, MPI_BYTE, MPI_BOR, W);\n}\n"
            ),
            "{c}"
        );
        assert!(c.contains("spin(1);\n}\n"), "rank 1's stop spins 1 ns: {c}");
        assert!(c.contains("case 1: rank_1(); break;"), "{c}");
    }

    #[test]
    fn unmatched_messages_and_collectives_are_refused() {
        let s = skeleton(vec![exchange(0, 1, 5), exchange(1, 0, 4)]);
        let e = check(&s).unwrap_err().to_string();
        assert!(
            e.starts_with("rank 0 sends 5 messages to rank 1 with tag 7 but rank 1 receives 4"),
            "{e}"
        );
        let mut one = exchange(1, 0, 5);
        one.remove(1);
        let e = check(&skeleton(vec![exchange(0, 1, 5), one]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "collective allreduce: the ranks take part different numbers of times (rank 0: 1, rank 1: 0): the skeleton would not end"
        );
    }

    fn region(name: &str) -> Item {
        step(100, 0, Op::RegionBegin { name: name.into() })
    }

    /// 2 ranks of 2 threads: each master opens `compute` in a loop of 3 and sends or receives
    /// after it; each worker has a part per region.
    fn hybrid() -> Skeleton {
        let master = |peer: u32, send: bool| {
            let message = if send {
                Op::Send { peer, tag: 1 }
            } else {
                Op::Recv { peer, tag: 1 }
            };
            vec![
                region("mpi"),
                Item::Loop {
                    count: 3,
                    body: vec![
                        region("compute"),
                        step(
                            4000,
                            0,
                            Op::Wait {
                                kind: "barrier".into(),
                                object: Some("implicit_barrier".into()),
                                by: None,
                            },
                        ),
                        step(7, 0, Op::RegionEnd),
                        step(30, 8, message),
                    ],
                },
                step(0, 0, Op::RegionEnd),
                step(0, 0, Op::Stop),
            ]
        };
        let worker = || {
            vec![
                Item::Loop {
                    count: 3,
                    body: vec![
                        step(
                            2,
                            0,
                            Op::PartBegin {
                                name: "compute".into(),
                            },
                        ),
                        step(5000, 0, Op::PartEnd),
                    ],
                },
                step(0, 0, Op::Stop),
            ]
        };
        skeleton(vec![master(2, false), worker(), master(0, true), worker()])
    }

    #[test]
    fn a_hybrid_runs_regions_are_parallel_blocks_and_its_peers_ranks() {
        let s = hybrid();
        assert_eq!(check(&s).unwrap(), Vec::<String>::new());
        let layout = hybrid::layout(&s).unwrap().unwrap();
        assert_eq!(layout.per_rank, 2);
        assert_eq!(layout.masters, [0, 2]);
        let mut c = Vec::new();
        let w = write_source_as(&mut c, &s, Some(&layout)).unwrap().unwrap();
        let c = String::from_utf8(c).unwrap();
        // Thread 2 is rank 1: its messages go to rank 0, rank 0's come from rank 1.
        assert!(c.contains("#define P 2\n"), "{c}");
        assert!(
            c.contains(
                "static void rank_0(void) {\n    long long region = 0;\n    spin(100);\n    for (long long i0 = 0; i0 < 3LL; i0++) {\n        spin(100);\n        pp_skeleton_region(0, 0, region++);\n        spin(30);\n        rcv(1, 1);\n    }\n"
            ),
            "{c}"
        );
        assert!(c.contains("snd(0, 1, 8);"), "{c}");
        assert!(c.contains("case 1: rank_2(); break;"), "{c}");
        // In the region, the master spins its computation and its end's; worker 1 of rank 0
        // (thread 1) runs its part.
        assert!(
            c.contains(
                "    case 0: /* thread 0's region 0 */\n        switch (omp_get_thread_num()) {\n        case 0:\n            spin(4000);\n            spin(7);\n            break;\n        case 1: part_1(i); break;\n"
            ),
            "{c}"
        );
        // Thread 3's i-th part: the loop of 3 parts, each its computation.
        assert!(
            c.contains(
                "static void part_3(long long i) {\n    if (i < 3LL) {\n        i %= 1LL;\n        if (i == 0) {\n            spin(5000);\n            return;\n        }\n        i--;\n        return;\n    }\n    i -= 3LL;\n"
            ),
            "{c}"
        );
        let mut regions = Vec::new();
        w.regions(&mut regions).unwrap();
        let regions = String::from_utf8(regions).unwrap();
        assert!(
            regions.contains("static void compute(int site, long long i) {\n#pragma omp parallel num_threads(2)\n"),
            "{regions}"
        );
        assert!(!regions.contains("#include"), "{regions}");
    }

    #[test]
    fn what_a_hybrid_skeleton_cannot_express_is_refused() {
        // A region that begins in one iteration and ends in the next (not rotated).
        let mut s = hybrid();
        let Item::Loop { body, .. } = &mut s.threads[0].items[1] else {
            panic!()
        };
        body.rotate_left(2);
        let e = check(&s).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "thread 0: region compute does not end in the loop iteration it begins in"
            ),
            "{e}"
        );
        // A worker that makes MPI calls (MPI_THREAD_MULTIPLE).
        let mut s = hybrid();
        s.threads[1]
            .items
            .insert(0, step(1, 8, Op::Send { peer: 2, tag: 9 }));
        let e = check(&s).unwrap_err().to_string();
        assert!(
            e.starts_with("thread 1 makes MPI calls and is a worker"),
            "{e}"
        );
        // A worker with fewer parts than its master's regions: a warning.
        let mut s = hybrid();
        s.threads[3].items.insert(
            1,
            step(
                2,
                0,
                Op::PartBegin {
                    name: "compute".into(),
                },
            ),
        );
        s.threads[3].items.insert(2, step(9, 0, Op::PartEnd));
        let w = check(&s).unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("thread 3 takes part in 4 regions and its master, thread 2, opens 3"),
            "{w:?}"
        );
    }

    #[test]
    fn region_names_that_are_not_c_identifiers_are_numbered() {
        assert_eq!(hybrid::function_name("compute", 0), "compute");
        assert_eq!(
            hybrid::function_name("compute:2", 1),
            "pp_skeleton_region_1"
        );
        assert_eq!(hybrid::function_name("for", 2), "pp_skeleton_region_2");
        assert_eq!(
            hybrid::function_name("parallel@0x10", 3),
            "pp_skeleton_region_3"
        );
        // main cannot be a region's function (C requires its signature), nor can a name of
        // the file's own.
        assert_eq!(hybrid::function_name("main", 4), "pp_skeleton_region_4");
        assert_eq!(
            hybrid::function_name("pp_skeleton_region_0", 5),
            "pp_skeleton_region_5"
        );
    }
}
