//! Fitting one model to one set of observations, with the statistics the paper's `lca`
//! prints: coefficients with 90% confidence intervals, R², adjusted R², and the
//! leave-one-out cross-validated error.

use nalgebra::{DMatrix, DVector};

use crate::expr::{Bound, ParamRole};
use crate::linear::{LeastSquares, least_squares};
use crate::model::Model;
use crate::observations::Observations;
use crate::problem::Problem;
use crate::stats::{adjusted_r_squared, r_squared, t_quantile, total_sum_of_squares};
use crate::{constrained, nonlinear, threshold_fit};

/// Terms cancel when each contributes more than this many times the largest measured value
/// (see [`Fit::cancelling_terms`]).
pub const CANCELLING_FACTOR: f64 = 10.0;

/// The first two terms that cancel: coefficients of opposite signs whose largest
/// contributions on the data (`|coefficient × term|`) each exceed [`CANCELLING_FACTOR`] times
/// the largest measured value. The one rule behind [`Fit::cancelling_terms`] and the search.
pub(crate) fn cancelling_pair(
    coefficients: &[f64],
    contributions: &[f64],
    largest: f64,
) -> Option<(usize, usize)> {
    let big = |j: usize| contributions[j] > CANCELLING_FACTOR * largest;
    let k = coefficients.len();
    (0..k)
        .flat_map(|a| (a + 1..k).map(move |b| (a, b)))
        .find(|&(a, b)| coefficients[a] * coefficients[b] < 0.0 && big(a) && big(b))
}

/// Up to this many observations, a nonlinear model's leave-one-out error comes from real
/// refits; beyond it, from the linearised hat matrix (exact for linear models).
pub const EXACT_LOO_LIMIT: usize = 100;

/// Why a model could not be fitted. Every message is one line naming the model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// The model names a factor the observations do not have.
    #[error("model `{model}`: unknown factor '{name}' (the observations vary {available})")]
    UnknownFactor {
        /// Model text.
        model: String,
        /// The unknown name.
        name: String,
        /// Factors that are available.
        available: String,
    },
    /// Fewer observations than fitted quantities.
    #[error("model `{model}`: {points} observation(s) cannot determine {fitted} fitted quantities")]
    TooFewPoints {
        /// Model text.
        model: String,
        /// Observations.
        points: usize,
        /// Coefficients plus nonlinear parameters.
        fitted: usize,
    },
    /// Some terms are linear combinations of others on these data.
    #[error(
        "model `{model}`: terms {terms} are collinear on these observations (cannot be told apart); drop one"
    )]
    Collinear {
        /// Model text.
        model: String,
        /// The terms involved, quoted and comma separated.
        terms: String,
    },
    /// A term is NaN or infinite at an observation (e.g. `log2(p)` at p = 0).
    #[error("model `{model}`: term `{term}` is not a finite number at {at}")]
    NonFinite {
        /// Model text.
        model: String,
        /// Term text.
        term: String,
        /// `file:line` of the observation.
        at: String,
    },
    /// Relative error is undefined where the response is zero.
    #[error("model `{model}`: a relative fit needs non-zero values, but the response is 0 at {at}")]
    ZeroForRelative {
        /// Model text.
        model: String,
        /// `file:line` of the observation.
        at: String,
    },
    /// The nonlinear solver failed from every starting point.
    #[error("model `{model}`: the nonlinear fit did not converge ({reason})")]
    NoConvergence {
        /// Model text.
        model: String,
        /// The solver's reason.
        reason: String,
    },
}

/// What the fit minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Weighting {
    /// The sum of squared residuals (ordinary least squares; the paper's).
    #[default]
    Absolute,
    /// The sum of squared relative residuals `((y - f)/y)²`: weighted least squares with
    /// weights `1/y²`, right when the noise grows with the value, as timings' does.
    Relative,
}

/// How a model was fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Linear least squares (no nonlinear parameters).
    Linear,
    /// One or two threshold parameters: closed-form coefficients for each value, a grid and
    /// Brent over each.
    Profile,
    /// Levenberg–Marquardt over coefficients and parameters together.
    LevenbergMarquardt,
}

/// A fitted quantity with its uncertainty.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Estimate {
    /// Term text (`p*sqrt(p)`, `1`) or parameter name with `$` (`$theta`).
    pub name: String,
    /// Fitted value.
    pub value: f64,
    /// Standard error.
    pub std_error: f64,
    /// Half-width of the 90% confidence interval (Student t with the fit's residual dof).
    pub half_width: f64,
}

