//! Measured points decide first (docs/comparing.md#measured-points-decide-first): where both
//! implementations have runs at the same point, who is faster there comes from those runs, not
//! from the models. The 90% confidence interval of `mean_A - mean_B` from the replicates:
//! a paired t when both implementations' runs there carry the same replicate indices (`lca
//! study` runs replicate `r` of every implementation in one round, so the pairs share the
//! machine's state), else Welch's t with the Welch–Satterthwaite degrees of freedom. A winner
//! where the interval excludes zero, as [`compare`](super::compare) names one from models.
//! Points where either side has fewer than two runs (or the pairs fewer than two) are left to
//! the models.

use super::Winner;
use crate::stats::t_quantile_real;

/// One run of an implementation: where, what it measured, and its replicate index if known.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// One value per factor, in the pair's factor order.
    pub point: Vec<f64>,
    /// The measured `T_p` (or response).
    pub value: f64,
    /// The replicate (round) the run belongs to, when the datafile says.
    pub replicate: Option<u64>,
}

/// What a statement rests on: the models' predictions, or runs both implementations made at
/// the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Basis {
    /// The two models (between the measured points).
    #[default]
    Models,
    /// The runs at a measured point ([`MeasuredPoint`]).
    Runs,
    /// The difference model of the two implementations
    /// ([`DifferenceModel`](super::difference::DifferenceModel)), where its interval is
    /// narrower than the two models'.
    Difference,
}

impl Basis {
    /// `models`, `runs` or `difference model`.
    pub fn name(self) -> &'static str {
        match self {
            Basis::Models => "models",
            Basis::Runs => "runs",
            Basis::Difference => "difference model",
        }
    }
}

/// Which test decided a measured point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    /// Paired t on the differences of runs with the same replicate index.
    Paired,
    /// Welch's t on the two sets of replicates.
    Welch,
}

impl Test {
    /// `paired t` or `Welch t`.
    pub fn name(self) -> &'static str {
        match self {
            Test::Paired => "paired t",
            Test::Welch => "Welch t",
        }
    }
}

/// A point both implementations ran, and who is faster there by their runs.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPoint {
    /// Every factor by name.
    pub point: Vec<(String, f64)>,
    /// The runs of A and of B there.
    pub runs: [usize; 2],
    /// The mean measured value of A and of B.
    pub mean: [f64; 2],
    /// Which test.
    pub test: Test,
    /// Its degrees of freedom.
    pub dof: f64,
    /// Half-width of the 90% confidence interval of `mean_A - mean_B`.
    pub half_width: f64,
    /// A or B where that interval excludes zero, else `Tie`.
    pub winner: Winner,
    /// What the models (or the difference model) would have called at the point, had the runs
    /// not decided it; set by the comparison that uses the point, `None` before or where a
    /// model cannot predict there. Where it names the other implementation than the runs do,
    /// the verdict says so.
    pub models: Option<Winner>,
}

impl MeasuredPoint {
    /// `mean_A - mean_B`.
    pub fn difference(&self) -> f64 {
        self.mean[0] - self.mean[1]
    }

    /// The value of a factor.
    pub fn value(&self, factor: &str) -> Option<f64> {
        self.point
            .iter()
            .find(|(f, _)| f == factor)
            .map(|(_, v)| *v)
    }

    /// Whether the point lies where every `fixed` value says (to 1e-9 relative).
    pub fn at(&self, fixed: &[(String, f64)]) -> bool {
        fixed.iter().all(|(f, v)| match self.value(f) {
            Some(x) => same(x, *v),
            None => true,
        })
    }
}

pub(super) fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn mean_and_variance(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let variance = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance)
}

/// The points both `a` and `b` ran (over `factors`), each decided by its runs; in the order
/// of the points, sorted by factor values.
pub fn measured_points(factors: &[String], a: &[Run], b: &[Run]) -> Vec<MeasuredPoint> {
    let mut points: Vec<Vec<f64>> = a.iter().map(|r| r.point.clone()).collect();
    points.sort_by(|x, y| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal));
    points.dedup_by(|x, y| x.iter().zip(y.iter()).all(|(u, v)| same(*u, *v)));
    let at = |runs: &[Run], point: &[f64]| -> Vec<Run> {
        runs.iter()
            .filter(|r| r.point.iter().zip(point).all(|(u, v)| same(*u, *v)))
            .filter(|r| r.value.is_finite())
            .cloned()
            .collect()
    };
    points
        .iter()
        .filter_map(|point| {
            let (ra, rb) = (at(a, point), at(b, point));
            let mut m = decide(&ra, &rb)?;
            m.point = factors.iter().cloned().zip(point.iter().copied()).collect();
            Some(m)
        })
        .collect()
}

