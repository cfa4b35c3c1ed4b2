//! The thread-local event buffer: compact raw events appended without a lock, handed to the
//! session's log writer when the buffer is full, when the thread stops or exits, when the
//! session finishes, and from the panic hook.

use std::cell::RefCell;
use std::sync::Arc;

use crate::clock::{Clock, RunDelay, thread_cpu_ns};
use crate::event::ThreadId;
use crate::raw::{Raw, RawKind};
use crate::shared::{Shared, in_writer};

/// The recording state of one registered thread.
pub(crate) struct ThreadRec {
    pub(crate) id: ThreadId,
    clock: Clock,
    run_delay: RunDelay,
    cap: usize,
    buf: Vec<Raw>,
    pub(crate) session: Arc<Shared>,
}

impl ThreadRec {
    fn new(id: ThreadId, session: Arc<Shared>) -> ThreadRec {
        let cap = session.buffer_events;
        ThreadRec {
            id,
            clock: session.clock,
            run_delay: RunDelay::open(),
            cap,
            buf: Vec::with_capacity(cap),
            session,
        }
    }

    /// Appends an event stamped now. The hot path: a capacity check, a clock read, a store.
    #[inline(always)]
    pub(crate) fn push(&mut self, kind: RawKind) {
        if self.buf.len() >= self.cap {
            self.flush();
        }
        let ticks = self.clock.ticks();
        self.buf.push(Raw { ticks, kind });
    }

    /// Appends a `cpu` sample (CPU clock and run-queue delay), stamped at the middle of the
    /// (slow) reads.
    pub(crate) fn sample_cpu(&mut self) {
        if self.buf.len() >= self.cap {
            self.flush();
        }
        let a = self.clock.ticks();
        let Some(cpu) = thread_cpu_ns() else { return };
        let delay = self.run_delay.read();
        let b = self.clock.ticks();
        let ticks = a + b.saturating_sub(a) / 2;
        self.buf.push(Raw {
            ticks,
            kind: RawKind::Cpu(cpu, delay),
        });
    }

    /// Writes the buffered events as one block of the log and empties the buffer.
    #[cold]
    #[inline(never)]
    pub(crate) fn flush(&mut self) {
        if !self.buf.is_empty() {
            self.session.write_block(self.id, &self.buf);
            self.buf.clear();
        }
    }

    /// Ends the thread's part of the run: a last CPU sample, `stop`, flush.
    fn stop(mut self) {
        self.sample_cpu();
        self.push(RawKind::Stop);
        self.flush();
        self.session.thread_stopped(self.id);
    }
}

/// The thread-local slot. Its destructor (thread exit, also after a panic unwound the thread)
/// stops a thread that did not stop itself, so its events reach the log.
struct Slot(RefCell<Option<ThreadRec>>);

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(rec) = self.0.get_mut().take() {
            rec.stop();
        }
    }
}

thread_local! {
    static LOCAL: Slot = const { Slot(RefCell::new(None)) };
}

/// Appends an event on the calling thread if it is registered; otherwise does nothing.
#[inline(always)]
pub(crate) fn record(kind: RawKind) {
    let _ = LOCAL.try_with(|slot| {
        let Ok(mut rec) = slot.0.try_borrow_mut() else {
            return;
        };
        if let Some(rec) = rec.as_mut() {
            rec.push(kind);
        }
    });
}

/// Runs `f` on the calling thread's recording state, if it is registered.
pub(crate) fn with_rec<R>(f: impl FnOnce(&mut ThreadRec) -> R) -> Option<R> {
    LOCAL
        .try_with(|slot| {
            let mut rec = slot.0.try_borrow_mut().ok()?;
            rec.as_mut().map(f)
        })
        .ok()
        .flatten()
}

/// Registers the calling thread as `id` of `session` (stopping a previous registration) and
/// records `start` and a CPU sample.
pub(crate) fn start(id: ThreadId, session: Arc<Shared>) {
    register(id, session, |rec| {
        rec.push(RawKind::Start);
        rec.sample_cpu();
    });
}

/// Registers the calling thread as `id` of `session` (stopping a previous registration) with
/// the given first events, each at its own clock reading instead of now.
pub(crate) fn start_with(id: ThreadId, session: Arc<Shared>, first: &[(u64, RawKind)]) {
    register(id, session, |rec| {
        rec.buf
            .extend(first.iter().map(|&(ticks, kind)| Raw { ticks, kind }));
    });
}

/// Registers the calling thread (stopping a previous registration) and records its first
/// events with `first`.
fn register(id: ThreadId, session: Arc<Shared>, first: impl FnOnce(&mut ThreadRec)) {
    let _ = LOCAL.try_with(|slot| {
        let Ok(mut cur) = slot.0.try_borrow_mut() else {
            return;
        };
        if let Some(old) = cur.take() {
            old.stop();
        }
        session.thread_started(id);
        let mut rec = ThreadRec::new(id, session);
        first(&mut rec);
        *cur = Some(rec);
    });
}

/// Stops the calling thread's registration if `pred` holds for its session.
pub(crate) fn stop_if(pred: impl FnOnce(&Arc<Shared>) -> bool) {
    let _ = LOCAL.try_with(|slot| {
        let Ok(mut cur) = slot.0.try_borrow_mut() else {
            return;
        };
        if let Some(rec) = cur.take_if(|r| pred(&r.session)) {
            rec.stop();
        }
    });
}

/// The calling thread's session, if it is registered.
#[cfg_attr(not(feature = "rayon"), allow(dead_code))]
pub(crate) fn current_session() -> Option<Arc<Shared>> {
    with_rec(|r| r.session.clone())
}

/// Flushes the calling thread's buffer from the panic hook: skipped if this thread is inside
/// the recorder (its buffer borrowed or the writer lock held), where flushing could deadlock.
pub(crate) fn flush_for_panic() {
    if in_writer() {
        return;
    }
    with_rec(ThreadRec::flush);
}
