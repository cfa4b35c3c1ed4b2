//! The samples of both models along one factor and the refinements between them (see [the
//! module](super)): every sign change of `d = T_A - T_B` refined with Brent's method (argmin's
//! `BrentRoot`), every local minimum of `|d|` minimised with `BrentOpt`, the edges of a band as
//! the roots of `|d| - hw`.

use std::cell::RefCell;

use argmin::core::{CostFunction, Error, Executor};
use argmin::solver::brent::{BrentOpt, BrentRoot};

use super::{
    Axis, Band, Basis, Comparison, CrossoverError, DifferenceModel, Meeting, MeetingKind, Side,
    TOUCH, ValidatedError, Winner, compare_with,
};
use crate::performance::PerformanceModel;

/// Predicts both models at named points.
pub(super) struct Evaluator<'m> {
    pub(super) a: &'m PerformanceModel,
    pub(super) b: &'m PerformanceModel,
    pub(super) errors: [Option<ValidatedError>; 2],
    pub(super) difference: Option<&'m DifferenceModel>,
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
    pub(super) fn at(&self, point: &[(String, f64)]) -> Result<Comparison, CrossoverError> {
        let pa = self.a.try_predict(&vector(self.a, point))?;
        let pb = self.b.try_predict(&vector(self.b, point))?;
        let separate = compare_with(self.a, &pa, self.b, &pb, self.errors);
        Ok(match self.difference {
            Some(d) => d.decide(separate, point),
            None => separate,
        })
    }

    /// The fixed values that are factors, plus `p` where it is held.
    pub(super) fn fixed_report(&self, fixed: &[(String, f64)]) -> Vec<(String, f64)> {
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
pub(super) struct Line<'e, 'm> {
    eval: &'e Evaluator<'m>,
    axis: &'e Axis,
    rest: Vec<(String, f64)>,
    /// The samples.
    pub(super) xs: Vec<f64>,
    /// The comparison at each sample.
    pub(super) cs: Vec<Comparison>,
    /// The first point refined between samples where a model cannot predict.
    failure: RefCell<Option<CrossoverError>>,
}

impl<'e, 'm> Line<'e, 'm> {
    pub(super) fn sample(
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
    pub(super) fn intervals(&self) -> bool {
        self.cs.iter().all(|c| c.half_width.is_finite())
    }

    /// The meetings and the sides, or the first refined point where a model cannot predict.
    pub(super) fn solve(&self) -> Result<(Vec<Meeting>, Vec<Side>), CrossoverError> {
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
                basis: Basis::Models,
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
    /// kept as the line's failure, naming the interval; where a model steps (computed by a
    /// program, an evaluator, or a formula with `floor` or `ceil`), or where the comparison
    /// passes between the two models and their difference model, a step, and the crossing is
    /// there.
    fn crossing(&self, a: f64, b: f64) -> f64 {
        let x = self.root(a, b, Target::Signed);
        let c = self.compare(x);
        let met = c.difference().abs() <= 1e-6 * (c.t_a.abs() + c.t_b.abs());
        // A model computed by a program (a PACE model's replay deals work in whole units),
        // or by a formula with `floor` or `ceil`, steps: the winner changes at the step. So
        // does the comparison where it passes from the two models to their difference model,
        // whose estimates of T_A - T_B differ.
        let stepped = || {
            self.eval.a.steps()
                || self.eval.b.steps()
                || self.compare(a).basis != self.compare(b).basis
        };
        if !met && stepped() {
            return self.step(a, b);
        }
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

    /// Where `d` steps across zero between `a` and `b`, whose values differ in sign: halved
    /// until the two are within the solver's tolerance (Brent's method, which takes `d` as
    /// smooth, stops anywhere between them at a step).
    fn step(&self, mut a: f64, mut b: f64) -> f64 {
        let sign = |x: f64| self.compare(x).difference().signum();
        let from = sign(a);
        let tolerance = self.tolerance(a, b);
        for _ in 0..200 {
            if (b - a).abs() <= tolerance {
                break;
            }
            let m = 0.5 * (a + b);
            if sign(m) == from {
                a = m;
            } else {
                b = m;
            }
        }
        0.5 * (a + b)
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
    fn meetings(&self) -> Vec<(f64, MeetingKind)> {
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
                (Some(s), Some(t)) if s == t => MeetingKind::Touch,
                _ => MeetingKind::Crossing,
            };
            out.push((self.axis.midpoint(self.xs[start], self.xs[i - 1]), kind));
        }
        for i in 0..n - 1 {
            if d[i] * d[i + 1] < 0.0 {
                out.push((
                    self.crossing(self.xs[i], self.xs[i + 1]),
                    MeetingKind::Crossing,
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
            let c = self.compare(x);
            let dx = c.difference();
            if dx * d[i] < 0.0 {
                // Two crossings between samples.
                out.push((self.crossing(a, x), MeetingKind::Crossing));
                out.push((self.crossing(x, b), MeetingKind::Crossing));
            } else if dx.abs() <= TOUCH * (c.t_a.abs() + c.t_b.abs()) {
                out.push((x, MeetingKind::Touch));
            } else if dx.abs() <= c.half_width {
                out.push((x, MeetingKind::NearTouch));
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
                    .filter(|m| m.kind == MeetingKind::Crossing)
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
    pub(super) fn tie(&self, from: f64, to: f64) -> Side {
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
            basis: self.basis(from, to, c.basis),
        }
    }

    /// Whether the winner changes at a meeting at 90%: the sides around its band are won by
    /// different implementations.
    fn significant(&self, m: &Meeting, sides: &[Side]) -> Option<bool> {
        if !self.intervals() {
            return None;
        }
        if m.kind != MeetingKind::Crossing {
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
    pub(super) fn side(&self, from: f64, to: f64, significant: Option<bool>) -> Side {
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
            basis: self.basis(from, to, c.basis),
        }
    }

    /// What a stretch's verdict rests on: the basis of most of its samples (the midpoint's,
    /// `mid`, on a tie or where it holds no sample).
    fn basis(&self, from: f64, to: f64, mid: Basis) -> Basis {
        let (mut difference, mut models) = (0, 0);
        for i in (0..self.xs.len()).filter(|&i| self.xs[i] >= from && self.xs[i] <= to) {
            match self.cs[i].basis {
                Basis::Difference => difference += 1,
                _ => models += 1,
            }
        }
        match difference.cmp(&models) {
            std::cmp::Ordering::Greater => Basis::Difference,
            std::cmp::Ordering::Less => Basis::Models,
            std::cmp::Ordering::Equal => mid,
        }
    }
}
