//! Synchronization wrappers that record their blocking waits: [`Mutex`] (`wait lock`),
//! [`Barrier`] (`wait barrier`), [`Condvar`] (`wait cond`) and channels (`wait recv`,
//! `wait send`).
//!
//! They wrap the `std::sync` types and behave like them. A wait is recorded only when the
//! operation would block: the lock, receive or send is tried first, so an uncontended lock
//! records nothing; it notes its taker (read when a later wait ends, for `by=`) only when the
//! taker changes. Measured on the 2-core VM: 4.6 ns an uncontended lock and unlock, as
//! `std::sync::Mutex` (4.5 ns); writing the taker at every lock had made it 6.6-7.2 ns.
//! With `PP_LOCKS=every` a [`Mutex`] records every acquisition instead, a wait of no length
//! where the lock was free, as the OpenMP tool records a `critical`: a loop then takes its
//! lock the same way in every pass, which its skeleton needs
//! (docs/skeletons.md#locks-taken-in-varying-numbers).
//!
//! ```
//! use pp_recorder::sync::Mutex;
//! static TOTAL: Mutex<u64> = Mutex::named("total", 0);
//! *TOTAL.lock().unwrap() += 1;
//! ```

use std::sync::atomic::{AtomicU32, Ordering, fence};
use std::sync::mpsc::{self, RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use std::sync::{Arc, OnceLock};
use std::sync::{BarrierWaitResult, LockResult, MutexGuard, TryLockError, TryLockResult};
use std::time::Duration;

use crate::event::{ThreadId, WaitKind};

use crate::interval::{current_thread, release, wait};

/// No recorded thread (in a [`Cause`]).
const NOBODY: u32 = u32::MAX;

/// The last recorded thread that took a lock or notified a condition variable: what ends the
/// next wait on it (`wait_end .. by=<thread>`).
#[derive(Debug)]
struct Cause(AtomicU32);

impl Cause {
    const fn new() -> Self {
        Cause(AtomicU32::new(NOBODY))
    }

    /// Records the calling thread; returns the thread recorded before it.
    fn swap_in(&self) -> Option<ThreadId> {
        let previous = self
            .0
            .swap(current_thread().unwrap_or(NOBODY), Ordering::Relaxed);
        (previous != NOBODY).then_some(previous)
    }

    /// Records the calling thread, writing only when it is not the one recorded already (a
    /// lock taken again and again by one thread costs a load, not a read-modify-write).
    fn note(&self) {
        let me = current_thread().unwrap_or(NOBODY);
        if self.0.load(Ordering::Relaxed) != me {
            self.0.store(me, Ordering::Relaxed);
        }
    }

    fn get(&self) -> Option<ThreadId> {
        let t = self.0.load(Ordering::Relaxed);
        (t != NOBODY).then_some(t)
    }
}

impl Default for Cause {
    fn default() -> Self {
        Cause::new()
    }
}

/// Whether every acquisition of a [`Mutex`] is recorded (`PP_LOCKS=every`), not only those
/// that wait.
fn every_lock() -> bool {
    static EVERY: OnceLock<bool> = OnceLock::new();
    *EVERY.get_or_init(|| std::env::var("PP_LOCKS").as_deref() == Ok("every"))
}

/// A mutual-exclusion lock that records `wait lock [name]` while a `lock` blocks.
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized> {
    name: Option<&'static str>,
    /// The thread that took the lock last: the one whose release ends a wait for it.
    holder: Cause,
    inner: std::sync::Mutex<T>,
}

impl<T> Mutex<T> {
    /// An unnamed lock.
    pub const fn new(value: T) -> Self {
        Mutex {
            name: None,
            holder: Cause::new(),
            inner: std::sync::Mutex::new(value),
        }
    }

    /// A lock whose waits are recorded as `wait lock <name>`.
    pub const fn named(name: &'static str, value: T) -> Self {
        Mutex {
            name: Some(name),
            holder: Cause::new(),
            inner: std::sync::Mutex::new(value),
        }
    }

    /// The protected value.
    pub fn into_inner(self) -> LockResult<T> {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Acquires the lock, recording a wait only if it is held by another thread (every time with
    /// `PP_LOCKS=every`: a wait of no length where it was free); a wait's
    /// end names the thread that held the lock before (`by=<thread>`). Poisoning as in
    /// [`std::sync::Mutex::lock`].
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        match self.inner.try_lock() {
            Ok(guard) => {
                self.acquired();
                Ok(guard)
            }
            Err(TryLockError::Poisoned(p)) => {
                self.acquired();
                Err(p)
            }
            Err(TryLockError::WouldBlock) => {
                let mut w = wait(WaitKind::Lock, self.name);
                let guard = self.inner.lock();
                w.ended_by(self.holder.swap_in());
                guard
            }
        }
    }

    /// Notes the taker of a lock that was free, and with `PP_LOCKS=every` records its
    /// acquisition as a wait of no length.
    #[inline]
    fn acquired(&self) {
        if every_lock() {
            drop(wait(WaitKind::Lock, self.name));
        }
        self.holder.note();
    }

    /// Acquires the lock if it is free (never waits, records nothing).
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        let guard = self.inner.try_lock();
        if !matches!(guard, Err(TryLockError::WouldBlock)) {
            self.holder.note();
        }
        guard
    }

    /// The value, through exclusive access (no locking).
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.inner.get_mut()
    }

    /// The name waits are recorded with.
    pub fn name(&self) -> Option<&'static str> {
        self.name
    }
}

