//! The difference model (docs/comparing.md#the-difference-model): the log ratio
//! `r = ln(T_A / T_B)` of two implementations modelled directly over the points both ran,
//! with its own validated error, deciding between the measured points where its interval is
//! narrower than the two separate models'.
//!
//! Both implementations ran on the same machine, often in the same rounds (`lca study` runs
//! replicate `k` of every implementation together), so much of their noise is shared: adding
//! the two separate models' variances as if independent overstates the uncertainty of their
//! difference, and each model's form error (a smooth shape missing a parity pattern, say)
//! counts twice. The difference model sees only what differs.
//!
//! **Data.** At each point both ran with at least one run each: the mean of `ln(T_A / T_B)`
//! over the runs with the same replicate index when both sides carry the same indices, else
//! `ln(mean T_A / mean T_B)`. Points with a non-positive time are left out.
//!
//! **Form.** `r = c_0 + sum c_k term_k` by least squares, the terms a subset of at most three
//! of, for every factor `x`: `x`, `ln x`, `1/x` (where every `x > 0`) and, on a factor whose
//! values are all whole numbers of both parities, `odd(x) = (1 - cos(pi x)) / 2` (1 at odd,
//! 0 at even values). The subset with the lowest leave-one-point-out RMS error wins (fewer
//! terms on a tie); the intercept alone is a candidate.
//!
//! **Interval.** The 90% interval of `r` at a point is `t(n - k) * sqrt(s_fit^2 + e^2)`: the
//! fit's standard error of the mean there (`s^2 x' (X'X)^-1 x`) widened by the validated error
//! `e`, the leave-one-out RMS, as [`ValidatedError`](super::ValidatedError) widens a separate
//! model. It predicts only inside the range of the points it was fitted to (no
//! extrapolation).

use nalgebra::{DMatrix, DVector};

use super::measured::Run;
use super::measured::same;
use super::{Basis, Comparison, Winner};
use crate::stats::t_quantile_real;

/// The most terms (besides the intercept) of a difference model.
pub const MOST_TERMS: usize = 3;

/// The fewest shared points a difference model is fitted to.
pub const FEWEST_POINTS: usize = 4;

/// One term of a difference model, over the factor of that index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    /// `x`.
    Linear(usize),
    /// `ln x`.
    Log(usize),
    /// `1 / x`.
    Inverse(usize),
    /// `(1 - cos(pi x)) / 2`: 1 at odd whole `x`, 0 at even.
    Odd(usize),
}

impl Term {
    fn value(self, x: &[f64]) -> f64 {
        match self {
            Term::Linear(i) => x[i],
            Term::Log(i) => x[i].ln(),
            Term::Inverse(i) => 1.0 / x[i],
            Term::Odd(i) => (1.0 - (std::f64::consts::PI * x[i]).cos()) / 2.0,
        }
    }

    /// The term as text, over the factors' names.
    pub fn text(self, factors: &[String]) -> String {
        match self {
            Term::Linear(i) => factors[i].clone(),
            Term::Log(i) => format!("ln {}", factors[i]),
            Term::Inverse(i) => format!("1/{}", factors[i]),
            Term::Odd(i) => format!("odd({})", factors[i]),
        }
    }
}

/// The log ratio `ln(T_A / T_B)` modelled over the points both implementations ran.
#[derive(Debug, Clone, PartialEq)]
pub struct DifferenceModel {
    /// The factors, in the pair's order.
    pub factors: Vec<String>,
    /// The terms besides the intercept.
    pub terms: Vec<Term>,
    /// The intercept, then one coefficient per term.
    pub coefficients: Vec<f64>,
    /// `s^2 (X'X)^-1`, the coefficients' covariance.
    pub covariance: DMatrix<f64>,
    /// Residual degrees of freedom, `n - k`.
    pub dof: usize,
    /// The validated error: leave-one-point-out RMS of `r` (log units, about a relative
    /// error).
    pub validated_error: f64,
    /// The shared points it was fitted to.
    pub points: usize,
    /// Each factor's range over those points.
    pub ranges: Vec<(f64, f64)>,
}

