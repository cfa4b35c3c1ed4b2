//! From a log to each thread's steps (docs/skeletons.md#steps): an operation (a wait, a data
//! movement, a message, a collective, a region's begin or end) and the computation before it,
//! the wall time since the thread's previous operation ended.

use pp_recorder::event::{Event, EventKind, Symbols, ThreadId};

/// What a step does, besides computing: the key that clustering compares exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// A message sent to `peer`.
    Send { peer: ThreadId, tag: u32 },
    /// A message received from `peer`.
    Recv { peer: ThreadId, tag: u32 },
    /// A collective operation.
    Coll { op: String, root: Option<ThreadId> },
    /// A wait with no message in it (`lock`, `barrier`, `cond`, ...), with its object.
    Wait {
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
    /// The steps so far (their computation and CPU time are set by [`Builder::finish`]).
    pub steps: Vec<Step>,
    /// Each step's operation's begin and end (wall ns).
    spans: Vec<(u64, u64)>,
    /// When the thread started (or its first operation began).
    first: Option<u64>,
    /// The thread's `cpu` samples: (wall ns, thread CPU ns).
    samples: Vec<(u64, u64)>,
}

impl Builder {
    /// Takes one event of this thread.
    pub fn event(&mut self, e: &Event, symbols: &Symbols) {
        let name = |s| symbols.get_name(s).unwrap_or("?").to_string();
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
                },
                0,
            ),
            EventKind::CommBegin { bytes } => self.begin(e.t, Op::Copy, bytes),
            EventKind::WaitEnd { .. } | EventKind::CommEnd { .. } => self.end(e.t),
            EventKind::Send {
                peer, tag, bytes, ..
            } => self.point(e.t, Op::Send { peer, tag }, bytes),
            EventKind::Recv {
                peer, tag, bytes, ..
            } => self.point(e.t, Op::Recv { peer, tag }, bytes),
            EventKind::Coll {
                op, bytes, root, ..
            } => self.point(e.t, Op::Coll { op: name(op), root }, bytes),
            EventKind::RegionBegin { name: n, .. } => {
                self.point(e.t, Op::RegionBegin { name: name(n) }, 0)
            }
            EventKind::RegionEnd { .. } => self.point(e.t, Op::RegionEnd, 0),
            EventKind::Stop => {
                while self.depth > 0 {
                    self.end(e.t);
                }
                self.point(e.t, Op::Stop, 0);
            }
            EventKind::Cpu { thread_cpu_ns, .. } => self.samples.push((e.t, thread_cpu_ns)),
            EventKind::WorkBegin { .. }
            | EventKind::WorkEnd { .. }
            | EventKind::Phase { .. }
            | EventKind::Release { .. } => {}
        }
    }

    /// The first and last `cpu` samples in `[begin, end]`, where there are two.
    pub fn samples_in(&self, begin: u64, end: u64) -> Option<(u64, u64)> {
        let lo = self.samples.partition_point(|&(t, _)| t < begin);
        let hi = self.samples.partition_point(|&(t, _)| t <= end);
        (hi >= lo + 2).then(|| (self.samples[lo].0, self.samples[hi - 1].0))
    }

    /// The end of the thread's operation that begins in `[begin, end]` and ends after `end`, if
    /// one does: a team member's wait at a region's closing barrier, which the region's end
    /// releases.
    pub fn straddling(&self, begin: u64, end: u64) -> Option<u64> {
        let i = self.spans.partition_point(|&(b, _)| b <= end);
        let &(b, e) = self.spans.get(i.checked_sub(1)?)?;
        (b >= begin && e > end).then_some(e)
    }

    /// The steps, with `parts` (begin, end, region name: this thread's parts of regions other
    /// threads recorded) as `PartBegin`/`PartEnd` steps, each step's computation the wall time
    /// since the previous operation ended and its CPU time the thread's CPU rate between two
    /// samples (clamped to [0, 1]) integrated over that computation, at rate 1 where no pair of
    /// samples covers it.
    pub fn finish(self, parts: &[(u64, u64, String)]) -> Vec<Step> {
        let point = |op| Step {
            compute_ns: 0,
            op,
            bytes: 0,
            op_ns: 0,
            cpu_ns: 0,
        };
        let mut all: Vec<((u64, u64), Step)> = self.spans.into_iter().zip(self.steps).collect();
        for (b, e, name) in parts {
            all.push(((*b, *b), point(Op::PartBegin { name: name.clone() })));
            all.push(((*e, *e), point(Op::PartEnd)));
        }
        if !parts.is_empty() {
            // Stable: a step keeps its place among others that begin at the same time.
            all.sort_by_key(|&((b, _), _)| b);
        }
        let mut last = self
            .first
            .or(all.first().map(|&((b, _), _)| b))
            .unwrap_or(0);
        all.into_iter()
            .map(|((begin, end), mut step)| {
                step.compute_ns = begin.saturating_sub(last);
                step.cpu_ns = cpu_in(&self.samples, last, begin.max(last));
                last = last.max(end);
                step
            })
            .collect()
    }

    fn begin(&mut self, t: u64, op: Op, bytes: u64) {
        self.depth += 1;
        if self.depth == 1 {
            self.open = Some((t, op, bytes));
        }
    }

    fn end(&mut self, t: u64) {
        if self.depth == 0 {
            return;
        }
        self.depth -= 1;
        if self.depth == 0
            && let Some((begin, op, bytes)) = self.open.take()
        {
            self.push(begin, t, op, bytes);
            for (op, bytes) in std::mem::take(&mut self.also) {
                self.push(t, t, op, bytes);
            }
        }
    }

    /// A point event: inside an open wait the first names that wait (a blocking send, receive
    /// or collective) and the others follow it as steps of their own; outside, it is a step of
    /// its own (a non-blocking call).
    fn point(&mut self, t: u64, op: Op, bytes: u64) {
        if let Some((_, open, open_bytes)) = &mut self.open
            && !matches!(op, Op::RegionBegin { .. } | Op::RegionEnd | Op::Stop)
        {
            if matches!(open, Op::Wait { .. } | Op::Copy) {
                *open = op;
                *open_bytes = bytes;
            } else {
                self.also.push((op, bytes));
            }
            return;
        }
        self.push(t, t, op, bytes);
    }

    fn push(&mut self, begin: u64, end: u64, op: Op, bytes: u64) {
        let last = *self.last_end.get_or_insert(begin);
        self.first.get_or_insert(begin);
        self.steps.push(Step {
            compute_ns: 0,
            op,
            bytes,
            op_ns: end.saturating_sub(begin),
            cpu_ns: 0,
        });
        self.spans.push((begin, end));
        self.last_end = Some(end.max(last));
    }
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
        let (lo, hi) = (t0.max(a), t1.min(b));
        if hi <= lo || t1 <= t0 {
            continue;
        }
        let rate = (c1.saturating_sub(c0) as f64 / (t1 - t0) as f64).min(1.0);
        cpu += rate * (hi - lo) as f64;
        covered += hi - lo;
    }
    (cpu + (b.saturating_sub(a) - covered.min(b.saturating_sub(a))) as f64).round() as u64
}
