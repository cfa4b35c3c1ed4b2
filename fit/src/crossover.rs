//! Crossover points of two implementations' performance models (DESIGN §1): where along one
//! factor `T_A - T_B` changes sign, which implementation wins on each side and by how much, and
//! how uncertain each crossing is; over two factors, a winner map and its boundary.
//!
//! **Who wins** is one rule, [`compare`], used by the 1-D crossover, the winner map, its
//! boundary and every output format: A (or B) wins at a point when the 90% confidence interval
//! of `E[T_A] - E[T_B]` excludes zero — the difference of the two models' predicted *mean* run
//! times, whose variance is the sum of both models' (every category's coefficient covariance
//! propagated by the delta method; the models are fitted to different runs, so their errors are
//! independent), with a Student t at the Welch–Satterthwaite degrees of freedom of that sum.
//! Elsewhere the two *cannot be told apart at 90%* and no winner is named. The mean, not a
//! single run: "which implementation is faster here" is a question about expected run times;
//! the noise of one run (what a prediction interval adds) says how far one run may stray, does
//! not shrink with more runs, and would call two implementations alike however well measured.
//! Models written by hand carry no intervals: the lower mean wins, flagged as untested.
//!
//! The difference `d(x) = T_A(x) - T_B(x)` is sampled (at least [`SAMPLES`] points, on a log
//! scale when the range is positive and spans more than 10x, else linearly). Every sign change
//! between neighbouring samples is refined with Brent's method (argmin's `BrentRoot`). Where
//! `|d|` has a local minimum among the samples without a sign change, `|d|` is minimised with
//! Brent's method (`BrentOpt`) between the neighbours: a minimum that changes sign gives two
//! crossings the samples missed; one with `|d| <= 1e-9 (|T_A| + |T_B|)` is a tangential
//! *touch*; one where `|d|` is within the 90% half-width of the difference is a *near touch*
//! (the two cannot be told apart there, but the means do not meet).
//!
//! The *band* of a meeting is the interval around it where `|d| <= hw`, `hw` the 90%
//! half-width of [`compare`]: there the two cannot be told apart. Its edges are the roots of
//! `|d| - hw`, found by walking the samples outward and refining with `BrentRoot`. The *sides*
//! are the stretches of the range with one verdict: A wins, B wins, or (with intervals) the two
//! cannot be told apart — the samples where they cannot, and the band of every meeting. A
//! crossing is *significant* when the winner really changes there: A wins on one side of its
//! band and B on the other.
//!
//! "By how much" an implementation wins on a side is its largest advantage there: the largest
//! `T_loser / T_winner` among the side's samples and its midpoint (the range's ends are
//! samples), with where it occurs. Where no time on the side is positive the ratio is NaN and
//! only the difference is meaningful.
//!
//! Every point sampled or refined must be inside both models' domains
//! ([`PerformanceModel::try_predict`]): a range that touches a point where a model cannot
//! predict (a log of 0, p <= 0) is an error naming it.

use std::cell::RefCell;

use argmin::core::{CostFunction, Error, Executor};
use argmin::solver::brent::{BrentOpt, BrentRoot};

use crate::domain::DomainError;
use crate::performance::{Kind as PerformanceKind, PerformanceModel, TimePrediction};
use crate::stats::t_quantile_real;

/// The fewest samples along a factor.
pub const SAMPLES: usize = 512;

/// Relative size of `|T_A - T_B|` (against `|T_A| + |T_B|`) under which the models meet.
pub const TOUCH: f64 = 1e-9;

/// Why two models cannot be compared. One line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct CrossoverError(pub String);

fn fail<T>(message: String) -> Result<T, CrossoverError> {
    Err(CrossoverError(message))
}

impl From<DomainError> for CrossoverError {
    fn from(e: DomainError) -> Self {
        CrossoverError(e.to_string())
    }
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
}

impl Comparison {
    /// `T_A - T_B`.
    pub fn difference(&self) -> f64 {
        self.t_a - self.t_b
    }
}

/// The variance of a predicted mean `T_p` (the categories' standard errors over `p`, taken as
/// independent) and its Welch–Satterthwaite term `sum s^4 / dof`; None without intervals.
fn mean_variance(m: &PerformanceModel, t: &TimePrediction) -> Option<(f64, f64)> {
    let p = m.processors(&t.point);
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

/// [`compare`], each model's validated error (when given) added to its mean's variance.
pub fn compare_with(
    a: &PerformanceModel,
    pa: &TimePrediction,
    b: &PerformanceModel,
    pb: &TimePrediction,
    errors: [Option<ModelError>; 2],
) -> Comparison {
    let (t_a, t_b) = (pa.time.value, pb.time.value);
    let d = t_a - t_b;
    let with_error = |v: Option<(f64, f64)>, t: f64, e: Option<ModelError>| {
        let (mut variance, mut denominator) = v?;
        if let Some(e) = e {
            let s2 = (e.relative_sd * t).powi(2);
            variance += s2;
            denominator += s2 * s2 / (e.points - 1) as f64;
        }
        Some((variance, denominator))
    };
    let va = with_error(mean_variance(a, pa), t_a, errors[0]);
    let vb = with_error(mean_variance(b, pb), t_b, errors[1]);
    let half_width = match (va, vb) {
        (Some((va, da)), Some((vb, db))) => {
            let variance = va + vb;
            if variance > 0.0 {
                t_quantile_real(variance * variance / (da + db)) * variance.sqrt()
            } else {
                0.0
            }
        }
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
    }
}

/// How samples are spaced along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced logarithms.
    Log,
}

