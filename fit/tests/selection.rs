//! Statistical properties of model selection and intervals, over many seeded data sets:
//! the generating model ranks first by leave-one-out error in the large majority of seeds,
//! and 90% intervals cover the true coefficient in about 90% of them.
//!
//! Run with `--nocapture` to see the observed rates.

use fit::{Model, Observations, RankBy, default_candidates, fit_model, rank};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, Normal};

const SEEDS: u64 = 200;

/// A generating function of one factor.
type Truth = fn(f64) -> f64;

/// Observations of `truth(x)` at the levels, two replicates each, with noise.
fn sample(
    factor: &str,
    levels: &[f64],
    truth: impl Fn(f64) -> f64,
    noise: impl Fn(f64, f64) -> f64,
    rng: &mut StdRng,
) -> Observations {
    let normal = Normal::new(0.0, 1.0).unwrap();
    let mut x = Vec::new();
    let mut y = Vec::new();
    for &v in levels.iter().chain(levels) {
        x.push(v);
        y.push(noise(truth(v), normal.sample(rng)));
    }
    Observations::new("synthetic", vec![factor.into()], "y", vec![x], y).unwrap()
}

const P: [f64; 8] = [2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 20.0, 24.0];
const N: [f64; 6] = [32.0, 64.0, 128.0, 256.0, 512.0, 1024.0];
const X: [f64; 7] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// Share of seeds in which `generating` ranks first among the default candidates.
fn first_rate(category: &str, factor: &str, generating: &str, truth: impl Fn(f64) -> f64) -> f64 {
    let levels: &[f64] = match factor {
        "p" => &P,
        "n" => &N,
        _ => &X,
    };
    let models: Vec<Model> = default_candidates(category, factor)
        .iter()
        .map(|m| Model::parse(m).unwrap())
        .collect();
    let mut wins = 0;
    for seed in 0..SEEDS {
        let mut rng = StdRng::seed_from_u64(seed);
        // 10% multiplicative noise; the zero model gets a small additive noise instead.
        let obs = sample(
            factor,
            levels,
            &truth,
            |t, z| {
                if t == 0.0 {
                    0.01 * z
                } else {
                    t * (1.0 + 0.10 * z)
                }
            },
            &mut rng,
        );
        let ranking = rank(&obs, &models, RankBy::Cv, fit::Weighting::Absolute);
        if ranking.fits[0].model.text() == generating {
            wins += 1;
        }
    }
    let rate = wins as f64 / SEEDS as f64;
    println!(
        "{category} vs {factor}: `{generating}` first in {:.1}% of seeds",
        100.0 * rate
    );
    rate
}

#[test]
fn generating_model_ranks_first_against_p() {
    let cases: [(&str, &str, Truth); 11] = [
        ("li", "p*sqrt(p)", |p| 0.3 * p * p.sqrt()),
        ("li", "p", |p| 0.5 * p),
        ("li", "1", |_| 2.0),
        ("ip", "p", |p| 0.2 * p),
        ("ip", "1", |_| 1.5),
        ("sl", "0", |_| 0.0),
        ("sl", "1", |_| 0.4),
        ("sl", "p", |p| 0.1 * p),
        ("cl", "p", |p| 0.7 * p),
        ("cl", "1", |_| 3.0),
        ("rc", "max(p-$theta,0)", |p| 0.5 * (p - 8.0).max(0.0)),
    ];
    let rates: Vec<f64> = cases
        .iter()
        .map(|(category, generating, truth)| first_rate(category, "p", generating, truth))
        .collect();
    for ((category, generating, _), rate) in cases.iter().zip(rates) {
        // Pure noise: the zero model and one free coefficient differ in expected leave-one-out
        // error only by a factor sqrt(1 + 1/n), so `0` wins less often (its single fitted
        // rival is flagged "not distinguishable from zero" instead).
        let floor = if *generating == "0" { 0.6 } else { 0.8 };
        assert!(
            rate >= floor,
            "{category}: `{generating}` first in only {rate}"
        );
    }
}

