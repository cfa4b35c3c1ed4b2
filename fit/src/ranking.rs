//! Ranking candidate models of one response against one factor, best first.

use std::cmp::Ordering;
use std::str::FromStr;

use crate::fit::{Fit, FitError, Prediction, Weighting, fit_weighted};
use crate::model::Model;
use crate::observations::Observations;
use crate::rivals::Rival;
use crate::stats::t_quantile;

/// The statistic that orders candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum RankBy {
    /// R², highest first (the paper's choice).
    #[default]
    R2,
    /// Adjusted R², highest first.
    AdjR2,
    /// Leave-one-out cross-validated error, lowest first.
    Cv,
}

impl FromStr for RankBy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "r2" => Ok(RankBy::R2),
            "adj-r2" => Ok(RankBy::AdjR2),
            "cv" => Ok(RankBy::Cv),
            _ => Err(format!("unknown ranking '{s}' (expected r2, adj-r2 or cv)")),
        }
    }
}

/// Fitted candidates best first, and the candidates that could not be fitted, with why.
#[derive(Debug, Clone, Default)]
pub struct Ranking {
    /// Fits, best first.
    pub fits: Vec<Fit>,
    /// Candidates that could not be fitted to these observations.
    pub skipped: Vec<FitError>,
    /// The rival forms of the observations ([`crate::rivals`]), and the factor's measured
    /// range: beyond it every interval also holds their mixture's. Empty: not calibrated.
    pub rivals: Vec<Rival>,
    /// The range of the factor in the observations, where there are rivals.
    pub range: Option<(f64, f64)>,
}

impl Ranking {
    /// Finds the rival forms of the (one-factor) observations the fits were fitted to, so that
    /// [`Ranking::predict`] calibrates its intervals beyond them.
    pub fn calibrate(&mut self, obs: &Observations) {
        self.rivals = crate::rivals::rivals(obs, None);
        let levels = obs.levels(0);
        self.range = (!self.rivals.is_empty()).then(|| (levels[0], levels[levels.len() - 1]));
    }

    /// Each fit's prediction at `point` ([`predict_with_selection`]); beyond the measured range
    /// of a calibrated ranking, each interval is widened to hold the rival forms' 90% interval
    /// there too (docs/modelling.md#beyond-the-data): which of the forms that fit the data
    /// holds beyond it, the data cannot tell.
    pub fn predict(&self, point: &[f64]) -> Vec<Prediction> {
        let own = predict_with_selection(&self.fits, point);
        let beyond = match (self.range, point) {
            (Some((lo, hi)), [x]) => *x < lo || *x > hi,
            _ => false,
        };
        let Some(mix) = beyond
            .then(|| crate::rivals::mixture(&self.rivals, point))
            .flatten()
        else {
            return own;
        };
        self.fits
            .iter()
            .zip(own)
            .map(|(fit, p)| crate::rivals::hold(&p, &mix, fit.floor()))
            .collect()
    }
}

/// Fits every model and orders the fits. Ties (and NaN statistics, which sort last) fall
/// back to fewer fitted quantities, then to the order given.
pub fn rank(obs: &Observations, models: &[Model], by: RankBy, weighting: Weighting) -> Ranking {
    let mut ranking = Ranking::default();
    for model in models {
        match fit_weighted(model, obs, weighting) {
            Ok(fit) => ranking.fits.push(fit),
            Err(e) => ranking.skipped.push(e),
        }
    }
    sort(&mut ranking.fits, by);
    ranking
}

/// Orders fits best first by `by` (stable).
pub fn sort(fits: &mut [Fit], by: RankBy) {
    fits.sort_by(|a, b| {
        let order = match by {
            RankBy::R2 => descending(a.r2, b.r2),
            RankBy::AdjR2 => descending(a.adj_r2, b.adj_r2),
            RankBy::Cv => descending(-a.cv, -b.cv),
        };
        order.then(a.model.fitted_count().cmp(&b.model.fitted_count()))
    });
}

