//! Intervals that keep their promise beyond the data (issue 33, item 4;
//! docs/modelling.md#beyond-the-data): forward validation widens `T_p`'s interval beyond the
//! fitted range, leaves it alone inside, is stored in the model file, and old files say their
//! intervals are not calibrated there.

mod families;

use fit::calibration::Reach;
use fit::model_file::{parse, write};
use fit::performance::{BuildOptions, PerformanceModel};
use fit::validation::validate;
use fit::{Condition, Datafile};
use rand::SeedableRng;
use rand::rngs::StdRng;

fn synthetic(seed: u64) -> PerformanceModel {
    let truth = families::families()[0].truths[0].1;
    families::model(truth, &mut StdRng::seed_from_u64(seed))
}

#[test]
fn inside_the_data_intervals_stay_as_they_are() {
    let model = synthetic(3);
    assert!(model.calibration.as_ref().is_some_and(|c| c.len() == 1));
    let mut before = model.clone();
    before.calibration = None;
    for x in [2.0, 2.5, 3.0, 7.0, 11.0, 16.0] {
        let (now, then) = (model.predict(&[x]), before.predict(&[x]));
        assert_eq!(now.reach, Reach::Inside);
        assert_eq!(now.time, then.time, "at p={x}");
    }
}

/// The model of `synthetic(seed)` with forward validation's `κ` alone (its rivals off).
fn kappa_only(seed: u64) -> PerformanceModel {
    let mut model = synthetic(seed);
    for c in model.calibration.iter_mut().flatten() {
        c.rivals.clear();
    }
    model
}

#[test]
fn beyond_the_data_intervals_widen_with_the_distance() {
    let model = kappa_only(3);
    let kappa = model.calibration.as_ref().unwrap()[0].relative_sd;
    assert!(
        kappa > 0.0,
        "5 + 1000/p + 2 log2(p) is not a shape of the defaults"
    );
    let mut before = model.clone();
    before.calibration = None;
    let mut last = 0.0;
    for x in [32.0, 64.0, 128.0] {
        let (now, then) = (model.predict(&[x]), before.predict(&[x]));
        assert!(matches!(now.reach, Reach::Calibrated { .. }));
        assert_eq!(then.reach, Reach::Uncalibrated);
        assert_eq!(now.time.value, then.time.value);
        let added = now.time.half_width / then.time.half_width;
        assert!(added > 1.0 && added > last, "at p={x}: {added}");
        assert!(now.time.mean_half_width > then.time.mean_half_width);
        last = added;
    }
}

#[test]
fn beyond_the_data_of_one_factor_the_interval_holds_the_rival_forms() {
    let model = synthetic(3);
    let rivals = &model.calibration.as_ref().unwrap()[0].rivals;
    assert!(rivals.len() >= fit::rivals::MIN_SPREAD, "{rivals:?}");
    let total: f64 = rivals.iter().map(|r| r.weight).sum();
    assert!((total - 1.0).abs() < 1e-12);
    let mut before = model.clone();
    before.calibration = None;
    for x in [32.0, 128.0] {
        let now = model.predict(&[x]);
        let own = before.predict(&[x]).time;
        let mix = fit::rivals::mixture(rivals, &[x]).unwrap();
        // The model's own value (its categories still add up to it) ...
        assert_eq!(now.time.value, own.value);
        assert!(matches!(now.reach, Reach::Calibrated { .. }));
        // ... in its own interval widened to hold the mixture's, and no wider: the rivals'
        // spread is the error of form, forward validation's κ is not added to it.
        let held = fit::rivals::hold(&own, &mix, f64::NEG_INFINITY);
        assert_eq!(now.time.half_width, held.half_width, "at p={x}");
        assert_eq!(now.time.mean_half_width, held.mean_half_width, "at p={x}");
        assert!(now.time.lower <= mix.lower.max(0.0) + 1e-12, "at p={x}");
        assert!(now.time.upper >= mix.upper - 1e-12, "at p={x}");
        // Every rival's own prediction is inside it.
        for r in rivals {
            let value = r.fit.predict(&[x]).value;
            assert!(
                now.time.lower <= value && value <= now.time.upper,
                "{value} at p={x}"
            );
        }
    }
    // Inside the data, the model's own prediction.
    assert_eq!(model.predict(&[7.0]).time, before.predict(&[7.0]).time);
}

