//! [`PathSink`]: builds the activity graph and keeps each thread's attributed stretches while
//! the attribution sweeps the log, so that the critical path's make-up comes from one pass.

use super::build::Builder;
use crate::event::{Event, Header, Sym, Symbols, ThreadId};
use crate::profile::{CATEGORIES, Category, Interval, Sink};

/// One attributed stretch of a thread's time: it starts where the thread's previous one ends
/// (16 bytes: a thread's stretches tile its time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stretch {
    end: u64,
    /// The innermost region's symbol, [`NO_REGION`] outside every region.
    region: u32,
    /// Index in [`CATEGORIES`], [`GAP`] for time no interval covered.
    category: u8,
}

const NO_REGION: u32 = u32::MAX;
const GAP: u8 = u8::MAX;

/// Each thread's attributed stretches in time order.
#[derive(Debug, Clone, Default)]
pub struct Stretches {
    /// Per thread: where its first stretch starts, and its stretches.
    threads: Vec<(u64, Vec<Stretch>)>,
}

impl Stretches {
    /// For `p` threads.
    pub fn new(p: u32) -> Self {
        Stretches {
            threads: vec![(0, Vec::new()); p as usize],
        }
    }

    /// Adds the next interval of its thread.
    pub fn push(&mut self, i: &Interval) {
        let Some((first, list)) = self.threads.get_mut(i.thread as usize) else {
            return;
        };
        let category = CATEGORIES
            .iter()
            .position(|&c| c == i.category)
            .unwrap_or(0) as u8;
        let region = i.region.map_or(NO_REGION, |s| s.0);
        match list.last_mut() {
            None => *first = i.start,
            Some(l) if l.end == i.start && l.region == region && l.category == category => {
                l.end = i.end;
                return;
            }
            Some(l) if l.end < i.start => {
                let gap = Stretch {
                    end: i.start,
                    region: NO_REGION,
                    category: GAP,
                };
                list.push(gap);
            }
            Some(_) => {}
        }
        list.push(Stretch {
            end: i.end,
            region,
            category,
        });
    }

    /// The attributed parts of `thread`'s time in `[start, end)`: (ns, innermost region,
    /// category), in time order.
    pub fn overlapping(
        &self,
        thread: ThreadId,
        start: u64,
        end: u64,
    ) -> impl Iterator<Item = (u64, Option<Sym>, Category)> + '_ {
        let (first, all) = self
            .threads
            .get(thread as usize)
            .map_or((0, &[][..]), |(f, l)| (*f, &l[..]));
        let from = all.partition_point(|s| s.end <= start);
        (from..all.len())
            .map(move |k| {
                let s_start = if k == 0 { first } else { all[k - 1].end };
                (s_start, all[k])
            })
            .take_while(move |(s_start, _)| *s_start < end)
            .filter(|(_, s)| s.category != GAP)
            .map(move |(s_start, s)| {
                let d = s.end.min(end) - s_start.max(start).min(s.end.min(end));
                let region = (s.region != NO_REGION).then_some(Sym(s.region));
                (d, region, CATEGORIES[usize::from(s.category)])
            })
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
            stretches: Stretches::new(header.p),
        }
    }
}

impl Sink for PathSink {
    fn interval(&mut self, i: &Interval, _symbols: &Symbols) {
        self.stretches.push(i);
    }

    fn event(&mut self, e: &Event, symbols: &Symbols) {
        self.builder.event(e, symbols);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start: u64, end: u64, category: Category, region: Option<Sym>) -> Interval {
        Interval {
            thread: 1,
            start,
            end,
            category,
            region,
            phase: None,
        }
    }

    #[test]
    fn stretches_merge_keep_gaps_out_and_clip_to_the_query() {
        let mut s = Stretches::new(2);
        let r = Some(Sym(3));
        s.push(&interval(10, 20, Category::Pc, None));
        s.push(&interval(20, 30, Category::Pc, None)); // merged with the first
        s.push(&interval(30, 40, Category::Li, r));
        s.push(&interval(50, 60, Category::Sl, r)); // 40..50 is a gap
        assert_eq!(s.threads[1].1.len(), 4);
        let parts: Vec<_> = s.overlapping(1, 15, 55).collect();
        assert_eq!(
            parts,
            [
                (15, None, Category::Pc),
                (10, r, Category::Li),
                (5, r, Category::Sl)
            ]
        );
        assert_eq!(s.overlapping(1, 0, 10).count(), 0);
        assert_eq!(s.overlapping(0, 0, 100).count(), 0);
        assert_eq!(s.overlapping(7, 0, 100).count(), 0);
    }
}
