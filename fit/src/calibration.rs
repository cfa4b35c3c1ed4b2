//! Intervals that keep their promise beyond the data: forward validation of a model's `T_p`
//! (or its first response) along each factor, and the widening it calls for where a prediction
//! leaves the fitted range (docs/modelling.md#beyond-the-data).
//!
//! **Forward validation.** Along a factor with at least [`MIN_LEVELS`] levels, the model is
//! built again (shapes, combination and all) from the runs at its lowest levels only, and asked
//! to predict the mean of the runs at each higher level it was not shown. The miss `e` there
//! holds the noise of those runs and the refit's own uncertainty, both of which its interval
//! already knows (`v`: the variance of its predicted mean plus the noise variance over the runs
//! averaged), and the error of its form away from its data, which no interval of a fit holds.
//! That last part is taken as a relative standard deviation growing with the number of
//! doublings beyond the data, `κ · log2(x / x_max) · T̂`, and `κ` is its method-of-moments
//! estimate over every held-out point:
//!
//! ```text
//! κ² = max(0, Σ (e² − v) / Σ (T̂ · log2(x / x_max))²)
//! ```
//!
//! **Widening.** A prediction at a point outside the model's range adds
//! `(κ_f · log2 r_f · T̂)²` for each factor `f` it leaves (`r_f = x / high`, or `low / x`
//! below the range) to the variance of both its mean and a new run, with the Welch–Satterthwaite
//! degrees of freedom of the sum, each `κ_f` counted with as many degrees of freedom as it
//! had distinct held-out points. Inside the data nothing changes. A model of one factor with
//! enough rival forms ([`crate::rivals::MIN_SPREAD`]) holds their mixture instead.

use crate::fit::Fit;
use crate::observations::Observations;
use crate::performance::PerformanceModel;
use crate::rivals::Rival;
use crate::stats::t_quantile_real;

/// The fewest levels of a factor for forward validation: the refits keep at least three.
pub const MIN_LEVELS: usize = 4;

/// The most refits per factor (the ones holding out the most levels).
pub const MAX_FOLDS: usize = 4;

/// The measured error of a model's form beyond its data along one factor, from forward
/// validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The factor.
    pub factor: String,
    /// `κ`: the relative standard deviation of the form's error per doubling beyond the data.
    pub relative_sd: f64,
    /// The distinct held-out points it was measured on (its degrees of freedom).
    pub points: usize,
    /// The farthest a refit was asked to predict, as `x / x_max` of its data.
    pub ratio: f64,
    /// The rival forms along a model's only factor ([`crate::rivals`]), whose mixture's
    /// interval the prediction's beyond the data also holds; empty for a model of several factors, and in model
    /// files written before they existed (the widening by `κ` alone then).
    pub rivals: Vec<Rival>,
    /// For a response model's second and later responses, each its own quantity: the response
    /// whose rivals these are (no forward validation: `relative_sd` 0). None: `T_p`'s, or the
    /// first response's, the one [`reach`] and the crossover use.
    pub response: Option<String>,
}

impl Calibration {
    /// Rival forms alone, without forward validation (`relative_sd` 0, one point, ratio 1): an
    /// Extra-P series', or a response model's later response's (`response`).
    pub fn rivals_only(factor: &str, rivals: Vec<Rival>, response: Option<String>) -> Calibration {
        Calibration {
            factor: factor.to_string(),
            relative_sd: 0.0,
            points: 1,
            ratio: 1.0,
            rivals,
            response,
        }
    }
}

/// How a prediction's interval stands with respect to the data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reach {
    /// Inside the fitted range of every factor: the fit's own interval.
    Inside,
    /// Beyond the data, widened by forward validation: `sd` is the standard deviation added
    /// (in the prediction's units), with `dof` degrees of freedom.
    Calibrated {
        /// The added standard deviation.
        sd: f64,
        /// Its degrees of freedom.
        dof: f64,
    },
    /// Beyond the data, and the model has no forward validation along a factor it leaves (a
    /// model file written before it existed, or too few levels): the fit's own interval, which
    /// holds no error of its form.
    Uncalibrated,
}

