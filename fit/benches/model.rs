//! Benchmark: building a performance model (every category over n and p) from a 1,000-row
//! datafile, and predicting T_p with intervals over a grid of 10⁶ points. Prints minimum and
//! median of repeated runs; run with `cargo bench -p fit --bench model`.

use std::hint::black_box;

use fit::Datafile;
use fit::performance::{BuildOptions, PerformanceModel};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use test_support::time;

/// `rows` runs on the edges of n in 32..1024 (powers of two), p in 2..26, 1% noise.
fn datafile(rows: usize) -> String {
    let mut rng = StdRng::seed_from_u64(11);
    let ns = [32.0, 64.0, 128.0, 256.0, 512.0, 1024.0];
    let mut text = String::new();
    for i in 0..rows {
        // Alternate between the n-edges (p at an extreme) and the p-edges (n at an extreme).
        let (n, p) = if i % 2 == 0 {
            (
                ns[rng.random_range(0..6)],
                [2.0, 26.0][rng.random_range(0..2)],
            )
        } else {
            (
                [32.0, 1024.0][rng.random_range(0..2)],
                rng.random_range(2..=26) as f64,
            )
        };
        let nlogn = n * f64::log2(n);
        let mut noise = || 1.0 + rng.random_range(-0.01..0.01);
        let values = [
            ("pc", (3e-8 * n * nlogn + 0.002) * noise()),
            ("li", 2e-9 * nlogn * p * p.sqrt() * noise()),
            ("ip", (0.004 + 0.003 * p) * noise()),
            ("sl", 0.0005 * p * noise()),
            ("cl", (4e-9 * n * n + 0.002 * p) * noise()),
            ("rc", (1e-4 + 1e-9 * n * n * (p - 6.0).max(0.0)) * noise()),
        ];
        text.push_str(&format!("impl=dp n={n} p={p}"));
        for (k, v) in values {
            text.push_str(&format!(" {k}={v:.6e}"));
        }
        text.push('\n');
    }
    text
}

fn main() {
    let text = datafile(1000);
    let data = Datafile::parse("bench.dat", &text).unwrap();
    let options = BuildOptions::default();
    let (min, median) = time(10, || {
        black_box(PerformanceModel::build(&data, &options).unwrap());
    });
    println!(
        "build a model from 1,000 rows (6 categories, n and p): min {:.1} ms, median {:.1} ms",
        min.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3
    );

    let model = PerformanceModel::build(&data, &options).unwrap();
    let (ns, ps) = (1000, 1000);
    let (min, median) = time(5, || {
        let mut sum = 0.0;
        for i in 0..ns {
            let n = 32.0 + i as f64;
            for j in 0..ps {
                let t = model.predict(&[n, 2.0 + j as f64 * 0.024]);
                sum += t.time.value + t.time.half_width;
            }
        }
        black_box(sum);
    });
    let points = (ns * ps) as f64;
    println!(
        "predict T_p with 90% intervals on a 10^6-point grid: min {:.2} s ({:.2} M points/s), \
         median {:.2} s",
        min.as_secs_f64(),
        points / min.as_secs_f64() / 1e6,
        median.as_secs_f64()
    );
}
