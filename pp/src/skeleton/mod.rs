//! Performance skeletons after Sodhi & Subhlok (docs/skeletons.md#pp-skeleton): a program K times
//! shorter than a run, made from its execution signature ([`crate::signature`]), that runs
//! beside the application's conditions and predicts its time there. [`scale`] divides a
//! signature by K, [`file`] reads and writes the skeleton file, [`run`] executes a threaded
//! skeleton with real threads and synchronization, [`mpi`] writes an MPI log's skeleton as C +
//! MPI and runs it under `pp run -- mpirun`, [`predict`] turns the skeleton's runs into the
//! application's predicted time and lost cycles.

pub mod file;
pub mod gate;
pub mod mpi;
pub mod predict;
pub mod run;
pub mod scale;
pub mod team;

use std::path::Path;

use anyhow::{Result, anyhow};
use pp_recorder::event::ThreadId;

use crate::log::LogReader;
use crate::profile::profile_log;
use crate::signature::{self, Op, Threshold};

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
    /// Per thread with steps.
    pub threads: Vec<ThreadProgram>,
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
    let mut sig = signature::read(path, Threshold::Target(k / 2.0))?;
    let mut warnings = Vec::new();
    let mut skeleton = scale::skeleton(&sig, k, &name, wall);
    // MPI ranks must keep matching messages and collectives, threads their barriers: where the
    // threads' loops, folded under the seed's threshold, divide differently, they are folded by
    // their operations alone (docs/skeletons.md#mpi-skeletons).
    let check = |s: &Skeleton| {
        if mpi::is_mpi(s) {
            mpi::check(s)
        } else {
            run::check(s)
        }
    };
    if mpi::is_mpi(&skeleton) && sig.threshold != mpi::BY_OPERATIONS {
        // An MPI log is folded by its operations alone from the start: the seed's threshold
        // search depends on the computations' times, and on a busy machine it stopped at a
        // threshold that folded the p2p fft's ranks into no common loop (300 steps unrolled,
        // each message a K-th of its size), where the operations fold its iterations whole.
        sig = signature::read(path, Threshold::Fixed(mpi::BY_OPERATIONS))?;
        skeleton = scale::skeleton(&sig, k, &name, wall);
    }
    if let Err(e) = check(&skeleton) {
        let first = sig.threshold;
        sig = signature::read(path, Threshold::Fixed(mpi::BY_OPERATIONS))?;
        skeleton = scale::skeleton(&sig, k, &name, wall);
        warnings.push(format!(
            "{name}: at threshold {first}, {e}; the threads' steps are folded by their operations alone (threshold {}): compression {:.1}",
            mpi::BY_OPERATIONS,
            sig.compression()
        ));
    }
    if sig.compression() < k / 2.0 {
        warnings.push(format!(
            "{name}: the signature does not compress the run by Q = K/2 = {} at any threshold (it does by {:.1} at {}): the skeleton keeps more steps than the seed's rule asks",
            k / 2.0,
            sig.compression(),
            sig.threshold
        ));
    }
    warnings.extend(scale::shortest_good(&sig, k, wall));
    Ok((skeleton, warnings))
}