#[test]
fn with_one_rival_the_interval_keeps_forward_validations_widening_too() {
    let mut model = synthetic(3);
    let calibration = model.calibration.as_mut().unwrap();
    calibration[0].rivals.truncate(1);
    calibration[0].rivals[0].weight = 1.0;
    let rival = calibration[0].rivals[0].clone();
    let mut kappa = model.clone();
    kappa.calibration.as_mut().unwrap()[0].rivals.clear();
    for x in [32.0, 128.0] {
        let (now, alone) = (model.predict(&[x]).time, kappa.predict(&[x]).time);
        let mix = fit::rivals::mixture(std::slice::from_ref(&rival), &[x]).unwrap();
        assert_eq!(now.value, alone.value);
        // What κ covers and what the one rival covers, both.
        assert_eq!(
            now.half_width,
            fit::rivals::hold(&alone, &mix, f64::NEG_INFINITY).half_width
        );
        assert!(now.half_width >= alone.half_width, "at p={x}");
    }
}

#[test]
fn the_calibration_is_stored_and_old_files_are_not_calibrated() {
    let model = synthetic(5);
    let text = write(&model);
    assert!(
        text.contains("[[extrapolation]]\nfactor = \"p\"\n"),
        "{text}"
    );
    assert!(text.contains("[[extrapolation.rival]]"), "{text}");
    let back = parse("m.toml", &text).unwrap();
    assert_eq!(back.calibration, model.calibration);
    assert_eq!(write(&back), text);
    assert_eq!(back.predict(&[64.0]).time, model.predict(&[64.0]).time);
    // A file written before the field existed: no widening, and it says so.
    let start = text.find("\n[[extrapolation]]").unwrap();
    let old = format!("{}\n", &text[..start]);
    let old = parse("old.toml", &old).unwrap();
    assert_eq!(old.calibration, None);
    let far = old.predict(&[64.0]);
    assert_eq!(far.reach, Reach::Uncalibrated);
    assert!(far.time.half_width < model.predict(&[64.0]).time.half_width);
    assert_eq!(old.predict(&[8.0]).time, model.predict(&[8.0]).time);
    // A file written before the rivals existed: forward validation's κ alone.
    let start = text.find("\n[[extrapolation.rival]]").unwrap();
    let kappa = parse("kappa.toml", &format!("{}\n", &text[..start])).unwrap();
    let calibration = kappa.calibration.as_ref().unwrap();
    assert!(calibration[0].rivals.is_empty());
    assert_eq!(
        kappa.predict(&[64.0]).time,
        kappa_only(5).predict(&[64.0]).time
    );
}

#[test]
fn bad_calibrations_are_refused_naming_the_field() {
    let text = write(&synthetic(5));
    let start = text.find("\n[[extrapolation]]").unwrap();
    let head = &text[..start];
    for (table, message) in [
        (
            "factor = \"q\"\nrelative_sd = 0.1\npoints = 2\nratio = 2.0",
            "extrapolation: 'q' is not among the factors (p)",
        ),
        (
            "factor = \"p\"\nrelative_sd = -0.1\npoints = 2\nratio = 2.0",
            "extrapolation 'p': relative_sd = -0.1 must be a finite number >= 0",
        ),
        (
            "factor = \"p\"\nrelative_sd = nan\npoints = 2\nratio = 2.0",
            "extrapolation 'p': relative_sd = NaN must be a finite number >= 0",
        ),
        (
            "factor = \"p\"\nrelative_sd = 0.1\npoints = 0\nratio = 2.0",
            "extrapolation 'p': points = 0 must be at least 1",
        ),
        (
            "factor = \"p\"\nrelative_sd = 0.1\npoints = 2\nratio = 0.5",
            "extrapolation 'p': ratio = 0.5 must be a finite number >= 1",
        ),
        (
            "factor = \"p\"\nrelative_sd = 0.1\npoints = 2\nratio = 2.0\nresponse = \"li\"",
            "extrapolation 'p': response 'li' is not one of the model's second or later \
             responses (it has none)",
        ),
    ] {
        let file = format!("{head}\n\n[[extrapolation]]\n{table}\n");
        let e = parse("m.toml", &file).unwrap_err().to_string();
        assert_eq!(e, format!("m.toml: {message}"));
    }
}

