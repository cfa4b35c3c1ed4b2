//! From a log to each thread's steps (docs/skeletons.md#steps): an operation (a wait, a data
//! movement, a message, a collective, a region's begin or end) and the computation before it,
//! the wall time since the thread's previous operation ended. A [`Builder`] takes a thread's
//! events in time order and writes each operation's span, and each `cpu` sample, to the
//! thread's streams in a temporary file ([`super::record`]), so that what it keeps in memory is
//! bounded whatever the log's length (docs/skeletons.md#memory).

use std::collections::{HashMap, VecDeque};

use pp_recorder::event::{Event, EventKind, Symbols, ThreadId};

use super::record::{Reader, Writer};
use crate::whatif::streams::Writer as StreamWriter;

/// What a step does, besides computing: the key that clustering compares exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// A message sent to `peer`.
    Send { peer: ThreadId, tag: u32 },
    /// A message received from `peer`.
    Recv { peer: ThreadId, tag: u32 },
    /// A collective operation.
    Coll { op: String, root: Option<ThreadId> },
    /// A wait with no message in it (`lock`, `barrier`, `cond`, ...), with its object, and for
    /// a `cond`, `recv`, `send` or `other` wait the thread that ended it (`by=`), where the log
    /// names one (docs/skeletons.md#partners).
    Wait {
        kind: String,
        object: Option<String>,
        by: Option<ThreadId>,
    },
    /// The thread releases what a `cond`, `recv`, `send` or `other` wait may wait for (a
    /// `release` event: a notify, a channel's send); a `lock`'s release makes no step.
    Release {
        kind: String,
        object: Option<String>,
    },
    /// A data movement (`comm_begin` .. `comm_end`).
    Copy,
    /// A region opens.
    RegionBegin { name: String },
    /// A region closes.
    RegionEnd,
    /// The thread's part of a region that another thread recorded begins (its first `cpu`
    /// sample inside the region: a `Team` member's part).
    PartBegin { name: String },
    /// That part ends (its last `cpu` sample inside the region).
    PartEnd,
    /// The thread stops (the computation after its last operation).
    Stop,
}

/// Whether a wait of `kind` can have a partner in a skeleton (docs/skeletons.md#partners): a
/// `cond`, `recv`, `send` or `other` wait (a lock and a barrier are real in a skeleton).
pub fn partnered(kind: &str) -> bool {
    !matches!(kind, "lock" | "barrier")
}

/// One step of a thread: its computation, then its operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Wall nanoseconds since the thread's previous operation ended (or since its start).
    pub compute_ns: u64,
    /// The operation.
    pub op: Op,
    /// Bytes the operation moves (0 for none).
    pub bytes: u64,
    /// Wall nanoseconds the operation itself took (its wait or copy).
    pub op_ns: u64,
    /// CPU nanoseconds of the computation, estimated from the thread's `cpu` samples
    /// (docs/skeletons.md#steps); the wall time where the thread has none around it.
    pub cpu_ns: u64,
    /// CPU nanoseconds of the operation (a wait that spun, a copy), estimated alike.
    pub op_cpu_ns: u64,
}

/// The operations of a run, each numbered once (in the order first seen), so that a step's
/// record holds a number instead of its operation.
#[derive(Debug, Default)]
pub struct Ops {
    /// Every operation, by its number.
    pub list: Vec<Op>,
    index: HashMap<Op, u32>,
}

impl Ops {
    /// The number of `op`, given one if new.
    pub fn intern(&mut self, op: Op) -> u32 {
        if let Some(&i) = self.index.get(&op) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(op.clone());
        self.index.insert(op, i);
        i
    }
}

/// A step's operation as the log said it, before its computation and CPU time are known: its
/// span (wall ns), its operation's number and its bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub begin: u64,
    pub end: u64,
    pub op: u32,
    pub bytes: u64,
}

impl Span {
    /// Writes the span (its begin relative to the previous span's).
    pub fn write(&self, w: &mut Writer, previous_begin: u64) {
        w.signed(self.begin, previous_begin);
        w.number(self.end - self.begin);
        w.number(u64::from(self.op));
        w.number(self.bytes);
    }

