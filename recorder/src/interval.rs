//! The per-thread recording API: registration, regions, work, waits, communication, phases.
//!
//! Every function acts on the calling thread and does nothing when the thread is not
//! registered with an active [`Session`](crate::Session), so instrumented code runs unchanged
//! (at the cost of a thread-local check) without a session. Intervals are guards that end on
//! drop; on one thread they nest only as docs/event-log.md allows: `work` may contain `comm` and
//! `wait`, nothing else overlaps (not checked at run time).

use std::marker::PhantomData;

use crate::buffer::{self, record, with_rec};
use crate::event::{ThreadId, WaitKind};
use crate::raw::{ALL_THREADS, RawKind};
use crate::shared;

/// Makes a guard `!Send`: its end event must be recorded by the thread that began it.
type NotSend = PhantomData<*const ()>;

/// Registers the calling thread as thread `id` (`0..p`) of the active session and records
/// `start` and a CPU sample. Returns `false` (and records nothing) when no session is active
/// or `id` is not below `p`. A thread already registered is stopped first.
pub fn thread_start(id: ThreadId) -> bool {
    match shared::current() {
        Some(s) if id < s.p => {
            buffer::start(id, s);
            true
        }
        _ => false,
    }
}

/// Registers the calling thread as thread `id` of the active session from the session's epoch:
/// records `start` and the epoch's CPU sample at time 0, then, when given, `phase <phase>` and
/// `work_begin [label]` (for `work: Some(label)`), also at time 0. The work stays open, to be
/// ended with [`work_end`](work_end). Call it on the thread that took the epoch.
/// Returns `false` (and records nothing) when no session is active, it has no epoch, or `id`
/// is not below `p`.
pub fn thread_start_at_epoch(
    id: ThreadId,
    phase: Option<&'static str>,
    work: Option<Option<&'static str>>,
) -> bool {
    let Some(s) = shared::current() else {
        return false;
    };
    let Some(epoch) = s.epoch else {
        return false;
    };
    if id >= s.p {
        return false;
    }
    let base = epoch.clock.base();
    let mut first = vec![(base, RawKind::Start)];
    if let Some(cpu) = epoch.cpu {
        first.push((base, RawKind::Cpu(cpu, epoch.delay)));
    }
    if let Some(name) = phase {
        first.push((base, RawKind::Phase(name)));
    }
    if let Some(label) = work {
        first.push((base, RawKind::WorkBegin(label)));
    }
    buffer::start_with(id, s, &first);
    true
}

/// Ends the calling thread's part of the run: records a CPU sample and `stop`, writes the
/// thread's buffer to the log and unregisters the thread. Does nothing for an unregistered
/// thread. A registered thread that exits without calling it is stopped at exit.
pub fn thread_stop() {
    buffer::stop_if(|_| true);
}

/// Registers the calling thread as `id` until the guard drops ([`thread_start`] /
/// [`thread_stop`]).
///
/// ```
/// std::thread::scope(|s| {
///     for i in 0..2 {
///         s.spawn(move || {
///             let _t = pp_recorder::thread(i);
///             let _w = pp_recorder::work(None);
///         });
///     }
/// });
/// ```
pub fn thread(id: ThreadId) -> ThreadGuard {
    ThreadGuard {
        started: thread_start(id),
        _not_send: PhantomData,
    }
}

/// The thread id of the calling thread, if it is recording.
pub fn current_thread() -> Option<ThreadId> {
    with_rec(|r| r.id)
}

/// Records a sample of the calling thread's CPU clock (`cpu` event). The recorder samples at
/// thread start/stop and region boundaries; call this at the boundaries of a stretch of work
/// that those do not bracket. Costs about 0.5 µs.
pub fn cpu_sample() {
    with_rec(|r| r.sample_cpu());
}

/// Writes the calling thread's buffered events to the log now (otherwise that happens when the
/// buffer is full, when the thread stops and when the session finishes).
pub fn flush() {
    with_rec(|r| r.flush());
}

/// Labels the following time of the calling thread (`phase <name>`).
pub fn phase(name: &'static str) {
    record(RawKind::Phase(name));
}