/// How many points both `a` and `b` ran (with positive values), as the difference model counts
/// them.
pub fn shared_points(a: &[Run], b: &[Run]) -> usize {
    log_ratios(a, b).0.len()
}

/// The shared points' factor values and log ratios.
fn log_ratios(a: &[Run], b: &[Run]) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut points: Vec<Vec<f64>> = a.iter().map(|r| r.point.clone()).collect();
    points.sort_by(|x, y| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal));
    points.dedup_by(|x, y| x.iter().zip(y.iter()).all(|(u, v)| same(*u, *v)));
    let at = |runs: &[Run], point: &[f64]| -> Vec<Run> {
        runs.iter()
            .filter(|r| r.point.iter().zip(point).all(|(u, v)| same(*u, *v)))
            .filter(|r| r.value.is_finite() && r.value > 0.0)
            .cloned()
            .collect()
    };
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for point in points {
        let (ra, rb) = (at(a, &point), at(b, &point));
        if ra.is_empty() || rb.is_empty() || point.iter().any(|v| !v.is_finite()) {
            continue;
        }
        let y = paired_log_ratio(&ra, &rb).unwrap_or_else(|| {
            let mean = |r: &[Run]| r.iter().map(|r| r.value).sum::<f64>() / r.len() as f64;
            (mean(&ra) / mean(&rb)).ln()
        });
        xs.push(point);
        ys.push(y);
    }
    (xs, ys)
}

/// The mean `ln(a / b)` over runs of the same replicate index, when both sides carry the same
/// indices, each once.
fn paired_log_ratio(a: &[Run], b: &[Run]) -> Option<f64> {
    let pairs = super::measured::replicate_pairs(a, b)?;
    let logs: Vec<f64> = pairs.iter().map(|(x, y)| (x / y).ln()).collect();
    Some(logs.iter().sum::<f64>() / logs.len() as f64)
}

/// The terms a factor offers, given its values.
fn candidate_terms(xs: &[Vec<f64>], factors: usize) -> Vec<Term> {
    let mut terms = Vec::new();
    for i in 0..factors {
        let values: Vec<f64> = xs.iter().map(|x| x[i]).collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if hi <= lo {
            continue;
        }
        terms.push(Term::Linear(i));
        if lo > 0.0 {
            terms.push(Term::Log(i));
            terms.push(Term::Inverse(i));
        }
        let whole = values.iter().all(|v| v.fract() == 0.0);
        let odd = values.iter().any(|v| v.rem_euclid(2.0) == 1.0);
        let even = values.iter().any(|v| v.rem_euclid(2.0) == 0.0);
        if whole && odd && even {
            terms.push(Term::Odd(i));
        }
    }
    terms
}

/// Every subset of `terms` of at most `most` elements, smallest first.
fn subsets(terms: &[Term], most: usize) -> Vec<Vec<Term>> {
    let mut out: Vec<Vec<Term>> = vec![Vec::new()];
    let mut level: Vec<(usize, Vec<Term>)> = vec![(0, Vec::new())];
    for _ in 0..most {
        let mut next = Vec::new();
        for (start, set) in &level {
            for (k, t) in terms.iter().enumerate().skip(*start) {
                let mut s = set.clone();
                s.push(*t);
                next.push((k + 1, s));
            }
        }
        out.extend(next.iter().map(|(_, s)| s.clone()));
        level = next;
    }
    out
}

/// One least-squares fit: coefficients, `(X'X)^-1`, residual variance and the
/// leave-one-out RMS; None where the design is singular or a point has leverage 1.
struct Fitted {
    beta: DVector<f64>,
    inverse: DMatrix<f64>,
    s2: f64,
    loo_rms: f64,
}

fn design(xs: &[Vec<f64>], terms: &[Term]) -> DMatrix<f64> {
    DMatrix::from_fn(xs.len(), terms.len() + 1, |r, c| match c {
        0 => 1.0,
        c => terms[c - 1].value(&xs[r]),
    })
}