    /// Reads a span written after one that began at `previous_begin`.
    pub fn read(r: &mut Reader, previous_begin: u64) -> Option<Span> {
        let begin = r.signed(previous_begin)?;
        let end = begin + r.number()?;
        let op = r.number()? as u32;
        let bytes = r.number()?;
        Some(Span {
            begin,
            end,
            op,
            bytes,
        })
    }
}

/// One thread's state while its events are read.
#[derive(Debug, Default)]
pub struct Builder {
    /// When the thread's previous operation ended (its start before the first).
    last_end: Option<u64>,
    /// The operation open (a wait or copy) and when it began; the first message point inside
    /// it names it.
    open: Option<(u64, Op, u64)>,
    /// Further message points inside the open wait (an `MPI_Waitall` that completes several
    /// receives): each a step of its own, with no computation or duration, after the wait.
    also: Vec<(Op, u64)>,
    /// How deep the open waits and copies nest (only the outermost is a step).
    depth: u32,
    /// When the thread started (or its first operation began).
    pub first: Option<u64>,
    /// Steps written.
    pub steps: u64,
    /// The begin of the last step written.
    last_begin: u64,
    /// Whether the steps were written in the order of their begins (a region's begin or end
    /// inside an open wait is written before the wait).
    pub sorted: bool,
    /// `cpu` samples written, and the last one (wall ns, thread CPU ns).
    pub samples: u64,
    last_sample: (u64, u64),
    /// How many samples are at the last sample's time.
    pub at_last_sample: u32,
    /// The span (begin, end) of the last wait or copy that ended.
    pub closed: Option<(u64, u64)>,
}

impl Builder {
    /// Takes one event of this thread; its steps go to stream `2 × thread` of `streams`, its
    /// samples to stream `2 × thread + 1`.
    pub(crate) fn event(
        &mut self,
        e: &Event,
        symbols: &Symbols,
        ops: &mut Ops,
        streams: &mut StreamWriter<'_>,
    ) {
        let name = |s| symbols.get_name(s).unwrap_or("?").to_string();
        let spans = 2 * e.thread as usize;
        let mut out = Out {
            ops,
            streams,
            stream: spans,
        };
        match e.kind {
            EventKind::Start => {
                self.last_end.get_or_insert(e.t);
                self.first.get_or_insert(e.t);
            }
            EventKind::WaitBegin { kind, object } => self.begin(
                e.t,
                Op::Wait {
                    kind: kind.as_str().to_string(),
                    object: object.map(name),
                    by: None,
                },
                0,
            ),
            EventKind::CommBegin { bytes } => self.begin(e.t, Op::Copy, bytes),
            EventKind::WaitEnd { by: Some(by), .. } => {
                // The outermost wait's partner, where it has one to signal it.
                if self.depth == 1
                    && let Some((_, Op::Wait { kind, by: b, .. }, _)) = &mut self.open
                    && partnered(kind.as_str())
                {
                    *b = Some(by);
                }
                self.end(e.t, &mut out)
            }
            EventKind::WaitEnd { .. } | EventKind::CommEnd { .. } => self.end(e.t, &mut out),
            EventKind::Release { kind, object } if partnered(kind.as_str()) => self.point(
                e.t,
                Op::Release {
                    kind: kind.as_str().to_string(),
                    object: object.map(name),
                },
                0,
                &mut out,
            ),
            EventKind::Send {
                peer, tag, bytes, ..
            } => self.point(e.t, Op::Send { peer, tag }, bytes, &mut out),
            EventKind::Recv {
                peer, tag, bytes, ..
            } => self.point(e.t, Op::Recv { peer, tag }, bytes, &mut out),
            EventKind::Coll {
                op, bytes, root, ..
            } => self.point(e.t, Op::Coll { op: name(op), root }, bytes, &mut out),
            EventKind::RegionBegin { name: n, .. } => {
                self.point(e.t, Op::RegionBegin { name: name(n) }, 0, &mut out)
            }
            EventKind::RegionEnd { .. } => match self.join_since(e.t) {
                // The region's join: from the thread's last `cpu` sample in it (where its part
                // ended) to the region's end (docs/skeletons.md#steps).
                Some(t) => self.push(t, e.t, Op::RegionEnd, 0, &mut out),
                None => self.point(e.t, Op::RegionEnd, 0, &mut out),
            },
            EventKind::Stop => {
                while self.depth > 0 {
                    self.end(e.t, &mut out);
                }
                self.point(e.t, Op::Stop, 0, &mut out);
            }
            EventKind::Cpu { thread_cpu_ns, .. } => {
                let (t0, c0) = self.last_sample;
                let mut w = Writer::default();
                w.signed(e.t, t0);
                w.signed(thread_cpu_ns, c0);
                out.streams.push(spans + 1, w.bytes());
                if self.samples > 0 && e.t == t0 {
                    self.at_last_sample += 1;
                } else {
                    self.at_last_sample = 1;
                }
                self.samples += 1;
                self.last_sample = (e.t, thread_cpu_ns);
            }
            EventKind::WorkBegin { .. }
            | EventKind::WorkEnd { .. }
            | EventKind::Phase { .. }
            | EventKind::Release { .. } => {}
        }
    }