#[test]
fn generating_model_ranks_first_against_n() {
    let cases: [(&str, &str, Truth); 4] = [
        ("cl", "n^2", |n| 1e-6 * n * n),
        ("cl", "n", |n| 1e-3 * n),
        ("rc", "n^2", |n| 2e-6 * n * n),
        ("rc", "n", |n| 4e-3 * n),
    ];
    for (category, generating, truth) in cases {
        let rate = first_rate(category, "n", generating, truth);
        assert!(
            rate >= 0.8,
            "{category}: `{generating}` first in only {rate}"
        );
    }
}

#[test]
fn generating_model_ranks_first_in_the_generic_set() {
    let cases: [(&str, Truth); 8] = [
        ("1", |_| 5.0),
        ("x", |x| 2.0 * x),
        ("x*log2(x)", |x| 2.0 * x * x.log2()),
        ("x^2", |x| 0.5 * x * x),
        ("x^2*log2(x)", |x| 0.5 * x * x * x.log2()),
        ("x^3", |x| 0.01 * x * x * x),
        ("log2(x)", |x| 3.0 * x.log2()),
        ("sqrt(x)", |x| 3.0 * x.sqrt()),
    ];
    let rates: Vec<f64> = cases
        .iter()
        .map(|(generating, truth)| first_rate("wall", "x", generating, truth))
        .collect();
    // Neighbouring shapes (x^2, x^2*log2(x), x^3) are closer to each other than the paper's
    // defaults are, so the bar is lower here: 78% is the worst observed at 10% noise.
    for ((generating, _), rate) in cases.iter().zip(rates) {
        assert!(rate >= 0.75, "`{generating}` first in only {rate}");
    }
}

/// Share of seeds whose 90% intervals cover each true value (coefficients, then parameters),
/// under additive Gaussian noise, where Student-t intervals are exact for linear models.
fn coverage(model: &str, truth: &[f64], f: impl Fn(f64) -> f64, sd: f64, seeds: u64) -> Vec<f64> {
    let model = Model::parse(model).unwrap();
    let mut covered = vec![0usize; truth.len()];
    for seed in 0..seeds {
        let mut rng = StdRng::seed_from_u64(1000 + seed);
        let obs = sample("p", &P, &f, |t, z| t + sd * z, &mut rng);
        let fit = fit_model(&model, &obs).unwrap();
        let estimates = fit.coefficients.iter().chain(&fit.parameters);
        for (i, (e, &t)) in estimates.zip(truth).enumerate() {
            let (lo, hi) = e.interval();
            if lo <= t && t <= hi {
                covered[i] += 1;
            }
        }
    }
    covered.iter().map(|&c| c as f64 / seeds as f64).collect()
}

#[test]
fn linear_intervals_cover_the_truth_ninety_percent_of_the_time() {
    // 1000 seeds: the binomial standard deviation of the rate is 0.0095.
    let rates = coverage(
        "1 + p*sqrt(p)",
        &[1.0, 0.3],
        |p| 1.0 + 0.3 * p * p.sqrt(),
        0.5,
        1000,
    );
    println!("coverage of `1 + p*sqrt(p)`: {rates:?}");
    for rate in rates {
        assert!((0.86..=0.94).contains(&rate), "coverage {rate}");
    }
}

#[test]
fn nonlinear_intervals_cover_roughly_ninety_percent() {
    // Linearised (delta method) intervals: approximate, so a wider band is accepted.
    let rates = coverage(
        "max(p-$theta,0)",
        &[0.5, 8.0],
        |p| 0.5 * (p - 8.0).max(0.0),
        0.3,
        300,
    );
    println!("coverage of `max(p-$theta,0)` (c, theta): {rates:?}");
    for rate in rates {
        assert!((0.75..=0.97).contains(&rate), "coverage {rate}");
    }
    let rates = coverage("p^$a", &[0.3, 1.5], |p| 0.3 * p.powf(1.5), 0.3, 300);
    println!("coverage of `p^$a` (c, a): {rates:?}");
    for rate in rates {
        assert!((0.80..=0.97).contains(&rate), "coverage {rate}");
    }
}
