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

use nalgebra::{DMatrix, DVector};

use crate::fit::{Fit, Weighting, cancelling_pair, fit_weighted};
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
    let basis: Vec<(String, Vec<f64>)> = EXPONENTS
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

    let mut levels = x.clone();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    let largest = obs.y.iter().fold(0.0f64, |m, y| m.max(y.abs()));
    let mut scored: Vec<(f64, Vec<usize>)> = Vec::new();
    let mut consider = |terms: Vec<usize>| {
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
    consider(Vec::new());
    for a in 0..basis.len() {
        consider(vec![a]);
        for b in a + 1..basis.len() {
            consider(vec![a, b]);
        }
    }
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.len().cmp(&b.1.len())));
    scored
        .into_iter()
        .take(keep)
        .filter_map(|(_, terms)| {
            let text = std::iter::once("1".to_string())
                .chain(terms.iter().map(|&t| basis[t].0.clone()))
                .collect::<Vec<_>>()
                .join(" + ");
            fit_weighted(&Model::parse(&text).ok()?, obs, weighting).ok()
        })
        .collect()
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
