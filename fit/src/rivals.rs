//! Rival forms: the error of a model's form beyond its data, as the spread of the forms that
//! fit the data as well and part beyond it (docs/modelling.md#beyond-the-data).
//!
//! Inside the data every form that fits predicts about the same; beyond it they part, and
//! nothing in the data says which is right. So along a model's only factor the candidates are
//! its own form, the [search](crate::search)'s best forms by leave-one-out error (a constant
//! plus up to two terms `x^i log2(x)^j`), and the broken lines the search cannot write, a
//! threshold `1 + max(x-θ,0)` and a change of slope `1 + x + max(x-θ,0)` (a plateau when the
//! slope falls to zero). Where every measured value is positive, a form that reaches zero
//! within ten doublings of the data, either way, is dropped: it is no time.
//!
//! The rivals are the candidates the data cannot tell from the best: by the one-standard-error
//! rule, a leave-one-out error `CV ≤ CV_best · (1 + 1/√n)` over `n` runs (an RMS error over `n`
//! left-out runs has a relative standard error of about `1/√(2n)`, and the difference of two
//! about `1/√n`). They are weighted equally: the data give no reason to prefer one.
//!
//! Beyond the data their mixture is formed: each rival's predictive distribution normal with its
//! own 90% interval, the mixture's median, and its 5% and 95% quantiles made symmetric about the
//! median (the wider side). A model's interval there is widened to hold it, its value staying
//! the model's own ([`hold`]: the one rule, for `lca model`, `--search --predict` and Extra-P
//! tables alike). With at least [`MIN_SPREAD`] rivals their spread is the measured error of
//! form, and a model's interval is its own widened to hold them; with fewer, the data single
//! out one form (or none), nothing measures how wrong it may be, and forward validation's
//! widening ([`crate::calibration`]) is kept too.

use crate::fit::{Fit, Prediction, Weighting, fit_weighted};
use crate::model::Model;
use crate::observations::Observations;
use crate::stats::t_quantile;

/// How many of the search's best forms (by leave-one-out error) are candidates.
pub const CANDIDATES: usize = 40;

/// The most rivals kept (the lowest leave-one-out errors), so that a model file stays short.
pub const MAX_RIVALS: usize = 16;

/// The fewest levels of the factor for rivals: a constant plus two terms needs more than 4.
pub const MIN_LEVELS: usize = 5;

/// The fewest rivals whose spread stands for the error of form beyond the data, without
/// forward validation's widening (docs/modelling.md#beyond-the-data).
pub const MIN_SPREAD: usize = 2;

/// One rival form: its fit to all the data and its weight in the mixture.
#[derive(Debug, Clone)]
pub struct Rival {
    /// The form fitted to every run.
    pub fit: Fit,
    /// Its weight in the mixture (the rivals' weights sum to 1).
    pub weight: f64,
}

impl PartialEq for Rival {
    fn eq(&self, other: &Self) -> bool {
        let values = |f: &Fit| -> Vec<u64> {
            f.coefficients
                .iter()
                .chain(&f.parameters)
                .map(|e| e.value.to_bits())
                .collect()
        };
        self.weight == other.weight
            && self.fit.model.text() == other.fit.model.text()
            && values(&self.fit) == values(&other.fit)
            && self.fit.residual_sd.to_bits() == other.fit.residual_sd.to_bits()
    }
}