/// Opens a parallel region whose team is all `p` threads: records `region_begin` and a CPU
/// sample; the guard records a CPU sample and `region_end` on drop.
///
/// ```
/// let _r = pp_recorder::region("solve");
/// ```
pub fn region(name: &'static str) -> RegionGuard {
    RegionGuard::begin(name, None, true)
}

/// Opens a parallel region whose team is `team` (`region_begin <id> <name> team=...`).
pub fn region_with_team(name: &'static str, team: &[ThreadId]) -> RegionGuard {
    RegionGuard::begin(name, Some(team), true)
}

/// Marks useful work (`work_begin [label]` .. `work_end [label]`) until the guard drops.
/// Inside a region it is parallel work, outside every region serial work.
///
/// ```
/// use pp_recorder::work;
/// let _w = work("fft");      // labelled
/// let _v = work(None);       // unlabelled
/// ```
#[inline]
pub fn work(label: impl Into<Option<&'static str>>) -> WorkGuard {
    let label = label.into();
    record(RawKind::WorkBegin(label));
    WorkGuard {
        label,
        _not_send: PhantomData,
    }
}

/// Marks explicit synchronization (`wait_begin <kind> [object]`) until the guard drops. The
/// [`sync`](crate::sync) wrappers record their blocking waits with it.
///
/// ```
/// use pp_recorder::{event::WaitKind, wait};
/// let _w = wait(WaitKind::Other, "disk");
/// ```
#[inline]
pub fn wait(kind: WaitKind, object: impl Into<Option<&'static str>>) -> WaitGuard {
    let object = object.into();
    record(RawKind::WaitBegin(kind, object));
    WaitGuard {
        kind,
        object,
        by: None,
        _not_send: PhantomData,
    }
}

/// Marks a data movement of `bytes` bytes (copy, transpose, message transfer) until the guard
/// drops (`comm_begin <bytes>` .. `comm_end <bytes>`).
///
/// ```
/// let src = vec![1u8; 4096];
/// let mut dst = vec![0u8; 4096];
/// {
///     let _c = pp_recorder::comm(src.len() as u64);
///     dst.copy_from_slice(&src);
/// }
/// ```
#[inline]
pub fn comm(bytes: u64) -> CommGuard {
    record(RawKind::CommBegin(bytes));
    CommGuard {
        bytes,
        _not_send: PhantomData,
    }
}

/// Keeps the calling thread registered; see [`thread`].
#[must_use = "the thread stops recording when the guard drops"]
#[derive(Debug)]
pub struct ThreadGuard {
    started: bool,
    _not_send: NotSend,
}

impl ThreadGuard {
    /// Whether a session was active and the thread is recording.
    pub fn is_recording(&self) -> bool {
        self.started
    }
}

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        if self.started {
            thread_stop();
        }
    }
}

/// An open region; see [`region`].
#[must_use = "the region ends when the guard drops"]
#[derive(Debug)]
pub struct RegionGuard {
    /// The region id, `None` when the thread is not recording.
    id: Option<u64>,
    sample: bool,
    _not_send: NotSend,
}

impl RegionGuard {
    /// Records `region_begin` (and a CPU sample when `sample`).
    pub(crate) fn begin(name: &'static str, team: Option<&[ThreadId]>, sample: bool) -> Self {
        let id = with_rec(|r| {
            let id = r.session.next_region();
            let team = match team {
                Some(t) => r.session.team_index(t),
                None => ALL_THREADS,
            };
            r.push(RawKind::RegionBegin { id, name, team });
            if sample {
                r.sample_cpu();
            }
            id
        });
        RegionGuard {
            id,
            sample,
            _not_send: PhantomData,
        }
    }

    /// The region instance id in the log, if the thread is recording.
    pub fn id(&self) -> Option<u64> {
        self.id
    }
}

impl Drop for RegionGuard {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            with_rec(|r| {
                if self.sample {
                    r.sample_cpu();
                }
                r.push(RawKind::RegionEnd { id });
            });
        }
    }
}

/// Open work; see [`work`].
#[must_use = "the work interval ends when the guard drops"]
#[derive(Debug)]
pub struct WorkGuard {
    label: Option<&'static str>,
    _not_send: NotSend,
}

