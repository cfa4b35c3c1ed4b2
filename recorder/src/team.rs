//! The rayon integration: a [`Team`] is a pool of exactly `p` threads, registered as threads
//! `0..p` of the session, on which serial code runs too ([`Team::run`]), so that `p`
//! processors means `p` threads.
//!
//! Parallel constructs record `region_begin`/`region_end` on the thread that opens them and a
//! `work` interval around each task on the thread that runs it; each thread samples its CPU
//! clock when it enters and leaves its part of a region. Idle workers record nothing: the
//! profiler attributes idle time.
//!
//! Do not start parallel constructs (rayon `join`, parallel iterators, nested team
//! constructs) inside a recorded task: a thread that waits in them runs other tasks, whose
//! work intervals would nest in its own.

use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::Duration;

use crate::buffer;
use crate::event::ThreadId;
use crate::interval::{RegionGuard, cpu_sample, phase, thread_start, thread_stop, work};
use crate::shared::{self, Shared};

/// How long dropping a team waits for its threads to record `stop` and exit.
const EXIT_TIMEOUT: Duration = Duration::from_secs(5);

/// Live teams, so that finishing a session can stop their (idle) threads.
static TEAMS: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());

struct Inner {
    pool: rayon::ThreadPool,
    first: ThreadId,
    threads: usize,
    /// The session generation whose registration of every thread was checked.
    registered: AtomicU64,
}

/// A rayon thread pool of exactly `n` recorded threads.
///
/// ```
/// use pp_recorder::{self as recorder, Session, Team};
/// # let dir = std::env::temp_dir().join(format!("pp-doc-team-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let session = Session::builder(2).path(dir.join("pp.log")).start()?;
/// let team = Team::new(2)?;
/// let squares: Vec<u64> = team.run(|| {
///     let _serial = recorder::work("setup");   // serial work on a team thread
///     (0..8).collect()
/// });
/// let sum = std::sync::atomic::AtomicU64::new(0);
/// team.parallel_for("square", 0..squares.len(), 2, |i| {
///     sum.fetch_add(squares[i] * squares[i], std::sync::atomic::Ordering::Relaxed);
/// });
/// drop(team);
/// session.finish()?;
/// assert_eq!(sum.into_inner(), 140);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Team {
    /// `None` only while dropping.
    inner: Option<Arc<Inner>>,
    exited: Arc<(Mutex<usize>, Condvar)>,
}

/// One thread's part of a [`Team::region`].
#[derive(Debug, Clone, Copy)]
pub struct Part {
    index: usize,
    threads: usize,
    thread: ThreadId,
}

impl Part {
    /// The thread's index in the team, `0..threads()`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of threads of the team.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The thread's id in the log.
    pub fn thread(&self) -> ThreadId {
        self.thread
    }
}

/// The scope of a [`Team::scope`] region: spawned tasks are recorded as work.
pub struct TeamScope<'a, 'scope> {
    inner: &'a rayon::Scope<'scope>,
}

impl<'scope> TeamScope<'_, 'scope> {
    /// Spawns a task of the region, recorded as a `work` interval on the thread that runs it.
    pub fn spawn<F>(&self, task: F)
    where
        F: for<'b> FnOnce(&TeamScope<'b, 'scope>) + Send + 'scope,
    {
        self.inner.spawn(move |s| {
            let _w = work(None);
            task(&TeamScope { inner: s });
        });
    }
}

impl Team {
    /// A team of `n` threads with ids `0..n`.
    pub fn new(n: usize) -> io::Result<Team> {
        Team::with_first_id(n, 0)
    }