    /// The time of the last `cpu` sample, if there is one.
    pub fn last_sample(&self) -> Option<u64> {
        (self.samples > 0).then_some(self.last_sample.0)
    }

    /// Where a region's end at `t` is a join: the thread's last `cpu` sample, where it lies
    /// after the thread's previous operation ended and before `t`, and no wait or copy is open.
    fn join_since(&self, t: u64) -> Option<u64> {
        let sample = self.last_sample()?;
        let after = self.last_end.or(self.first)?;
        (self.open.is_none() && sample > after && sample < t).then_some(sample)
    }

    /// When the outermost open wait or copy began, if one is open: it will be written as a step
    /// with that begin.
    pub fn open_since(&self) -> Option<u64> {
        self.open.as_ref().map(|o| o.0)
    }

    fn begin(&mut self, t: u64, op: Op, bytes: u64) {
        self.depth += 1;
        if self.depth == 1 {
            self.open = Some((t, op, bytes));
        }
    }

    fn end(&mut self, t: u64, out: &mut Out<'_, '_>) {
        if self.depth == 0 {
            return;
        }
        self.depth -= 1;
        if self.depth == 0
            && let Some((begin, op, bytes)) = self.open.take()
        {
            self.push(begin, t, op, bytes, out);
            self.closed = Some((begin, t));
            for (op, bytes) in std::mem::take(&mut self.also) {
                self.push(t, t, op, bytes, out);
            }
        }
    }

    /// A point event: inside an open wait the first names that wait (a blocking send, receive
    /// or collective) and the others follow it as steps of their own; outside, it is a step of
    /// its own (a non-blocking call).
    fn point(&mut self, t: u64, op: Op, bytes: u64, out: &mut Out<'_, '_>) {
        if let Some((_, open, open_bytes)) = &mut self.open
            && !matches!(
                op,
                Op::RegionBegin { .. } | Op::RegionEnd | Op::Stop | Op::Release { .. }
            )
        {
            if matches!(open, Op::Wait { .. } | Op::Copy) {
                *open = op;
                *open_bytes = bytes;
            } else {
                self.also.push((op, bytes));
            }
            return;
        }
        self.push(t, t, op, bytes, out);
    }

    fn push(&mut self, begin: u64, end: u64, op: Op, bytes: u64, out: &mut Out<'_, '_>) {
        let last = *self.last_end.get_or_insert(begin);
        self.first.get_or_insert(begin);
        let span = Span {
            begin,
            end: end.max(begin),
            op: out.ops.intern(op),
            bytes,
        };
        if self.steps == 0 {
            self.sorted = true;
        } else if begin < self.last_begin {
            self.sorted = false;
        }
        let mut w = Writer::default();
        span.write(&mut w, self.last_begin);
        out.streams.push(out.stream, w.bytes());
        self.last_begin = begin;
        self.steps += 1;
        self.last_end = Some(end.max(last));
    }
}

struct Out<'a, 'w> {
    ops: &'a mut Ops,
    streams: &'a mut StreamWriter<'w>,
    stream: usize,
}