#[test]
fn bad_rivals_are_refused_naming_the_field() {
    let text = write(&synthetic(5));
    let header = "[[extrapolation.rival]]\nweight = ";
    let at = text.find(header).unwrap() + header.len();
    let end = at + text[at..].find('\n').unwrap();
    let heavy = format!("{}2.0{}", &text[..at], &text[end..]);
    let e = parse("m.toml", &heavy).unwrap_err().to_string();
    assert_eq!(
        e,
        "m.toml: extrapolation 'p': rival 1: weight = 2 must be a number in (0, 1]"
    );
    let header = "[extrapolation.rival.fit]\nformula = ";
    let at = text.find(header).unwrap() + header.len();
    let end = at + text[at..].find('\n').unwrap();
    let foreign = format!("{}\"1 + q\"{}", &text[..at], &text[end..]);
    let e = parse("m.toml", &foreign).unwrap_err().to_string();
    assert_eq!(
        e,
        "m.toml: extrapolation 'p': rival 1: formula `1 + q` uses 'q', which is not among the \
         factors (p)"
    );
}

/// Models of `impl` from `datafile`'s runs at p <= 8, checked on the 16-core grid's runs at
/// p = 12..16: the share of runs inside their 90% prediction interval, calibrated and before.
fn real_coverage(datafile: &str, implementation: &str) -> (f64, f64, usize) {
    let data = Datafile::read(&datasets::path(datafile)).unwrap();
    let conditions = Condition::parse_all(&[
        format!("impl={implementation}"),
        "role=model".into(),
        "p<=8".into(),
    ])
    .unwrap();
    let options = BuildOptions {
        name: implementation.into(),
        conditions: conditions.clone(),
        ..BuildOptions::default()
    };
    let model = PerformanceModel::build(&data.filter(&conditions).unwrap(), &options).unwrap();
    let grid = Datafile::read(&datasets::path("fft2d-16core.dat")).unwrap();
    let far = Condition::parse_all(&[
        format!("impl={implementation}"),
        "p>=12".into(),
        "role in model,validate".into(),
    ])
    .unwrap();
    let far = grid.filter(&far).unwrap();
    let now = validate(&model, &far).unwrap();
    let mut before = model.clone();
    before.calibration = None;
    let then = validate(&before, &far).unwrap();
    (
        now.coverage().unwrap(),
        then.coverage().unwrap(),
        now.points.len(),
    )
}

#[test]
fn real_runs_beyond_the_data() {
    // Measured on 2026-11-28 (docs/results.md#intervals-beyond-the-data): the runs at
    // p = 12..16 of the 16-core grid, against models of the runs at p <= 8. Since 2026-12-01
    // cl and rc may take the full form after an additive choice (40, 78, 83 and 76 before).
    for (datafile, implementation, after, before) in [
        // Forward validation finds no drift along p inside p <= 8 (κ_p = 0): no change.
        ("fft2d-full-16core.dat", "dp", 55, 55),
        ("fft2d-full-16core.dat", "tp", 80, 80),
        // It finds dp's (κ_p = 0.71 per doubling): every run inside.
        ("fft2d-16core.dat", "dp", 99, 89),
        // tp's sl has the odd-p term of integer structure (73 of 99 without it).
        ("fft2d-16core.dat", "tp", 74, 74),
    ] {
        let (now, then, runs) = real_coverage(datafile, implementation);
        assert_eq!(runs, 99);
        let inside = |share: f64| (share * runs as f64).round() as usize;
        assert_eq!(
            (inside(now), inside(then)),
            (after, before),
            "{datafile} {implementation}"
        );
    }
}

