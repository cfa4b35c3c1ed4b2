//! Factors that vary together in every run (a weak-scaling series): the model follows one of
//! them, and says where a point leaves the runs' series
//! (docs/modelling.md#factors-that-vary-together).

use std::collections::BTreeMap;

use fit::Observations;
use fit::combination::{Choices, ShapeSource, Together, combine};

fn obs(factors: &[&str], columns: Vec<Vec<f64>>, y: Vec<f64>) -> Observations {
    Observations::new(
        "series",
        factors.iter().map(|f| f.to_string()).collect(),
        "wall",
        columns,
        y,
    )
    .unwrap()
}

/// A weak-scaling series, n = 10 log2(p) (3 replicates, ±1% noise): the model follows p
/// alone, finds its linear shape and coefficients, and n's shape is 1. Before, neither factor
/// had an edge, both shapes were the constant, and R² was below 0.
#[test]
fn a_weak_scaling_series_is_modelled_in_its_lead() {
    let (mut p, mut n, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for &pp in &[4.0f64, 8.0, 16.0, 32.0, 64.0] {
        for noise in [1.0, 1.01, 0.99] {
            // `n` first in the file: the lead is `p` by its name, not by its place.
            n.push(10.0 * pp.log2());
            p.push(pp);
            y.push((2.0 + 0.5 * pp) * noise);
        }
    }
    let o = obs(&["n", "p"], vec![n, p], y);
    let m = combine(&o, &Choices::default()).unwrap();
    assert_eq!(m.shapes[0].expr, "1");
    assert_eq!(m.shapes[0].source, ShapeSource::Follows);
    assert_eq!(m.shapes[1].expr, "p");
    assert_eq!(m.shapes[1].source, ShapeSource::Ranked);
    assert_eq!(m.shapes[1].edges, 1);
    assert!(m.fit.r2 > 0.99, "{}", m.fit.r2);
    let slope = m.fit.coefficients.iter().find(|c| c.name == "p").unwrap();
    assert!((slope.value - 0.5).abs() < slope.half_width, "{slope:?}");
    assert_eq!(m.vary_together.len(), 1);
    assert_eq!(m.vary_together[0].factors, ["p", "n"]);
    assert_eq!(m.vary_together[0].points.len(), 5);
    assert_eq!(m.vary_together[0].points[0], [4.0, 20.0]);
}

/// Two factors vary together and a third varies apart from them on a grid: the lead's edges
/// are the series at each level of the third, whose own edges are its lines at each point of
/// the series; the user's shape for the follower makes it the lead.
#[test]
fn a_series_crossed_with_another_factor_and_a_lead_chosen_by_the_user() {
    let (mut x, mut y, mut z, mut t) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &a in &[1.0f64, 2.0, 4.0, 8.0] {
        for &c in &[1.0f64, 2.0, 3.0, 4.0] {
            x.push(a);
            y.push(3.0 * a);
            z.push(c);
            t.push(1.0 + a * a + 5.0 * c);
        }
    }
    let o = obs(&["x", "y", "z"], vec![x, y, z], t);
    let m = combine(&o, &Choices::default()).unwrap();
    assert_eq!(m.vary_together[0].factors, ["x", "y"]);
    assert_eq!(m.shapes[0].edges, 4, "{:?}", m.shapes[0]);
    assert_eq!(m.shapes[1].source, ShapeSource::Follows);
    assert_eq!(m.shapes[2].edges, 4, "{:?}", m.shapes[2]);
    assert!(m.fit.r2 > 0.999, "{}", m.fit.r2);

    let choices = Choices {
        shapes: BTreeMap::from([("y".to_string(), "y^2".to_string())]),
        ..Choices::default()
    };
    let m = combine(&o, &choices).unwrap();
    assert_eq!(m.vary_together[0].factors, ["y", "x"]);
    assert_eq!(m.shapes[0].source, ShapeSource::Follows);
    assert_eq!(m.shapes[1].source, ShapeSource::User);
}

/// A point is on the series at a level the runs had with the value that came with it, or
/// between two levels within the two values; off it otherwise; beyond the lead's range
/// nothing is said.
#[test]
fn points_off_the_series_are_named() {
    let t = Together {
        factors: vec!["p".into(), "n".into()],
        points: vec![vec![4.0, 20.0], vec![8.0, 30.0], vec![16.0, 40.0]],
    };
    let factors = ["n".to_string(), "p".to_string()];
    assert_eq!(t.off(&factors, &[30.0, 8.0]), None);
    assert_eq!(t.off(&factors, &[25.0, 6.0]), None);
    assert_eq!(t.off(&factors, &[20.0, 6.0]), None);
    assert_eq!(t.off(&factors, &[999.0, 64.0]), None);
    assert_eq!(t.off(&factors, &[999.0, 2.0]), None);
    let at_level = t.off(&factors, &[20.0, 8.0]).unwrap();
    assert_eq!(
        at_level,
        "n=20 at p=8: in every run n went with p (at p=8 the runs had n=30); the model \
         follows p alone, so this prediction rests on no run"
    );
    let between = t.off(&factors, &[45.0, 12.0]).unwrap();
    assert!(
        between.contains("at p=12 the runs had n between 30 and 40"),
        "{between}"
    );
    // A model without one of the group's factors says nothing.
    assert_eq!(t.off(&["p".to_string()], &[8.0]), None);
}
