//! [`RecordSink`]: while the attribution sweeps the log, writes each thread's attributed
//! stretches, its `cpu` samples and the time they moved to rc.cpu to a [`Spill`], in the order
//! they happen; [`Makeup::of_records`] reads them back once the critical path is known. Memory
//! stays bounded whatever the log's length (docs/critical-path.md#cost): the same make-up as
//! [`Makeup::of`] over [`super::Stretches`], which hold every stretch.
//!
//! A thread's records never touch another thread's, so they are written to a few streams (a
//! thread's all to one) that the make-up reads back at once, each on a thread of its own.

use std::collections::{HashMap, VecDeque};
use std::io;

use super::critical::{CriticalPath, Segment};
use super::makeup::{Makeup, shown};
use super::spill::Spill;
use crate::event::{Header, Sym, ThreadId};
use crate::profile::{CATEGORIES, Category};

const N: usize = CATEGORIES.len();
const NO_REGION: u32 = u32::MAX;

/// Record tags: a stretch's tag is its category's index.
const SAMPLE: u8 = 6;
const SAMPLE_DELAY: u8 = 7;
const MOVE: u8 = 8;

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

/// Writes and reads [`Record`]s compactly: a byte with the tag in its low 4 bits and the
/// thread in its high 4 (15: the thread follows as a number), then LEB128 numbers. A record's
/// first time is the difference (zigzag) from where its thread's previous record ended, which
/// is usually none at all (a thread's stretches tile its time), and its end is a duration:
/// about 5 bytes a stretch. Decoded straight from memory ([`Codec::read`]).
#[derive(Debug, Default)]
struct Codec {
    /// Where each thread's latest record ended.
    previous: Vec<u64>,
}

/// The most bytes a record takes: a tag byte and six numbers of at most 10 bytes.
const MAX_RECORD: usize = 61;

/// The thread in a record's first byte that says the thread follows as a number.
const THREAD_FOLLOWS: u32 = 15;

impl Codec {
    /// Where `thread`'s previous record ended (0 before its first).
    fn previous(&mut self, thread: ThreadId) -> &mut u64 {
        let k = thread as usize;
        if k >= self.previous.len() {
            self.previous.resize(k + 1, 0);
        }
        &mut self.previous[k]
    }

    fn write(&mut self, record: &Record, to: &mut Spill) {
        // Encoded on the stack and appended at once ([`Spill::push_prefix`]): a `Vec::push`
        // a byte (its capacity checked each time) cost more than the encoding.
        let mut b = Encoded {
            bytes: [0; MAX_RECORD],
            len: 0,
        };
        let (tag, thread) = match *record {
            Record::Stretch {
                thread, category, ..
            } => (category, thread),
            Record::Sample { thread, delay, .. } => {
                (if delay { SAMPLE_DELAY } else { SAMPLE }, thread)
            }
            Record::Move { thread, from, .. } => (MOVE + from, thread),
        };
        b.byte(tag | (thread.min(THREAD_FOLLOWS) as u8) << 4);
        if thread >= THREAD_FOLLOWS {
            b.number(u64::from(thread));
        }
        let previous = self.previous(thread);
        match *record {
            Record::Stretch {
                start, end, region, ..
            } => {
                b.number(zigzag(start, *previous));
                b.number(end.wrapping_sub(start));
                b.number(u64::from(region.wrapping_add(1)));
                *previous = end;
            }
            Record::Sample { t, .. } => {
                b.number(zigzag(t, *previous));
                *previous = t;
            }
            Record::Move {
                start, end, ns, of, ..
            } => {
                b.number(zigzag(start, *previous));
                b.number(end.wrapping_sub(start));
                b.number(ns);
                b.number(of);
                *previous = end;
            }
        }
        to.push_prefix(&b.bytes, b.len);
    }