/// A factor and the range it is explored over.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The factor.
    pub factor: String,
    /// The smallest value.
    pub lo: f64,
    /// The largest value.
    pub hi: f64,
    /// How samples are spaced.
    pub scale: Scale,
}

impl Axis {
    /// The range `lo..hi` of a factor, on a log scale when it is positive and spans more than
    /// 10x, else linear.
    pub fn new(factor: &str, lo: f64, hi: f64) -> Result<Axis, CrossoverError> {
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return fail(format!(
                "the range of '{factor}' must be finite and increasing ({lo}..{hi})"
            ));
        }
        let scale = if lo > 0.0 && hi > 10.0 * lo {
            Scale::Log
        } else {
            Scale::Linear
        };
        Ok(Axis {
            factor: factor.to_string(),
            lo,
            hi,
            scale,
        })
    }

    /// `count` values from `lo` to `hi` on the axis's scale (both ends included).
    pub fn samples(&self, count: usize) -> Vec<f64> {
        let count = count.max(2);
        let last = (count - 1) as f64;
        (0..count)
            .map(|i| match i {
                0 => self.lo,
                _ if i == count - 1 => self.hi,
                _ => self.at(i as f64 / last),
            })
            .collect()
    }

    /// The value a fraction `t` of the way from `lo` to `hi` on the axis's scale.
    pub fn at(&self, t: f64) -> f64 {
        match self.scale {
            Scale::Linear => self.lo + (self.hi - self.lo) * t,
            Scale::Log => (self.lo.ln() + (self.hi.ln() - self.lo.ln()) * t).exp(),
        }
    }

    fn midpoint(&self, a: f64, b: f64) -> f64 {
        match self.scale {
            Scale::Log if a > 0.0 && b > 0.0 => (a * b).sqrt(),
            _ => 0.5 * (a + b),
        }
    }
}

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

/// What kind of meeting point a crossover is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `T_A - T_B` changes sign: the winner changes.
    Crossing,
    /// `T_A - T_B` reaches zero without changing sign (a tangential touch).
    Touch,
    /// `|T_A - T_B|` has a local minimum inside the 90% half-width of the difference without
    /// reaching zero: the two cannot be told apart there, the winner does not change.
    NearTouch,
}

/// The interval around a crossover where the two cannot be told apart at 90%.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// Lower edge.
    pub lo: f64,
    /// Upper edge.
    pub hi: f64,
    /// The band reaches the range's lower end (it may go further).
    pub lo_open: bool,
    /// The band reaches the range's upper end (it may go further).
    pub hi_open: bool,
}

/// One point where the two models meet (or nearly do).
#[derive(Debug, Clone, PartialEq)]
pub struct Meeting {
    /// The factor's value.
    pub x: f64,
    /// Crossing, touch or near touch.
    pub kind: Kind,
    /// `T_A` there.
    pub t_a: f64,
    /// `T_B` there.
    pub t_b: f64,
    /// Where the two cannot be told apart at 90%; None without intervals.
    pub band: Option<Band>,
    /// Whether the winner changes here at 90%: A wins on one side of the band and B on the
    /// other (always false for a touch or near touch); None without intervals.
    pub significant: Option<bool>,
}

/// A stretch of the range with one verdict of [`compare`]: A wins, B wins, or (with
/// intervals) the two cannot be told apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// Lower end (the range's end, a crossing, or where the verdict changes).
    pub from: f64,
    /// Upper end.
    pub to: f64,
    /// The faster implementation; `Tie` where the two cannot be told apart at 90%.
    pub winner: Winner,
    /// Whether the verdict is significant at 90% (false for `Tie`); None without intervals.
    pub significant: Option<bool>,
    /// Where the advantage is largest.
    pub at: f64,
    /// `T_A` there.
    pub t_a: f64,
    /// `T_B` there.
    pub t_b: f64,
    /// The largest `T_loser / T_winner` on the side (NaN where no time there is positive, and
    /// where the two cannot be told apart; 1 for equal models without intervals).
    pub ratio: f64,
}

/// Where the comparison leaves a model's fitted range.
#[derive(Debug, Clone, PartialEq)]
pub struct Extrapolation {
    /// The model's name.
    pub model: String,
    /// The factor.
    pub factor: String,
    /// The model's fitted range of the factor.
    pub fitted: (f64, f64),
    /// The part of the explored range (or the fixed value, `(v, v)`) outside it.
    pub outside: (f64, f64),
}

