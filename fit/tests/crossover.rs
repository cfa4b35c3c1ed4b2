//! Crossovers of two performance models: known answers from analytic (hand-written) models —
//! one crossing, several, none, a tangential touch, two crossings between samples — in both
//! directions; bands from fitted models; the winner map of a known pair.

mod bundled;

use bundled::fft2d;
use std::collections::BTreeMap;

use fit::Datafile;
use fit::combination::Choices;
use fit::crossover::{Axis, MeetingKind, Pair, Scale, ValidatedError, Winner, compare};
use fit::model_file::parse;
use fit::performance::{BuildOptions, PerformanceModel};
use fit::stats::{t_quantile, t_quantile_real};

/// A hand-written model of `n` alone with `p` held at 1: `T_p = pc`.
fn model(name: &str, pc: &str) -> PerformanceModel {
    let text = format!(
        "format = 1\nname = \"{name}\"\nfactors = [\"n\"]\nheld = {{ p = 1 }}\n\
         range = {{ n = [32.0, 1024.0] }}\n\n[[category]]\nname = \"pc\"\nformula = \"{pc}\"\n"
    );
    parse(&format!("{name}.toml"), &text).unwrap()
}

/// A hand-written model of `n` and `p`: `T_p = pc / p`.
fn model2(name: &str, pc: &str) -> PerformanceModel {
    let text = format!(
        "format = 1\nname = \"{name}\"\nfactors = [\"n\", \"p\"]\n\
         range = {{ n = [1.0, 100.0], p = [1.0, 64.0] }}\n\n\
         [[category]]\nname = \"pc\"\nformula = \"{pc}\"\n"
    );
    parse(&format!("{name}.toml"), &text).unwrap()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

#[test]
fn one_crossing_in_both_directions() {
    let (a, b) = (model("sq", "n^2"), model("lin", "100*n"));
    let pair = Pair::new(&a, &b).unwrap();
    let axis = pair.default_axis("n").unwrap();
    assert_eq!((axis.lo, axis.hi, axis.scale), (32.0, 1024.0, Scale::Log));
    let c = pair.crossover(&axis, &[], 512).unwrap();
    assert_eq!(c.meetings.len(), 1, "{c:#?}");
    let m = &c.meetings[0];
    assert_eq!(m.kind, MeetingKind::Crossing);
    assert!(close(m.x, 100.0, 1e-10), "{}", m.x);
    assert!(close(m.t_a, 10000.0, 1e-9));
    assert!(m.band.is_none(), "hand-written models have no intervals");
    assert!(!c.intervals);
    assert!(c.extrapolation.is_empty());
    assert_eq!(c.sides.len(), 2);
    let (below, above) = (&c.sides[0], &c.sides[1]);
    assert_eq!(below.winner, Winner::A);
    assert_eq!(above.winner, Winner::B);
    // The largest advantage on each side, T_loser / T_winner, is at the range's ends here.
    assert_eq!(below.at, 32.0);
    assert!(close(below.ratio, 100.0 / 32.0, 1e-12), "{}", below.ratio);
    assert_eq!((below.t_a, below.t_b), (1024.0, 3200.0));
    assert_eq!(above.at, 1024.0);
    assert!(close(above.ratio, 10.24, 1e-12), "{}", above.ratio);
    assert_eq!((below.from, above.to), (32.0, 1024.0));

    // Swapped, the same crossing with the winners swapped.
    let pair = Pair::new(&b, &a).unwrap();
    let c = pair.crossover(&axis, &[], 512).unwrap();
    assert_eq!(c.meetings.len(), 1);
    assert!(close(c.meetings[0].x, 100.0, 1e-10));
    assert_eq!(c.sides[0].winner, Winner::B);
    assert_eq!(c.sides[1].winner, Winner::A);
}

#[test]
fn several_crossings_alternate_winners() {
    // T_A - T_B = n^3 - 6n^2 + 11n - 6 = (n-1)(n-2)(n-3).
    let (a, b) = (model("cube", "n^3"), model("quad", "6*n^2 - 11*n + 6"));
    for (first, second, flip) in [(&a, &b, false), (&b, &a, true)] {
        let pair = Pair::new(first, second).unwrap();
        let axis = Axis::new("n", 0.0, 4.0).unwrap();
        assert_eq!(axis.scale, Scale::Linear);
        let c = pair.crossover(&axis, &[], 512).unwrap();
        let roots: Vec<f64> = c.meetings.iter().map(|m| m.x).collect();
        assert_eq!(roots.len(), 3, "{roots:?}");
        for (r, expected) in roots.iter().zip([1.0, 2.0, 3.0]) {
            assert!(close(*r, expected, 1e-10), "{roots:?}");
        }
        assert!(c.meetings.iter().all(|m| m.kind == MeetingKind::Crossing));
        let winners: Vec<Winner> = c.sides.iter().map(|s| s.winner).collect();
        let expected = if flip {
            [Winner::B, Winner::A, Winner::B, Winner::A]
        } else {
            [Winner::A, Winner::B, Winner::A, Winner::B]
        };
        assert_eq!(winners, expected);
        // Outside both models' data ([32, 1024]): flagged for each model.
        assert_eq!(c.extrapolation.len(), 2, "{:?}", c.extrapolation);
        assert_eq!(c.extrapolation[0].outside, (0.0, 4.0));
        assert_eq!(c.extrapolation[0].fitted, (32.0, 1024.0));
    }
}

#[test]
fn no_crossing_one_winner() {
    let (a, b) = (model("fast", "n"), model("slow", "2*n"));
    let pair = Pair::new(&a, &b).unwrap();
    let c = pair
        .crossover(&pair.default_axis("n").unwrap(), &[], 512)
        .unwrap();
    assert!(c.meetings.is_empty());
    assert_eq!(c.sides.len(), 1);
    assert_eq!(c.sides[0].winner, Winner::A);
    assert!(close(c.sides[0].ratio, 2.0, 1e-12));
    let c = Pair::new(&b, &a)
        .unwrap()
        .crossover(&pair.default_axis("n").unwrap(), &[], 512)
        .unwrap();
    assert_eq!(c.sides[0].winner, Winner::B);
}

#[test]
fn identical_models_tie_everywhere() {
    let (a, b) = (model("one", "3*n"), model("two", "3*n"));
    let pair = Pair::new(&a, &b).unwrap();
    let c = pair
        .crossover(&pair.default_axis("n").unwrap(), &[], 512)
        .unwrap();
    assert!(c.meetings.is_empty());
    assert_eq!(c.sides.len(), 1);
    assert_eq!(c.sides[0].winner, Winner::Tie);
    assert_eq!(c.sides[0].ratio, 1.0);
}

#[test]
fn tangential_touch_in_both_directions() {
    // T_A - T_B = n^2 + 1 - 2n = (n-1)^2: touches zero at n = 1, B wins on both sides. (Lost
    // cycles are never negative: where 2n < 0, T_B is 0 and B still wins.)
    let (a, b) = (model("sq", "n^2 + 1"), model("line", "2*n"));
    for (first, second, winner) in [(&a, &b, Winner::B), (&b, &a, Winner::A)] {
        let pair = Pair::new(first, second).unwrap();
        for (lo, hi) in [(0.0, 3.0), (-1.0, 3.0), (0.5, 10.0)] {
            let axis = Axis::new("n", lo, hi).unwrap();
            let c = pair.crossover(&axis, &[], 512).unwrap();
            assert_eq!(c.meetings.len(), 1, "[{lo}, {hi}]: {:?}", c.meetings);
            assert_eq!(c.meetings[0].kind, MeetingKind::Touch);
            assert!(close(c.meetings[0].x, 1.0, 1e-6), "{}", c.meetings[0].x);
            assert_eq!(c.sides.len(), 1, "a touch does not change the winner");
            assert_eq!(c.sides[0].winner, winner);
        }
    }
}

#[test]
fn a_touch_on_a_sample_is_found() {
    // Samples 0, 1/511*4, ... never hit 1; 0..511 in steps of 1 does.
    let (a, b) = (model("sq", "n^2 + 1"), model("line", "2*n"));
    let pair = Pair::new(&a, &b).unwrap();
    let axis = Axis::new("n", 0.0, 511.0).unwrap();
    assert_eq!(axis.scale, Scale::Linear);
    let c = pair.crossover(&axis, &[], 512).unwrap();
    assert_eq!(c.meetings.len(), 1, "{:?}", c.meetings);
    assert_eq!(
        (c.meetings[0].x, c.meetings[0].kind),
        (1.0, MeetingKind::Touch)
    );
    // And a crossing on a sample: n^2 + 1 against 2n + 1 (roots 0 and 2; 0 is the range's end).
    let b = model("twice", "2*n + 1");
    let pair = Pair::new(&a, &b).unwrap();
    let c = pair.crossover(&axis, &[], 512).unwrap();
    let found: Vec<(f64, MeetingKind)> = c.meetings.iter().map(|m| (m.x, m.kind)).collect();
    assert_eq!(
        found,
        [(0.0, MeetingKind::Crossing), (2.0, MeetingKind::Crossing)]
    );
    assert_eq!(c.sides.len(), 2);
    assert_eq!(
        (c.sides[0].winner, c.sides[1].winner),
        (Winner::A, Winner::B)
    );
}

#[test]
fn two_crossings_between_samples_are_found() {
    // (n-1)^2 - 1e-8: roots 1 +/- 1e-4, far closer than the samples (about 2 apart).
    let (a, b) = (model("sq", "n^2 + 1"), model("line", "2*n + 0.00000001"));
    let pair = Pair::new(&a, &b).unwrap();
    let axis = Axis::new("n", 0.0, 1000.0).unwrap();
    let c = pair.crossover(&axis, &[], 512).unwrap();
    let roots: Vec<f64> = c.meetings.iter().map(|m| m.x).collect();
    assert_eq!(roots.len(), 2, "{:?}", c.meetings);
    assert!((roots[0] - 0.9999).abs() < 1e-9, "{roots:?}");
    assert!((roots[1] - 1.0001).abs() < 1e-9, "{roots:?}");
    let winners: Vec<Winner> = c.sides.iter().map(|s| s.winner).collect();
    assert_eq!(winners, [Winner::B, Winner::A, Winner::B]);
}

/// A fitted model `1 + n^2` (or `1 + n`) of `pc` with p held at 1, from runs with a
/// deterministic +/-2% disturbance, so that it carries prediction intervals.
fn fitted(name: &str, f: impl Fn(f64) -> f64, shape: &str) -> PerformanceModel {
    let mut text = String::new();
    for (i, n) in [32.0, 48.0, 64.0, 96.0, 128.0, 192.0, 256.0]
        .iter()
        .enumerate()
    {
        let wobble = 1.0 + 0.02 * (((i * 5) % 7) as f64 - 3.0) / 3.0;
        text += &format!("p=1 n={n} pc={}\n", f(*n) * wobble);
    }
    let data = Datafile::parse(&format!("{name}.dat"), &text).unwrap();
    let options = BuildOptions {
        name: name.into(),
        categories: vec!["pc".into()],
        choices: BTreeMap::from([(
            "pc".to_string(),
            Choices {
                shapes: BTreeMap::from([("n".to_string(), shape.to_string())]),
                combination: None,
            },
        )]),
        ..Default::default()
    };
    PerformanceModel::build(&data, &options).unwrap()
}

#[test]
fn bands_hold_where_the_two_cannot_be_told_apart() {
    let a = fitted("sq", |n| n * n, "n^2");
    let b = fitted("lin", |n| 100.0 * n, "n");
    let pair = Pair::new(&a, &b).unwrap();
    let axis = pair.default_axis("n").unwrap();
    assert_eq!((axis.lo, axis.hi), (32.0, 256.0));
    let c = pair.crossover(&axis, &[], 512).unwrap();
    assert!(c.intervals);
    assert_eq!(c.meetings.len(), 1, "{:?}", c.meetings);
    let m = &c.meetings[0];
    assert!((m.x - 100.0).abs() < 5.0, "{}", m.x);
    let band = m.band.expect("fitted models have intervals");
    assert!(band.lo < m.x && m.x < band.hi, "{band:?}");
    assert!(!band.lo_open && !band.hi_open, "{band:?}");
    // A wins below the band, B above it, and in between the two cannot be told apart: the
    // winner changes at 90%.
    assert_eq!(m.significant, Some(true));
    let verdicts: Vec<(Winner, Option<bool>)> =
        c.sides.iter().map(|s| (s.winner, s.significant)).collect();
    assert_eq!(
        verdicts,
        [
            (Winner::A, Some(true)),
            (Winner::Tie, Some(false)),
            (Winner::B, Some(true))
        ]
    );
    assert_eq!((c.sides[1].from, c.sides[1].to), (band.lo, band.hi));
    // At the edges |T_A - T_B| equals the 90% half-width of the difference of the means.
    let at = |x: f64| pair.compare_at(&[("n".to_string(), x)]).unwrap();
    for edge in [band.lo, band.hi] {
        let cmp = at(edge);
        let hw = cmp.half_width;
        assert!(
            (cmp.difference().abs() - hw).abs() < 1e-6 * hw,
            "edge {edge}: {cmp:?}"
        );
    }
    // Inside, they cannot be told apart; just outside, they can.
    let gap = |x: f64| {
        let cmp = at(x);
        cmp.difference().abs() - cmp.half_width
    };
    assert!(gap(0.5 * (band.lo + m.x)) < 0.0 && gap(0.5 * (band.hi + m.x)) < 0.0);
    assert!(gap(band.lo * 0.98) > 0.0 && gap(band.hi * 1.02) > 0.0);
    assert_eq!(at(band.lo * 0.98).winner, Winner::A);
    assert_eq!(at(band.hi * 1.02).winner, Winner::B);
    assert_eq!(at(m.x).winner, Winner::Tie);
}

#[test]
fn the_half_width_of_the_difference_is_the_welch_interval_of_the_two_means() {
    // One category each, p = 1: T = pc. The standard error of each mean is its 90%
    // confidence half-width over t(dof); the difference's variance is their sum, its t has
    // the Welch–Satterthwaite degrees of freedom.
    let a = fitted("sq", |n| n * n, "n^2");
    let b = fitted("lin", |n| 100.0 * n, "n");
    let pair = Pair::new(&a, &b).unwrap();
    for x in [40.0, 100.0, 200.0] {
        let (pa, pb) = (a.predict(&[x]), b.predict(&[x]));
        let sa = pa.time.mean_half_width / t_quantile(a.categories[0].fit.dof);
        let sb = pb.time.mean_half_width / t_quantile(b.categories[0].fit.dof);
        let variance = sa * sa + sb * sb;
        let dof = variance * variance
            / (sa.powi(4) / a.categories[0].fit.dof as f64
                + sb.powi(4) / b.categories[0].fit.dof as f64);
        let expected = t_quantile_real(dof) * variance.sqrt();
        let c = compare(&a, &pa, &b, &pb);
        assert!(
            (c.half_width - expected).abs() < 1e-12 * expected,
            "{c:?} {expected}"
        );
        assert_eq!(pair.compare_at(&[("n".into(), x)]).unwrap(), c);
        assert_eq!(
            c.significant,
            Some((pa.time.value - pb.time.value).abs() > expected)
        );
    }
    // Without intervals: the lower mean wins, untested.
    let (h, k) = (model("sq", "n^2"), model("lin", "100*n"));
    let c = Pair::new(&h, &k)
        .unwrap()
        .compare_at(&[("n".into(), 50.0)])
        .unwrap();
    assert_eq!((c.winner, c.significant), (Winner::A, None));
    assert!(c.half_width.is_nan());
}

#[test]
fn a_models_validated_error_adds_its_variance_with_its_own_degrees_of_freedom() {
    // As above, plus (e T)^2 per model with points - 1 degrees of freedom in the Welch sum.
    let a = fitted("sq", |n| n * n, "n^2");
    let b = fitted("lin", |n| 100.0 * n, "n");
    let (ea, eb) = (
        ValidatedError {
            relative_sd: 0.1,
            points: 6,
        },
        ValidatedError {
            relative_sd: 0.05,
            points: 11,
        },
    );
    let pair = Pair::new(&a, &b)
        .unwrap()
        .with_validated_errors([Some(ea), Some(eb)]);
    for x in [40.0, 100.0, 200.0] {
        let (pa, pb) = (a.predict(&[x]), b.predict(&[x]));
        let sa = pa.time.mean_half_width / t_quantile(a.categories[0].fit.dof);
        let sb = pb.time.mean_half_width / t_quantile(b.categories[0].fit.dof);
        let fa = 0.1 * pa.time.value;
        let fb = 0.05 * pb.time.value;
        let parts = [
            (sa * sa, a.categories[0].fit.dof as f64),
            (sb * sb, b.categories[0].fit.dof as f64),
            (fa * fa, 5.0),
            (fb * fb, 10.0),
        ];
        let variance: f64 = parts.iter().map(|p| p.0).sum();
        let dof = variance * variance / parts.iter().map(|p| p.0 * p.0 / p.1).sum::<f64>();
        let expected = t_quantile_real(dof) * variance.sqrt();
        let c = pair.compare_at(&[("n".into(), x)]).unwrap();
        assert!(
            (c.half_width - expected).abs() < 1e-12 * expected,
            "{c:?} {expected}"
        );
        // Wider than without the models' errors.
        let plain = compare(&a, &pa, &b, &pb);
        assert!(c.half_width > plain.half_width);
    }
    // The map and the crossover carry them, to say so.
    let axis = pair.default_axis("n").unwrap();
    assert_eq!(
        pair.crossover(&axis, &[], 512).unwrap().errors,
        [Some(ea), Some(eb)]
    );
    // One point tells nothing of a spread: ignored.
    let one = ValidatedError {
        relative_sd: 0.1,
        points: 1,
    };
    let ignored = Pair::new(&a, &b)
        .unwrap()
        .with_validated_errors([Some(one), None]);
    assert_eq!(ignored.errors, [None, None]);
}

#[test]
fn the_crossover_along_p_and_the_winner_map_agree_at_n_256() {
    let (dp, tp) = (fft2d("dp"), fft2d("tp"));
    let pair = Pair::new(&dp, &tp).unwrap();
    let (u, v) = (
        pair.default_axis("n").unwrap(),
        pair.default_axis("p").unwrap(),
    );
    let map = pair.winner_map(&u, &v, &[], 41).unwrap();
    assert!(map.intervals);
    let i = map
        .us
        .iter()
        .position(|&n| (n - 256.0).abs() < 1e-9)
        .expect("n = 256 is a column of the map");
    // At n = 256 (and, to see both verdicts, at every other column of the map too).
    let mut seen = std::collections::BTreeSet::new();
    for i in std::iter::once(i).chain(0..map.us.len()) {
        let n = map.us[i];
        let c = pair.crossover(&v, &[("n".to_string(), n)], 512).unwrap();
        let verdict_1d = |p: f64| {
            let side = c
                .sides
                .iter()
                .find(|s| s.from <= p && p <= s.to)
                .expect("the sides cover the range");
            (side.winner, side.significant)
        };
        for (j, &p) in map.vs.iter().enumerate() {
            let cell = &map.comparisons[j][i];
            assert_eq!(map.cells[j][i], cell.winner);
            assert_eq!(
                verdict_1d(p),
                (cell.winner, cell.significant),
                "n={n} p={p}: {c:#?}"
            );
            seen.insert(format!("{:?}", cell.winner));
        }
        // The 1-D samples agree with the sides they lie on, too.
        for (p, cmp) in &c.points {
            assert_eq!(verdict_1d(*p), (cmp.winner, cmp.significant), "n={n} p={p}");
        }
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["A", "Tie"]);
    // And the map's own sides along n at each level agree with its cells.
    for (j, sides) in map.levels.iter().enumerate() {
        for (k, &n) in map.us.iter().enumerate() {
            let side = sides.iter().find(|s| s.from <= n && n <= s.to).unwrap();
            assert_eq!(side.winner, map.cells[j][k], "n={n} p={}", map.vs[j]);
        }
    }
}

#[test]
fn winner_map_of_a_known_pair() {
    // T_A = n*p / p = n against T_B = (50 + n*p/10) / p: A wins where n < 500/(9p)...
    // kept simple: A = n, B = 50/p + n/10, equal where n = (500/9)/p.
    let a = model2("a", "n*p");
    let b = model2("b", "50 + 0.1*n*p");
    let pair = Pair::new(&a, &b).unwrap();
    assert_eq!(pair.free(&[]).unwrap(), ["n", "p"]);
    let (u, v) = (
        Axis::new("n", 1.0, 100.0).unwrap(),
        Axis::new("p", 1.0, 64.0).unwrap(),
    );
    let map = pair.winner_map(&u, &v, &[], 41).unwrap();
    assert_eq!((map.us.len(), map.vs.len()), (41, 41));
    assert_eq!(map.cells.len(), 41);
    for (j, &p) in map.vs.iter().enumerate() {
        for (i, &n) in map.us.iter().enumerate() {
            let expected = if n * p < 500.0 / 9.0 {
                Winner::A
            } else {
                Winner::B
            };
            assert_eq!(map.cells[j][i], expected, "n={n} p={p}");
        }
    }
    // The boundary: n = 500/(9p) at every level of p where that lies in [1, 100].
    let inside: Vec<f64> = map
        .vs
        .iter()
        .copied()
        .filter(|p| (1.0..=100.0).contains(&(500.0 / (9.0 * p))))
        .collect();
    assert_eq!(map.boundary.len(), inside.len(), "{:?}", map.boundary);
    for (point, p) in map.boundary.iter().zip(&inside) {
        assert_eq!(point.v, *p);
        assert_eq!(point.kind, MeetingKind::Crossing);
        assert!(close(point.u, 500.0 / (9.0 * p), 1e-10), "{point:?}");
    }
    // Swapped, the winners swap.
    let swapped = Pair::new(&b, &a)
        .unwrap()
        .winner_map(&u, &v, &[], 41)
        .unwrap();
    assert_eq!(swapped.cells[0][0], Winner::B);
    assert_eq!(swapped.cells[40][40], Winner::A);
}

#[test]
fn bad_pairs_get_one_line_errors() {
    let a = model("one", "n^2");
    let b = model2("two", "n*p");
    let e = Pair::new(&a, &b).unwrap_err().to_string();
    assert_eq!(
        e,
        "the models are over different factors: one has (n), two has (n, p)"
    );
    let pair = Pair::new(&b, &b).unwrap();
    let axis = Axis::new("n", 1.0, 10.0).unwrap();
    let e = pair.crossover(&axis, &[], 512).unwrap_err().to_string();
    assert_eq!(
        e,
        "factor 'p' is neither varied nor fixed: give its value, e.g. --at p=VALUE"
    );
    let e = pair
        .crossover(&axis, &[("m".into(), 3.0)], 512)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "--at m=3: 'm' is not a factor of the models (n, p)");
    let pair = Pair::new(&a, &a).unwrap();
    let e = pair
        .crossover(&axis, &[("p".into(), 4.0)], 512)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "--at p=4: one holds p at 1 (it is not a factor)");
    // Its held value is accepted.
    assert!(pair.crossover(&axis, &[("p".into(), 1.0)], 512).is_ok());
    assert!(Axis::new("n", 3.0, 3.0).is_err());
}

