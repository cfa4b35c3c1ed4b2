//! Synchronization wrappers that record their blocking waits: [`Mutex`] (`wait lock`),
//! [`Barrier`] (`wait barrier`), [`Condvar`] (`wait cond`) and channels (`wait recv`,
//! `wait send`).
//!
//! They wrap the `std::sync` types and behave like them. A wait is recorded only when the
//! operation would block: the lock, receive or send is tried first, so an uncontended lock
//! costs one extra `try_lock` and records nothing.
//!
//! ```
//! use pp::recorder::sync::Mutex;
//! static TOTAL: Mutex<u64> = Mutex::named("total", 0);
//! *TOTAL.lock().unwrap() += 1;
//! ```

use std::sync::mpsc::{self, RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use std::sync::{BarrierWaitResult, LockResult, MutexGuard, TryLockError, TryLockResult};
use std::time::Duration;

use crate::event::WaitKind;

use super::interval::wait;

/// A mutual-exclusion lock that records `wait lock [name]` while a `lock` blocks.
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized> {
    name: Option<&'static str>,
    inner: std::sync::Mutex<T>,
}

impl<T> Mutex<T> {
    /// An unnamed lock.
    pub const fn new(value: T) -> Self {
        Mutex {
            name: None,
            inner: std::sync::Mutex::new(value),
        }
    }

    /// A lock whose waits are recorded as `wait lock <name>`.
    pub const fn named(name: &'static str, value: T) -> Self {
        Mutex {
            name: Some(name),
            inner: std::sync::Mutex::new(value),
        }
    }

    /// The protected value.
    pub fn into_inner(self) -> LockResult<T> {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Acquires the lock, recording a wait only if it is held by another thread. Poisoning as
    /// in [`std::sync::Mutex::lock`].
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        match self.inner.try_lock() {
            Ok(guard) => Ok(guard),
            Err(TryLockError::Poisoned(p)) => Err(p),
            Err(TryLockError::WouldBlock) => {
                let _w = wait(WaitKind::Lock, self.name);
                self.inner.lock()
            }
        }
    }

    /// Acquires the lock if it is free (never waits, records nothing).
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        self.inner.try_lock()
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
    inner: std::sync::Condvar,
}

impl Condvar {
    /// An unnamed condition variable.
    pub const fn new() -> Self {
        Condvar {
            name: None,
            inner: std::sync::Condvar::new(),
        }
    }

    /// A condition variable whose waits are recorded as `wait cond <name>`.
    pub const fn named(name: &'static str) -> Self {
        Condvar {
            name: Some(name),
            inner: std::sync::Condvar::new(),
        }
    }

    /// Waits for a notification, as [`std::sync::Condvar::wait`].
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        let _w = wait(WaitKind::Cond, self.name);
        self.inner.wait(guard)
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
        let _w = wait(WaitKind::Cond, self.name);
        self.inner.wait_while(guard, condition)
    }

    /// Wakes one waiting thread.
    pub fn notify_one(&self) {
        self.inner.notify_one();
    }

    /// Wakes all waiting threads.
    pub fn notify_all(&self) {
        self.inner.notify_all();
    }
}

/// An unbounded channel whose receiver records `wait recv [name]` while `recv` blocks.
/// Sending never blocks, so the sender is [`std::sync::mpsc::Sender`].
///
/// ```
/// let (tx, rx) = pp::recorder::sync::channel("results");
/// std::thread::spawn(move || tx.send(42).unwrap());
/// assert_eq!(rx.recv(), Ok(42));
/// ```
pub fn channel<T>(name: &'static str) -> (mpsc::Sender<T>, Receiver<T>) {
    let (tx, rx) = mpsc::channel();
    (tx, Receiver::wrap(name, rx))
}

/// A bounded channel: `recv` records `wait recv [name]`, and a `send` that blocks on a full
/// channel records `wait send [name]`.
pub fn sync_channel<T>(name: &'static str, bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let (tx, rx) = mpsc::sync_channel(bound);
    (
        SyncSender {
            name: Some(name),
            inner: tx,
        },
        Receiver::wrap(name, rx),
    )
}

/// The receiving half of [`channel`] or [`sync_channel`].
#[derive(Debug)]
pub struct Receiver<T> {
    name: Option<&'static str>,
    inner: mpsc::Receiver<T>,
}

impl<T> Receiver<T> {
    fn wrap(name: &'static str, inner: mpsc::Receiver<T>) -> Self {
        Receiver {
            name: Some(name),
            inner,
        }
    }

    /// Receives a value, recording a wait only if none is ready.
    pub fn recv(&self) -> Result<T, RecvError> {
        match self.inner.try_recv() {
            Ok(v) => Ok(v),
            Err(TryRecvError::Disconnected) => Err(RecvError),
            Err(TryRecvError::Empty) => {
                let _w = wait(WaitKind::Recv, self.name);
                self.inner.recv()
            }
        }
    }

    /// Receives a value waiting at most `timeout`, recording a wait only if none is ready.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        match self.inner.try_recv() {
            Ok(v) => Ok(v),
            Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {
                let _w = wait(WaitKind::Recv, self.name);
                self.inner.recv_timeout(timeout)
            }
        }
    }

    /// Receives a value if one is ready (never waits, records nothing).
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.inner.try_recv()
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
    inner: mpsc::SyncSender<T>,
}

impl<T> Clone for SyncSender<T> {
    fn clone(&self) -> Self {
        SyncSender {
            name: self.name,
            inner: self.inner.clone(),
        }
    }
}

impl<T> SyncSender<T> {
    /// Sends a value, recording a wait only if the channel is full.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        match self.inner.try_send(value) {
            Ok(()) => Ok(()),
            Err(TrySendError::Disconnected(v)) => Err(SendError(v)),
            Err(TrySendError::Full(v)) => {
                let _w = wait(WaitKind::Send, self.name);
                self.inner.send(v)
            }
        }
    }

    /// Sends a value if there is room (never waits, records nothing).
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        self.inner.try_send(value)
    }
}
