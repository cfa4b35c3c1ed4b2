//! The execution signature of a run (docs/skeletons.md), after Sodhi & Subhlok, *Performance
//! Prediction with Skeletons* (seed 003): per thread (or rank), its steps ([`steps`]: an
//! operation and the computation before it), clustered under a similarity threshold
//! ([`cluster`]), with their repeats folded into loops ([`loops`]). The threshold is raised
//! along [`THRESHOLDS`] until the signature compresses the run by the target `Q` (the seed's
//! `Q = K/2` for a skeleton `K` times shorter).

pub mod cluster;
pub mod loops;
pub mod parts;
mod render;
pub mod steps;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use pp_recorder::event::ThreadId;

use crate::log::LogReader;
pub use cluster::Cluster;
pub use steps::{Op, Step};

/// The thresholds tried, in order, when a target compression is given.
pub const THRESHOLDS: [f64; 9] = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9];

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

    /// The text form (docs/skeletons.md#the-text-form).
    pub fn text(&self) -> String {
        render::text(self)
    }

    /// The JSON form (docs/skeletons.md#the-json-form).
    pub fn json(&self) -> String {
        render::json(self)
    }
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

/// Reads the log at `path` (any pp log) and makes its signature.
pub fn read(path: &Path, threshold: Threshold) -> Result<Signature> {
    let reader = LogReader::open(path)?;
    from_reader(reader, threshold)
}

/// Makes the signature of the log `reader` reads.
pub fn from_reader(mut reader: LogReader, threshold: Threshold) -> Result<Signature> {
    let p = reader.header().p;
    let mut builders: BTreeMap<ThreadId, steps::Builder> = BTreeMap::new();
    let mut regions = parts::Regions::default();
    // A damaged or cut log: its signature is that of every event before the damage.
    let damage = reader
        .for_each_event(|e, symbols| {
            regions.event(e, symbols);
            builders.entry(e.thread).or_default().event(e, symbols)
        })
        .err();
    let parts = regions.parts(p, &builders);
    let steps: BTreeMap<ThreadId, Vec<Step>> = builders
        .into_iter()
        .map(|(t, b)| {
            let mine = parts.get(&t).map(Vec::as_slice).unwrap_or(&[]);
            (t, b.finish(mine))
        })
        .filter(|(_, s)| !s.is_empty())
        .collect();
    Ok(Signature {
        warning: damage.map(|e| format!("{e}; the signature is of the events before it")),
        ..signature(p, &steps, threshold)
    })
}

/// The signature of these steps.
pub fn signature(p: u32, steps: &BTreeMap<ThreadId, Vec<Step>>, threshold: Threshold) -> Signature {
    match threshold {
        Threshold::Fixed(t) => at(p, steps, t, None),
        Threshold::Target(q) => {
            let mut last = None;
            for &t in &THRESHOLDS {
                let s = at(p, steps, t, Some((q, false)));
                if s.compression() >= q {
                    return Signature {
                        target: Some((q, true)),
                        ..s
                    };
                }
                last = Some(s);
            }
            last.expect("THRESHOLDS is not empty")
        }
    }
}

fn at(
    p: u32,
    steps: &BTreeMap<ThreadId, Vec<Step>>,
    threshold: f64,
    target: Option<(f64, bool)>,
) -> Signature {
    let threads = steps
        .iter()
        .map(|(&thread, steps)| {
            let (clusters, ids) = cluster::cluster(steps, threshold);
            let mut table = loops::Table::default();
            let top = loops::compress(&ids, &mut table);
            ThreadSignature {
                thread,
                steps: steps.len() as u64,
                clusters,
                entries: top.iter().map(|&s| entry(&table, s)).collect(),
                size: top.iter().map(|&s| table.size(s)).sum(),
            }
        })
        .collect();
    Signature {
        p,
        threshold,
        target,
        threads,
        warning: None,
    }
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
