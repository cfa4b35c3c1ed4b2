//! Integer structure in `p` (docs/modelling.md#integer-structure): a known parity or rounds
//! term is recovered, smooth data almost never get one, and on the 16-core fft2d runs the
//! test finds tp's odd-p pattern.
//!
//! Run with `--nocapture` to see the measured rates and errors.

use std::collections::BTreeMap;

use fit::combination::{Choices, combine, combine_on};
use fit::performance::{BuildOptions, PerformanceModel};
use fit::validation::validate;
use fit::{Condition, Datafile, Observations};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, Normal};

/// Runs of `truth(p)` at p = 2..=16 (or `levels`), 3 replicates, relative noise `noise`.
fn sample(
    category: &str,
    levels: &[f64],
    truth: impl Fn(f64) -> f64,
    noise: f64,
    seed: u64,
) -> Observations {
    let mut rng = StdRng::seed_from_u64(seed);
    let normal = Normal::new(0.0, 1.0).unwrap();
    let (mut p, mut y) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        for &v in levels {
            p.push(v);
            y.push(truth(v) * (1.0 + noise * normal.sample(&mut rng)));
        }
    }
    Observations::new("synthetic", vec!["p".into()], category, vec![p], y).unwrap()
}

fn levels(from: u32, to: u32) -> Vec<f64> {
    (from..=to).map(f64::from).collect()
}

fn odd(p: f64) -> f64 {
    p % 2.0
}

#[test]
fn a_known_parity_term_is_found_and_recovered() {
    // ip = 0.5 + 0.1 p, plus 0.3 at odd p; 2% noise.
    let truth = |p: f64| 0.5 + 0.1 * p + 0.3 * odd(p);
    let mut chosen = 0;
    for seed in 0..10 {
        let obs = sample("ip", &levels(2, 16), truth, 0.02, seed);
        let m = combine(&obs, &Choices::default()).unwrap();
        let integer = m.integer.as_ref().expect("the test fires");
        assert_eq!(integer.pattern, "p mod 2", "seed {seed}: {integer:?}");
        assert!(integer.p_value < 0.05, "{integer:?}");
        if !integer.chosen {
            continue;
        }
        chosen += 1;
        // The odd step, whatever term carries it (the odd indicator, floor(p/2) or ceil(p/2)
        // beside p span the same models): at p = 9 against its even neighbours.
        let f = |p: f64| m.fit.evaluate(&[p]);
        let step = f(9.0) - (f(8.0) + f(10.0)) / 2.0;
        assert!((step - 0.3).abs() < 0.06, "seed {seed}: step {step}");
        for p in levels(2, 16) {
            let e = (f(p) - truth(p)).abs() / truth(p);
            assert!(
                e < 0.03,
                "seed {seed}: p={p}: {} against {}",
                f(p),
                truth(p)
            );
        }
    }
    assert!(
        chosen >= 9,
        "the parity term was chosen in {chosen} of 10 seeds"
    );
}

#[test]
fn rounds_of_the_cores_are_found_with_the_core_count() {
    // 1 + 0.05 p + 0.5 ceil(p/4): p threads on 4 cores, each round costs 0.5; 2% noise.
    let truth = |p: f64| 1.0 + 0.05 * p + 0.5 * (p / 4.0).ceil();
    let obs = sample("ip", &levels(1, 16), truth, 0.02, 7);
    let m = combine_on(&obs, &Choices::default(), Some(4)).unwrap();
    let integer = m.integer.as_ref().expect("the test fires");
    assert!(integer.chosen, "{integer:?}");
    assert!(
        integer.fired.iter().any(|g| g == "rounds ceil(p/4)"),
        "{integer:?}"
    );
    let f = |p: f64| m.fit.evaluate(&[p]);
    for p in levels(1, 16) {
        let e = (f(p) - truth(p)).abs() / truth(p);
        assert!(
            e < 0.03,
            "p={p}: {} against {} ({integer:?})",
            f(p),
            truth(p)
        );
    }
    // Each round's jump: from p = 4 to 5, 0.5 + 0.05.
    assert!((f(5.0) - f(4.0) - 0.55).abs() < 0.1, "{}", f(5.0) - f(4.0));
}