impl Estimate {
    /// The 90% confidence interval.
    pub fn interval(&self) -> (f64, f64) {
        (self.value - self.half_width, self.value + self.half_width)
    }

    /// True when the 90% interval contains zero: the term may not be needed.
    pub fn indistinguishable_from_zero(&self) -> bool {
        let (lo, hi) = self.interval();
        !(lo > 0.0 || hi < 0.0)
    }
}

/// A prediction with its 90% intervals.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Prediction {
    /// Predicted value.
    pub value: f64,
    /// Half-width of the 90% prediction interval for a new observation.
    pub half_width: f64,
    /// Half-width of the 90% confidence interval of the mean response.
    pub mean_half_width: f64,
    /// Lower end of the 90% prediction interval: `value - half_width`, but never below zero
    /// for a quantity that cannot be negative (lost cycles).
    pub lower: f64,
    /// Upper end of the 90% prediction interval, `value + half_width`.
    pub upper: f64,
}

impl Prediction {
    /// A prediction with a symmetric interval, its lower end held at `floor`
    /// (`f64::NEG_INFINITY` for none) and the value too.
    pub fn bounded(value: f64, half_width: f64, mean_half_width: f64, floor: f64) -> Prediction {
        // Not `max`: a NaN (outside the model's domain) must stay NaN, not become the floor.
        let value = if value < floor { floor } else { value };
        Prediction {
            value,
            half_width,
            mean_half_width,
            lower: if value - half_width < floor {
                floor
            } else {
                value - half_width
            },
            upper: value + half_width,
        }
    }

    /// Whether the interval was cut at a floor (the symmetric one would reach below it).
    pub fn is_cut(&self) -> bool {
        self.lower > self.value - self.half_width
    }
}

/// The solution of a least-squares problem: coefficients per term, nonlinear parameters.
#[derive(Debug, Clone)]
pub(crate) struct Solution {
    pub coefs: Vec<f64>,
    pub params: Vec<f64>,
    pub sse: f64,
}

/// A model fitted to observations.
#[derive(Debug, Clone)]
pub struct Fit {
    /// The model.
    pub model: Model,
    /// Factor names, in the order [`Fit::predict`] takes their values.
    pub factors: Vec<String>,
    /// How it was fitted.
    pub method: Method,
    /// What the fit minimised.
    pub weighting: Weighting,
    /// One per term.
    pub coefficients: Vec<Estimate>,
    /// One per nonlinear parameter.
    pub parameters: Vec<Estimate>,
    /// Number of observations.
    pub n: usize,
    /// Residual degrees of freedom, `n` minus fitted quantities.
    pub dof: usize,
    /// Residual sum of squares (of the measured values, whatever the weighting).
    pub sse: f64,
    /// Total sum of squares about the mean.
    pub sst: f64,
    /// `1 - SSE/SST`.
    pub r2: f64,
    /// R² adjusted for the number of fitted quantities.
    pub adj_r2: f64,
    /// Root mean square of the leave-one-out prediction errors (in the response's units).
    pub cv: f64,
    /// Residual standard deviation `sqrt(SSE/dof)` of the weighted residuals: in the
    /// response's units for an absolute fit, a fraction of the value for a relative one.
    pub residual_sd: f64,
    /// The response cannot be negative (lost cycles): the fit was held at or above zero over
    /// the data's range, and predictions and their intervals are cut at zero.
    pub nonnegative: bool,
    pub(crate) terms: Vec<Bound>,
    pub(crate) covariance: DMatrix<f64>,
}

/// Fits `model` to `obs`, choosing the method from the model's parameters.
///
/// ```
/// use fit::{Model, Observations, fit_model};
/// let obs = Observations::new("example", vec!["p".into()], "li",
///     vec![vec![2.0, 4.0, 6.0, 8.0]], vec![2.1, 3.9, 6.2, 7.8]).unwrap();
/// let fit = fit_model(&Model::parse("p").unwrap(), &obs).unwrap();
/// assert!((fit.coefficients[0].value - 0.99).abs() < 0.02);
/// ```
pub fn fit_model(model: &Model, obs: &Observations) -> Result<Fit, FitError> {
    fit_weighted(model, obs, Weighting::Absolute)
}

