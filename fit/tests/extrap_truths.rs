//! The truths of Extra-P's own modeler tests (extra-p/extrap 4.2.5): one term `x^(a/b)
//! log2(x)^c` of their list and a constant (`tests/test_basic_modeler.py`); products and sums of
//! two or three such terms (`tests/test_multi_param_modeler.py`: `test_modeling`,
//! `test_modeling_plus`, `test_modeling_3p*`), on grids of {2, 4, 8, 16, 32}, noise-free.
//! Extra-P recovers each; so must `lca model`, predicting 2x and 4x beyond the grid
//! (docs/results.md#against-extra-p). Before 2026-12-01 the shapes of such factors were nine
//! generic ones, and 2 of each 41 two-parameter truths were recovered.

use fit::Observations;
use fit::combination::{Choices, combine};

/// Extra-P's list of exponents `(a, b, c)`: `x^(a/b) log2(x)^c`.
const TERMS: [(i32, i32, i32); 42] = [
    (0, 1, 1),
    (0, 1, 2),
    (1, 4, 0),
    (1, 3, 0),
    (1, 4, 1),
    (1, 3, 1),
    (1, 4, 2),
    (1, 3, 2),
    (1, 2, 0),
    (1, 2, 1),
    (1, 2, 2),
    (2, 3, 0),
    (3, 4, 0),
    (2, 3, 1),
    (3, 4, 1),
    (4, 5, 0),
    (2, 3, 2),
    (3, 4, 2),
    (1, 1, 0),
    (1, 1, 1),
    (1, 1, 2),
    (5, 4, 0),
    (5, 4, 1),
    (4, 3, 0),
    (4, 3, 1),
    (3, 2, 0),
    (3, 2, 1),
    (3, 2, 2),
    (5, 3, 0),
    (7, 4, 0),
    (2, 1, 0),
    (2, 1, 1),
    (2, 1, 2),
    (9, 4, 0),
    (7, 3, 0),
    (5, 2, 0),
    (5, 2, 1),
    (5, 2, 2),
    (8, 3, 0),
    (11, 4, 0),
    (3, 1, 0),
    (3, 1, 1),
];

fn term((a, b, c): (i32, i32, i32), x: f64) -> f64 {
    x.powf(f64::from(a) / f64::from(b)) * x.log2().powi(c)
}

/// The model of `truth` on the grid {2, 4, 8, 16, 32}^k of `k` factors (`x`, `y`, `z`), and
/// its worst relative miss at the points `beyond` it. With `noise`, each point has three
/// repetitions with multiplicative noise uniform in ±`noise` (a fixed sequence).
fn worst_miss(
    k: usize,
    truth: impl Fn(&[f64]) -> f64,
    beyond: &[&[f64]],
    noise: f64,
) -> (String, f64) {
    let levels = [2.0, 4.0, 8.0, 16.0, 32.0];
    let mut grid: Vec<Vec<f64>> = vec![Vec::new()];
    for _ in 0..k {
        grid = grid
            .iter()
            .flat_map(|point| {
                levels
                    .iter()
                    .map(move |&v| [point.as_slice(), &[v]].concat())
            })
            .collect();
    }
    if noise > 0.0 {
        grid = grid
            .iter()
            .flat_map(|p| [p.clone(), p.clone(), p.clone()])
            .collect();
    }
    let mut state = 2026u64;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        2.0 * ((state >> 11) as f64 / (1u64 << 53) as f64) - 1.0
    };
    let columns = (0..k)
        .map(|f| grid.iter().map(|p| p[f]).collect())
        .collect();
    let y = grid
        .iter()
        .map(|p| truth(p) * (1.0 + noise * uniform()))
        .collect();
    let factors = ["x", "y", "z"][..k].iter().map(|f| f.to_string()).collect();
    let obs = Observations::new("extrap", factors, "time", columns, y).unwrap();
    let model = combine(&obs, &Choices::default()).unwrap();
    let worst = beyond
        .iter()
        .map(|&p| ((model.fit.predict(p).value - truth(p)) / truth(p)).abs())
        .fold(0.0, f64::max);
    (model.fit.model.text().to_string(), worst)
}

/// 2x and 4x beyond {2..32}² along each factor.
const BEYOND_2: [&[f64]; 3] = [&[64.0, 64.0], &[128.0, 32.0], &[32.0, 128.0]];

#[test]
fn extrap_s_multiplicative_truths_are_recovered() {
    for pair in TERMS.windows(2) {
        let (f, g) = (pair[0], pair[1]);
        let truth = |v: &[f64]| 200.0 + 10.0 * term(f, v[0]) * term(g, v[1]);
        let (model, worst) = worst_miss(2, truth, &BEYOND_2, 0.0);
        assert!(worst < 1e-6, "{f:?} x {g:?}: `{model}` misses by {worst}");
    }
}

#[test]
fn extrap_s_additive_truths_are_recovered() {
    for pair in TERMS.windows(2) {
        let (f, g) = (pair[0], pair[1]);
        let truth = |v: &[f64]| 200.0 + 10.0 * term(f, v[0]) + 20.0 * term(g, v[1]);
        let (model, worst) = worst_miss(2, truth, &BEYOND_2, 0.0);
        assert!(worst < 1e-6, "{f:?} + {g:?}: `{model}` misses by {worst}");
    }
}