/// Share of `seeds` seeds in which the test fires, and in which a term is chosen.
fn false_positives(category: &str, truth: fn(f64) -> f64, seeds: u64) -> (f64, f64) {
    let (mut fired, mut chosen) = (0, 0);
    for seed in 0..seeds {
        let obs = sample(category, &levels(2, 16), truth, 0.05, 1000 + seed);
        let m = combine(&obs, &Choices::default()).unwrap();
        if let Some(integer) = &m.integer {
            fired += 1;
            chosen += usize::from(integer.chosen);
        }
    }
    (fired as f64 / seeds as f64, chosen as f64 / seeds as f64)
}

#[test]
fn smooth_data_rarely_get_integer_terms() {
    // The test's family-wise level is 5%: over 200 seeds the rate of firing must stay near it
    // (10% is more than three binomial standard deviations above), for a straight line and
    // for a curve whose default shape (`p*sqrt(p)`) is right.
    const SEEDS: u64 = 200;
    for (category, truth) in [
        ("ip", (|p| 1.0 + 0.1 * p) as fn(f64) -> f64),
        ("li", |p| 0.3 + 0.05 * p * p.sqrt()),
    ] {
        let (fired, chosen) = false_positives(category, truth, SEEDS);
        eprintln!(
            "{category}: the test fired in {:.1}% of {SEEDS} smooth seeds, a term was chosen in {:.1}%",
            100.0 * fired,
            100.0 * chosen
        );
        assert!(fired <= 0.10, "{category}: fired in {:.1}%", 100.0 * fired);
        assert!(chosen <= fired);
    }
}

/// The 16-core runs of one implementation, built as `lca model` does.
fn model(data: &Datafile, implementation: &str, smooth_sl: bool) -> PerformanceModel {
    let conditions: Vec<Condition> = [format!("impl={implementation}"), "role=model".into()]
        .iter()
        .map(|c| c.parse().unwrap())
        .collect();
    let rows = data.filter(&conditions).unwrap();
    let mut choices = BTreeMap::new();
    if smooth_sl {
        // The smooth default's own shape, given: the residual test is then not run.
        let mut sl = Choices::default();
        sl.shapes.insert("p".into(), "p".into());
        choices.insert("sl".to_string(), sl);
    }
    let options = BuildOptions {
        name: implementation.into(),
        choices,
        conditions,
        ..Default::default()
    };
    PerformanceModel::build(&rows, &options).unwrap()
}

/// Mean relative T_p error of `model` on the validation runs at odd and at even p.
fn odd_even_errors(model: &PerformanceModel, data: &Datafile, implementation: &str) -> (f64, f64) {
    let conditions: Vec<Condition> = [format!("impl={implementation}"), "role=validate".into()]
        .iter()
        .map(|c| c.parse().unwrap())
        .collect();
    let validation = validate(model, &data.filter(&conditions).unwrap()).unwrap();
    let p = model.factors.iter().position(|f| f == "p").unwrap();
    let mean = |parity: f64| {
        let errors: Vec<f64> = validation
            .points
            .iter()
            .filter(|v| v.predicted.point[p] % 2.0 == parity)
            .map(|v| v.relative_error())
            .collect();
        errors.iter().sum::<f64>() / errors.len() as f64
    };
    (mean(1.0), mean(0.0))
}

