//! Benchmark: evaluating PACE models of fft2d (docs/pace.md#cost). The models are
//! `lca/tests/data/pace/fft2d-{dp,tp}.toml`, built by `lca pace build` from a small study on a
//! 2-core VM (p = 2..4, n = 64, 256). Prints ms per point at single points, the time of 10^4
//! points, the latency of a choice between the two, and tp replayed run to block; run with
//! `cargo bench -p lca --bench pace`.

use std::hint::black_box;
use std::path::Path;

use test_support::time;

fn main() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pace");
    let dp = lca::pace::file::read(&data.join("fft2d-dp.toml")).expect("dp model");
    let tp = lca::pace::file::read(&data.join("fft2d-tp.toml")).expect("tp model");
    let runs = test_support::setting("PACE_BENCH_RUNS", 21usize);
    println!("fft2d PACE models, one thread; minimum and median of {runs} runs");
    for (name, model) in [("dp", &dp), ("tp", &tp)] {
        for (n, p) in [(256.0, 2.0), (256.0, 6.0), (512.0, 16.0), (512.0, 64.0)] {
            let (min, median) = time(runs, || {
                black_box(model.evaluate(black_box(&[n, p])).unwrap());
            });
            println!(
                "{name} n={n} p={p}: {:.3} ms per point (median {:.3})",
                min.as_secs_f64() * 1e3,
                median.as_secs_f64() * 1e3
            );
        }
    }
    // The same tp model replayed run to block (docs/pace.md#evaluation): a queue a core.
    let mut blocking = tp.clone();
    blocking.hardware.sharing = lca::pace::model::CoreSharing::RunToBlock;
    for (n, p) in [(256.0, 6.0), (512.0, 16.0), (512.0, 64.0)] {
        let (min, median) = time(runs, || {
            black_box(blocking.evaluate(black_box(&[n, p])).unwrap());
        });
        println!(
            "tp run-to-block n={n} p={p}: {:.3} ms per point (median {:.3})",
            min.as_secs_f64() * 1e3,
            median.as_secs_f64() * 1e3
        );
    }
    let points: Vec<[f64; 2]> = (0..10_000)
        .map(|i| [[64.0, 128.0, 256.0, 512.0][i % 4], (2 + (i / 4) % 7) as f64])
        .collect();
    let (min, median) = time(3.min(runs).max(1), || {
        for pt in &points {
            black_box(tp.evaluate(pt).unwrap());
        }
    });
    println!(
        "tp 10^4 points (n 64..512, p 2..8): {:.2} s (median {:.2})",
        min.as_secs_f64(),
        median.as_secs_f64()
    );
    let models = [dp.clone(), tp.clone()];
    let at = [("n".to_string(), 256.0), ("p".to_string(), 6.0)];
    let (min, median) = time(runs, || {
        black_box(lca::pace::choose(&models, &at).unwrap());
    });
    println!(
        "choose(dp, tp) at n=256, p=6: {:.3} ms (median {:.3})",
        min.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3
    );
}
