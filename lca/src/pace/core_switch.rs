//! The hardware layer's one-core switch, measured (docs/pace.md#how-the-template-is-derived):
//! two threads pinned to one CPU pass a byte back and forth over a socket pair, as `perf bench
//! sched pipe` does under `taskset -c 0`; each round trip is two switches of that core from
//! one thread to the other.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Instant;

/// Round trips timed (after as many again to warm up).
const ROUND_TRIPS: u32 = 20_000;

/// Seconds a busy core spends going from one thread to another, the least of three
/// measurements; `None` where a thread cannot be pinned to the CPU this one may run on. Both
/// sides run on threads of their own: the caller's thread stays free to run anywhere.
pub fn core_switch_s() -> Option<f64> {
    let cpu = first_allowed_cpu()?;
    std::thread::spawn(move || (0..3).filter_map(|_| measure(cpu)).reduce(f64::min))
        .join()
        .ok()
        .flatten()
}

fn measure(cpu: usize) -> Option<f64> {
    let (mut a, mut b) = UnixStream::pair().ok()?;
    let partner = std::thread::spawn(move || -> Option<()> {
        pin(cpu)?;
        let mut byte = [0u8];
        for _ in 0..2 * ROUND_TRIPS {
            b.read_exact(&mut byte).ok()?;
            b.write_all(&byte).ok()?;
        }
        Some(())
    });
    let mine = (|| -> Option<f64> {
        pin(cpu)?;
        let mut byte = [0u8];
        let mut trip = |a: &mut UnixStream| -> Option<()> {
            a.write_all(&byte).ok()?;
            a.read_exact(&mut byte).ok()
        };
        for _ in 0..ROUND_TRIPS {
            trip(&mut a)?;
        }
        let start = Instant::now();
        for _ in 0..ROUND_TRIPS {
            trip(&mut a)?;
        }
        Some(start.elapsed().as_secs_f64() / f64::from(2 * ROUND_TRIPS))
    })();
    // A failed side closes its end, which ends the other's read.
    drop(a);
    let partner = partner.join().ok().flatten();
    let s = mine?;
    partner?;
    Some(s)
}

/// Pins the calling thread to `cpu`.
fn pin(cpu: usize) -> Option<()> {
    // SAFETY: a zeroed cpu_set_t is an empty set, which CPU_SET fills; sched_setaffinity reads
    // it for the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        (libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0)
            .then_some(())
    }
}

/// The lowest CPU the calling thread may run on.
fn first_allowed_cpu() -> Option<usize> {
    // SAFETY: sched_getaffinity writes the calling thread's set into `set`.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &set))
    }
}
