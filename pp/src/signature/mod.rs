//! The execution signature of a run (docs/skeletons.md), after Sodhi & Subhlok, *Performance
//! Prediction with Skeletons* (seed 003): per thread (or rank), its steps ([`steps`]: an
//! operation and the computation before it), clustered under a similarity threshold
//! ([`cluster`]), with their repeats folded into loops ([`loops`]). The threshold is raised
//! along [`THRESHOLDS`] until the signature compresses the run by the target `Q` ([`target`]:
//! the seed's `Q = K/2` for a skeleton `K` times shorter, at least min(K, 2)).

pub mod cluster;
pub mod loops;
pub mod parts;
pub mod record;
mod render;
pub mod steps;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::Result;
use pp_recorder::event::ThreadId;

use crate::log::LogReader;
pub use cluster::Cluster;
pub use record::Recorded;
pub use steps::{Op, Step};

/// The thresholds tried, in order, when a target compression is given. 1 makes any two steps of
/// one operation alike (their operations alone): where a thread's computation between the same
/// two operations varies more than tenfold from one iteration to the next (a rayon worker's
/// share of a region), no lower threshold folds its iterations into a loop
/// (docs/skeletons.md#clustering). The last, [`RUNS`], also frees the lengths of runs.
pub const THRESHOLDS: [f64; 11] = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9, 1.0, RUNS];

/// The threshold past 1: steps alike by their operations alone, and a run of back-to-back
/// steps of one cluster alike any other run of it, whatever their lengths
/// ([`loops::compress_runs`]): where a loop takes a lock a different number of times in each
/// pass, only this folds its passes (docs/skeletons.md#locks-taken-in-varying-numbers).
pub const RUNS: f64 = 2.0;

/// The loops of a thread's cluster sequence at `threshold`.
fn compress(ids: Vec<u32>, threshold: f64, table: &mut loops::Table) -> Vec<u32> {
    if threshold >= RUNS {
        loops::compress_runs(ids, table)
    } else {
        loops::compress(ids, table)
    }
}

/// An entry of a thread's signature: a step (its cluster's means) or a loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// One step: the index of its cluster in [`ThreadSignature::clusters`].
    Step(u32),
    /// `count` iterations of `body`.
    Loop { count: u64, body: Vec<Entry> },
}

/// One thread's signature.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSignature {
    /// The thread (rank).
    pub thread: ThreadId,
    /// Its steps in the log.
    pub steps: u64,
    /// The clusters its steps fell into.
    pub clusters: Vec<Cluster>,
    /// The compressed structure.
    pub entries: Vec<Entry>,
    /// How many entries the structure prints as (a step 1, a loop 1 + its body's).
    pub size: u64,
}

impl ThreadSignature {
    /// Steps per entry.
    pub fn compression(&self) -> f64 {
        self.steps as f64 / self.size.max(1) as f64
    }
}

/// The signature of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// Threads in the log's header.
    pub p: u32,
    /// The similarity threshold used.
    pub threshold: f64,
    /// The target compression, if one was given, and whether it was reached.
    pub target: Option<(f64, bool)>,
    /// Per thread with steps.
    pub threads: Vec<ThreadSignature>,
    /// Why the signature may be incomplete (the log was damaged or cut), if it may.
    pub warning: Option<String>,
}

impl Signature {
    /// Steps of all threads per entry of all threads.
    pub fn compression(&self) -> f64 {
        let steps: u64 = self.threads.iter().map(|t| t.steps).sum();
        let size: u64 = self.threads.iter().map(|t| t.size).sum();
        steps as f64 / size.max(1) as f64
    }

    /// The text form (docs/skeletons.md#output).
    pub fn text(&self) -> String {
        render::text(self)
    }

    /// The JSON form (docs/skeletons.md#output).
    pub fn json(&self) -> String {
        render::json(self)
    }
}

/// One thread's signature as folded symbols (what [`ThreadSignature::entries`] expands):
/// 4 bytes a top-level entry.
#[derive(Debug)]
pub struct Folded {
    /// The thread (rank).
    pub thread: ThreadId,
    /// Its steps in the log.
    pub steps: u64,
    /// The clusters its steps fell into.
    pub clusters: Vec<Cluster>,
    /// The symbols.
    pub table: loops::Table,
    /// The top-level symbols.
    pub top: Vec<u32>,
    /// How many entries the structure prints as.
    pub size: u64,
}

impl Folded {
    /// The entry symbol `s` stands for.
    pub fn entry(&self, s: u32) -> Entry {
        entry(&self.table, s)
    }

    /// The thread's signature with its entries expanded.
    pub fn expand(self) -> ThreadSignature {
        ThreadSignature {
            thread: self.thread,
            steps: self.steps,
            entries: self.top.iter().map(|&s| entry(&self.table, s)).collect(),
            clusters: self.clusters,
            size: self.size,
        }
    }
}

/// The compression a skeleton `k` times shorter asks of its signature (docs/skeletons.md#pp-signature):
/// the seed's `Q = K/2`, but at least min(K, 2). Below K = 4 the seed's rule asks for less than
/// 2, and below K = 2 for less than 1, which the exact threshold 0 always gives: no loop is
/// folded, and the skeleton runs every synchronization of its application with 1/K of its
/// computation (the OpenMP fft2d's 5 s skeleton, K = 1.7, then predicted it 32% too long beside
/// a CPU hog where the shorter skeletons were within 6%). A skeleton keeps about 1/K of its
/// application's steps only where its signature compresses the run by K.
pub fn target(k: f64) -> f64 {
    (k / 2.0).max(k.min(2.0))
}