#[test]
fn the_16_core_runs_show_tps_odd_p_pattern() {
    let data = Datafile::read(&datasets::path("fft2d-16core.dat")).unwrap();
    let tp = model(&data, "tp", false);
    let sl = tp.categories.iter().find(|c| c.category == "sl").unwrap();
    let integer = sl
        .integer
        .as_ref()
        .expect("tp's sl residuals differ by parity");
    assert_eq!(integer.pattern, "p mod 2", "{integer:?}");
    assert!(integer.chosen, "{integer:?}");
    assert!(
        sl.fit.model.text().contains("floor(p/2)"),
        "{}",
        sl.fit.model.text()
    );
    // The odd-p term raises sl at odd p: its coefficient is positive and excludes zero.
    let term = sl.fit.coefficients.last().unwrap();
    assert!(term.value - term.half_width > 0.0, "{term:?}");
    // The model file keeps what was found, and reads back to the same bytes.
    let text = fit::model_file::write(&tp);
    assert!(text.contains("[category.integer]"), "{text}");
    let back = fit::model_file::parse("tp.toml", &text).unwrap();
    assert_eq!(fit::model_file::write(&back), text);
    let sl_back = back.categories.iter().find(|c| c.category == "sl").unwrap();
    assert_eq!(sl_back.integer, sl.integer);
    // No other category of tp, and no category of dp, gets an integer term.
    let dp = model(&data, "dp", false);
    let others = tp.categories.iter().filter(|c| c.category != "sl");
    for c in others.chain(&dp.categories) {
        assert!(
            c.integer.as_ref().is_none_or(|i| !i.chosen),
            "{}: {:?}",
            c.category,
            c.integer
        );
    }
    // The validated T_p error at odd p, before (smooth sl) and after.
    let smooth = model(&data, "tp", true);
    let before = odd_even_errors(&smooth, &data, "tp");
    let after = odd_even_errors(&tp, &data, "tp");
    eprintln!(
        "tp on fft2d-16core.dat, validation runs: mean T_p error at odd p {:.1}% -> {:.1}%, at even p {:.1}% -> {:.1}%",
        100.0 * before.0,
        100.0 * after.0,
        100.0 * before.1,
        100.0 * after.1
    );
    assert!(after.0 < before.0, "{before:?} {after:?}");
    // Does the pair of models now follow the measured odd-p difference between dp and tp?
    let measured = odd_excess(&data, |impl_, n, p| mean_time(&data, impl_, n, p));
    let excess = |tp: &PerformanceModel| {
        odd_excess(&data, |impl_, n, p| {
            let m = if impl_ == "tp" { tp } else { &dp };
            m.predict(&[n, p]).time.value
        })
    };
    let (smooth_excess, integer_excess) = (excess(&smooth), excess(&tp));
    eprintln!(
        "log(T_tp/T_dp), mean at odd p minus mean at even p over the model grid: measured {measured:.3}, \
         smooth models {smooth_excess:.3}, with the integer term {integer_excess:.3}"
    );
    assert!(
        (integer_excess - measured).abs() < (smooth_excess - measured).abs(),
        "{measured} {smooth_excess} {integer_excess}"
    );
}

/// The grid of the model rows: every (n, p).
fn grid(data: &Datafile) -> Vec<(f64, f64)> {
    let mut cells: Vec<(f64, f64)> = Vec::new();
    for row in 0..data.rows().len() {
        let number = |c| match data.cell(row, c) {
            Some(fit::observations::Cell::Number(x)) => x,
            _ => f64::NAN,
        };
        let role = matches!(
            data.cell(row, "role"),
            Some(fit::observations::Cell::Text("model"))
        );
        let cell = (number("n"), number("p"));
        if role && !cells.contains(&cell) {
            cells.push(cell);
        }
    }
    cells
}

/// The mean measured T_p (wall) of `implementation`'s model runs at (n, p).
fn mean_time(data: &Datafile, implementation: &str, n: f64, p: f64) -> f64 {
    let conditions: Vec<Condition> = [
        format!("impl={implementation}"),
        "role=model".into(),
        format!("n={n}"),
        format!("p={p}"),
    ]
    .iter()
    .map(|c| c.parse().unwrap())
    .collect();
    let rows = data.filter(&conditions).unwrap();
    let times: Vec<f64> = (0..rows.rows().len())
        .filter_map(|r| match rows.cell(r, "wall") {
            Some(fit::observations::Cell::Number(x)) => Some(x),
            _ => None,
        })
        .collect();
    times.iter().sum::<f64>() / times.len() as f64
}

