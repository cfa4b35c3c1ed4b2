//! A PACE model as a [`PerformanceModel`], so that `lca predict`, `lca validate`, `lca crossover`
//! and `lca report` take it like a model of formulas (docs/pace.md#with-the-other-commands): its
//! categories come from [`PaceModel::evaluate`] through fit's [`Evaluator`], with a 90% interval
//! of `T_p` from the model's error on the runs it was built from.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use fit::Prediction;
use fit::performance::{Evaluator, PerformanceModel};

use super::model::PaceModel;

/// The categories of a PACE model's prediction, in order.
pub const CATEGORY_NAMES: [&str; 6] = ["li", "ip", "sl", "cl", "rc", "pc"];

/// The relative error assumed for a model without an `[error]` table.
const UNKNOWN_SD: f64 = 0.1;

#[derive(Debug)]
struct Evaluate {
    model: PaceModel,
    /// The last point the replay failed at, and why ([`Evaluator::failure`]).
    failed: Mutex<Option<(Vec<f64>, String)>>,
    /// Student t quantile of 90% at the error's degrees of freedom.
    t: f64,
    /// The relative standard deviation of `T_p`.
    sd: f64,
    /// The evaluations made, by point (its values' bits): a crossover asks for most points
    /// several times (about three times each for two PACE models of fft2d, 37,000 asks of
    /// 13,000 points), and an evaluation replays the template twice. At most [`MEMO`] points
    /// are kept; past that the memo starts again.
    memo: Mutex<HashMap<Vec<u64>, Values>>,
}

/// Each category's value at a point, or why the point cannot be evaluated.
type Values = Result<Vec<f64>, String>;

/// The most points [`Evaluate`]'s memo keeps (about 100 bytes each).
const MEMO: usize = 1 << 16;

impl Evaluate {
    /// Where `point`'s `p` lies strictly between two whole numbers from 1 to 4096: its index
    /// in the point, the two, and how far from the first.
    fn between(&self, point: &[f64]) -> Option<(usize, f64, f64, f64)> {
        let i = self.model.factors.iter().position(|f| f == "p")?;
        let p = *point.get(i)?;
        (p.is_finite() && p > 1.0 && p < 4096.0 && p.fract() != 0.0)
            .then(|| (i, p.floor(), p.ceil(), p.fract()))
    }

    /// `point` with its `i`-th value set to `v`.
    fn with(point: &[f64], i: usize, v: f64) -> Vec<f64> {
        let mut at = point.to_vec();
        at[i] = v;
        at
    }

    /// Each category's value at a point the template replays, or why not.
    fn values(&self, point: &[f64]) -> Values {
        let key: Vec<u64> = point.iter().map(|v| v.to_bits()).collect();
        if let Some(known) = self
            .memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return known.clone();
        }
        let values = self
            .model
            .evaluate(point)
            .map(|e| e.categories.iter().map(|c| c.1).collect::<Vec<f64>>());
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if memo.len() >= MEMO {
            memo.clear();
        }
        memo.insert(key, values.clone());
        values
    }
}

impl Evaluator for Evaluate {
    /// The replay's categories at a whole `p`; between two, the straight line between theirs
    /// (only whole numbers of threads are replayed, but a crossover solves along `p`:
    /// docs/pace.md#with-the-other-commands).
    fn categories(&self, point: &[f64]) -> Vec<Prediction> {
        let values = match self.between(point) {
            Some((i, lo, hi, w)) => self.values(&Self::with(point, i, lo)).and_then(|a| {
                let b = self.values(&Self::with(point, i, hi))?;
                Ok(a.iter().zip(&b).map(|(a, b)| a + w * (b - a)).collect())
            }),
            None => self.values(point),
        };
        let values = match values {
            Ok(v) => v,
            Err(why) => {
                *self.failed.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some((point.to_vec(), why));
                let nan = Prediction::bounded(f64::NAN, f64::NAN, f64::NAN, 0.0);
                return vec![nan; CATEGORY_NAMES.len()];
            }
        };
        // T_p's interval is ±t·sd·T_p: the variance (sd·Σc)² split among the categories in
        // proportion to their size, so that the sum's independent variances add up to it.
        let total: f64 = values.iter().sum();
        values
            .iter()
            .map(|&c| {
                let h = self.t * self.sd * (c.max(0.0) * total.max(0.0)).sqrt();
                Prediction::bounded(c, h, h, 0.0)
            })
            .collect()
    }

