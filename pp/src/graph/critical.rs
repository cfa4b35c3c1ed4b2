//! The critical path: the longest path through the activity graph to the end of the run.

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
        let mut segments: Vec<Segment> = Vec::new();
        let mut add = |thread: ThreadId, lo: u64, hi: u64, arc: Option<ArcKind>| {
            let lo = lo.max(start);
            if lo >= hi {
                return;
            }
            match segments.last_mut() {
                Some(s) if s.thread == thread && s.start == hi && s.arc == arc => s.start = lo,
                _ => segments.push(Segment {
                    thread,
                    start: lo,
                    end: hi,
                    arc,
                }),
            }
        };
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
        segments.reverse();
        path.segments = segments;
        path
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
