//! Performance skeletons after Sodhi & Subhlok (docs/skeletons.md#pp-skeleton): a program K times
//! shorter than a run, made from its execution signature ([`crate::signature`]), that runs
//! beside the application's conditions and predicts its time there. [`scale`] divides a
//! signature by K, [`file`] reads and writes the skeleton file, [`run`] executes a threaded
//! skeleton with real threads and synchronization, [`mpi`] writes an MPI log's skeleton as C +
//! MPI (with OpenMP regions, [`hybrid`], after [`rotate`] has turned the loops to hold them
//! whole) and runs it under `pp run -- mpirun`, [`predict`] turns the skeleton's runs into the
//! application's predicted time and lost cycles.

pub mod file;
pub mod gate;
pub mod hybrid;
pub mod lock;
pub mod mpi;
pub mod partner;
pub mod predict;
pub mod rotate;
pub mod run;
pub mod scale;
pub mod spinning;
pub mod team;

use std::path::Path;

use anyhow::{Result, anyhow, bail};
use pp_recorder::event::ThreadId;

use crate::log::LogReader;
use crate::profile::profile_log;
use crate::signature::{self, Folded, Op, Recorded, Threshold};

/// One step of a skeleton: spin for `cpu_ns` of thread CPU time, then do `op`.
#[derive(Debug, Clone, PartialEq)]
pub struct SkelStep {
    /// CPU nanoseconds to spin before the operation.
    pub cpu_ns: u64,
    /// The wall nanoseconds the application's computation took for this step (divided as the
    /// CPU time is), for reference.
    pub wall_ns: u64,
    /// The wall nanoseconds the application's operation took (waits that the skeleton cannot
    /// reproduce last this long).
    pub op_ns: u64,
    /// The CPU nanoseconds the application's operation took (divided alike): a wait that spun
    /// spins (docs/skeletons.md#spinning-waits), a copy keeps the processor this long.
    pub op_cpu_ns: u64,
    /// Bytes the operation moves.
    pub bytes: u64,
    /// The operation.
    pub op: Op,
}

/// An item of a thread's program: a step, or a loop of items.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// One step.
    Step(SkelStep),
    /// `count` iterations of `body`.
    Loop { count: u64, body: Vec<Item> },
}

impl Item {
    /// The application's wall time this item stands for in the skeleton (computation and
    /// operation, every iteration).
    pub fn wall_ns(&self) -> u128 {
        match self {
            Item::Step(s) => u128::from(s.wall_ns) + u128::from(s.op_ns),
            Item::Loop { count, body } => {
                u128::from(*count) * body.iter().map(Item::wall_ns).sum::<u128>()
            }
        }
    }

    /// How many times `pred` holds for a step, over every iteration.
    pub fn count(&self, pred: &dyn Fn(&SkelStep) -> bool) -> u64 {
        match self {
            Item::Step(s) => u64::from(pred(s)),
            Item::Loop { count, body } => {
                count.saturating_mul(body.iter().map(|i| i.count(pred)).sum::<u64>())
            }
        }
    }

    /// Calls `f` with each step and how many times it runs (its loops' counts multiplied).
    pub fn each_step(&self, f: &mut dyn FnMut(&SkelStep, u64)) {
        self.each_times(1, f);
    }

    fn each_times(&self, times: u64, f: &mut dyn FnMut(&SkelStep, u64)) {
        match self {
            Item::Step(s) => f(s, times),
            Item::Loop { count, body } => {
                let times = times.saturating_mul(*count);
                if times > 0 {
                    body.iter().for_each(|i| i.each_times(times, f));
                }
            }
        }
    }
}

/// One thread's program.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadProgram {
    /// The thread (rank).
    pub thread: ThreadId,
    /// Its items, in order.
    pub items: Vec<Item>,
}