    /// The record at the start of `from` and its length in bytes; `None` when `from` is
    /// empty; an error when it ends inside a record.
    fn read(&mut self, from: &[u8]) -> io::Result<Option<(Record, usize)>> {
        let Some(&first) = from.first() else {
            return Ok(None);
        };
        let mut at = 1;
        let mut next = || number(from, &mut at);
        let thread = match u32::from(first >> 4) {
            THREAD_FOLLOWS => u32::try_from(next()?).map_err(io::Error::other)?,
            t => t,
        };
        let tag = first & 0x0f;
        let z = next()?;
        let previous = self.previous(thread);
        let begin = unzigzag(z, *previous);
        let record = match tag {
            category @ 0..SAMPLE => {
                let end = begin.wrapping_add(next()?);
                let region = (next()? as u32).wrapping_sub(1);
                *previous = end;
                Record::Stretch {
                    thread,
                    start: begin,
                    end,
                    region,
                    category,
                }
            }
            SAMPLE | SAMPLE_DELAY => {
                *previous = begin;
                Record::Sample {
                    thread,
                    t: begin,
                    delay: tag == SAMPLE_DELAY,
                }
            }
            t => {
                let end = begin.wrapping_add(next()?);
                let ns = next()?;
                let of = next()?;
                *previous = end;
                Record::Move {
                    thread,
                    start: begin,
                    end,
                    from: t - MOVE,
                    ns,
                    of,
                }
            }
        };
        Ok(Some((record, at)))
    }
}

/// A record being encoded: at most [`MAX_RECORD`] bytes.
struct Encoded {
    bytes: [u8; MAX_RECORD],
    len: usize,
}

impl Encoded {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.bytes[self.len] = b;
        self.len += 1;
    }

    /// LEB128: 7 bits a byte, low first, the top bit set on all but the last.
    #[inline]
    fn number(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.byte(n as u8 | 0x80);
            n >>= 7;
        }
        self.byte(n as u8);
    }
}

/// The LEB128 number at `from[*at..]`; `at` moves past it.
#[inline(always)]
fn number(from: &[u8], at: &mut usize) -> io::Result<u64> {
    // Most numbers of a record take one byte (a start where the thread's previous record
    // ended, a region): those without a call.
    match from.get(*at) {
        Some(&b) if b < 0x80 => {
            *at += 1;
            Ok(u64::from(b))
        }
        _ => longer_number(from, at),
    }
}

/// [`number`] of more than one byte (or cut short).
#[inline(never)]
fn longer_number(from: &[u8], at: &mut usize) -> io::Result<u64> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&b) = from.get(*at) else {
            return Err(io::Error::other("a record cut short"));
        };
        *at += 1;
        n |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(n);
        }
    }
    Err(io::Error::other("a number longer than 64 bits"))
}