/// How much each fit deserves to be believed, given the others fitted to the same
/// observations: pseudo-Bayesian model averaging weights from leave-one-out prediction (Yao,
/// Vehtari, Simpson and Gelman, "Using stacking to average Bayesian predictive distributions",
/// 2018, eq. 8), with each model's leave-one-out predictive density taken as Gaussian with the
/// variance of its leave-one-out errors: `w_m ∝ exp(elpd_m)` with
/// `elpd_m = −n/2 · ln(2π e CV_m²)`, so `w_m ∝ CV_m^(−n)`. Models the data cannot tell apart
/// share the weight; one whose leave-one-out error is clearly larger gets almost none. A fit
/// without a finite error gets none; exact fits (CV = 0) share all of it.
pub fn selection_weights(fits: &[Fit]) -> Vec<f64> {
    let usable = |f: &Fit| f.cv.is_finite() && f.cv >= 0.0;
    if fits.iter().any(|f| usable(f) && f.cv == 0.0) {
        let exact = fits.iter().filter(|f| f.cv == 0.0).count() as f64;
        return fits
            .iter()
            .map(|f| if f.cv == 0.0 { 1.0 / exact } else { 0.0 })
            .collect();
    }
    let log_w: Vec<f64> = fits
        .iter()
        .map(|f| {
            if usable(f) {
                -(f.n as f64) * f.cv.ln()
            } else {
                f64::NEG_INFINITY
            }
        })
        .collect();
    let max = log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return vec![0.0; fits.len()];
    }
    let w: Vec<f64> = log_w.iter().map(|l| (l - max).exp()).collect();
    let total: f64 = w.iter().sum();
    w.iter().map(|v| v / total).collect()
}

/// Each fit's prediction at `point` with model-selection uncertainty in its intervals: the
/// variance of the fit's own prediction plus the weighted spread of the other fits'
/// predictions about it, `Σ_j w_j (μ_j − μ_m)²` with the weights of [`selection_weights`]
/// (Burnham and Anderson's unconditional variance, *Model Selection and Multimodel
/// Inference*, 2002, §4.3, about the model's own prediction instead of the average). Where
/// the data cannot tell apart models that disagree far from the data, every interval there
/// is as wide as their disagreement.
pub fn predict_with_selection(fits: &[Fit], point: &[f64]) -> Vec<Prediction> {
    let own: Vec<Prediction> = fits.iter().map(|f| f.predict(point)).collect();
    let weights = selection_weights(fits);
    fits.iter()
        .zip(&own)
        .map(|(fit, p)| {
            let spread: f64 = own
                .iter()
                .zip(&weights)
                .filter(|(q, w)| **w > 0.0 && q.value.is_finite())
                .map(|(q, w)| w * (q.value - p.value).powi(2))
                .sum();
            let t = t_quantile(fit.dof);
            let widen = |half_width: f64| {
                if t.is_finite() && half_width.is_finite() {
                    t * ((half_width / t).powi(2) + spread).sqrt()
                } else {
                    half_width
                }
            };
            Prediction::bounded(
                p.value,
                widen(p.half_width),
                widen(p.mean_half_width),
                fit.floor(),
            )
        })
        .collect()
}

/// Higher first; NaN last.
fn descending(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => b.total_cmp(&a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "clap")]
    #[test]
    fn the_command_line_names_are_the_parsed_ones() {
        use clap::ValueEnum;
        for by in RankBy::value_variants() {
            let name = by.to_possible_value().expect("not skipped");
            assert_eq!(name.get_name().parse::<RankBy>(), Ok(*by));
        }
    }

    fn obs(y: Vec<f64>) -> Observations {
        Observations::new(
            "t",
            vec!["p".into()],
            "li",
            vec![vec![2.0, 4.0, 6.0, 8.0]],
            y,
        )
        .unwrap()
    }

    #[test]
    fn exact_line_ranks_first_and_failures_are_kept() {
        let models: Vec<Model> = ["1", "p", "1 + p", "p + 2*p"]
            .iter()
            .map(|m| Model::parse(m).unwrap())
            .collect();
        let ranking = rank(
            &obs(vec![3.0, 5.0, 7.0, 9.0]),
            &models,
            RankBy::Cv,
            Weighting::Absolute,
        );
        assert_eq!(ranking.fits[0].model.text(), "1 + p");
        assert_eq!(ranking.fits.len(), 3);
        assert!(matches!(ranking.skipped[0], FitError::Collinear { .. }));
    }

    #[test]
    fn rank_names_parse() {
        assert_eq!("adj-r2".parse::<RankBy>(), Ok(RankBy::AdjR2));
        assert!(
            "r3".parse::<RankBy>()
                .unwrap_err()
                .contains("r2, adj-r2 or cv")
        );
    }
}