/// The rival forms of `obs` (one factor, replicates kept), `own` the model's own form fitted
/// to them when it has one. Empty with fewer than [`MIN_LEVELS`] levels, a level that is not
/// positive, or no candidate with a finite leave-one-out error.
pub fn rivals(obs: &Observations, own: Option<&Fit>) -> Vec<Rival> {
    if obs.factors.len() != 1 {
        return Vec::new();
    }
    let levels = obs.levels(0);
    if levels.len() < MIN_LEVELS || levels[0] <= 0.0 {
        return Vec::new();
    }
    let weighting = if obs.y.iter().all(|&y| y != 0.0) {
        Weighting::Relative
    } else {
        Weighting::Absolute
    };
    let x = &obs.factors[0];
    let broken = [
        format!("1 + max({x}-$theta,0)"),
        format!("1 + {x} + max({x}-$theta,0)"),
    ]
    .into_iter()
    .filter_map(|text| fit_weighted(&Model::parse(&text).ok()?, obs, weighting).ok());
    let positive = obs.y.iter().all(|&y| y > 0.0);
    let (low, high) = (levels[0], levels[levels.len() - 1]);
    let mut candidates: Vec<Fit> = Vec::new();
    for fit in own
        .into_iter()
        .cloned()
        .chain(broken)
        .chain(crate::search::search(obs, 0, CANDIDATES))
    {
        if !fit.cv.is_finite() {
            continue;
        }
        let stays_positive = (1..=10).all(|k| {
            let r = f64::from(1u32 << k);
            fit.predict(&[high * r]).value > 0.0 && fit.predict(&[low / r]).value > 0.0
        });
        if positive && !stays_positive {
            continue;
        }
        // The same function written twice (`1/p`, `p^(-1)`) counts once.
        let same = |c: &Fit| {
            [low, high, 8.0 * high].iter().all(|&v| {
                let (a, b) = (c.predict(&[v]).value, fit.predict(&[v]).value);
                (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
            })
        };
        if !candidates.iter().any(same) {
            candidates.push(fit);
        }
    }
    let best = candidates
        .iter()
        .map(|f| f.cv)
        .fold(f64::INFINITY, f64::min);
    let bound = best * (1.0 + 1.0 / (obs.len() as f64).sqrt());
    candidates.retain(|f| f.cv <= bound);
    candidates.sort_by(|a, b| a.cv.total_cmp(&b.cv));
    candidates.truncate(MAX_RIVALS);
    let weight = 1.0 / candidates.len() as f64;
    candidates
        .into_iter()
        .map(|fit| Rival { fit, weight })
        .collect()
}

/// The rivals' mixture at `point`: the median and the 90% interval of a new run (and of the
/// mean), symmetric about the median on its wider side; None without rivals or where a rival
/// has no finite prediction.
pub fn mixture(rivals: &[Rival], point: &[f64]) -> Option<Prediction> {
    if rivals.is_empty() {
        return None;
    }
    let predictions: Vec<(f64, Prediction, f64)> = rivals
        .iter()
        .map(|r| (r.weight, r.fit.predict(point), t_quantile(r.fit.dof)))
        .collect();
    if predictions
        .iter()
        .any(|(_, p, t)| !(p.value.is_finite() && p.half_width.is_finite() && t.is_finite()))
    {
        return None;
    }
    let members = |width: fn(&Prediction) -> f64| -> Vec<(f64, f64, f64)> {
        predictions
            .iter()
            .map(|(w, p, t)| (*w, p.value, width(p) / t))
            .collect()
    };
    let new_run = members(|p| p.half_width);
    let median = quantile(&new_run, 0.5);
    let half = |m: &[(f64, f64, f64)]| {
        let (lo, hi) = (quantile(m, 0.05), quantile(m, 0.95));
        (median - lo).max(hi - median)
    };
    let floor = rivals
        .iter()
        .map(|r| r.fit.floor())
        .fold(f64::INFINITY, f64::min);
    Some(Prediction::bounded(
        median,
        half(&new_run),
        half(&members(|p| p.mean_half_width)),
        floor,
    ))
}

/// `own`'s value with its intervals (of a new run and of the mean) widened, each until it holds
/// the same interval of `mixture` (the rivals' [`mixture`] at the same point), its lower end
/// held at `floor`: beyond the data, the prediction keeps its value and covers whatever the
/// rival forms cover (docs/modelling.md#beyond-the-data). An interval that is NaN (none) stays
/// NaN: holding the rivals does not invent one.
pub fn hold(own: &Prediction, mixture: &Prediction, floor: f64) -> Prediction {
    let widen = |h: f64, m: f64| {
        if h.is_nan() {
            return f64::NAN;
        }
        h.max(own.value - (mixture.value - m))
            .max(mixture.value + m - own.value)
    };
    Prediction::bounded(
        own.value,
        widen(own.half_width, mixture.half_width),
        widen(own.mean_half_width, mixture.mean_half_width),
        floor,
    )
}

/// The `q` quantile of a mixture of normals `(weight, mean, sd)` (bisection on its CDF).
fn quantile(members: &[(f64, f64, f64)], q: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    let cdf = |x: f64| -> f64 {
        members
            .iter()
            .map(|&(w, mu, sd)| {
                if sd > 0.0 {
                    w * Normal::new(mu, sd).map_or(0.5, |n| n.cdf(x))
                } else if x >= mu {
                    w
                } else {
                    0.0
                }
            })
            .sum()
    };
    let spread = members.iter().map(|m| m.2).fold(0.0, f64::max);
    let mut lo = members.iter().map(|m| m.1).fold(f64::INFINITY, f64::min) - 10.0 * spread;
    let mut hi = members
        .iter()
        .map(|m| m.1)
        .fold(f64::NEG_INFINITY, f64::max)
        + 10.0 * spread;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < q {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * mid.abs().max(1e-300) {
            break;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holding_keeps_the_value_and_widens_to_the_far_side() {
        let own = Prediction::bounded(10.0, 1.0, 0.5, f64::NEG_INFINITY);
        // The mixture 14 ± 3 (mean ± 2): its upper ends 17 and 16 are 7 and 6 away.
        let mix = Prediction::bounded(14.0, 3.0, 2.0, f64::NEG_INFINITY);
        let held = hold(&own, &mix, f64::NEG_INFINITY);
        assert_eq!(
            (held.value, held.half_width, held.mean_half_width),
            (10.0, 7.0, 6.0)
        );
        assert_eq!((held.lower, held.upper), (3.0, 17.0));
        // A mixture inside the interval changes nothing; a floor cuts the lower end.
        let inside = Prediction::bounded(10.2, 0.3, 0.1, f64::NEG_INFINITY);
        assert_eq!(hold(&own, &inside, f64::NEG_INFINITY), own);
        assert_eq!(hold(&own, &mix, 0.0).lower, 3.0);
        assert_eq!(
            hold(&own, &Prediction::bounded(1.0, 9.0, 9.0, 0.0), 5.0).lower,
            5.0
        );
        // No interval of its own: none held.
        let bare = Prediction::bounded(10.0, f64::NAN, f64::NAN, f64::NEG_INFINITY);
        assert!(hold(&bare, &mix, f64::NEG_INFINITY).half_width.is_nan());
    }

    #[test]
    fn quantiles_of_one_normal_and_of_two() {
        let z = 1.6448536269514722;
        let one = [(1.0, 10.0, 2.0)];
        assert!((quantile(&one, 0.95) - (10.0 + 2.0 * z)).abs() < 1e-9);
        assert!((quantile(&one, 0.5) - 10.0).abs() < 1e-9);
        // Two far apart, weights 0.7 and 0.3: the median and the 5% quantile are the lower
        // one's 0.5/0.7 and 0.05/0.7 points, the 95% quantile the upper one's 0.65/0.3 - 1.
        let two = [(0.7, 0.0, 1.0), (0.3, 100.0, 1.0)];
        assert!((quantile(&two, 0.5) - 0.5659488219328594).abs() < 1e-6);
        assert!((quantile(&two, 0.05) - (-1.4652337926855223)).abs() < 1e-6);
        assert!((quantile(&two, 0.95) - (100.0 + 0.967421566101701)).abs() < 1e-6);
    }
}