/// A barrier that records `wait barrier [name]` around every [`Barrier::wait`].
#[derive(Debug)]
pub struct Barrier {
    name: Option<&'static str>,
    inner: std::sync::Barrier,
}

impl Barrier {
    /// An unnamed barrier for `n` threads.
    pub fn new(n: usize) -> Self {
        Barrier {
            name: None,
            inner: std::sync::Barrier::new(n),
        }
    }

    /// A barrier whose waits are recorded as `wait barrier <name>`.
    pub fn named(name: &'static str, n: usize) -> Self {
        Barrier {
            name: Some(name),
            inner: std::sync::Barrier::new(n),
        }
    }

    /// Blocks until all `n` threads have called `wait`.
    pub fn wait(&self) -> BarrierWaitResult {
        let _w = wait(WaitKind::Barrier, self.name);
        self.inner.wait()
    }
}

/// A condition variable that records `wait cond [name]` while waiting.
#[derive(Debug, Default)]
pub struct Condvar {
    name: Option<&'static str>,
    /// The thread that notified last: the one that ends a wait.
    notifier: Cause,
    /// Threads in a recorded wait on it: a notify records `release` only when there are.
    waiters: AtomicU32,
    inner: std::sync::Condvar,
}

impl Condvar {
    /// An unnamed condition variable.
    pub const fn new() -> Self {
        Condvar {
            name: None,
            notifier: Cause::new(),
            waiters: AtomicU32::new(0),
            inner: std::sync::Condvar::new(),
        }
    }

    /// A condition variable whose waits are recorded as `wait cond <name>`.
    pub const fn named(name: &'static str) -> Self {
        Condvar {
            name: Some(name),
            notifier: Cause::new(),
            waiters: AtomicU32::new(0),
            inner: std::sync::Condvar::new(),
        }
    }

