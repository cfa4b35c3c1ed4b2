//! Integer structure in a category's model (docs/modelling.md#integer-structure): when the
//! residual test of [`crate::integer`] finds that the smooth model's residuals differ by
//! `p mod k` or by rounds of `ceil(p/cores)`, the integer terms of
//! [`integer_candidates`](crate::candidates::integer_candidates) are each added to the smooth
//! model, and leave-one-out error decides: the best of them replaces the smooth model only when
//! it predicts left-out runs better and its own coefficient's 90% interval excludes zero.

use super::Shape;
use crate::candidates::integer_candidates;
use crate::fit::{Fit, fit_weighted};
use crate::integer::{Finding, residual_tests};
use crate::model::Model;
use crate::observations::Observations;

/// The factor whose integer structure the default models test: the processors.
pub const FACTOR: &str = "p";

/// What the residual test found in a category and what was chosen; recorded only when the test
/// fired, so the model of data without such a pattern is unchanged.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntegerChoice {
    /// The factor, `p`.
    pub factor: String,
    /// The grouping whose test fired (the most significant), `p mod 2`.
    pub pattern: String,
    /// Its partial F statistic over a quadratic trend, on the cell means of the residuals.
    pub f: f64,
    /// The F statistic's degrees of freedom.
    pub dof: [usize; 2],
    /// Its p-value after Holm's adjustment over `tests` groupings.
    pub p_value: f64,
    /// How many groupings were tested.
    pub tests: usize,
    /// Every grouping that fired, `p mod 2`, `p mod 4`.
    pub fired: Vec<String>,
    /// The smooth model's leave-one-out error.
    pub smooth_cv: f64,
    /// The best integer term that contributes (its interval excludes zero), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term: Option<String>,
    /// The leave-one-out error with that term added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term_cv: Option<f64>,
    /// Whether the term was added to the model.
    pub chosen: bool,
}

/// Tests the smooth `fit`'s residuals along [`FACTOR`] and, when the test fires, returns what
/// was found and the fit with the chosen integer term (None: keep the smooth fit). Nothing
/// when the factor is absent, not whole-numbered, or its shape was given by the user.
pub(super) fn refine(
    obs: &Observations,
    shapes: &[Shape],
    fit: &Fit,
    cores: Option<u32>,
    user_shape: bool,
) -> Option<(IntegerChoice, Option<Fit>)> {
    let f = obs.factors.iter().position(|x| x == FACTOR)?;
    if user_shape {
        return None;
    }
    let findings = residual_tests(obs, fit, f, cores);
    let fired: Vec<&Finding> = findings.iter().filter(|x| x.fires()).collect();
    let first = fired.first()?;
    let groupings: Vec<_> = fired.iter().map(|x| x.grouping).collect();
    let others: Vec<&str> = shapes
        .iter()
        .filter(|s| s.factor != FACTOR)
        .map(|s| s.expr.as_str())
        .collect();
    let best = integer_candidates(FACTOR, &groupings, &others)
        .into_iter()
        .filter_map(|term| {
            let model = Model::parse(&format!("{} + {term}", fit.model.text())).ok()?;
            let with = fit_weighted(&model, obs, fit.weighting).ok()?;
            let own = with.coefficients.last()?;
            (with.cv.is_finite() && !own.indistinguishable_from_zero()).then_some((term, with))
        })
        .min_by(|a, b| a.1.cv.total_cmp(&b.1.cv));
    let chosen = best.as_ref().is_some_and(|(_, with)| with.cv < fit.cv);
    let choice = IntegerChoice {
        factor: FACTOR.to_string(),
        pattern: first.grouping.describe(FACTOR),
        f: first.f,
        dof: [first.dof.0, first.dof.1],
        p_value: first.adjusted,
        tests: findings.len(),
        fired: fired.iter().map(|x| x.grouping.describe(FACTOR)).collect(),
        smooth_cv: fit.cv,
        term: best.as_ref().map(|(t, _)| t.clone()),
        term_cv: best.as_ref().map(|(_, w)| w.cv),
        chosen,
    };
    let fit = best.filter(|_| chosen).map(|(_, w)| w);
    Some((choice, fit))
}
