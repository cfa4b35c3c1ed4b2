//! The domain of a performance model: the points where every category's formula and
//! `T_p = (sum of the categories) / p` are finite numbers. Outside it (a log of a value <= 0,
//! a square root of a negative value, a division by zero, `p <= 0`, an overflow) there is
//! nothing to predict, and [`PerformanceModel::try_predict`] says so in one line naming the
//! factor values and the subexpression that fails, instead of returning NaN or infinity.
//!
//! Each term of each category is evaluated on its own (before any clamping of the category's
//! prediction), then the prediction itself is checked: values, and the 90% intervals of the
//! categories that carry intervals.

use crate::expr::Expr;
use crate::fit::Fit;
use crate::performance::{PerformanceModel, TimePrediction};

/// A point outside a model's domain. One line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{model}: cannot predict at {point}: {reason}")]
pub struct DomainError {
    /// The model's name.
    pub model: String,
    /// The point, `n=0, p=4`.
    pub point: String,
    /// What fails there, naming the factor values it depends on.
    pub reason: String,
}

/// A factor's value as a user would write it: `4`, `0.25`, and `1e300` rather than its 301
/// digits (one line stays short).
fn value(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e16).contains(&v.abs()) {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

/// `n=0, p=4`.
fn point_text(factors: &[String], point: &[f64]) -> String {
    factors
        .iter()
        .zip(point)
        .map(|(f, v)| format!("{f}={}", value(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

impl PerformanceModel {
    /// Predicts `T_p` and every category at a point (one value per factor), as
    /// [`PerformanceModel::predict`], or fails where the point is outside the model's domain.
    pub fn try_predict(&self, point: &[f64]) -> Result<TimePrediction, DomainError> {
        let fail = |reason: String| DomainError {
            model: if self.name.is_empty() {
                "model".into()
            } else {
                self.name.clone()
            },
            point: point_text(&self.factors, point),
            reason,
        };
        if let Some((f, v)) = self.factors.iter().zip(point).find(|(_, v)| !v.is_finite()) {
            return Err(fail(format!("{f}={v} is not a number")));
        }
        let p = self.processors(point);
        if self.kind == crate::performance::Kind::LostCycles && (p.is_nan() || p <= 0.0) {
            let held = if self.factors.iter().any(|f| f == "p") {
                ""
            } else {
                " (held)"
            };
            return Err(fail(format!(
                "T_p = (sum of the categories) / p needs p > 0, and p={p}{held}"
            )));
        }
        if let Some(reason) = self.evaluator.as_ref().and_then(|e| e.outside(point)) {
            return Err(fail(reason));
        }
        for c in &self.categories {
            if let Some(reason) = term_failure(&c.fit, point) {
                return Err(fail(format!("category {}: {reason}", c.category)));
            }
        }
        let prediction = self.predict(point);
        for (c, pred) in self.categories.iter().zip(&prediction.categories) {
            if let (false, Some(reason)) = (
                pred.value.is_finite(),
                self.evaluator.as_ref().and_then(|e| e.failure(point)),
            ) {
                return Err(fail(reason));
            }
            if !pred.value.is_finite() {
                return Err(fail(format!(
                    "category {} is {} (`{}`)",
                    c.category,
                    pred.value,
                    c.fit.model.text()
                )));
            }
            if has_intervals(&c.fit) && !pred.half_width.is_finite() {
                return Err(fail(format!(
                    "the 90% interval of category {} is not finite there (`{}`)",
                    c.category,
                    c.fit.model.text()
                )));
            }
        }
        if self.kind == crate::performance::Kind::LostCycles && !prediction.time.value.is_finite() {
            return Err(fail(format!("T_p is {}", prediction.time.value)));
        }
        Ok(prediction)
    }
}

/// Whether a fit carries intervals (a model written by hand does not).
fn has_intervals(fit: &Fit) -> bool {
    fit.dof > 0 && fit.residual_sd.is_finite()
}

/// The first term of `fit` that is not finite at `point`, with the innermost subexpression
/// that fails and the factor values it depends on.
fn term_failure(fit: &Fit, point: &[f64]) -> Option<String> {
    let params: Vec<(&str, f64)> = fit
        .model
        .parameters()
        .iter()
        .map(String::as_str)
        .zip(fit.parameters.iter().map(|e| e.value))
        .collect();
    let env = Env {
        factors: &fit.factors,
        point,
        params: &params,
    };
    for term in fit.model.terms() {
        let value = env.value(&term.expr);
        if value.is_finite() {
            // A failing subexpression whose failure does not reach the term (`max(log2(n),
            // 0)` at n=0) is no failure.
            continue;
        }
        match env.eval(&term.expr) {
            Ok(_) => return Some(format!("`{}` is {value}", term.text)),
            Err((culprit, bad)) => {
                let values = env.values(culprit);
                let at = if values.is_empty() {
                    String::new()
                } else {
                    format!(" at {values}")
                };
                return Some(format!(
                    "{culprit} is {}{at} (term `{}`)",
                    describe(bad, culprit),
                    term.text
                ));
            }
        }
    }
    None
}

/// How a failing subexpression fails: `-inf (log of 0)`.
fn describe(value: f64, e: &Expr) -> String {
    use crate::expr::{BinOp, UnOp};
    let what = match e {
        Expr::Unary(UnOp::Log | UnOp::Log2, _) => "a logarithm of a value <= 0",
        Expr::Unary(UnOp::Sqrt, _) => "a square root of a negative value",
        Expr::Unary(UnOp::Exp, _) => "an overflow",
        Expr::Binary(BinOp::Div, ..) => "a division by zero",
        Expr::Binary(BinOp::Pow, ..) => "a power outside its domain",
        _ => "an overflow",
    };
    format!("{value} ({what})")
}

/// Factor and parameter values by name.
struct Env<'a> {
    factors: &'a [String],
    point: &'a [f64],
    params: &'a [(&'a str, f64)],
}

impl Env<'_> {
    /// The value of `e` (IEEE semantics, as a prediction evaluates it).
    fn value(&self, e: &Expr) -> f64 {
        match e {
            Expr::Num(c) => *c,
            Expr::Var(_) | Expr::Param(_) => self.leaf(e),
            Expr::Unary(op, x) => op.apply(self.value(x)),
            Expr::Binary(op, l, r) => op.apply(self.value(l), self.value(r)),
        }
    }

    /// A factor's or parameter's value (NaN if unknown).
    fn leaf(&self, e: &Expr) -> f64 {
        match e {
            Expr::Var(n) => self
                .factors
                .iter()
                .position(|f| f == n)
                .map_or(f64::NAN, |i| self.point[i]),
            Expr::Param(n) => self
                .params
                .iter()
                .find(|(p, _)| p == n)
                .map_or(f64::NAN, |(_, v)| *v),
            _ => f64::NAN,
        }
    }

    /// The value of `e`, or the innermost subexpression whose operands are finite and whose
    /// value is not, with that value (`Err`): where the domain fails.
    fn eval<'e>(&self, e: &'e Expr) -> Result<f64, (&'e Expr, f64)> {
        let v = match e {
            Expr::Num(c) => *c,
            Expr::Var(_) | Expr::Param(_) => self.leaf(e),
            Expr::Unary(op, x) => op.apply(self.eval(x)?),
            Expr::Binary(op, l, r) => op.apply(self.eval(l)?, self.eval(r)?),
        };
        if v.is_finite() { Ok(v) } else { Err((e, v)) }
    }

    /// `n=0` for the factors `e` uses, in the model's order.
    fn values(&self, e: &Expr) -> String {
        let used = e.variables();
        self.factors
            .iter()
            .zip(self.point)
            .filter(|(f, _)| used.contains(*f))
            .map(|(f, v)| format!("{f}={}", value(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