/// Fits `model` to `obs` minimising absolute or relative squared error.
///
/// R², adjusted R² and the leave-one-out error are always computed on the measured values,
/// so fits with different weightings can be ranked together.
pub fn fit_weighted(
    model: &Model,
    obs: &Observations,
    weighting: Weighting,
) -> Result<Fit, FitError> {
    let problem = Problem::new(model, obs, weighting)?;
    let n = problem.rows();
    let k = model.fitted_count();
    if n < k.max(1) {
        return Err(FitError::TooFewPoints {
            model: model.text().to_string(),
            points: n,
            fitted: k,
        });
    }
    let method = method_for(model);
    let solution = solve(&problem, method, None)?;
    let dof = n - k;
    let s2 = if dof > 0 {
        solution.sse / dof as f64
    } else {
        f64::NAN
    };
    let t = t_quantile(dof);

    // Linearised statistics: regress the residuals on the Jacobian (the design matrix for a
    // linear model). Its inverse Gram matrix scales to the covariance, its leverages give
    // the closed-form leave-one-out error; the zero model has an empty Jacobian.
    let (jac, prediction) = problem.jacobian(&solution.coefs, &solution.params)?;
    let mut linearised = least_squares(&jac, &(&problem.y - &prediction))
        .map_err(|e| collinear(model, &e.columns))?;
    let mut covariance = &linearised.unscaled_covariance * s2;
    // Constraints that hold the model at zero somewhere in the range: the estimate has no
    // freedom along them, and the residuals are those of the constrained solution.
    let active = if problem.bounds.is_empty() {
        Vec::new()
    } else {
        let coefs = DVector::from_column_slice(&solution.coefs);
        constrained::active_rows(&problem.bound_design(&solution.params), &coefs)
    };
    if !active.is_empty() {
        let a = problem.bound_gradients(&solution.coefs, &solution.params, &active);
        covariance = constrained::project_covariance(&covariance, &a);
        linearised.residuals = &problem.y - &prediction;
    }
    let estimate = |name: String, value: f64, index: usize| {
        let std_error = covariance[(index, index)].sqrt();
        Estimate {
            name,
            value,
            std_error,
            half_width: t * std_error,
        }
    };
    let coefficients = model
        .terms()
        .iter()
        .zip(&solution.coefs)
        .enumerate()
        .map(|(j, (term, &c))| estimate(term.text.clone(), c, j))
        .collect();
    let parameters = model
        .parameters()
        .iter()
        .zip(&solution.params)
        .enumerate()
        .map(|(q, (name, &v))| estimate(format!("${name}"), v, model.terms().len() + q))
        .collect();

    // Back on the measured scale: raw residual = weighted residual / weight.
    let unweight = |v: &DVector<f64>| {
        DVector::from_iterator(n, v.iter().zip(&problem.weights).map(|(e, w)| e / w))
    };
    let sse = unweight(&linearised.residuals).norm_squared();
    let sst = total_sum_of_squares(problem.y_raw.as_slice());
    let cv = match (method, linearised.loo_residuals()) {
        // The closed form assumes no constraint binds: refit instead.
        _ if !active.is_empty() && n <= EXACT_LOO_LIMIT => refit_loo(&problem, method, &solution),
        (Method::Linear, Some(loo)) => rms(&unweight(&loo)),
        (Method::Linear, None) => f64::INFINITY,
        _ if n <= EXACT_LOO_LIMIT => refit_loo(&problem, method, &solution),
        (_, Some(loo)) => rms(&unweight(&loo)),
        (_, None) => f64::INFINITY,
    };
    Ok(Fit {
        model: model.clone(),
        factors: obs.factors.clone(),
        method,
        weighting,
        coefficients,
        parameters,
        n,
        dof,
        sse,
        sst,
        r2: r_squared(sse, sst),
        adj_r2: adjusted_r_squared(sse, sst, n, k),
        cv,
        residual_sd: s2.sqrt(),
        nonnegative: !problem.bounds.is_empty(),
        terms: problem.terms,
        covariance,
    })
}

impl Fit {
    /// The fitted model's value at a point (factor values in the order of [`Fit::factors`]),
    /// never below zero for a non-negative response.
    pub fn evaluate(&self, point: &[f64]) -> f64 {
        let params = self.parameter_values();
        let value: f64 = self
            .terms
            .iter()
            .zip(&self.coefficients)
            .map(|(t, c)| c.value * t.eval(point, &params))
            .sum();
        // Not `max`: a NaN must stay NaN.
        if value < self.floor() {
            self.floor()
        } else {
            value
        }
    }

