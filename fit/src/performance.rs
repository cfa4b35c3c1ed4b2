//! The performance model of one implementation: a multi-factor model per category and the run
//! time they add up to, `T_p = (pc + li + ip + sl + cl + rc) / p` (docs/model-file.md), with the
//! paper's baseline beside it: the least-squares plane `a + b*n + c*p` through the corners.

use std::collections::BTreeMap;

use crate::calibration::{Calibration, Reach};
use crate::combination::{CategoryModel, Choices, CombineError, combine_on};
use crate::fit::{Fit, Prediction, Weighting, fit_weighted};
use crate::model::Model;
use crate::observations::{Cell, Condition, DataError, Datafile, Observations};
use crate::stats::t_quantile_real as t_quantile;

/// The categories whose sum is `p * T_p`, in the paper's order.
pub const CATEGORIES: [&str; 6] = ["pc", "li", "ip", "sl", "cl", "rc"];

/// Where a model's data came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Provenance {
    /// The datafile, as named on the command line.
    pub datafile: String,
    /// The `--where` conditions that selected the rows.
    pub conditions: Vec<String>,
    /// Datafile lines of the rows used.
    pub lines: Vec<usize>,
    /// The program that built the model, `lca 0.1.0`.
    pub created_by: String,
    /// The rows among them that were predicted, not measured.
    pub predicted: Option<PredictedRows>,
}

/// The rows of a model that `pp whatif` predicted (a `predicted` column) instead of a run
/// measuring them: a model resting on them says so, and so do the verdicts drawn from it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PredictedRows {
    /// How many of the model's rows were predicted.
    pub rows: usize,
    /// Of how many.
    pub of: usize,
    /// What predicted them: the distinct values of their `predicted` column (`demand:cpu`).
    pub what: Vec<String>,
    /// Each factor's range over the predicted rows, in the model's order of factors.
    pub ranges: Vec<(f64, f64)>,
}

impl PredictedRows {
    /// The predicted rows among `data`'s (all of them used by a model of `factors`); None
    /// when every row was measured.
    pub fn of(data: &Datafile, factors: &[String]) -> Option<PredictedRows> {
        let mut found = PredictedRows {
            of: data.rows().len(),
            ranges: vec![(f64::INFINITY, f64::NEG_INFINITY); factors.len()],
            ..PredictedRows::default()
        };
        for row in 0..data.rows().len() {
            let what = match data.cell(row, crate::observations::PREDICTED) {
                Some(Cell::Text(t)) => t.to_string(),
                Some(Cell::Number(x)) => x.to_string(),
                None => continue,
            };
            found.rows += 1;
            if !found.what.contains(&what) {
                found.what.push(what);
            }
            for (range, factor) in found.ranges.iter_mut().zip(factors) {
                if let Some(Cell::Number(x)) = data.cell(row, factor) {
                    *range = (range.0.min(x), range.1.max(x));
                }
            }
        }
        (found.rows > 0).then_some(found)
    }

    /// [`PredictedRows::describe`] of `data`'s predicted rows against the range of all its
    /// rows, for a command that reads a datafile without a model (`lca variation`, `lca
    /// DATAFILE --var`); None when every row was measured.
    pub fn describe_in(data: &Datafile, factors: &[String]) -> Option<String> {
        let found = PredictedRows::of(data, factors)?;
        let ranges: Vec<(f64, f64)> = factors
            .iter()
            .map(|f| {
                (0..data.rows().len())
                    .filter_map(|row| match data.cell(row, f) {
                        Some(Cell::Number(x)) => Some(x),
                        _ => None,
                    })
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                        (lo.min(x), hi.max(x))
                    })
            })
            .collect();
        Some(found.describe(factors, &ranges))
    }

    /// `48 of 96 rows predicted (pp whatif demand:cpu; p from 3 to 8)`: the factors whose
    /// predicted rows cover less than the model's whole range are named.
    pub fn describe(&self, factors: &[String], model_ranges: &[(f64, f64)]) -> String {
        let narrower: Vec<String> = factors
            .iter()
            .zip(&self.ranges)
            .zip(model_ranges)
            .filter(|((_, p), m)| p.0 > m.0 || p.1 < m.1)
            .map(|((f, p), _)| {
                if p.0 == p.1 {
                    format!("{f} = {}", p.0)
                } else {
                    format!("{f} from {} to {}", p.0, p.1)
                }
            })
            .collect();
        let where_ = if narrower.is_empty() {
            String::new()
        } else {
            format!("; {}", narrower.join(", "))
        };
        format!(
            "{} of {} rows predicted (pp whatif {}{where_})",
            self.rows,
            self.of,
            self.what.join(", ")
        )
    }
}

