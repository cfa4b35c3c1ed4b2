//! The recorder's clocks: the timestamp clock that all threads share, and the thread CPU clock.
//!
//! Timestamps are read on the hot path as raw *ticks* and converted to nanoseconds since the
//! session start only when a buffer is flushed. Two sources:
//!
//! * [`ClockSource::Tsc`]: the x86-64 time-stamp counter (`rdtsc`, about 10 ns). Used only when
//!   the kernel itself keeps time with it (`current_clocksource` is `tsc`): Linux selects that
//!   clocksource only for an invariant TSC that it has checked to be synchronized across CPUs,
//!   so ticks read on different cores are comparable. Calibrated once per process against
//!   `CLOCK_MONOTONIC`.
//! * [`ClockSource::Monotonic`]: `clock_gettime(CLOCK_MONOTONIC)` (about 25 ns), everywhere else.
//!
//! `PP_CLOCK=monotonic` (or `tsc`) overrides the choice.

use std::sync::OnceLock;

/// Where timestamps come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The CPU's invariant time-stamp counter, calibrated against `CLOCK_MONOTONIC`.
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC)`.
    Monotonic,
}

impl ClockSource {
    /// The source this process uses: `PP_CLOCK` if set and possible, else the TSC where the
    /// kernel trusts it, else the monotonic clock.
    pub fn detect() -> ClockSource {
        match std::env::var("PP_CLOCK").as_deref() {
            Ok("monotonic") => return ClockSource::Monotonic,
            Ok("tsc") if tsc_calibration().is_some() => return ClockSource::Tsc,
            _ => {}
        }
        if kernel_uses_tsc() && tsc_calibration().is_some() {
            ClockSource::Tsc
        } else {
            ClockSource::Monotonic
        }
    }

    /// The name of the source (`tsc` or `monotonic`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClockSource::Tsc => "tsc",
            ClockSource::Monotonic => "monotonic",
        }
    }
}

/// A timestamp clock: raw ticks on the hot path, nanoseconds since `base` at flush.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    source: ClockSource,
    /// Ticks at the session start (time 0 of the log).
    base: u64,
    /// Nanoseconds per tick, 32.32 fixed point.
    mult: u64,
}

impl Clock {
    /// A clock on `source` whose time 0 is now.
    pub(crate) fn start(source: ClockSource) -> Clock {
        let mult = match source {
            ClockSource::Tsc => tsc_calibration().unwrap_or(1 << 32),
            ClockSource::Monotonic => 1 << 32,
        };
        let mut clock = Clock {
            source,
            base: 0,
            mult,
        };
        clock.base = clock.ticks();
        clock
    }

    /// The raw reading that is time 0.
    pub(crate) fn base(&self) -> u64 {
        self.base
    }

    /// Nanoseconds per tick, 32.32 fixed point.
    pub(crate) fn mult(&self) -> u64 {
        self.mult
    }

    /// The clock whose time 0 is the reading `base`, at `mult` nanoseconds per tick (32.32
    /// fixed point), for converting another process's readings. Its source is not read.
    pub(crate) fn from_parts(base: u64, mult: u64) -> Clock {
        Clock {
            source: ClockSource::Monotonic,
            base,
            mult,
        }
    }

    /// The source of the ticks.
    pub(crate) fn source(&self) -> ClockSource {
        self.source
    }

    /// The current raw reading (hot path).
    #[inline(always)]
    pub(crate) fn ticks(&self) -> u64 {
        match self.source {
            ClockSource::Tsc => rdtsc(),
            ClockSource::Monotonic => monotonic_ns(),
        }
    }

    /// Nanoseconds since the session start of a raw reading (0 for a reading before it).
    #[inline]
    pub(crate) fn to_ns(self, ticks: u64) -> u64 {
        let d = ticks.saturating_sub(self.base) as u128;
        ((d * self.mult as u128) >> 32) as u64
    }
}

/// Reads the TSC. Returns 0 off x86-64 (never selected there).
#[inline(always)]
fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` has no preconditions on x86-64; it reads a counter register.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds.
#[inline(always)]
pub(crate) fn monotonic_ns() -> u64 {
    #[cfg(unix)]
    {
        clock_ns(libc::CLOCK_MONOTONIC).unwrap_or(0)
    }
    #[cfg(not(unix))]
    {
        static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
        EPOCH
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    }
}

