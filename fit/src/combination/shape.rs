//! The shape of a category along one factor, `g(n)` or `h(p)`: the user's, or the paper's
//! defaults for the (category, factor) pair ranked on the *edges* of the design — groups of
//! runs in which only that factor varies (at least 3 levels). On every edge each candidate is
//! fitted as `1 + shape` (the other factors' contribution is a constant there, under either
//! combination) and scored by its leave-one-out error relative to the edge's size; the lowest
//! mean score wins.

use std::collections::BTreeMap;

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use super::{Combination, CombineError, combined_formula, weighting_for};
use crate::candidates::{default_candidates, has_paper_defaults, shape_candidates};
use crate::fit::fit_weighted;
use crate::model::Model;
use crate::observations::Observations;

/// Where a factor's shape came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeSource {
    /// Given by the user.
    User,
    /// The only default candidate (after dropping constants, which all mean "no effect"),
    /// unless the edges clearly reject it.
    Only,
    /// Best ranked among the defaults on the design's edges.
    Ranked,
    /// Outside the defaults: its error on the edges is less than half the best default's.
    BeyondDefaults,
    /// Outside the defaults, for a (category, factor) pair without the paper's defaults: the
    /// replicates on the edges reject the best default by a lack-of-fit test (1%) and not it.
    LackOfFit,
    /// No edge has three levels of the factor to rank on: the first default is taken.
    Unranked,
    /// The factor varies with another in every run, and the model follows the other
    /// ([`super::Together`]): its shape is `1`.
    Follows,
}

/// The shape of a category along one factor.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// The factor.
    pub factor: String,
    /// The shape's expression; `1` when the category does not depend on the factor.
    pub expr: String,
    /// Where it came from.
    pub source: ShapeSource,
    /// Edges it was ranked on.
    pub edges: usize,
    /// Its score: root mean square over the edges of the leave-one-out error relative to the
    /// edge's root mean square value (ranked shapes only).
    pub score: Option<f64>,
    /// The second best candidate and its score.
    pub runner_up: Option<(String, f64)>,
    /// The score of a constant (`1`, "does not depend on the factor") on the same edges, for
    /// ranked shapes: a shape that scores no better explains less than a constant there.
    pub constant_score: Option<f64>,
}

impl Shape {
    /// Whether the category does not depend on the factor.
    pub fn is_constant(&self) -> bool {
        self.expr == "1"
    }

    /// Whether the shape was chosen although a constant predicts the edges' left-out runs at
    /// least as well: the factor's effect is not shown by these runs.
    pub fn no_better_than_constant(&self) -> bool {
        !self.is_constant()
            && matches!((self.score, self.constant_score), (Some(s), Some(c)) if s >= c)
    }
}

/// The shape of the category along factor `f`; the factors `with` vary together with it in
/// every run ([`super::Together`]), so its edges are the runs where only they and `f` vary.
pub(super) fn shape(
    obs: &Observations,
    f: usize,
    user: Option<&String>,
    with: &[usize],
) -> Result<Shape, CombineError> {
    let factor = &obs.factors[f];
    let shape = |expr: String, source, edges, score, runner_up| Shape {
        factor: factor.clone(),
        expr,
        source,
        edges,
        score,
        runner_up,
        constant_score: None,
    };
    if let Some(expr) = user {
        let model = Model::parse(expr).map_err(|e| CombineError::Invalid {
            category: obs.response.clone(),
            message: e.to_string(),
        })?;
        if let Some(other) = model.variables().into_iter().find(|v| v != factor) {
            return Err(CombineError::Invalid {
                category: obs.response.clone(),
                message: format!("the shape `{expr}` for '{factor}' uses '{other}'"),
            });
        }
        return Ok(shape(normalise(expr), ShapeSource::User, 0, None, None));
    }
    let distinct = |list: Vec<String>, skip: &[String]| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in list.iter().map(|c| normalise(c)) {
            if !out.contains(&c) && !skip.contains(&c) {
                out.push(c);
            }
        }
        out
    };
    let defaults = distinct(default_candidates(&obs.response, factor), &[]);
    let wider = distinct(shape_candidates(&obs.response, factor), &defaults);
    let edges = edges(obs, f, with);
    let first_default = defaults[0].clone();
    let first = || first_default.clone();
    if edges.is_empty() {
        let source = if defaults.len() == 1 {
            ShapeSource::Only
        } else {
            ShapeSource::Unranked
        };
        return Ok(shape(first(), source, 0, None, None));
    }
    let constant_score = Some(edge_score("1", &edges)).filter(|s| s.is_finite());
    let shape = |expr, source, edges, score, runner_up| Shape {
        constant_score,
        ..shape(expr, source, edges, score, runner_up)
    };
    let defaults = ranked(defaults, &edges);
    let wider = ranked(wider, &edges);
    let (best, score) = (&defaults[0].0, defaults[0].1);
    // Without the paper's knowledge of the pair, runs with replicates may also reject the
    // generic shapes by a lack-of-fit test that the wider shape passes.
    let rejected = |other: &str| {
        !has_paper_defaults(&obs.response, factor)
            && lack_of_fit(best, &edges) < LACK_OF_FIT
            && lack_of_fit(other, &edges) >= LACK_OF_FIT
    };
    match wider.first() {
        // Beyond the paper's defaults only when the data clearly reject them.
        Some((other, other_score))
            if *other_score * WIDER_MARGIN < score || !score.is_finite() || rejected(other) =>
        {
            if !other_score.is_finite() {
                return Ok(shape(
                    first(),
                    ShapeSource::Unranked,
                    edges.len(),
                    None,
                    None,
                ));
            }
            let runner_up = score.is_finite().then(|| (best.clone(), score));
            let source = if *other_score * WIDER_MARGIN < score || !score.is_finite() {
                ShapeSource::BeyondDefaults
            } else {
                ShapeSource::LackOfFit
            };
            Ok(shape(
                other.clone(),
                source,
                edges.len(),
                Some(*other_score),
                runner_up,
            ))
        }
        next => {
            let runner_up = defaults.get(1).or(next).map(|(c, s)| (c.clone(), *s));
            let source = if defaults.len() == 1 {
                ShapeSource::Only
            } else {
                ShapeSource::Ranked
            };
            Ok(shape(
                best.clone(),
                source,
                edges.len(),
                Some(score),
                runner_up,
            ))
        }
    }
}

