//! A recording session: one run, one log. At most one session is active in a process.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};
use std::time::Duration;

use crate::buffer;
use crate::clock::{Clock, ClockSource};
use crate::epoch::Epoch;
use crate::event::{Header, ThreadId};
use crate::log_file::LogFile;
use crate::shared::{self, Shared};
use crate::spill::Spill;

/// Default capacity of a thread's buffer, in events (40 bytes each: 640 KiB per thread).
pub const DEFAULT_BUFFER_EVENTS: usize = 16 * 1024;

/// Default time [`Session::finish`] waits for registered threads to stop.
pub const DEFAULT_STOP_TIMEOUT: Duration = Duration::from_secs(2);

/// A recording session: opens the log, gives the threads that register with it
/// ([`thread_start`](crate::thread_start), or a [`Team`](crate::Team)) a clock and a writer,
/// and on [`finish`](Session::finish) (or drop) completes the log.
///
/// The log goes to `$PP_LOG`, or `./pp.log`, or the path given to [`SessionBuilder::path`].
/// During the run it is written to `<path>.tmp`, a block at a time, so that a crash leaves a
/// readable prefix; finishing renames it over `<path>`, replacing the previous run's log.
/// The threads' buffers are kept in `<path>.tmp.buffers` (with their names in
/// `<path>.tmp.names`), so that the events not yet written when a crash or a signal stops
/// the program survive it too: `pp run` and `pp recover` complete the log from them
/// (docs/event-log.md, "Crash-safe buffers"). Finishing removes both files.
///
/// ```
/// use pp_recorder::{self as recorder, Session};
/// # let dir = std::env::temp_dir().join(format!("pp-doc-session-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let session = Session::builder(1)
///     .param("impl", "serial")
///     .path(dir.join("pp.log"))
///     .start()?;
/// recorder::thread_start(0);
/// {
///     let _w = recorder::work("sum");
///     let _s: u64 = (0..1000u64).sum();
/// }
/// recorder::thread_stop();
/// let report = session.finish()?;
/// assert!(report.path.exists());
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Session {
    shared: Arc<Shared>,
    path: PathBuf,
    tmp: PathBuf,
    stop_timeout: Duration,
    done: bool,
}

/// What [`Session::finish`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishReport {
    /// The final path of the log.
    pub path: PathBuf,
    /// Events written.
    pub events: u64,
    /// Threads that were still registered when the stop timeout passed: their events since
    /// their last flush and their `stop` are missing from the log.
    pub unstopped: Vec<ThreadId>,
    /// Blocks the log writer refused (left out, the log stays valid), e.g. an explicit team
    /// naming a thread that is not below `p`.
    pub refused_blocks: u64,
    /// Why the first refused block was refused.
    pub first_refusal: Option<String>,
}

/// Settings of a [`Session`] before it starts.
#[derive(Debug, Clone)]
pub struct SessionBuilder {
    p: u32,
    params: Vec<(String, String)>,
    path: Option<PathBuf>,
    buffer_events: usize,
    clock: Option<ClockSource>,
    epoch: Option<Epoch>,
    stop_timeout: Duration,
    crash_safe: bool,
}

impl Session {
    /// Starts a session of `p` processors with run parameters `params` (copied into the log
    /// header), writing to `$PP_LOG` or `./pp.log`.
    ///
    /// ```no_run
    /// let session = pp_recorder::Session::start(4, &[("impl", "dp"), ("n", "256")])?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start(p: u32, params: &[(&str, &str)]) -> io::Result<Session> {
        let mut b = Session::builder(p);
        for &(k, v) in params {
            b = b.param(k, v);
        }
        b.start()
    }

    /// A builder for a session of `p` processors.
    pub fn builder(p: u32) -> SessionBuilder {
        SessionBuilder {
            p,
            params: Vec::new(),
            path: None,
            buffer_events: std::env::var("PP_BUFFER_EVENTS")
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .map_or(DEFAULT_BUFFER_EVENTS, |n| n.max(1)),
            clock: None,
            epoch: None,
            stop_timeout: DEFAULT_STOP_TIMEOUT,
            crash_safe: std::env::var("PP_CRASH_SAFE").as_deref() != Ok("0"),
        }
    }

    /// The number of processors (threads of the team).
    pub fn p(&self) -> u32 {
        self.shared.p
    }

    /// The final path of the log.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path the log is written to until the session finishes (`<path>.tmp`).
    pub fn tmp_path(&self) -> &Path {
        &self.tmp
    }

    /// The timestamp clock in use.
    pub fn clock_source(&self) -> ClockSource {
        self.shared.clock.source()
    }

    /// A [`Team`](crate::Team) of `p` threads, ids `0..p`.
    #[cfg(feature = "rayon")]
    pub fn team(&self) -> io::Result<crate::Team> {
        crate::Team::new(self.shared.p as usize)
    }

    /// Completes the log: stops the calling thread if it is registered, stops the threads of
    /// every live [`Team`](crate::Team), waits (up to the stop timeout) for other registered
    /// threads to stop, writes the end marker and renames `<path>.tmp` to `<path>`.
    ///
    /// On a write error the `.tmp` prefix stays and the error is returned. Call it outside the
    /// parallel constructs of a team (it asks the team's threads to stop).
    pub fn finish(mut self) -> io::Result<FinishReport> {
        self.finish_inner()
    }

    fn finish_inner(&mut self) -> io::Result<FinishReport> {
        self.done = true;
        shared::deactivate(&self.shared);
        let shared = self.shared.clone();
        buffer::stop_if(|s| Arc::ptr_eq(s, &shared));
        #[cfg(feature = "rayon")]
        crate::team::stop_live_teams(&self.shared);
        let unstopped = self.shared.wait_stopped(self.stop_timeout);
        let (events, (refused_blocks, first_refusal)) = self.shared.close_log()?;
        Ok(FinishReport {
            path: self.path.clone(),
            events,
            unstopped,
            refused_blocks,
            first_refusal,
        })
    }
}

