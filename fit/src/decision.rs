//! Decision-directed measurement: which runs would most shrink the region where two
//! implementations cannot be told apart.
//!
//! Who wins at a point is decided when the 90% confidence interval of `E[T_A] − E[T_B]`
//! excludes zero ([`crate::crossover::compare`]). Where it does not, the interval straddles
//! zero by `h − |d|` (its half-width `h` beyond the difference `d` of the means). The
//! *undecided measure* of a region is the mean over its points of that straddle relative to
//! the mean time there, `max(0, h − |d|) / ((T_A + T_B) / 2)`: zero where everything is
//! decided.
//!
//! A new run of implementation M at point x adds one observation to each of M's category fits.
//! With the fit's covariance `C` (of its coefficients and parameters), the gradient `g(x)` of
//! its prediction, and the variance `s²(x)` of one observation's noise, the covariance after it
//! is `C − C g gᵀ C / (s² + gᵀ C g)` (a rank-one update: the information of one more weighted
//! observation, at the current estimates). The variance of every prediction shrinks by
//! `(g(y)ᵀ C g(x))² / (s² + gᵀ C g)`; the means are taken to stay where they are (the run is
//! expected to land on the prediction). The gain of a run is how much it lowers the undecided
//! measure; its cost is its predicted wall time `T_p` at x. The suggestions are chosen
//! greedily: the candidate of greatest gain per second, its update applied, then the next.

use nalgebra::{DMatrix, DVector};

use crate::crossover::{CrossoverError, Pair, ValidatedError};
use crate::performance::PerformanceModel;
use crate::stats::welch_half_width;

/// Which implementation a suggested run is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The first model (A).
    A,
    /// The second model (B).
    B,
}

/// One suggested run.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    /// Whose run.
    pub which: Which,
    /// That implementation's name.
    pub name: String,
    /// Where: every factor by name.
    pub point: Vec<(String, f64)>,
    /// Its predicted `T_p` (s).
    pub cost: f64,
    /// How much it lowers the undecided measure.
    pub gain: f64,
    /// The share of the region's points left undecided after it (and the ones before it).
    pub undecided_after: f64,
}

/// The runs that would most shrink the undecided region.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The share of the region's points where the two cannot be told apart at 90%.
    pub undecided: f64,
    /// The undecided measure (mean relative straddle) now.
    pub measure: f64,
    /// The suggested runs, best first.
    pub suggestions: Vec<Suggestion>,
    /// The undecided measure after all of them.
    pub measure_after: f64,
}

/// Per category of one implementation, how much a run lowers the variance of the mean at
/// every point, and the update of the category's covariance.
type Drops = [(Vec<f64>, DMatrix<f64>)];

/// One category fit's state over the points: its covariance, its gradient at every point,
/// the variance of its mean there, and one observation's noise variance there.
struct Category {
    covariance: DMatrix<f64>,
    dof: f64,
    gradients: Vec<DVector<f64>>,
    variance: Vec<f64>,
    noise: Vec<f64>,
}

/// One implementation over the points.
struct Side<'m> {
    model: &'m PerformanceModel,
    categories: Vec<Category>,
    /// `p` at each point.
    p: Vec<f64>,
    /// Predicted mean `T_p` at each point.
    time: Vec<f64>,
    /// The model's validated error: a variance no run removes.
    error: Option<ValidatedError>,
}