/// The crossovers of two models along one factor.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossover {
    /// The first model's name (A).
    pub a: String,
    /// The response compared, for response models (its own units; the lower wins); None
    /// for run time `T_p`.
    pub response: Option<String>,
    /// The second model's name (B).
    pub b: String,
    /// The factor and its range.
    pub axis: Axis,
    /// The values of the other factors (and held values that matter, such as `p`).
    pub fixed: Vec<(String, f64)>,
    /// How many samples were taken.
    pub samples: usize,
    /// Where the models meet, in increasing order.
    pub meetings: Vec<Meeting>,
    /// The stretches of one verdict, in increasing order.
    pub sides: Vec<Side>,
    /// Every sample and its comparison, in increasing order.
    pub points: Vec<(f64, Comparison)>,
    /// Both models carry prediction intervals.
    pub intervals: bool,
    /// Each model's validated error, when the intervals hold it ([`Pair::with_model_errors`]).
    pub errors: [Option<ModelError>; 2],
    /// Where the range leaves a model's data.
    pub extrapolation: Vec<Extrapolation>,
}

/// A point of a winner map's boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundaryPoint {
    /// The first factor's value (the crossover along it).
    pub u: f64,
    /// The second factor's level.
    pub v: f64,
    /// Crossing or touch.
    pub kind: Kind,
    /// Whether the winner changes there at 90% (see [`Meeting::significant`]).
    pub significant: Option<bool>,
}

/// Which implementation wins over a grid of two factors.
#[derive(Debug, Clone, PartialEq)]
pub struct WinnerMap {
    /// The first model's name (A).
    pub a: String,
    /// The response compared, for response models (its own units; the lower wins); None
    /// for run time `T_p`.
    pub response: Option<String>,
    /// The second model's name (B).
    pub b: String,
    /// The first factor (columns).
    pub u: Axis,
    /// The second factor (rows).
    pub v: Axis,
    /// The values of the other factors.
    pub fixed: Vec<(String, f64)>,
    /// The first factor's grid values.
    pub us: Vec<f64>,
    /// The second factor's grid values.
    pub vs: Vec<f64>,
    /// `cells[j][i]`: the winner at `(us[i], vs[j])` by [`compare`]; `Tie` where the two
    /// cannot be told apart at 90% (or, without intervals, where they meet within [`TOUCH`]).
    pub cells: Vec<Vec<Winner>>,
    /// `comparisons[j][i]`: the comparison behind `cells[j][i]`.
    pub comparisons: Vec<Vec<Comparison>>,
    /// For each level of the second factor, the crossovers along the first.
    pub boundary: Vec<BoundaryPoint>,
    /// `levels[j]`: the sides along the first factor at `vs[j]`, as [`Pair::crossover`] finds
    /// them (who wins on which side of the boundary).
    pub levels: Vec<Vec<Side>>,
    /// Both models carry prediction intervals.
    pub intervals: bool,
    /// Each model's validated error, when the intervals hold it ([`Pair::with_model_errors`]).
    pub errors: [Option<ModelError>; 2],
    /// Where the grid leaves a model's data.
    pub extrapolation: Vec<Extrapolation>,
}

/// How far a model's predicted mean `T_p` was from measured means, as a relative standard
/// deviation from `points` validation points: the error of the model's form, which its
/// coefficients' intervals do not hold. Added to a comparison's variance as `(sd · T_p)²` with
/// `points − 1` degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelError {
    /// Root mean square of `(predicted − measured) / measured` over the points.
    pub relative_sd: f64,
    /// The validation points it comes from (at least 2).
    pub points: usize,
}

/// Two models to compare, checked to be over the same factors.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'m> {
    /// The first implementation (A).
    pub a: &'m PerformanceModel,
    /// The second implementation (B).
    pub b: &'m PerformanceModel,
    /// Each model's validated error, when known ([`Pair::with_model_errors`]).
    pub errors: [Option<ModelError>; 2],
}

/// What a model's comparisons compare: None for run time `T_p`, the response's name for a
/// response model (which must have exactly one).
fn compared(m: &PerformanceModel) -> Result<Option<String>, CrossoverError> {
    if m.kind == PerformanceKind::LostCycles {
        return Ok(None);
    }
    match m.categories.as_slice() {
        [one] => Ok(Some(one.category.clone())),
        many => {
            let names: Vec<&str> = many.iter().map(|c| c.category.as_str()).collect();
            fail(format!(
                "{} models {} responses ({}); compare models of one response each",
                m.name,
                names.len(),
                names.join(", ")
            ))
        }
    }
}