/// What a model's categories are, and so what it predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    /// Lost cycles in processor-seconds; the model predicts `T_p = (sum of them) / p`.
    #[default]
    LostCycles,
    /// Responses in their own units (`lca model --response`, Extra-P's metrics), each
    /// modelled and predicted on its own: no sum, no division by `p`. The first is the one that
    /// `lca crossover` and `lca validate` compare (they take models of one response).
    Response,
}

/// Categories that a program other than the formulas computes: `lca`'s PACE models
/// (docs/pace.md) replay a template at each point. A model with an evaluator keeps one
/// placeholder [`CategoryModel`] per category (its `fit` gives the degrees of freedom of the
/// intervals the evaluator returns) and takes the values and intervals from the evaluator.
pub trait Evaluator: std::fmt::Debug + Send + Sync {
    /// Each category's prediction at a point (one value per factor), in the model's category
    /// order.
    fn categories(&self, point: &[f64]) -> Vec<Prediction>;
    /// Why the point is outside what the evaluator can compute (a fractional `p`), if it is.
    fn outside(&self, point: &[f64]) -> Option<String>;
    /// Why [`Evaluator::categories`] gave no values at this point, after it did (a replay that
    /// outlasts its clock), if it knows.
    fn failure(&self, _point: &[f64]) -> Option<String> {
        None
    }
    /// What the model is, for a report that would otherwise show its placeholder categories;
    /// None: nothing beyond them.
    fn describe(&self) -> Option<Description<'_>> {
        None
    }
}

/// How a model computed by an [`Evaluator`] describes itself in a report.
#[derive(Debug, Clone, Default)]
pub struct Description<'a> {
    /// What it is and how far it was from the runs it was built from, one sentence each.
    pub sentences: Vec<String>,
    /// A table of its parts, each a title and rows, the first of them the header (a PACE
    /// model's template: a row a step).
    pub tables: Vec<(String, Vec<Vec<String>>)>,
    /// Models of formulas it is made of, each with a title (a PACE model's subtask layer).
    pub parts: Vec<(String, &'a PerformanceModel)>,
    /// What its builder saw or assumed, one sentence each.
    pub notes: Vec<String>,
}

/// A performance model over some factors.
#[derive(Debug, Clone)]
pub struct PerformanceModel {
    /// What the categories are.
    pub kind: Kind,
    /// The implementation's name (`dp`), for reports.
    pub name: String,
    /// The factors, in the order predictions take their values.
    pub factors: Vec<String>,
    /// The range of each factor in the data: outside it a prediction extrapolates.
    pub ranges: Vec<(f64, f64)>,
    /// Columns that held one value in every row (`p=26` when `p` is not a factor, `iters=10`).
    pub held: BTreeMap<String, f64>,
    /// One model per category.
    pub categories: Vec<CategoryModel>,
    /// The corner plane of `T_p`, when every corner was measured.
    pub baseline: Option<Fit>,
    /// Where the data came from.
    pub provenance: Provenance,
    /// The forward validation of `T_p` (or the first response) along each factor that had
    /// enough levels, which widens intervals beyond the data; None for a model without it (a
    /// model file written before it existed): its predictions beyond the data say their
    /// interval is not calibrated.
    pub calibration: Option<Vec<Calibration>>,
    /// Computes the categories in place of the formulas (a PACE model); None for a model of
    /// formulas.
    pub evaluator: Option<std::sync::Arc<dyn Evaluator>>,
}

