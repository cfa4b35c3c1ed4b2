//! `pp-recorder`: what an instrumented program links to write its event log (docs/event-log.md):
//! the events ([`event`]), the recording API at the crate root, and the log writers ([`log`]). It
//! depends on nothing beyond `std`, `libc`, the workspace's `files` and (for [`Team`]) rayon, so a
//! traced program pulls in no command-line or serialization crates; `pp` reads and profiles what it
//! writes.
//!
//! A [`Session`] opens the log (`$PP_LOG` or `./pp.log`) with the number of processors `p`
//! and the run parameters. Threads register as `0..p` ([`thread_start`], or a [`Team`], a
//! rayon pool of exactly `p` threads on which serial code runs too) and mark what they do:
//! [`region`]s, [`work`], [`wait`]s (recorded by the [`sync`] wrappers), [`comm`] with its byte
//! count, [`phase`]s. The guards end their interval on drop.
//!
//! Cost: one timestamp per event, appended to a thread-local buffer without a lock (a median
//! of about 10 ns per event with the TSC clock, 25 ns with `CLOCK_MONOTONIC`, see
//! [`ClockSource`]; converting and writing a full buffer adds about 10 ns per event). Thread
//! CPU time (about 0.5 µs a read) is sampled only at thread start/stop and at region
//! boundaries as each thread sees them.
//! A full buffer is written to `<path>.tmp` as one block, so a crash leaves a readable
//! prefix; [`Session::finish`] (or dropping the session) writes the rest and renames the file
//! to `<path>`. The buffers themselves are mapped from `<path>.tmp.buffers`, so a crash, even
//! SIGKILL, keeps the events they hold ([`spill`]; docs/event-log.md, "Crash-safe buffers").
//!
//! Environment: `PP_LOG` (log path, default `./pp.log`), `PP_CLOCK` (`tsc` or `monotonic`,
//! default: the TSC where the kernel keeps time with it), `PP_BUFFER_EVENTS` (events per
//! thread buffer, default [`DEFAULT_BUFFER_EVENTS`]), `PP_RUN_DELAY=0` (no run-queue delay in
//! the `cpu` samples: saves about 0.4 µs per sample, but time a thread waits for a core
//! outside its work then shows as idle or waiting instead of rc), `PP_CRASH_SAFE=0` (buffers in
//! the process's memory: a crash loses the events they hold), `PP_LOCKS=every` (a
//! [`sync::Mutex`] records every acquisition, not only those that wait).
//!
//! ```
//! use pp_recorder::{self as recorder, Session, sync::Mutex};
//! # let dir = std::env::temp_dir().join(format!("pp-doc-mod-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! let session = Session::builder(2).param("impl", "demo").path(dir.join("pp.log")).start()?;
//! let team = session.team()?;
//! let total = Mutex::named("total", 0u64);
//! team.run(|| { let _w = recorder::work("setup"); });            // serial work
//! team.region("sum", |part| {
//!     let mine: u64 = { let _w = recorder::work(None); (0..1000).map(|i| i * part.index() as u64).sum() };
//!     *total.lock().unwrap() += mine;                           // waits recorded if contended
//! });
//! drop(team);
//! let report = session.finish()?;
//! # assert!(report.events > 0);
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod event;
pub mod log;
pub mod sync;

mod buffer;
mod clock;
mod epoch;
mod interval;
mod log_file;
mod names;
mod raw;
mod session;
mod shared;
pub mod spill;
#[cfg(feature = "rayon")]
mod team;
mod team_table;

pub use clock::{ClockSource, RunDelay, thread_cpu_ns};
pub use epoch::Epoch;
pub use interval::{
    CommGuard, RegionGuard, ThreadGuard, WaitGuard, WorkGuard, comm, comm_begin, comm_end,
    cpu_sample, current_thread, flush, phase, region, region_begin, region_end, region_with_team,
    release, thread, thread_start, thread_start_at_epoch, thread_stop, wait, wait_begin, wait_end,
    wait_end_by, work, work_begin, work_end,
};
pub use names::name;
pub use session::{
    DEFAULT_BUFFER_EVENTS, DEFAULT_STOP_TIMEOUT, FinishReport, Session, SessionBuilder, log_path,
};
#[cfg(feature = "rayon")]
pub use team::{Part, Team, TeamScope};