fn least_squares(xs: &[Vec<f64>], ys: &[f64], terms: &[Term]) -> Option<Fitted> {
    let (n, k) = (xs.len(), terms.len() + 1);
    if n < k + 2 {
        return None;
    }
    let x = design(xs, terms);
    if x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let y = DVector::from_column_slice(ys);
    let xtx = x.transpose() * &x;
    // Refuse a near-singular design (collinear terms): its coefficients mean nothing.
    let singular = xtx.clone().symmetric_eigenvalues();
    let (smallest, largest) = singular
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(s, l), v| (s.min(*v), l.max(*v)));
    // (NaN eigenvalues compare false and are refused too.)
    let conditioned = smallest > 1e-10 * largest;
    if !conditioned {
        return None;
    }
    let inverse = xtx.cholesky()?.inverse();
    let beta = &inverse * (x.transpose() * &y);
    let residuals = &y - &x * &beta;
    let s2 = residuals.norm_squared() / (n - k) as f64;
    let mut loo = 0.0;
    for i in 0..n {
        let row = x.row(i).transpose();
        let h = (row.transpose() * &inverse * &row)[(0, 0)];
        if h >= 1.0 - 1e-9 {
            return None;
        }
        loo += (residuals[i] / (1.0 - h)).powi(2);
    }
    Some(Fitted {
        beta,
        inverse,
        s2,
        loo_rms: (loo / n as f64).sqrt(),
    })
}