    fn failure(&self, point: &[f64]) -> Option<String> {
        let failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        let (at, why) = failed.as_ref()?;
        (at.as_slice() == point).then(|| why.clone())
    }

    fn describe(&self) -> Option<fit::performance::Description<'_>> {
        Some(super::describe::describe(&self.model))
    }

    fn outside(&self, point: &[f64]) -> Option<String> {
        match self.between(point) {
            Some((i, lo, hi, _)) => self
                .model
                .shape(&Self::with(point, i, lo))
                .err()
                .or_else(|| self.model.shape(&Self::with(point, i, hi)).err()),
            None => self.model.shape(point).err(),
        }
    }
}

/// A model's relative standard deviation of `T_p` and the runs it comes from: its `[error]`,
/// else 10% over 2 runs.
pub fn relative_error(model: &PaceModel) -> (f64, u32) {
    match model.error {
        Some(e) => (e.relative_sd, e.runs),
        None => (UNKNOWN_SD, 2),
    }
}

/// The PACE model as a performance model of the six categories.
pub fn performance(model: PaceModel) -> Result<PerformanceModel> {
    let (sd, runs) = relative_error(&model);
    let dof = runs.saturating_sub(1).max(1);
    // Placeholder categories (formula 1, relative residual sd), read by fit's own reader.
    let mut text = format!("format = 1\nname = {}\nfactors = [", quoted(&model.name));
    let factors: Vec<String> = model.factors.iter().map(|f| quoted(f)).collect();
    let _ = writeln!(text, "{}]", factors.join(", "));
    let _ = writeln!(text, "[range]");
    for (f, (lo, hi)) in model.factors.iter().zip(&model.ranges) {
        if lo.is_finite() && hi.is_finite() {
            let _ = writeln!(text, "{} = [{}, {}]", quoted(f), float(*lo), float(*hi));
        }
    }
    let _ = writeln!(text, "[held]");
    for (k, v) in &model.held {
        let _ = writeln!(text, "{} = {}", quoted(k), float(*v));
    }
    let datafile = model.subtask.provenance.datafile.clone();
    let conditions = model.subtask.provenance.conditions.clone();
    let _ = writeln!(
        text,
        "[provenance]\ndatafile = {}\nwhere = [{}]\nlines = [{}]\ncreated_by = \"lca pace\"",
        quoted(&datafile),
        conditions
            .iter()
            .map(|c| quoted(c))
            .collect::<Vec<_>>()
            .join(", "),
        model
            .subtask
            .provenance
            .lines
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for c in CATEGORY_NAMES {
        let _ = writeln!(
            text,
            "[[category]]\nname = \"{c}\"\nformula = \"1\"\n[category.statistics]\n\
             method = \"linear\"\nweighting = \"relative\"\nobservations = {runs}\ndof = {dof}\n\
             sse = 0.0\nsst = 0.0\nr2 = 0.0\nadj_r2 = 0.0\ncv = {sd}\nresidual_sd = {sd}\n\
             covariance = [[0.0]]\n[[category.coefficient]]\nname = \"1\"\nvalue = 0.0\n\
             std_error = 0.0\nhalf_width = 0.0",
            sd = float(sd)
        );
    }
    let mut performance = fit::model_file::parse("(PACE model)", &text)?;
    let t = fit::stats::t_quantile(dof as usize);
    performance.evaluator = Some(Arc::new(Evaluate {
        model,
        failed: Default::default(),
        t,
        sd,
        memo: Default::default(),
    }));
    Ok(performance)
}

/// Reads a model file of either kind: a PACE model (`kind = "pace"`) or a model of formulas.
pub fn read_model(path: &Path) -> Result<PerformanceModel> {
    let text = files::input::read_text(path, "model file", files::input::MAX_SMALL_FILE)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if super::file::is_pace(&text) {
        let model = super::file::read(path)?;
        return performance(model);
    }
    Ok(fit::model_file::parse(&path.display().to_string(), &text)?)
}

fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn float(x: f64) -> String {
    toml::Value::Float(x).to_string()
}
