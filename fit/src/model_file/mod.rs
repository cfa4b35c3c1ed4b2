//! Model files (docs/model-file.md): a [`PerformanceModel`] as TOML — per category the formula,
//! coefficients with intervals and covariance, fit statistics, shapes, the combination and
//! the allocation of variation that chose it; the corner-plane baseline; provenance.
//!
//! What [`write`] produces, [`parse`] reads back, and writing that again gives the same bytes:
//! floats are written in the shortest form that reads back to the same number.
//!
//! A model can also be written by hand (a published model, say): `format`, `factors` and per
//! category `name` and `formula` are required. A formula without `coefficient` entries is
//! taken as written (every term's coefficient is 1), and predicts without intervals.
//!
//! Every number a prediction uses must be finite, and every standard deviation, variance and
//! sum of squares non-negative; a file that breaks this is refused in one line naming the file
//! and the field. `nan` stays allowed where it means "not defined": a standard error or
//! half-width of a model without intervals, and the statistics that are only reported (R²,
//! leave-one-out error, the corner allocation's optional fields).
//!
//! ```toml
//! format = 1
//! name = "dp"
//! factors = ["n", "p"]
//!
//! [[category]]
//! name = "pc"
//! formula = "2.1e-8*n^2*log2(n)"
//! ```

mod emit;

use std::collections::BTreeMap;
use std::path::Path;

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use crate::calibration::Calibration;
use crate::combination::{
    CategoryModel, ChosenBy, Combination, CornerVariation, IntegerChoice, LeaveOneOutChoice, Shape,
    ShapeSource, Together,
};
use crate::fit::{Estimate, Fit, Method, Weighting};
use crate::model::Model;
use crate::performance::{Kind, PerformanceModel, PredictedRows, Provenance};

/// The model file format this version reads and writes.
pub const FORMAT: u32 = 1;

/// A model file that cannot be read. One line: `file:line: message` or `file: message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ModelFileError {
    /// The file.
    pub file: String,
    /// The line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRecord {
    format: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<KindRecord>,
    #[serde(default)]
    name: String,
    factors: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    range: BTreeMap<String, [f64; 2]>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    held: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provenance: Option<ProvenanceRecord>,
    #[serde(default)]
    category: Vec<CategoryRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    baseline: Option<FitRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    extrapolation: Option<Vec<CalibrationRecord>>,
}

/// `[[extrapolation]]`: the forward validation along one factor (docs/model-file.md). Absent
/// in files written before it existed: their predictions beyond the data are not calibrated.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CalibrationRecord {
    factor: String,
    relative_sd: f64,
    points: usize,
    ratio: f64,
    /// The response these rivals are of, for a response model's second and later responses
    /// (absent: `T_p`'s, or the first response's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response: Option<String>,
    /// The rival forms of a model of one factor (absent in files written before them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rival: Vec<RivalRecord>,
}

/// `[[extrapolation.rival]]`: one rival form and its stacking weight.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RivalRecord {
    weight: f64,
    fit: FitRecord,
}

/// `kind = "response"`: the categories are responses in their own units, not lost cycles
/// (absent, as in files written before it existed, or `"lost-cycles"`: lost cycles).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum KindRecord {
    #[default]
    LostCycles,
    Response,
}

