//! Profile fit of a model with one threshold parameter, such as `max(p-$theta,0)`: for each
//! value of the threshold the coefficients have a closed form (linear least squares), so the
//! residual sum of squares is a function of the threshold alone. It is scanned on a grid that
//! includes every observed level (the kinks), then refined with Brent's method
//! (argmin's `BrentOpt`) inside the best grid bracket. No starting guess is needed.

use argmin::core::{CostFunction, Error, Executor};
use argmin::solver::brent::BrentOpt;

use crate::fit::{FitError, Solution, linear_at};
use crate::problem::Problem;

/// Uniform grid points added to the observed levels.
const GRID: usize = 64;

struct Profile<'p, 'a>(&'p Problem<'a>);

impl CostFunction for Profile<'_, '_> {
    type Param = f64;
    type Output = f64;

    fn cost(&self, theta: &f64) -> Result<f64, Error> {
        Ok(sse_at(self.0, *theta))
    }
}

fn sse_at(problem: &Problem, theta: f64) -> f64 {
    linear_at(problem, &[theta]).map_or(f64::INFINITY, |ls| ls.sse)
}

/// Fits the single threshold parameter and the coefficients.
pub(crate) fn fit(problem: &Problem) -> Result<Solution, FitError> {
    // The threshold lives on the scale of the factors: search from one span below the
    // smallest observed value to the largest one.
    let (lo, hi) = problem
        .points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let span = (hi - lo).max(f64::EPSILON * hi.abs().max(1.0));
    let (lo, hi) = (lo - span, hi);
    let mut grid: Vec<f64> = (0..=GRID)
        .map(|i| lo + (hi - lo) * i as f64 / GRID as f64)
        .chain(problem.points.iter().copied())
        .collect();
    grid.sort_by(f64::total_cmp);
    grid.dedup();
    let costs: Vec<f64> = grid.iter().map(|&t| sse_at(problem, t)).collect();
    let best = (0..grid.len())
        .min_by(|&a, &b| costs[a].total_cmp(&costs[b]))
        .expect("grid is never empty");
    if !costs[best].is_finite() {
        // Every threshold leaves the terms collinear or non-finite: report why at one.
        linear_at(problem, &[grid[best]])?;
        return Err(FitError::NoConvergence {
            model: problem.model.text().to_string(),
            reason: "no threshold gives a usable fit".into(),
        });
    }
    let mut theta = grid[best];
    let (a, b) = (
        grid[best.saturating_sub(1)],
        grid[(best + 1).min(grid.len() - 1)],
    );
    let refined = (b > a)
        .then(|| {
            Executor::new(Profile(problem), BrentOpt::new(a, b))
                .configure(|state| state.max_iters(100))
                .run()
                .ok()
        })
        .flatten()
        .and_then(|result| result.state().best_param);
    if let Some(t) = refined
        && sse_at(problem, t) < costs[best]
    {
        theta = t;
    }
    let ls = linear_at(problem, &[theta])?;
    Ok(Solution {
        coefs: ls.beta.iter().copied().collect(),
        params: vec![theta],
        sse: ls.sse,
    })
}