/// Coverage of a fresh run by the 90% interval at 2x, 4x and 8x beyond p = 16, over 10 seeds
/// of each truth (the figures of `cargo bench -p fit --bench coverage -- 10`): today's rule,
/// the union of `κ`'s widening and the rivals' (the rule before it) and `κ` alone.
#[test]
fn synthetic_families_coverage() {
    let mut kappa_fails = Vec::new();
    for family in families::families() {
        let tallies = families::coverage(&family, 10);
        for (tally, ratio) in tallies.iter().zip(families::RATIOS) {
            let (now, before) = (tally.coverage(), tally.coverage_before());
            let widening = tally.median_width() / tally.median_width_before();
            let union = tally.median_width_union() / tally.median_width_before();
            let what = format!(
                "{} at {ratio}x: {now:.3} (union {:.3}, κ only {:.3}, before {before:.3}), \
                 width x{widening:.2} (union x{union:.2})",
                family.name,
                tally.coverage_union(),
                tally.coverage_kappa()
            );
            // The coverage target of issue 33 (docs/results.md#intervals-beyond-the-data): at
            // least 85% in every family at 2x, 4x and 8x (measured 86.7-100% with 30-40
            // trials); from 4x on, at least 30 points above the uncalibrated intervals.
            assert!(now >= 0.85, "{what}");
            if ratio > 2.0 {
                assert!(now >= before + 0.3, "{what}");
            }
            // Never wider than the union of κ's widening and the rivals' (today's interval is
            // the own one holding the rivals', with κ only where fewer than two rivals) ...
            assert!(widening <= union + 1e-9, "{what}");
            // ... and for thresholds, where κ's widening alone made the median half-width
            // 2.6, 18 and 109 times the truth at 2x, 4x and 8x, at most 0.6, 2 and 5 times it
            // (measured 0.59, 1.90, 4.63 before the lack-of-fit rule of 2026-12-01, 0.55, 1.69,
            // 4.48 with it). The bound was 6 times the uncalibrated width (measured 2.5, 4.2,
            // 5.1), but that width shrank as the rule fitted the thresholds better (the ratio
            // rose to 3.3, 5.7, 7.5 while the intervals narrowed).
            if family.name == "thresholds" {
                let bound = match ratio {
                    r if r <= 2.0 => 0.6,
                    r if r <= 4.0 => 2.0,
                    _ => 5.0,
                };
                assert!(tally.median_width() <= bound, "{what}");
            }
            if tally.coverage_kappa() < 0.85 {
                kappa_fails.push(what);
            }
        }
    }
    // κ alone: the PMNF sums at 77.5% and 65% at 4x and 8x.
    assert!(kappa_fails.len() >= 2, "{kappa_fails:?}");
}

#[test]
fn the_verdict_beyond_the_data_uses_the_widened_means() {
    let a = synthetic(3);
    let b = families::model(
        families::families()[0].truths[1].1,
        &mut StdRng::seed_from_u64(4),
    );
    let (mut a0, mut b0) = (a.clone(), b.clone());
    a0.calibration = None;
    b0.calibration = None;
    let half_width = |a: &PerformanceModel, b: &PerformanceModel, x: f64| {
        let (pa, pb) = (a.predict(&[x]), b.predict(&[x]));
        fit::crossover::compare(a, &pa, b, &pb).half_width
    };
    // Inside the data, the same; beyond it, wider by the forward validation's drift.
    assert_eq!(half_width(&a, &b, 8.0), half_width(&a0, &b0, 8.0));
    assert!(half_width(&a, &b, 64.0) > half_width(&a0, &b0, 64.0));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever the forward validation measured, a point inside the data keeps the fits' own
    /// interval, and beyond it the interval never narrows and grows with the distance.
    #[test]
    fn inside_unchanged_beyond_monotone(
        kappa in 0.0f64..2.0,
        points in 1usize..8,
        inside in 2.0f64..16.0,
        beyond in 16.5f64..500.0,
        further in 1.01f64..4.0,
    ) {
        let mut model = synthetic(7);
        model.calibration = Some(vec![fit::calibration::Calibration {
            factor: "p".into(),
            relative_sd: kappa,
            points,
            ratio: 2.0,
            rivals: Vec::new(),
            response: None,
        }]);
        let mut before = model.clone();
        before.calibration = None;
        proptest::prop_assert_eq!(model.predict(&[inside]).time, before.predict(&[inside]).time);
        let (near, far) = (model.predict(&[beyond]), model.predict(&[beyond * further]));
        let own = before.predict(&[beyond]).time;
        proptest::prop_assert!(near.time.half_width >= own.half_width);
        proptest::prop_assert!(near.time.mean_half_width >= own.mean_half_width);
        // The widening, relative to the value, grows with the distance.
        let relative = |t: &fit::performance::TimePrediction| match t.reach {
            Reach::Calibrated { sd, .. } => sd / t.time.value.abs(),
            other => panic!("{other:?}"),
        };
        proptest::prop_assert!(relative(&far) >= relative(&near));
    }
}

