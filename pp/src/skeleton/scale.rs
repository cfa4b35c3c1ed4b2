//! Dividing a signature by K (docs/skeletons.md#the-rules): every loop keeps `count / K`
//! iterations and the remainder's share of one more; a step outside the divided loops keeps its
//! operation and `1/K` of its computation and bytes. K identical back-to-back operations are a
//! loop of K in the signature, so they become one.

use std::collections::HashMap;

use super::{Item, SkelStep, Skeleton, ThreadProgram};
use crate::signature::loops::Node;
use crate::signature::{Cluster, Entry, Folded, Signature};

/// Shares below this are taken as none (floating-point dust of `count / K`).
const DUST: f64 = 1e-9;

/// The skeleton of `sig` for K, with its source's name and wall time.
pub fn skeleton(sig: &Signature, k: f64, source_log: &str, source_wall_ns: u64) -> Skeleton {
    Skeleton {
        k,
        p: sig.p,
        source_log: source_log.to_string(),
        source_wall_ns,
        threshold: sig.threshold,
        compression: sig.compression(),
        omp_blocktime_ms: None,
        threads: sig
            .threads
            .iter()
            .map(|t| ThreadProgram {
                thread: t.thread,
                items: scale(&t.entries, &t.clusters, 1.0 / k),
            })
            .collect(),
    }
}

/// `entries` kept at `share` (1/K at the top): a loop of n iterations keeps ⌊n·share⌋ whole
/// iterations and one more at the fraction left; a step keeps its operation and `share` of its
/// computation, bytes and operation time.
pub fn scale(entries: &[Entry], clusters: &[Cluster], share: f64) -> Vec<Item> {
    let mut out = Vec::new();
    for e in entries {
        match e {
            Entry::Step(c) => out.push(Item::Step(step(&clusters[*c as usize], share))),
            Entry::Loop { count, body } => {
                let keep = *count as f64 * share;
                let whole = (keep + DUST).floor();
                let rest = keep - whole;
                if whole >= 2.0 {
                    out.push(Item::Loop {
                        count: whole as u64,
                        body: scale(body, clusters, 1.0),
                    });
                } else if whole >= 1.0 {
                    out.extend(scale(body, clusters, 1.0));
                }
                if rest > DUST {
                    out.extend(scale(body, clusters, rest));
                }
            }
        }
    }
    out
}

fn step(c: &Cluster, share: f64) -> SkelStep {
    let part = |v: f64| (v * share).round() as u64;
    SkelStep {
        cpu_ns: part(c.mean_cpu_ns()),
        wall_ns: part(c.mean_compute_ns()),
        op_ns: part(c.mean_op_ns()),
        op_cpu_ns: part(c.mean_op_cpu_ns()),
        bytes: part(c.mean_bytes()),
        op: c.op.clone(),
    }
}

/// The wall time of one pass of `entries` at full size.
fn wall(entries: &[Entry], clusters: &[Cluster]) -> f64 {
    entries
        .iter()
        .map(|e| match e {
            Entry::Step(c) => {
                let c = &clusters[*c as usize];
                c.mean_compute_ns() + c.mean_op_ns()
            }
            Entry::Loop { count, body } => *count as f64 * wall(body, clusters),
        })
        .sum()
}

/// The seed's "shortest good skeleton": a warning per thread whose skeleton (the run's wall / K)
/// is shorter than one iteration of its dominant loop (the top-level loop with the most time).
pub fn shortest_good(threads: &[Folded], k: f64, source_wall_ns: u64) -> Vec<String> {
    let length = source_wall_ns as f64 / k;
    threads
        .iter()
        .filter_map(|t| {
            // One iteration's time per loop symbol (a loop repeated at the top is one symbol).
            let mut iteration: HashMap<u32, f64> = HashMap::new();
            let (count, iteration) = t
                .top
                .iter()
                .filter_map(|&s| match &t.table.nodes[s as usize] {
                    Node::Loop { count, .. } => {
                        let one = *iteration.entry(s).or_insert_with(|| match t.entry(s) {
                            Entry::Loop { body, .. } => wall(&body, &t.clusters),
                            Entry::Step(_) => 0.0,
                        });
                        Some((*count, one))
                    }
                    Node::Step(_) => None,
                })
                .max_by(|a, b| (a.0 as f64 * a.1).total_cmp(&(b.0 as f64 * b.1)))?;
            (length < iteration).then(|| {
                format!(
                    "thread {}: the skeleton ({}) is shorter than one iteration ({}) of its dominant loop ({count} iterations): below the shortest good skeleton, K should be at most {:.1}",
                    t.thread,
                    duration(length),
                    duration(iteration),
                    source_wall_ns as f64 / iteration
                )
            })
        })
        .collect()
}

/// A duration in the unit that keeps it readable.
fn duration(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}
