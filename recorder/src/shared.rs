//! The state of the active session that its threads share: the log writer, the team table,
//! the registered threads, and which session is active (at most one in a process).

use std::cell::Cell;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::epoch::Epoch;
use crate::event::ThreadId;
use crate::log_file::LogFile;
use crate::raw::ALL_THREADS;
use crate::spill::{Buffer, Spill};
use crate::team_table::TeamTable;

/// The active session, if any: what `thread_start` registers with.
static CURRENT: Mutex<Option<Arc<Shared>>> = Mutex::new(None);
/// Generation of the active session (0: none); lets a team notice a new session.
static GENERATION: AtomicU64 = AtomicU64::new(0);
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// Set while this thread holds the log writer's lock (the panic hook must not take it).
    static IN_WRITER: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The state of a session shared by its threads.
pub(crate) struct Shared {
    pub(crate) p: u32,
    pub(crate) clock: Clock,
    /// The threads' buffers (crash-safe where the files could be made).
    pub(crate) spill: Spill,
    /// Distinguishes sessions (a team checks its threads' registration against it).
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    pub(crate) generation: u64,
    /// The epoch the session's time 0 was taken from, if any (`SessionBuilder::epoch`).
    pub(crate) epoch: Option<Epoch>,
    next_region: AtomicU64,
    log: Mutex<LogFile>,
    teams: Mutex<TeamTable>,
    /// Registered threads that have not stopped (a list: a misused id may appear twice).
    active: Mutex<Vec<ThreadId>>,
    stopped: Condvar,
}

impl Shared {
    /// A session of `p` threads writing to `log`, with a generation of its own.
    pub(crate) fn new(
        p: u32,
        clock: Clock,
        epoch: Option<Epoch>,
        spill: Spill,
        log: LogFile,
    ) -> Shared {
        Shared {
            p,
            clock,
            epoch,
            spill,
            generation: NEXT_GENERATION.fetch_add(1, Ordering::Relaxed),
            next_region: AtomicU64::new(0),
            log: Mutex::new(log),
            teams: Mutex::new(TeamTable::default()),
            active: Mutex::new(Vec::new()),
            stopped: Condvar::new(),
        }
    }

    /// A fresh region instance id.
    pub(crate) fn next_region(&self) -> u64 {
        self.next_region.fetch_add(1, Ordering::Relaxed)
    }

    /// The index of an explicit region team; ids not below `p` are left out, and a team left
    /// empty means all threads.
    pub(crate) fn team_index(&self, threads: &[ThreadId]) -> u32 {
        let team: Vec<ThreadId> = threads.iter().copied().filter(|&t| t < self.p).collect();
        if team.is_empty() {
            return ALL_THREADS;
        }
        let mut teams = lock(&self.teams);
        let (index, new) = teams.intern(&team);
        if new {
            self.spill.note_team(index, teams.threads(index));
        }
        index
    }

    /// A buffer for a thread registering as `thread`.
    pub(crate) fn buffer(&self, thread: ThreadId) -> Buffer {
        let base = {
            let _mark = InWriter::enter();
            lock(&self.log).logged(thread)
        };
        self.spill.buffer(thread, base)
    }

    /// Writes the first `n` events of a thread's buffer to the log and empties the buffer:
    /// its count goes to 0, then its `base` to the thread's events now in the log (in that
    /// order, so that a crash between the two never counts an event twice).
    pub(crate) fn write_block(&self, thread: ThreadId, buf: &Buffer, n: usize) {
        let _mark = InWriter::enter();
        let mut log = lock(&self.log);
        log.write_block(thread, buf.events(n), &self.clock, &self.teams);
        buf.commit(0);
        buf.set_base(log.logged(thread));
    }

    pub(crate) fn thread_started(&self, id: ThreadId) {
        lock(&self.active).push(id);
    }

    pub(crate) fn thread_stopped(&self, id: ThreadId) {
        let mut active = lock(&self.active);
        if let Some(i) = active.iter().position(|&a| a == id) {
            active.swap_remove(i);
        }
        self.stopped.notify_all();
    }

    /// Waits until every registered thread stopped or `timeout` passed; returns the threads
    /// that did not stop.
    pub(crate) fn wait_stopped(&self, timeout: Duration) -> Vec<ThreadId> {
        let deadline = Instant::now() + timeout;
        let mut active = lock(&self.active);
        while !active.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            active = self
                .stopped
                .wait_timeout(active, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let mut left = active.clone();
        left.sort_unstable();
        left
    }

    /// Completes the log (see [`LogFile::close`]): the events written, and the blocks the
    /// writer refused with the first reason.
    pub(crate) fn close_log(&self) -> io::Result<(u64, (u64, Option<String>))> {
        let _mark = InWriter::enter();
        let mut log = lock(&self.log);
        let events = log.close()?;
        self.spill.remove();
        Ok((events, log.refused()))
    }
}

/// Makes the session that `make` builds the active one; `AlreadyExists` when another is
/// active (checked before `make` runs, under the same lock).
pub(crate) fn activate(make: impl FnOnce() -> io::Result<Shared>) -> io::Result<Arc<Shared>> {
    let mut cur = lock(&CURRENT);
    if cur.is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a recording session is already active in this process",
        ));
    }
    let shared = Arc::new(make()?);
    *cur = Some(shared.clone());
    GENERATION.store(shared.generation, Ordering::Release);
    Ok(shared)
}

/// Ends `shared`'s turn as the active session, if it is the active one.
pub(crate) fn deactivate(shared: &Arc<Shared>) {
    let mut cur = lock(&CURRENT);
    if cur.as_ref().is_some_and(|s| Arc::ptr_eq(s, shared)) {
        *cur = None;
        GENERATION.store(0, Ordering::Release);
    }
}

/// The active session, if any.
pub(crate) fn current() -> Option<Arc<Shared>> {
    lock(&CURRENT).clone()
}

/// The generation of the active session, 0 when none is active.
#[cfg_attr(not(feature = "rayon"), allow(dead_code))]
pub(crate) fn current_generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// Whether this thread holds the log writer's lock (or its thread-local state is gone).
pub(crate) fn in_writer() -> bool {
    IN_WRITER.try_with(Cell::get).unwrap_or(true)
}

/// Marks that this thread holds the log writer's lock for the guard's lifetime.
pub(crate) struct InWriter(());

impl InWriter {
    pub(crate) fn enter() -> InWriter {
        let _ = IN_WRITER.try_with(|f| f.set(true));
        InWriter(())
    }
}

impl Drop for InWriter {
    fn drop(&mut self) {
        let _ = IN_WRITER.try_with(|f| f.set(false));
    }
}