    /// Waits for a notification, as [`std::sync::Condvar::wait`]; the wait's end names the
    /// thread that notified last (`by=<thread>`).
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        let mut w = wait(WaitKind::Cond, self.name);
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let guard = self.inner.wait(guard);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        w.ended_by(self.notifier.get());
        guard
    }

    /// Waits while `condition` holds, as [`std::sync::Condvar::wait_while`]; records a wait
    /// only if the condition holds at first.
    pub fn wait_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        if !condition(&mut *guard) {
            return Ok(guard);
        }
        let mut w = wait(WaitKind::Cond, self.name);
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let guard = self.inner.wait_while(guard, condition);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        w.ended_by(self.notifier.get());
        guard
    }

    /// Wakes one waiting thread, recording `release cond [name]` first where a thread waits
    /// (the point a skeleton's partner signals at: docs/skeletons.md#partners).
    pub fn notify_one(&self) {
        self.released();
        self.notifier.note();
        self.inner.notify_one();
    }

    /// Wakes all waiting threads, recording `release cond [name]` first where a thread waits.
    pub fn notify_all(&self) {
        self.released();
        self.notifier.note();
        self.inner.notify_all();
    }

    fn released(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            release(WaitKind::Cond, self.name);
        }
    }
}

/// An unbounded channel whose receiver records `wait recv [name]` while `recv` blocks, ended
/// `by=` the sending thread (each value travels with its sender's id). Sending never blocks; a
/// send that may end a wait (the receiver is in one) records `release recv [name]` after the
/// value went (where a skeleton's partner signals: docs/skeletons.md#partners).
///
/// ```
/// let (tx, rx) = pp_recorder::sync::channel("results");
/// std::thread::spawn(move || tx.send(42).unwrap());
/// assert_eq!(rx.recv(), Ok(42));
/// ```
pub fn channel<T>(name: &'static str) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = mpsc::channel();
    let waiting = Waiting::default();
    (
        Sender {
            name: Some(name),
            waiting: waiting.clone(),
            inner: tx,
        },
        Receiver::wrap(name, rx, waiting),
    )
}

/// The waits of a channel's receiver that no send has ended yet, shared by its ends: a send
/// records `release` only when there is one, and takes it. The receiver counts a wait and tries
/// again before it blocks, and a sender looks after its value went, each behind a full fence,
/// so a send that ends a wait always finds it (a send while the receiver is between its tries
/// may take one that then does not wait: the receiver gives it back where it can).
#[derive(Debug, Clone, Default)]
struct Waiting(Arc<AtomicU32>);

impl Waiting {
    /// After a send: takes a wait not ended yet, if there is one, and records
    /// `release recv [name]`.
    fn sent(&self, name: Option<&'static str>) {
        fence(Ordering::SeqCst);
        if self.0.load(Ordering::Relaxed) > 0 && self.take() {
            release(WaitKind::Recv, name);
        }
    }

    /// The receiver is about to wait.
    fn begin(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    /// Takes one wait back (the receiver did not wait after all, or its wait ended without a
    /// value); false if a send took it first.
    fn take(&self) -> bool {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// A value and the recorded thread that sent it.
type Sent<T> = (T, Option<ThreadId>);

/// The sending half of [`channel`]: [`std::sync::mpsc::Sender`] that also sends its thread.
#[derive(Debug)]
pub struct Sender<T> {
    name: Option<&'static str>,
    waiting: Waiting,
    inner: mpsc::Sender<Sent<T>>,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Sender {
            name: self.name,
            waiting: self.waiting.clone(),
            inner: self.inner.clone(),
        }
    }
}

impl<T> Sender<T> {
    /// Sends a value (never waits), then records `release recv [name]` if the receiver waits;
    /// fails when the receiver is gone.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.inner
            .send((value, current_thread()))
            .map_err(|SendError((v, _))| SendError(v))?;
        self.waiting.sent(self.name);
        Ok(())
    }
}

/// A bounded channel: `recv` records `wait recv [name]`, and a `send` that blocks on a full
/// channel records `wait send [name]`.
pub fn sync_channel<T>(name: &'static str, bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let (tx, rx) = mpsc::sync_channel(bound);
    let waiting = Waiting::default();
    (
        SyncSender {
            name: Some(name),
            waiting: waiting.clone(),
            inner: tx,
        },
        Receiver::wrap(name, rx, waiting),
    )
}

/// The receiving half of [`channel`] or [`sync_channel`].
#[derive(Debug)]
pub struct Receiver<T> {
    name: Option<&'static str>,
    waiting: Waiting,
    inner: mpsc::Receiver<Sent<T>>,
}

impl<T> Receiver<T> {
    fn wrap(name: &'static str, inner: mpsc::Receiver<Sent<T>>, waiting: Waiting) -> Self {
        Receiver {
            name: Some(name),
            waiting,
            inner,
        }
    }