/// A skeleton: per thread its program, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Skeleton {
    /// How many times shorter than its application it is meant to run.
    pub k: f64,
    /// Threads of the application (the skeleton's log has as many).
    pub p: u32,
    /// The application's log.
    pub source_log: String,
    /// The application's wall time (ns).
    pub source_wall_ns: u64,
    /// The similarity threshold of the signature.
    pub threshold: f64,
    /// The signature's compression (steps per entry).
    pub compression: f64,
    /// libomp's blocktime in the application's run (its log's `omp_blocktime_ms`), whose
    /// waits the skeleton's then copy; `None` for another runtime
    /// (docs/skeletons.md#spinning-waits).
    pub omp_blocktime_ms: Option<u64>,
    /// Per thread with steps.
    pub threads: Vec<ThreadProgram>,
}

/// What a skeleton file's header says.
#[derive(Debug, Clone, Copy)]
pub struct Head<'a> {
    pub k: f64,
    pub p: u32,
    pub source_log: &'a str,
    pub source_wall_ns: u64,
    pub threshold: f64,
    pub compression: f64,
    pub omp_blocktime_ms: Option<u64>,
}

/// A skeleton's programs: held whole ([`Skeleton`]) or made a top-level item at a time from its
/// signature's folded threads ([`Plan`], docs/skeletons.md#memory).
pub trait Programs {
    /// The header.
    fn head(&self) -> Head<'_>;
    /// The threads, in order.
    fn threads(&self) -> Vec<ThreadId>;
    /// Calls `f` with each top-level item of the `i`-th thread's program, in order.
    fn each(&self, i: usize, f: &mut dyn FnMut(&Item));
}

impl Programs for Skeleton {
    fn head(&self) -> Head<'_> {
        Head {
            k: self.k,
            p: self.p,
            source_log: &self.source_log,
            source_wall_ns: self.source_wall_ns,
            threshold: self.threshold,
            compression: self.compression,
            omp_blocktime_ms: self.omp_blocktime_ms,
        }
    }

    fn threads(&self) -> Vec<ThreadId> {
        self.threads.iter().map(|t| t.thread).collect()
    }

    fn each(&self, i: usize, f: &mut dyn FnMut(&Item)) {
        self.threads[i].items.iter().for_each(f)
    }
}

/// A skeleton as its signature's folded threads and K: each thread's program is made from its
/// top-level entries one at a time ([`scale::scale`] divides each on its own), so that it is
/// never held whole.
pub struct Plan {
    pub k: f64,
    pub p: u32,
    pub source_log: String,
    pub source_wall_ns: u64,
    pub threshold: f64,
    /// libomp's blocktime in the application's run ([`Skeleton::omp_blocktime_ms`]).
    pub omp_blocktime_ms: Option<u64>,
    /// The signature's threads.
    pub threads: Vec<Folded>,
}

impl Plan {
    /// The plan of the steps `run` recorded, folded under `threshold`, for K = `k`. A hybrid
    /// run's (MPI messages and OpenMP regions) threads have their loops rotated until each
    /// region lies whole in one iteration ([`rotate`], docs/skeletons.md#hybrid-skeletons).
    pub fn new(
        run: &Recorded,
        threshold: f64,
        k: f64,
        source_log: &str,
        source_wall_ns: u64,
    ) -> Result<Plan> {
        let mut threads: Vec<Folded> = (0..run.threads.len())
            .map(|i| signature::fold(run, i, threshold))
            .collect::<Result<_>>()?;
        let has =
            |f: &dyn Fn(&Op) -> bool| threads.iter().any(|t| t.clusters.iter().any(|c| f(&c.op)));
        if has(&hybrid::openmp)
            && has(&|op| matches!(op, Op::Send { .. } | Op::Recv { .. } | Op::Coll { .. }))
        {
            for t in &mut threads {
                rotate::rotate(t).map_err(|e| anyhow!("{source_log}: {e}"))?;
            }
        }
        Ok(Plan {
            k,
            p: run.p,
            source_log: source_log.to_string(),
            source_wall_ns,
            threshold,
            omp_blocktime_ms: run.omp_blocktime_ms,
            threads,
        })
    }