/// The calling thread's CPU time in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`), or `None` where
/// the platform has no thread CPU clock. Costs about 0.5 µs: a system call.
pub fn thread_cpu_ns() -> Option<u64> {
    #[cfg(unix)]
    {
        clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Reads the calling thread's run-queue delay: how long it has been runnable but waiting for
/// a CPU, in nanoseconds (the second field of `/proc/thread-self/schedstat`). Opened by the
/// thread it reads (the file names the thread that opens it) and kept open: a read costs
/// about 0.4 µs here.
#[derive(Debug)]
pub struct RunDelay {
    file: Option<std::fs::File>,
}

impl RunDelay {
    /// The calling thread's reader; it reads nothing (`None`) where the kernel does not report
    /// the delay (not Linux, or no scheduler statistics) or with `PP_RUN_DELAY=0`.
    pub fn open() -> RunDelay {
        static ENABLED: OnceLock<bool> = OnceLock::new();
        let enabled = *ENABLED.get_or_init(|| std::env::var("PP_RUN_DELAY").as_deref() != Ok("0"));
        let file = if enabled && cfg!(target_os = "linux") {
            std::fs::File::open("/proc/thread-self/schedstat").ok()
        } else {
            None
        };
        RunDelay { file }
    }

    /// The delay now, if known. Call it on the thread that opened the reader.
    pub fn read(&self) -> Option<u64> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            let mut buf = [0u8; 96];
            let n = self.file.as_ref()?.read_at(&mut buf, 0).ok()?;
            let text = std::str::from_utf8(buf.get(..n)?).ok()?;
            text.split_ascii_whitespace().nth(1)?.parse().ok()
        }
        #[cfg(not(unix))]
        {
            None
        }
    }
}

#[cfg(unix)]
#[inline(always)]
fn clock_ns(id: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// True when the kernel keeps time with the TSC (so it is invariant and synchronized).
fn kernel_uses_tsc() -> bool {
    cfg!(target_arch = "x86_64")
        && std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .is_ok_and(|s| s.trim() == "tsc")
}

/// Nanoseconds per TSC tick (32.32 fixed point), measured once per process over ~5 ms against
/// `CLOCK_MONOTONIC`; `None` off x86-64 or when the result is implausible.
fn tsc_calibration() -> Option<u64> {
    static MULT: OnceLock<Option<u64>> = OnceLock::new();
    *MULT.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") {
            return None;
        }
        let (t0, m0) = tsc_mono_pair();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let (t1, m1) = tsc_mono_pair();
        let (dt, dm) = (t1.checked_sub(t0)?, m1.checked_sub(m0)?);
        if dt == 0 {
            return None;
        }
        let mult = ((dm as u128) << 32) / dt as u128;
        // Between 100 MHz and 20 GHz.
        let plausible = (1u128 << 32) / 20..=(10u128 << 32);
        plausible.contains(&mult).then_some(mult as u64)
    })
}

/// A simultaneous (TSC, monotonic ns) reading: the tightest of a few bracketed tries.
fn tsc_mono_pair() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..16 {
        let a = rdtsc();
        let m = monotonic_ns();
        let b = rdtsc();
        if b >= a && b - a < best.0 {
            best = (b - a, a + (b - a) / 2, m);
        }
    }
    (best.1, best.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_ticks_to_ns_since_start() {
        let c = Clock {
            source: ClockSource::Monotonic,
            base: 1000,
            mult: 1 << 32,
        };
        assert_eq!(c.to_ns(1000), 0);
        assert_eq!(c.to_ns(1500), 500);
        assert_eq!(c.to_ns(10), 0);
        let half = Clock { mult: 1 << 31, ..c };
        assert_eq!(half.to_ns(3000), 1000);
    }

    #[test]
    fn both_sources_advance_like_monotonic() {
        for source in [ClockSource::Monotonic, ClockSource::detect()] {
            let c = Clock::start(source);
            // Each reading bracketed by monotonic ones: however long the thread is
            // descheduled between two reads, the time between the two readings lies in
            // [inner, outer]; 5% more either way covers the TSC rate's calibration.
            let m0 = monotonic_ns();
            let a = c.to_ns(c.ticks());
            let m1 = monotonic_ns();
            std::thread::sleep(std::time::Duration::from_millis(20));
            let m2 = monotonic_ns();
            let b = c.to_ns(c.ticks());
            let m3 = monotonic_ns();
            let (inner, outer, d) = (m2 - m1, m3 - m0, b - a);
            assert!(
                d >= inner - inner / 20 && d <= outer + outer / 20,
                "{source:?}: {d} ns, monotonic {inner}..{outer} ns"
            );
        }
    }

    #[test]
    fn run_delay_is_read_and_never_decreases() {
        let reader = RunDelay::open();
        let Some(a) = reader.read() else {
            assert!(!std::path::Path::new("/proc/thread-self/schedstat").exists());
            return;
        };
        std::thread::yield_now();
        assert!(reader.read().unwrap() >= a);
    }

    #[test]
    fn thread_cpu_clock_advances_with_work() {
        let Some(a) = thread_cpu_ns() else { return };
        let mut x = 1u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        assert!(thread_cpu_ns().unwrap() > a);
    }
}