    /// A value if one is ready; else counts a wait (a send after it records its release) and
    /// tries once more, giving the wait back if that finds one.
    fn ready(&self) -> Result<Option<Sent<T>>, TryRecvError> {
        match self.inner.try_recv() {
            Err(TryRecvError::Empty) => {}
            other => return other.map(Some),
        }
        self.waiting.begin();
        match self.inner.try_recv() {
            Err(TryRecvError::Empty) => Ok(None),
            other => {
                self.waiting.take();
                other.map(Some)
            }
        }
    }

    /// Receives a value, recording a wait only if none is ready.
    pub fn recv(&self) -> Result<T, RecvError> {
        match self.ready() {
            Ok(Some((v, _))) => Ok(v),
            Err(_) => Err(RecvError),
            Ok(None) => {
                let mut w = wait(WaitKind::Recv, self.name);
                let got = self.inner.recv();
                if got.is_err() {
                    self.waiting.take();
                }
                let (v, by) = got?;
                w.ended_by(by);
                Ok(v)
            }
        }
    }

    /// Receives a value waiting at most `timeout`, recording a wait only if none is ready.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        match self.ready() {
            Ok(Some((v, _))) => Ok(v),
            Err(_) => Err(RecvTimeoutError::Disconnected),
            Ok(None) => {
                let mut w = wait(WaitKind::Recv, self.name);
                let got = self.inner.recv_timeout(timeout);
                if got.is_err() {
                    self.waiting.take();
                }
                let (v, by) = got?;
                w.ended_by(by);
                Ok(v)
            }
        }
    }

    /// Receives a value if one is ready (never waits, records nothing).
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.inner.try_recv().map(|(v, _)| v)
    }

    /// The values until every sender is gone, each received with [`Receiver::recv`].
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(|| self.recv().ok())
    }
}

/// The sending half of [`sync_channel`].
#[derive(Debug)]
pub struct SyncSender<T> {
    name: Option<&'static str>,
    waiting: Waiting,
    inner: mpsc::SyncSender<Sent<T>>,
}

impl<T> Clone for SyncSender<T> {
    fn clone(&self) -> Self {
        SyncSender {
            name: self.name,
            waiting: self.waiting.clone(),
            inner: self.inner.clone(),
        }
    }
}

impl<T> SyncSender<T> {
    /// Sends a value, recording a wait only if the channel is full (its end names no thread:
    /// which receive made room is not known), then `release recv [name]` if the receiver waits.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        match self.inner.try_send((value, current_thread())) {
            Ok(()) => {}
            Err(TrySendError::Disconnected((v, _))) => return Err(SendError(v)),
            Err(TrySendError::Full(sent)) => {
                let _w = wait(WaitKind::Send, self.name);
                self.inner
                    .send(sent)
                    .map_err(|SendError((v, _))| SendError(v))?;
            }
        }
        self.waiting.sent(self.name);
        Ok(())
    }

    /// Sends a value if there is room (never waits), then records `release recv [name]` if
    /// the receiver waits.
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        self.inner
            .try_send((value, current_thread()))
            .map_err(|e| match e {
                TrySendError::Full((v, _)) => TrySendError::Full(v),
                TrySendError::Disconnected((v, _)) => TrySendError::Disconnected(v),
            })?;
        self.waiting.sent(self.name);
        Ok(())
    }
}