/// A group of runs at one point: the point, the mean measured value, how many runs.
struct Held {
    point: Vec<f64>,
    mean: f64,
    runs: usize,
}

/// The forward validation of `model`, built from runs at `points` that measured `values` (its
/// `T_p`, or its first response): for each factor with enough positive levels, `refit` builds
/// the model again from the rows it is given (indices into `points`) without calibration.
/// A model of one factor also gets its rival forms, `own` among them when given (the fit of
/// its first response: [`crate::rivals::rivals`]).
pub fn forward(
    model: &PerformanceModel,
    points: &[Vec<f64>],
    values: &[f64],
    own: Option<&Fit>,
    refit: impl Fn(&[usize]) -> Option<PerformanceModel>,
) -> Vec<Calibration> {
    let mut out = Vec::new();
    for (f, factor) in model.factors.iter().enumerate() {
        let mut levels: Vec<f64> = points.iter().map(|p| p[f]).collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        if levels.len() < MIN_LEVELS || levels[0] <= 0.0 {
            continue;
        }
        let least = 3.max(levels.len().div_ceil(2));
        let (mut excess, mut scale, mut ratio) = (0.0, 0.0, 1.0_f64);
        let mut held_points: Vec<u64> = Vec::new();
        for kept in (least..levels.len()).take(MAX_FOLDS) {
            let high = levels[kept - 1];
            let rows: Vec<usize> = (0..points.len())
                .filter(|&r| points[r][f] <= high)
                .collect();
            let Some(refit) = refit(&rows) else { continue };
            if refit.factors != model.factors {
                continue;
            }
            for held in held_out(points, values, f, high) {
                // Only the factor held out may leave the refit's range.
                let outside = refit
                    .ranges
                    .iter()
                    .zip(&held.point)
                    .enumerate()
                    .any(|(g, (&(lo, hi), &x))| g != f && (x < lo || x > hi));
                if outside {
                    continue;
                }
                let Ok(predicted) = refit.try_predict(&held.point) else {
                    continue;
                };
                let Some(v) = refit.time_spread(&predicted) else {
                    continue;
                };
                let estimate = predicted.time.value;
                if !(estimate > 0.0 && held.mean > 0.0) {
                    continue;
                }
                // The miss as a log ratio, less the part the refit's interval holds.
                let doublings = (held.point[f] / high).log2();
                let miss = (held.mean / estimate).ln();
                let own = (v.mean + v.noise / held.runs as f64) / (estimate * estimate);
                excess += miss * miss - own;
                scale += doublings * doublings;
                ratio = ratio.max(held.point[f] / high);
                let key = held.point[f].to_bits();
                if !held_points.contains(&key) {
                    held_points.push(key);
                }
            }
        }
        if held_points.is_empty() || scale.is_nan() || scale <= 0.0 {
            continue;
        }
        let rivals = if model.factors.len() == 1 {
            let obs = Observations {
                source: model.provenance.datafile.clone(),
                factors: model.factors.clone(),
                response: "T".into(),
                columns: vec![points.iter().map(|p| p[0]).collect()],
                y: values.to_vec(),
                lines: vec![0; values.len()],
            };
            crate::rivals::rivals(&obs, own)
        } else {
            Vec::new()
        };
        out.push(Calibration {
            factor: factor.clone(),
            relative_sd: (excess / scale).max(0.0).sqrt(),
            points: held_points.len(),
            ratio,
            rivals,
            response: None,
        });
    }
    out
}