    /// The least value the response can take: 0 for lost cycles, else none.
    pub fn floor(&self) -> f64 {
        if self.nonnegative {
            0.0
        } else {
            f64::NEG_INFINITY
        }
    }

    /// The prediction at a point with 90% intervals, propagating the covariance of all fitted
    /// quantities to first order (delta method): `var(mean) = gᵀ C g` with `g` the gradient
    /// of the prediction, and a new observation adds the residual variance.
    pub fn predict(&self, point: &[f64]) -> Prediction {
        let (value, g) = self.gradient(point);
        let var_mean = if g.is_empty() {
            0.0
        } else {
            // A covariance projected on active constraints is positive semidefinite only up to
            // rounding: where a constraint holds the model at zero, gᵀCg can come out a hair
            // below zero (NaN interval). NaN (no covariance: a model written by hand) stays.
            let v = (g.transpose() * &self.covariance * &g)[(0, 0)];
            if v < 0.0 { 0.0 } else { v }
        };
        let t = t_quantile(self.dof);
        Prediction::bounded(
            value,
            t * (var_mean + self.noise_variance(value)).sqrt(),
            t * var_mean.sqrt(),
            self.floor(),
        )
    }

    /// The model's value at a point (not held at its floor) and its gradient with respect to
    /// the fitted quantities, coefficients then parameters: what [`Fit::covariance`] is of.
    pub fn gradient(&self, point: &[f64]) -> (f64, DVector<f64>) {
        let params = self.parameter_values();
        let k = self.terms.len();
        let mut g = DVector::zeros(k + params.len());
        let mut grad = vec![0.0; params.len()];
        let mut value = 0.0;
        for (j, (term, c)) in self.terms.iter().zip(&self.coefficients).enumerate() {
            let v = term.eval_grad(point, &params, &mut grad);
            value += c.value * v;
            g[j] = v;
            for (q, d) in grad.iter().enumerate() {
                g[k + q] += c.value * d;
            }
        }
        (value, g)
    }

    /// The variance of one new observation's own noise where the model is `value`: the
    /// residual variance, relative to the value for a relative fit.
    pub fn noise_variance(&self, value: f64) -> f64 {
        match self.weighting {
            Weighting::Absolute => self.residual_sd.powi(2),
            Weighting::Relative => (self.residual_sd * value).powi(2),
        }
    }

    /// Why this fit should not be trusted, if it should not: it explains less than the data's
    /// mean (R² < 0), or it predicts a left-out run worse than the mean of the other runs does
    /// (leave-one-out error above the mean's, `n/(n−1) · sqrt(SST/n)`).
    pub fn poor_fit(&self) -> Option<String> {
        if self.r2 < 0.0 {
            return Some(format!(
                "R² {:.2}: the model explains less than the data's mean",
                self.r2
            ));
        }
        let n = self.n as f64;
        let mean_loo = n / (n - 1.0) * (self.sst / n).sqrt();
        // Data that do not vary (a count that is the same in every run): the mean's error is
        // 0, and a model that holds them misses only by rounding, far below its coefficients.
        let rounding = if self.sst > 0.0 {
            0.0
        } else {
            1e-9 * self
                .coefficients
                .iter()
                .fold(0.0f64, |m, c| m.max(c.value.abs()))
        };
        if self.n > 1 && self.cv.is_finite() && self.cv > mean_loo * (1.0 + 1e-9) + rounding {
            return Some(format!(
                "leave-one-out error {} is above the mean's {}: it predicts a left-out run \
                 worse than the mean of the other runs",
                short(self.cv),
                short(mean_loo)
            ));
        }
        None
    }

    /// Two terms whose coefficients have opposite signs and whose contributions are each more
    /// than [`CANCELLING_FACTOR`] times the largest measured value: they cancel each other on
    /// the data, and far from it one wins, so the model extrapolates wildly. `obs` must be the
    /// observations it was fitted to.
    pub fn cancelling_terms(&self, obs: &Observations) -> Option<(String, String)> {
        let params = self.parameter_values();
        let largest = obs.y.iter().fold(0.0f64, |m, y| m.max(y.abs()));
        let mut point = vec![0.0; self.factors.len()];
        let contribution: Vec<f64> = self
            .terms
            .iter()
            .zip(&self.coefficients)
            .map(|(t, c)| {
                (0..obs.len())
                    .map(|row| {
                        obs.point(row, &mut point);
                        (c.value * t.eval(&point, &params)).abs()
                    })
                    .fold(0.0, f64::max)
            })
            .collect();
        let values: Vec<f64> = self.coefficients.iter().map(|c| c.value).collect();
        cancelling_pair(&values, &contribution, largest).map(|(a, b)| {
            (
                self.coefficients[a].name.clone(),
                self.coefficients[b].name.clone(),
            )
        })
    }