/// `t - previous` as an unsigned number, small either way.
fn zigzag(t: u64, previous: u64) -> u64 {
    let d = t.wrapping_sub(previous) as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(z: u64, previous: u64) -> u64 {
    let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
    previous.wrapping_add(d as u64)
}

/// Spills the records the make-up needs from what the attribution's sweep hands its sink
/// ([`crate::profile::Sink`]): its intervals, its moves to rc.cpu and the `cpu` samples it
/// applied, in the order it hands them.
#[derive(Debug)]
pub struct RecordSink {
    /// The streams: thread `i`'s records go to stream `i % streams.len()`.
    streams: Vec<Spill>,
    codec: Codec,
    threads: Vec<ThreadRecords>,
    /// Moved to rc.cpu by the sample being applied: (thread, category, ns).
    pending: Vec<(ThreadId, Category, u64)>,
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
    /// For a run of `header.p` threads, its records in `streams` streams (at least 1; rounded
    /// down to a power of two), which share one spill's memory; the rest goes to their files.
    pub fn new(header: &Header, streams: usize) -> Self {
        let streams = 1 << streams.max(1).ilog2();
        RecordSink {
            streams: (0..streams)
                .map(|_| Spill::with_memory(super::spill::MEMORY / streams))
                .collect(),
            codec: Codec::default(),
            threads: vec![ThreadRecords::default(); header.p as usize],
            pending: Vec::new(),
        }
    }

    /// The records.
    pub fn finish(mut self) -> Records {
        for i in 0..self.threads.len() {
            self.close(i);
        }
        Records(self.streams)
    }

    /// Writes thread `i`'s open stretch.
    fn close(&mut self, i: usize) {
        if let Some((start, end, region, category)) = self.threads[i].open.take() {
            let stretch = Record::Stretch {
                thread: i as ThreadId,
                start,
                end,
                region,
                category,
            };
            let n = self.streams.len();
            self.codec.write(&stretch, &mut self.streams[i % n]);
        }
    }

    /// A `cpu` sample of thread `i` (`thread_cpu_ns`, `run_delay_ns`) that the sweep applied,
    /// at `t`, the latest event's time so far (a time going back is taken as that, as the
    /// sweep does): as [`super::PathSink`] takes it (rules 16 and 17 of docs/event-log.md).
    pub fn sample(&mut self, i: usize, t: u64, cpu: u64, delay: Option<u64>) {
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
            let n = self.streams.len();
            self.codec.write(
                &Record::Move {
                    thread,
                    start,
                    end: t,
                    from: k as u8,
                    ns,
                    of: now[k].saturating_sub(then[k]),
                },
                &mut self.streams[thread as usize % n],
            );
        }
        let s = &mut self.threads[i];
        s.cpu = Some((t, cpu, s.time));
        if let Some(d) = delay {
            s.delay = Some((t, d, s.time));
        }
        let sample = Record::Sample {
            thread: i as ThreadId,
            t,
            delay: delay.is_some(),
        };
        let n = self.streams.len();
        self.codec.write(&sample, &mut self.streams[i % n]);
    }

    /// An interval the sweep attributed (a [`crate::profile::Interval`]'s thread, start, end,
    /// category and region).
    pub fn interval(
        &mut self,
        thread: ThreadId,
        from: u64,
        to: u64,
        category: Category,
        region: Option<Sym>,
    ) {
        let k = thread as usize;
        let Some(s) = self.threads.get_mut(k) else {
            return;
        };
        // A thread's stretches tile its time: one starts where the previous ended at the
        // earliest (as `Stretches` has them).
        let start = s.last_end.map_or(from, |l| l.max(from));
        s.last_end = Some(to);
        if to <= start {
            return;
        }
        let category = category.index() as u8;
        let region = region.map_or(NO_REGION, |r| r.0);
        s.time[usize::from(category)] += to - start;
        match &mut s.open {
            Some((_, end, r, c)) if *end == start && *r == region && *c == category => {
                *end = to;
            }
            _ => {
                self.close(k);
                self.threads[k].open = Some((start, to, region, category));
            }
        }
    }

    /// At the `cpu` sample applied next, `ns` of `thread`'s time in `from` moved to rc.cpu.
    pub fn rc_cpu(&mut self, thread: ThreadId, from: Category, ns: u64) {
        self.pending.push((thread, from, ns));
    }
}

/// The records a [`RecordSink`] wrote, by stream.
#[derive(Debug)]
pub struct Records(Vec<Spill>);

/// A segment of the path and what the records put in it.
#[derive(Debug, Clone, Copy)]
struct Part {
    seg: Segment,
    /// Its time in each category as the stretches show it, so far.
    time: [u64; N],
    /// The shares of rc.cpu moves it takes, per category it shows them in.
    shares: [u64; N],
}

