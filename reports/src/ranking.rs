//! The ranked candidate models of one category against one factor, as the paper's `lca`
//! printed them (`(0.000298 +/- 0.000017) *p*sqrt(p)   R2: 0.975`), and as JSON, CSV and
//! a chart of the measured points with every fitted curve.

use std::fmt::Write as _;

use fit::{Estimate, Fit, Observations, Prediction, RankBy, Ranking};
use serde::Serialize;

use crate::Format;
use crate::chart::{Chart, Curve};
use crate::number::{estimate as format_estimate, significant};

/// Everything a ranking report shows.
#[derive(Debug, Clone)]
pub struct RankingReport<'a> {
    /// The observations the models were fitted to.
    pub observations: &'a Observations,
    /// The statistic that ordered the fits.
    pub rank_by: RankBy,
    /// The fits and the skipped candidates.
    pub ranking: &'a Ranking,
    /// Points to predict at (factor values in the order of the observations' factors).
    pub predict_at: &'a [Vec<f64>],
}

impl RankingReport<'_> {
    /// Renders the report in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.text(),
            Format::Json => self.json(),
            Format::Csv => self.csv(),
        }
    }

    fn at_label(&self, point: &[f64]) -> String {
        self.observations
            .factors
            .iter()
            .zip(point)
            .map(|(f, v)| format!("{f}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Per point, every fit's prediction with model-selection uncertainty in its interval
    /// ([`fit::ranking::predict_with_selection`]), and beyond the data of a calibrated ranking
    /// the rival forms' spread ([`fit::Ranking::predict`]), indexed `[point][fit]`.
    fn predictions(&self) -> Vec<Vec<Prediction>> {
        self.predict_at
            .iter()
            .map(|point| self.ranking.predict(point))
            .collect()
    }

    fn text(&self) -> String {
        let obs = self.observations;
        let predictions = self.predictions();
        let mut out = format!(
            "{} against {}: {} observations from {}, ranked by {}\n",
            obs.response,
            obs.factors.join(", "),
            obs.len(),
            obs.source,
            rank_name(self.rank_by),
        );
        let formulas: Vec<String> = self.ranking.fits.iter().map(formula).collect();
        let width = formulas
            .iter()
            .map(|f| f.chars().count())
            .max()
            .unwrap_or(0);
        for (i, (fit, formula)) in self.ranking.fits.iter().zip(&formulas).enumerate() {
            let pad = width - formula.chars().count();
            let _ = writeln!(
                out,
                "{formula}{:pad$}   R2: {}  adjR2: {}  CV: {}",
                "",
                fixed3(fit.r2),
                fixed3(fit.adj_r2),
                significant(fit.cv, 3),
            );
            if fit.weighting == fit::Weighting::Relative {
                let _ = writeln!(out, "    fitted to relative error");
            }
            for p in &fit.parameters {
                let _ = writeln!(out, "    {} = {}", p.name, bare_estimate(p));
            }
            for (point, p) in self.predict_at.iter().zip(&predictions) {
                let _ = writeln!(
                    out,
                    "    at {}: {} (90% prediction interval, with the other models' spread)",
                    self.at_label(point),
                    prediction_text(&p[i]),
                );
            }
            if let Some(why) = fit.poor_fit() {
                let _ = writeln!(out, "    poor fit: {why}");
            }
            if let Some((a, b)) = fit.cancelling_terms(obs) {
                let _ = writeln!(
                    out,
                    "    warning: terms `{a}` and `{b}` cancel (opposite signs, each over {}x the \
                     largest value): do not extrapolate this model",
                    fit::fit::CANCELLING_FACTOR
                );
            }
            for weak in fit.weak_terms() {
                let _ = writeln!(
                    out,
                    "    note: term `{}` is not distinguishable from zero (90%) — consider dropping it",
                    weak.name
                );
            }
            if fit.dof == 0 {
                let _ = writeln!(
                    out,
                    "    note: as many fitted quantities as observations; no interval can be given"
                );
            }
        }
        for skipped in &self.ranking.skipped {
            let _ = writeln!(out, "skipped: {skipped}");
        }
        out
    }

    fn json(&self) -> String {
        #[derive(Serialize)]
        struct Doc<'a> {
            source: &'a str,
            response: &'a str,
            factors: &'a [String],
            observations: usize,
            rank_by: RankBy,
            models: Vec<ModelDoc<'a>>,
            skipped: Vec<String>,
        }
        #[derive(Serialize)]
        struct ModelDoc<'a> {
            model: &'a str,
            method: fit::Method,
            weighting: fit::Weighting,
            coefficients: &'a [Estimate],
            parameters: &'a [Estimate],
            n: usize,
            dof: usize,
            r2: f64,
            adj_r2: f64,
            cv: f64,
            residual_sd: f64,
            weak_terms: Vec<&'a str>,
            poor_fit: Option<String>,
            cancelling_terms: Option<(String, String)>,
            predictions: Vec<PredictionDoc>,
        }
        #[derive(Serialize)]
        struct PredictionDoc {
            at: String,
            #[serde(flatten)]
            prediction: Prediction,
        }
        let predictions = self.predictions();
        let doc = Doc {
            source: &self.observations.source,
            response: &self.observations.response,
            factors: &self.observations.factors,
            observations: self.observations.len(),
            rank_by: self.rank_by,
            models: self
                .ranking
                .fits
                .iter()
                .enumerate()
                .map(|(i, fit)| ModelDoc {
                    model: fit.model.text(),
                    method: fit.method,
                    weighting: fit.weighting,
                    coefficients: &fit.coefficients,
                    parameters: &fit.parameters,
                    n: fit.n,
                    dof: fit.dof,
                    r2: fit.r2,
                    adj_r2: fit.adj_r2,
                    cv: fit.cv,
                    residual_sd: fit.residual_sd,
                    weak_terms: fit.weak_terms().iter().map(|e| e.name.as_str()).collect(),
                    poor_fit: fit.poor_fit(),
                    cancelling_terms: fit.cancelling_terms(self.observations),
                    predictions: self
                        .predict_at
                        .iter()
                        .zip(&predictions)
                        .map(|(point, p)| PredictionDoc {
                            at: self.at_label(point),
                            prediction: p[i],
                        })
                        .collect(),
                })
                .collect(),
            skipped: self.ranking.skipped.iter().map(|e| e.to_string()).collect(),
        };
        let mut text = serde_json::to_string_pretty(&doc).expect("plain data serializes");
        text.push('\n');
        text
    }

    fn csv(&self) -> String {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let mut header = vec![
            "rank",
            "model",
            "formula",
            "r2",
            "adj_r2",
            "cv",
            "residual_sd",
            "n",
            "dof",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        for point in self.predict_at {
            let at = self.at_label(point);
            header.push(format!("predict[{at}]"));
            header.push(format!("predict[{at}]_half_width"));
            header.push(format!("predict[{at}]_low"));
            header.push(format!("predict[{at}]_high"));
        }
        let predictions = self.predictions();
        writer.write_record(&header).expect("writing to memory");
        for (i, fit) in self.ranking.fits.iter().enumerate() {
            let mut record = vec![
                (i + 1).to_string(),
                fit.model.text().to_string(),
                formula(fit),
                fit.r2.to_string(),
                fit.adj_r2.to_string(),
                fit.cv.to_string(),
                fit.residual_sd.to_string(),
                fit.n.to_string(),
                fit.dof.to_string(),
            ];
            for p in &predictions {
                let p = &p[i];
                record.push(p.value.to_string());
                record.push(p.half_width.to_string());
                record.push(p.lower.to_string());
                record.push(p.upper.to_string());
            }
            writer.write_record(&record).expect("writing to memory");
        }
        String::from_utf8(writer.into_inner().expect("flushing memory")).expect("CSV of UTF-8")
    }
}

/// The chart of the measured points and every fitted curve, sampled densely over the range
/// of the first factor (the others held at their first observed value).
pub fn chart(observations: &Observations, ranking: &Ranking) -> Chart {
    let xs = &observations.columns[0];
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let mut point = vec![0.0; observations.factors.len()];
    observations.point(0, &mut point);
    const SAMPLES: usize = 200;
    let curves = ranking
        .fits
        .iter()
        .map(|fit| Curve {
            label: std::iter::once(formula(fit))
                .chain(
                    fit.parameters
                        .iter()
                        .map(|p| format!("{} = {}", p.name, bare_estimate(p))),
                )
                .chain(std::iter::once(format!("R2 {}", fixed3(fit.r2))))
                .collect::<Vec<_>>()
                .join("   "),
            points: (0..=SAMPLES)
                .map(|i| {
                    let x = lo + (hi - lo) * i as f64 / SAMPLES as f64;
                    point[0] = x;
                    (x, fit.evaluate(&point))
                })
                .collect(),
            ..Curve::default()
        })
        .collect();
    Chart {
        title: format!(
            "{} against {} ({})",
            observations.response, observations.factors[0], observations.source
        ),
        x_label: observations.factors[0].clone(),
        y_label: format!("{} (processor-seconds)", observations.response),
        points: xs
            .iter()
            .copied()
            .zip(observations.y.iter().copied())
            .collect(),
        curves,
        ..Chart::default()
    }
}

/// The fitted model in the paper's notation: `(a +/- da) + (b +/- db) *p`.
pub fn formula(fit: &Fit) -> String {
    if fit.coefficients.is_empty() {
        return "0".to_string();
    }
    fit.coefficients
        .iter()
        .map(|c| {
            let coefficient = format!("({})", format_estimate(c.value, c.half_width));
            if c.name == "1" {
                coefficient
            } else {
                format!("{coefficient} *{}", c.name)
            }
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

fn bare_estimate(e: &Estimate) -> String {
    format_estimate(e.value, e.half_width)
}

fn prediction_text(p: &Prediction) -> String {
    crate::number::prediction(p)
}

/// Three decimals; a value that rounds to zero prints without a sign.
fn fixed3(v: f64) -> String {
    match v {
        v if !v.is_finite() => "n/a".into(),
        v if v.abs() < 0.0005 => "0.000".into(),
        v => format!("{v:.3}"),
    }
}

fn rank_name(by: RankBy) -> &'static str {
    match by {
        RankBy::R2 => "R2",
        RankBy::AdjR2 => "adjusted R2",
        RankBy::Cv => "leave-one-out error",
    }
}