impl Drop for Session {
    /// Finishes the session if [`Session::finish`] was not called (errors are lost).
    fn drop(&mut self) {
        if !self.done {
            let _ = self.finish_inner();
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("p", &self.shared.p)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SessionBuilder {
    /// Adds a run parameter `key=value` to the header: both non-empty, without whitespace or
    /// `#`, the key without `=`, not `p`, not repeated (checked by [`SessionBuilder::start`]).
    pub fn param(mut self, key: impl Into<String>, value: impl ToString) -> Self {
        self.params.push((key.into(), value.to_string()));
        self
    }

    /// Writes the log to `path` instead of `$PP_LOG` or `./pp.log`.
    pub fn path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The capacity of each thread's buffer, in events (at least 1; default
    /// `$PP_BUFFER_EVENTS`, else [`DEFAULT_BUFFER_EVENTS`]). A full buffer is written as one
    /// block of the log.
    pub fn buffer_events(mut self, events: usize) -> Self {
        self.buffer_events = events.max(1);
        self
    }

    /// Whether the threads' buffers are kept in `<path>.tmp.buffers`, mapped shared, so that
    /// a crash keeps their events (default: yes, unless `PP_CRASH_SAFE=0`). Without it the
    /// buffers are in the process's memory and a crash loses what they hold.
    pub fn crash_safe(mut self, yes: bool) -> Self {
        self.crash_safe = yes;
        self
    }

    /// The timestamp clock (default: [`ClockSource::detect`]).
    pub fn clock(mut self, source: ClockSource) -> Self {
        self.clock = Some(source);
        self
    }

    /// Takes `epoch` as the log's time 0 (and its clock, instead of [`SessionBuilder::clock`]):
    /// for a tracer that learns `p` after the program started. The thread that took it then
    /// registers with [`thread_start_at_epoch`](crate::thread_start_at_epoch).
    pub fn epoch(mut self, epoch: Epoch) -> Self {
        self.epoch = Some(epoch);
        self
    }

    /// How long [`Session::finish`] waits for registered threads to stop (default 2 s).
    pub fn stop_timeout(mut self, timeout: Duration) -> Self {
        self.stop_timeout = timeout;
        self
    }

    /// Opens the log and makes the session the active one.
    ///
    /// # Errors
    /// `InvalidInput` for `p = 0` or a malformed or repeated parameter (the message names
    /// it), `AlreadyExists` when another
    /// session is active, or the error of creating the log file.
    pub fn start(self) -> io::Result<Session> {
        let mut paths = None;
        let shared = shared::activate(|| {
            let path = resolve_path(self.path, std::env::var_os("PP_LOG"));
            let header = Header {
                p: self.p,
                params: self.params,
            };
            let log = LogFile::create(&path, &header).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("creating the log {}: {e}", path.display()),
                )
            })?;
            paths = Some((log.path().to_path_buf(), log.tmp().to_path_buf()));
            let clock = match self.epoch {
                Some(e) => e.clock,
                None => Clock::start(self.clock.unwrap_or_else(ClockSource::detect)),
            };
            let spill = Spill::create(log.tmp(), self.buffer_events, &clock, self.crash_safe);
            Ok(Shared::new(self.p, clock, self.epoch, spill, log))
        })?;
        let (path, tmp) = paths.expect("set when the session was made");
        install_panic_hook();
        Ok(Session {
            shared,
            path,
            tmp,
            stop_timeout: self.stop_timeout,
            done: false,
        })
    }
}

/// The log a session writes unless told otherwise: `explicit`, else `$PP_LOG` (if not empty),
/// else `./pp.log`. Tools that start a recorded program (`pp run`, `pp skeleton run`) name
/// its log by the same rule.
pub fn log_path(explicit: Option<PathBuf>) -> PathBuf {
    resolve_path(explicit, std::env::var_os("PP_LOG"))
}

/// The log path: the explicit one, else `$PP_LOG` (if not empty), else `./pp.log`.
pub(crate) fn resolve_path(explicit: Option<PathBuf>, env: Option<OsString>) -> PathBuf {
    explicit
        .or_else(|| env.filter(|e| !e.is_empty()).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("pp.log"))
}

/// Installs (once per process) a panic hook that flushes the panicking thread's buffer before
/// the previous hook runs, so that the `.tmp` log holds the thread's events even if the panic
/// aborts the process.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            buffer::flush_for_panic();
            previous(info);
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_prefers_explicit_then_env_then_default() {
        let env = Some(OsString::from("/tmp/x.log"));
        assert_eq!(
            resolve_path(Some("a.log".into()), env.clone()),
            Path::new("a.log")
        );
        assert_eq!(resolve_path(None, env), Path::new("/tmp/x.log"));
        assert_eq!(
            resolve_path(None, Some(OsString::new())),
            Path::new("pp.log")
        );
        assert_eq!(resolve_path(None, None), Path::new("pp.log"));
    }
}
