//! [`RecordSink`]: while the attribution sweeps the log, builds the compact activity graph
//! ([`PathGraph`]) and writes each thread's attributed stretches, its `cpu` samples and the
//! time they moved to rc.cpu to a [`Spill`], in the order they happen; [`Makeup::of_records`]
//! reads them back once the critical path is known. Memory stays bounded whatever the log's
//! length (docs/critical-path.md#cost): the same make-up as [`Makeup::of`] over
//! [`super::Stretches`], which hold every stretch.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader};

use super::build::Builder;
use super::critical::{CriticalPath, Segment};
use super::makeup::{Makeup, shown};
use super::path_graph::PathGraph;
use super::spill::Spill;
use crate::event::{Event, EventKind, Header, Sym, Symbols, ThreadId};
use crate::profile::{CATEGORIES, Category, Interval, Sink};

const N: usize = CATEGORIES.len();
const NO_REGION: u32 = u32::MAX;

/// Record tags.
const STRETCH: u8 = 0;
const SAMPLE: u8 = 1;
const MOVE: u8 = 2;

/// One record of the spill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Record {
    /// The thread's time `[start, end)` in one category and innermost region
    /// ([`NO_REGION`] outside every region); a thread's stretches come in time order.
    Stretch {
        thread: ThreadId,
        start: u64,
        end: u64,
        region: u32,
        category: u8,
    },
    /// A `cpu` sample of the thread the attribution took, at `t`; `delay`: with a run-queue
    /// delay it took. Every stretch of the thread before `t` came before it.
    Sample {
        thread: ThreadId,
        t: u64,
        delay: bool,
    },
    /// At its sample at `end`, `ns` of the thread's time in `from` over `[start, end)`, of
    /// `of` in all, moved to rc.cpu (`start`: its previous sample, with a run-queue delay for
    /// time not from pc).
    Move {
        thread: ThreadId,
        start: u64,
        end: u64,
        from: u8,
        ns: u64,
        of: u64,
    },
}

impl Record {
    fn write(&self, to: &mut Spill) {
        let mut b = [0u8; 38];
        let n = match *self {
            Record::Stretch {
                thread,
                start,
                end,
                region,
                category,
            } => {
                b[0] = STRETCH;
                b[1..5].copy_from_slice(&thread.to_le_bytes());
                b[5..13].copy_from_slice(&start.to_le_bytes());
                b[13..21].copy_from_slice(&end.to_le_bytes());
                b[21..25].copy_from_slice(&region.to_le_bytes());
                b[25] = category;
                26
            }
            Record::Sample { thread, t, delay } => {
                b[0] = SAMPLE;
                b[1..5].copy_from_slice(&thread.to_le_bytes());
                b[5..13].copy_from_slice(&t.to_le_bytes());
                b[13] = u8::from(delay);
                14
            }
            Record::Move {
                thread,
                start,
                end,
                from,
                ns,
                of,
            } => {
                b[0] = MOVE;
                b[1..5].copy_from_slice(&thread.to_le_bytes());
                b[5..13].copy_from_slice(&start.to_le_bytes());
                b[13..21].copy_from_slice(&end.to_le_bytes());
                b[21] = from;
                b[22..30].copy_from_slice(&ns.to_le_bytes());
                b[30..38].copy_from_slice(&of.to_le_bytes());
                38
            }
        };
        to.push(&b[..n]);
    }

    /// The next record, `None` at the end.
    fn read(from: &mut impl BufRead) -> io::Result<Option<Record>> {
        let mut tag = [0u8; 1];
        if from.fill_buf()?.is_empty() {
            return Ok(None);
        }
        from.read_exact(&mut tag)?;
        let mut b = [0u8; 37];
        let n = match tag[0] {
            STRETCH => 25,
            SAMPLE => 13,
            MOVE => 37,
            t => return Err(io::Error::other(format!("record tag {t}"))),
        };
        from.read_exact(&mut b[..n])?;
        let u32_at = |k: usize| u32::from_le_bytes(b[k..k + 4].try_into().unwrap_or_default());
        let u64_at = |k: usize| u64::from_le_bytes(b[k..k + 8].try_into().unwrap_or_default());
        Ok(Some(match tag[0] {
            STRETCH => Record::Stretch {
                thread: u32_at(0),
                start: u64_at(4),
                end: u64_at(12),
                region: u32_at(20),
                category: b[24],
            },
            SAMPLE => Record::Sample {
                thread: u32_at(0),
                t: u64_at(4),
                delay: b[12] != 0,
            },
            _ => Record::Move {
                thread: u32_at(0),
                start: u64_at(4),
                end: u64_at(12),
                from: b[20],
                ns: u64_at(21),
                of: u64_at(29),
            },
        }))
    }
}

/// A [`Sink`] for [`crate::profile::Sweep`] that builds the compact graph and spills the
/// records the make-up needs.
#[derive(Debug)]
pub struct RecordSink {
    builder: Builder,
    records: Spill,
    threads: Vec<ThreadRecords>,
    /// Moved to rc.cpu by the sample being applied: (thread, category, ns).
    pending: Vec<(ThreadId, Category, u64)>,
    /// The latest event's time (a time going back is taken as this, as the sweep does).
    last_t: u64,
}

