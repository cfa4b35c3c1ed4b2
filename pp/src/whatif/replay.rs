//! [`replay`]: the run simulated on the target configuration, event by event in predicted
//! time.
//!
//! Each thread goes from one event to the next through one *step*: computation (a demand for
//! processor time, the measured time divided by the stretch's speed factor), or a wait held
//! for its measured time when no other thread is known to have ended it (0 when one is),
//! then no earlier than each of its dependencies (another thread's event plus a latency).
//! A processor serves its runnable members fairly: `k` of them each progress at `1/k`.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use anyhow::{Result, bail};

use super::load::MeasuredRun;
use super::target::{Demand, Target};
use crate::event::{EventKind, ThreadId};
use crate::graph::{ArcKind, NO_ARC};

/// Remaining demand below this (ns) is done: the float rounding of a completion time.
const EPSILON: f64 = 1e-3;

/// The replay's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicted {
    /// The run's first event, ns: the replay's times count from it (so that they are exact
    /// in a double up to 2^53 ns, 104 days, of run whatever the clock's origin).
    pub origin: u64,
    /// Each thread's events' predicted times after [`Predicted::origin`], ns (as
    /// `MeasuredRun::threads`).
    pub times: Vec<Vec<f64>>,
    /// Each thread's scheduler accounting at its `start`, `stop` and `cpu` events, in order.
    pub samples: Vec<Vec<Sample>>,
}

/// A thread's predicted scheduler accounting at one of its events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// The event's index.
    pub event: usize,
    /// Time runnable without a processor so far, ns.
    pub delay: f64,
    /// Processor time received so far, ns.
    pub served: f64,
    /// Demand the speed factors took away so far, ns.
    pub saved: f64,
}

/// Something an event must wait for: another event, plus a latency.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// Node `node` of thread `from`.
    Node { from: ThreadId, node: u32 },
    /// The first `arrived` arrivals of a barrier episode.
    Episode { episode: u32, arrived: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Dep {
    node: u32,
    source: Source,
    latency: f64,
}

/// What a thread is doing in the simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Thread {
    /// Its next event's index.
    next: usize,
    /// Its first dependency of that event (index into its deps).
    dep: usize,
    /// Demand left in its current computation, ns.
    remaining: f64,
    /// No earlier than this, its next event.
    until: f64,
    delay: f64,
    served: f64,
    saved: f64,
}