/// The runs above `high` in factor `f`, grouped by point (replicates averaged).
fn held_out(points: &[Vec<f64>], values: &[f64], f: usize, high: f64) -> Vec<Held> {
    let mut groups: Vec<Held> = Vec::new();
    for (point, &value) in points.iter().zip(values) {
        if point[f] <= high {
            continue;
        }
        match groups.iter_mut().find(|g| &g.point == point) {
            Some(g) => {
                g.mean += value;
                g.runs += 1;
            }
            None => groups.push(Held {
                point: point.clone(),
                mean: value,
                runs: 1,
            }),
        }
    }
    for g in &mut groups {
        g.mean /= g.runs as f64;
    }
    groups
}

/// The widening at `point` of a prediction `value` of a model over `factors` fitted on
/// `ranges`, calibrated by `calibration` (None: a model without forward validation).
pub fn reach(
    factors: &[String],
    ranges: &[(f64, f64)],
    calibration: Option<&[Calibration]>,
    point: &[f64],
    value: f64,
) -> Reach {
    let mut extrapolated = false;
    let (mut variance, mut denominator) = (0.0, 0.0);
    for ((factor, &(lo, hi)), &x) in factors.iter().zip(ranges).zip(point) {
        if !(x < lo || x > hi) {
            continue;
        }
        extrapolated = true;
        let ratio = if x > hi { x / hi } else { lo / x };
        let found = calibration
            .and_then(|c| (c.iter()).find(|c| &c.factor == factor && c.response.is_none()));
        let Some(c) = found.filter(|_| ratio.is_finite() && ratio > 1.0) else {
            return Reach::Uncalibrated;
        };
        let s2 = (c.relative_sd * ratio.log2()).powi(2);
        variance += s2;
        if s2 > 0.0 {
            denominator += s2 * s2 / c.points as f64;
        }
    }
    if !extrapolated {
        return Reach::Inside;
    }
    let dof = if denominator > 0.0 {
        variance * variance / denominator
    } else {
        f64::INFINITY
    };
    // The log of the truth over the prediction is within ±t·q; its upper end, as a
    // half-width in the prediction's units, is the wider side.
    let t = t_quantile_real(dof);
    let half_width = value.abs() * ((t * variance.sqrt()).exp() - 1.0);
    Reach::Calibrated {
        sd: if variance > 0.0 { half_width / t } else { 0.0 },
        dof,
    }
}

/// Beyond the data of a model of one factor: the rival forms ([`crate::rivals`]) of `T_p` (or
/// the first response; `response` None) or of the response named; None inside the data, for a
/// model of several factors, or without rivals.
pub fn rivals_beyond<'a>(
    factors: &[String],
    ranges: &[(f64, f64)],
    calibration: Option<&'a [Calibration]>,
    point: &[f64],
    response: Option<&str>,
) -> Option<&'a [Rival]> {
    let ([factor], [(lo, hi)], [x]) = (factors, ranges, point) else {
        return None;
    };
    if !(x < lo || x > hi) {
        return None;
    }
    let c =
        (calibration?.iter()).find(|c| &c.factor == factor && c.response.as_deref() == response)?;
    (!c.rivals.is_empty()).then_some(&c.rivals[..])
}

