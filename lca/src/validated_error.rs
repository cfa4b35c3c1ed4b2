//! The models' own error, measured on runs they were not built from, for the verdict of
//! `lca crossover --data` and `lca report --data`: without it a verdict's 90% intervals hold
//! only the fitted coefficients' uncertainty, and a model whose forms miss the data by 15% can
//! still be "faster at 90%" (README: three runs of the same study disagreed so).

use anyhow::{Result, anyhow};
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

/// Each model's error on the rows of `data` that meet `conditions` (default: `role=validate`
/// when `data` has a `role` column, else an error saying how to choose them) within its own
/// implementation's rows: the root mean square relative error of its `T_p` on the points'
/// means ([`fit::validation::Validation::validated_error`]). None for a model with fewer than two
/// such points.
pub fn model_errors(
    models: [&PerformanceModel; 2],
    data: &Datafile,
    conditions: &[String],
) -> Result<[Option<ValidatedError>; 2]> {
    let conditions = if conditions.is_empty() {
        if !data.columns().iter().any(|c| c == "role") {
            return Err(anyhow!(
                "{}: no role column to tell validation runs from the runs the models were built \
                 from; choose them with --validate-where (e.g. --validate-where 'n in 64,128')",
                data.source()
            ));
        }
        vec![VALIDATION_ROWS.parse::<Condition>()?]
    } else {
        Condition::parse_all(conditions)?
    };
    let error = |model: &PerformanceModel| -> Result<Option<ValidatedError>> {
        let Some(rows) = implementation_rows(model, data) else {
            return Ok(None);
        };
        let Ok(rows) = rows.filter(&conditions) else {
            return Ok(None);
        };
        Ok(fit::validation::validate(model, &rows)?.validated_error())
    };
    Ok([error(models[0])?, error(models[1])?])
}
