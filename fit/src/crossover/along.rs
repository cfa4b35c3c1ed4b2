//! The crossovers of two models along one factor: where they meet (crossings, touches, near
//! touches), the band around each meeting where the two cannot be told apart, and the sides of
//! one verdict with the largest advantage on each (see [the module](super)).

use super::pair::{compared, fixed_point};
use super::solver::Line;
use super::{
    Axis, Basis, Comparison, CrossoverError, Extrapolation, MeasuredPoint, Pair, SAMPLES,
    ValidatedError, Winner,
};

/// What kind of meeting point a crossover is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeetingKind {
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
    pub kind: MeetingKind,
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

/// A stretch of the range with one verdict of [`compare`](super::compare): A wins, B wins, or (with
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
    /// What the verdict rests on: the models, or (a side of one point, `from == to`) the runs
    /// both implementations made there.
    pub basis: Basis,
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
    /// Each model's validated error, when the intervals hold it ([`Pair::with_validated_errors`]).
    pub errors: [Option<ValidatedError>; 2],
    /// Whether each model's intervals hold its own error on the runs it was built from (a
    /// model computed by an [`Evaluator`](crate::performance::Evaluator): PACE's) rather than
    /// its fitted coefficients' uncertainty.
    pub own_errors: [bool; 2],
    /// Where the range leaves a model's data.
    pub extrapolation: Vec<Extrapolation>,
    /// The points on the range both implementations ran, decided by their runs.
    pub measured: Vec<MeasuredPoint>,
}

impl Pair<'_> {
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
        let measured = self.measured_on(&[axis], &fixed_point(fixed, &axis.factor));
        let sides = by_runs(sides, &measured, &axis.factor, &line);
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
            own_errors: self.own_errors(),
            intervals: line.intervals(),
            extrapolation: self.extrapolation(&[axis], fixed),
            measured,
        })
    }
}

/// The sides with every measured point whose runs say otherwise than the models' side there
/// split out as a side of its own, resting on the runs: the runs decide at a point they measured.
pub(super) fn by_runs(
    mut sides: Vec<Side>,
    measured: &[MeasuredPoint],
    factor: &str,
    line: &Line,
) -> Vec<Side> {
    // The models' side on a part of a split one, its largest advantage found again there.
    let part = |side: &Side, from: f64, to: f64| match side.winner {
        Winner::Tie => line.tie(from, to),
        _ => line.side(from, to, side.significant),
    };
    for m in measured {
        let Some(x) = m.value(factor) else { continue };
        let Some(k) = sides
            .iter()
            .position(|s| s.basis != Basis::Runs && s.from <= x && x <= s.to)
        else {
            continue;
        };
        if sides[k].winner == m.winner {
            continue;
        }
        let side = sides.remove(k);
        let (t_a, t_b) = (m.mean[0], m.mean[1]);
        let ratio = match m.winner {
            Winner::A if t_a > 0.0 => t_b / t_a,
            Winner::B if t_b > 0.0 => t_a / t_b,
            _ => f64::NAN,
        };
        let mut parts = Vec::new();
        if side.from < x {
            parts.push(part(&side, side.from, x));
        }
        parts.push(Side {
            from: x,
            to: x,
            winner: m.winner,
            significant: Some(m.winner != Winner::Tie),
            at: x,
            t_a,
            t_b,
            ratio,
            basis: Basis::Runs,
        });
        if x < side.to {
            parts.push(part(&side, x, side.to));
        }
        for (i, p) in parts.into_iter().enumerate() {
            sides.insert(k + i, p);
        }
    }
    sides
}
