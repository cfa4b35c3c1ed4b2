//! A region's fork and join in a skeleton's run (docs/skeletons.md#pp-skeleton-run): a counting
//! barrier of the threads that take part in a region. A thread's i-th arrival (at the fork, or
//! at the join) waits until every other participant has arrived there i times or has finished
//! its program, so that threads whose programs enter the region different numbers of times (their
//! loops were divided separately) pair their i-th parts and never deadlock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use super::spinning::Budget;

/// Which of a region's two barriers.
#[derive(Debug, Clone, Copy)]
pub enum Point {
    /// Where the parts begin.
    Fork = 0,
    /// Where they end.
    Join = 1,
}

/// The barrier pair of one region. The counts are atomics so that a polling wait reads them
/// without the lock (a poller preempted while it held the lock would stall every arrival); they
/// change under the lock, so that a blocked wait misses no change.
#[derive(Debug)]
pub struct Gate {
    /// Arrivals per point, per participant.
    arrived: [Vec<AtomicU64>; 2],
    /// Participants that have finished their programs.
    done: Vec<AtomicBool>,
    lock: Mutex<()>,
    changed: Condvar,
}

impl Gate {
    /// A gate of `n` participants (numbered `0..n`).
    pub fn new(n: usize) -> Self {
        let counts = || (0..n).map(|_| AtomicU64::new(0)).collect();
        Gate {
            arrived: [counts(), counts()],
            done: (0..n).map(|_| AtomicBool::new(false)).collect(),
            lock: Mutex::new(()),
            changed: Condvar::new(),
        }
    }

    /// Participant `me` arrives at `point`; returns when every other has arrived as often or
    /// has finished. It polls for `budget` before it blocks (docs/skeletons.md#spinning-waits).
    pub fn arrive(&self, me: usize, point: Point, budget: Budget) {
        let arrived = &self.arrived[point as usize];
        let i = {
            let _l = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            let i = arrived[me].fetch_add(1, Ordering::SeqCst) + 1;
            self.changed.notify_all();
            i
        };
        let waiting = || {
            (0..self.done.len()).any(|u| {
                u != me
                    && !self.done[u].load(Ordering::SeqCst)
                    && arrived[u].load(Ordering::SeqCst) < i
            })
        };
        if budget.poll(|| !waiting()) {
            return;
        }
        let l = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let _l = self
            .changed
            .wait_while(l, |_| waiting())
            .unwrap_or_else(PoisonError::into_inner);
    }

    /// Participant `me` has finished its program: nobody waits for it any more.
    pub fn finish(&self, me: usize) {
        let _l = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.done[me].store(true, Ordering::SeqCst);
        self.changed.notify_all();
    }
}
