//! CPU work shared by the examples.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// About `iters` dependent multiply-adds: CPU work that does not touch memory.
pub fn spin(iters: u64) -> u64 {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..iters {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

/// Iterations of [`spin`] per millisecond on an otherwise idle core (best of a few).
pub fn iters_per_ms() -> u64 {
    let n = 2_000_000;
    let best = (0..5)
        .map(|_| {
            let t = Instant::now();
            black_box(spin(n));
            t.elapsed()
        })
        .min()
        .unwrap_or(Duration::from_millis(1));
    (n as f64 / (best.as_secs_f64() * 1e3)).max(1.0) as u64
}