impl<'m> Pair<'m> {
    /// Checks that the two models are over the same factors and hold `p` (when held) at the
    /// same value.
    pub fn new(a: &'m PerformanceModel, b: &'m PerformanceModel) -> Result<Self, CrossoverError> {
        let (ra, rb) = (compared(a)?, compared(b)?);
        if ra != rb {
            let what = |r: &Option<String>| match r {
                None => "run time T_p (lost cycles)".to_string(),
                Some(r) => format!("the response '{r}'"),
            };
            return fail(format!(
                "the models predict different things: {} models {}, {} models {}",
                a.name,
                what(&ra),
                b.name,
                what(&rb)
            ));
        }
        let mut fa = a.factors.clone();
        let mut fb = b.factors.clone();
        fa.sort();
        fb.sort();
        if fa != fb {
            return fail(format!(
                "the models are over different factors: {} has ({}), {} has ({})",
                a.name,
                a.factors.join(", "),
                b.name,
                b.factors.join(", ")
            ));
        }
        if let (Some(pa), Some(pb)) = (a.held.get("p"), b.held.get("p"))
            && pa != pb
        {
            return fail(format!(
                "the models hold p at different values: {} at p={pa}, {} at p={pb}",
                a.name, b.name
            ));
        }
        Ok(Pair {
            a,
            b,
            errors: [None, None],
        })
    }

    /// The same pair, its comparisons' intervals also holding each model's validated error.
    pub fn with_model_errors(mut self, errors: [Option<ModelError>; 2]) -> Self {
        self.errors = errors.map(|e| e.filter(|e| e.points >= 2 && e.relative_sd.is_finite()));
        self
    }

    /// The factors, in the first model's order.
    pub fn factors(&self) -> &[String] {
        &self.a.factors
    }

    /// Checks the fixed values (every name a factor or a held value of both models, a held one
    /// at its held value) and returns the factors left free, in the first model's order.
    pub fn free(&self, fixed: &[(String, f64)]) -> Result<Vec<String>, CrossoverError> {
        for (name, value) in fixed {
            if self.a.factors.contains(name) {
                continue;
            }
            let held = [self.a, self.b]
                .into_iter()
                .find_map(|m| m.held.get(name).map(|h| (m, *h)));
            match held {
                Some((m, h)) if h != *value => {
                    return fail(format!(
                        "--at {name}={value}: {} holds {name} at {h} (it is not a factor)",
                        m.name
                    ));
                }
                Some(_) => {}
                None => {
                    return fail(format!(
                        "--at {name}={value}: '{name}' is not a factor of the models ({})",
                        self.a.factors.join(", ")
                    ));
                }
            }
        }
        Ok(self
            .a
            .factors
            .iter()
            .filter(|f| !fixed.iter().any(|(n, _)| n == *f))
            .cloned()
            .collect())
    }

    /// The default range of a factor: the union of the two models' fitted ranges.
    pub fn default_axis(&self, factor: &str) -> Result<Axis, CrossoverError> {
        let range = |m: &PerformanceModel| {
            m.factors
                .iter()
                .position(|f| f == factor)
                .map(|i| m.ranges[i])
                .filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
        };
        let (lo, hi) = match (range(self.a), range(self.b)) {
            (Some(a), Some(b)) => (a.0.min(b.0), a.1.max(b.1)),
            (Some(r), None) | (None, Some(r)) => r,
            (None, None) => {
                return fail(format!(
                    "neither model has a fitted range of '{factor}': give one, e.g. \
                     --range {factor}=LOW..HIGH"
                ));
            }
        };
        if lo >= hi {
            return fail(format!(
                "the models were fitted at {factor}={lo} only: give a range, e.g. \
                 --range {factor}=LOW..HIGH"
            ));
        }
        Axis::new(factor, lo, hi)
    }

    /// Who wins at a point given by name (every factor, or held value at its value), by
    /// [`compare`]; an error where a model cannot predict.
    pub fn compare_at(&self, point: &[(String, f64)]) -> Result<Comparison, CrossoverError> {
        let free = self.free(point)?;
        if let Some(missing) = free.first() {
            return fail(format!(
                "factor '{missing}' has no value: give one, e.g. {missing}=VALUE"
            ));
        }
        Evaluator {
            a: self.a,
            b: self.b,
            errors: self.errors,
        }
        .at(point)
    }

    /// The crossovers along `axis` with every other factor fixed, from `samples` samples (at
    /// least [`SAMPLES`]).
    pub fn crossover(
        &self,
        axis: &Axis,
        fixed: &[(String, f64)],
        samples: usize,
    ) -> Result<Crossover, CrossoverError> {
        let eval = self.evaluator(&[&axis.factor], fixed)?;
        let samples = samples.max(SAMPLES);
        let line = Line::sample(&eval, axis, fixed_point(fixed, &axis.factor), samples)?;
        let (meetings, sides) = line.solve()?;
        Ok(Crossover {
            a: self.a.name.clone(),
            response: compared(self.a).ok().flatten(),
            b: self.b.name.clone(),
            axis: axis.clone(),
            fixed: eval.fixed_report(fixed),
            samples,
            meetings,
            sides,
            points: line
                .xs
                .iter()
                .copied()
                .zip(line.cs.iter().copied())
                .collect(),
            errors: self.errors,
            intervals: line.intervals(),
            extrapolation: self.extrapolation(&[axis], fixed),
        })
    }