#[derive(Debug, Clone, Default)]
struct ThreadRecords {
    /// The stretch not written yet (the next may continue it): start, end, region, category.
    open: Option<(u64, u64, u32, u8)>,
    /// Where its last stretch ended (the next starts there at the earliest).
    last_end: Option<u64>,
    /// Its time so far in each category.
    time: [u64; N],
    /// The last sample the attribution took: time, CPU clock, [`ThreadRecords::time`] then.
    cpu: Option<(u64, u64, [u64; N])>,
    /// The last with a run-queue delay it took: time, delay, time per category then.
    delay: Option<(u64, u64, [u64; N])>,
}

impl RecordSink {
    /// For a run of `header.p` threads.
    pub fn new(header: &Header) -> Self {
        RecordSink {
            builder: Builder::compact(header),
            records: Spill::default(),
            threads: vec![ThreadRecords::default(); header.p as usize],
            pending: Vec::new(),
            last_t: 0,
        }
    }

    /// The compact graph and the records.
    pub fn finish(mut self) -> (PathGraph, Records) {
        for i in 0..self.threads.len() {
            self.close(i);
        }
        (self.builder.finish_path(), Records(self.records))
    }

    /// Writes thread `i`'s open stretch.
    fn close(&mut self, i: usize) {
        if let Some((start, end, region, category)) = self.threads[i].open.take() {
            Record::Stretch {
                thread: i as ThreadId,
                start,
                end,
                region,
                category,
            }
            .write(&mut self.records);
        }
    }

    /// A `cpu` sample of thread `i` at `t`, after the sweep applied it: as
    /// [`super::PathSink`] takes it (rules 16 and 17 of docs/event-log.md).
    fn sample(&mut self, i: usize, t: u64, cpu: u64, delay: Option<u64>) {
        let Some(s) = self.threads.get(i) else {
            self.pending.clear();
            return;
        };
        if s.cpu.is_some_and(|(_, last, _)| cpu < last) {
            self.pending.clear();
            return;
        }
        let delay = delay.filter(|&d| s.delay.is_none_or(|(_, last, _)| d >= last));
        let cpu_since = s.cpu.map(|(t, _, time)| (t, time));
        let delay_since = s.delay.map(|(t, _, time)| (t, time));
        self.close(i);
        for (thread, from, ns) in std::mem::take(&mut self.pending) {
            let Some(now) = self.threads.get(thread as usize).map(|s| s.time) else {
                continue;
            };
            if ns == 0 {
                continue;
            }
            let since = if from == Category::Pc {
                cpu_since
            } else {
                delay_since
            };
            let (start, then) = since.unwrap_or((t, now));
            let k = from.index();
            Record::Move {
                thread,
                start,
                end: t,
                from: k as u8,
                ns,
                of: now[k].saturating_sub(then[k]),
            }
            .write(&mut self.records);
        }
        let s = &mut self.threads[i];
        s.cpu = Some((t, cpu, s.time));
        if let Some(d) = delay {
            s.delay = Some((t, d, s.time));
        }
        Record::Sample {
            thread: i as ThreadId,
            t,
            delay: delay.is_some(),
        }
        .write(&mut self.records);
    }
}

impl Sink for RecordSink {
    fn interval(&mut self, i: &Interval, _symbols: &Symbols) {
        let k = i.thread as usize;
        let Some(s) = self.threads.get_mut(k) else {
            return;
        };
        // A thread's stretches tile its time: one starts where the previous ended at the
        // earliest (as `Stretches` has them).
        let start = s.last_end.map_or(i.start, |l| l.max(i.start));
        s.last_end = Some(i.end);
        if i.end <= start {
            return;
        }
        let category = i.category.index() as u8;
        let region = i.region.map_or(NO_REGION, |r| r.0);
        s.time[usize::from(category)] += i.end - start;
        match &mut s.open {
            Some((_, end, r, c)) if *end == start && *r == region && *c == category => {
                *end = i.end;
            }
            _ => {
                self.close(k);
                self.threads[k].open = Some((start, i.end, region, category));
            }
        }
    }

