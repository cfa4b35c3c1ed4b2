//! How a threaded skeleton's threads wait (docs/skeletons.md#spinning-waits): a wait polls, then
//! blocks. How long it polls, and how often a poll yields the processor, follows the
//! application's runtime ([`Waits`]): libomp's policy where the log says its blocktime, else as
//! long as the application's wait used its processor (its thread's CPU clock, from the log's
//! `cpu` samples).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use pp_recorder::{self as recorder, event::WaitKind};

/// How a skeleton's waits poll before they block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waits {
    /// For as long as the application's wait used its processor (its `op_cpu_ns`, at most its
    /// `op_ns`); after [`PAUSES`] polls that only pause, each poll yields.
    Measured,
    /// As libomp's waits: until the wait ends or `blocktime_ns` has passed, yielding after every
    /// [`LIBOMP_PAUSES`] pauses, or at every poll where the threads outnumber the processors
    /// (`oversubscribed`), as libomp yields when it is oversubscribed.
    Libomp {
        blocktime_ns: u64,
        oversubscribed: bool,
    },
}

impl Waits {
    /// The policy of a skeleton of `p` threads whose application ran on libomp with this
    /// blocktime (its log's `omp_blocktime_ms`), or on another runtime (`None`), on the
    /// processors this process may use.
    pub fn of(p: u32, omp_blocktime_ms: Option<u64>) -> Waits {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        match omp_blocktime_ms {
            None => Waits::Measured,
            Some(ms) => Waits::Libomp {
                blocktime_ns: ms.saturating_mul(1_000_000),
                oversubscribed: p as usize > cpus,
            },
        }
    }

    /// The budget of a wait that lasted `wall_ns` in the application and used `cpu_ns` of CPU.
    pub fn budget(self, wall_ns: u64, cpu_ns: u64) -> Budget {
        match self {
            Waits::Measured => Budget::of(wall_ns, cpu_ns),
            Waits::Libomp {
                blocktime_ns,
                oversubscribed,
            } => Budget {
                ns: blocktime_ns,
                yields: Yields::Every(if oversubscribed { 1 } else { LIBOMP_PAUSES }),
            },
        }
    }
}

/// When a poll yields the processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Yields {
    /// After [`PAUSES`] polls that only pause, at every poll.
    AfterPauses,
    /// At every n-th poll (n ≥ 1), the others pause.
    Every(u32),
}

/// How long a wait polls before it blocks (the wall nanoseconds it may poll for), and how its
/// polls yield.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub ns: u64,
    pub yields: Yields,
}

impl Budget {
    /// A wait that polls for `ns`, yielding after [`PAUSES`] pauses.
    pub fn ns(ns: u64) -> Budget {
        Budget {
            ns,
            yields: Yields::AfterPauses,
        }
    }

    /// The budget of a wait that lasted `wall_ns` in the application and used `cpu_ns` of CPU:
    /// that CPU time (at most the wait's), so that a wait that blocked at once blocks, one that
    /// spun through spins as long as it lasted, and one that spun, then slept, spins as long.
    pub fn of(wall_ns: u64, cpu_ns: u64) -> Budget {
        Budget::ns(cpu_ns.min(wall_ns))
    }

    /// Polls `done` until it is true (then true) or the budget is spent (then false).
    pub fn poll(self, mut done: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        let mut polls = 0u32;
        loop {
            if done() {
                return true;
            }
            if start.elapsed() >= Duration::from_nanos(self.ns) {
                return false;
            }
            polls = polls.wrapping_add(1);
            let yields = match self.yields {
                Yields::AfterPauses => polls > PAUSES,
                Yields::Every(n) => polls.is_multiple_of(n.max(1)),
            };
            if yields {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// Polls that only pause before a wait starts to yield the processor at each poll, as rayon's
/// idle workers do (32 rounds of yields before they sleep): where a thread it waits for shares
/// its processor, a wait that never yielded would keep it off for the rest of its time slice
/// (measured beside a CPU hog, with waits that polled until they ended: the OpenMP fft2d's
/// skeleton ran 7-24 times slower with polls that only paused, 5-8 times with polls that
/// yielded, where the application ran 2.5 times slower).
pub const PAUSES: u32 = 64;

/// Pauses between two yields of a libomp-like wait that is not oversubscribed. Chosen by
/// measurement (docs/skeletons.md#spinning-waits): the OpenMP fft2d (2,000 iterations, p = 2)
/// called `sched_yield` 125,471 times beside a CPU hog; its K = 5 skeleton with a yield every
/// 256 pauses called it 22,279 times (x 5: 111,395), with every 1,024, 6,733 (x 5: 33,665).
pub const LIBOMP_PAUSES: u32 = 256;

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
        assert_eq!(Budget::of(1000, 1000), Budget::ns(1000));
        assert_eq!(Budget::of(1000, 300), Budget::ns(300));
        assert_eq!(Budget::of(1000, 0), Budget::ns(0));
        // A sampled CPU time above the wall (the samples' granularity) is capped.
        assert_eq!(Budget::of(0, 50), Budget::ns(0));
        assert_eq!(Waits::Measured.budget(1000, 300), Budget::ns(300));
    }

    #[test]
    fn a_libomp_wait_polls_for_the_blocktime_whatever_the_application_waited() {
        let w = Waits::of(1, Some(200));
        assert_eq!(
            w,
            Waits::Libomp {
                blocktime_ns: 200_000_000,
                oversubscribed: false
            }
        );
        for (wall, cpu) in [(0, 0), (1000, 300), (u64::MAX, u64::MAX)] {
            assert_eq!(
                w.budget(wall, cpu),
                Budget {
                    ns: 200_000_000,
                    yields: Yields::Every(LIBOMP_PAUSES)
                }
            );
        }
        // Passive waits block at once; more threads than processors yield at every poll.
        assert_eq!(Waits::of(1, Some(0)).budget(1000, 1000).ns, 0);
        let many = Waits::of(u32::MAX, Some(u64::MAX));
        assert_eq!(many.budget(0, 0).yields, Yields::Every(1));
        assert_eq!(many.budget(0, 0).ns, u64::MAX);
        assert_eq!(Waits::of(2, None), Waits::Measured);
    }

    #[test]
    fn a_spent_budget_gives_up_and_a_met_condition_ends_the_poll() {
        for yields in [Yields::AfterPauses, Yields::Every(1), Yields::Every(256)] {
            let budget = |ns| Budget { ns, yields };
            assert!(!budget(0).poll(|| false));
            assert!(budget(0).poll(|| true));
            let mut n = 0;
            assert!(budget(u64::MAX).poll(|| {
                n += 1;
                n == 1000
            }));
            let start = Instant::now();
            assert!(!budget(1_000_000).poll(|| false));
            assert!(start.elapsed() >= Duration::from_millis(1));
        }
    }

    #[test]
    fn the_barrier_lets_every_thread_through_every_generation_polling_or_blocking() {
        for budget in [Budget::ns(u64::MAX), Budget::ns(0), Budget::ns(50_000)] {
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