/// CPU nanoseconds in the wall interval `[a, b]` given the samples `(wall, cpu)` (in time
/// order): each stretch between two samples at its own rate, the rest at rate 1.
pub fn cpu_in(samples: &[(u64, u64)], a: u64, b: u64) -> u64 {
    let mut cpu = 0.0;
    let mut covered = 0u64;
    let first = samples.partition_point(|&(t, _)| t <= a).saturating_sub(1);
    for w in samples[first.min(samples.len())..].windows(2) {
        let ((t0, c0), (t1, c1)) = (w[0], w[1]);
        if t0 >= b {
            break;
        }
        overlap((t0, c0), (t1, c1), a, b, &mut cpu, &mut covered);
    }
    total(cpu, covered, a, b)
}

/// Adds to `cpu` and `covered` the part of `[a, b]` between samples `(t0, c0)` and `(t1, c1)`,
/// at their rate (at most 1).
fn overlap(
    (t0, c0): (u64, u64),
    (t1, c1): (u64, u64),
    a: u64,
    b: u64,
    cpu: &mut f64,
    covered: &mut u64,
) {
    let (lo, hi) = (t0.max(a), t1.min(b));
    if hi <= lo || t1 <= t0 {
        return;
    }
    let rate = (c1.saturating_sub(c0) as f64 / (t1 - t0) as f64).min(1.0);
    *cpu += rate * (hi - lo) as f64;
    *covered += hi - lo;
}

/// The CPU nanoseconds of `[a, b]`: `cpu` over the `covered` part, the rest at rate 1.
fn total(cpu: f64, covered: u64, a: u64, b: u64) -> u64 {
    (cpu + (b.saturating_sub(a) - covered.min(b.saturating_sub(a))) as f64).round() as u64
}

/// [`cpu_in`] over a thread's samples read forward from its stream, for intervals that come in
/// order (each begins at or after the previous one's end): it keeps only the samples the next
/// interval can need.
pub struct Samples<I> {
    more: I,
    window: VecDeque<(u64, u64)>,
}

impl<I: Iterator<Item = (u64, u64)>> Samples<I> {
    /// The samples `more` gives, in time order.
    pub fn new(more: I) -> Self {
        Samples {
            more,
            window: VecDeque::new(),
        }
    }

    /// The samples not read yet.
    pub fn into_inner(self) -> I {
        self.more
    }

    /// Whether the window holds more than `i` samples (reading more if it can).
    fn has(&mut self, i: usize) -> bool {
        while self.window.len() <= i {
            match self.more.next() {
                Some(s) => self.window.push_back(s),
                None => return false,
            }
        }
        true
    }

    /// [`cpu_in`] of `[a, b]`; `a` is at least the previous call's `b`.
    pub fn cpu_in(&mut self, a: u64, b: u64) -> u64 {
        // The first sample used is the last at or before `a` (else the first).
        while self.has(1) && self.window[1].0 <= a {
            self.window.pop_front();
        }
        let mut cpu = 0.0;
        let mut covered = 0u64;
        let mut i = 0;
        while self.has(i + 1) {
            let ((t0, c0), (t1, c1)) = (self.window[i], self.window[i + 1]);
            if t0 >= b {
                break;
            }
            // A sample at or before `b` is not the first of any later interval's pairs
            // (those begin at or after `b`) once the one after it is too.
            if t1 <= b && i == 0 {
                self.window.pop_front();
            } else {
                i += 1;
            }
            overlap((t0, c0), (t1, c1), a, b, &mut cpu, &mut covered);
        }
        total(cpu, covered, a, b)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn samples_read_forward_give_cpu_in_over_the_whole_list(
            gaps in prop::collection::vec((0u64..50, 0u64..80), 0..40),
            intervals in prop::collection::vec((0u64..60, 0u64..60), 1..30),
        ) {
            // Samples in time order (times may repeat; the CPU clock may go back).
            let mut t = 0;
            let samples: Vec<(u64, u64)> = gaps
                .iter()
                .map(|&(dt, c)| {
                    t += dt;
                    (t, c * 3)
                })
                .collect();
            let mut window = Samples::new(samples.iter().copied());
            let mut end = 0;
            for (gap, len) in intervals {
                let a = end + gap;
                let b = a + len;
                prop_assert_eq!(window.cpu_in(a, b), cpu_in(&samples, a, b), "[{}, {}]", a, b);
                end = b;
            }
        }
    }
}