/// One thread's segments while the records are read: `segs` indexes the path's segments of
/// the thread, in time order; `parts` holds those from `base` on that records may still
/// reach (earlier ones are added to the totals and dropped, so memory follows the parts in
/// play, not the path). `next`: the first a stretch may still reach; `open`: the first a move
/// may still reach (a move of work that starts after a part ends ends the moves it takes);
/// `now`: the thread's latest record's time; its last samples: time, and the part strictly
/// around it with that part's time then.
#[derive(Debug, Default)]
struct Reading {
    segs: Vec<u32>,
    base: usize,
    parts: VecDeque<Part>,
    next: usize,
    open: usize,
    now: u64,
    cpu: Option<Snapshot>,
    delay: Option<Snapshot>,
    /// For its samples, its moves from pc and its moves from li, ip or sl.
    cursors: [Cursor; 3],
}

type Snapshot = (u64, Option<(usize, [u64; N])>);

/// Where [`Reading::after_from`] last answered, and for what time.
#[derive(Debug, Default, Clone, Copy)]
struct Cursor {
    at: usize,
    t: u64,
}

impl Reading {
    /// Segment `j` of the thread.
    fn seg<'a>(&self, path: &'a [Segment], j: usize) -> &'a Segment {
        &path[self.segs[j] as usize]
    }

    /// The first of the thread's segments that ends after `t`.
    fn after(&self, path: &[Segment], t: u64) -> usize {
        self.segs.partition_point(|&k| path[k as usize].end <= t)
    }

    /// [`Reading::after`] `t`, walking on from where `cursor` last answered: the times asked
    /// of one cursor (a thread's samples, the starts of its moves of one kind) seldom go back,
    /// and a binary search for each record cost more than the rest of the make-up.
    fn after_from(&self, path: &[Segment], cursor: &mut Cursor, t: u64) -> usize {
        if t < cursor.t {
            cursor.at = self.after(path, t);
        } else {
            while cursor.at < self.segs.len() && self.seg(path, cursor.at).end <= t {
                cursor.at += 1;
            }
        }
        cursor.t = t;
        cursor.at
    }

    /// Part `j` (at or after `base`).
    fn part(&mut self, path: &[Segment], j: usize) -> &mut Part {
        while self.base + self.parts.len() <= j {
            let seg = *self.seg(path, self.base + self.parts.len());
            self.parts.push_back(Part {
                seg,
                time: [0; N],
                shares: [0; N],
            });
        }
        &mut self.parts[j - self.base]
    }

    /// Hands `done` the parts no later record can reach: those before `next`, and before
    /// `open` or ending by the earliest start a later move can have (its previous samples, or
    /// now).
    fn retire(&mut self, path: &[Segment], done: &mut impl FnMut(&Part)) {
        let since = |s: Option<Snapshot>| s.map_or(self.now, |(t, _)| t);
        let earliest = since(self.cpu).min(since(self.delay));
        while self.base < self.next
            && (self.base < self.open || self.seg(path, self.base).end <= earliest)
        {
            let part = self.parts.pop_front();
            let part = part.unwrap_or(Part {
                seg: *self.seg(path, self.base),
                time: [0; N],
                shares: [0; N],
            });
            done(&part);
            self.base += 1;
        }
    }
}

/// The make-up's totals, as parts are done.
#[derive(Debug, Default)]
struct Totals {
    by_thread: HashMap<ThreadId, u64>,
    categories: [u64; N],
    unattributed: u64,
}

impl Totals {
    /// Adds a part: its time in the categories it shows them in, less its shares of rc.cpu
    /// moves (each at most what is left of its category), which go to rc.
    fn add(&mut self, part: &Part) {
        let seg = &part.seg;
        *self.by_thread.entry(seg.thread).or_default() += seg.end - seg.start;
        let mut here = [0u64; N];
        for (c, &ns) in CATEGORIES.iter().zip(&part.time) {
            here[shown(seg, *c).index()] += ns;
        }
        for (c, &share) in part.shares.iter().enumerate() {
            let share = share.min(here[c]);
            here[c] -= share;
            here[Category::Rc.index()] += share;
        }
        for (total, ns) in self.categories.iter_mut().zip(here) {
            *total += ns;
        }
        self.unattributed += (seg.end - seg.start) - part.time.iter().sum::<u64>();
    }
}

