//! The critical path: the longest path through the activity graph to the end of the run.

use super::path_graph::{PathGraph, TAKEN, Taken};
use super::{ArcKind, Graph, NO_ARC};
use crate::event::ThreadId;

/// A stretch of the critical path on one thread: the thread's time `[start, end)` lies on it.
/// Time spent on a remote arc (a message in flight, a barrier's release, a hand-off) counts
/// on the thread that waited for it, as the attribution counts it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// The thread.
    pub thread: ThreadId,
    /// Start, ns.
    pub start: u64,
    /// End, ns.
    pub end: u64,
    /// Time on a remote arc of this kind (the waiting thread's time from the arc's source to
    /// its target), or `None`: time through the thread's own events.
    pub arc: Option<ArcKind>,
}

/// The critical path of a run: consecutive [`Segment`]s from its start to the end of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CriticalPath {
    /// In time order; consecutive segments meet (one's end is the next one's start).
    pub segments: Vec<Segment>,
    /// Remote arcs taken: the hops from one thread to another.
    pub hops: u64,
}

impl CriticalPath {
    /// Walks back from the last event of the run (the last thread to stop): through a thread's
    /// own events, except at an event whose longest path comes through a remote arc
    /// ([`super::Node::arc`]), where it goes on from the arc's source. One step per event
    /// at most, so linear in the events. The walk stops at the window's start or at the
    /// first event of a thread; an empty path when nothing started.
    pub fn of(graph: &Graph) -> CriticalPath {
        let mut path = CriticalPath::default();
        let Some((start, end)) = graph.window else {
            return path;
        };
        // The thread whose last event ends the run (the highest such id: the last in order).
        let Some(last) = (0..graph.threads.len())
            .rev()
            .find(|&i| graph.threads[i].last().is_some_and(|n| n.t == end))
        else {
            return path;
        };
        let mut segments = Segments::new(start);
        let mut add = |thread, lo, hi, arc| segments.add(thread, lo, hi, arc);
        let (mut thread, mut idx, mut hi) = (last, graph.threads[last].len() - 1, end);
        loop {
            let node = graph.threads[thread][idx];
            add(thread as ThreadId, node.t, hi, None);
            if node.t <= start {
                break;
            }
            if node.arc != NO_ARC {
                let arc = graph.arcs[node.arc as usize];
                add(thread as ThreadId, arc.from_t, node.t, Some(arc.kind));
                path.hops += 1;
                thread = arc.from as usize;
                idx = arc.from_node as usize;
                hi = arc.from_t;
                if hi <= start {
                    break;
                }
                continue;
            }
            if idx == 0 {
                break;
            }
            idx -= 1;
            hi = node.t;
        }
        path.segments = segments.done();
        path
    }

    /// [`CriticalPath::of`] the graph a [`super::Builder::compact`] kept: the same walk,
    /// which goes back in time, over the events reached through a remote arc alone, read last
    /// first. The walk needs the latest such event of a thread at or before the one it is at;
    /// every event of it later than that was read already, and events read later are of
    /// earlier times, so one pass back over the records finds each (linear in them, in memory
    /// bounded by one chunk). An error reading them back is an error.
    pub fn walk(graph: &mut PathGraph) -> std::io::Result<CriticalPath> {
        if let Some(e) = graph.taken.error() {
            return Err(std::io::Error::other(e.to_string()));
        }
        let mut path = CriticalPath::default();
        let Some((start, end)) = graph.window else {
            return Ok(path);
        };
        let Some(last) = (0..graph.counts.len())
            .rev()
            .find(|&i| graph.counts[i] > 0 && graph.last_t[i] == end)
        else {
            return Ok(path);
        };
        let first_t = &graph.first_t;
        let mut segments = Segments::new(start);
        let mut records = graph.taken.backward::<TAKEN>();
        let (mut thread, mut idx, mut hi) = (last as ThreadId, graph.counts[last] - 1, end);
        loop {
            // The latest event of `thread` at or before node `idx` reached through an arc.
            let found = records
                .by_ref()
                .map(|r| Taken::from_bytes(&r))
                .find(|r| r.arc.to == thread && r.arc.to_node <= idx);
            let Some(Taken { t, arc }) = found else {
                // Back through its own events to its first.
                segments.add(thread, first_t[thread as usize], hi, None);
                break;
            };
            segments.add(thread, t, hi, None);
            if t <= start {
                break;
            }
            segments.add(thread, arc.from_t, t, Some(arc.kind));
            path.hops += 1;
            (thread, idx, hi) = (arc.from, arc.from_node, arc.from_t);
            if hi <= start {
                break;
            }
        }
        if let Some(e) = records.error.take() {
            return Err(e);
        }
        path.segments = segments.done();
        Ok(path)
    }

    /// Its length, ns: the sum of its segments.
    pub fn length(&self) -> u64 {
        self.segments.iter().map(|s| s.end - s.start).sum()
    }

    /// When it starts and ends (`None`: empty).
    pub fn span(&self) -> Option<(u64, u64)> {
        Some((self.segments.first()?.start, self.segments.last()?.end))
    }
}

/// The path's segments as a walk back finds them, last first: consecutive stretches of one
/// thread's time of the same kind join, nothing before `start` counts.
struct Segments {
    start: u64,
    list: Vec<Segment>,
}

impl Segments {
    fn new(start: u64) -> Self {
        Segments {
            start,
            list: Vec::new(),
        }
    }

    fn add(&mut self, thread: ThreadId, lo: u64, hi: u64, arc: Option<ArcKind>) {
        let lo = lo.max(self.start);
        if lo >= hi {
            return;
        }
        match self.list.last_mut() {
            Some(s) if s.thread == thread && s.start == hi && s.arc == arc => s.start = lo,
            _ => self.list.push(Segment {
                thread,
                start: lo,
                end: hi,
                arc,
            }),
        }
    }

    /// In time order.
    fn done(mut self) -> Vec<Segment> {
        self.list.reverse();
        self.list
    }
}