/// How the threshold is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// This one.
    Fixed(f64),
    /// The first of [`THRESHOLDS`] whose signature compresses the run by this much (else the
    /// last).
    Target(f64),
}

/// The output forms of [`write`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Form {
    Text,
    Json,
}

/// Reads the log at `path` (any pp log) and makes its signature.
pub fn read(path: &Path, threshold: Threshold) -> Result<Signature> {
    from_reader(LogReader::open(path)?, threshold)
}

/// Makes the signature of the log `reader` reads.
pub fn from_reader(reader: LogReader, threshold: Threshold) -> Result<Signature> {
    of_recorded(&Recorded::read(reader)?, threshold)
}

/// The signature of these steps.
pub fn signature(p: u32, steps: &BTreeMap<ThreadId, Vec<Step>>, threshold: Threshold) -> Signature {
    of_recorded(&Recorded::of_steps(p, steps), threshold)
        .expect("steps in memory or in a temporary file read back")
}

/// The signature of a run's recorded steps, every thread's held at once.
pub fn of_recorded(run: &Recorded, threshold: Threshold) -> Result<Signature> {
    let (threshold, target, _) = choose(run, threshold)?;
    let threads = (0..run.threads.len())
        .map(|i| fold(run, i, threshold).map(Folded::expand))
        .collect::<Result<_>>()?;
    Ok(Signature {
        p: run.p,
        threshold,
        target,
        threads,
        warning: run.warning.clone(),
    })
}

/// Writes the signature of the log at `path` to `out` a thread at a time (what `pp signature`
/// prints: its memory is one thread's signature, not the run's); a damaged or cut log's warning
/// goes to standard error first. Returns the steps, the threshold and the compression.
pub fn write(
    path: &Path,
    threshold: Threshold,
    form: Form,
    out: &mut dyn Write,
) -> Result<(u64, f64, f64)> {
    let run = Recorded::read(LogReader::open(path)?)?;
    if let Some(w) = &run.warning {
        eprintln!("pp: warning: {w}");
    }
    let (threshold, target, sizes) = choose(&run, threshold)?;
    let sizes = match sizes {
        Some(s) => s,
        None => sizes_at(&run, threshold)?,
    };
    let steps: u64 = run.threads.iter().map(|t| t.1).sum();
    let head = render::Head {
        p: run.p,
        threshold,
        target,
        compression: steps as f64 / sizes.iter().sum::<u64>().max(1) as f64,
    };
    match form {
        Form::Text => render::head_text(out, &head)?,
        Form::Json => render::head_json(out, &head)?,
    }
    for i in 0..run.threads.len() {
        let f = fold(&run, i, threshold)?;
        let t = render::Thread::Folded(&f);
        match form {
            Form::Text => render::thread_text(out, &t)?,
            Form::Json => render::thread_json(out, &t, i == 0)?,
        }
    }
    if form == Form::Json {
        render::tail_json(out, &head, !run.threads.is_empty())?;
    }
    Ok((steps, threshold, head.compression))
}

/// The threshold, the target and whether it was reached, and (where the search found them)
/// each thread's size at that threshold.
#[allow(clippy::type_complexity)]
pub fn choose(
    run: &Recorded,
    threshold: Threshold,
) -> Result<(f64, Option<(f64, bool)>, Option<Vec<u64>>)> {
    match threshold {
        Threshold::Fixed(t) => Ok((t, None, None)),
        Threshold::Target(q) => {
            let steps: u64 = run.threads.iter().map(|t| t.1).sum();
            let mut last = None;
            for &t in &THRESHOLDS {
                let sizes = sizes_at(run, t)?;
                let size: u64 = sizes.iter().sum();
                if steps as f64 / size.max(1) as f64 >= q {
                    return Ok((t, Some((q, true)), Some(sizes)));
                }
                last = Some((t, Some((q, false)), Some(sizes)));
            }
            Ok(last.expect("THRESHOLDS is not empty"))
        }
    }
}

/// Each thread's signature size at `threshold`, one thread at a time, without the clusters'
/// figures.
pub fn sizes_at(run: &Recorded, threshold: f64) -> Result<Vec<u64>> {
    (0..run.threads.len())
        .map(|i| {
            let ids = cluster::ids(|f| run.each(i, f), threshold, &run.ops)?;
            let mut table = loops::Table::default();
            let top = compress(ids, threshold, &mut table);
            Ok(top.iter().map(|&s| table.size(s)).sum())
        })
        .collect()
}

/// Thread `i`'s signature at `threshold`.
pub fn fold(run: &Recorded, i: usize, threshold: f64) -> Result<Folded> {
    let (clusters, ids) = cluster::cluster(|f| run.each(i, f), threshold, &run.ops)?;
    let mut table = loops::Table::default();
    let top = compress(ids, threshold, &mut table);
    Ok(Folded {
        thread: run.threads[i].0,
        steps: run.threads[i].1,
        clusters,
        size: top.iter().map(|&s| table.size(s)).sum(),
        table,
        top,
    })
}

fn entry(table: &loops::Table, s: u32) -> Entry {
    match &table.nodes[s as usize] {
        loops::Node::Step(c) => Entry::Step(*c),
        loops::Node::Loop { body, count } => Entry::Loop {
            count: *count,
            body: body.iter().map(|&b| entry(table, b)).collect(),
        },
    }
}
