//! Automatic model search: a constant plus up to two terms `x^i * log2(x)^j`, with `i` from
//! the exponent set below and `j` in {0, 1, 2}, ranked by leave-one-out error. A model is not
//! offered when
//! * a term's 90% interval contains zero: that term contributes nothing;
//! * it has `k` coefficients and the factor no more than `k + 1` distinct levels: replicates
//!   do not pin a shape between levels, and with four levels a constant plus two terms fits
//!   any noise exactly enough to rank first and extrapolate to nonsense;
//! * two of its terms cancel: opposite signs, each contributing more than
//!   [`CANCELLING_FACTOR`](crate::fit::CANCELLING_FACTOR) times the largest measured value.
//!
//! The search fits and ranks by *relative* error (weighted least squares, weights `1/y²`)
//! whenever no response is zero: measured times carry noise proportional to their size, and
//! unweighted least squares lets the largest values drown the small ones that decide how a
//! model extrapolates (with ±1% noise on `5 + 1000/p + 2*log2(p)` it mistook the log term in
//! most seeds). With a zero response it falls back to absolute error.
//!
//! Unlike Extra-P's default single-term modeler this represents sums of overheads such as
//! `5 + 1000/p + 2*log2(p)`.
//!
//! On a whole-numbered factor the residuals of the best smooth model are tested for integer
//! structure ([`crate::integer`]: `p mod k`, rounds of `ceil(p/cores)`); only when the test
//! fires are the integer terms of the groupings found added, each to the best smooth models,
//! and ranked with the rest by the same rules (docs/modelling.md#integer-structure).

use nalgebra::{DMatrix, DVector};

use crate::fit::{Fit, Weighting, cancelling_pair, fit_weighted};
use crate::integer::{Finding, residual_tests};
use crate::linear::least_squares;
use crate::model::Model;
use crate::observations::Observations;
use crate::stats::t_quantile;

/// Exponents `i` as (numerator, denominator).
pub const EXPONENTS: [(i32, i32); 19] = [
    (-1, 1),
    (-1, 2),
    (0, 1),
    (1, 4),
    (1, 3),
    (1, 2),
    (2, 3),
    (3, 4),
    (1, 1),
    (5, 4),
    (4, 3),
    (3, 2),
    (5, 3),
    (7, 4),
    (2, 1),
    (9, 4),
    (5, 2),
    (8, 3),
    (3, 1),
];

/// Powers `j` of `log2(x)`.
pub const LOG_POWERS: [i32; 3] = [0, 1, 2];

/// One basis term `x^i * log2(x)^j` in model syntax.
pub fn term_text(x: &str, (num, den): (i32, i32), log_power: i32) -> Option<String> {
    let power = match (num, den) {
        (0, _) => None,
        (1, 1) => Some(x.to_string()),
        (n, 1) if n > 0 => Some(format!("{x}^{n}")),
        (n, 1) => Some(format!("{x}^({n})")),
        (n, d) => Some(format!("{x}^({n}/{d})")),
    };
    let log = match log_power {
        0 => None,
        1 => Some(format!("log2({x})")),
        j => Some(format!("log2({x})^{j}")),
    };
    match (power, log) {
        (None, None) => None,
        (Some(p), None) => Some(p),
        (None, Some(l)) => Some(l),
        (Some(p), Some(l)) => Some(format!("{p}*{l}")),
    }
}

/// Searches models of the response against factor `factor` (an index into
/// `obs.factors`) and returns up to `keep` fits, lowest leave-one-out error first.
///
/// Time: O(B² n) for B = 56 basis terms and n observations (1,596 small least-squares fits).
pub fn search(obs: &Observations, factor: usize, keep: usize) -> Vec<Fit> {
    search_integer(obs, factor, keep, None).fits
}

/// What [`search_integer`] found: the fits, and what the residual test of the best smooth
/// model found along the factor when it fired.
#[derive(Debug, Clone, Default)]
pub struct Searched {
    /// Up to `keep` fits, lowest leave-one-out error first.
    pub fits: Vec<Fit>,
    /// The best smooth model, when its residuals were tested and the test fired.
    pub smooth: Option<Fit>,
    /// The groupings whose test fired (Holm-adjusted), most significant first.
    pub fired: Vec<Finding>,
    /// How many groupings were tested.
    pub tested: usize,
}

/// How many of the best smooth models get each integer term added.
const INTEGER_BASES: usize = 10;