    /// Terms (and parameters) whose 90% interval contains zero.
    pub fn weak_terms(&self) -> Vec<&Estimate> {
        self.coefficients
            .iter()
            .filter(|e| e.indistinguishable_from_zero())
            .collect()
    }

    /// The covariance of the fitted quantities: coefficients, then parameters.
    pub fn covariance(&self) -> &DMatrix<f64> {
        &self.covariance
    }

    fn parameter_values(&self) -> Vec<f64> {
        self.parameters.iter().map(|p| p.value).collect()
    }
}

fn method_for(model: &Model) -> Method {
    match model.parameters() {
        [] => Method::Linear,
        thresholds
            if thresholds.len() <= threshold_fit::MAX_THRESHOLDS
                && thresholds
                    .iter()
                    .all(|p| model.parameter_role(p) == Some(ParamRole::Threshold)) =>
        {
            Method::Profile
        }
        _ => Method::LevenbergMarquardt,
    }
}

/// Solves the least-squares problem with the given method (optionally warm-started).
pub(crate) fn solve(
    problem: &Problem,
    method: Method,
    start: Option<&Solution>,
) -> Result<Solution, FitError> {
    match method {
        Method::Linear => {
            let ls = linear_at(problem, &[])?;
            Ok(Solution {
                coefs: ls.beta.iter().copied().collect(),
                params: Vec::new(),
                sse: ls.sse,
            })
        }
        Method::Profile => threshold_fit::fit(problem, start),
        Method::LevenbergMarquardt => nonlinear::fit(problem, start),
    }
}

/// Linear least squares for the coefficients at fixed nonlinear parameters; for a response
/// that cannot be negative, under the constraint that the model is not negative at the
/// problem's bound points (then only `beta`, `residuals` and `sse` describe the constrained
/// solution).
pub(crate) fn linear_at(problem: &Problem, params: &[f64]) -> Result<LeastSquares, FitError> {
    let x = problem.design(params)?;
    let mut ls = least_squares(&x, &problem.y).map_err(|e| collinear(problem.model, &e.columns))?;
    if problem.bounds.is_empty() {
        return Ok(ls);
    }
    let g = problem.bound_design(params);
    if constrained::satisfied(&g, &ls.beta) {
        return Ok(ls);
    }
    let beta = constrained::least_squares_nonnegative(&x, &problem.y, &g).ok_or_else(|| {
        FitError::NoConvergence {
            model: problem.model.text().to_string(),
            reason: "the fit held at or above zero over the data's range did not solve".into(),
        }
    })?;
    ls.residuals = &problem.y - &x * &beta;
    ls.sse = ls.residuals.norm_squared();
    ls.beta = beta;
    Ok(ls)
}

fn collinear(model: &Model, columns: &[usize]) -> FitError {
    let name = |j: usize| match model.terms().get(j) {
        Some(term) => format!("`{}`", term.text),
        None => format!("`${}`", model.parameters()[j - model.terms().len()]),
    };
    FitError::Collinear {
        model: model.text().to_string(),
        terms: columns
            .iter()
            .map(|&j| name(j))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Three significant digits, for messages.
fn short(v: f64) -> String {
    format!("{v:.3e}")
        .parse::<f64>()
        .map_or_else(|_| v.to_string(), |r| r.to_string())
}

fn rms(v: &DVector<f64>) -> f64 {
    (v.norm_squared() / v.len() as f64).sqrt()
}

/// Leave-one-out error from refitting without each observation in turn.
fn refit_loo(problem: &Problem, method: Method, solution: &Solution) -> f64 {
    let mut sum = 0.0;
    for i in 0..problem.rows() {
        let reduced = problem.without(i);
        let Ok(s) = solve(&reduced, method, Some(solution)) else {
            return f64::INFINITY;
        };
        let predicted: f64 = problem
            .terms
            .iter()
            .zip(&s.coefs)
            .map(|(t, c)| c * t.eval(problem.point(i), &s.params))
            .sum();
        sum += (problem.y_raw[i] - predicted).powi(2);
    }
    (sum / problem.rows() as f64).sqrt()
}
