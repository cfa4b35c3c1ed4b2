//! The thread-local event buffer: compact raw events appended without a lock, handed to the
//! session's log writer when the buffer is full, when the thread stops or exits, when the
//! session finishes, and from the panic hook. The buffer itself is a slot of the session's
//! crash-safe buffers file ([`crate::spill`]): each event is counted there as soon as it is
//! stored, so a run killed by a signal keeps it.

use std::cell::RefCell;
use std::sync::Arc;

use crate::clock::{Clock, RunDelay, thread_cpu_ns};
use crate::event::ThreadId;
use crate::raw::{Raw, RawKind};
use crate::shared::{Shared, in_writer};
use crate::spill::Buffer;

/// Entries of a thread's cache of the names it has written to the names file.
const SEEN: usize = 64;

/// The recording state of one registered thread.
pub(crate) struct ThreadRec {
    pub(crate) id: ThreadId,
    clock: Clock,
    run_delay: RunDelay,
    cap: usize,
    /// Events in the buffer.
    len: usize,
    buf: Buffer,
    /// Names this thread knows are in the names file, by address and length (a direct-mapped
    /// cache: a miss only costs a lookup under the names file's lock).
    seen: [(usize, usize); SEEN],
    pub(crate) session: Arc<Shared>,
}

impl ThreadRec {
    fn new(id: ThreadId, session: Arc<Shared>) -> ThreadRec {
        let buf = session.buffer(id);
        ThreadRec {
            id,
            clock: session.clock,
            run_delay: RunDelay::open(),
            cap: buf.cap(),
            len: 0,
            buf,
            seen: [(0, 0); SEEN],
            session,
        }
    }

    /// Appends an event stamped now. The hot path: a capacity check, a clock read, a store
    /// and the store of the new count.
    #[inline(always)]
    pub(crate) fn push(&mut self, kind: RawKind) {
        if self.len >= self.cap {
            self.flush();
        }
        let ticks = self.clock.ticks();
        self.store(ticks, kind);
    }

    /// Appends an event at `ticks`.
    fn put(&mut self, ticks: u64, kind: RawKind) {
        if self.len >= self.cap {
            self.flush();
        }
        self.store(ticks, kind);
    }

    /// Stores an event in the (not full) buffer and counts it.
    #[inline(always)]
    fn store(&mut self, ticks: u64, kind: RawKind) {
        if let Some(name) = kind.name() {
            self.note_name(name);
        }
        self.buf.put(self.len, Raw::new(ticks, kind));
        self.len += 1;
        self.buf.commit(self.len);
    }

    /// Makes sure `name` is in the names file before an event that uses it is counted.
    #[inline(always)]
    fn note_name(&mut self, name: &'static str) {
        let key = (name.as_ptr() as usize, name.len());
        let slot = &mut self.seen[(key.0 >> 3) % SEEN];
        if *slot != key {
            self.session.spill.note_name(name);
            *slot = key;
        }
    }

    /// Appends a `cpu` sample (CPU clock and run-queue delay), stamped at the middle of the
    /// (slow) reads.
    pub(crate) fn sample_cpu(&mut self) {
        let a = self.clock.ticks();
        let Some(sample) = self.read_cpu() else {
            return;
        };
        let b = self.clock.ticks();
        let ticks = a + b.saturating_sub(a) / 2;
        self.put(ticks, sample);
    }

    /// A `cpu` sample's value: the thread's CPU clock and run-queue delay, where the clock
    /// can be read.
    fn read_cpu(&self) -> Option<RawKind> {
        let cpu = thread_cpu_ns()?;
        Some(RawKind::Cpu(cpu, self.run_delay.read()))
    }

    /// Writes the buffered events as one block of the log and empties the buffer.
    #[cold]
    #[inline(never)]
    pub(crate) fn flush(&mut self) {
        if self.len > 0 {
            self.session.write_block(self.id, &self.buf, self.len);
            self.len = 0;
        }
    }

    /// Ends the thread's part of the run: a last CPU sample, `stop`, flush, and the buffer
    /// given back. The sample and the stop are stamped before the (slow) reads: a thread
    /// preempted while it reads its clocks at its end would otherwise stop up to a time slice
    /// later, and that time would count as idle (beside two CPU hogs, an OpenMP program's
    /// serial thread stopped 2–4 ms after its work ended, counted as insufficient parallelism).
    /// Its CPU clock does not advance while it is preempted, so the sample holds at that time.
    fn stop(mut self) {
        let at = self.clock.ticks();
        if let Some(sample) = self.read_cpu() {
            self.put(at, sample);
        }
        self.put(at, RawKind::Stop);
        self.flush();
        self.session.thread_stopped(self.id);
        self.session.spill.release(self.buf);
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
        for &(ticks, kind) in first {
            rec.put(ticks, kind);
        }
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
