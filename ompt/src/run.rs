//! The run as a whole: the epoch taken when the tool is loaded, the recording session started
//! at the first outermost parallel region (whose team size is `p`), and its end when the
//! OpenMP runtime shuts down.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use pp_recorder::{ClockSource, Epoch, Session};

/// The epoch: when the tool library was loaded (at program start when preloaded, as `pp run`
/// does; else when the OpenMP runtime starts and loads it).
static EPOCH: OnceLock<Epoch> = OnceLock::new();
static SESSION: Mutex<Option<Session>> = Mutex::new(None);
/// `p` once the session runs, 0 before.
static P: AtomicU32 = AtomicU32::new(0);
/// Threads that took part in an outermost team at a thread number not below `p`.
static BEYOND_P: AtomicU64 = AtomicU64::new(0);
/// Threads of nested teams that are not among the `p` (not recorded).
static NESTED_ONLY: AtomicU64 = AtomicU64::new(0);

fn session() -> MutexGuard<'static, Option<Session>> {
    SESSION.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes the epoch now if it was not taken yet. The clock is `CLOCK_MONOTONIC` unless
/// `PP_CLOCK=tsc`: the TSC's calibration would add about 5 ms to every run the tool is loaded
/// into, and the tool's events cost far more than the 15 ns the TSC saves.
pub fn take_epoch() {
    EPOCH.get_or_init(epoch);
}

fn epoch() -> Epoch {
    match std::env::var("PP_CLOCK").as_deref() {
        Ok("tsc") => Epoch::now(),
        _ => Epoch::now_on(ClockSource::Monotonic),
    }
}

/// The number of processors, 0 while no session runs.
pub fn p() -> u32 {
    P.load(Ordering::Acquire)
}

pub fn note_beyond_p() {
    BEYOND_P.fetch_add(1, Ordering::Relaxed);
}

pub fn note_nested_only() {
    NESTED_ONLY.fetch_add(1, Ordering::Relaxed);
}

/// Starts the session with `p` processors (once) and registers the calling thread as thread 0
/// from the epoch, doing serial work since; the log's header has the run parameters of
/// `PP_PARAMS` and `runtime`'s (those `PP_PARAMS` does not name). Returns whether the calling
/// thread records.
pub fn start(p: u32, runtime: &[(String, String)]) -> bool {
    let mut s = session();
    if s.is_none() && P.load(Ordering::Acquire) == 0 {
        let mut b = Session::builder(p.max(1))
            .epoch(*EPOCH.get_or_init(epoch))
            // The workers stop when the runtime ends them, which may be after finalize.
            .stop_timeout(Duration::from_millis(500));
        let given = params();
        let own = runtime
            .iter()
            .filter(|(k, _)| given.iter().all(|(g, _)| g != k));
        for (k, v) in given.iter().chain(own) {
            b = b.param(k.clone(), v.clone());
        }
        if let Some(path) = rank_log() {
            b = b.path(path);
        }
        match b.start() {
            Ok(session) => {
                P.store(p.max(1), Ordering::Release);
                *s = Some(session);
            }
            Err(e) => {
                eprintln!("{}{e}; this run is not recorded", who());
                P.store(u32::MAX, Ordering::Release);
                return false;
            }
        }
        drop(s);
        return pp_recorder::thread_start_at_epoch(0, Some("serial"), Some(None));
    }
    false
}

/// Under `pp run -- mpirun` (`PP_MPI_LOG` is set, and this process is a rank): the rank's
/// own log, `$PP_MPI_LOG.omp<rank>`, which pp run merges with the MPI tracer's
/// (docs/mpi.md, "Hybrid MPI + OpenMP").
fn rank_log() -> Option<String> {
    let base = std::env::var("PP_MPI_LOG").ok().filter(|b| !b.is_empty())?;
    Some(format!("{base}.omp{}", rank()?))
}

/// This process's MPI rank under `pp run -- mpirun`, from the launcher's environment.
fn rank() -> Option<u32> {
    std::env::var_os("PP_MPI_LOG")?;
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .into_iter()
        .find_map(|v| std::env::var(v).ok()?.parse::<u32>().ok())
}