    /// A team of `n` threads with ids `first..first + n`.
    pub fn with_first_id(n: usize, first: ThreadId) -> io::Result<Team> {
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a team needs at least one thread",
            ));
        }
        let exited = Arc::new((Mutex::new(0usize), Condvar::new()));
        let on_exit = exited.clone();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(move |i| format!("pp-team-{}", first as usize + i))
            .start_handler(move |i| {
                thread_start(first + i as ThreadId);
            })
            .exit_handler(move |_| {
                thread_stop();
                let (count, cv) = &*on_exit;
                *count.lock().unwrap_or_else(PoisonError::into_inner) += 1;
                cv.notify_all();
            })
            .build()
            .map_err(io::Error::other)?;
        let inner = Arc::new(Inner {
            pool,
            first,
            threads: n,
            registered: AtomicU64::new(0),
        });
        let mut teams = TEAMS.lock().unwrap_or_else(PoisonError::into_inner);
        teams.retain(|t| t.strong_count() > 0);
        teams.push(Arc::downgrade(&inner));
        Ok(Team {
            inner: Some(inner),
            exited,
        })
    }

    /// The number of threads.
    pub fn threads(&self) -> usize {
        self.inner().threads
    }

    /// The underlying rayon pool (work run on it directly is not recorded unless it calls the
    /// recorder itself).
    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.inner().pool
    }

    /// Runs `f` on a thread of the team (serial code is one of the `p` processors); the
    /// calling thread blocks. Inside, record serial work with [`work`].
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.ensure_registered();
        self.inner().pool.install(f)
    }

    /// Records `phase <name>` on every thread of the team.
    pub fn phase(&self, name: &'static str) {
        self.ensure_registered();
        self.inner().pool.broadcast(|_| phase(name));
    }

    /// An SPMD region (like `#pragma omp parallel`): `f` runs once on every thread of the team,
    /// which records the work it does itself ([`work`], [`comm`](crate::comm), the
    /// [`sync`](crate::sync) wrappers). Each thread samples its CPU clock before and after its
    /// part (two reads of about 0.5 µs each: keep regions well above that); a thread of the
    /// team records `region_begin`/`region_end`. Returns the parts' results by thread index.
    pub fn region<R, F>(&self, name: &'static str, f: F) -> Vec<R>
    where
        R: Send,
        F: Fn(Part) -> R + Sync,
    {
        self.ensure_registered();
        let inner = self.inner();
        inner.pool.install(|| {
            let _region = RegionGuard::begin(name, self.explicit_team().as_deref(), false);
            inner.pool.broadcast(|ctx| {
                cpu_sample();
                let r = f(Part {
                    index: ctx.index(),
                    threads: inner.threads,
                    thread: inner.first + ctx.index() as ThreadId,
                });
                cpu_sample();
                r
            })
        })
    }

    /// A parallel loop over `range` in chunks of `chunk` indices handed out dynamically
    /// (`schedule(dynamic, chunk)`): one region, each chunk a `work` interval.
    pub fn parallel_for<F>(&self, name: &'static str, range: Range<usize>, chunk: usize, f: F)
    where
        F: Fn(usize) + Sync,
    {
        let chunk = chunk.max(1);
        let chunks = range.len().div_ceil(chunk);
        let next = AtomicUsize::new(0);
        self.region(name, |_| {
            loop {
                let c = next.fetch_add(1, Ordering::Relaxed);
                if c >= chunks {
                    break;
                }
                let lo = range.start + c * chunk;
                let hi = (lo + chunk).min(range.end);
                let _w = work(None);
                for i in lo..hi {
                    f(i);
                }
            }
        });
    }

    /// A task-parallel region: `f` spawns tasks on the [`TeamScope`], each recorded as work on
    /// the thread that runs it; the region ends when all tasks are done. Every thread samples
    /// its CPU clock at the region's begin and end.
    pub fn scope<'scope, R, F>(&self, name: &'static str, f: F) -> R
    where
        R: Send,
        F: for<'a> FnOnce(&'a TeamScope<'a, 'scope>) -> R + Send,
    {
        self.ensure_registered();
        let inner = self.inner();
        inner.pool.install(|| {
            let _region = RegionGuard::begin(name, self.explicit_team().as_deref(), false);
            inner.pool.broadcast(|_| cpu_sample());
            let r = rayon::scope(|s| f(&TeamScope { inner: s }));
            inner.pool.broadcast(|_| cpu_sample());
            r
        })
    }

    fn inner(&self) -> &Inner {
        self.inner
            .as_deref()
            .expect("a team is used only until it drops")
    }

    /// The team's threads as an explicit region team, unless they are all `p` threads.
    fn explicit_team(&self) -> Option<Vec<ThreadId>> {
        let p = buffer::current_session().map_or(0, |s| s.p);
        let inner = self.inner();
        (inner.first != 0 || inner.threads != p as usize)
            .then(|| (inner.first..inner.first + inner.threads as ThreadId).collect::<Vec<_>>())
    }

    /// Registers every thread with the active session if the team was built before it (or
    /// for an earlier one); checked once per session.
    fn ensure_registered(&self) {
        let generation = shared::current_generation();
        let inner = self.inner();
        if generation == 0 || inner.registered.load(Ordering::Acquire) == generation {
            return;
        }
        inner.pool.broadcast(|ctx| {
            if buffer::current_session().is_none_or(|s| s.generation != generation) {
                thread_start(inner.first + ctx.index() as ThreadId);
            }
        });
        inner.registered.store(generation, Ordering::Release);
    }
}

impl Drop for Team {
    /// Shuts the pool down and waits (up to 5 s) until every thread has recorded `stop`.
    fn drop(&mut self) {
        let n = self.inner().threads;
        // The pool terminates when its last reference goes: this one, or one that a finishing
        // session holds for a moment.
        drop(self.inner.take());
        let (count, cv) = &*self.exited;
        let guard = count.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = cv.wait_timeout_while(guard, EXIT_TIMEOUT, |c| *c < n);
    }
}

/// Stops the threads of every live team that are registered with `shared` (from
/// [`Session::finish`](crate::Session::finish)).
pub(crate) fn stop_live_teams(shared: &Arc<Shared>) {
    let teams: Vec<Arc<Inner>> = TEAMS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    for team in teams {
        team.pool
            .broadcast(|_| buffer::stop_if(|s| Arc::ptr_eq(s, shared)));
    }
}