/// The example: `5 + 1000/p + 2 log2(p)` measured at p = 2, 4, ..., 128 (3 replicates,
/// 3% noise), searched, and predicted 8x beyond the data, at p = 1024, where the truth is
/// 25.98. Uncalibrated, the top model said 24.2 ± 1.5 (the true form ranked third).
fn sum_of_overheads(seed: u64) -> fit::Observations {
    use rand_distr::{Distribution, Normal};
    let mut rng = StdRng::seed_from_u64(seed);
    let noise = Normal::new(1.0, 0.03).unwrap();
    let (mut p, mut y) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        for k in 1..=7 {
            let x = f64::from(1u32 << k);
            p.push(x);
            y.push((5.0 + 1000.0 / x + 2.0 * x.log2()) * noise.sample(&mut rng));
        }
    }
    fit::Observations::new("sum.dat", vec!["p".into()], "wall", vec![p], y).unwrap()
}

#[test]
fn the_searched_top_model_holds_the_truth_8x_beyond_the_data() {
    let truth = 5.0 + 1000.0 / 1024.0 + 20.0;
    let (mut inside, mut before) = (0, 0);
    for seed in 0..10 {
        let obs = sum_of_overheads(seed);
        let mut ranking = fit::Ranking {
            fits: fit::search(&obs, 0, 5),
            ..Default::default()
        };
        let uncalibrated = ranking.predict(&[1024.0])[0];
        ranking.calibrate(&obs);
        assert!(!ranking.rivals.is_empty(), "seed {seed}");
        let top = ranking.predict(&[1024.0])[0];
        // The value is the top model's; only the interval widens.
        assert_eq!(top.value, uncalibrated.value);
        assert!(top.half_width >= uncalibrated.half_width);
        inside += usize::from(top.lower <= truth && truth <= top.upper);
        before += usize::from(uncalibrated.lower <= truth && truth <= uncalibrated.upper);
        // Inside the data, nothing changes.
        let mut plain = ranking.clone();
        plain.rivals.clear();
        assert_eq!(ranking.predict(&[50.0]), plain.predict(&[50.0]));
    }
    println!("inside the 90% interval at p=1024: {inside} of 10 (uncalibrated: {before})");
    assert_eq!(inside, 10, "before: {before} of 10");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Holding the rivals keeps the model's value and gives the least interval about it that
    /// holds both its own interval and the mixture's, for a new run and for the mean alike.
    #[test]
    fn holding_is_the_least_interval_about_the_value_that_holds_both(
        value in -100.0f64..100.0,
        own in (0.0f64..50.0, 0.0f64..50.0),
        centre in -100.0f64..100.0,
        mix in (0.0f64..50.0, 0.0f64..50.0),
    ) {
        use fit::Prediction;
        let own = Prediction::bounded(value, own.0, own.1, f64::NEG_INFINITY);
        let mix = Prediction::bounded(centre, mix.0, mix.1, f64::NEG_INFINITY);
        let held = fit::rivals::hold(&own, &mix, f64::NEG_INFINITY);
        proptest::prop_assert_eq!(held.value, value);
        for (h, a, b) in [
            (held.half_width, own.half_width, mix.half_width),
            (held.mean_half_width, own.mean_half_width, mix.mean_half_width),
        ] {
            // It holds both ...
            proptest::prop_assert!(h >= a);
            proptest::prop_assert!(value - h <= centre - b + 1e-9);
            proptest::prop_assert!(value + h >= centre + b - 1e-9);
            // ... and no less would.
            let least = a.max(value - (centre - b)).max(centre + b - value);
            proptest::prop_assert!((h - least).abs() <= 1e-9 * least.max(1.0));
        }
    }
}
