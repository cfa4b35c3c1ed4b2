//! Known answers for the numbers a user must be able to trust (issue 16): every nonlinear
//! parameter belongs to one factor's shape, and lost cycles are never predicted negative.

use std::collections::BTreeMap;

use fit::combination::{Choices, Combination, combine};
use fit::performance::{BuildOptions, PerformanceModel};
use fit::{Datafile, Model, fit_model};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, Normal};

/// Rows `n=.. p=.. <category>=..` over a full grid, with 2% multiplicative noise.
fn grid_data(category: &str, truth: impl Fn(f64, f64) -> f64, seed: u64) -> Datafile {
    let mut rng = StdRng::seed_from_u64(seed);
    let noise = Normal::new(1.0, 0.02).unwrap();
    let mut text = String::new();
    for n in [32.0, 64.0, 128.0, 256.0, 512.0, 1024.0] {
        for p in [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0] {
            let y = truth(n, p) * noise.sample(&mut rng);
            text += &format!("n={n} p={p} {category}={y}\n");
        }
    }
    Datafile::parse("grid.dat", &text).unwrap()
}

#[test]
fn a_threshold_in_each_factor_is_its_own_parameter() {
    // rc = 1e-9 * max(n-200,0) * max(p-6,0) + 1e-6: the thresholds sit at 200 (in n) and 6 (in
    // p), on scales two orders of magnitude apart. One shared $theta cannot hold both.
    let truth = |n: f64, p: f64| 1e-6 + 1e-6 * (n - 200.0).max(0.0) * (p - 6.0).max(0.0);
    for seed in 0..5 {
        let data = grid_data("rc", truth, seed);
        let obs = data.observations(&["n", "p"], "rc", &[]).unwrap();
        let choices = Choices {
            shapes: BTreeMap::from([
                ("n".to_string(), "max(n-$theta,0)".to_string()),
                ("p".to_string(), "max(p-$theta,0)".to_string()),
            ]),
            combination: Some(Combination::Multiplicative),
        };
        let m = combine(&obs, &choices).unwrap();
        assert_eq!(
            m.fit.model.text(),
            "1 + max(n-$theta_n,0)*max(p-$theta_p,0)"
        );
        let names: Vec<&str> = m.fit.parameters.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["$theta_n", "$theta_p"]);
        let (theta_n, theta_p) = (&m.fit.parameters[0], &m.fit.parameters[1]);
        assert!(
            (theta_n.value - 200.0).abs() < 15.0,
            "seed {seed}: {theta_n:?}"
        );
        assert!(
            (theta_p.value - 6.0).abs() < 0.5,
            "seed {seed}: {theta_p:?}"
        );
        // Each with its own interval, which holds the truth.
        for (t, truth) in [(theta_n, 200.0), (theta_p, 6.0)] {
            assert!(t.half_width.is_finite() && t.half_width > 0.0, "{t:?}");
            let (lo, hi) = t.interval();
            assert!(lo <= truth && truth <= hi, "seed {seed}: {t:?}");
        }
    }
}

#[test]
fn a_category_that_is_zero_over_part_of_the_range_is_never_predicted_negative() {
    // li = 0 up to p = 6, then grows linearly. Measured values are exactly zero there (no
    // noise can make an idle time negative). The straight line that fits best without a
    // bound goes below zero at small p; lost cycles cannot.
    let truth = |n: f64, p: f64| 1e-5 * n * (p - 6.0).max(0.0);
    let data = grid_data("li", truth, 7);
    let obs = data
        .observations(&["p"], "li", &[("n".to_string(), 256.0)])
        .unwrap();
    let fit = fit_model(&Model::parse("1 + p").unwrap(), &obs).unwrap();
    assert!(fit.nonnegative);
    for p in [0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 64.0] {
        let prediction = fit.predict(&[p]);
        assert!(prediction.value >= 0.0, "p={p}: {prediction:?}");
        assert!(prediction.lower >= 0.0, "p={p}: {prediction:?}");
        assert!(prediction.upper >= prediction.value);
    }
    // The constraint binds: the line touches zero inside the range, at p = 2.
    assert!(fit.evaluate(&[2.0]).abs() < 1e-9 * fit.evaluate(&[16.0]));
    // Unconstrained, the same line would be negative there: check against the closed form.
    let (x, y): (Vec<f64>, Vec<f64>) = (obs.columns[0].clone(), obs.y.clone());
    let (mx, my) = (
        x.iter().sum::<f64>() / x.len() as f64,
        y.iter().sum::<f64>() / y.len() as f64,
    );
    let slope = x
        .iter()
        .zip(&y)
        .map(|(a, b)| (a - mx) * (b - my))
        .sum::<f64>()
        / x.iter().map(|a| (a - mx).powi(2)).sum::<f64>();
    assert!(
        my + slope * (2.0 - mx) < 0.0,
        "the example must need the bound"
    );

    // The whole multi-factor model and T_p over a grid beyond the data.
    let model = PerformanceModel::build(
        &grid_data("li", truth, 8),
        &BuildOptions {
            categories: vec!["li".into()],
            ..BuildOptions::default()
        },
    )
    .unwrap();
    for n in [8.0, 32.0, 100.0, 1024.0, 4096.0] {
        for p in [1.0, 2.0, 3.0, 5.0, 7.0, 16.0, 32.0] {
            let t = model.predict(&[n, p]);
            for c in t.categories.iter().chain([&t.time]) {
                assert!(c.value >= 0.0 && c.lower >= 0.0, "n={n} p={p}: {c:?}");
            }
        }
    }
}