/// The shape's nonlinear parameters renamed to belong to its factor: `$theta` in the shape of
/// `n` becomes `$theta_n`, so a threshold in `n` and one in `p` are two parameters of the
/// combined model, each with its own value and interval. A name that already ends in
/// `_<factor>` is kept.
///
/// ```
/// use fit::combination::own_parameters;
/// assert_eq!(own_parameters("max(n-$theta,0)", "n"), "max(n-$theta_n,0)");
/// assert_eq!(own_parameters("p^$a*max(p-$theta_p,0)", "p"), "p^$a_p*max(p-$theta_p,0)");
/// assert_eq!(own_parameters("n*log2(n)", "n"), "n*log2(n)");
/// ```
pub fn own_parameters(expr: &str, factor: &str) -> String {
    let suffix = format!("_{factor}");
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut out = String::with_capacity(expr.len() + 8);
    let mut chars = expr.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        out.push(c);
        if c != '$' {
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while let Some(&(j, d)) = chars.peek() {
            if !is_name(d) {
                break;
            }
            end = j + d.len_utf8();
            chars.next();
        }
        let name = &expr[start..end];
        out.push_str(name);
        if !name.is_empty() && !name.ends_with(&suffix) {
            out.push_str(&suffix);
        }
    }
    out
}

/// How much better (lower edge error) a shape outside the paper's defaults must be than the
/// best default to be chosen instead.
const WIDER_MARGIN: f64 = 2.0;

/// The candidates with their edge scores, best first; equal scores (within rounding) prefer
/// fewer fitted quantities, then the given order.
fn ranked(candidates: Vec<String>, edges: &[Observations]) -> Vec<(String, f64)> {
    let mut scored: Vec<(String, f64, (usize, usize))> = candidates
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let score = edge_score(&c, edges);
            let fitted = Model::parse(&edge_formula(&c)).map_or(usize::MAX, |m| m.fitted_count());
            (c, score, (fitted, i))
        })
        .collect();
    // By score first; then each run of scores equal, within rounding, to its lowest by fitted
    // quantities, then in the given order. A comparison that treated near scores as equal
    // would not be a total order, and sorting with it panicked once the shapes of Extra-P's
    // files were many.
    scored.sort_by(|a, b| a.1.total_cmp(&b.1));
    let same = |a: f64, b: f64| {
        a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) || (a.is_nan() && b.is_nan())
    };
    let mut start = 0;
    while start < scored.len() {
        let lowest = scored[start].1;
        let end = start
            + scored[start..]
                .iter()
                .take_while(|c| same(c.1, lowest))
                .count();
        scored[start..end].sort_by_key(|c| c.2);
        start = end;
    }
    scored.into_iter().map(|(c, s, _)| (c, s)).collect()
}