/// Mean of `log(T_tp/T_dp)` over the grid's odd-p cells minus its mean over the even-p cells.
fn odd_excess(data: &Datafile, time: impl Fn(&str, f64, f64) -> f64) -> f64 {
    let (mut odd, mut even) = (Vec::new(), Vec::new());
    for (n, p) in grid(data) {
        let r = (time("tp", n, p) / time("dp", n, p)).ln();
        if p % 2.0 == 1.0 {
            odd.push(r)
        } else {
            even.push(r)
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    mean(&odd) - mean(&even)
}

#[test]
fn the_search_tries_integer_terms_only_when_the_residuals_show_them() {
    // 2 + 0.1 p + 0.3 at odd p, 2% noise: the best smooth model misses the odd steps.
    let obs = sample(
        "t",
        &levels(2, 16),
        |p| 2.0 + 0.1 * p + 0.3 * odd(p),
        0.02,
        3,
    );
    let searched = fit::search::search_integer(&obs, 0, 5, None);
    assert_eq!(
        searched.fired[0].grouping,
        fit::integer::Grouping::Modulo(2)
    );
    let best = &searched.fits[0];
    assert!(
        best.model.text().contains("floor(p/2)"),
        "{}",
        best.model.text()
    );
    let step = best.evaluate(&[9.0]) - (best.evaluate(&[8.0]) + best.evaluate(&[10.0])) / 2.0;
    assert!(
        (step - 0.3).abs() < 0.06,
        "{}: step {step}",
        best.model.text()
    );
    // Smooth data: nothing fires, and no integer term is ranked.
    let obs = sample("t", &levels(2, 16), |p| 2.0 + 0.1 * p, 0.02, 3);
    let searched = fit::search::search_integer(&obs, 0, 5, None);
    assert!(searched.fired.is_empty(), "{:?}", searched.fired);
    assert!(
        searched
            .fits
            .iter()
            .all(|f| !f.model.text().contains("floor"))
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// The test reads relative residuals of a relative fit, so rescaling the data (seconds to
    /// milliseconds) finds the same groupings with the same statistics; Holm's adjusted
    /// p-values are never below the raw ones and never decrease down the list.
    #[test]
    fn the_residual_test_does_not_depend_on_units(
        seed in 0u64..1000,
        scale in 1e-3f64..1e3,
        step in 0.0f64..0.5,
    ) {
        let truth = move |p: f64| 1.0 + 0.1 * p + step * odd(p);
        let obs = sample("ip", &levels(2, 16), truth, 0.05, seed);
        let mut scaled = obs.clone();
        scaled.y.iter_mut().for_each(|y| *y *= scale);
        let smooth = fit::Model::parse("1 + p").unwrap();
        let weighting = fit::Weighting::Relative;
        let a = fit::fit_weighted(&smooth, &obs, weighting).unwrap();
        let b = fit::fit_weighted(&smooth, &scaled, weighting).unwrap();
        let found = fit::integer::residual_tests(&obs, &a, 0, Some(4));
        let again = fit::integer::residual_tests(&scaled, &b, 0, Some(4));
        proptest::prop_assert_eq!(found.len(), again.len());
        for (x, y) in found.iter().zip(&again) {
            proptest::prop_assert_eq!(x.grouping, y.grouping);
            proptest::prop_assert!((x.f - y.f).abs() <= 1e-6 * x.f.max(1.0), "{} {}", x.f, y.f);
        }
        for pair in found.windows(2) {
            proptest::prop_assert!(pair[0].adjusted <= pair[1].adjusted);
        }
        for x in &found {
            proptest::prop_assert!(x.adjusted >= x.p_value && x.adjusted <= 1.0);
        }
    }
}

#[test]
fn a_held_cores_column_gives_the_rounds() {
    // ip = 1 + 0.05 p + 0.5 ceil(p/4) on 4 cores, with a deterministic ±1% disturbance.
    let mut text = String::new();
    for r in 0..3 {
        for p in 1..=16 {
            let p = f64::from(p);
            let wobble = 1.0 + 0.01 * (p * 7.3 + f64::from(r) * 3.1).sin();
            let ip = (1.0 + 0.05 * p + 0.5 * (p / 4.0).ceil()) * wobble;
            text += &format!("cores=4 p={p} ip={ip}\n");
        }
    }
    let data = Datafile::parse("rounds.dat", &text).unwrap();
    let options = BuildOptions {
        name: "rounds".into(),
        categories: vec!["ip".into()],
        ..Default::default()
    };
    let model = PerformanceModel::build(&data, &options).unwrap();
    let integer = model.categories[0]
        .integer
        .as_ref()
        .expect("the test fires");
    assert!(
        integer.fired.iter().any(|g| g == "rounds ceil(p/4)"),
        "{integer:?}"
    );
    assert!(integer.chosen, "{integer:?}");
    // Without the column the rounds are not tested (p mod 4 may still fire).
    let data = Datafile::parse("rounds.dat", &text.replace("cores=4 ", "")).unwrap();
    let model = PerformanceModel::build(&data, &options).unwrap();
    let integer = model.categories[0].integer.as_ref();
    assert!(
        integer.is_none_or(|i| i.fired.iter().all(|g| !g.starts_with("rounds"))),
        "{integer:?}"
    );
}
