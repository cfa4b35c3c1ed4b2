//! A model bound to observations: the design matrix and Jacobian at given parameter values.

use nalgebra::{DMatrix, DVector};

use crate::expr::Bound;
use crate::fit::{FitError, Weighting};
use crate::model::Model;
use crate::observations::Observations;

/// The model's terms resolved against the factors of one set of observations.
#[derive(Debug, Clone)]
pub(crate) struct Problem<'a> {
    pub model: &'a Model,
    pub terms: Vec<Bound>,
    /// Factor values, row-major: `points[row * factors + j]`.
    pub points: Vec<f64>,
    pub factors: usize,
    /// The response, weighted: `w_i * y_i`. Least squares runs on weighted rows.
    pub y: DVector<f64>,
    /// The response as measured.
    pub y_raw: DVector<f64>,
    /// Row weights: 1 for absolute error, `1/|y_i|` for relative error.
    pub weights: Vec<f64>,
    /// Datafile line of each row (for messages).
    pub lines: Vec<usize>,
    pub source: &'a str,
    /// Points of the fitted range where the model must not be negative, row-major like
    /// `points`; empty when the response may take any sign. See [`bound_points`].
    pub bounds: Vec<f64>,
    /// Per nonlinear parameter, the sorted distinct values of the factors it is a threshold
    /// of (every factor's values when it is no threshold): the scale it is searched on. Never
    /// empty (`[0]` without observations).
    pub parameter_levels: Vec<Vec<f64>>,
}

impl<'a> Problem<'a> {
    pub fn new(
        model: &'a Model,
        obs: &'a Observations,
        weighting: Weighting,
    ) -> Result<Self, FitError> {
        let factors: Vec<&str> = obs.factors.iter().map(String::as_str).collect();
        let parameters: Vec<&str> = model.parameters().iter().map(String::as_str).collect();
        let terms = model
            .terms()
            .iter()
            .map(|t| t.expr.bind(&factors, &parameters))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| FitError::UnknownFactor {
                model: model.text().to_string(),
                name: e.name,
                available: obs.factors.join(", "),
            })?;
        let mut points = Vec::with_capacity(obs.len() * factors.len());
        let mut point = vec![0.0; factors.len()];
        for row in 0..obs.len() {
            obs.point(row, &mut point);
            points.extend_from_slice(&point);
        }
        let weights: Vec<f64> = match weighting {
            Weighting::Absolute => vec![1.0; obs.len()],
            Weighting::Relative => obs.y.iter().map(|y| 1.0 / y.abs()).collect(),
        };
        if let Some(row) = weights.iter().position(|w| !w.is_finite()) {
            return Err(FitError::ZeroForRelative {
                model: model.text().to_string(),
                at: format!(
                    "{}:{}",
                    obs.source,
                    obs.lines.get(row).copied().unwrap_or(0)
                ),
            });
        }
        let y_raw = DVector::from_column_slice(&obs.y);
        let bounds = if crate::observations::is_response_column(&obs.response) {
            bound_points(obs)
        } else {
            Vec::new()
        };
        let parameter_levels = model
            .parameters()
            .iter()
            .map(|name| {
                let compared = model.threshold_variables(name);
                let columns: Vec<usize> = (0..factors.len())
                    .filter(|&f| compared.is_empty() || compared.contains(factors[f]))
                    .collect();
                let mut values: Vec<f64> = columns
                    .iter()
                    .flat_map(|&f| obs.columns[f].iter().copied())
                    .collect();
                values.sort_by(f64::total_cmp);
                values.dedup();
                if values.is_empty() {
                    values.push(0.0);
                }
                values
            })
            .collect();
        Ok(Problem {
            model,
            terms,
            points,
            factors: factors.len(),
            y: y_raw.component_mul(&DVector::from_column_slice(&weights)),
            y_raw,
            weights,
            lines: obs.lines.clone(),
            source: &obs.source,
            bounds,
            parameter_levels,
        })
    }

    pub fn rows(&self) -> usize {
        self.y.len()
    }

    pub fn point(&self, row: usize) -> &[f64] {
        &self.points[row * self.factors..(row + 1) * self.factors]
    }

    /// The observed levels parameter `index` is searched among (never empty).
    pub fn threshold_levels(&self, index: usize) -> &[f64] {
        &self.parameter_levels[index]
    }

    /// The same problem without one row (for leave-one-out).
    pub fn without(&self, skip: usize) -> Problem<'a> {
        let keep = |i: &usize| *i != skip;
        let mut points = Vec::with_capacity(self.points.len());
        for row in (0..self.rows()).filter(keep) {
            points.extend_from_slice(self.point(row));
        }
        let kept = |v: &DVector<f64>| {
            DVector::from_iterator(self.rows() - 1, (0..self.rows()).filter(keep).map(|i| v[i]))
        };
        Problem {
            model: self.model,
            terms: self.terms.clone(),
            points,
            factors: self.factors,
            y: kept(&self.y),
            y_raw: kept(&self.y_raw),
            weights: (0..self.rows())
                .filter(keep)
                .map(|i| self.weights[i])
                .collect(),
            lines: (0..self.rows())
                .filter(keep)
                .map(|i| self.lines[i])
                .collect(),
            source: self.source,
            bounds: self.bounds.clone(),
            parameter_levels: self.parameter_levels.clone(),
        }
    }

    /// The matrix of weighted term values (rows × terms) at the given nonlinear parameters.
    pub fn design(&self, params: &[f64]) -> Result<DMatrix<f64>, FitError> {
        let mut x = DMatrix::zeros(self.rows(), self.terms.len());
        for row in 0..self.rows() {
            for (j, term) in self.terms.iter().enumerate() {
                let v = term.eval(self.point(row), params);
                if !v.is_finite() {
                    return Err(self.non_finite(j, row));
                }
                x[(row, j)] = self.weights[row] * v;
            }
        }
        Ok(x)
    }

    /// The bound points where every term is finite at `params` (the others are outside the
    /// model's domain and bind nothing): the rows of [`Problem::bound_design`].
    fn finite_bounds(&self, params: &[f64]) -> Vec<&[f64]> {
        self.bounds
            .chunks(self.factors.max(1))
            .filter(|point| self.terms.iter().all(|t| t.eval(point, params).is_finite()))
            .collect()
    }

    /// The terms' values (unweighted) at the bound points where all are finite: `G` of the
    /// constraint `G b ≥ 0`. One evaluation per term and point (this runs for every threshold
    /// a profile fit tries).
    pub fn bound_design(&self, params: &[f64]) -> DMatrix<f64> {
        let k = self.terms.len();
        let mut values = Vec::with_capacity(self.bounds.len() / self.factors.max(1) * k);
        let mut row = vec![0.0; k];
        for point in self.bounds.chunks(self.factors.max(1)) {
            for (v, term) in row.iter_mut().zip(&self.terms) {
                *v = term.eval(point, params);
            }
            if row.iter().all(|v| v.is_finite()) {
                values.extend_from_slice(&row);
            }
        }
        DMatrix::from_row_slice(values.len() / k.max(1), k, &values)
    }

    /// The gradient with respect to (coefficients, parameters) of the constraints in `rows`
    /// (rows of [`Problem::bound_design`]) at the given solution.
    pub fn bound_gradients(&self, coefs: &[f64], params: &[f64], rows: &[usize]) -> DMatrix<f64> {
        let points = self.finite_bounds(params);
        let k = self.terms.len();
        let mut a = DMatrix::zeros(rows.len(), k + params.len());
        let mut grad = vec![0.0; params.len()];
        for (r, &i) in rows.iter().enumerate() {
            for (j, term) in self.terms.iter().enumerate() {
                a[(r, j)] = term.eval_grad(points[i], params, &mut grad);
                for (q, g) in grad.iter().enumerate() {
                    a[(r, k + q)] += coefs[j] * g;
                }
            }
        }
        a
    }

    /// Jacobian of the model's weighted prediction with respect to (coefficients,
    /// parameters), and the weighted prediction itself.
    pub fn jacobian(
        &self,
        coefs: &[f64],
        params: &[f64],
    ) -> Result<(DMatrix<f64>, DVector<f64>), FitError> {
        let k = self.terms.len();
        let mut jac = DMatrix::zeros(self.rows(), k + params.len());
        let mut prediction = DVector::zeros(self.rows());
        let mut grad = vec![0.0; params.len()];
        for row in 0..self.rows() {
            for (j, term) in self.terms.iter().enumerate() {
                let v = term.eval_grad(self.point(row), params, &mut grad);
                if !v.is_finite() || grad.iter().any(|g| !g.is_finite()) {
                    return Err(self.non_finite(j, row));
                }
                let w = self.weights[row];
                jac[(row, j)] = w * v;
                prediction[row] += w * coefs[j] * v;
                for (q, g) in grad.iter().enumerate() {
                    jac[(row, k + q)] += w * coefs[j] * g;
                }
            }
        }
        Ok((jac, prediction))
    }

    fn non_finite(&self, term: usize, row: usize) -> FitError {
        FitError::NonFinite {
            model: self.model.text().to_string(),
            term: self.model.terms()[term].text.clone(),
            at: format!(
                "{}:{}",
                self.source,
                self.lines.get(row).copied().unwrap_or(0)
            ),
        }
    }
}