#[test]
fn a_near_touch_is_a_stretch_where_the_two_cannot_be_told_apart() {
    // T_A - T_B = n^2 + 2550 - 100n = (n - 50)^2 + 50: the means never meet, but near n = 50
    // the difference is within the 90% half-width; the winner (B) does not change.
    let a = fitted("sq", |n| n * n + 2550.0, "n^2");
    let b = fitted("lin", |n| 100.0 * n, "n");
    let pair = Pair::new(&a, &b).unwrap();
    let c = pair
        .crossover(&Axis::new("n", 32.0, 256.0).unwrap(), &[], 512)
        .unwrap();
    let kinds: Vec<MeetingKind> = c.meetings.iter().map(|m| m.kind).collect();
    assert_eq!(kinds, [MeetingKind::NearTouch], "{:#?}", c.meetings);
    let m = &c.meetings[0];
    assert_eq!(m.significant, Some(false));
    let band = m.band.unwrap();
    let verdicts: Vec<Winner> = c.sides.iter().map(|s| s.winner).collect();
    let tie = c.sides.iter().find(|s| s.winner == Winner::Tie).unwrap();
    assert!(tie.from <= band.lo && band.hi <= tie.to, "{:#?}", c.sides);
    assert!(tie.from <= m.x && m.x <= tie.to);
    // B wins on both sides of the stretch (about n = 43 to 57 here).
    assert_eq!(verdicts, [Winner::B, Winner::Tie, Winner::B]);
    assert!(tie.from > 32.0 && tie.to < 256.0, "{tie:?}");
    for s in &c.sides {
        let at = pair.compare_at(&[("n".into(), s.at)]).unwrap();
        assert_eq!(at.winner, s.winner, "{s:?}");
    }
}