    /// Which model wins over a `cells x cells` grid of two factors (`u` across, `v` down) with
    /// every other factor fixed, and the crossovers and sides along `u` at each level of `v`.
    pub fn winner_map(
        &self,
        u: &Axis,
        v: &Axis,
        fixed: &[(String, f64)],
        cells: usize,
    ) -> Result<WinnerMap, CrossoverError> {
        let eval = self.evaluator(&[&u.factor, &v.factor], fixed)?;
        let cells = cells.max(2);
        let (us, vs) = (u.samples(cells), v.samples(cells));
        let mut comparisons = Vec::with_capacity(vs.len());
        let mut boundary = Vec::new();
        let mut levels = Vec::with_capacity(vs.len());
        let mut intervals = true;
        for &y in &vs {
            let mut values = fixed_point(fixed, &u.factor);
            values.push((v.factor.clone(), y));
            let row = us
                .iter()
                .map(|&x| {
                    let mut point = values.clone();
                    point.push((u.factor.clone(), x));
                    eval.at(&point)
                })
                .collect::<Result<Vec<_>, _>>()?;
            comparisons.push(row);
            let line = Line::sample(&eval, u, values, SAMPLES)?;
            intervals &= line.intervals();
            let (meetings, sides) = line.solve()?;
            boundary.extend(
                meetings
                    .into_iter()
                    .filter(|m| m.kind != Kind::NearTouch)
                    .map(|m| BoundaryPoint {
                        u: m.x,
                        v: y,
                        kind: m.kind,
                        significant: m.significant,
                    }),
            );
            levels.push(sides);
        }
        Ok(WinnerMap {
            a: self.a.name.clone(),
            response: compared(self.a).ok().flatten(),
            b: self.b.name.clone(),
            u: u.clone(),
            v: v.clone(),
            fixed: eval.fixed_report(fixed),
            us,
            vs,
            cells: comparisons
                .iter()
                .map(|row| row.iter().map(|c| c.winner).collect())
                .collect(),
            comparisons,
            boundary,
            levels,
            errors: self.errors,
            intervals,
            extrapolation: self.extrapolation(&[u, v], fixed),
        })
    }

    fn evaluator(
        &self,
        free: &[&str],
        fixed: &[(String, f64)],
    ) -> Result<Evaluator<'m>, CrossoverError> {
        let left = self.free(fixed)?;
        for f in free {
            if !self.a.factors.iter().any(|g| g == f) {
                return fail(format!(
                    "'{f}' is not a factor of the models ({})",
                    self.a.factors.join(", ")
                ));
            }
            if fixed.iter().any(|(n, _)| n == f) {
                return fail(format!("'{f}' is both varied and fixed with --at"));
            }
        }
        if let Some(missing) = left.iter().find(|f| !free.contains(&f.as_str())) {
            return fail(format!(
                "factor '{missing}' is neither varied nor fixed: give its value, e.g. \
                 --at {missing}=VALUE"
            ));
        }
        Ok(Evaluator {
            a: self.a,
            b: self.b,
            errors: self.errors,
        })
    }

    fn extrapolation(&self, axes: &[&Axis], fixed: &[(String, f64)]) -> Vec<Extrapolation> {
        let mut out = Vec::new();
        for m in [self.a, self.b] {
            for (f, &(lo, hi)) in m.factors.iter().zip(&m.ranges) {
                let mut push = |outside: (f64, f64)| {
                    out.push(Extrapolation {
                        model: m.name.clone(),
                        factor: f.clone(),
                        fitted: (lo, hi),
                        outside,
                    })
                };
                if let Some(axis) = axes.iter().find(|a| &a.factor == f) {
                    if axis.lo < lo {
                        push((axis.lo, axis.hi.min(lo)));
                    }
                    if axis.hi > hi {
                        push((axis.lo.max(hi), axis.hi));
                    }
                } else if let Some((_, v)) = fixed.iter().rev().find(|(n, _)| n == f)
                    && (*v < lo || *v > hi)
                {
                    push((*v, *v));
                }
            }
        }
        out
    }
}

/// The fixed values other than `factor`, last one of a name winning.
fn fixed_point(fixed: &[(String, f64)], factor: &str) -> Vec<(String, f64)> {
    fixed.iter().filter(|(n, _)| n != factor).cloned().collect()
}

/// Predicts both models at named points.
struct Evaluator<'m> {
    a: &'m PerformanceModel,
    b: &'m PerformanceModel,
    errors: [Option<ModelError>; 2],
}

/// A model's point (one value per factor, in its order) from named values: the last value of
/// each factor, NaN for one not given.
pub(crate) fn vector(m: &PerformanceModel, point: &[(String, f64)]) -> Vec<f64> {
    m.factors
        .iter()
        .map(|f| {
            point
                .iter()
                .rev()
                .find(|(n, _)| n == f)
                .map_or(f64::NAN, |(_, v)| *v)
        })
        .collect()
}

