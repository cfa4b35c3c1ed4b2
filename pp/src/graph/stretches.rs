//! [`PathSink`]: builds the activity graph and keeps each thread's attributed stretches while
//! the attribution sweeps the log, so that the critical path's make-up comes from one pass.

use super::Builder;
use crate::event::{Event, Header, Sym, Symbols, ThreadId};
use crate::profile::{Category, Interval, Sink};

/// One attributed stretch of a thread's time (as [`Interval`], without the thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stretch {
    /// Start, ns.
    pub start: u64,
    /// End (exclusive), ns.
    pub end: u64,
    /// The thread's innermost region.
    pub region: Option<Sym>,
    /// Its category.
    pub category: Category,
}

/// Each thread's stretches in time order.
#[derive(Debug, Clone, Default)]
pub struct Stretches {
    /// Per thread.
    pub threads: Vec<Vec<Stretch>>,
}

impl Stretches {
    /// The stretches of `thread` that overlap `[start, end)`.
    pub fn overlapping(&self, thread: ThreadId, start: u64, end: u64) -> &[Stretch] {
        let Some(all) = self.threads.get(thread as usize) else {
            return &[];
        };
        let from = all.partition_point(|s| s.end <= start);
        let to = from + all[from..].partition_point(|s| s.start < end);
        &all[from..to]
    }
}

/// A [`Sink`] for [`crate::profile::Sweep`] that builds the graph from the events and keeps
/// the stretches.
#[derive(Debug)]
pub struct PathSink {
    /// The graph so far.
    pub builder: Builder,
    /// The stretches so far.
    pub stretches: Stretches,
}

impl PathSink {
    /// For a run of `header.p` threads.
    pub fn new(header: &Header) -> Self {
        PathSink {
            builder: Builder::new(header),
            stretches: Stretches {
                threads: vec![Vec::new(); header.p as usize],
            },
        }
    }
}

impl Sink for PathSink {
    fn interval(&mut self, i: &Interval, _symbols: &Symbols) {
        if let Some(list) = self.stretches.threads.get_mut(i.thread as usize) {
            let s = Stretch {
                start: i.start,
                end: i.end,
                region: i.region,
                category: i.category,
            };
            // A thread's stretches tile its time and close in order.
            match list.last_mut() {
                Some(l) if l.end == s.start && l.region == s.region && l.category == s.category => {
                    l.end = s.end
                }
                _ => list.push(s),
            }
        }
    }

    fn event(&mut self, e: &Event, symbols: &Symbols) {
        self.builder.event(e, symbols);
    }
}