/// `T_p = pc` of a program: 100 below n = 100, 300 from there (a PACE model's replay deals
/// work in whole units, so its time steps).
#[derive(Debug)]
struct Step;

impl fit::performance::Evaluator for Step {
    fn categories(&self, point: &[f64]) -> Vec<fit::Prediction> {
        let v = if point[0] < 100.0 { 100.0 } else { 300.0 };
        vec![fit::Prediction::bounded(v, f64::NAN, f64::NAN, 0.0)]
    }

    fn outside(&self, _: &[f64]) -> Option<String> {
        None
    }
}

#[test]
fn a_sign_change_without_meeting_is_a_failure_of_formulas_and_a_step_of_a_program() {
    // A pole at n = 100: T_A - T_B jumps from -inf to +inf there; refused, naming where.
    let (pole, flat) = (model("pole", "1000/(n-100.5)"), model("flat", "200"));
    let pair = Pair::new(&pole, &flat).unwrap();
    let axis = pair.default_axis("n").unwrap();
    let e = pair.crossover(&axis, &[], 512).unwrap_err().to_string();
    assert!(
        e.contains("changes sign between n=") && e.contains("jump"),
        "{e}"
    );
    // The same jump of a model an evaluator computes is where the winner changes.
    let mut step = model("step", "1");
    step.evaluator = Some(std::sync::Arc::new(Step));
    let pair = Pair::new(&step, &flat).unwrap();
    let c = pair.crossover(&axis, &[], 512).unwrap();
    assert_eq!(c.meetings.len(), 1, "{c:#?}");
    let m = &c.meetings[0];
    assert_eq!(m.kind, MeetingKind::Crossing);
    assert!((m.x - 100.0).abs() < 1e-6, "{}", m.x);
    assert_eq!(
        (c.sides[0].winner, c.sides[1].winner),
        (Winner::A, Winner::B)
    );
}