    /// The signature's compression (steps per entry, all threads together).
    pub fn compression(&self) -> f64 {
        let steps: u64 = self.threads.iter().map(|t| t.steps).sum();
        let size: u64 = self.threads.iter().map(|t| t.size).sum();
        steps as f64 / size.max(1) as f64
    }

    /// The whole skeleton.
    pub fn skeleton(&self) -> Skeleton {
        let head = self.head();
        Skeleton {
            k: self.k,
            p: self.p,
            source_log: self.source_log.clone(),
            source_wall_ns: self.source_wall_ns,
            threshold: self.threshold,
            compression: head.compression,
            omp_blocktime_ms: self.omp_blocktime_ms,
            threads: (0..self.threads.len())
                .map(|i| {
                    let mut items = Vec::new();
                    self.each(i, &mut |it| items.push(it.clone()));
                    ThreadProgram {
                        thread: self.threads[i].thread,
                        items,
                    }
                })
                .collect(),
        }
    }
}

impl Programs for Plan {
    fn head(&self) -> Head<'_> {
        Head {
            k: self.k,
            p: self.p,
            source_log: &self.source_log,
            source_wall_ns: self.source_wall_ns,
            threshold: self.threshold,
            compression: self.compression(),
            omp_blocktime_ms: self.omp_blocktime_ms,
        }
    }

    fn threads(&self) -> Vec<ThreadId> {
        self.threads.iter().map(|t| t.thread).collect()
    }

    fn each(&self, i: usize, f: &mut dyn FnMut(&Item)) {
        let t = &self.threads[i];
        for &s in &t.top {
            for item in scale::scale(&[t.entry(s)], &t.clusters, 1.0 / self.k) {
                f(&item);
            }
        }
    }
}

/// How K is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    /// This K.
    Scale(f64),
    /// The K that makes the skeleton last about this many seconds (the application's wall / T,
    /// at least 1).
    Time(f64),
}

/// A skeleton made from the whole log at `path` (a damaged or cut log is refused), and its
/// warnings.
pub fn from_log(path: &Path, size: Size) -> Result<(Skeleton, Vec<String>)> {
    let (plan, warnings) = plan(path, size)?;
    Ok((plan.skeleton(), warnings))
}

