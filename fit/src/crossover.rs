//! Crossover points of two implementations' performance models (DESIGN §1): where along one
//! factor `T_A - T_B` changes sign, which implementation wins on each side and by how much, and
//! how uncertain each crossing is; over two factors, a winner map and its boundary.
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
//! The 90% half-width of the difference is `sqrt(hw_A^2 + hw_B^2)` (the models are fitted to
//! different runs, so their errors are independent). The *band* of a crossing is the interval
//! around it where `|d| <= sqrt(hw_A^2 + hw_B^2)`: there the two implementations cannot be told
//! apart at 90%. Its edges are the roots of `|d| - hw`, found by walking the samples outward and
//! refining with `BrentRoot`. Models written by hand have no intervals, hence no band.
//!
//! "By how much" an implementation wins on a side (between consecutive crossings, or a crossing
//! and the range's end) is its largest advantage there: the largest `T_loser / T_winner` among
//! the side's samples and its midpoint (the range's ends are samples), with where it occurs.
//! Where no time on the side is positive the ratio is NaN and only the difference is
//! meaningful. The winner of a side is the faster one where `|T_A - T_B|` is largest (a touch
//! inside a side does not change it).

use argmin::core::{CostFunction, Error, Executor};
use argmin::solver::brent::{BrentOpt, BrentRoot};

use crate::performance::PerformanceModel;

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

/// Which implementation is faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Winner {
    /// The first model predicts the lower time.
    A,
    /// The second model predicts the lower time.
    B,
    /// The two predict the same time (or cannot be told apart at 90%, in a winner map).
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
}

/// A stretch of the range between crossings, with one winner.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// Lower end (the range's end or a crossing).
    pub from: f64,
    /// Upper end.
    pub to: f64,
    /// The faster implementation.
    pub winner: Winner,
    /// Where the advantage is largest.
    pub at: f64,
    /// `T_A` there.
    pub t_a: f64,
    /// `T_B` there.
    pub t_b: f64,
    /// The largest `T_loser / T_winner` on the side (NaN where no time there is positive; 1
    /// for a tie).
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
    /// The stretches between crossings, in increasing order.
    pub sides: Vec<Side>,
    /// Both models carry prediction intervals.
    pub intervals: bool,
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
}

/// Which implementation wins over a grid of two factors.
#[derive(Debug, Clone, PartialEq)]
pub struct WinnerMap {
    /// The first model's name (A).
    pub a: String,
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
    /// `cells[j][i]`: the winner at `(us[i], vs[j])`; `Tie` where the two cannot be told apart
    /// at 90% (or, without intervals, where they meet within [`TOUCH`]).
    pub cells: Vec<Vec<Winner>>,
    /// For each level of the second factor, the crossovers along the first.
    pub boundary: Vec<BoundaryPoint>,
    /// Both models carry prediction intervals.
    pub intervals: bool,
    /// Where the grid leaves a model's data.
    pub extrapolation: Vec<Extrapolation>,
}

/// Two models to compare, checked to be over the same factors.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'m> {
    /// The first implementation (A).
    pub a: &'m PerformanceModel,
    /// The second implementation (B).
    pub b: &'m PerformanceModel,
}

impl<'m> Pair<'m> {
    /// Checks that the two models are over the same factors and hold `p` (when held) at the
    /// same value.
    pub fn new(a: &'m PerformanceModel, b: &'m PerformanceModel) -> Result<Self, CrossoverError> {
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
        Ok(Pair { a, b })
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
        let line = Line::sample(&eval, axis, fixed_point(fixed, &axis.factor), samples);
        let meetings: Vec<Meeting> = line
            .meetings()
            .into_iter()
            .map(|(x, kind)| {
                let (t_a, t_b, _) = line.eval.at(&line.point(x));
                Meeting {
                    x,
                    kind,
                    t_a,
                    t_b,
                    band: line.band(x),
                }
            })
            .collect();
        let sides = line.sides(&meetings);
        Ok(Crossover {
            a: self.a.name.clone(),
            b: self.b.name.clone(),
            axis: axis.clone(),
            fixed: eval.fixed_report(fixed),
            samples,
            meetings,
            sides,
            intervals: eval.intervals(&line.point(axis.lo)),
            extrapolation: self.extrapolation(&[axis], fixed),
        })
    }

