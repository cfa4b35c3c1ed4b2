//! Crossover points of two implementations' performance models (docs/comparing.md): where along one
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
//! ([`PerformanceModel::try_predict`](crate::performance::PerformanceModel::try_predict)): a
//! range that touches a point where a model cannot predict (a log of 0, p <= 0) is an error
//! naming it.
//!
//! The parts, one file each: `rule` (who wins at a point), `axis` (a factor's range and its
//! samples), `pair` (two models checked to be comparable), `along` (the crossovers along one
//! factor), `map` (the winner map over two factors), `solver` (the samples of one line and the
//! Brent refinements), `extrapolation` (where a comparison leaves the models' data),
//! `measured` (points both implementations ran, decided by their runs before the models).
//!
//! **Measured points decide first.** Given the points both implementations ran
//! ([`Pair::with_measured`]), the verdict at each comes from its runs ([`measured`]): a side
//! along a factor is split at a measured point whose runs say otherwise than the models, that
//! point a side of its own resting on the runs ([`Basis::Runs`]); the winner map's cell nearest
//! each measured point takes the runs' verdict. The models decide between the measured points.

mod along;
mod axis;
mod extrapolation;
mod map;
pub mod measured;
mod pair;
mod rule;
mod solver;

pub use along::{Band, Crossover, Meeting, MeetingKind, Side};
pub use axis::{Axis, Scale};
pub use extrapolation::Extrapolation;
pub use map::{BoundaryPoint, WinnerMap};
pub use measured::{Basis, MeasuredPoint};
pub use pair::Pair;
pub use rule::{Comparison, ValidatedError, Winner, compare, compare_with};
pub(crate) use solver::vector;

use crate::domain::DomainError;

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
