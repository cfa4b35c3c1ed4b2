//! Both implementations, for several thread counts and sizes, give every iteration's 2D FFT as
//! the single-threaded reference does. Nothing is recorded here (no session), so the tests of
//! this file can run in parallel.

use fft2d::check::Checker;
use fft2d::matrix::MatrixRef;
use fft2d::{Config, Impl};

/// Runs `implementation` with `p` threads on n×n matrices for `iters` iterations, checking
/// every result; returns the checksum.
fn checked_run(implementation: Impl, p: usize, n: usize, iters: usize) -> f64 {
    let config = Config {
        implementation,
        n,
        p,
        iters,
        record: false,
        log: None,
    };
    let mut checker = Checker::default();
    let mut order = Vec::new();
    let mut observe = |k: usize, y: MatrixRef<'_>| {
        order.push(k);
        checker.observe(k, y);
    };
    let outcome = fft2d::run::run(&config, &mut observe).unwrap();
    if let Err(e) = checker.verdict(iters) {
        panic!("{implementation} p={p} n={n}: {e}");
    }
    assert_eq!(
        order,
        (0..iters).collect::<Vec<_>>(),
        "{implementation} p={p} n={n}: results out of order"
    );
    assert!(outcome.log.is_none());
    assert!(outcome.checksum.is_finite() && outcome.checksum > 0.0);
    outcome.checksum
}

/// Sizes: powers of two, and lengths that are not (rustfft plans any length), some smaller
/// than the number of threads (threads with no lines).
const SIZES: [usize; 6] = [1, 3, 8, 12, 16, 64];

#[test]
fn dp_matches_the_reference() {
    for p in 1..=4 {
        for n in SIZES {
            checked_run(Impl::Dp, p, n, 3);
        }
    }
}

#[test]
fn tp_matches_the_reference() {
    for p in 2..=4 {
        for n in SIZES {
            checked_run(Impl::Tp, p, n, 3);
        }
    }
}

/// More iterations than buffers: the pipeline's buffers are reused, and the last result
/// is the one the checksum comes from.
#[test]
fn long_pipeline_and_checksums_agree() {
    let dp = checked_run(Impl::Dp, 3, 32, 7);
    let tp = checked_run(Impl::Tp, 3, 32, 7);
    let tp_odd = checked_run(Impl::Tp, 5, 32, 7);
    // Both sum the magnitudes of the same Y_6 (computed in a different order).
    assert!((dp - tp).abs() <= 1e-9 * dp, "dp {dp} tp {tp}");
    assert!(
        (tp - tp_odd).abs() <= 1e-9 * tp,
        "tp {tp} tp (p=5) {tp_odd}"
    );
}

#[test]
fn a_single_iteration_works() {
    checked_run(Impl::Dp, 2, 16, 1);
    checked_run(Impl::Tp, 2, 16, 1);
}

#[test]
fn invalid_settings_are_refused() {
    let base = Config {
        implementation: Impl::Tp,
        n: 8,
        p: 1,
        iters: 1,
        record: false,
        log: None,
    };
    let mut ok = |_: usize, _: MatrixRef<'_>| {};
    let e = fft2d::run::run(&base, &mut ok).unwrap_err();
    assert!(e.to_string().contains("tp needs at least 2 threads"), "{e}");
    for config in [
        Config {
            n: 0,
            ..base.clone()
        },
        Config {
            n: fft2d::run::MAX_N + 1,
            ..base.clone()
        },
        Config {
            p: 0,
            ..base.clone()
        },
        Config {
            iters: 0,
            p: 2,
            ..base.clone()
        },
    ] {
        assert!(config.validate().is_err(), "{config:?}");
    }
}