/// A shape as text: constants (`0`, `1`, `2.5`) all mean "does not depend on the factor".
fn normalise(expr: &str) -> String {
    match Model::parse(expr) {
        Ok(m) if m.variables().is_empty() && m.parameters().is_empty() => "1".into(),
        _ => expr.trim().to_string(),
    }
}

fn edge_formula(shape: &str) -> String {
    combined_formula(&[shape], Combination::Additive)
}

/// Runs in which only factor `f` (and the factors `with` it) varies, all other factors equal,
/// with at least three levels of it: one single-factor set of observations per edge.
fn edges(obs: &Observations, f: usize, with: &[usize]) -> Vec<Observations> {
    let mut groups: BTreeMap<Vec<u64>, Vec<usize>> = BTreeMap::new();
    for row in 0..obs.len() {
        let key = (0..obs.factors.len())
            .filter(|&g| g != f && !with.contains(&g))
            .map(|g| obs.columns[g][row].to_bits())
            .collect();
        groups.entry(key).or_default().push(row);
    }
    groups
        .into_values()
        .filter_map(|rows| {
            let edge = Observations {
                source: obs.source.clone(),
                factors: vec![obs.factors[f].clone()],
                response: obs.response.clone(),
                columns: vec![rows.iter().map(|&r| obs.columns[f][r]).collect()],
                y: rows.iter().map(|&r| obs.y[r]).collect(),
                lines: rows.iter().map(|&r| obs.lines[r]).collect(),
            };
            (edge.levels(0).len() >= 3).then_some(edge)
        })
        .collect()
}

/// The level of the lack-of-fit test below which a shape is rejected.
const LACK_OF_FIT: f64 = 0.01;

/// The p-value of the lack-of-fit F test of `1 + shape` pooled over the edges: its residuals
/// against the spread of the replicates at each level (pure error), in the fit's own weighting.
/// NaN (never rejecting) without replicates or where the shape cannot be fitted.
fn lack_of_fit(shape: &str, edges: &[Observations]) -> f64 {
    let Ok(model) = Model::parse(&edge_formula(shape)) else {
        return f64::NAN;
    };
    let (mut residual, mut residual_df, mut pure, mut pure_df) = (0.0, 0usize, 0.0, 0usize);
    for edge in edges {
        let weighting = weighting_for(&edge.y);
        let Ok(fit) = fit_weighted(&model, edge, weighting) else {
            return f64::NAN;
        };
        residual += fit.residual_sd.powi(2) * fit.dof as f64;
        residual_df += fit.dof;
        let mut levels: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for (x, y) in edge.columns[0].iter().zip(&edge.y) {
            levels.entry(x.to_bits()).or_default().push(*y);
        }
        for ys in levels.values().filter(|ys| ys.len() > 1) {
            let mean = ys.iter().sum::<f64>() / ys.len() as f64;
            let weight = |y: f64| match weighting {
                crate::fit::Weighting::Relative => 1.0 / y.abs(),
                crate::fit::Weighting::Absolute => 1.0,
            };
            pure += ys
                .iter()
                .map(|&y| ((y - mean) * weight(y)).powi(2))
                .sum::<f64>();
            pure_df += ys.len() - 1;
        }
    }
    let lack_df = residual_df.saturating_sub(pure_df);
    if pure_df == 0 || lack_df == 0 || pure <= 0.0 {
        return f64::NAN;
    }
    let f = ((residual - pure).max(0.0) / lack_df as f64) / (pure / pure_df as f64);
    match FisherSnedecor::new(lack_df as f64, pure_df as f64) {
        Ok(dist) if f.is_finite() => dist.sf(f),
        _ => f64::NAN,
    }
}

/// Root mean square over the edges of the leave-one-out error of `1 + shape`, relative to
/// each edge's root mean square value. Edges that are all zero are skipped; a candidate that
/// cannot be fitted on some edge scores infinity.
fn edge_score(shape: &str, edges: &[Observations]) -> f64 {
    let Ok(model) = Model::parse(&edge_formula(shape)) else {
        return f64::INFINITY;
    };
    let mut sum = 0.0;
    let mut counted = 0usize;
    for edge in edges {
        let scale = (edge.y.iter().map(|y| y * y).sum::<f64>() / edge.len() as f64).sqrt();
        if scale == 0.0 {
            continue;
        }
        match fit_weighted(&model, edge, weighting_for(&edge.y)) {
            Ok(fit) if fit.cv.is_finite() => sum += (fit.cv / scale).powi(2),
            _ => return f64::INFINITY,
        }
        counted += 1;
    }
    if counted == 0 {
        0.0
    } else {
        (sum / counted as f64).sqrt()
    }
}
