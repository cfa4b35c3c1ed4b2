//! `--search` finds sums of overheads that a single-term modeler cannot represent.

use fit::{Observations, search};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn truth(p: f64) -> f64 {
    5.0 + 1000.0 / p + 2.0 * p.log2()
}

/// p = 2..128, ±1% noise (uniform within 1% of the value): the best model predicts p = 1024
/// within 5% of the true value.
///
/// Measured: 29 of 40 seeds within 5%, median error 0.5%. In the other seeds `p^(1/4)` or
/// `log2(p)^2` fit 2..128 as well as `log2(p)` does (their leave-one-out errors differ by
/// less than the noise) and extrapolate 8x beyond the data 6-10% apart; no criterion on
/// these data can tell them apart, which is why the ranking shows the runners-up with
/// their predictions.
///
/// With Gaussian noise of sd 1% (1.7 times as much) the data no longer tell `log2(p)` from
/// `log2(p)^2` or `p^(-1/2)*log2(p)`: measured 19 of 40 seeds within 5%, median error 5.9%.
#[test]
fn search_extrapolates_a_sum_of_overheads_to_p_1024() {
    let seeds = 40;
    let mut errors = Vec::new();
    for seed in 0..seeds {
        let mut rng = StdRng::seed_from_u64(seed);
        let p: Vec<f64> = (2..=128).map(f64::from).collect();
        let y: Vec<f64> = p
            .iter()
            .map(|&p| truth(p) * (1.0 + rng.random_range(-0.01..=0.01)))
            .collect();
        let obs = Observations::new("synthetic", vec!["p".into()], "y", vec![p], y).unwrap();
        let best = &search(&obs, 0, 1)[0];
        let predicted = best.predict(&[1024.0]).value;
        let error = (predicted - truth(1024.0)).abs() / truth(1024.0);
        println!(
            "seed {seed}: `{}` predicts {predicted:.2} ({:.1}%)",
            best.model.text(),
            100.0 * error
        );
        errors.push(error);
    }
    let within = errors.iter().filter(|&&e| e < 0.05).count();
    errors.sort_by(f64::total_cmp);
    println!(
        "within 5% at p=1024 in {within}/{seeds} seeds; median error {:.2}%, worst {:.1}%",
        100.0 * errors[seeds as usize / 2],
        100.0 * errors[seeds as usize - 1]
    );
    assert!(
        errors[seeds as usize / 2] < 0.05,
        "median error {}",
        errors[seeds as usize / 2]
    );
    assert!(
        within * 10 >= seeds as usize * 7,
        "within 5% in only {within}/{seeds} seeds"
    );
}

#[test]
fn search_recovers_the_generating_terms() {
    let p: Vec<f64> = (1..=64).map(|i| 2.0 * i as f64).collect();
    let y: Vec<f64> = p.iter().map(|&p| truth(p)).collect();
    let obs = Observations::new("exact", vec!["p".into()], "y", vec![p], y).unwrap();
    let best = &search(&obs, 0, 1)[0];
    assert_eq!(best.model.text(), "1 + p^(-1) + log2(p)");
    let values: Vec<f64> = best.coefficients.iter().map(|c| c.value).collect();
    for (got, want) in values.iter().zip([5.0, 1000.0, 2.0]) {
        assert!((got - want).abs() < 1e-8 * want, "{values:?}");
    }
}

#[test]
fn search_skips_terms_undefined_on_the_data() {
    // x = 0 makes log2 and negative powers undefined, and y = 0 rules out relative error:
    // the other terms are tried, with absolute error.
    let x = vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
    let y: Vec<f64> = x.iter().map(|x| 2.0 * x).collect();
    let obs = Observations::new("t", vec!["x".into()], "y", vec![x], y).unwrap();
    let fits = search(&obs, 0, 3);
    assert_eq!(fits[0].model.text(), "1 + x");
    assert_eq!(fits[0].weighting, fit::Weighting::Absolute);
}