impl Makeup {
    /// [`Makeup::of`] the stretches in `records`, read once in order: each stream on a thread
    /// of its own when there are several.
    pub fn of_records(path: &CriticalPath, records: &mut Records) -> io::Result<Makeup> {
        let segments = &path.segments[..];
        let streams = records.0.len().max(1);
        // Each stream's threads on the path, indexed by thread.
        let mut readings: Vec<Vec<Option<Reading>>> = (0..streams).map(|_| Vec::new()).collect();
        for (k, seg) in segments.iter().enumerate() {
            let i = seg.thread as usize;
            let threads = &mut readings[i % streams];
            if i >= threads.len() {
                threads.resize_with(i + 1, || None);
            }
            threads[i]
                .get_or_insert_with(Reading::default)
                .segs
                .push(k as u32);
        }
        let work = records.0.iter_mut().zip(readings);
        let read: Vec<io::Result<Read>> = if streams == 1 {
            work.map(|(spill, threads)| read_stream(segments, spill, threads))
                .collect()
        } else {
            std::thread::scope(|scope| {
                let running: Vec<_> = work
                    .map(|(spill, threads)| {
                        scope.spawn(move || read_stream(segments, spill, threads))
                    })
                    .collect();
                running
                    .into_iter()
                    .map(|r| r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        let mut threads: HashMap<ThreadId, u64> = HashMap::new();
        let mut categories = [0u64; N];
        let mut unattributed = 0;
        // Indexed by region symbol + 1 (0: outside every region).
        let mut regions: Vec<u64> = Vec::new();
        for stream in read {
            let stream = stream?;
            for (t, ns) in stream.totals.by_thread {
                *threads.entry(t).or_default() += ns;
            }
            for (total, ns) in categories.iter_mut().zip(stream.totals.categories) {
                *total += ns;
            }
            unattributed += stream.totals.unattributed;
            if stream.regions.len() > regions.len() {
                regions.resize(stream.regions.len(), 0);
            }
            for (total, ns) in regions.iter_mut().zip(stream.regions) {
                *total += ns;
            }
        }
        let mut by_thread: Vec<_> = threads.into_iter().collect();
        by_thread.sort_unstable();
        // Regions the path crossed, `None` first, then by symbol (as they sort).
        let by_region: Vec<_> = regions
            .iter()
            .enumerate()
            .filter(|&(_, &ns)| ns > 0)
            .map(|(k, &ns)| (k.checked_sub(1).map(|r| Sym(r as u32)), ns))
            .collect();
        Ok(Makeup {
            by_thread,
            by_region,
            by_category: CATEGORIES.iter().copied().zip(categories).collect(),
            unattributed,
        })
    }
}

/// What one stream's records put on the path: totals, and time per region (indexed by region
/// symbol + 1, 0 outside every region).
struct Read {
    totals: Totals,
    regions: Vec<u64>,
}

/// Decodes one stream's records, in order, and adds each to the parts of the path it reaches
/// (`threads`: the stream's threads on the path); an error reading them back is an error.
fn read_stream(
    segments: &[Segment],
    spill: &mut Spill,
    mut threads: Vec<Option<Reading>>,
) -> io::Result<Read> {
    let mut totals = Totals::default();
    let mut regions = Vec::new();
    let mut done = |part: &Part| totals.add(part);
    let mut forward = spill.windows()?;
    let mut codec = Codec::default();
    loop {
        let window = forward.window(MAX_RECORD)?;
        if window.is_empty() {
            break;
        }
        // Fewer bytes than the longest record: the last records.
        let last = window.len() < MAX_RECORD;
        let mut used = 0;
        while used < window.len() && (last || window.len() - used >= MAX_RECORD) {
            let Some((record, n)) = codec.read(&window[used..])? else {
                break;
            };
            used += n;
            apply(record, segments, &mut threads, &mut regions, &mut done);
        }
        forward.consume(used);
    }
    for r in threads.iter_mut().flatten() {
        r.next = r.segs.len();
        r.open = r.segs.len();
        r.retire(segments, &mut done);
    }
    Ok(Read { totals, regions })
}

/// Adds one record to the parts of the path it reaches.
fn apply(
    record: Record,
    segments: &[Segment],
    threads: &mut [Option<Reading>],
    regions: &mut Vec<u64>,
    done: &mut impl FnMut(&Part),
) {
    match record {
        Record::Stretch {
            thread,
            start,
            end,
            region,
            category,
        } => {
            let Some(r) = threads.get_mut(thread as usize).and_then(Option::as_mut) else {
                return;
            };
            r.now = r.now.max(start);
            while r.next < r.segs.len() && r.seg(segments, r.next).end <= start {
                r.next += 1;
            }
            let region = region.wrapping_add(1) as usize;
            if region >= regions.len() {
                regions.resize(region + 1, 0);
            }
            let mut j = r.next;
            while j < r.segs.len() && r.seg(segments, j).start < end {
                let part = r.part(segments, j);
                let d = end.min(part.seg.end) - start.max(part.seg.start);
                part.time[usize::from(category)] += d;
                regions[region] += d;
                j += 1;
            }
            r.retire(segments, done);
        }
        Record::Sample { thread, t, delay } => {
            let Some(r) = threads.get_mut(thread as usize).and_then(Option::as_mut) else {
                return;
            };
            r.now = r.now.max(t);
            let mut cursor = r.cursors[0];
            let at = r.after_from(segments, &mut cursor, t);
            r.cursors[0] = cursor;
            let around = (at < r.segs.len() && r.seg(segments, at).start < t)
                .then(|| (at, r.part(segments, at).time));
            r.cpu = Some((t, around));
            if delay {
                r.delay = Some((t, around));
            }
            r.retire(segments, done);
        }
        Record::Move {
            thread,
            start,
            end,
            from,
            ns,
            of,
        } => {
            let Some(r) = threads.get_mut(thread as usize).and_then(Option::as_mut) else {
                return;
            };
            let from = CATEGORIES[usize::from(from).min(N - 1)];
            let since = if from == Category::Pc { r.cpu } else { r.delay };
            let k = if from == Category::Pc { 1 } else { 2 };
            let mut cursor = r.cursors[k];
            let mut j = r.open.max(r.after_from(segments, &mut cursor, start));
            r.cursors[k] = cursor;
            while start < end && j < r.segs.len() && r.seg(segments, j).start < end {
                let seg = *r.seg(segments, j);
                // The part's time in `from` over [max(start, its start), now): its time
                // so far less what it had at the sample at `start`.
                let before = match since {
                    _ if seg.start >= start => Some(0),
                    Some((t, Some((at, time)))) if t == start && at == j => {
                        Some(time[from.index()])
                    }
                    _ => None,
                };
                j += 1;
                let Some(before) = before else {
                    continue;
                };
                let part = r.part(segments, j - 1);
                let on_path = part.time[from.index()].saturating_sub(before);
                if on_path == 0 {
                    continue;
                }
                let share = (u128::from(ns) * u128::from(on_path) / u128::from(of.max(1))) as u64;
                let to = shown(&seg, from).index();
                part.shares[to] = part.shares[to].saturating_add(share);
            }
            if from == Category::Pc {
                while r.open < r.segs.len() && r.seg(segments, r.open).end <= start {
                    r.open += 1;
                }
            }
            r.retire(segments, done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_as_written_at_any_time_and_value() {
        let records = [
            Record::Stretch {
                thread: 3,
                start: u64::MAX - 10,
                end: u64::MAX,
                region: NO_REGION,
                category: 5,
            },
            Record::Sample {
                thread: 0,
                t: 0,
                delay: true,
            },
            Record::Stretch {
                thread: (1 << 20) - 1,
                start: 3_600_000_000_000,
                end: 3_600_000_000_001,
                region: 0,
                category: 0,
            },
            Record::Move {
                thread: 7,
                start: 12,
                end: 1 << 40,
                from: 2,
                ns: u64::MAX,
                of: 0,
            },
            Record::Sample {
                thread: 1,
                t: 11,
                delay: false,
            },
        ];
        let (bytes, back) = round_trip(&records);
        assert_eq!(back, records);
        // A record cut short is an error, not a record.
        let mut codec = Codec::default();
        assert!(codec.read(&bytes[..2]).is_err());
    }

    /// The bytes `records` are written as, and the records read back from them.
    fn round_trip(records: &[Record]) -> (Vec<u8>, Vec<Record>) {
        let mut spill = Spill::default();
        let mut codec = Codec::default();
        for r in records {
            codec.write(r, &mut spill);
        }
        let bytes = spill.read_all();
        let mut codec = Codec::default();
        let mut back = Vec::new();
        let mut at = 0;
        while let Some((r, n)) = codec.read(&bytes[at..]).unwrap() {
            back.push(r);
            at += n;
        }
        (bytes, back)
    }

    /// A record of any kind, thread and times (threads past 15 take the long form).
    fn any_record() -> impl proptest::strategy::Strategy<Value = Record> {
        use proptest::prelude::*;
        let thread = prop_oneof![0u32..20, Just((1 << 20) - 1)];
        let time = prop_oneof![0u64..1_000_000, any::<u64>()];
        (
            0u8..14,
            thread,
            time.clone(),
            time,
            any::<u32>(),
            any::<u64>(),
        )
            .prop_map(|(tag, thread, a, b, region, ns)| match tag {
                0..SAMPLE => Record::Stretch {
                    thread,
                    start: a,
                    end: b,
                    region,
                    category: tag,
                },
                SAMPLE | SAMPLE_DELAY => Record::Sample {
                    thread,
                    t: a,
                    delay: tag == SAMPLE_DELAY,
                },
                _ => Record::Move {
                    thread,
                    start: a,
                    end: b,
                    from: tag - MOVE,
                    ns,
                    of: ns.rotate_left(7),
                },
            })
    }

    proptest::proptest! {
        /// Records of interleaved threads read back as written, whatever their times (each
        /// is written against where its own thread's previous record ended); with the last
        /// byte cut off they end in an error. (The spill's file is tested in spill.rs.)
        #[test]
        fn interleaved_records_read_back_as_written(
            records in proptest::collection::vec(any_record(), 1..300),
        ) {
            let (bytes, back) = round_trip(&records);
            proptest::prop_assert_eq!(&back, &records);
            let mut codec = Codec::default();
            let cut = &bytes[..bytes.len() - 1];
            let mut at = 0;
            let mut failed = false;
            loop {
                match codec.read(&cut[at..]) {
                    Ok(Some((_, n))) => at += n,
                    Ok(None) => break,
                    Err(_) => {
                        failed = true;
                        break;
                    }
                }
            }
            proptest::prop_assert!(failed);
        }
    }

    #[test]
    fn a_typical_stretch_takes_5_bytes() {
        let mut spill = Spill::default();
        let mut codec = Codec::default();
        let stretch = |start, end| Record::Stretch {
            thread: 2,
            start,
            end,
            region: 3,
            category: 5,
        };
        codec.write(&stretch(3_600_000_000_000, 3_600_000_001_000), &mut spill);
        let first = spill.len();
        codec.write(&stretch(3_600_000_001_000, 3_600_000_006_000), &mut spill);
        // Tag and thread, where the thread's previous stretch ended (0: 1 byte), 5000 ns (2
        // bytes), region.
        assert_eq!(spill.len() - first, 5);
    }
}