impl<'m> Side<'m> {
    fn new(
        model: &'m PerformanceModel,
        points: &[Vec<(String, f64)>],
        error: Option<ValidatedError>,
    ) -> Result<Self, String> {
        if model.evaluator.is_some() {
            // Its placeholder categories have no variance a run could lower.
            return Err(format!(
                "{}: a PACE model's interval is its error on the runs it was built from, which \
                 no single run narrows: suggesting runs needs models of formulas (lca model)",
                model.name
            ));
        }
        let vectors: Vec<Vec<f64>> = points
            .iter()
            .map(|named| crate::crossover::vector(model, named))
            .collect();
        let mut categories = Vec::new();
        for c in &model.categories {
            let covariance = c.fit.covariance().clone();
            if covariance.iter().any(|v| !v.is_finite()) || c.fit.dof == 0 {
                return Err(format!(
                    "{}: category '{}' has no intervals (a model written by hand, or no \
                     degrees of freedom left): nothing tells how much a run would decide",
                    model.name, c.category
                ));
            }
            let (mut gradients, mut variance, mut noise) = (Vec::new(), Vec::new(), Vec::new());
            for v in &vectors {
                let (value, g) = c.fit.gradient(v);
                variance.push((g.transpose() * &covariance * &g)[(0, 0)].max(0.0));
                noise.push(c.fit.noise_variance(value));
                gradients.push(g);
            }
            categories.push(Category {
                covariance,
                dof: c.fit.dof as f64,
                gradients,
                variance,
                noise,
            });
        }
        let p = vectors.iter().map(|v| model.divisor(v)).collect();
        let time = vectors
            .iter()
            .map(|v| model.predict(v).time.value)
            .collect();
        Ok(Side {
            model,
            categories,
            p,
            time,
            error,
        })
    }

    /// Per category, how much one run at point `x` lowers the variance of the mean at every
    /// point, and the update of its covariance.
    fn run_at(&self, x: usize) -> Vec<(Vec<f64>, DMatrix<f64>)> {
        self.categories
            .iter()
            .map(|c| {
                let u = &c.covariance * &c.gradients[x];
                let denominator = c.noise[x] + c.gradients[x].dot(&u);
                if !(denominator > 0.0 && denominator.is_finite()) {
                    let k = c.covariance.nrows();
                    return (vec![0.0; c.gradients.len()], DMatrix::zeros(k, k));
                }
                let drop = c
                    .gradients
                    .iter()
                    .map(|g| g.dot(&u).powi(2) / denominator)
                    .collect();
                (drop, &u * u.transpose() / denominator)
            })
            .collect()
    }
}

/// The undecided measure and share over the first `n` points, with `less[side][category]
/// [point]` taken off the variances (none: as they are).
fn measure(sides: &[Side; 2], n: usize, less: Option<(usize, &Drops)>) -> (f64, f64) {
    let (mut total, mut undecided) = (0.0, 0);
    for y in 0..n {
        let (mut variance, mut denominator) = (0.0, 0.0);
        for (s, side) in sides.iter().enumerate() {
            let p2 = side.p[y] * side.p[y];
            for (c, cat) in side.categories.iter().enumerate() {
                let mut v = cat.variance[y];
                if let Some((who, drops)) = less
                    && who == s
                {
                    v = (v - drops[c].0[y]).max(0.0);
                }
                let s2 = v / p2;
                variance += s2;
                if s2 > 0.0 {
                    denominator += s2 * s2 / cat.dof;
                }
            }
            if let Some(e) = side.error {
                let s2 = (e.relative_sd * side.time[y]).powi(2);
                variance += s2;
                denominator += s2 * s2 / (e.points - 1) as f64;
            }
        }
        let (ta, tb) = (sides[0].time[y], sides[1].time[y]);
        let h = welch_half_width(variance, denominator);
        let straddle = h - (ta - tb).abs();
        if straddle > 0.0 && h.is_finite() {
            undecided += 1;
            let mean = (ta.abs() + tb.abs()) / 2.0;
            if mean > 0.0 {
                total += straddle / mean;
            }
        }
    }
    (total / n.max(1) as f64, undecided as f64 / n.max(1) as f64)
}

