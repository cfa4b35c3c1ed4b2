//! Levenberg–Marquardt fit of coefficients and nonlinear parameters together (e.g. `p^$a`),
//! with the `levenberg-marquardt` crate and exact Jacobians from the expression evaluator.
//!
//! Starting values: an exponent starts from the slope of a log–log fit of the response
//! against the model's first factor, and also from 0.5, 1 and 2; other parameters from 1 and
//! from the middle of the factor range (for a threshold, the range of the factor it is
//! compared with). For each start the coefficients are the closed-form
//! linear fit. The best converged solution wins; it is then polished by one more linear fit
//! of the coefficients at the final parameters.

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{DMatrix, DVector, Dyn, Owned};

use crate::expr::ParamRole;
use crate::fit::{FitError, Solution, linear_at};
use crate::linear::least_squares;
use crate::problem::Problem;

/// Starting points tried per exponent parameter, besides the log–log slope.
const EXPONENT_STARTS: [f64; 3] = [0.5, 1.0, 2.0];
/// Above this many parameters, only one combined starting point is tried.
const MAX_START_COMBINATIONS: usize = 64;

struct Lm<'p, 'a> {
    problem: &'p Problem<'a>,
    x: DVector<f64>,
}

impl Lm<'_, '_> {
    fn split(&self) -> (&[f64], &[f64]) {
        self.x.as_slice().split_at(self.problem.terms.len())
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for Lm<'_, '_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &DVector<f64>) {
        self.x.copy_from(x);
    }

    fn params(&self) -> DVector<f64> {
        self.x.clone()
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        let (coefs, params) = self.split();
        let (_, prediction) = self.problem.jacobian(coefs, params).ok()?;
        Some(prediction - &self.problem.y)
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        let (coefs, params) = self.split();
        self.problem.jacobian(coefs, params).ok().map(|(j, _)| j)
    }
}

/// Fits all coefficients and parameters; `start` (a previous solution) is tried first.
pub(crate) fn fit(problem: &Problem, start: Option<&Solution>) -> Result<Solution, FitError> {
    let mut starts: Vec<Vec<f64>> = start.map(|s| s.params.clone()).into_iter().collect();
    if start.is_none() {
        starts.extend(starting_points(problem));
    }
    let mut best: Option<Solution> = None;
    let mut last_error = None;
    for params in starts {
        let coefs = match linear_at(problem, &params) {
            Ok(ls) => ls.beta,
            Err(e) => {
                last_error = Some(e);
                continue;
            }
        };
        let x = DVector::from_iterator(
            coefs.len() + params.len(),
            coefs.iter().chain(&params).copied(),
        );
        let (solved, report) = LevenbergMarquardt::new().minimize(Lm { problem, x });
        if !report.termination.was_successful() {
            last_error = Some(FitError::NoConvergence {
                model: problem.model.text().to_string(),
                reason: format!("{:?}", report.termination),
            });
            continue;
        }
        let (_, params) = solved.split();
        // Polish: the coefficients' closed form at the final parameters.
        let Ok(ls) = linear_at(problem, params) else {
            continue;
        };
        let candidate = Solution {
            coefs: ls.beta.iter().copied().collect(),
            params: params.to_vec(),
            sse: ls.sse,
        };
        if best.as_ref().is_none_or(|b| candidate.sse < b.sse) {
            best = Some(candidate);
        }
        if start.is_some() {
            break;
        }
    }
    best.ok_or_else(|| {
        last_error.unwrap_or_else(|| FitError::NoConvergence {
            model: problem.model.text().to_string(),
            reason: "no starting point converged".into(),
        })
    })
}

/// Candidate starting values for the nonlinear parameters.
fn starting_points(problem: &Problem) -> Vec<Vec<f64>> {
    let model = problem.model;
    let per_param: Vec<Vec<f64>> = model
        .parameters()
        .iter()
        .enumerate()
        .map(|(q, name)| {
            // Thresholds on the scale of the factor they are compared with; other
            // parameters on the scale of every factor.
            let levels = problem.threshold_levels(q);
            let (lo, hi) = (levels[0], levels[levels.len() - 1]);
            match model.parameter_role(name) {
                Some(ParamRole::Exponent) => std::iter::once(log_log_slope(problem))
                    .flatten()
                    .chain(EXPONENT_STARTS)
                    .collect(),
                Some(ParamRole::Threshold) => vec![(lo + hi) / 2.0, lo, hi],
                _ => vec![1.0, (lo + hi) / 2.0],
            }
        })
        .collect();
    let combinations: usize = per_param.iter().map(Vec::len).product();
    if combinations > MAX_START_COMBINATIONS {
        return vec![per_param.iter().map(|v| v[0]).collect()];
    }
    let mut points = vec![Vec::new()];
    for values in &per_param {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |&v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    points
}

/// Slope of `log|y|` against `log x` for the first factor, over points where both are
/// positive: the exponent of a pure power law.
fn log_log_slope(problem: &Problem) -> Option<f64> {
    let pairs: Vec<(f64, f64)> = (0..problem.rows())
        .map(|i| (problem.point(i)[0], problem.y[i].abs()))
        .filter(|&(x, y)| x > 0.0 && y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    let x = DMatrix::from_fn(pairs.len(), 2, |i, j| if j == 0 { 1.0 } else { pairs[i].0 });
    let y = DVector::from_iterator(pairs.len(), pairs.iter().map(|p| p.1));
    least_squares(&x, &y).ok().map(|ls| ls.beta[1])
}
