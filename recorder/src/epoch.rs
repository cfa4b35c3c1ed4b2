//! A session's time 0 taken before the session starts.
//!
//! A tracer that learns `p` only after the program has been running a while (the OMPT tool
//! learns it from the first parallel region's team) takes an [`Epoch`] when the program starts,
//! starts the [`Session`](crate::Session) later with
//! [`SessionBuilder::epoch`](crate::SessionBuilder::epoch), and registers the thread that took
//! the epoch with [`thread_start_at_epoch`](crate::thread_start_at_epoch): its `start`, its
//! first CPU sample and, if asked, the serial work it has been doing since, are recorded at
//! time 0 as if the session had started then.

use crate::clock::{Clock, ClockSource, RunDelay, thread_cpu_ns};

/// A moment on the session clock, with the CPU clock and run-queue delay of the thread that
/// took it.
#[derive(Debug, Clone, Copy)]
pub struct Epoch {
    pub(crate) clock: Clock,
    pub(crate) cpu: Option<u64>,
    pub(crate) delay: Option<u64>,
}

impl Epoch {
    /// Now, on the clock [`ClockSource::detect`] chooses (so `PP_CLOCK` applies), with the
    /// calling thread's CPU clock and run-queue delay.
    pub fn now() -> Epoch {
        Epoch::now_on(ClockSource::detect())
    }

    /// Now, on `source`. (The TSC's calibration sleeps about 5 ms once per process; a tracer
    /// loaded into every run may prefer [`ClockSource::Monotonic`].)
    pub fn now_on(source: ClockSource) -> Epoch {
        let cpu = thread_cpu_ns();
        let delay = RunDelay::open().read();
        Epoch {
            clock: Clock::start(source),
            cpu,
            delay,
        }
    }

    /// The `CLOCK_MONOTONIC` reading that is time 0, on the monotonic clock (`None` on the
    /// TSC). A tracer whose events share a log with another clock's (the OMPT tool's beside
    /// the MPI tracer's, docs/mpi.md) moves them onto one time base with it.
    pub fn monotonic_ns(&self) -> Option<u64> {
        (self.clock.source() == ClockSource::Monotonic).then(|| self.clock.base())
    }
}