/// [`from_log`]'s skeleton as a [`Plan`]: what `pp skeleton` writes, in memory bounded by its
/// signature's folded threads (docs/skeletons.md#memory).
pub fn plan(path: &Path, size: Size) -> Result<(Plan, Vec<String>)> {
    let name = path.display().to_string();
    let mut reader = LogReader::open(path)?;
    let profile = profile_log(&mut reader, None, None)
        .whole(&name)
        .map_err(|e| anyhow!("{e} (a skeleton is made from a whole run)"))?;
    let wall = profile.window.1.saturating_sub(profile.window.0);
    let k = match size {
        Size::Scale(k) => k,
        Size::Time(t) => (wall as f64 / (t * 1e9)).max(1.0),
    };
    // A skeleton shorter than a nanosecond of the run has nothing left to run.
    if !(k.is_finite() && k <= (wall as f64).max(1.0)) {
        let asked = match size {
            Size::Scale(k) => format!("--scale {}", files::quote::number(k)),
            Size::Time(t) => format!("--time {}", files::quote::number(t)),
        };
        bail!(
            "{asked}: a skeleton of {name} would last less than a nanosecond of its {} s (K at most {wall})",
            wall as f64 * 1e-9
        );
    }
    // The log is read once; every threshold tried reads its steps' records again.
    let run = Recorded::read(LogReader::open(path)?)?;
    let q = signature::target(k);
    let (threshold, _, _) = signature::choose(&run, Threshold::Target(q))?;
    let mut plan = Plan::new(&run, threshold, k, &name, wall)?;
    let by_operations = || Plan::new(&run, mpi::BY_OPERATIONS, k, &name, wall);
    let mut warnings = Vec::new();
    // MPI ranks must keep matching messages and collectives, threads their barriers: where the
    // threads' loops, folded under the seed's threshold, divide differently, they are folded by
    // their operations alone (docs/skeletons.md#mpi-skeletons).
    let check = |s: &Plan| {
        if mpi::is_mpi(s) {
            mpi::check(s).map(|_| ())
        } else {
            run::check(s)
        }
    };
    if mpi::is_mpi(&plan) && plan.threshold != mpi::BY_OPERATIONS {
        // An MPI log is folded by its operations alone from the start: the seed's threshold
        // search depends on the computations' times, and on a busy machine it stopped at a
        // threshold that folded the p2p fft's ranks into no common loop (300 steps unrolled,
        // each message a K-th of its size), where the operations fold its iterations whole.
        // (The first plan goes before the next is made: each holds every thread's symbols.)
        drop(plan);
        plan = by_operations()?;
    }
    if let Err(e) = check(&plan) {
        let first = plan.threshold;
        drop(plan);
        plan = by_operations()?;
        warnings.push(format!(
            "{name}: at threshold {first}, {e}; the threads' steps are folded by their operations alone (threshold {}): compression {:.1}",
            mpi::BY_OPERATIONS,
            plan.compression()
        ));
    }
    if !mpi::is_mpi(&plan) {
        // A region's parts pair up with its regions, and a thread's waits with its partner's
        // releases, only where their threads' loops divide alike: where they do not under the
        // seed's threshold (the Rust fft2d's opener and member fold differently at 0.9, and a
        // 2 s skeleton ran some parts outside the regions they belonged to; a wait's
        // computation since the last release is short and varies), the steps are folded by
        // their operations alone (docs/skeletons.md#partners).
        // (Regions still uneven are paired part by part when the skeleton runs, which warns.)
        (plan, _) = refold(
            plan,
            &by_operations,
            &mut warnings,
            &name,
            &|p| run::uneven_regions(p),
            &|u| {
                format!(
                    "the threads enter {} region(s) different numbers of times ({})",
                    u.len(),
                    u.join("; ")
                )
            },
        )?;
        let unpaired;
        (plan, unpaired) = refold(
            plan,
            &by_operations,
            &mut warnings,
            &name,
            &|p| partner::Partners::plan(p).1,
            &|u| format!("{} of the waits' partners do not pair up", u.len()),
        )?;
        warnings.extend(unpaired);
    }
    if plan.compression() < q {
        warnings.push(format!(
            "{name}: the signature does not compress the run by Q = {q} at any threshold (it does by {:.1} at {}): the skeleton keeps more steps than the seed's rule asks",
            plan.compression(),
            plan.threshold
        ));
    }
    warnings.extend(scale::shortest_good(&plan.threads, k, wall));
    Ok((plan, warnings))
}

/// Where `plan`, folded under the seed's threshold, has `problems`, the run folded again by its
/// operations alone (`by_operations`) if that leaves fewer of them and still runs, with a
/// warning that says what was wrong (`why`); returns the plan kept and its problems.
fn refold(
    plan: Plan,
    by_operations: &dyn Fn() -> Result<Plan>,
    warnings: &mut Vec<String>,
    name: &str,
    problems: &dyn Fn(&Plan) -> Vec<String>,
    why: &dyn Fn(&[String]) -> String,
) -> Result<(Plan, Vec<String>)> {
    let found = problems(&plan);
    if found.is_empty() || plan.threshold == mpi::BY_OPERATIONS {
        return Ok((plan, found));
    }
    let again = by_operations()?;
    let left = problems(&again);
    if left.len() >= found.len() || run::check(&again).is_err() {
        return Ok((plan, found));
    }
    warnings.push(format!(
        "{name}: at threshold {}, {}; the threads' steps are folded by their operations alone (threshold {}): compression {:.1}",
        plan.threshold,
        why(&found),
        mpi::BY_OPERATIONS,
        again.compression()
    ));
    Ok((again, left))
}
