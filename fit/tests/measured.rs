//! Measured points decide first (issue 33, item 1; docs/comparing.md): where both
//! implementations ran, the verdict there is their runs', in the 1-D crossover's sides and in
//! the winner map's cells, whatever the models say; between them the models decide.

use fit::crossover::measured::{Run, measured_points};
use fit::crossover::{Axis, Basis, MeasuredPoint, Pair, Winner};
use fit::model_file::parse;
use fit::performance::PerformanceModel;
use proptest::prelude::*;

/// A hand-written model of `n` and `p`: `T_p = pc / p`.
fn model(name: &str, pc: &str) -> PerformanceModel {
    let text = format!(
        "format = 1\nname = \"{name}\"\nfactors = [\"n\", \"p\"]\n\
         range = {{ n = [10.0, 90.0], p = [2.0, 64.0] }}\n\n\
         [[category]]\nname = \"pc\"\nformula = \"{pc}\"\n"
    );
    parse(&format!("{name}.toml"), &text).unwrap()
}

/// Three runs of each at `(n, p)`: A's mean `mean`, B's `mean * ratio`, spread `spread`
/// (relative), interleaved or not.
fn runs_at(
    n: f64,
    p: f64,
    mean: f64,
    ratio: f64,
    spread: f64,
    paired: bool,
) -> (Vec<Run>, Vec<Run>) {
    let wobble = [-1.0, 0.3, 0.7];
    let run = |m: f64, k: usize, shift: f64| Run {
        point: vec![n, p],
        value: m * (1.0 + spread * wobble[(k + (shift as usize)) % 3]),
        replicate: paired.then_some(k as u64 + 1),
    };
    let a = (0..3).map(|k| run(mean, k, 0.0)).collect();
    let b = (0..3).map(|k| run(mean * ratio, k, 1.0)).collect();
    (a, b)
}

fn points() -> impl Strategy<Value = Vec<(usize, usize, f64, f64, bool)>> {
    // On a 5 x 5 lattice far enough apart that no two share a map cell.
    prop::collection::vec(
        (
            0usize..5,
            0usize..5,
            0.5f64..2.0,
            0.001f64..0.3,
            any::<bool>(),
        ),
        1..8,
    )
}

fn measured(spec: &[(usize, usize, f64, f64, bool)]) -> Vec<MeasuredPoint> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut seen = std::collections::BTreeSet::new();
    for &(i, j, ratio, spread, paired) in spec {
        if !seen.insert((i, j)) {
            continue;
        }
        let (n, p) = (10.0 + 20.0 * i as f64, 2.0 + 15.5 * j as f64);
        let (ra, rb) = runs_at(n, p, 1.0, ratio, spread, paired);
        a.extend(ra);
        b.extend(rb);
    }
    measured_points(&["n".into(), "p".into()], &a, &b)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the models say (here: A always faster, by 2x), the runs decide at their points.
    #[test]
    fn the_runs_decide_at_every_measured_point(spec in points()) {
        let (a, b) = (model("a", "n*p"), model("b", "2*n*p"));
        let measured = measured(&spec);
        prop_assert!(!measured.is_empty());
        let pair = Pair::new(&a, &b).unwrap().with_measured(&measured);
        let (u, v) = (pair.default_axis("n").unwrap(), pair.default_axis("p").unwrap());
        let map = pair.winner_map(&u, &v, &[], 41).unwrap();
        prop_assert_eq!(map.measured.len(), measured.len());
        for (m, &(j, i)) in map.measured.iter().zip(&map.measured_cells) {
            prop_assert_eq!(map.cells[j][i], m.winner, "{:?}", m.point);
        }
        for m in &measured {
            let p = m.value("p").unwrap();
            let c = pair.crossover(&u, &[("p".into(), p)], 512).unwrap();
            let n = m.value("n").unwrap();
            // The side at n says what the runs say; where it is the models' side, they agree.
            let at: Vec<_> = c.sides.iter().filter(|s| s.from <= n && n <= s.to).collect();
            prop_assert!(!at.is_empty());
            match at.iter().find(|s| s.basis == Basis::Runs) {
                Some(s) => prop_assert_eq!(s.winner, m.winner),
                None => prop_assert!(at.iter().all(|s| s.winner == m.winner)),
            }
        }
    }
}

#[test]
fn known_differences_are_found_and_equal_runs_are_not() {
    // B 30% slower with 2% spread: found (paired and Welch); equal means: a tie.
    for paired in [true, false] {
        let (a, b) = runs_at(10.0, 2.0, 1.0, 1.3, 0.02, paired);
        let m = measured_points(&["n".into(), "p".into()], &a, &b);
        assert_eq!(m[0].winner, Winner::A);
        let (a, b) = runs_at(10.0, 2.0, 1.0, 1.0, 0.02, paired);
        let m = measured_points(&["n".into(), "p".into()], &a, &b);
        assert_eq!(m[0].winner, Winner::Tie, "{m:?}");
    }
}

#[test]
fn a_side_the_runs_contradict_is_split_and_the_rest_stays_the_models() {
    // The models: A twice as fast everywhere (no intervals: the lower mean wins). Runs at
    // n = 50, p = 2 say B is 30% faster.
    let (a, b) = (model("a", "n*p"), model("b", "2*n*p"));
    let (ra, rb) = runs_at(50.0, 2.0, 1.0, 1.0 / 1.3, 0.01, true);
    let measured = measured_points(&["n".into(), "p".into()], &ra, &rb);
    let pair = Pair::new(&a, &b).unwrap().with_measured(&measured);
    let axis = Axis::new("n", 10.0, 90.0).unwrap();
    let c = pair.crossover(&axis, &[("p".into(), 2.0)], 512).unwrap();
    let shape: Vec<(f64, f64, Winner, Basis)> = c
        .sides
        .iter()
        .map(|s| (s.from, s.to, s.winner, s.basis))
        .collect();
    assert_eq!(
        shape,
        [
            (10.0, 50.0, Winner::A, Basis::Models),
            (50.0, 50.0, Winner::B, Basis::Runs),
            (50.0, 90.0, Winner::A, Basis::Models)
        ]
    );
    assert_eq!(c.measured.len(), 1);
    // Another p: the measured point is not on the line.
    let c = pair.crossover(&axis, &[("p".into(), 4.0)], 512).unwrap();
    assert!(c.measured.is_empty());
    assert_eq!(c.sides.len(), 1);
}