/// Who is faster by the runs `a` and `b` at one point; None with too few of them.
pub fn decide(a: &[Run], b: &[Run]) -> Option<MeasuredPoint> {
    let values = |runs: &[Run]| runs.iter().map(|r| r.value).collect::<Vec<_>>();
    let (va, vb) = (values(a), values(b));
    if va.len() < 2 || vb.len() < 2 {
        return None;
    }
    let (ma, sa) = mean_and_variance(&va);
    let (mb, sb) = mean_and_variance(&vb);
    let (test, dof, se2) = match paired(a, b) {
        Some(d) => {
            let (_, sd) = mean_and_variance(&d);
            (Test::Paired, d.len() as f64 - 1.0, sd / d.len() as f64)
        }
        None => {
            let (qa, qb) = (sa / va.len() as f64, sb / vb.len() as f64);
            let se2 = qa + qb;
            let denominator = qa * qa / (va.len() as f64 - 1.0) + qb * qb / (vb.len() as f64 - 1.0);
            let dof = if denominator > 0.0 {
                se2 * se2 / denominator
            } else {
                (va.len() + vb.len() - 2) as f64
            };
            (Test::Welch, dof, se2)
        }
    };
    let half_width = t_quantile_real(dof) * se2.sqrt();
    let d = ma - mb;
    // A NaN half-width (no spread and no degrees of freedom) decides nothing.
    let significant = d.abs() > half_width;
    let winner = if !significant {
        Winner::Tie
    } else if d < 0.0 {
        Winner::A
    } else {
        Winner::B
    };
    Some(MeasuredPoint {
        point: Vec::new(),
        runs: [va.len(), vb.len()],
        mean: [ma, mb],
        test,
        dof,
        half_width,
        winner,
        models: None,
    })
}

/// The differences `a - b` of the runs with the same replicate index, when every run on both
/// sides has one, each index once per side, the same indices on both, at least two of them.
fn paired(a: &[Run], b: &[Run]) -> Option<Vec<f64>> {
    let pairs = replicate_pairs(a, b)?;
    (pairs.len() >= 2).then(|| pairs.iter().map(|(x, y)| x - y).collect())
}

/// The values `(a, b)` of the runs with the same replicate index, in index order, when every
/// run on both sides has one, each index once per side, and both sides have the same indices.
pub(super) fn replicate_pairs(a: &[Run], b: &[Run]) -> Option<Vec<(f64, f64)>> {
    let indices = |runs: &[Run]| -> Option<Vec<u64>> {
        let mut r: Vec<u64> = runs.iter().map(|r| r.replicate).collect::<Option<_>>()?;
        r.sort_unstable();
        let n = r.len();
        r.dedup();
        (r.len() == n).then_some(r)
    };
    let (ia, ib) = (indices(a)?, indices(b)?);
    if ia != ib {
        return None;
    }
    let value = |runs: &[Run], i: u64| {
        runs.iter()
            .find(|r| r.replicate == Some(i))
            .map(|r| r.value)
    };
    ia.iter()
        .map(|&i| Some((value(a, i)?, value(b, i)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(values: &[f64], replicates: bool) -> Vec<Run> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| Run {
                point: vec![2.0],
                value,
                replicate: replicates.then_some(i as u64 + 1),
            })
            .collect()
    }

    #[test]
    fn welch_matches_a_hand_computation() {
        // a: mean 2, variance 1 (n = 3); b: mean 5, variance 4 (n = 3).
        // se² = 1/3 + 4/3 = 5/3; dof = (5/3)² / ((1/3)²/2 + (4/3)²/2) = 25/9 / (17/18) = 50/17.
        let m = decide(
            &runs(&[1.0, 2.0, 3.0], false),
            &runs(&[3.0, 5.0, 7.0], false),
        )
        .unwrap();
        assert_eq!(m.test, Test::Welch);
        assert!((m.dof - 50.0 / 17.0).abs() < 1e-12);
        let t = t_quantile_real(50.0 / 17.0);
        assert!((m.half_width - t * (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        // |d| = 3 against t(2.94 dof) * 1.29 = 3.06: the interval holds zero.
        assert!(t * (5.0f64 / 3.0).sqrt() > 3.0);
        assert_eq!(m.winner, Winner::Tie);
    }

    #[test]
    fn pairing_removes_the_shared_noise() {
        // The rounds move both together; B is always 0.1 slower. Welch cannot tell, paired can.
        let a = [1.0, 2.0, 3.0];
        let b = [1.1, 2.1, 3.12];
        let welch = decide(&runs(&a, false), &runs(&b, false)).unwrap();
        assert_eq!(welch.winner, Winner::Tie);
        let paired = decide(&runs(&a, true), &runs(&b, true)).unwrap();
        assert_eq!(paired.test, Test::Paired);
        assert_eq!(paired.dof, 2.0);
        assert_eq!(paired.winner, Winner::A);
    }

    #[test]
    fn one_run_is_left_to_the_models() {
        assert!(decide(&runs(&[1.0], false), &runs(&[3.0, 5.0], false)).is_none());
    }
}
