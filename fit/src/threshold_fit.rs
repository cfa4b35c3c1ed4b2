//! Profile fit of a model whose nonlinear parameters are thresholds, such as
//! `max(p-$theta,0)` or `max(n-$theta_n,0)*max(p-$theta_p,0)`: for each value of the
//! thresholds the coefficients have a closed form (linear least squares), so the residual sum
//! of squares is a function of the thresholds alone. Each threshold is searched on the scale of
//! its own factor: a grid that includes every observed level of that factor (the kinks), all
//! combinations of the grids are scanned, and the best is refined one threshold at a time with
//! Brent's method (argmin's `BrentOpt`) inside its grid bracket. No starting guess is needed.

use argmin::core::{CostFunction, Error, Executor};
use argmin::solver::brent::BrentOpt;

use crate::fit::{FitError, Solution, linear_at};
use crate::problem::Problem;

/// Uniform grid points added to the observed levels, for one threshold.
const GRID: usize = 64;
/// The same for each of two thresholds (their grids are crossed).
const GRID_PAIR: usize = 24;
/// At most this many thresholds are fitted by profile.
pub(crate) const MAX_THRESHOLDS: usize = 2;
/// Rounds of one-threshold-at-a-time refinement.
const ROUNDS: usize = 4;

/// The residual sum of squares as a function of threshold `index`, the others held.
struct ThresholdRss<'p, 'a> {
    problem: &'p Problem<'a>,
    at: Vec<f64>,
    index: usize,
}

impl CostFunction for ThresholdRss<'_, '_> {
    type Param = f64;
    type Output = f64;

    fn cost(&self, theta: &f64) -> Result<f64, Error> {
        let mut at = self.at.clone();
        at[self.index] = *theta;
        Ok(sse_at(self.problem, &at))
    }
}

fn sse_at(problem: &Problem, thetas: &[f64]) -> f64 {
    linear_at(problem, thetas).map_or(f64::INFINITY, |ls| ls.sse)
}

/// The search grid of threshold `index`: from one span below its factor's smallest observed
/// value to the largest, evenly, with every observed level of the factor.
fn grid(problem: &Problem, index: usize, points: usize) -> Vec<f64> {
    let levels = problem.threshold_levels(index);
    let (lo, hi) = (levels[0], levels[levels.len() - 1]);
    let span = (hi - lo).max(f64::EPSILON * hi.abs().max(1.0));
    let lo = lo - span;
    let mut grid: Vec<f64> = (0..=points)
        .map(|i| lo + (hi - lo) * i as f64 / points as f64)
        .chain(levels.iter().copied())
        .collect();
    grid.sort_by(f64::total_cmp);
    grid.dedup();
    grid
}

/// Fits the threshold parameters (at most [`MAX_THRESHOLDS`]) and the coefficients. With a
/// `start` (the fit to all observations, when leaving one out) the scan covers only the grid
/// points next to the start's thresholds.
pub(crate) fn fit(problem: &Problem, start: Option<&Solution>) -> Result<Solution, FitError> {
    let q = problem.model.parameters().len();
    let points = if q == 1 { GRID } else { GRID_PAIR };
    let mut grids: Vec<Vec<f64>> = (0..q).map(|i| grid(problem, i, points)).collect();
    if let Some(start) = start.filter(|s| s.params.len() == q) {
        for (g, &t) in grids.iter_mut().zip(&start.params) {
            let here = g.partition_point(|v| *v < t);
            let near = g[here.saturating_sub(2)..(here + 2).min(g.len())].to_vec();
            *g = near.into_iter().chain([t]).collect();
            g.sort_by(f64::total_cmp);
            g.dedup();
        }
    }
    let combinations = crate::problem::crossed(&grids);
    let (mut at, mut cost) = combinations
        .into_iter()
        .map(|c| {
            let cost = sse_at(problem, &c);
            (c, cost)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("grids are never empty");
    if !cost.is_finite() {
        // Every threshold leaves the terms collinear or non-finite: report why at one.
        linear_at(problem, &at)?;
        return Err(FitError::NoConvergence {
            model: problem.model.text().to_string(),
            reason: "no threshold gives a usable fit".into(),
        });
    }
    for _ in 0..if q == 1 { 1 } else { ROUNDS } {
        let before = cost;
        for (index, g) in grids.iter().enumerate() {
            let here = g.partition_point(|v| *v < at[index]);
            let (a, b) = (g[here.saturating_sub(1)], g[(here + 1).min(g.len() - 1)]);
            if b <= a {
                continue;
            }
            let profile = ThresholdRss {
                problem,
                at: at.clone(),
                index,
            };
            let refined = Executor::new(profile, BrentOpt::new(a, b))
                .configure(|state| state.max_iters(100))
                .run()
                .ok()
                .and_then(|result| result.state().best_param);
            if let Some(t) = refined {
                let mut next = at.clone();
                next[index] = t;
                let c = sse_at(problem, &next);
                if c < cost {
                    (at, cost) = (next, c);
                }
            }
        }
        if cost >= before {
            break;
        }
    }
    let ls = linear_at(problem, &at)?;
    Ok(Solution {
        coefs: ls.beta.iter().copied().collect(),
        params: at,
        sse: ls.sse,
    })
}
