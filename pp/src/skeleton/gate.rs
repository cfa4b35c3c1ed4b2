//! A region's fork and join in a skeleton's run (docs/skeletons.md#pp-skeleton-run): a counting
//! barrier of the threads that take part in a region. A thread's i-th arrival (at the fork, or
//! at the join) waits until every other participant has arrived there i times or has finished
//! its program, so that threads whose programs enter the region different numbers of times (their
//! loops were divided separately) pair their i-th parts and never deadlock.

use std::sync::{Condvar, Mutex, PoisonError};

/// Which of a region's two barriers.
#[derive(Debug, Clone, Copy)]
pub enum Point {
    /// Where the parts begin.
    Fork = 0,
    /// Where they end.
    Join = 1,
}

#[derive(Debug)]
struct State {
    /// Arrivals per point, per participant.
    arrived: [Vec<u64>; 2],
    /// Participants that have finished their programs.
    done: Vec<bool>,
}

/// The barrier pair of one region.
#[derive(Debug)]
pub struct Gate {
    state: Mutex<State>,
    changed: Condvar,
}

impl Gate {
    /// A gate of `n` participants (numbered `0..n`).
    pub fn new(n: usize) -> Self {
        Gate {
            state: Mutex::new(State {
                arrived: [vec![0; n], vec![0; n]],
                done: vec![false; n],
            }),
            changed: Condvar::new(),
        }
    }

    /// Participant `me` arrives at `point`; returns when every other has arrived as often or
    /// has finished.
    pub fn arrive(&self, me: usize, point: Point) {
        let p = point as usize;
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.arrived[p][me] += 1;
        let i = s.arrived[p][me];
        self.changed.notify_all();
        let _s = self
            .changed
            .wait_while(s, |s| {
                (0..s.done.len()).any(|u| u != me && !s.done[u] && s.arrived[p][u] < i)
            })
            .unwrap_or_else(PoisonError::into_inner);
    }

    /// Participant `me` has finished its program: nobody waits for it any more.
    pub fn finish(&self, me: usize) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.done[me] = true;
        self.changed.notify_all();
    }
}