    fn event(&mut self, e: &Event, symbols: &Symbols) {
        self.builder.event(e, symbols);
        if e.thread as usize >= self.threads.len() {
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

/// The records a [`RecordSink`] wrote.
#[derive(Debug)]
pub struct Records(Spill);

/// A segment of the path and what the records put in it.
#[derive(Debug, Clone, Copy)]
struct Part {
    seg: Segment,
    /// Its time in each category as the stretches show it, so far.
    time: [u64; N],
    /// The shares of rc.cpu moves it takes, per category it shows them in.
    shares: [u64; N],
}

/// Per thread, while reading the records: its parts (indices, in time order), the first that
/// a stretch may still reach, the first a move may still reach, and its last samples (time,
/// and the part strictly around it with that part's time then).
#[derive(Debug, Clone, Default)]
struct Reading {
    parts: Vec<usize>,
    next: usize,
    open: usize,
    cpu: Option<Snapshot>,
    delay: Option<Snapshot>,
}

type Snapshot = (u64, Option<(usize, [u64; N])>);

impl Makeup {
    /// [`Makeup::of`] the stretches in `records`, read once in order.
    pub fn of_records(path: &CriticalPath, records: &mut Records) -> io::Result<Makeup> {
        let mut parts: Vec<Part> = path
            .segments
            .iter()
            .map(|&seg| Part {
                seg,
                time: [0; N],
                shares: [0; N],
            })
            .collect();
        let mut threads: HashMap<ThreadId, Reading> = HashMap::new();
        for (k, part) in parts.iter().enumerate() {
            threads.entry(part.seg.thread).or_default().parts.push(k);
        }
        let mut regions: HashMap<Option<Sym>, u64> = HashMap::new();
        let mut input = BufReader::with_capacity(1 << 20, records.0.forward()?);
        while let Some(record) = Record::read(&mut input)? {
            match record {
                Record::Stretch {
                    thread,
                    start,
                    end,
                    region,
                    category,
                } => {
                    let Some(r) = threads.get_mut(&thread) else {
                        continue;
                    };
                    while r.next < r.parts.len() && parts[r.parts[r.next]].seg.end <= start {
                        r.next += 1;
                    }
                    for &k in &r.parts[r.next..] {
                        let seg = parts[k].seg;
                        if seg.start >= end {
                            break;
                        }
                        let d = end.min(seg.end) - start.max(seg.start);
                        parts[k].time[usize::from(category)] += d;
                        let region = (region != NO_REGION).then_some(Sym(region));
                        *regions.entry(region).or_default() += d;
                    }
                }
                Record::Sample { thread, t, delay } => {
                    let Some(r) = threads.get_mut(&thread) else {
                        continue;
                    };
                    let at = r.parts.partition_point(|&k| parts[k].seg.end <= t);
                    let around = r
                        .parts
                        .get(at)
                        .filter(|&&k| parts[k].seg.start < t)
                        .map(|&k| (k, parts[k].time));
                    r.cpu = Some((t, around));
                    if delay {
                        r.delay = Some((t, around));
                    }
                }
                Record::Move {
                    thread,
                    start,
                    end,
                    from,
                    ns,
                    of,
                } => {
                    let Some(r) = threads.get_mut(&thread) else {
                        continue;
                    };
                    let from = CATEGORIES[usize::from(from).min(N - 1)];
                    let since = if from == Category::Pc { r.cpu } else { r.delay };
                    let first = r
                        .open
                        .max(r.parts.partition_point(|&k| parts[k].seg.end <= start));
                    for &k in r.parts.get(first..).unwrap_or_default() {
                        if start >= end || parts[k].seg.start >= end {
                            break;
                        }
                        // The part's time in `from` over [max(start, its start), now): its time
                        // so far less what it had at the sample at `start`.
                        let before = match since {
                            _ if parts[k].seg.start >= start => 0,
                            Some((t, Some((at, time)))) if t == start && at == k => {
                                time[from.index()]
                            }
                            _ => continue,
                        };
                        let on_path = parts[k].time[from.index()].saturating_sub(before);
                        if on_path == 0 {
                            continue;
                        }
                        let share =
                            (u128::from(ns) * u128::from(on_path) / u128::from(of.max(1))) as u64;
                        let to = shown(&parts[k].seg, from).index();
                        parts[k].shares[to] = parts[k].shares[to].saturating_add(share);
                    }
                    // A move of work that starts after a part ends ends the moves it takes.
                    if from == Category::Pc {
                        while r.open < r.parts.len() && parts[r.parts[r.open]].seg.end <= start {
                            r.open += 1;
                        }
                    }
                }
            }
        }
        let mut by_thread: HashMap<ThreadId, u64> = HashMap::new();
        let mut categories = [0u64; N];
        let mut unattributed = 0;
        for part in &parts {
            let seg = &part.seg;
            *by_thread.entry(seg.thread).or_default() += seg.end - seg.start;
            let mut here = [0u64; N];
            for (c, &ns) in CATEGORIES.iter().zip(&part.time) {
                here[shown(seg, *c).index()] += ns;
            }
            for (c, &share) in part.shares.iter().enumerate() {
                let share = share.min(here[c]);
                here[c] -= share;
                here[Category::Rc.index()] += share;
            }
            for (total, ns) in categories.iter_mut().zip(here) {
                *total += ns;
            }
            unattributed += (seg.end - seg.start) - part.time.iter().sum::<u64>();
        }
        let mut by_thread: Vec<_> = by_thread.into_iter().collect();
        by_thread.sort_unstable();
        let mut by_region: Vec<_> = regions.into_iter().collect();
        by_region.sort_unstable();
        Ok(Makeup {
            by_thread,
            by_region,
            by_category: CATEGORIES.iter().copied().zip(categories).collect(),
            unattributed,
        })
    }
}
