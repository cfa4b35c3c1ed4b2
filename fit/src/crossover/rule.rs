//! Who wins at one point: the one rule of the crossover, the winner map, their boundary and
//! every report (see [the module](super)): the 90% confidence interval of `E[T_A] - E[T_B]`,
//! each model's validated error added when known.

use super::{Basis, TOUCH};
use crate::calibration::Reach;
use crate::performance::{Kind, PerformanceModel, TimePrediction};
use crate::stats::{t_quantile_real, welch_half_width};

/// Which implementation is faster, by [`compare`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Winner {
    /// The first model predicts the lower time (significantly, with intervals).
    A,
    /// The second model predicts the lower time (significantly, with intervals).
    B,
    /// The two cannot be told apart at 90% (without intervals: they predict the same time).
    Tie,
}

/// Two predictions at one point compared by the one rule of who wins (see the module).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// `T_A`.
    pub t_a: f64,
    /// `T_B`.
    pub t_b: f64,
    /// Half-width of the 90% confidence interval of `E[T_A] - E[T_B]`; NaN without intervals.
    pub half_width: f64,
    /// A or B where the interval excludes zero (or, without intervals, where the means
    /// differ by more than [`TOUCH`]); else `Tie`.
    pub winner: Winner,
    /// Whether the winner is significant at 90%: false where the two cannot be told apart;
    /// None without intervals.
    pub significant: Option<bool>,
    /// What the verdict rests on: the two models, or the difference model where its interval
    /// is narrower ([`DifferenceModel::decide`](super::difference::DifferenceModel::decide)).
    pub basis: Basis,
}

impl Comparison {
    /// `T_A - T_B`.
    pub fn difference(&self) -> f64 {
        self.t_a - self.t_b
    }
}

/// How far a model's predicted mean `T_p` was from measured means, as a relative standard
/// deviation from `points` validation points: the error of the model's form, which its
/// coefficients' intervals do not hold. Added to a comparison's variance as `(sd · T_p)²` with
/// `points − 1` degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidatedError {
    /// Root mean square of `(predicted − measured) / measured` over the points.
    pub relative_sd: f64,
    /// The validation points it comes from (at least 2).
    pub points: usize,
}

/// The variance of a predicted mean `T_p` (the categories' standard errors over `p`, taken as
/// independent; a response's own standard error, not divided by `p`; beyond the data, the
/// forward validation's widening) and its Welch–Satterthwaite term `sum s^4 / dof`; None
/// without intervals.
fn mean_variance(m: &PerformanceModel, t: &TimePrediction) -> Option<(f64, f64)> {
    let p = m.divisor(&t.point);
    let (mut variance, mut denominator) = (0.0, 0.0);
    for (c, pred) in m.categories.iter().zip(&t.categories) {
        let dof = c.fit.dof as f64;
        let s2 = (pred.mean_half_width / t_quantile_real(dof) / p).powi(2);
        if !s2.is_finite() {
            return None;
        }
        variance += s2;
        if s2 > 0.0 {
            denominator += s2 * s2 / dof;
        }
    }
    // Beyond the data, the error of the model's form that forward validation measured
    // (docs/modelling.md#beyond-the-data); a response model's first response holds it already.
    if let Reach::Calibrated { sd, dof } = t.reach
        && sd > 0.0
        && m.kind == Kind::LostCycles
    {
        variance += sd * sd;
        denominator += sd.powi(4) / dof;
    }
    Some((variance, denominator))
}

/// Who wins at one point: `pa` is model `a`'s prediction there, `pb` model `b`'s. The one rule
/// of the crossover, the winner map and their reports: A (or B) wins where the 90% confidence
/// interval of `E[T_A] - E[T_B]` excludes zero; the variances of the two means add and the t
/// quantile takes the Welch–Satterthwaite degrees of freedom of the sum. Without intervals the
/// lower mean wins (not significant, not tested: `significant` is None); equal means (within
/// [`TOUCH`]) are a tie.
pub fn compare(
    a: &PerformanceModel,
    pa: &TimePrediction,
    b: &PerformanceModel,
    pb: &TimePrediction,
) -> Comparison {
    compare_with(a, pa, b, pb, [None, None])
}

/// [`compare`], each model's validated error (when given) added to its mean's variance; for
/// a model computed by an evaluator (PACE's), whose interval is already its error on the runs
/// it was built from, the validated error takes that interval's place rather than adding to
/// it: both measure the same error of the model, the validated one on runs it was not built
/// from.
pub fn compare_with(
    a: &PerformanceModel,
    pa: &TimePrediction,
    b: &PerformanceModel,
    pb: &TimePrediction,
    errors: [Option<ValidatedError>; 2],
) -> Comparison {
    let (t_a, t_b) = (pa.time.value, pb.time.value);
    let d = t_a - t_b;
    let with_error = |m: &PerformanceModel, p: &TimePrediction, e: Option<ValidatedError>| {
        let (mut variance, mut denominator) = mean_variance(m, p)?;
        if let Some(e) = e {
            if m.evaluator.is_some() {
                (variance, denominator) = (0.0, 0.0);
            }
            let s2 = (e.relative_sd * p.time.value).powi(2);
            variance += s2;
            denominator += s2 * s2 / (e.points - 1) as f64;
        }
        Some((variance, denominator))
    };
    let va = with_error(a, pa, errors[0]);
    let vb = with_error(b, pb, errors[1]);
    let half_width = match (va, vb) {
        (Some((va, da)), Some((vb, db))) => welch_half_width(va + vb, da + db),
        _ => f64::NAN,
    };
    let equal = d.abs() <= TOUCH * (t_a.abs() + t_b.abs());
    let significant = half_width
        .is_finite()
        .then(|| !equal && d.abs() > half_width);
    let winner = if equal || significant == Some(false) {
        Winner::Tie
    } else if d < 0.0 {
        Winner::A
    } else {
        Winner::B
    };
    Comparison {
        t_a,
        t_b,
        half_width,
        winner,
        significant,
        basis: Basis::Models,
    }
}