impl From<KindRecord> for Kind {
    fn from(k: KindRecord) -> Kind {
        match k {
            KindRecord::LostCycles => Kind::LostCycles,
            KindRecord::Response => Kind::Response,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProvenanceRecord {
    datafile: String,
    #[serde(rename = "where", default)]
    conditions: Vec<String>,
    #[serde(default)]
    lines: Vec<usize>,
    #[serde(default)]
    created_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    predicted: Option<PredictedRecord>,
}

/// `[provenance.predicted]`: the rows `pp whatif` predicted.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PredictedRecord {
    rows: usize,
    of: usize,
    what: Vec<String>,
    range: BTreeMap<String, [f64; 2]>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CategoryRecord {
    name: String,
    formula: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    combination: Option<Combination>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chosen_by: Option<ChosenBy>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dropped: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    variation: Option<VariationRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    leave_one_out: Option<LeaveOneOutRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    vary_together: Vec<TogetherRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    shape: Vec<ShapeRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    integer: Option<IntegerChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    statistics: Option<StatisticsRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    coefficient: Vec<EstimateRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parameter: Vec<EstimateRecord>,
}

/// A fitted (or hand-written) model: the formula, its coefficients, and the statistics.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FitRecord {
    formula: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    statistics: Option<StatisticsRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    coefficient: Vec<EstimateRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parameter: Vec<EstimateRecord>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StatisticsRecord {
    method: Method,
    weighting: Weighting,
    observations: usize,
    dof: usize,
    sse: f64,
    sst: f64,
    r2: f64,
    adj_r2: f64,
    cv: f64,
    residual_sd: f64,
    /// Row-major, coefficients then parameters.
    covariance: Vec<Vec<f64>>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EstimateRecord {
    name: String,
    value: f64,
    #[serde(default = "nan")]
    std_error: f64,
    #[serde(default = "nan")]
    half_width: f64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VariationRecord {
    corners: usize,
    main: f64,
    interaction: f64,
    implied_multiplicative: f64,
    #[serde(default = "nan")]
    multiplicative_cv: f64,
    #[serde(default = "nan")]
    full_cv: f64,
    #[serde(default = "nan")]
    full_p_value: f64,
}

/// `[category.leave_one_out]`: why the form was chosen without every corner.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LeaveOneOutRecord {
    corner: String,
    #[serde(default)]
    nested: bool,
    #[serde(default = "nan")]
    additive_p_value: f64,
    #[serde(default = "nan")]
    additive_cv: f64,
    #[serde(default = "nan")]
    multiplicative_cv: f64,
    #[serde(default = "nan")]
    full_cv: f64,
    #[serde(default = "nan")]
    full_p_value: f64,
}

/// `[[category.vary_together]]`: factors that varied together in every run, the lead first,
/// and the values they took.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TogetherRecord {
    factors: Vec<String>,
    points: Vec<Vec<f64>>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeRecord {
    factor: String,
    expr: String,
    source: ShapeSource,
    #[serde(default)]
    edges: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    runner_up: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    runner_up_score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    constant_score: Option<f64>,
}

fn nan() -> f64 {
    f64::NAN
}

/// The model as TOML.
pub fn write(model: &PerformanceModel) -> String {
    let record = FileRecord {
        format: FORMAT,
        kind: (model.kind == Kind::Response).then_some(KindRecord::Response),
        name: model.name.clone(),
        factors: model.factors.clone(),
        range: model
            .factors
            .iter()
            .zip(&model.ranges)
            .filter(|(_, (lo, hi))| lo.is_finite() || hi.is_finite())
            .map(|(f, &(lo, hi))| (f.clone(), [lo, hi]))
            .collect(),
        held: model.held.clone(),
        provenance: (model.provenance != Provenance::default()).then(|| ProvenanceRecord {
            datafile: model.provenance.datafile.clone(),
            conditions: model.provenance.conditions.clone(),
            lines: model.provenance.lines.clone(),
            created_by: model.provenance.created_by.clone(),
            predicted: model
                .provenance
                .predicted
                .as_ref()
                .map(|p| PredictedRecord {
                    rows: p.rows,
                    of: p.of,
                    what: p.what.clone(),
                    range: model
                        .factors
                        .iter()
                        .zip(&p.ranges)
                        .map(|(f, &(lo, hi))| (f.clone(), [lo, hi]))
                        .collect(),
                }),
        }),
        category: model.categories.iter().map(category_record).collect(),
        baseline: model.baseline.as_ref().map(fit_record),
        extrapolation: model.calibration.as_ref().map(|c| {
            c.iter()
                .map(|c| CalibrationRecord {
                    factor: c.factor.clone(),
                    relative_sd: c.relative_sd,
                    points: c.points,
                    ratio: c.ratio,
                    response: c.response.clone(),
                    rival: c
                        .rivals
                        .iter()
                        .map(|r| RivalRecord {
                            weight: r.weight,
                            fit: fit_record(&r.fit),
                        })
                        .collect(),
                })
                .collect()
        }),
    };
    let value = toml::Value::try_from(&record).expect("model records are TOML tables");
    let names: Vec<&str> = model
        .categories
        .iter()
        .map(|c| c.category.as_str())
        .collect();
    let header = match model.kind {
        Kind::LostCycles => format!(
            "# lca performance model: T_p = ({}) / p.\n\
             # Read by `lca predict` and `lca validate`; coefficients carry 90% intervals.\n",
            names.join(" + ")
        ),
        Kind::Response => format!(
            "# lca response model: {}, each in its own units (not lost cycles, no sum, no /p).\n\
             # Read by `lca predict` and `lca validate`; coefficients carry 90% intervals.\n",
            names.join("; ")
        ),
    };
    format!("{header}{}", emit::document(&value))
}

/// The model as TOML, only when [`parse`] would read it back: a fit whose statistics are not
/// finite (a datafile value of 1e308 overflows the sums of squares) is refused here, in one
/// line naming `file` (where it was to go) and the field, instead of being written to a file
/// that nothing can load (docs/model-file.md).
pub fn written(model: &PerformanceModel, file: &str) -> Result<String, ModelFileError> {
    let text = write(model);
    parse(file, &text).map_err(|e| ModelFileError {
        file: file.into(),
        line: None,
        message: short(&format!(
            "not written: {}; a value of the data too large for the fit?",
            e.message
        )),
    })?;
    Ok(text)
}

/// Writes the model to `path` (through a temporary file and a rename); an existing file is
/// replaced only when `force` is set, and only when it is a regular file. A model that could
/// not be read back is refused ([`written`]).
pub fn save(model: &PerformanceModel, path: &Path, force: bool) -> Result<(), ModelFileError> {
    let error = |message: String| ModelFileError {
        file: path.display().to_string(),
        line: None,
        message,
    };
    files::output::check_new(path, force).map_err(|e| error(e.reason()))?;
    let text = written(model, &path.display().to_string())?;
    files::output::write(path, text.as_bytes()).map_err(|e| error(e.reason()))
}

/// Reads a model file.
pub fn read(path: &Path) -> Result<PerformanceModel, ModelFileError> {
    let file = path.display().to_string();
    let text =
        files::input::read_text(path, "model file", files::input::MAX_SMALL_FILE).map_err(|e| {
            ModelFileError {
                file: file.clone(),
                line: None,
                message: e.to_string(),
            }
        })?;
    parse(&file, &text)
}

/// Parses a model file's text (`file` names it in errors).
pub fn parse(file: &str, text: &str) -> Result<PerformanceModel, ModelFileError> {
    let record: FileRecord = toml::from_str(text).map_err(|e| ModelFileError {
        file: file.into(),
        line: e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1),
        message: short(e.message()),
    })?;
    restore(record).map_err(|message| ModelFileError {
        file: file.into(),
        line: None,
        message: short(&message),
    })
}

/// The longest message of a [`ModelFileError`], in bytes.
const MAX_MESSAGE: usize = 200;

/// A message as one line of at most [`MAX_MESSAGE`] bytes (and `...` where cut): messages quote
/// the file's values and names, which can be any length and hold newlines.
fn short(message: &str) -> String {
    files::quote::excerpt(&message.trim().replace('\n', " "), MAX_MESSAGE)
}

fn estimate_record(e: &Estimate) -> EstimateRecord {
    EstimateRecord {
        name: e.name.clone(),
        value: e.value,
        std_error: e.std_error,
        half_width: e.half_width,
    }
}

fn fit_record(fit: &Fit) -> FitRecord {
    let c = fit.covariance();
    FitRecord {
        formula: fit.model.text().to_string(),
        statistics: Some(StatisticsRecord {
            method: fit.method,
            weighting: fit.weighting,
            observations: fit.n,
            dof: fit.dof,
            sse: fit.sse,
            sst: fit.sst,
            r2: fit.r2,
            adj_r2: fit.adj_r2,
            cv: fit.cv,
            residual_sd: fit.residual_sd,
            covariance: (0..c.nrows())
                .map(|i| (0..c.ncols()).map(|j| c[(i, j)]).collect())
                .collect(),
        }),
        coefficient: fit.coefficients.iter().map(estimate_record).collect(),
        parameter: fit.parameters.iter().map(estimate_record).collect(),
    }
}

fn category_record(c: &CategoryModel) -> CategoryRecord {
    let fit = fit_record(&c.fit);
    CategoryRecord {
        name: c.category.clone(),
        formula: fit.formula,
        combination: c.combination,
        chosen_by: c.chosen_by,
        dropped: c.dropped.clone(),
        variation: c.variation.map(|v| VariationRecord {
            corners: v.cells,
            main: v.main,
            interaction: v.interaction,
            implied_multiplicative: v.implied_multiplicative,
            multiplicative_cv: v.multiplicative_cv,
            full_cv: v.full_cv,
            full_p_value: v.full_p_value,
        }),
        leave_one_out: c.leave_one_out.as_ref().map(|l| LeaveOneOutRecord {
            corner: l.corner.clone(),
            nested: l.nested,
            additive_p_value: l.additive_p_value,
            additive_cv: l.additive_cv,
            multiplicative_cv: l.multiplicative_cv,
            full_cv: l.full_cv,
            full_p_value: l.full_p_value,
        }),
        vary_together: c
            .vary_together
            .iter()
            .map(|t| TogetherRecord {
                factors: t.factors.clone(),
                points: t.points.clone(),
            })
            .collect(),
        shape: c
            .shapes
            .iter()
            .map(|s| ShapeRecord {
                factor: s.factor.clone(),
                expr: s.expr.clone(),
                source: s.source,
                edges: s.edges,
                score: s.score,
                runner_up: s.runner_up.as_ref().map(|r| r.0.clone()),
                runner_up_score: s.runner_up.as_ref().map(|r| r.1),
                constant_score: s.constant_score,
            })
            .collect(),
        integer: c.integer.clone(),
        statistics: fit.statistics,
        coefficient: fit.coefficient,
        parameter: fit.parameter,
    }
}

fn restore(record: FileRecord) -> Result<PerformanceModel, String> {
    if record.format != FORMAT {
        return Err(format!(
            "format {} is not supported (this lca reads format {FORMAT})",
            record.format
        ));
    }
    let factors = record.factors;
    if factors.is_empty() {
        return Err("'factors' is empty: a model needs at least one factor".into());
    }
    if let Some(f) = record.range.keys().find(|f| !factors.contains(f)) {
        return Err(format!(
            "range: '{f}' is not among the factors ({})",
            factors.join(", ")
        ));
    }
    let mut ranges = Vec::with_capacity(factors.len());
    for f in &factors {
        let range = match record.range.get(f) {
            Some(&[lo, hi]) if !(lo.is_finite() && hi.is_finite()) => {
                return Err(format!("range: {f} = [{lo}, {hi}] is not finite"));
            }
            Some(&[lo, hi]) if lo <= hi => (lo, hi),
            Some(&[lo, hi]) => return Err(format!("range: {f} = [{lo}, {hi}] is not increasing")),
            None => (f64::NEG_INFINITY, f64::INFINITY),
        };
        ranges.push(range);
    }
    if let Some((name, v)) = record.held.iter().find(|(_, v)| !v.is_finite()) {
        return Err(format!("held: {name} = {v} is not a finite number"));
    }
    let response = matches!(record.kind, Some(KindRecord::Response));
    if let Some(p) = record.held.get("p").filter(|p| !response && **p <= 0.0) {
        return Err(format!(
            "held: p = {p}: T_p = (sum of the categories) / p needs p > 0"
        ));
    }
    if !response && !factors.iter().any(|f| f == "p") && !record.held.contains_key("p") {
        return Err("T_p needs p: add \"p\" to factors or hold it, e.g. [held] p = 26".into());
    }
    if record.category.is_empty() {
        return Err("no [[category]]: nothing to predict".into());
    }
    let mut categories = Vec::with_capacity(record.category.len());
    for c in record.category {
        let name = c.name.clone();
        if categories
            .iter()
            .any(|m: &CategoryModel| m.category == name)
        {
            return Err(format!("category '{name}' is given twice"));
        }
        let fit = FitRecord {
            formula: c.formula,
            statistics: c.statistics,
            coefficient: c.coefficient,
            parameter: c.parameter,
        };
        let fit =
            restore_fit(fit, &name, &factors).map_err(|e| format!("category '{name}': {e}"))?;
        let mut vary_together = Vec::with_capacity(c.vary_together.len());
        for t in c.vary_together {
            let at = format!("category '{name}': vary_together {:?}", t.factors);
            if t.factors.len() < 2 {
                return Err(format!("{at}: needs two factors or more"));
            }
            if let Some(f) = t.factors.iter().find(|f| !factors.contains(f)) {
                return Err(format!("{at}: '{f}' is not a factor"));
            }
            if let Some(p) = t.points.iter().find(|p| p.len() != t.factors.len()) {
                return Err(format!(
                    "{at}: the point {p:?} has {} values, not one per factor",
                    p.len()
                ));
            }
            if let Some(p) = t.points.iter().find(|p| p.iter().any(|v| !v.is_finite())) {
                return Err(format!("{at}: the point {p:?} is not finite"));
            }
            if !t.points.is_sorted_by(|a, b| a[0] < b[0]) {
                return Err(format!(
                    "{at}: the points are not in increasing order of '{}'",
                    t.factors[0]
                ));
            }
            vary_together.push(Together {
                factors: t.factors,
                points: t.points,
            });
        }
        let shapes = c
            .shape
            .into_iter()
            .map(|s| Shape {
                factor: s.factor,
                expr: s.expr,
                source: s.source,
                edges: s.edges,
                score: s.score,
                runner_up: s.runner_up.zip(s.runner_up_score),
                constant_score: s.constant_score,
            })
            .collect();
        categories.push(CategoryModel {
            category: name,
            shapes,
            combination: c.combination,
            chosen_by: c.chosen_by,
            dropped: c.dropped,
            integer: c.integer,
            variation: c.variation.map(|v| CornerVariation {
                cells: v.corners,
                main: v.main,
                interaction: v.interaction,
                implied_multiplicative: v.implied_multiplicative,
                multiplicative_cv: v.multiplicative_cv,
                full_cv: v.full_cv,
                full_p_value: v.full_p_value,
            }),
            leave_one_out: c.leave_one_out.map(|l| LeaveOneOutChoice {
                corner: l.corner,
                nested: l.nested,
                additive_p_value: l.additive_p_value,
                additive_cv: l.additive_cv,
                multiplicative_cv: l.multiplicative_cv,
                full_cv: l.full_cv,
                full_p_value: l.full_p_value,
            }),
            vary_together,
            fit,
        });
    }
    let baseline = match record.baseline {
        Some(b) => Some(restore_fit(b, "T_p", &factors).map_err(|e| format!("baseline: {e}"))?),
        None => None,
    };
    let provenance = match record.provenance {
        Some(p) => Provenance {
            datafile: p.datafile,
            conditions: p.conditions,
            lines: p.lines,
            created_by: p.created_by,
            predicted: match p.predicted {
                Some(r) => Some(PredictedRows {
                    rows: r.rows,
                    of: r.of,
                    what: r.what,
                    ranges: factors
                        .iter()
                        .map(|f| {
                            r.range.get(f).map(|&[lo, hi]| (lo, hi)).ok_or_else(|| {
                                format!("provenance.predicted.range: no range for factor '{f}'")
                            })
                        })
                        .collect::<Result<_, _>>()?,
                }),
                None => None,
            },
        },
        None => Provenance::default(),
    };
    let calibration = match record.extrapolation {
        Some(records) => {
            // A response model's later responses may have rivals of their own.
            let later: Vec<&str> = match record.kind.unwrap_or_default().into() {
                Kind::Response => (categories.iter().skip(1))
                    .map(|c| c.category.as_str())
                    .collect(),
                Kind::LostCycles => Vec::new(),
            };
            Some(calibration(records, &factors, &later)?)
        }
        None => None,
    };
    Ok(PerformanceModel {
        kind: record.kind.unwrap_or_default().into(),
        name: record.name,
        factors,
        ranges,
        held: record.held,
        categories,
        baseline,
        provenance,
        calibration,
        evaluator: None,
    })
}

/// The `[[extrapolation]]` tables, checked: a factor of the model, once; a finite
/// `relative_sd >= 0`, at least one point, a finite `ratio >= 1`.
fn calibration(
    records: Vec<CalibrationRecord>,
    factors: &[String],
    later: &[&str],
) -> Result<Vec<Calibration>, String> {
    let mut out: Vec<Calibration> = Vec::with_capacity(records.len());
    for r in records {
        let f = &r.factor;
        if !factors.contains(f) {
            return Err(format!(
                "extrapolation: '{f}' is not among the factors ({})",
                factors.join(", ")
            ));
        }
        if let Some(name) = &r.response
            && !later.contains(&name.as_str())
        {
            return Err(format!(
                "extrapolation '{f}': response '{name}' is not one of the model's second or \
                 later responses ({})",
                if later.is_empty() {
                    "it has none".to_string()
                } else {
                    later.join(", ")
                }
            ));
        }
        if out
            .iter()
            .any(|c| &c.factor == f && c.response == r.response)
        {
            return Err(match &r.response {
                None => format!("extrapolation: factor '{f}' is given twice"),
                Some(name) => {
                    format!("extrapolation: factor '{f}' is given twice for response '{name}'")
                }
            });
        }
        if !(r.relative_sd.is_finite() && r.relative_sd >= 0.0) {
            return Err(format!(
                "extrapolation '{f}': relative_sd = {} must be a finite number >= 0",
                r.relative_sd
            ));
        }
        if r.points == 0 {
            return Err(format!(
                "extrapolation '{f}': points = 0 must be at least 1"
            ));
        }
        if !(r.ratio.is_finite() && r.ratio >= 1.0) {
            return Err(format!(
                "extrapolation '{f}': ratio = {} must be a finite number >= 1",
                r.ratio
            ));
        }
        let mut rivals = Vec::with_capacity(r.rival.len());
        for (i, rival) in r.rival.into_iter().enumerate() {
            let at = |m: String| format!("extrapolation '{f}': rival {}: {m}", i + 1);
            if !(rival.weight.is_finite() && rival.weight > 0.0 && rival.weight <= 1.0) {
                return Err(at(format!(
                    "weight = {} must be a number in (0, 1]",
                    rival.weight
                )));
            }
            let fit = restore_fit(rival.fit, "T", factors).map_err(at)?;
            rivals.push(crate::rivals::Rival {
                fit,
                weight: rival.weight,
            });
        }
        out.push(Calibration {
            factor: r.factor,
            relative_sd: r.relative_sd,
            points: r.points,
            ratio: r.ratio,
            rivals,
            response: r.response,
        });
    }
    Ok(out)
}

/// The fit of `response` (a category, or `T_p` for the baseline) from its record.
fn restore_fit(record: FitRecord, response: &str, factors: &[String]) -> Result<Fit, String> {
    let model = Model::parse(&record.formula).map_err(|e| e.to_string())?;
    let names: Vec<&str> = factors.iter().map(String::as_str).collect();
    let parameters: Vec<&str> = model.parameters().iter().map(String::as_str).collect();
    let terms = model
        .terms()
        .iter()
        .map(|t| t.expr.bind(&names, &parameters))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            format!(
                "formula `{}` uses '{}', which is not among the factors ({})",
                model.text(),
                e.name,
                factors.join(", ")
            )
        })?;
    check_numbers(&record)?;
    let (k, q) = (model.terms().len(), model.parameters().len());
    let coefficients = if record.coefficient.is_empty() && q == 0 {
        // Written by hand: the formula is the function, every coefficient 1.
        model
            .terms()
            .iter()
            .map(|t| Estimate {
                name: t.text.clone(),
                value: 1.0,
                std_error: f64::NAN,
                half_width: f64::NAN,
            })
            .collect()
    } else {
        estimates(
            record.coefficient,
            "coefficient",
            model.terms().iter().map(|t| t.text.clone()),
        )?
    };
    let parameter_values = estimates(
        record.parameter,
        "parameter",
        model.parameters().iter().map(|p| format!("${p}")),
    )?;
    let fitted = k + q;
    let (method, weighting, n, dof, sse, sst, r2, adj_r2, cv, residual_sd, covariance) =
        match record.statistics {
            Some(s) => {
                if s.covariance.len() != fitted || s.covariance.iter().any(|r| r.len() != fitted) {
                    return Err(format!(
                        "covariance must be {fitted} x {fitted} (one row and column per \
                         coefficient and parameter)"
                    ));
                }
                let covariance = DMatrix::from_fn(fitted, fitted, |i, j| s.covariance[i][j]);
                (
                    s.method,
                    s.weighting,
                    s.observations,
                    s.dof,
                    s.sse,
                    s.sst,
                    s.r2,
                    s.adj_r2,
                    s.cv,
                    s.residual_sd,
                    covariance,
                )
            }
            None => {
                let nan = f64::NAN;
                let method = if q == 0 {
                    Method::Linear
                } else {
                    Method::LevenbergMarquardt
                };
                let covariance = DMatrix::from_element(fitted, fitted, nan);
                (
                    method,
                    Weighting::Absolute,
                    0,
                    0,
                    nan,
                    nan,
                    nan,
                    nan,
                    nan,
                    nan,
                    covariance,
                )
            }
        };
    Ok(Fit {
        model,
        factors: factors.to_vec(),
        method,
        weighting,
        coefficients,
        parameters: parameter_values,
        n,
        dof,
        sse,
        sst,
        r2,
        adj_r2,
        cv,
        residual_sd,
        nonnegative: crate::observations::is_response_column(response),
        terms,
        covariance,
    })
}

/// Estimates in the order of `expected` names, checked one for one.
fn estimates(
    records: Vec<EstimateRecord>,
    what: &str,
    expected: impl Iterator<Item = String>,
) -> Result<Vec<Estimate>, String> {
    let expected: Vec<String> = expected.collect();
    if records.len() != expected.len() {
        return Err(format!(
            "{} {what} entries for the formula's {} ({})",
            records.len(),
            expected.len(),
            expected.join(", ")
        ));
    }
    records
        .into_iter()
        .zip(expected)
        .map(|(r, name)| {
            if r.name != name {
                return Err(format!(
                    "{what} '{}' where the formula has `{name}`",
                    r.name
                ));
            }
            Ok(Estimate {
                name: r.name,
                value: r.value,
                std_error: r.std_error,
                half_width: r.half_width,
            })
        })
        .collect()
}

/// Refuses the numbers a prediction cannot use: a coefficient or parameter that is not finite,
/// a standard error or half-width that is infinite or negative (`nan` means no interval),
/// statistics that are not finite or a variance that is negative.
fn check_numbers(record: &FitRecord) -> Result<(), String> {
    let estimates = [
        ("coefficient", &record.coefficient),
        ("parameter", &record.parameter),
    ];
    for (what, list) in estimates {
        for e in list.iter() {
            let field = |name: &str| format!("{what} '{}': {name}", e.name);
            if !e.value.is_finite() {
                return Err(format!(
                    "{} = {} is not a finite number",
                    field("value"),
                    e.value
                ));
            }
            for (name, v) in [("std_error", e.std_error), ("half_width", e.half_width)] {
                if v.is_infinite() || v < 0.0 {
                    return Err(format!(
                        "{} = {v} must be a finite number >= 0 (or nan: no interval)",
                        field(name)
                    ));
                }
            }
        }
    }
    let Some(s) = &record.statistics else {
        return Ok(());
    };
    // Without residual degrees of freedom (a model written by hand, or as many fitted
    // quantities as runs) there is no variance to estimate: nan.
    let undefined = |v: f64| s.dof == 0 && v.is_nan();
    for (name, v) in [
        ("residual_sd", s.residual_sd),
        ("sse", s.sse),
        ("sst", s.sst),
    ] {
        if !(v.is_finite() && v >= 0.0 || undefined(v)) {
            return Err(format!(
                "statistics: {name} = {v} must be a finite number >= 0"
            ));
        }
    }
    for (i, row) in s.covariance.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if !v.is_finite() && !undefined(v) {
                return Err(format!(
                    "statistics: covariance[{i}][{j}] = {v} is not a finite number"
                ));
            }
            if i == j && v < 0.0 {
                return Err(format!(
                    "statistics: covariance[{i}][{i}] = {v} is a negative variance"
                ));
            }
        }
    }
    Ok(())
}
