//! A cross design (each factor varied alone from a base point, as Extra-P's sparse
//! measurements are) has no corner beyond the base, so leave-one-out error chooses the form
//! (docs/modelling.md#without-every-corner). Over seeds of noisy runs of a known truth it must
//! choose the truth's form.
//!
//! Run with `--nocapture` to see the rates.

use fit::Observations;
use fit::combination::{Choices, ChosenBy, Combination, combine};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, Normal};

/// `truth(p, n)` at p = 2..64 with n = 10 and at n = 20..160 with p = 2, 3 replicates with
/// relative noise `noise`.
fn cross(truth: impl Fn(f64, f64) -> f64, noise: f64, seed: u64) -> Observations {
    let mut rng = StdRng::seed_from_u64(seed);
    let normal = Normal::new(0.0, 1.0).unwrap();
    let mut points: Vec<(f64, f64)> = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        .iter()
        .map(|&p| (p, 10.0))
        .collect();
    points.extend([20.0, 40.0, 80.0, 160.0].iter().map(|&n| (2.0, n)));
    let (mut ps, mut ns, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        for &(p, n) in &points {
            ps.push(p);
            ns.push(n);
            y.push(truth(p, n) * (1.0 + noise * normal.sample(&mut rng)));
        }
    }
    Observations::new("cross", vec!["p".into(), "n".into()], "t", vec![ps, ns], y).unwrap()
}

/// How often, of `seeds` seeds, the form chosen is `want`.
fn rate(truth: impl Fn(f64, f64) -> f64 + Copy, noise: f64, want: Combination) -> f64 {
    let seeds = 100;
    let choices = Choices {
        shapes: [("p".into(), "log2(p)".into()), ("n".into(), "n".into())].into(),
        combination: None,
    };
    let right = (0..seeds)
        .filter(|&seed| {
            let m = combine(&cross(truth, noise, seed), &choices).unwrap();
            assert_eq!(m.chosen_by, Some(ChosenBy::LeaveOneOut));
            m.combination == Some(want)
        })
        .count();
    right as f64 / seeds as f64
}

#[test]
fn leave_one_out_error_chooses_the_truths_form_on_a_cross_design() {
    for noise in [0.01, 0.05] {
        let additive = rate(
            |p, n| 5.0 + 3.0 * p.log2() + 0.2 * n,
            noise,
            Combination::Additive,
        );
        let multiplicative = rate(
            |p, n| 5.0 + 0.1 * p.log2() * n,
            noise,
            Combination::Multiplicative,
        );
        println!("noise {noise}: additive right {additive}, multiplicative right {multiplicative}");
        assert!(additive >= 0.9, "noise {noise}: additive {additive}");
        assert!(
            multiplicative >= 0.9,
            "noise {noise}: multiplicative {multiplicative}"
        );
    }
}
