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
        })
    }

    pub fn rows(&self) -> usize {
        self.y.len()
    }

    pub fn point(&self, row: usize) -> &[f64] {
        &self.points[row * self.factors..(row + 1) * self.factors]
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
