//! [`PathSink`]: builds the activity graph and keeps each thread's attributed stretches, and the
//! time the attribution moved to rc.cpu at its `cpu` samples, while the attribution sweeps the
//! log, so that the critical path's make-up comes from one pass.

use super::build::Builder;
use crate::event::{Event, EventKind, Header, Sym, Symbols, ThreadId};
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

/// Time of one category of a thread's span `[start, end)` that the attribution moved to rc.cpu
/// at the `cpu` sample that ends the span (docs/attribution.md, "Resource contention").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RcMove {
    /// The span's start: the thread's previous sample (with a run-queue delay, for time moved
    /// from li, ip or sl).
    pub start: u64,
    /// The sample's time.
    pub end: u64,
    /// The category it was taken from.
    pub from: Category,
    /// How much, ns.
    pub ns: u64,
    /// The thread's time in `from` over the span, ns (what `ns` was taken from).
    pub of: u64,
}

/// Each thread's attributed stretches in time order, and the time moved to rc.cpu.
#[derive(Debug, Clone, Default)]
pub struct Stretches {
    /// Per thread: where its first stretch starts, and its stretches.
    threads: Vec<(u64, Vec<Stretch>)>,
    /// Per thread: what its `cpu` samples moved to rc.cpu, in sample order.
    moves: Vec<Vec<RcMove>>,
}

impl Stretches {
    /// For `p` threads.
    pub fn new(p: u32) -> Self {
        Stretches {
            threads: vec![(0, Vec::new()); p as usize],
            moves: vec![Vec::new(); p as usize],
        }
    }

    /// What `thread`'s samples moved to rc.cpu, in sample order.
    pub fn moves(&self, thread: ThreadId) -> &[RcMove] {
        self.moves.get(thread as usize).map_or(&[], |m| &m[..])
    }

    /// `thread`'s time in `category` in `[start, end)`, ns.
    pub fn time_in(&self, thread: ThreadId, category: Category, start: u64, end: u64) -> u64 {
        self.overlapping(thread, start, end)
            .filter(|&(_, _, c)| c == category)
            .map(|(d, _, _)| d)
            .sum()
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
/// the stretches and the time moved to rc.cpu.
#[derive(Debug)]
pub struct PathSink {
    /// The graph so far.
    pub builder: Builder,
    /// The stretches so far.
    pub stretches: Stretches,
    /// Per thread: its last `cpu` sample the attribution took (time, CPU clock) and the time
    /// of its last one with a run-queue delay (and that delay), as the sweep keeps them.
    samples: Vec<Samples>,
    /// Moved to rc.cpu by the sample being applied: (thread, category, ns).
    pending: Vec<(ThreadId, Category, u64)>,
    /// The latest event's time (a time going back is taken as this, as the sweep does).
    last_t: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Samples {
    cpu: Option<(u64, u64)>,
    delay: Option<(u64, u64)>,
}

impl PathSink {
    /// For a run of `header.p` threads.
    pub fn new(header: &Header) -> Self {
        PathSink {
            builder: Builder::new(header),
            stretches: Stretches::new(header.p),
            samples: vec![Samples::default(); header.p as usize],
            pending: Vec::new(),
            last_t: 0,
        }
    }

    /// A `cpu` sample of thread `i` at `t` (after the sweep applied it): what it moved to
    /// rc.cpu gets its span. A sample whose CPU clock goes back is ignored, and a run-queue
    /// delay that goes back is left out, as the attribution does (rules 16 and 17 of
    /// docs/event-log.md).
    fn sample(&mut self, i: usize, t: u64, cpu: u64, delay: Option<u64>) {
        let Some(s) = self.samples.get_mut(i) else {
            self.pending.clear();
            return;
        };
        if s.cpu.is_some_and(|(_, last)| cpu < last) {
            self.pending.clear();
            return;
        }
        let delay = delay.filter(|&d| s.delay.is_none_or(|(_, last)| d >= last));
        let cpu_since = s.cpu.map_or(t, |c| c.0);
        let delay_since = s.delay.map_or(t, |d| d.0);
        s.cpu = Some((t, cpu));
        if let Some(d) = delay {
            s.delay = Some((t, d));
        }
        for (thread, from, ns) in self.pending.drain(..) {
            let start = if from == Category::Pc {
                cpu_since
            } else {
                delay_since
            };
            if ns == 0 || thread as usize >= self.stretches.moves.len() {
                continue;
            }
            // The span's stretches are all in: the sweep closed them at the sample.
            let of = self.stretches.time_in(thread, from, start, t);
            self.stretches.moves[thread as usize].push(RcMove {
                start,
                end: t,
                from,
                ns,
                of,
            });
        }
    }
}

impl Sink for PathSink {
    fn interval(&mut self, i: &Interval, _symbols: &Symbols) {
        self.stretches.push(i);
    }

    fn event(&mut self, e: &Event, symbols: &Symbols) {
        self.builder.event(e, symbols);
        if e.thread as usize >= self.samples.len() {
            return;
        }
        self.last_t = self.last_t.max(e.t);
        if let EventKind::Cpu {
            thread_cpu_ns,
            run_delay_ns,
        } = e.kind
        {
            self.sample(e.thread as usize, self.last_t, thread_cpu_ns, run_delay_ns);
        }
    }

    fn rc_cpu(&mut self, thread: ThreadId, from: Category, ns: u64) {
        self.pending.push((thread, from, ns));
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