/// A 90% half-width `half_width` with `dof` degrees of freedom, widened by a standard
/// deviation `sd` with `sd_dof` degrees of freedom: the variances add, and the t quantile takes
/// the Welch–Satterthwaite degrees of freedom of the sum.
pub fn widen(half_width: f64, dof: f64, sd: f64, sd_dof: f64) -> f64 {
    if sd.is_nan() || sd <= 0.0 {
        return half_width;
    }
    let own = (half_width / t_quantile_real(dof)).powi(2);
    let own = if own.is_finite() { own } else { 0.0 };
    let variance = own + sd * sd;
    let denominator = if own > 0.0 { own * own / dof } else { 0.0 } + sd.powi(4) / sd_dof;
    crate::stats::welch_half_width(variance, denominator)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(factor: &str, relative_sd: f64, points: usize) -> Calibration {
        Calibration {
            factor: factor.into(),
            relative_sd,
            points,
            ratio: 2.0,
            rivals: Vec::new(),
            response: None,
        }
    }

    #[test]
    fn inside_the_data_nothing_changes() {
        let factors = ["n".to_string(), "p".to_string()];
        let c = [calibration("p", 0.1, 3)];
        let r = reach(
            &factors,
            &[(32.0, 512.0), (2.0, 8.0)],
            Some(&c),
            &[64.0, 8.0],
            1.0,
        );
        assert_eq!(r, Reach::Inside);
    }

    #[test]
    fn widening_grows_with_doublings_and_the_value() {
        let factors = ["p".to_string()];
        let c = [calibration("p", 0.1, 3)];
        // At 4x beyond p = 8: two doublings, 0.1 each on the log scale, of a value of 5; the
        // half-width is the upper end of 5 exp(±t q).
        let t = t_quantile_real(3.0);
        match reach(&factors, &[(2.0, 8.0)], Some(&c), &[32.0], 5.0) {
            Reach::Calibrated { sd, dof } => {
                assert!(
                    (sd * t - 5.0 * ((0.2 * t).exp() - 1.0)).abs() < 1e-12,
                    "{sd}"
                );
                assert!((dof - 3.0).abs() < 1e-12, "{dof}");
            }
            other => panic!("{other:?}"),
        }
        // Below the range, the ratio is low / x: one doubling.
        match reach(&factors, &[(2.0, 8.0)], Some(&c), &[1.0], 5.0) {
            Reach::Calibrated { sd, .. } => {
                assert!(
                    (sd * t - 5.0 * ((0.1 * t).exp() - 1.0)).abs() < 1e-12,
                    "{sd}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn two_factors_add_their_variances_with_welch_dof() {
        let factors = ["n".to_string(), "p".to_string()];
        let c = [calibration("n", 0.1, 2), calibration("p", 0.1, 6)];
        match reach(
            &factors,
            &[(1.0, 2.0), (1.0, 2.0)],
            Some(&c),
            &[4.0, 4.0],
            1.0,
        ) {
            Reach::Calibrated { sd, dof } => {
                // Each adds (0.1 * 1)^2 = 0.01: q^2 = 0.02, dof 0.02^2 / (1e-4/2 + 1e-4/6) = 6.
                assert!((dof - 6.0).abs() < 1e-9, "{dof}");
                let t = t_quantile_real(6.0);
                let half_width = (t * 0.02f64.sqrt()).exp() - 1.0;
                assert!((sd * t - half_width).abs() < 1e-9, "{sd}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn widening_adds_variances() {
        // Infinite degrees of freedom on both sides: the normal quantile, sqrt of the sum.
        let z = t_quantile_real(f64::INFINITY);
        let w = widen(3.0 * z, f64::INFINITY, 4.0, f64::INFINITY);
        assert!((w - 5.0 * z).abs() < 1e-9, "{w}");
        // Nothing to add: unchanged, even without an interval of its own.
        assert_eq!(widen(1.5, 4.0, 0.0, 3.0), 1.5);
        // No interval of its own: the added one alone, at its own degrees of freedom.
        let w = widen(f64::NAN, 4.0, 2.0, 3.0);
        assert!((w - 2.0 * t_quantile_real(3.0)).abs() < 1e-9, "{w}");
    }

    #[test]
    fn without_forward_validation_beyond_the_data_is_uncalibrated() {
        let factors = ["n".to_string(), "p".to_string()];
        let c = [calibration("p", 0.1, 3)];
        let ranges = [(32.0, 512.0), (2.0, 8.0)];
        assert_eq!(
            reach(&factors, &ranges, None, &[64.0, 16.0], 1.0),
            Reach::Uncalibrated
        );
        // n has no calibration (too few levels, say).
        assert_eq!(
            reach(&factors, &ranges, Some(&c), &[1024.0, 4.0], 1.0),
            Reach::Uncalibrated
        );
    }
}