impl DifferenceModel {
    /// The difference model of the runs `a` and `b` (over `factors`, in their order) at the
    /// points both ran; None with fewer than [`FEWEST_POINTS`] such points or no form that
    /// can be fitted.
    pub fn fit(factors: &[String], a: &[Run], b: &[Run]) -> Option<DifferenceModel> {
        let (xs, ys) = log_ratios(a, b);
        if xs.len() < FEWEST_POINTS {
            return None;
        }
        let terms = candidate_terms(&xs, factors.len());
        let (terms, fitted) = subsets(&terms, MOST_TERMS)
            .into_iter()
            .filter_map(|t| least_squares(&xs, &ys, &t).map(|f| (t, f)))
            .min_by(|(_, f), (_, g)| f.loo_rms.total_cmp(&g.loo_rms))?;
        let ranges = (0..factors.len())
            .map(|i| {
                xs.iter()
                    .map(|x| x[i])
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                        (l.min(v), h.max(v))
                    })
            })
            .collect();
        Some(DifferenceModel {
            factors: factors.to_vec(),
            dof: xs.len() - terms.len() - 1,
            terms,
            coefficients: fitted.beta.iter().copied().collect(),
            covariance: fitted.inverse * fitted.s2,
            validated_error: fitted.loo_rms,
            points: xs.len(),
            ranges,
        })
    }

    /// The form as text, e.g. `ln(T_A/T_B) = 0.1 - 0.3 odd(p)`.
    pub fn text(&self) -> String {
        let mut s = format!("ln(T_A/T_B) = {:.4}", self.coefficients[0]);
        for (t, c) in self.terms.iter().zip(&self.coefficients[1..]) {
            let sign = if *c < 0.0 { '-' } else { '+' };
            s.push_str(&format!(" {sign} {:.4} {}", c.abs(), t.text(&self.factors)));
        }
        s
    }

    /// `(r, half_width)`: the predicted log ratio at a point (every factor by name) and the
    /// half-width of its 90% interval; None outside the fitted range or without a value for a
    /// factor.
    pub fn predict(&self, point: &[(String, f64)]) -> Option<(f64, f64)> {
        let x: Vec<f64> = self
            .factors
            .iter()
            .map(|f| point.iter().rev().find(|(n, _)| n == f).map(|(_, v)| *v))
            .collect::<Option<_>>()?;
        let inside = x.iter().zip(&self.ranges).all(|(v, (lo, hi))| {
            let slack = 1e-9 * lo.abs().max(hi.abs()).max(1.0);
            *v >= lo - slack && *v <= hi + slack
        });
        if !inside {
            return None;
        }
        let row = DVector::from_iterator(
            self.terms.len() + 1,
            std::iter::once(1.0).chain(self.terms.iter().map(|t| t.value(&x))),
        );
        let r = row.dot(&DVector::from_column_slice(&self.coefficients));
        let s2_fit = (row.transpose() * &self.covariance * &row)[(0, 0)];
        let half_width =
            t_quantile_real(self.dof as f64) * (s2_fit + self.validated_error.powi(2)).sqrt();
        (r.is_finite() && half_width.is_finite()).then_some((r, half_width))
    }

    /// The comparison at a point: the difference model's where it predicts there, both
    /// separate times are positive and its interval, as a relative half-width
    /// `2 sinh(h/2)`, is narrower than the separate models' (`half_width / sqrt(T_A T_B)`);
    /// else `separate` unchanged. Where it decides, `T_A` and `T_B` keep the separate models'
    /// geometric mean `g` and take the difference model's ratio (`g e^{±r/2}`), and the
    /// half-width is `2 g sinh(h/2)`, so that `|T_A - T_B| > half_width` exactly where the
    /// interval of `r` excludes zero.
    pub fn decide(&self, separate: Comparison, point: &[(String, f64)]) -> Comparison {
        let (ta, tb) = (separate.t_a, separate.t_b);
        let comparable = ta > 0.0 && tb > 0.0 && separate.half_width.is_finite();
        if !comparable {
            return separate;
        }
        let Some((r, h)) = self.predict(point) else {
            return separate;
        };
        let g = (ta * tb).sqrt();
        let width = 2.0 * (h / 2.0).sinh();
        if width >= separate.half_width / g {
            return separate;
        }
        let winner = if r + h < 0.0 {
            Winner::A
        } else if r - h > 0.0 {
            Winner::B
        } else {
            Winner::Tie
        };
        Comparison {
            t_a: g * (r / 2.0).exp(),
            t_b: g * (-r / 2.0).exp(),
            half_width: g * width,
            winner,
            significant: Some(winner != Winner::Tie),
            basis: Basis::Difference,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(points: &[(f64, f64)]) -> Vec<Run> {
        points
            .iter()
            .map(|&(p, value)| Run {
                point: vec![p],
                value,
                replicate: None,
            })
            .collect()
    }

    #[test]
    fn subsets_count_every_combination() {
        let t = [
            Term::Linear(0),
            Term::Log(0),
            Term::Inverse(0),
            Term::Odd(0),
        ];
        // 1 + 4 + 6 + 4.
        assert_eq!(subsets(&t, 3).len(), 15);
    }

    #[test]
    fn an_exact_parity_pattern_is_found() {
        // ln(T_A/T_B) = -0.3 at odd p, 0.1 at even, exactly (up to a tiny wobble).
        let ps: Vec<f64> = (2..=9).map(f64::from).collect();
        let a: Vec<(f64, f64)> = ps
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let r = if p % 2.0 == 1.0 { -0.3 } else { 0.1 };
                (p, (r + 1e-4 * (i as f64 * 1.7).sin()).exp())
            })
            .collect();
        let b: Vec<(f64, f64)> = ps.iter().map(|&p| (p, 1.0)).collect();
        let m = DifferenceModel::fit(&["p".into()], &runs(&a), &runs(&b)).unwrap();
        assert_eq!(m.terms, vec![Term::Odd(0)], "{}", m.text());
        assert!((m.coefficients[0] - 0.1).abs() < 1e-3);
        assert!((m.coefficients[1] + 0.4).abs() < 1e-3);
        let (r, h) = m.predict(&[("p".into(), 5.0)]).unwrap();
        assert!((r + 0.3).abs() < 1e-3 && h < 0.01);
        assert!(
            m.predict(&[("p".into(), 10.0)]).is_none(),
            "no extrapolation"
        );
    }
}