/// The spread of a predicted `T_p` (or first response) from the fits alone: the variance of
/// its mean, the variance of one run's noise about it, and the degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The variance of the predicted mean.
    pub mean: f64,
    /// The variance of one run about the mean.
    pub noise: f64,
    /// Degrees of freedom of the run's variance (Welch–Satterthwaite over the categories).
    pub dof: f64,
    /// Degrees of freedom of the mean's variance.
    pub mean_dof: f64,
}

/// What the user chose when building a model.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// The implementation's name.
    pub name: String,
    /// Categories to model; empty means the six of [`CATEGORIES`].
    pub categories: Vec<String>,
    /// Shapes and combinations fixed by the user, by category.
    pub choices: BTreeMap<String, Choices>,
    /// The `--where` conditions applied to the datafile (for provenance).
    pub conditions: Vec<Condition>,
    /// The program building the model, for provenance.
    pub created_by: String,
    /// The cores of the machine that measured the runs, when known (`lca model --cores`, or a
    /// held `cores` column): the residual test then looks for rounds of `ceil(p/cores)`
    /// (docs/modelling.md#integer-structure).
    pub cores: Option<u32>,
}

/// Why a performance model cannot be built. One line.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The data cannot be read or selected.
    #[error(transparent)]
    Data(#[from] DataError),
    /// A category cannot be modelled.
    #[error(transparent)]
    Category(#[from] CombineError),
    /// The data do not describe a parameter space.
    #[error("{file}: {message}")]
    Design {
        /// The datafile.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// A prediction of `T_p` and of every category at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct TimePrediction {
    /// The point, one value per factor.
    pub point: Vec<f64>,
    /// `T_p` with its 90% prediction interval (half-width NaN when a category has none); for a
    /// [`Kind::Response`] model, the first response.
    pub time: Prediction,
    /// Each category's prediction (processor-seconds), in the model's order.
    pub categories: Vec<Prediction>,
    /// Factors outside the fitted range at this point.
    pub extrapolated: Vec<String>,
    /// Whether `time`'s interval is the fits' own (inside the data), widened by forward
    /// validation, or beyond the data without it.
    pub reach: Reach,
}

/// The factors of a datafile: every numeric column, other than the responses and
/// [`RUN_COLUMNS`](crate::observations::RUN_COLUMNS), that takes more than one value. A text
/// column with more than one value must be fixed with `--where`, unless the `--where` let it
/// take several (`role in model,decide`: [`Datafile::is_mixed`]).
pub fn factors_of(data: &Datafile) -> Result<(Vec<String>, BTreeMap<String, f64>), BuildError> {
    let mut factors = Vec::new();
    let mut held = BTreeMap::new();
    for column in data.columns() {
        if crate::observations::is_response_column(column)
            || crate::observations::RUN_COLUMNS.contains(&column.as_str())
        {
            continue;
        }
        let mut numbers: Vec<f64> = Vec::new();
        let mut texts: Vec<&str> = Vec::new();
        for row in 0..data.rows().len() {
            match data.cell(row, column) {
                Some(Cell::Number(x)) => numbers.push(x),
                Some(Cell::Text(t)) => texts.push(t),
                None => {}
            }
        }
        numbers.sort_by(f64::total_cmp);
        numbers.dedup();
        texts.sort_unstable();
        texts.dedup();
        let design = |message: String| BuildError::Design {
            file: data.source().to_string(),
            message,
        };
        match (numbers.len(), texts.len()) {
            (_, 0) if numbers.len() > 1 => factors.push(column.clone()),
            (1, 0) => {
                held.insert(column.clone(), numbers[0]);
            }
            (0, 1) | (0, 0) => {}
            (0, _) if data.is_mixed(column) => {}
            _ => {
                // The values, and the column's name, as a short excerpt: either can be long.
                let values: Vec<String> = numbers
                    .iter()
                    .map(f64::to_string)
                    .chain(texts.iter().map(|t| t.to_string()))
                    .collect();
                let column = files::quote::excerpt(column, 40);
                return Err(design(format!(
                    "column '{column}' takes several values ({}); model one of them with \
                     --where {column}=VALUE",
                    files::quote::excerpt(&values.join(", "), 80)
                )));
            }
        }
    }
    if factors.is_empty() {
        return Err(BuildError::Design {
            file: data.source().to_string(),
            message: "no column varies between the rows: there is no factor to model".into(),
        });
    }
    Ok((factors, held))
}

impl PerformanceModel {
    /// Whether its `T_p` can jump as a factor moves: it is computed by a program (a PACE
    /// model's replay deals work in whole units) or a formula takes `floor` or `ceil`.
    pub fn steps(&self) -> bool {
        self.evaluator.is_some()
            || self
                .categories
                .iter()
                .any(|c| c.fit.model.terms().iter().any(|t| t.expr.steps()))
    }

    /// Builds the model of every category from the (already filtered) datafile, with the
    /// forward validation of its `T_p` ([`crate::calibration::forward`]).
    pub fn build(data: &Datafile, options: &BuildOptions) -> Result<Self, BuildError> {
        let (mut model, observations) = Self::build_uncalibrated(data, options)?;
        let first = &observations[0];
        let times = model.measured_times(&observations);
        let points: Vec<Vec<f64>> = (0..first.len())
            .map(|row| {
                let mut point = vec![0.0; model.factors.len()];
                first.point(row, &mut point);
                point
            })
            .collect();
        // An observation's datafile row, by its line.
        let row_of: BTreeMap<usize, usize> = data
            .rows()
            .iter()
            .enumerate()
            .map(|(i, r)| (r.line, i))
            .collect();
        let calibration = crate::calibration::forward(&model, &points, &times, None, |rows| {
            let rows: Vec<usize> = rows.iter().map(|&r| row_of[&first.lines[r]]).collect();
            Self::build_uncalibrated(&data.subset(&rows), options)
                .ok()
                .map(|m| m.0)
        });
        model.calibration = Some(calibration);
        Ok(model)
    }

    fn build_uncalibrated(
        data: &Datafile,
        options: &BuildOptions,
    ) -> Result<(Self, Vec<Observations>), BuildError> {
        let (factors, held) = factors_of(data)?;
        let names: Vec<&str> = factors.iter().map(String::as_str).collect();
        let design = |message: String| BuildError::Design {
            file: data.source().to_string(),
            message,
        };
        if !factors.iter().any(|f| f == "p") && !held.contains_key("p") {
            return Err(design(
                "T_p = (sum of the categories) / p needs a column 'p' (processors)".into(),
            ));
        }
        let categories: Vec<String> = if options.categories.is_empty() {
            CATEGORIES.iter().map(|c| c.to_string()).collect()
        } else {
            options.categories.clone()
        };
        if let Some(c) = options.choices.keys().find(|c| !categories.contains(c)) {
            return Err(design(format!(
                "a shape or combination is given for '{c}', which is not modelled ({})",
                categories.join(", ")
            )));
        }
        let cores = options.cores.or_else(|| {
            let held = held.get("cores").copied()?;
            (held >= 1.0 && held.fract() == 0.0 && held <= f64::from(u32::MAX))
                .then_some(held as u32)
        });
        let mut models = Vec::with_capacity(categories.len());
        let mut observations: Vec<Observations> = Vec::with_capacity(categories.len());
        for category in &categories {
            let obs = data.observations(&names, category, &[])?;
            let choices = options.choices.get(category).cloned().unwrap_or_default();
            models.push(combine_on(&obs, &choices, cores)?);
            observations.push(obs);
        }
        let first = &observations[0];
        let ranges = (0..factors.len())
            .map(|f| {
                let levels = first.levels(f);
                (levels[0], levels[levels.len() - 1])
            })
            .collect();
        let mut model = PerformanceModel {
            kind: Kind::LostCycles,
            name: options.name.clone(),
            factors,
            ranges,
            held,
            categories: models,
            baseline: None,
            provenance: Provenance {
                datafile: data.source().to_string(),
                conditions: options.conditions.iter().map(|c| c.to_string()).collect(),
                lines: first.lines.clone(),
                created_by: options.created_by.clone(),
                predicted: None,
            },
            calibration: None,
            evaluator: None,
        };
        model.baseline = model.corner_plane(&observations);
        model.provenance.predicted = PredictedRows::of(data, &model.factors);
        Ok((model, observations))
    }

    /// The number of processors at a point: the factor `p`, or the held value.
    pub fn processors(&self, point: &[f64]) -> f64 {
        match self.factors.iter().position(|f| f == "p") {
            Some(i) => point[i],
            None => self.held.get("p").copied().unwrap_or(f64::NAN),
        }
    }

    /// What the categories' sum is divided by to give the predicted quantity at a point: `p`
    /// for a lost-cycles model (`T_p` is processor-seconds over `p`), 1 for a response model,
    /// which is in its own units (a response's intervals are not divided by `p`:
    /// docs/comparing.md).
    pub fn divisor(&self, point: &[f64]) -> f64 {
        match self.kind {
            Kind::Response => 1.0,
            Kind::LostCycles => self.processors(point),
        }
    }

    /// Measured `T_p` of each observation: the sum of the categories over `p`.
    fn measured_times(&self, observations: &[Observations]) -> Vec<f64> {
        let first = &observations[0];
        let mut point = vec![0.0; self.factors.len()];
        (0..first.len())
            .map(|row| {
                first.point(row, &mut point);
                observations.iter().map(|o| o.y[row]).sum::<f64>() / self.processors(&point)
            })
            .collect()
    }

    /// The paper's baseline: `1 + n + p` (every factor linearly) fitted by least squares to
    /// `T_p` at the corners of the design. None without every corner.
    fn corner_plane(&self, observations: &[Observations]) -> Option<Fit> {
        let first = &observations[0];
        let times = self.measured_times(observations);
        let at_corner = |row: usize| {
            self.ranges
                .iter()
                .enumerate()
                .all(|(f, &(lo, hi))| first.columns[f][row] == lo || first.columns[f][row] == hi)
        };
        let rows: Vec<usize> = (0..first.len()).filter(|&r| at_corner(r)).collect();
        let corners = Observations {
            source: first.source.clone(),
            factors: self.factors.clone(),
            response: "T_p".into(),
            columns: first
                .columns
                .iter()
                .map(|c| rows.iter().map(|&r| c[r]).collect())
                .collect(),
            y: rows.iter().map(|&r| times[r]).collect(),
            lines: rows.iter().map(|&r| first.lines[r]).collect(),
        };
        let distinct: std::collections::BTreeSet<Vec<u64>> = (0..corners.len())
            .map(|r| corners.columns.iter().map(|c| c[r].to_bits()).collect())
            .collect();
        if distinct.len() < 1 << self.factors.len() {
            return None;
        }
        let plane = Model::parse(&format!("1 + {}", self.factors.join(" + "))).ok()?;
        fit_weighted(&plane, &corners, Weighting::Absolute).ok()
    }

    /// Evaluates a factor-value point given by name (every factor, nothing else).
    pub fn point(&self, values: &[(String, f64)]) -> Result<Vec<f64>, String> {
        point_by_name(&self.factors, values)
    }

    /// Where `point` (one value per factor) leaves the series of factors that varied together
    /// in every run ([`crate::combination::Together::off`]): the prediction there rests on no
    /// run. The first such group of the categories' models, said.
    pub fn off_the_runs(&self, point: &[f64]) -> Option<String> {
        self.categories
            .iter()
            .flat_map(|c| &c.vary_together)
            .find_map(|t| t.off(&self.factors, point))
    }

    /// Predicts `T_p` and every category at a point (one value per factor).
    ///
    /// Each category's interval propagates its coefficient covariance to first order (the
    /// delta method, [`Fit::predict`]) and adds its residual variance. The categories are fitted
    /// to separate responses, so their errors are taken as independent: the variances add, and
    /// the Student t quantile uses the Welch–Satterthwaite degrees of freedom of the sum.
    /// Beyond the data, `T_p`'s intervals (a response model's first response) are widened by
    /// the model's forward validation ([`crate::calibration`]), or, for a model of one factor
    /// with enough rival forms, to hold their mixture ([`crate::rivals::hold`]).
    pub fn predict(&self, point: &[f64]) -> TimePrediction {
        let mut categories: Vec<Prediction> = match &self.evaluator {
            Some(e) => e.categories(point),
            None => self
                .categories
                .iter()
                .map(|c| c.fit.predict(point))
                .collect(),
        };
        let extrapolated = self
            .factors
            .iter()
            .zip(&self.ranges)
            .zip(point)
            .filter(|((_, (lo, hi)), v)| **v < *lo || **v > *hi)
            .map(|((f, _), _)| f.clone())
            .collect();
        let own = self.own_time(point, &categories);
        let reach = crate::calibration::reach(
            &self.factors,
            &self.ranges,
            self.calibration.as_deref(),
            point,
            own.value,
        );
        // Beyond the data of a model of one factor, the interval holds the rival forms' mixture
        // (docs/modelling.md#beyond-the-data), keeping the model's value (its categories still
        // add up to it). With enough rivals their spread is the error of form and forward
        // validation's widening is not added; with fewer it is.
        let rivals = crate::calibration::rivals_beyond(
            &self.factors,
            &self.ranges,
            self.calibration.as_deref(),
            point,
            None,
        );
        let mixture = rivals.and_then(|r| crate::rivals::mixture(r, point));
        let spread = rivals.is_some_and(|r| r.len() >= crate::rivals::MIN_SPREAD);
        let measured = spread && mixture.is_some();
        let time = match (reach, self.spread_of(point, &categories)) {
            (Reach::Calibrated { sd, dof }, Some(spread)) if !measured => {
                let widen = |h: f64, own: f64| crate::calibration::widen(h, own, sd, dof);
                Prediction::bounded(
                    own.value,
                    widen(own.half_width, spread.dof),
                    widen(own.mean_half_width, spread.mean_dof),
                    self.floor(),
                )
            }
            _ => own,
        };
        let (time, reach) = match mixture {
            Some(mix) if time.half_width.is_finite() => {
                let held = crate::rivals::hold(&time, &mix, self.floor());
                // What the crossover adds to the categories' variance for it.
                let z = t_quantile(f64::INFINITY);
                let own_sd = self
                    .spread_of(point, &categories)
                    .map_or(0.0, |s| s.mean.sqrt());
                let sd = ((held.mean_half_width / z).powi(2) - own_sd * own_sd)
                    .max(0.0)
                    .sqrt();
                let reach = match reach {
                    Reach::Calibrated { sd: k, dof } if !measured && k >= sd => {
                        Reach::Calibrated { sd: k, dof }
                    }
                    _ => Reach::Calibrated {
                        sd,
                        dof: f64::INFINITY,
                    },
                };
                (held, reach)
            }
            _ => (time, reach),
        };
        if self.kind == Kind::Response
            && let Some((first, rest)) = categories.split_first_mut()
        {
            *first = time;
            // Each later response is a quantity of its own: beyond the data its interval holds
            // its own rivals' mixture, where the model file has them.
            for (p, c) in rest.iter_mut().zip(&self.categories[1..]) {
                let rivals = crate::calibration::rivals_beyond(
                    &self.factors,
                    &self.ranges,
                    self.calibration.as_deref(),
                    point,
                    Some(&c.category),
                );
                if let Some(mix) = rivals.and_then(|r| crate::rivals::mixture(r, point))
                    && p.half_width.is_finite()
                {
                    *p = crate::rivals::hold(p, &mix, c.fit.floor());
                }
            }
        }
        TimePrediction {
            point: point.to_vec(),
            time,
            categories,
            extrapolated,
            reach,
        }
    }

    /// The least value `T_p` (or the first response) can take: 0 when every category cannot
    /// be negative.
    fn floor(&self) -> f64 {
        let floors = |c: &CategoryModel| c.fit.nonnegative;
        match self.kind {
            Kind::Response => self
                .categories
                .first()
                .map_or(f64::NEG_INFINITY, |c| c.fit.floor()),
            Kind::LostCycles if self.categories.iter().all(floors) => 0.0,
            Kind::LostCycles => f64::NEG_INFINITY,
        }
    }

    /// `T_p` (or the first response) with the fits' own intervals.
    fn own_time(&self, point: &[f64], categories: &[Prediction]) -> Prediction {
        if self.kind == Kind::Response {
            let nothing = Prediction::bounded(f64::NAN, f64::NAN, f64::NAN, f64::NEG_INFINITY);
            return categories.first().copied().unwrap_or(nothing);
        }
        let p = self.processors(point);
        let value = categories.iter().map(|c| c.value).sum::<f64>() / p;
        let half_width = |width: fn(&Prediction) -> f64| {
            let (mut variance, mut denominator) = (0.0, 0.0);
            for (c, pred) in self.categories.iter().zip(categories) {
                let dof = c.fit.dof as f64;
                let s2 = (width(pred) / t_quantile(dof)).powi(2);
                variance += s2;
                if s2 > 0.0 {
                    denominator += s2 * s2 / dof;
                }
            }
            if variance == 0.0 {
                return 0.0;
            }
            t_quantile(variance * variance / denominator) * variance.sqrt() / p
        };
        Prediction::bounded(
            value,
            half_width(|p| p.half_width),
            half_width(|p| p.mean_half_width),
            self.floor(),
        )
    }

    /// The spread of the predicted `T_p` (or first response) from the fits alone, given each
    /// category's prediction there; None without intervals.
    fn spread_of(&self, point: &[f64], categories: &[Prediction]) -> Option<Spread> {
        let divisor = self.divisor(point);
        let used = match self.kind {
            Kind::Response => 1.min(categories.len()),
            Kind::LostCycles => categories.len(),
        };
        let (mut mean, mut total, mut denominator, mut mean_denominator) = (0.0, 0.0, 0.0, 0.0);
        for (c, pred) in self.categories.iter().zip(categories).take(used) {
            let dof = c.fit.dof as f64;
            let t = t_quantile(dof);
            let m = (pred.mean_half_width / t / divisor).powi(2);
            let s2 = (pred.half_width / t / divisor).powi(2);
            if !(m.is_finite() && s2.is_finite()) {
                return None;
            }
            mean += m;
            total += s2;
            if s2 > 0.0 {
                denominator += s2 * s2 / dof;
            }
            if m > 0.0 {
                mean_denominator += m * m / dof;
            }
        }
        let welch = |v: f64, d: f64| if d > 0.0 { v * v / d } else { f64::INFINITY };
        (used > 0).then_some(Spread {
            mean,
            noise: (total - mean).max(0.0),
            dof: welch(total, denominator),
            mean_dof: welch(mean, mean_denominator),
        })
    }

    /// The spread of a prediction of this model, from the fits alone (not widened beyond the
    /// data); None without intervals.
    pub fn time_spread(&self, prediction: &TimePrediction) -> Option<Spread> {
        let mut own = prediction.categories.clone();
        if self.kind == Kind::Response
            && let (Some(first), Some(c)) = (own.first_mut(), self.categories.first())
        {
            *first = c.fit.predict(&prediction.point);
        }
        self.spread_of(&prediction.point, &own)
    }
}

/// The values of `factors`, in their order, from `values` given by name: every factor, nothing
/// else (a name given twice: the last one).
pub fn point_by_name(factors: &[String], values: &[(String, f64)]) -> Result<Vec<f64>, String> {
    if let Some((name, _)) = values.iter().find(|(n, _)| !factors.contains(n)) {
        return Err(format!(
            "unknown factor '{name}' (the model's factors: {})",
            factors.join(", ")
        ));
    }
    factors
        .iter()
        .map(|f| {
            values
                .iter()
                .rev()
                .find(|(n, _)| n == f)
                .map(|(_, v)| *v)
                .ok_or_else(|| format!("no value for factor '{f}'"))
        })
        .collect()
}