/// [`search`], with the machine's `cores` (when known) for the rounds `ceil(x/cores)`.
pub fn search_integer(
    obs: &Observations,
    factor: usize,
    keep: usize,
    cores: Option<u32>,
) -> Searched {
    let name = &obs.factors[factor];
    let x = &obs.columns[factor];
    let n = obs.len();
    let weighting = if obs.y.iter().all(|&y| y != 0.0) {
        Weighting::Relative
    } else {
        Weighting::Absolute
    };
    let weights: Vec<f64> = match weighting {
        Weighting::Relative => obs.y.iter().map(|y| 1.0 / y.abs()).collect(),
        Weighting::Absolute => vec![1.0; n],
    };
    let y = DVector::from_iterator(n, obs.y.iter().zip(&weights).map(|(y, w)| y * w));
    // Basis columns that are finite and not constant on these observations.
    let mut basis: Vec<(String, Vec<f64>)> = EXPONENTS
        .iter()
        .flat_map(|&e| LOG_POWERS.iter().map(move |&j| (e, j)))
        .filter_map(|((num, den), j)| {
            let text = term_text(name, (num, den), j)?;
            let power = num as f64 / den as f64;
            let column: Vec<f64> = x
                .iter()
                .map(|&v| v.powf(power) * v.log2().powi(j))
                .collect();
            let finite = column.iter().all(|v| v.is_finite());
            let varies = column
                .iter()
                .any(|v| (v - column[0]).abs() > 1e-12 * v.abs());
            (finite && varies).then_some((text, column))
        })
        .collect();
    let smooth_terms = basis.len();

    let mut levels = x.clone();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    let largest = obs.y.iter().fold(0.0f64, |m, y| m.max(y.abs()));
    let mut scored: Vec<(f64, Vec<usize>)> = Vec::new();
    let consider = |basis: &[(String, Vec<f64>)], scored: &mut Vec<_>, terms: Vec<usize>| {
        let k = terms.len() + 1;
        // Replicates do not pin a shape between levels: k coefficients need more than k + 1
        // distinct levels, so that at least two levels are left to judge the shape by.
        if n <= k || levels.len() <= k + 1 {
            return;
        }
        let design = DMatrix::from_fn(n, k, |i, c| {
            weights[i]
                * if c == 0 {
                    1.0
                } else {
                    basis[terms[c - 1]].1[i]
                }
        });
        let Ok(ls) = least_squares(&design, &y) else {
            return;
        };
        let s2 = ls.sse / (n - k) as f64;
        let t = t_quantile(n - k);
        let contributes = (1..k).all(|c| {
            let half = t * (s2 * ls.unscaled_covariance[(c, c)]).sqrt();
            ls.beta[c].abs() > half
        });
        if !contributes {
            return;
        }
        // Cancelling terms: opposite signs, each far larger than the data.
        let contributions: Vec<f64> = (0..k)
            .map(|c| {
                (0..n)
                    .map(|i| (ls.beta[c] * design[(i, c)] / weights[i]).abs())
                    .fold(0.0, f64::max)
            })
            .collect();
        if cancelling_pair(ls.beta.as_slice(), &contributions, largest).is_some() {
            return;
        }
        let loo = ls.loo_rmse();
        if loo.is_finite() {
            scored.push((loo, terms));
        }
    };
    consider(&basis, &mut scored, Vec::new());
    for a in 0..basis.len() {
        consider(&basis, &mut scored, vec![a]);
        for b in a + 1..basis.len() {
            consider(&basis, &mut scored, vec![a, b]);
        }
    }
    let order = |scored: &mut Vec<(f64, Vec<usize>)>| {
        scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.len().cmp(&b.1.len())));
    };
    order(&mut scored);
    let fit_of = |basis: &[(String, Vec<f64>)], terms: &[usize]| {
        let text = std::iter::once("1".to_string())
            .chain(terms.iter().map(|&t| basis[t].0.clone()))
            .collect::<Vec<_>>()
            .join(" + ");
        fit_weighted(&Model::parse(&text).ok()?, obs, weighting).ok()
    };
    let mut searched = Searched::default();
    // Integer structure in the best smooth model's residuals: its terms join the search.
    if let Some(smooth) = scored.first().and_then(|(_, t)| fit_of(&basis, t)) {
        let findings = residual_tests(obs, &smooth, factor, cores);
        searched.tested = findings.len();
        searched.fired = findings.into_iter().filter(|f| f.fires()).collect();
        if !searched.fired.is_empty() {
            for grouping in searched.fired.iter().map(|f| f.grouping) {
                for text in grouping.terms(name) {
                    if let Some(column) = term_column(&text, name, x) {
                        basis.push((text, column));
                    }
                }
            }
            let bases: Vec<Vec<usize>> = scored
                .iter()
                .take(INTEGER_BASES)
                .map(|(_, t)| t.clone())
                .collect();
            for terms in bases {
                for extra in smooth_terms..basis.len() {
                    let mut with = terms.clone();
                    with.push(extra);
                    consider(&basis, &mut scored, with);
                }
            }
            order(&mut scored);
            searched.smooth = Some(smooth);
        }
    }
    searched.fits = scored
        .into_iter()
        .take(keep)
        .filter_map(|(_, terms)| fit_of(&basis, &terms))
        .collect();
    searched
}

/// The values of an integer term (`floor(p/2)`) at `x`; None unless finite and varying.
fn term_column(text: &str, name: &str, x: &[f64]) -> Option<Vec<f64>> {
    let model = Model::parse(text).ok()?;
    let bound = model.terms().first()?.expr.bind(&[name], &[]).ok()?;
    let column: Vec<f64> = x.iter().map(|&v| bound.eval(&[v], &[])).collect();
    let finite = column.iter().all(|v| v.is_finite());
    let varies = column.iter().any(|v| (v - column[0]).abs() > 1e-12);
    (finite && varies).then_some(column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn term_texts_parse() {
        assert_eq!(term_text("p", (1, 1), 0).unwrap(), "p");
        assert_eq!(term_text("p", (-1, 1), 0).unwrap(), "p^(-1)");
        assert_eq!(term_text("p", (1, 2), 2).unwrap(), "p^(1/2)*log2(p)^2");
        assert_eq!(term_text("p", (0, 1), 1).unwrap(), "log2(p)");
        assert!(term_text("p", (0, 1), 0).is_none());
        for &e in &EXPONENTS {
            for &j in &LOG_POWERS {
                if let Some(t) = term_text("p", e, j) {
                    Model::parse(&t).unwrap();
                }
            }
        }
    }
}
