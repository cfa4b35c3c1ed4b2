//! Two implementations' models compared: the winner map over the two factors they vary, and
//! the points over which `fit::decision::suggest` weighs the runs that would decide most
//! (`lca crossover --suggest`, the study's `[decide]`).

use fit::crossover::{Axis, CrossoverError, Pair, ValidatedError, WinnerMap};
use fit::performance::PerformanceModel;

/// The winner map of two models over their two factors (41 x 41 cells), the models' validated
/// errors (when given) in its intervals.
pub fn winner_map(
    a: &PerformanceModel,
    b: &PerformanceModel,
    errors: [Option<ValidatedError>; 2],
) -> Result<WinnerMap, CrossoverError> {
    let pair = Pair::new(a, b)?.with_validated_errors(errors);
    let free = pair.free(&[])?;
    let [u, v] = &free[..] else {
        return Err(CrossoverError(format!(
            "a winner map needs two factors; the models vary {}",
            free.join(", ")
        )));
    };
    pair.winner_map(&pair.default_axis(u)?, &pair.default_axis(v)?, &[], 41)
}

/// A point: every factor by name.
pub type Point = Vec<(String, f64)>;

/// The region's points over the axes (101 along one, 21 x 21 over two) and the candidate
/// runs (21 along one, 9 x 9 over two; whole numbers where an axis runs between whole
/// numbers at least 4 apart, as processor counts do), each with the fixed values.
pub fn grids(axes: &[Axis], fixed: &[(String, f64)]) -> (Vec<Point>, Vec<Point>) {
    let (region, candidates) = if axes.len() == 1 { (101, 21) } else { (21, 9) };
    let levels = |a: &Axis, count: usize, whole: bool| -> Vec<f64> {
        let mut values = a.samples(count);
        if whole && a.lo.fract() == 0.0 && a.hi.fract() == 0.0 && a.hi - a.lo >= 4.0 {
            values.iter_mut().for_each(|v| *v = v.round());
            values.dedup();
        }
        values
    };
    let grid = |count: usize, whole: bool| {
        let mut points: Vec<Point> = vec![fixed.to_vec()];
        for a in axes {
            let values = levels(a, count, whole);
            points = points
                .into_iter()
                .flat_map(|p| {
                    values.iter().map(move |&v| {
                        let mut p = p.clone();
                        p.push((a.factor.clone(), v));
                        p
                    })
                })
                .collect();
        }
        points
    };
    (grid(region, false), grid(candidates, true))
}
