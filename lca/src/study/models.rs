//! The fit phase: each implementation's performance model, built from its model runs (the
//! design's and those `[decide]` chose), saved in the study's folder with its summary, and
//! checked on its validation runs. The models come back in memory, for [`super::decide`] and
//! [`super::report`].

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use fit::combination::Choices;
use fit::crossover::ValidatedError;
use fit::performance::{BuildOptions, PerformanceModel};
use fit::{Condition, Datafile};
use reports::Format;

use super::datafile::Rows;
use super::file::{Implementation, Study};
use super::plan::{Key, Point, Role};

/// One implementation's model and how it fared: a line of the summary's table.
#[derive(Debug)]
pub struct Fitted {
    /// The implementation's name.
    pub name: String,
    /// The rows it was built from.
    pub model_runs: usize,
    /// The rows it was checked on.
    pub validation_runs: usize,
    /// The model, once built and saved.
    pub model: Option<PerformanceModel>,
    /// Where it was saved.
    pub model_file: Option<PathBuf>,
    /// Mean and largest relative error of its `T_p` on the validation runs.
    pub errors: Option<(f64, f64)>,
    /// The same for the paper's corner plane.
    pub baseline: Option<(f64, f64)>,
    /// Why it was not built, or not checked.
    pub problem: Option<String>,
    /// What not to trust in the model: `category: warning` lines.
    pub warnings: Vec<String>,
    /// Its error on the validation points' means, for the verdict.
    pub validated_error: Option<ValidatedError>,
}

/// Builds, saves and validates the model of every implementation of the study from the rows
/// of its `points`, in the study's order. A model that cannot be built or checked says why in
/// its [`Fitted::problem`].
pub fn fit(study: &Study, points: &[Point], rows: &Rows) -> Vec<Fitted> {
    (0..study.implementations.len())
        .map(|i| {
            let keys = |roles: &[Role]| -> HashSet<Key> {
                points
                    .iter()
                    .filter(|p| p.implementation == i && roles.contains(&p.role))
                    .map(|p| p.key(study))
                    .collect()
            };
            // The runs `[decide]` chose are fitted as the design's are.
            let model_rows = rows.select(&keys(&[Role::Model, Role::Decide]));
            let validation_rows = rows.select(&keys(&[Role::Validate]));
            let implementation = &study.implementations[i];
            let mut fitted = Fitted {
                name: implementation.name.clone(),
                model_runs: model_rows.as_ref().map_or(0, |d| d.rows().len()),
                validation_runs: validation_rows.as_ref().map_or(0, |d| d.rows().len()),
                model: None,
                model_file: None,
                errors: None,
                baseline: None,
                problem: None,
                warnings: Vec::new(),
                validated_error: None,
            };
            let built = build(
                study,
                implementation,
                model_rows,
                validation_rows,
                &mut fitted,
            );
            if let Err(e) = built {
                fitted.problem = Some(format!("{e:#}"));
            }
            fitted
        })
        .collect()
}

/// Builds the model of `implementation` from `model_rows`, saves it with its summary, then
/// checks it on `validation_rows`, filling in `fitted`.
fn build(
    study: &Study,
    implementation: &Implementation,
    model_rows: Option<Datafile>,
    validation_rows: Option<Datafile>,
    fitted: &mut Fitted,
) -> Result<()> {
    let Some(data) = model_rows else {
        anyhow::bail!("no runs of the design were measured");
    };
    // One model of both roles: `role` takes two values there, neither a factor nor fixed.
    let data = data.filter(&["role in model,decide".parse::<Condition>()?])?;
    let conditions: Vec<Condition> = [
        format!("impl={}", implementation.name),
        "role=model".to_string(),
    ]
    .iter()
    .map(|c| c.parse())
    .collect::<Result<_, _>>()?;
    let options = BuildOptions {
        name: implementation.name.clone(),
        categories: Vec::new(),
        choices: choices(study),
        conditions,
        created_by: format!("lca {} study {}", env!("CARGO_PKG_VERSION"), study.name),
        // As `lca model` without --cores: the model does not depend on the machine that
        // fits it (docs/modelling.md#integer-structure).
        cores: None,
    };
    let (model, fallbacks) = super::fallback::build(&data, &options)?;
    let path = study.out.join(format!("{}.toml", implementation.name));
    // The study owns its output folder: its model files are replaced on every run.
    fit::model_file::save(&model, &path, true)?;
    let mut summary = reports::model::summary(&model);
    if let Some(why) = fit::integer::untested_in(&data, None) {
        summary.push_str(&why);
        summary.push('\n');
    }
    write(
        &study.out.join(format!("{}-model.txt", implementation.name)),
        &summary,
    )?;
    fitted.model_file = Some(path);
    let fallen_back = fallbacks.len();
    fitted.warnings = fallbacks;
    fitted.warnings.extend(warnings(&model));
    let model = &*fitted.model.insert(model);
    if let Some(data) = validation_rows {
        // A `[whatif]` validation point's rows are pp whatif's, so its T_p error is against
        // a prediction: say so beside the error.
        if let Some(p) = fit::performance::PredictedRows::of(&data, &model.factors) {
            // After the model's own `predicted, not measured` line ([`warnings`]' first).
            let after = match model.provenance.predicted {
                Some(_) => fallen_back + 1,
                None => 0,
            };
            fitted.warnings.insert(
                after,
                format!(
                    "validation runs predicted, not measured: {} of {} (the T_p error there \
                     is against pp whatif's prediction)",
                    p.rows, p.of
                ),
            );
        }
        let validation = fit::validation::validate(model, &data)?;
        let e = validation.model_errors();
        fitted.errors = Some((e.mean, e.max));
        fitted.validated_error = validation.validated_error();
        fitted.baseline = validation.baseline_errors().map(|b| (b.mean, b.max));
        let where_ = format!(
            "{} where impl={}, role=validate",
            data.source(),
            implementation.name
        );
        write(
            &study
                .out
                .join(format!("{}-validation.txt", implementation.name)),
            &reports::validation::validation(model, &validation, &where_, Format::Text),
        )?;
    }
    Ok(())
}

/// The study's `[shapes]`, by category, as `lca model --shape` gives them.
fn choices(study: &Study) -> BTreeMap<String, Choices> {
    let mut choices: BTreeMap<String, Choices> = BTreeMap::new();
    for s in &study.shapes {
        choices
            .entry(s.category.clone())
            .or_default()
            .shapes
            .insert(s.factor.clone(), s.expr.clone());
    }
    choices
}

/// What not to trust in `model`: the rows it rests on that were predicted, then each
/// category's warnings, as `category: warning` lines.
fn warnings(model: &PerformanceModel) -> Vec<String> {
    let mut warnings: Vec<String> = model
        .categories
        .iter()
        .flat_map(|c| {
            reports::model::warnings(c)
                .into_iter()
                .map(move |w| format!("{}: {w}", c.category))
        })
        .collect();
    warnings.extend(reports::model::together(model));
    if let Some(p) = &model.provenance.predicted {
        warnings.insert(
            0,
            format!(
                "predicted, not measured: {}",
                p.describe(&model.factors, &model.ranges)
            ),
        );
    }
    warnings
}

/// Writes a text file of the study's folder.
pub(super) fn write(path: &Path, text: &str) -> Result<()> {
    files::output::write(path, text.as_bytes()).map_err(|e| anyhow!("{e}"))
}