impl Drop for WorkGuard {
    #[inline]
    fn drop(&mut self) {
        record(RawKind::WorkEnd(self.label));
    }
}

/// An open wait; see [`wait`].
#[must_use = "the wait ends when the guard drops"]
#[derive(Debug)]
pub struct WaitGuard {
    kind: WaitKind,
    object: Option<&'static str>,
    by: Option<ThreadId>,
    _not_send: NotSend,
}

impl WaitGuard {
    /// Names the thread whose release, notify or send ends this wait: the `wait_end` says
    /// `by=<thread>` (the critical path follows it; see docs/critical-path.md).
    #[inline]
    pub fn ended_by(&mut self, thread: Option<ThreadId>) {
        self.by = thread;
    }
}

impl Drop for WaitGuard {
    #[inline]
    fn drop(&mut self) {
        record(RawKind::WaitEnd(self.kind, self.object, self.by));
    }
}

/// An open data movement; see [`comm`].
#[must_use = "the data movement ends when the guard drops"]
#[derive(Debug)]
pub struct CommGuard {
    bytes: u64,
    _not_send: NotSend,
}

impl Drop for CommGuard {
    #[inline]
    fn drop(&mut self) {
        record(RawKind::CommEnd(self.bytes));
    }
}

/// Guard-free beginnings and ends, for tracers whose begin and end arrive in different
/// callbacks (the OMPT tool): the caller pairs them on one thread, as the guards do.
///
/// ```
/// use pp_recorder::{self as recorder, event::WaitKind};
/// recorder::work_begin(None);
/// recorder::wait_begin(WaitKind::Barrier, "b0");
/// recorder::wait_end(WaitKind::Barrier, "b0");
/// recorder::work_end(None);
/// ```
#[inline]
pub fn work_begin(label: Option<&'static str>) {
    record(RawKind::WorkBegin(label));
}

/// Ends what [`work_begin`] began.
#[inline]
pub fn work_end(label: Option<&'static str>) {
    record(RawKind::WorkEnd(label));
}

/// Begins a wait without a guard; see [`work_begin`].
#[inline]
pub fn wait_begin(kind: WaitKind, object: impl Into<Option<&'static str>>) {
    record(RawKind::WaitBegin(kind, object.into()));
}

/// Ends what [`wait_begin`] began.
#[inline]
pub fn wait_end(kind: WaitKind, object: impl Into<Option<&'static str>>) {
    record(RawKind::WaitEnd(kind, object.into(), None));
}

/// Ends what [`wait_begin`] began, ended by thread `by` where it is known (`by=`).
#[inline]
pub fn wait_end_by(kind: WaitKind, object: impl Into<Option<&'static str>>, by: Option<ThreadId>) {
    record(RawKind::WaitEnd(kind, object.into(), by));
}

/// Records that this thread released `object` of `kind` (an unlock, a notify): a wait that
/// ends `by` this thread was released at its latest such event (docs/event-log.md,
/// `release`).
#[inline]
pub fn release(kind: WaitKind, object: impl Into<Option<&'static str>>) {
    record(RawKind::Release(kind, object.into()));
}

/// Begins a data movement of `bytes` without a guard; see [`work_begin`].
#[inline]
pub fn comm_begin(bytes: u64) {
    record(RawKind::CommBegin(bytes));
}

/// Ends what [`comm_begin`] began.
#[inline]
pub fn comm_end(bytes: u64) {
    record(RawKind::CommEnd(bytes));
}

/// Opens a region without a guard (with a CPU sample), its team all `p` threads or `team`;
/// returns its id for [`region_end`], `None` when the thread is not recording.
pub fn region_begin(name: &'static str, team: Option<&[ThreadId]>) -> Option<u64> {
    let guard = RegionGuard::begin(name, team, true);
    let id = guard.id;
    std::mem::forget(guard);
    id
}

/// Ends the region `id` that [`region_begin`] opened on this thread (with a CPU sample).
pub fn region_end(id: u64) {
    drop(RegionGuard {
        id: Some(id),
        sample: true,
        _not_send: PhantomData,
    });
}
