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
}

/// One thread's state while its events are read.
#[derive(Debug, Default)]
pub struct Builder {
    /// When the thread's previous operation ended (its start before the first).
    last_end: Option<u64>,
    /// The operation open (a wait or copy) and when it began; points inside it name it.
    open: Option<(u64, Op, u64)>,
    /// How deep the open waits and copies nest (only the outermost is a step).
    depth: u32,
    /// The steps so far.
    pub steps: Vec<Step>,
}

impl Builder {
    /// Takes one event of this thread.
    pub fn event(&mut self, e: &Event, symbols: &Symbols) {
        let name = |s| symbols.get_name(s).unwrap_or("?").to_string();
        match e.kind {
            EventKind::Start => {
                self.last_end.get_or_insert(e.t);
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
            EventKind::WorkBegin { .. }
            | EventKind::WorkEnd { .. }
            | EventKind::Cpu { .. }
            | EventKind::Phase { .. }
            | EventKind::Release { .. } => {}
        }
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
        }
    }

    /// A point event: inside an open wait it names that wait (a blocking send, receive or
    /// collective); outside, it is a step of its own (a non-blocking call).
    fn point(&mut self, t: u64, op: Op, bytes: u64) {
        if let Some((_, open, open_bytes)) = &mut self.open
            && !matches!(op, Op::RegionBegin { .. } | Op::RegionEnd | Op::Stop)
        {
            *open = op;
            *open_bytes = bytes;
            return;
        }
        self.push(t, t, op, bytes);
    }

    fn push(&mut self, begin: u64, end: u64, op: Op, bytes: u64) {
        let last = *self.last_end.get_or_insert(begin);
        self.steps.push(Step {
            compute_ns: begin.saturating_sub(last),
            op,
            bytes,
            op_ns: end.saturating_sub(begin),
        });
        self.last_end = Some(end.max(last));
    }
}
