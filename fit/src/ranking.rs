//! Ranking candidate models of one response against one factor, best first.

use std::cmp::Ordering;
use std::str::FromStr;

use crate::fit::{Fit, FitError, Weighting, fit_weighted};
use crate::model::Model;
use crate::observations::Observations;

/// The statistic that orders candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
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
