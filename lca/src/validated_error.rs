//! The models' own error, measured on runs they were not built from, for the verdict of
//! `lca crossover --data` and `lca report --data`: without it a verdict's 90% intervals hold
//! only the fitted coefficients' uncertainty, and a model whose forms miss the data by 15% can
//! still be "faster at 90%" (README: three runs of the same study disagreed so).

use anyhow::Result;
use fit::crossover::ValidatedError;
use fit::performance::PerformanceModel;
use fit::{Condition, Datafile};

/// The rows that check a model, unless the user selects others: `lca study`'s validation runs.
pub const VALIDATION_ROWS: &str = "role=validate";

/// The rows of `model`'s implementation: its `--where impl=...`, else its name when `data` has
/// an `impl` column, else every row. None when no row is left.
pub fn implementation_rows(model: &PerformanceModel, data: &Datafile) -> Option<Datafile> {
    let mut implementation: Vec<Condition> = model
        .provenance
        .conditions
        .iter()
        .filter_map(|c| c.parse::<Condition>().ok())
        .filter(|c| c.key == "impl")
        .collect();
    if implementation.is_empty() && data.columns().iter().any(|c| c == "impl") {
        implementation.push(Condition::equals("impl", &model.name));
    }
    data.filter(&implementation).ok()
}

/// The rows of `data` that check the models: those meeting `conditions`, else `role=validate`
/// when `data` has a `role` column. None when neither says (a datafile of the user's own runs,
/// none marked for validation): the models then have no validated error, and the runs still
/// decide at the points both implementations measured.
pub fn validation_rows(data: &Datafile, conditions: &[String]) -> Result<Option<Vec<Condition>>> {
    if !conditions.is_empty() {
        return Ok(Some(Condition::parse_all(conditions)?));
    }
    if !data.columns().iter().any(|c| c == "role") {
        return Ok(None);
    }
    Ok(Some(vec![VALIDATION_ROWS.parse::<Condition>()?]))
}

/// [`validation_rows`], with a note on standard error when there are none
/// ([`no_validation_rows`]): what `lca crossover --data` and `lca report --data` use.
pub fn validation_rows_noted(
    data: &Datafile,
    conditions: &[String],
) -> Result<Option<Vec<Condition>>> {
    let rows = validation_rows(data, conditions)?;
    if rows.is_none() {
        eprintln!("{}", no_validation_rows(data));
    }
    Ok(rows)
}

/// What to say when [`validation_rows`] finds none to choose.
pub fn no_validation_rows(data: &Datafile) -> String {
    format!(
        "note: {} has no role column, so no rows check the models (--validate-where chooses \
         them, e.g. --validate-where 'n in 64,128'): their intervals hold the fitted \
         coefficients' uncertainty alone; the runs still decide at the points both \
         implementations measured",
        data.source()
    )
}

/// Each model's error on the rows of `data` that check it (`validation`, as
/// [`validation_rows`] chose them) within its own implementation's rows: the root mean square
/// relative error of its `T_p` on the points' means
/// ([`fit::validation::Validation::validated_error`]). None for a model with fewer than two
/// such points, and for both when no rows are chosen.
pub fn model_errors(
    models: [&PerformanceModel; 2],
    data: &Datafile,
    validation: Option<&[Condition]>,
) -> Result<[Option<ValidatedError>; 2]> {
    let Some(conditions) = validation else {
        return Ok([None, None]);
    };
    let error = |model: &PerformanceModel| -> Result<Option<ValidatedError>> {
        let Some(rows) = implementation_rows(model, data) else {
            return Ok(None);
        };
        let Ok(rows) = rows.filter(conditions) else {
            return Ok(None);
        };
        Ok(fit::validation::validate(model, &rows)?.validated_error())
    };
    Ok([error(models[0])?, error(models[1])?])
}
