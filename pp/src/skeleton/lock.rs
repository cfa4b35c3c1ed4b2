//! A threaded skeleton's locks (docs/skeletons.md#pp-skeleton-run): taken by one step and
//! released after the next step's computation, so they have no guard. A wait for one is
//! recorded as `wait lock NAME`, as the recorder's `Mutex` records one, only when it blocks;
//! it [polls](super::spinning) for its budget, then sleeps.
//!
//! The order in which waiting threads get the lock is the application's runtime's
//! ([`Order`]): libomp's `critical` and locks are queuing locks, which serve the threads in the
//! order they asked, where the Rust recorder's `Mutex` is std's, which a thread that releases
//! it may take again before a waiter wakes. Beside a CPU hog that difference decides what the
//! waits turn into: with a queue, a waiter whose turn has come holds up the others until its
//! core runs it again (synchronization, as the application's); without one, the thread on the
//! free core takes the lock again and again and finishes first (imbalance at the barrier after).
//! A queued lock also records what libomp's tool records of it: a `release` at every release,
//! and a wait's end `by=` the thread that released it to the waiter, so that the skeleton's
//! waits are attributed as the application's are (docs/attribution.md#contention-during-waits).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use pp_recorder::{self as recorder, event::WaitKind};

use super::spinning::Budget;

/// Which waiting thread a released lock goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The one that asked first: a ticket lock, as libomp's queuing lock.
    Queue,
    /// Whoever takes it first, the releasing thread included: as std's `Mutex`.
    Barging,
}

/// A skeleton's lock. Whether it is free is read from atomics, so that a polling wait reads it
/// without taking `sleep`'s mutex.
pub struct Lock {
    name: Option<&'static str>,
    order: Order,
    /// [`Order::Barging`]: whether it is held.
    taken: AtomicBool,
    /// [`Order::Queue`]: the next ticket, and the ticket whose holder may have the lock.
    next: AtomicU64,
    serving: AtomicU64,
    /// The thread that took it last, kept in either order; a queued lock's waiter reads it as
    /// the thread that released the lock to it.
    holder: AtomicU32,
    sleep: Mutex<()>,
    freed: Condvar,
}

impl Lock {
    /// A free lock named `name`, handed over in `order`.
    pub fn new(name: Option<&'static str>, order: Order) -> Self {
        Lock {
            name,
            order,
            taken: AtomicBool::new(false),
            next: AtomicU64::new(0),
            serving: AtomicU64::new(0),
            holder: AtomicU32::new(0),
            sleep: Mutex::new(()),
            freed: Condvar::new(),
        }
    }

    /// Takes the lock for thread `me`: at once where it is free (and, queued, nobody asked
    /// before), else after a recorded wait that polls for `budget`, then sleeps until the lock
    /// is this thread's.
    pub fn acquire(&self, budget: Budget, me: u32) {
        let ticket = match self.order {
            Order::Queue => self.next.fetch_add(1, Ordering::SeqCst),
            Order::Barging => 0,
        };
        let mine = || match self.order {
            Order::Barging => self.take(),
            Order::Queue => self.serving.load(Ordering::SeqCst) == ticket,
        };
        if mine() {
            self.holder.store(me, Ordering::SeqCst);
            return;
        }
        let mut w = recorder::wait(WaitKind::Lock, self.name);
        if !budget.poll(mine) {
            let l = self.sleep.lock().unwrap_or_else(PoisonError::into_inner);
            let _l = self
                .freed
                .wait_while(l, |_| !mine())
                .unwrap_or_else(PoisonError::into_inner);
        }
        if self.order == Order::Queue {
            w.ended_by(Some(self.holder.load(Ordering::SeqCst)));
        }
        self.holder.store(me, Ordering::SeqCst);
    }

    /// Releases the lock (taken by this thread), waking the threads asleep on it.
    pub fn release(&self) {
        let _l = self.sleep.lock().unwrap_or_else(PoisonError::into_inner);
        match self.order {
            Order::Barging => {
                self.taken.store(false, Ordering::SeqCst);
                self.freed.notify_one();
            }
            Order::Queue => {
                // Recorded before the next holder can end its wait.
                recorder::release(WaitKind::Lock, self.name);
                self.serving.fetch_add(1, Ordering::SeqCst);
                // The next ticket's holder may be any of the sleepers.
                self.freed.notify_all();
            }
        }
    }

    fn take(&self) -> bool {
        self.taken
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Waits (for at most 10 s) until `f` holds.
    fn until(f: impl Fn() -> bool) {
        let start = Instant::now();
        while !f() {
            assert!(start.elapsed() < Duration::from_secs(10), "timed out");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The holder releases and asks again while another thread waits: a queue serves the
    /// waiter first, whatever the waiter's budget (polling, or asleep at once).
    #[test]
    fn a_queued_lock_goes_to_the_thread_that_asked_first() {
        for budget in [Budget::ns(0), Budget::ns(10_000_000_000)] {
            let lock = Lock::new(None, Order::Queue);
            let order = Mutex::new(Vec::new());
            lock.acquire(budget, 0);
            std::thread::scope(|s| {
                s.spawn(|| {
                    lock.acquire(budget, 0);
                    order.lock().unwrap().push("waiter");
                    lock.release();
                });
                until(|| lock.next.load(Ordering::SeqCst) == 2);
                lock.release();
                lock.acquire(budget, 0);
                order.lock().unwrap().push("holder again");
                lock.release();
            });
            assert_eq!(*order.lock().unwrap(), ["waiter", "holder again"]);
        }
    }

    /// Neither order lets two threads hold the lock at once, and every acquisition ends.
    #[test]
    fn one_holder_at_a_time_in_either_order() {
        for order in [Order::Queue, Order::Barging] {
            for budget in [Budget::ns(0), Budget::ns(2_000)] {
                let lock = Lock::new(Some("l"), order);
                let inside = AtomicU32::new(0);
                let most = AtomicU32::new(0);
                std::thread::scope(|s| {
                    for _ in 0..4 {
                        s.spawn(|| {
                            for _ in 0..500 {
                                lock.acquire(budget, 0);
                                let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                                most.fetch_max(n, Ordering::SeqCst);
                                std::hint::spin_loop();
                                inside.fetch_sub(1, Ordering::SeqCst);
                                lock.release();
                            }
                        });
                    }
                });
                assert_eq!(most.load(Ordering::SeqCst), 1, "{order:?}");
                assert_eq!(
                    lock.serving.load(Ordering::SeqCst),
                    lock.next.load(Ordering::SeqCst)
                );
            }
        }
    }
}