impl Evaluator<'_> {
    /// Both predictions at a point, compared; an error where a model cannot predict.
    fn at(&self, point: &[(String, f64)]) -> Result<Comparison, CrossoverError> {
        let pa = self.a.try_predict(&vector(self.a, point))?;
        let pb = self.b.try_predict(&vector(self.b, point))?;
        Ok(compare_with(self.a, &pa, self.b, &pb, self.errors))
    }

    /// The fixed values that are factors, plus `p` where it is held.
    fn fixed_report(&self, fixed: &[(String, f64)]) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = Vec::new();
        for f in &self.a.factors {
            if let Some((_, v)) = fixed.iter().rev().find(|(n, _)| n == f) {
                out.push((f.clone(), *v));
            }
        }
        if let Some(p) = self.a.held.get("p").or(self.b.held.get("p"))
            && !self.a.factors.iter().any(|f| f == "p")
        {
            out.push(("p".into(), *p));
        }
        out
    }
}

/// `T_A - T_B` (or `|T_A - T_B|`, or `|T_A - T_B| - hw`) along one factor, for argmin.
struct Difference<'l, 'm> {
    line: &'l Line<'l, 'm>,
    what: Target,
}

#[derive(Clone, Copy)]
enum Target {
    Signed,
    Absolute,
    BandEdge,
}

impl CostFunction for Difference<'_, '_> {
    type Param = f64;
    type Output = f64;

    fn cost(&self, x: &f64) -> Result<f64, Error> {
        let c = self.line.compare(*x);
        let d = c.difference();
        Ok(match self.what {
            Target::Signed => d,
            Target::Absolute => d.abs(),
            Target::BandEdge => d.abs() - c.half_width,
        })
    }
}

/// The samples of both models along one factor.
struct Line<'e, 'm> {
    eval: &'e Evaluator<'m>,
    axis: &'e Axis,
    rest: Vec<(String, f64)>,
    xs: Vec<f64>,
    cs: Vec<Comparison>,
    /// The first point refined between samples where a model cannot predict.
    failure: RefCell<Option<CrossoverError>>,
}

impl<'e, 'm> Line<'e, 'm> {
    fn sample(
        eval: &'e Evaluator<'m>,
        axis: &'e Axis,
        rest: Vec<(String, f64)>,
        samples: usize,
    ) -> Result<Self, CrossoverError> {
        let xs = axis.samples(samples);
        let mut line = Line {
            eval,
            axis,
            rest,
            cs: Vec::with_capacity(xs.len()),
            xs: Vec::new(),
            failure: RefCell::new(None),
        };
        for &x in &xs {
            let c = eval.at(&line.point(x))?;
            line.cs.push(c);
        }
        line.xs = xs;
        Ok(line)
    }

    /// Both models carry intervals (on this line).
    fn intervals(&self) -> bool {
        self.cs.iter().all(|c| c.half_width.is_finite())
    }