/// How the tool's messages start: `pp-ompt: `, and the rank in an MPI program's rank.
fn who() -> String {
    match rank() {
        Some(r) => format!("pp-ompt: rank {r}: "),
        None => "pp-ompt: ".into(),
    }
}

/// The `CLOCK_MONOTONIC` reading at the log's time 0 (`None` on the TSC, or before the
/// epoch is taken): the MPI tracer puts its events on this time base.
pub fn epoch_monotonic_ns() -> Option<u64> {
    EPOCH.get()?.monotonic_ns()
}

/// The run parameters of `PP_PARAMS` (`key=value` tokens separated by whitespace); a token
/// without `=` is reported and left out.
fn params() -> Vec<(String, String)> {
    let text = std::env::var("PP_PARAMS").unwrap_or_default();
    let mut out = Vec::new();
    for token in text.split_whitespace() {
        match token.split_once('=') {
            Some((k, v)) if !k.is_empty() && !v.is_empty() => out.push((k.into(), v.into())),
            _ => eprintln!("pp-ompt: PP_PARAMS: `{token}` is not key=value; left out"),
        }
    }
    out
}

/// The header key of libomp's blocktime (docs/openmp.md#the-runtimes-waits).
pub const BLOCKTIME: &str = "omp_blocktime_ms";

/// The runtime's settings that a log's header records: libomp's blocktime, the milliseconds its
/// waiting threads poll before they sleep (`KMP_BLOCKTIME`; 0 under `OMP_WAIT_POLICY=passive`,
/// 2147483647 when infinite), asked of the runtime itself (`kmp_get_blocktime`, a libomp
/// extension); none where the runtime has no such function. Called in a runtime callback, on a
/// thread the runtime knows.
pub fn runtime_params() -> Vec<(String, String)> {
    // SAFETY: dlsym with a NUL-terminated name; the pseudo-handle searches the loaded objects.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"kmp_get_blocktime".as_ptr()) };
    if sym.is_null() {
        return Vec::new();
    }
    // SAFETY: libomp's `int kmp_get_blocktime(void)`.
    let get: extern "C" fn() -> libc::c_int = unsafe { std::mem::transmute(sym) };
    vec![(BLOCKTIME.to_string(), get().max(0).to_string())]
}

/// Ends the run: starts a session of one processor if the program never opened a parallel
/// region, then finishes the log (the calling thread's serial work is ended by the caller).
pub fn finish() {
    // No runtime call here: the runtime may be shutting down.
    if P.load(Ordering::Acquire) == 0 && start(1, &[]) {
        pp_recorder::work_end(None);
    }
    let Some(session) = session().take() else {
        return;
    };
    let p = session.p();
    match session.finish() {
        Ok(report) => {
            if !report.unstopped.is_empty() {
                eprintln!(
                    "{}warning: threads {:?} had not ended when the OpenMP runtime shut down; \
                     their last events may be missing",
                    who(),
                    report.unstopped
                );
            }
            if report.refused_blocks > 0 {
                eprintln!(
                    "{}warning: the log left out {} block(s) of events it could not take \
                     (the first: {}); their events are missing",
                    who(),
                    report.refused_blocks,
                    report.first_refusal.as_deref().unwrap_or("no reason given")
                );
            }
        }
        Err(e) => eprintln!("{}writing the log: {e}", who()),
    }
    let beyond = BEYOND_P.load(Ordering::Relaxed);
    if beyond > 0 {
        eprintln!(
            "{}{beyond} thread(s) of outermost teams had thread numbers beyond p = {p} \
             (the first parallel region's team): their time is not in the log; \
             set OMP_NUM_THREADS to the largest team",
            who()
        );
    }
    let nested = NESTED_ONLY.load(Ordering::Relaxed);
    if nested > 0 {
        eprintln!(
            "{}{nested} thread(s) joined nested parallel regions without being among the \
             p = {p} processors: their time there is not in the log",
            who()
        );
    }
}