/// Extra-P's three-parameter truths (`test_modeling_3p`, `test_modeling_3p_plus`,
/// `test_modeling_3p_mul_plus`: a product of three terms, a sum of three, and
/// `200 + 100 f(x) + 2 g(y) h(z)`) on {2, 4, 8, 16, 32}³. The third was missed in 16 of 40
/// before the full form could replace an additive choice: the product of `y` and `z` is a
/// small share of the variation at the corners beside `x`'s main effect.
#[test]
fn extrap_s_three_parameter_truths_are_recovered() {
    for (k, kind) in ["product", "sum", "sum and product"].iter().enumerate() {
        for w in TERMS.windows(3) {
            let (f, g, h) = (w[0], w[1], w[2]);
            let truth = |v: &[f64]| {
                let (x, y, z) = (term(f, v[0]), term(g, v[1]), term(h, v[2]));
                match k {
                    0 => 200.0 + 10.0 * x * y * z,
                    1 => 200.0 + 10.0 * x + 20.0 * y + 30.0 * z,
                    _ => 200.0 + 100.0 * x + 2.0 * y * z,
                }
            };
            let beyond: [&[f64]; 3] = [&[64.0, 64.0, 64.0], &[64.0, 16.0, 2.0], &[2.0, 64.0, 16.0]];
            let (model, worst) = worst_miss(3, truth, &beyond, 0.0);
            assert!(
                worst < 1e-6,
                "{kind} of {f:?}, {g:?}, {h:?}: `{model}` misses by {worst}"
            );
        }
    }
}

/// `200 + 100 f(x) + 2 g(y) h(z)` of the 40 triples above with ±1% noise on three
/// repetitions: the full form's products the runs do not need are dropped, so that their noise
/// is not carried beyond the grid. With all seven products the median worst miss was 0.46–0.55%
/// (`tools/extrap-compare/own_truths.py --params 3`, two seeds); Extra-P's 0.50–1.0%.
#[test]
fn noisy_sums_and_products_of_three_keep_only_the_products_they_need() {
    let mut misses = Vec::new();
    for w in TERMS.windows(3) {
        let (f, g, h) = (w[0], w[1], w[2]);
        let truth = |v: &[f64]| 200.0 + 100.0 * term(f, v[0]) + 2.0 * term(g, v[1]) * term(h, v[2]);
        let beyond: [&[f64]; 3] = [&[64.0, 64.0, 64.0], &[64.0, 16.0, 2.0], &[2.0, 64.0, 16.0]];
        let (model, worst) = worst_miss(3, truth, &beyond, 0.01);
        assert!(
            worst < 0.05,
            "{f:?}, {g:?}, {h:?}: `{model}` misses by {worst}"
        );
        misses.push(worst);
    }
    misses.sort_by(f64::total_cmp);
    let median = misses[misses.len() / 2];
    assert!(median < 0.002, "median worst miss {median}: {misses:?}");
}

/// Extra-P's single-parameter truths (`tests/test_basic_modeler.py`: `test_modeling`,
/// `test_modeling2` and `test_modeling3`, a constant and one term of the list with
/// coefficients from 10 to 500,000) on {2, 4, 8, 16, 32}, predicted 2x and 4x beyond.
#[test]
fn extrap_s_single_parameter_truths_are_recovered() {
    let sizes = [
        (200.0, 10.0),
        (200.0, 200.0),
        (200.0, 500_000.0),
        (500_000.0, 1000.0),
        (40_000.0, 1000.0),
    ];
    for &e in &TERMS {
        for (c0, c1) in sizes {
            let truth = |v: &[f64]| c0 + c1 * term(e, v[0]);
            let (model, worst) = worst_miss(1, truth, &[&[64.0], &[128.0]], 0.0);
            assert!(
                worst < 1e-6,
                "{c0} + {c1} {e:?}: `{model}` misses by {worst}"
            );
        }
    }
}

/// With noise the twice-as-well margin alone keeps a generic shape that the replicates reject:
/// `200 + 10 log2(x) + 20 log2(y)^2` with ±1% noise on 3 repetitions took `sqrt(y)` for
/// `log2(y)^2` and missed by 14% at (64, 64). A lack-of-fit test (1%) against the replicates'
/// spread now rejects `sqrt(y)`, and the term that passes it is taken.
#[test]
fn replicates_reject_a_generic_shape_that_misfits() {
    let levels = [2.0, 4.0, 8.0, 16.0, 32.0];
    let truth = |x: f64, y: f64| 200.0 + 10.0 * x.log2() + 20.0 * y.log2().powi(2);
    let (mut xs, mut ys, mut t) = (Vec::new(), Vec::new(), Vec::new());
    let mut k = 0u32;
    for &a in &levels {
        for &b in &levels {
            for _ in 0..3 {
                // A deterministic ±1% that follows neither factor.
                k += 1;
                let noise = 0.01 * (f64::from(k) * 2.399).sin();
                xs.push(a);
                ys.push(b);
                t.push(truth(a, b) * (1.0 + noise));
            }
        }
    }
    let obs = Observations::new(
        "extrap",
        vec!["x".into(), "y".into()],
        "time",
        vec![xs, ys],
        t,
    )
    .unwrap();
    let model = combine(&obs, &Choices::default()).unwrap();
    assert_eq!(model.shapes[1].expr, "log2(y)^2", "{:?}", model.shapes[1]);
    let p = model.fit.predict(&[64.0, 64.0]).value;
    let miss = ((p - truth(64.0, 64.0)) / truth(64.0, 64.0)).abs();
    assert!(miss < 0.01, "`{}` misses by {miss}", model.fit.model.text());
}
