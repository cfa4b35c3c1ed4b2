//! How a threaded skeleton's threads wait (docs/skeletons.md#spinning-waits): a wait polls for
//! as long as the application's wait used its processor (its thread's CPU clock, from the log's
//! `cpu` samples), then blocks. After a few polls that only pause, each poll yields the
//! processor ([`PAUSES`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use pp_recorder::{self as recorder, event::WaitKind};

/// How long a wait polls before it blocks: the wall nanoseconds it may poll for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget(pub u64);

impl Budget {
    /// The budget of a wait that lasted `wall_ns` in the application and used `cpu_ns` of CPU:
    /// that CPU time (at most the wait's), so that a wait that blocked at once blocks, one that
    /// spun through spins as long as it lasted, and one that spun, then slept, spins as long.
    pub fn of(wall_ns: u64, cpu_ns: u64) -> Budget {
        Budget(cpu_ns.min(wall_ns))
    }

    /// Polls `done` until it is true (then true) or the budget is spent (then false).
    pub fn poll(self, mut done: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        let mut polls = 0u32;
        loop {
            if done() {
                return true;
            }
            if start.elapsed() >= Duration::from_nanos(self.0) {
                return false;
            }
            if polls < PAUSES {
                polls += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Polls that only pause before a wait starts to yield the processor at each poll, as libomp's
/// waits do (`KMP_USE_YIELD`'s default) and rayon's idle workers (32 rounds of yields before they
/// sleep): where a thread it waits for shares its processor, a wait that never yielded would
/// keep it off for the rest of its time slice (measured beside a CPU hog, with waits that polled
/// until they ended: the OpenMP fft2d's skeleton ran 7-24 times slower with polls that only
/// paused, 5-8 times with polls that yielded, where the application ran 2.5 times slower).
pub const PAUSES: u32 = 64;

/// A barrier of `n` threads whose waits poll for their budget, then block; each wait is
/// recorded as `wait barrier [NAME]`, as the recorder's `Barrier` records one.
pub struct Barrier {
    name: Option<&'static str>,
    n: usize,
    /// Arrivals in the current generation, and the generation.
    state: Mutex<(usize, u64)>,
    /// The generation, for polls that do not take the lock.
    generation: AtomicU64,
    passed: Condvar,
}

impl Barrier {
    /// A barrier of `n` threads, recorded under `name`.
    pub fn new(name: Option<&'static str>, n: usize) -> Self {
        Barrier {
            name,
            n: n.max(1),
            state: Mutex::new((0, 0)),
            generation: AtomicU64::new(0),
            passed: Condvar::new(),
        }
    }

    /// Waits until all `n` threads have arrived.
    pub fn wait(&self, budget: Budget) {
        let _w = recorder::wait(WaitKind::Barrier, self.name);
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let g = s.1;
        s.0 += 1;
        if s.0 == self.n {
            *s = (0, g + 1);
            self.generation.store(g + 1, Ordering::Release);
            self.passed.notify_all();
            return;
        }
        drop(s);
        if budget.poll(|| self.generation.load(Ordering::Acquire) != g) {
            return;
        }
        let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let _s = self
            .passed
            .wait_while(s, |s| s.1 == g)
            .unwrap_or_else(PoisonError::into_inner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_polls_for_the_cpu_time_it_used_and_no_longer_than_it_lasted() {
        assert_eq!(Budget::of(1000, 1000), Budget(1000));
        assert_eq!(Budget::of(1000, 300), Budget(300));
        assert_eq!(Budget::of(1000, 0), Budget(0));
        // A sampled CPU time above the wall (the samples' granularity) is capped.
        assert_eq!(Budget::of(0, 50), Budget(0));
    }

    #[test]
    fn a_spent_budget_gives_up_and_a_met_condition_ends_the_poll() {
        assert!(!Budget(0).poll(|| false));
        assert!(Budget(0).poll(|| true));
        let mut n = 0;
        assert!(Budget(u64::MAX).poll(|| {
            n += 1;
            n == 1000
        }));
        let start = Instant::now();
        assert!(!Budget(1_000_000).poll(|| false));
        assert!(start.elapsed() >= Duration::from_millis(1));
    }

    #[test]
    fn the_barrier_lets_every_thread_through_every_generation_polling_or_blocking() {
        for budget in [Budget(u64::MAX), Budget(0), Budget(50_000)] {
            let b = Barrier::new(None, 3);
            let passed = AtomicU64::new(0);
            std::thread::scope(|s| {
                for _ in 0..3 {
                    s.spawn(|| {
                        for i in 0..200u64 {
                            // Nobody passes generation i before all three reached it.
                            assert!(passed.load(Ordering::SeqCst) >= 3 * i);
                            passed.fetch_add(1, Ordering::SeqCst);
                            b.wait(budget);
                        }
                    });
                }
            });
            assert_eq!(passed.load(Ordering::SeqCst), 600, "{budget:?}");
        }
    }
}