    /// The meetings and the sides, or the first refined point where a model cannot predict.
    fn solve(&self) -> Result<(Vec<Meeting>, Vec<Side>), CrossoverError> {
        let mut meetings: Vec<Meeting> = self
            .meetings()
            .into_iter()
            .map(|(x, kind)| {
                let c = self.compare(x);
                Meeting {
                    x,
                    kind,
                    t_a: c.t_a,
                    t_b: c.t_b,
                    band: self.band(x),
                    significant: None,
                }
            })
            .collect();
        let sides = self.sides(&meetings);
        for m in &mut meetings {
            m.significant = self.significant(m, &sides);
        }
        match self.failure.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok((meetings, sides)),
        }
    }

    fn point(&self, x: f64) -> Vec<(String, f64)> {
        let mut point = self.rest.clone();
        point.push((self.axis.factor.clone(), x));
        point
    }

    /// The comparison at `x`; where a model cannot predict, NaN (and the failure is kept).
    fn compare(&self, x: f64) -> Comparison {
        self.eval.at(&self.point(x)).unwrap_or_else(|e| {
            self.failure.borrow_mut().get_or_insert(e);
            Comparison {
                t_a: f64::NAN,
                t_b: f64::NAN,
                half_width: f64::NAN,
                winner: Winner::Tie,
                significant: None,
            }
        })
    }

    fn d(&self, i: usize) -> f64 {
        self.cs[i].difference()
    }

    fn tolerance(&self, a: f64, b: f64) -> f64 {
        1e-13 * (a.abs() + b.abs()).max(self.axis.hi - self.axis.lo)
    }

    /// A root of `what` between `a` and `b`, whose values differ in sign.
    fn root(&self, a: f64, b: f64, what: Target) -> f64 {
        let problem = Difference { line: self, what };
        Executor::new(problem, BrentRoot::new(a, b, self.tolerance(a, b)))
            .configure(|state| state.max_iters(200))
            .run()
            .ok()
            .and_then(|r| r.state().best_param)
            .filter(|x| x.is_finite())
            .unwrap_or(0.5 * (a + b))
    }

    /// Where `d` changes sign between `a` and `b`: a crossing, unless the models do not meet
    /// there — `d` jumps across zero (a division by zero between two samples, say), which is
    /// kept as the line's failure, naming the interval.
    fn crossing(&self, a: f64, b: f64) -> f64 {
        let x = self.root(a, b, Target::Signed);
        let c = self.compare(x);
        let met = c.difference().abs() <= 1e-6 * (c.t_a.abs() + c.t_b.abs());
        if !met && c.t_a.is_finite() && c.t_b.is_finite() {
            let f = &self.axis.factor;
            self.failure
                .borrow_mut()
                .get_or_insert(CrossoverError(format!(
                    "T_A - T_B changes sign between {f}={a} and {f}={b} without the models \
                     meeting (at {f}={x}: T_A = {}, T_B = {}): a division by zero or a jump \
                     there",
                    c.t_a, c.t_b
                )));
        }
        x
    }

    /// The minimum of `|d|` between `a` and `b`.
    fn minimum(&self, a: f64, b: f64) -> f64 {
        let problem = Difference {
            line: self,
            what: Target::Absolute,
        };
        let solver = BrentOpt::new(a, b).set_tolerance(f64::EPSILON.sqrt(), self.tolerance(a, b));
        Executor::new(problem, solver)
            .configure(|state| state.max_iters(200))
            .run()
            .ok()
            .and_then(|r| r.state().best_param)
            .filter(|x| x.is_finite())
            .unwrap_or(0.5 * (a + b))
    }

    /// Every crossing, touch and near touch, in increasing order.
    fn meetings(&self) -> Vec<(f64, Kind)> {
        let n = self.xs.len();
        let d: Vec<f64> = (0..n).map(|i| self.d(i)).collect();
        let mut out = Vec::new();
        if d.iter().all(|&v| v == 0.0) {
            return out;
        }
        // Samples where the models meet exactly: runs of zeros count once, at their middle.
        let mut i = 0;
        while i < n {
            if d[i] != 0.0 {
                i += 1;
                continue;
            }
            let start = i;
            while i < n && d[i] == 0.0 {
                i += 1;
            }
            let before = start.checked_sub(1).map(|j| d[j].signum());
            let after = (i < n).then(|| d[i].signum());
            let kind = match (before, after) {
                (Some(s), Some(t)) if s == t => Kind::Touch,
                _ => Kind::Crossing,
            };
            out.push((self.axis.midpoint(self.xs[start], self.xs[i - 1]), kind));
        }
        for i in 0..n - 1 {
            if d[i] * d[i + 1] < 0.0 {
                out.push((self.crossing(self.xs[i], self.xs[i + 1]), Kind::Crossing));
            }
        }
        for i in 1..n - 1 {
            let same = d[i] != 0.0 && d[i - 1] * d[i] > 0.0 && d[i] * d[i + 1] > 0.0;
            if !(same && d[i].abs() < d[i - 1].abs() && d[i].abs() <= d[i + 1].abs()) {
                continue;
            }
            let (a, b) = (self.xs[i - 1], self.xs[i + 1]);
            let x = self.minimum(a, b);
            let c = self.compare(x);
            let dx = c.difference();
            if dx * d[i] < 0.0 {
                // Two crossings between samples.
                out.push((self.crossing(a, x), Kind::Crossing));
                out.push((self.crossing(x, b), Kind::Crossing));
            } else if dx.abs() <= TOUCH * (c.t_a.abs() + c.t_b.abs()) {
                out.push((x, Kind::Touch));
            } else if dx.abs() <= c.half_width {
                out.push((x, Kind::NearTouch));
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    /// The interval around `x` where `|d| <= hw`; None without intervals.
    fn band(&self, x: f64) -> Option<Band> {
        if !self.compare(x).half_width.is_finite() {
            return None;
        }
        let outside = |i: usize| self.d(i).abs() > self.cs[i].half_width;
        let split = self.xs.partition_point(|&s| s < x);
        let mut lo = (self.axis.lo, true);
        let mut inside = x;
        for j in (0..split).rev() {
            if outside(j) {
                lo = (self.root(self.xs[j], inside, Target::BandEdge), false);
                break;
            }
            inside = self.xs[j];
        }
        let mut hi = (self.axis.hi, true);
        let mut inside = x;
        for j in split..self.xs.len() {
            if self.xs[j] <= x {
                continue;
            }
            if outside(j) {
                hi = (self.root(inside, self.xs[j], Target::BandEdge), false);
                break;
            }
            inside = self.xs[j];
        }
        Some(Band {
            lo: lo.0.min(x),
            hi: hi.0.max(x),
            lo_open: lo.1,
            hi_open: hi.1,
        })
    }

    /// The stretches of one verdict. Without intervals: between crossings, each won by the
    /// faster one. With intervals: where the two cannot be told apart (the runs of samples
    /// where they cannot, and the band of every meeting, edges refined), and between those
    /// stretches, where one wins.
    fn sides(&self, meetings: &[Meeting]) -> Vec<Side> {
        if !self.intervals() {
            let mut cuts = vec![self.axis.lo];
            cuts.extend(
                meetings
                    .iter()
                    .filter(|m| m.kind == Kind::Crossing)
                    .map(|m| m.x),
            );
            cuts.push(self.axis.hi);
            return cuts
                .windows(2)
                .filter(|w| w[1] > w[0])
                .map(|w| self.side(w[0], w[1], None))
                .collect();
        }
        let n = self.xs.len();
        let mut ties: Vec<(f64, f64)> = meetings
            .iter()
            .filter_map(|m| m.band.map(|b| (b.lo, b.hi)))
            .collect();
        let mut i = 0;
        while i < n {
            if self.cs[i].winner != Winner::Tie {
                i += 1;
                continue;
            }
            let start = i;
            while i < n && self.cs[i].winner == Winner::Tie {
                i += 1;
            }
            let lo = match start {
                0 => self.axis.lo,
                s => self.root(self.xs[s - 1], self.xs[s], Target::BandEdge),
            };
            let hi = match i {
                _ if i == n => self.axis.hi,
                e => self.root(self.xs[e - 1], self.xs[e], Target::BandEdge),
            };
            ties.push((lo, hi));
        }
        ties.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, f64)> = Vec::new();
        for (lo, hi) in ties {
            match merged.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        let mut sides = Vec::new();
        let mut cursor = self.axis.lo;
        for (lo, hi) in merged {
            if lo > cursor {
                sides.push(self.side(cursor, lo, Some(true)));
            }
            if hi > lo {
                sides.push(self.tie(lo.max(cursor), hi));
            }
            cursor = cursor.max(hi);
        }
        if cursor < self.axis.hi {
            sides.push(self.side(cursor, self.axis.hi, Some(true)));
        }
        sides
    }

    /// A stretch where the two cannot be told apart at 90%.
    fn tie(&self, from: f64, to: f64) -> Side {
        let at = self.axis.midpoint(from, to);
        let c = self.compare(at);
        Side {
            from,
            to,
            winner: Winner::Tie,
            significant: Some(false),
            at,
            t_a: c.t_a,
            t_b: c.t_b,
            ratio: f64::NAN,
        }
    }

    /// Whether the winner changes at a meeting at 90%: the sides around its band are won by
    /// different implementations.
    fn significant(&self, m: &Meeting, sides: &[Side]) -> Option<bool> {
        if !self.intervals() {
            return None;
        }
        if m.kind != Kind::Crossing {
            return Some(false);
        }
        let Some(k) = sides
            .iter()
            .position(|s| s.winner == Winner::Tie && s.from <= m.x && m.x <= s.to)
        else {
            return Some(true);
        };
        let before = k.checked_sub(1).map(|j| sides[j].winner);
        let after = sides.get(k + 1).map(|s| s.winner);
        Some(matches!(
            (before, after),
            (Some(Winner::A), Some(Winner::B)) | (Some(Winner::B), Some(Winner::A))
        ))
    }

    /// One side won by one implementation: the winner from the sample (or the midpoint) where
    /// `|d|` is largest, the advantage where `T_loser / T_winner` is largest.
    fn side(&self, from: f64, to: f64, significant: Option<bool>) -> Side {
        let mid = self.axis.midpoint(from, to);
        let c = self.compare(mid);
        let mut points: Vec<(f64, f64, f64)> = vec![(mid, c.t_a, c.t_b)];
        points.extend(
            (0..self.xs.len())
                .filter(|&i| self.xs[i] >= from && self.xs[i] <= to)
                .map(|i| (self.xs[i], self.cs[i].t_a, self.cs[i].t_b)),
        );
        let widest = points
            .iter()
            .max_by(|p, q| (p.1 - p.2).abs().total_cmp(&(q.1 - q.2).abs()))
            .expect("the midpoint is a point");
        let winner = if widest.1 < widest.2 {
            Winner::A
        } else if widest.2 < widest.1 {
            Winner::B
        } else {
            Winner::Tie
        };
        let ratio = |&(_, ta, tb): &(f64, f64, f64)| {
            let (best, loser) = if winner == Winner::B {
                (tb, ta)
            } else {
                (ta, tb)
            };
            if best > 0.0 && loser > 0.0 {
                loser / best
            } else {
                f64::NAN
            }
        };
        let best = points
            .iter()
            .filter(|p| ratio(p).is_finite())
            .max_by(|p, q| ratio(p).total_cmp(&ratio(q)))
            .unwrap_or(widest);
        Side {
            from,
            to,
            winner,
            significant: if winner == Winner::Tie {
                significant.map(|_| false)
            } else {
                significant
            },
            at: best.0,
            t_a: best.1,
            t_b: best.2,
            ratio: ratio(best),
        }
    }
}