/// The `k` runs, among the points `candidates`, that most lower the undecided measure over
/// the points `region` per second of run, chosen greedily (see the module's text). Points
/// name every factor.
pub fn suggest(
    pair: &Pair,
    region: &[Vec<(String, f64)>],
    candidates: &[Vec<(String, f64)>],
    k: usize,
    overhead: f64,
) -> Result<Decision, CrossoverError> {
    let n = region.len();
    let points: Vec<Vec<(String, f64)>> = region.iter().chain(candidates).cloned().collect();
    let mut sides = [
        Side::new(pair.a, &points, pair.errors[0]).map_err(CrossoverError)?,
        Side::new(pair.b, &points, pair.errors[1]).map_err(CrossoverError)?,
    ];
    let (before, share) = measure(&sides, n, None);
    let mut current = before;
    let mut suggestions = Vec::new();
    for _ in 0..k {
        let mut best: Option<(f64, usize, usize, f64, f64)> = None;
        for (s, side) in sides.iter().enumerate() {
            for x in n..points.len() {
                let cost = side.time[x] + overhead;
                if !(cost > 0.0 && cost.is_finite()) {
                    continue;
                }
                let drops = side.run_at(x);
                let (after, undecided) = measure(&sides, n, Some((s, &drops)));
                let score = (current - after) / cost;
                if best.is_none_or(|b| score > b.0) {
                    best = Some((score, s, x, after, undecided));
                }
            }
        }
        let Some((_, s, x, after, undecided)) = best else {
            break;
        };
        let drops = sides[s].run_at(x);
        for (cat, (drop, update)) in sides[s].categories.iter_mut().zip(drops) {
            cat.covariance -= update;
            for (v, d) in cat.variance.iter_mut().zip(drop) {
                *v = (*v - d).max(0.0);
            }
        }
        let side = &sides[s];
        suggestions.push(Suggestion {
            which: if s == 0 { Which::A } else { Which::B },
            name: side.model.name.clone(),
            point: points[x].clone(),
            cost: side.time[x],
            gain: current - after,
            undecided_after: undecided,
        });
        current = after;
    }
    Ok(Decision {
        undecided: share,
        measure: before,
        suggestions,
        measure_after: current,
    })
}

#[cfg(test)]
mod tests {
    use crate::fit::Weighting;
    use crate::fit::fit_weighted;
    use crate::model::Model;
    use crate::observations::Observations;

    fn observations(xs: &[f64], ys: &[f64]) -> Observations {
        Observations {
            source: "test".into(),
            factors: vec!["n".into()],
            response: "pc".into(),
            columns: vec![xs.to_vec()],
            y: ys.to_vec(),
            lines: (1..=xs.len()).collect(),
        }
    }

    /// The rank-one update is a refit's covariance: adding an observation that lies on the
    /// fitted line leaves the coefficients and the residual sum of squares as they are, so
    /// the refit's covariance is the update's times dof / (dof + 1) (its residual variance
    /// has one more degree of freedom).
    #[test]
    fn one_more_run_is_a_rank_one_update_of_the_covariance() {
        let model = Model::parse("1 + n").unwrap();
        let xs = [1.0, 2.0, 3.0, 4.0, 6.0];
        let ys = [2.1, 3.9, 6.2, 7.8, 12.1];
        let fit = fit_weighted(&model, &observations(&xs, &ys), Weighting::Absolute).unwrap();
        let x = 10.0;
        let (value, g) = fit.gradient(&[x]);
        let c = fit.covariance();
        let u = c * &g;
        let updated = c - &u * u.transpose() / (fit.noise_variance(value) + g.dot(&u));
        let mut xs2 = xs.to_vec();
        let mut ys2 = ys.to_vec();
        xs2.push(x);
        ys2.push(value);
        let refit = fit_weighted(&model, &observations(&xs2, &ys2), Weighting::Absolute).unwrap();
        let scale = fit.dof as f64 / refit.dof as f64;
        for (a, b) in refit.covariance().iter().zip(updated.iter()) {
            assert!(
                (a - b * scale).abs() <= 1e-9 * b.abs().max(1e-12),
                "{a} vs {}",
                b * scale
            );
        }
    }
}