    /// Which model wins over a `cells x cells` grid of two factors (`u` across, `v` down) with
    /// every other factor fixed, and the crossovers along `u` at each level of `v`.
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
        let mut grid = Vec::with_capacity(vs.len());
        let mut boundary = Vec::new();
        for &y in &vs {
            let mut values = fixed_point(fixed, &u.factor);
            values.push((v.factor.clone(), y));
            let row = us
                .iter()
                .map(|&x| {
                    let mut point = values.clone();
                    point.push((u.factor.clone(), x));
                    let (ta, tb, hw) = eval.at(&point);
                    let d = ta - tb;
                    if d.abs() <= TOUCH * (ta.abs() + tb.abs()) || d.abs() <= hw {
                        Winner::Tie
                    } else if d < 0.0 {
                        Winner::A
                    } else {
                        Winner::B
                    }
                })
                .collect();
            grid.push(row);
            let line = Line::sample(&eval, u, values, SAMPLES);
            boundary.extend(
                line.meetings()
                    .into_iter()
                    .filter(|(_, kind)| *kind != Kind::NearTouch)
                    .map(|(x, kind)| BoundaryPoint { u: x, v: y, kind }),
            );
        }
        let first = {
            let mut point = fixed_point(fixed, &u.factor);
            point.push((v.factor.clone(), v.lo));
            point.push((u.factor.clone(), u.lo));
            point
        };
        Ok(WinnerMap {
            a: self.a.name.clone(),
            b: self.b.name.clone(),
            u: u.clone(),
            v: v.clone(),
            fixed: eval.fixed_report(fixed),
            us,
            vs,
            cells: grid,
            boundary,
            intervals: eval.intervals(&first),
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
}

impl Evaluator<'_> {
    fn vector(m: &PerformanceModel, point: &[(String, f64)]) -> Vec<f64> {
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

    /// `T_A`, `T_B` and the 90% half-width of their difference.
    fn at(&self, point: &[(String, f64)]) -> (f64, f64, f64) {
        let ta = self.a.predict(&Self::vector(self.a, point)).time;
        let tb = self.b.predict(&Self::vector(self.b, point)).time;
        (ta.value, tb.value, ta.half_width.hypot(tb.half_width))
    }

    fn intervals(&self, point: &[(String, f64)]) -> bool {
        self.at(point).2.is_finite()
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

/// `T_A - T_B` (or `|T_A - T_B| - hw`) along one factor, for argmin.
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
        let (ta, tb, hw) = self.line.eval.at(&self.line.point(*x));
        let d = ta - tb;
        Ok(match self.what {
            Target::Signed => d,
            Target::Absolute => d.abs(),
            Target::BandEdge => d.abs() - hw,
        })
    }
}

/// The samples of both models along one factor.
struct Line<'e, 'm> {
    eval: &'e Evaluator<'m>,
    axis: &'e Axis,
    rest: Vec<(String, f64)>,
    xs: Vec<f64>,
    ta: Vec<f64>,
    tb: Vec<f64>,
    hw: Vec<f64>,
}

impl<'e, 'm> Line<'e, 'm> {
    fn sample(
        eval: &'e Evaluator<'m>,
        axis: &'e Axis,
        rest: Vec<(String, f64)>,
        samples: usize,
    ) -> Self {
        let xs = axis.samples(samples);
        let mut line = Line {
            eval,
            axis,
            rest,
            ta: Vec::with_capacity(xs.len()),
            tb: Vec::with_capacity(xs.len()),
            hw: Vec::with_capacity(xs.len()),
            xs: Vec::new(),
        };
        for &x in &xs {
            let (ta, tb, hw) = eval.at(&line.point(x));
            line.ta.push(ta);
            line.tb.push(tb);
            line.hw.push(hw);
        }
        line.xs = xs;
        line
    }

    fn point(&self, x: f64) -> Vec<(String, f64)> {
        let mut point = self.rest.clone();
        point.push((self.axis.factor.clone(), x));
        point
    }

    fn d(&self, i: usize) -> f64 {
        self.ta[i] - self.tb[i]
    }

    fn diff(&self, x: f64) -> (f64, f64, f64) {
        let (ta, tb, hw) = self.eval.at(&self.point(x));
        (ta - tb, ta.abs() + tb.abs(), hw)
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
                out.push((
                    self.root(self.xs[i], self.xs[i + 1], Target::Signed),
                    Kind::Crossing,
                ));
            }
        }
        for i in 1..n - 1 {
            let same = d[i] != 0.0 && d[i - 1] * d[i] > 0.0 && d[i] * d[i + 1] > 0.0;
            if !(same && d[i].abs() < d[i - 1].abs() && d[i].abs() <= d[i + 1].abs()) {
                continue;
            }
            let (a, b) = (self.xs[i - 1], self.xs[i + 1]);
            let x = self.minimum(a, b);
            let (dx, size, hw) = self.diff(x);
            if dx * d[i] < 0.0 {
                // Two crossings between samples.
                out.push((self.root(a, x, Target::Signed), Kind::Crossing));
                out.push((self.root(x, b, Target::Signed), Kind::Crossing));
            } else if dx.abs() <= TOUCH * size {
                out.push((x, Kind::Touch));
            } else if dx.abs() <= hw {
                out.push((x, Kind::NearTouch));
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    /// The interval around `x` where `|d| <= hw`; None without intervals.
    fn band(&self, x: f64) -> Option<Band> {
        let (_, _, hw) = self.diff(x);
        if !hw.is_finite() {
            return None;
        }
        let outside = |i: usize| {
            let d = self.d(i);
            d.abs() > self.hw[i]
        };
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

    /// The stretches between crossings and who wins on each.
    fn sides(&self, meetings: &[Meeting]) -> Vec<Side> {
        let mut cuts = vec![self.axis.lo];
        cuts.extend(
            meetings
                .iter()
                .filter(|m| m.kind == Kind::Crossing)
                .map(|m| m.x),
        );
        cuts.push(self.axis.hi);
        cuts.windows(2)
            .filter(|w| w[1] > w[0])
            .map(|w| self.side(w[0], w[1]))
            .collect()
    }

    /// One side: the winner from the sample (or the midpoint) where `|d|` is largest, the
    /// advantage where `T_loser / T_winner` is largest.
    fn side(&self, from: f64, to: f64) -> Side {
        let mid = self.axis.midpoint(from, to);
        let (ma, mb, _) = self.eval.at(&self.point(mid));
        let mut points: Vec<(f64, f64, f64)> = vec![(mid, ma, mb)];
        points.extend(
            (0..self.xs.len())
                .filter(|&i| self.xs[i] >= from && self.xs[i] <= to)
                .map(|i| (self.xs[i], self.ta[i], self.tb[i])),
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
            at: best.0,
            t_a: best.1,
            t_b: best.2,
            ratio: ratio(best),
        }
    }
}