/// Points spanning the observations' range where a non-negative response's model is held at
/// or above zero: per factor its measured levels and [`BOUND_STEPS`] points between its
/// extremes (geometric when the range spans more than 10x, else even), crossed. With many
/// factors the in-between points thin out so that the grid stays near [`MAX_BOUND_POINTS`].
pub(crate) fn bound_points(obs: &Observations) -> Vec<f64> {
    let k = obs.factors.len();
    if k == 0 || obs.is_empty() {
        return Vec::new();
    }
    let per_factor: Vec<Vec<f64>> = (0..k)
        .map(|f| {
            let levels = obs.levels(f);
            let budget = (MAX_BOUND_POINTS as f64).powf(1.0 / k as f64) as usize;
            let steps = budget.saturating_sub(levels.len()).min(BOUND_STEPS);
            let (lo, hi) = (levels[0], levels[levels.len() - 1]);
            let geometric = lo > 0.0 && hi / lo > 10.0;
            let mut values = levels.clone();
            for i in 1..steps.max(1) {
                let t = i as f64 / steps as f64;
                values.push(if geometric {
                    lo * (hi / lo).powf(t)
                } else {
                    lo + (hi - lo) * t
                });
            }
            values.sort_by(f64::total_cmp);
            values.dedup();
            values
        })
        .collect();
    crossed(&per_factor).concat()
}

/// Every combination of one value from each list, the last list varying fastest.
pub(crate) fn crossed(lists: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut points = vec![Vec::new()];
    for values in lists {
        points = points
            .into_iter()
            .flat_map(|p: Vec<f64>| {
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

/// Points between a factor's extremes added to its measured levels for the bounds.
const BOUND_STEPS: usize = 16;
/// About this many bound points at most (the in-between points thin out with many factors).
const MAX_BOUND_POINTS: usize = 1024;