#[derive(Debug, Default)]
struct Processor {
    running: Vec<ThreadId>,
    last: f64,
    version: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Item {
    /// A processor's next completion (stale when its version moved on).
    Done { processor: u32, version: u64 },
    /// A thread's next event, its time known.
    Event { thread: ThreadId },
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct At(f64, u64, Item);

impl Eq for At {}
impl PartialOrd for At {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for At {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

struct Sim<'a> {
    run: &'a MeasuredRun,
    deps: Vec<Vec<Dep>>,
    of: Vec<u32>,
    threads: Vec<Thread>,
    processors: Vec<Processor>,
    out: Predicted,
    heap: BinaryHeap<Reverse<At>>,
    seq: u64,
    /// Per thread: (node, waiting thread) for threads blocked on one of its events.
    waiters: Vec<Vec<(u32, ThreadId)>>,
    /// Demand from CPU time ([`Demand::Cpu`]).
    cpu: bool,
    /// Per thread: whether its `start` follows a fork (see [`dependencies`]).
    tied: Vec<bool>,
}

/// Replays `run` on `target`.
pub fn replay(run: &MeasuredRun, target: &Target) -> Result<Predicted> {
    let p = run.header.p as usize;
    let of = target.processors(run.header.p)?;
    let n_processors = of.iter().max().map_or(0, |&m| m as usize + 1);
    let origin = run
        .graph
        .threads
        .iter()
        .filter_map(|t| t.first())
        .map(|n| n.t)
        .min()
        .unwrap_or(0);
    let (deps, tied) = dependencies(run, target);
    let mut sim = Sim {
        run,
        deps,
        tied,
        of,
        threads: vec![
            Thread {
                next: 0,
                dep: 0,
                remaining: 0.0,
                until: 0.0,
                delay: 0.0,
                served: 0.0,
                saved: 0.0,
            };
            p
        ],
        processors: (0..n_processors).map(|_| Processor::default()).collect(),
        out: Predicted {
            origin,
            times: run
                .threads
                .iter()
                .map(|t| Vec::with_capacity(t.len()))
                .collect(),
            samples: vec![Vec::new(); p],
        },
        heap: BinaryHeap::new(),
        seq: 0,
        waiters: vec![Vec::new(); p],
        cpu: target.demand == Demand::Cpu,
    };
    for i in 0..p {
        sim.begin(i, 0.0);
    }
    while let Some(Reverse(At(t, _, item))) = sim.heap.pop() {
        match item {
            Item::Event { thread } => sim.event(thread as usize, t),
            Item::Done { processor, version } => sim.done(processor as usize, version, t),
        }
    }
    for (i, t) in run.threads.iter().enumerate() {
        if sim.out.times[i].len() != t.len() {
            bail!(
                "the replay stopped at thread {i}'s event {} of {}: a dependency was never met",
                sim.out.times[i].len() + 1,
                t.len()
            );
        }
    }
    Ok(sim.out)
}

/// Each thread's dependencies, by node: the graph's arcs into it (a message's latency from
/// the target's network when it has one; the latency measured when the arc is what ended the
/// thread's wait; else 1 ns, the order), and for a barrier's departure every arrival of its
/// episode, with the measured release latency. With [`Demand::Cpu`] a measured latency loses
/// the run-queue delay around the event it leads to (the thread, released, waited for a core).
/// A thread whose `start` came at or after the fork into its first region (an OpenMP worker,
/// created by the first fork) starts that long after the fork, wherever the fork moves: the
/// second result says which threads' starts are tied so.
fn dependencies(run: &MeasuredRun, target: &Target) -> (Vec<Vec<Dep>>, Vec<bool>) {
    let g = &run.graph;
    let unqueued = |thread: usize, node: u32, latency: u64| -> f64 {
        let latency = latency as f64;
        match (target.demand, node.checked_sub(1)) {
            (Demand::Cpu, Some(k)) => {
                (latency - f64::from(run.threads[thread][k as usize].queued)).max(0.0)
            }
            _ => latency,
        }
    };
    let mpi = target.machine.as_ref().and_then(|m| m.mpi.as_ref());
    let mut deps: Vec<Vec<Dep>> = vec![Vec::new(); g.threads.len()];
    for (a, arc) in g.arcs.iter().enumerate() {
        let to = arc.to as usize;
        let t = g.threads[to][arc.to_node as usize].t;
        let s = g.threads[arc.from as usize][arc.from_node as usize].t;
        let binding = g.threads[to][arc.to_node as usize].arc == a as u32 && a as u32 != NO_ARC;
        let network = match (
            arc.kind,
            mpi,
            run.threads[to][arc.to_node as usize].event.kind,
        ) {
            (ArcKind::Message, Some(mpi), EventKind::Recv { bytes, .. }) => {
                Some(mpi.ideal_message_ns(bytes) as f64)
            }
            _ => None,
        };
        // An arc that did not hold its target up only orders: 1 ns, so that the predicted log
        // keeps the order (a `recv` at the time of its `send` would come first when its thread
        // is the lower; 0 where the measured log had them at the same time).
        let latency = match network {
            Some(ns) => ns.max(1.0),
            None if binding => unqueued(to, arc.to_node, t.saturating_sub(s)),
            None => t.saturating_sub(s).min(1) as f64,
        };
        deps[to].push(Dep {
            node: arc.to_node,
            source: Source::Node {
                from: arc.from,
                node: arc.from_node,
            },
            latency,
        });
    }
    for d in &g.departures {
        let arrivals = &g.arrivals[d.episode as usize][..d.arrived as usize];
        let last = arrivals
            .iter()
            .map(|&(th, n)| g.threads[th as usize][n as usize].t)
            .max()
            .unwrap_or(0);
        let node = g.threads[d.thread as usize][d.node as usize];
        // Held by something later than the barrier (an OpenMP worker's barrier wait ends at
        // the next region's fork): the barrier only orders.
        let later = g.arcs.get(node.arc as usize).is_some_and(|a| {
            a.kind != ArcKind::Barrier && g.threads[a.from as usize][a.from_node as usize].t > last
        });
        deps[d.thread as usize].push(Dep {
            node: d.node,
            source: Source::Episode {
                episode: d.episode,
                arrived: d.arrived,
            },
            latency: unqueued(
                d.thread as usize,
                d.node,
                node.t
                    .saturating_sub(last)
                    .min(if later { 1 } else { u64::MAX }),
            ),
        });
    }
    let mut tied = vec![false; g.threads.len()];
    for arc in g.arcs.iter().filter(|a| a.kind == ArcKind::Fork) {
        let to = arc.to as usize;
        let start = &run.threads[to][0];
        if tied[to] || !matches!(start.event.kind, EventKind::Start) || arc.from_t > start.event.t {
            continue;
        }
        // The first fork into the thread (arcs come in their targets' order).
        tied[to] = true;
        deps[to].push(Dep {
            node: 0,
            source: Source::Node {
                from: arc.from,
                node: arc.from_node,
            },
            latency: (g.threads[to][0].t - arc.from_t) as f64,
        });
    }
    for list in &mut deps {
        list.sort_by_key(|d| d.node);
    }
    (deps, tied)
}

impl Sim<'_> {
    fn push(&mut self, t: f64, item: Item) {
        self.seq += 1;
        self.heap.push(Reverse(At(t, self.seq, item)));
    }

    /// Thread `i` has had its previous event (or the run begins) at `t`: its next step.
    fn begin(&mut self, i: usize, t: f64) {
        let k = self.threads[i].next;
        let entries = &self.run.threads[i];
        if k >= entries.len() {
            return;
        }
        let nodes = &self.run.graph.threads[i];
        let released = nodes[k].arc != NO_ARC;
        let (prev, computes, factor, share) = match k {
            0 => (self.out.origin, false, 1.0, 1.0),
            _ => {
                let e = &entries[k - 1];
                let share = if self.cpu { f64::from(e.share) } else { 1.0 };
                (nodes[k - 1].t, e.busy, e.factor, share)
            }
        };
        let measured = nodes[k].t.saturating_sub(prev) as f64;
        let released = released || (k == 0 && self.tied[i]);
        if computes && measured > 0.0 {
            // What it demands: its time, or the part of it its thread ran (Demand::Cpu).
            let measured = measured * share;
            let th = &mut self.threads[i];
            th.remaining = measured / factor;
            th.saved += measured - th.remaining;
            th.served += th.remaining;
            let p = self.of[i] as usize;
            self.advance(p, t);
            self.processors[p].running.push(i as ThreadId);
            self.reschedule(p);
        } else {
            // A wait that no dependency ended keeps its measured length: its partner is not
            // known, so neither is how its timing changed (with Demand::Cpu, the run-queue
            // delay around it may have accrued while it spun, and is not taken out).
            let hold = if computes || released { 0.0 } else { measured };
            self.threads[i].until = t + hold;
            self.resolve(i);
        }
    }

    /// Thread `i` waits for the dependencies of its next event: once all have happened, the
    /// event is due at the latest of them (plus latencies) and of its own hold.
    fn resolve(&mut self, i: usize) {
        let k = self.threads[i].next as u32;
        let mut until = self.threads[i].until;
        let deps = &self.deps[i];
        let mut d = self.threads[i].dep;
        while d < deps.len() && deps[d].node == k {
            let dep = deps[d];
            d += 1;
            let mut one = |from: ThreadId, node: u32| match self.out.times[from as usize]
                .get(node as usize)
            {
                Some(&s) => {
                    until = until.max(s + dep.latency);
                    None
                }
                None => Some((from, node)),
            };
            let blocked = match dep.source {
                Source::Node { from, node } => one(from, node),
                Source::Episode { episode, arrived } => self.run.graph.arrivals[episode as usize]
                    [..arrived as usize]
                    .iter()
                    .find_map(|&(from, node)| one(from, node)),
            };
            if let Some((from, node)) = blocked {
                self.waiters[from as usize].push((node, i as ThreadId));
                return;
            }
        }
        self.threads[i].until = until;
        self.push(
            until,
            Item::Event {
                thread: i as ThreadId,
            },
        );
    }

    /// Thread `i`'s next event happens at `t`.
    fn event(&mut self, i: usize, t: f64) {
        let k = self.threads[i].next;
        self.out.times[i].push(t);
        let th = &mut self.threads[i];
        if matches!(
            self.run.threads[i][k].event.kind,
            EventKind::Start | EventKind::Stop | EventKind::Cpu { .. }
        ) {
            self.out.samples[i].push(Sample {
                event: k,
                delay: th.delay,
                served: th.served,
                saved: th.saved,
            });
        }
        th.next += 1;
        let deps = &self.deps[i];
        while th.dep < deps.len() && deps[th.dep].node as usize <= k {
            th.dep += 1;
        }
        if !self.waiters[i].is_empty() {
            let mut woken = Vec::new();
            self.waiters[i].retain(|&(node, w)| {
                let due = node as usize <= k;
                if due {
                    woken.push(w);
                }
                !due
            });
            for w in woken {
                self.resolve(w as usize);
            }
        }
        self.begin(i, t);
    }

    /// Processor `p`'s members have progressed up to `t`.
    fn advance(&mut self, p: usize, t: f64) {
        let proc = &mut self.processors[p];
        let k = proc.running.len() as f64;
        let dt = t - proc.last;
        if k > 0.0 && dt > 0.0 {
            for &r in &proc.running {
                let th = &mut self.threads[r as usize];
                th.remaining -= dt / k;
                th.delay += dt - dt / k;
            }
        }
        proc.last = proc.last.max(t);
    }

    fn reschedule(&mut self, p: usize) {
        let proc = &mut self.processors[p];
        proc.version += 1;
        let k = proc.running.len() as f64;
        let least = proc
            .running
            .iter()
            .map(|&r| self.threads[r as usize].remaining)
            .min_by(f64::total_cmp);
        if let Some(least) = least {
            let (t, version) = (proc.last + least.max(0.0) * k, proc.version);
            self.push(
                t,
                Item::Done {
                    processor: p as u32,
                    version,
                },
            );
        }
    }

    /// Processor `p`'s earliest computation ends at `t` (unless its members changed since).
    fn done(&mut self, p: usize, version: u64, t: f64) {
        if self.processors[p].version != version {
            return;
        }
        self.advance(p, t);
        let mut finished = Vec::new();
        let threads = &self.threads;
        // Far from the origin a double's step exceeds EPSILON: what is left below a few of
        // its steps (times the sharers) is done too, or the replay would never end.
        let k = self.processors[p].running.len() as f64;
        let tolerance = EPSILON.max(4.0 * k * t.abs() * f64::EPSILON);
        self.processors[p].running.retain(|&r| {
            let done = threads[r as usize].remaining <= tolerance;
            if done {
                finished.push(r);
            }
            !done
        });
        self.reschedule(p);
        for r in finished {
            self.threads[r as usize].until = t;
            self.resolve(r as usize);
        }
    }
}
