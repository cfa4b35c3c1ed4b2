//! Response models: any numeric column (a latency, an energy, Extra-P's metrics), modelled over
//! the factors in its own units, each response on its own ([`Kind::Response`]): no sum over
//! categories, no division by `p`.

use std::collections::BTreeMap;

use crate::combination::{Choices, combine};
use crate::observations::{Cell, Condition, Datafile, Observations, RUN_COLUMNS, excerpt};
use crate::performance::{BuildError, Kind, PerformanceModel, Provenance};
use crate::repetitions::{Repetitions, summarise};

/// What the user chose for a response model.
#[derive(Debug, Clone, Default)]
pub struct ResponseOptions {
    /// The model's name.
    pub name: String,
    /// The responses (columns), at least one.
    pub responses: Vec<String>,
    /// The factors; empty means inferred by [`columns`].
    pub factors: Vec<String>,
    /// How replicates enter the fits.
    pub repetitions: Repetitions,
    /// Shapes and combinations fixed by the user, by response.
    pub choices: BTreeMap<String, Choices>,
    /// The `--where` conditions applied to the datafile (for provenance).
    pub conditions: Vec<Condition>,
    /// The program building the model, for provenance.
    pub created_by: String,
}

/// The roles of a datafile's columns in a response model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Columns {
    /// The factors, in the file's column order (or as the user gave them).
    pub factors: Vec<String>,
    /// Numeric columns with one value in every row (kept in the model as `held`).
    pub held: BTreeMap<String, f64>,
    /// Every other column: not used, never blocking.
    pub ignored: Vec<String>,
}

/// The columns' roles. With `factors` given they are the factors; without, the factors are the
/// columns holding only numbers that take more than one value, other than the responses, the
/// lost-cycles outputs (`wall`, `total`, `li`, ... and their sub-categories) and the run columns
/// (`run`, `replicate`). Numeric columns with one value are held; all else is ignored.
pub fn columns(
    data: &Datafile,
    responses: &[String],
    factors: &[String],
) -> Result<Columns, BuildError> {
    let design = |message: String| BuildError::Design {
        file: data.source().to_string(),
        message,
    };
    for name in responses.iter().chain(factors) {
        if !data.columns().contains(name) {
            let what = if responses.contains(name) {
                "response"
            } else {
                "factor"
            };
            let known: Vec<String> = data.numeric_columns().iter().map(|c| excerpt(c)).collect();
            return Err(design(format!(
                "unknown {what} '{}'; the numeric columns are: {}",
                excerpt(name),
                known.join(", ")
            )));
        }
        if factors.contains(name) && responses.contains(name) {
            let name = excerpt(name);
            return Err(design(format!(
                "'{name}' is named both as a factor and as a response"
            )));
        }
    }
    let mut out = Columns {
        factors: factors.to_vec(),
        ..Columns::default()
    };
    for column in data.columns() {
        if responses.contains(column) || factors.contains(column) {
            continue;
        }
        let mut numbers: Vec<f64> = Vec::new();
        let mut text = false;
        for row in 0..data.rows().len() {
            match data.cell(row, column) {
                Some(Cell::Number(x)) => numbers.push(x),
                Some(Cell::Text(_)) | None => text = true,
            }
        }
        numbers.sort_by(f64::total_cmp);
        numbers.dedup();
        let output = crate::observations::is_response_column(column)
            || RUN_COLUMNS.contains(&column.as_str());
        match (text, numbers.len()) {
            (false, 1) => {
                out.held.insert(column.clone(), numbers[0]);
            }
            (false, n) if n > 1 && factors.is_empty() && !output => {
                out.factors.push(column.clone())
            }
            _ => out.ignored.push(column.clone()),
        }
    }
    if out.factors.is_empty() {
        return Err(design(
            "no numeric column other than the responses varies between the rows: there is no \
             factor to model (name them with --factors)"
                .into(),
        ));
    }
    Ok(out)
}

/// Builds the model of every response from the (already filtered) datafile, and says which
/// columns were ignored.
pub fn build(
    data: &Datafile,
    options: &ResponseOptions,
) -> Result<(PerformanceModel, Columns), BuildError> {
    let roles = columns(data, &options.responses, &options.factors)?;
    let names: Vec<&str> = roles.factors.iter().map(String::as_str).collect();
    let observations = options
        .responses
        .iter()
        .map(|r| data.response_observations(&names, r))
        .collect::<Result<Vec<_>, _>>()?;
    let provenance = Provenance {
        datafile: data.source().to_string(),
        conditions: options.conditions.iter().map(|c| c.to_string()).collect(),
        lines: observations[0].lines.clone(),
        created_by: options.created_by.clone(),
        predicted: None,
    };
    let mut model = from_observations(
        &options.name,
        observations,
        options.repetitions,
        &options.choices,
        provenance,
    )?;
    model.held = roles.held.clone();
    model.provenance.predicted = crate::performance::PredictedRows::of(data, &model.factors);
    Ok((model, roles))
}

/// A response model from observations of one response each over the same factors (the
/// responses' names are the categories' names), replicates summarised as `repetitions` says,
/// with the forward validation of its first response ([`crate::calibration::forward`]).
pub fn from_observations(
    name: &str,
    observations: Vec<Observations>,
    repetitions: Repetitions,
    choices: &BTreeMap<String, Choices>,
    provenance: Provenance,
) -> Result<PerformanceModel, BuildError> {
    let mut model = uncalibrated(
        name,
        observations.clone(),
        repetitions,
        choices,
        provenance.clone(),
    )?;
    let first = &observations[0];
    let same_rows = observations.iter().all(|o| o.len() == first.len());
    let points: Vec<Vec<f64>> = (0..first.len())
        .map(|row| {
            let mut point = vec![0.0; first.factors.len()];
            first.point(row, &mut point);
            point
        })
        .collect();
    let mut calibration = if same_rows {
        let own = model.categories.first().map(|c| c.fit.clone());
        crate::calibration::forward(&model, &points, &first.y, own.as_ref(), |rows| {
            let kept = observations.iter().map(|o| rows_of(o, rows)).collect();
            uncalibrated(name, kept, repetitions, choices, provenance.clone()).ok()
        })
    } else {
        Vec::new()
    };
    // Over one factor, each later response's own rivals: beyond the data its interval holds
    // them too (docs/model-file.md), as the first response's holds its own.
    if let [factor] = &model.factors[..] {
        for o in observations.iter().skip(1) {
            let Some(c) = model.categories.iter().find(|c| c.category == o.response) else {
                continue;
            };
            let rivals = crate::rivals::rivals(o, Some(&c.fit));
            if !rivals.is_empty() {
                calibration.push(crate::calibration::Calibration::rivals_only(
                    factor,
                    rivals,
                    Some(o.response.clone()),
                ));
            }
        }
    }
    model.calibration = Some(calibration);
    Ok(model)
}

/// The observations at `rows`, in that order.
fn rows_of(o: &Observations, rows: &[usize]) -> Observations {
    Observations {
        source: o.source.clone(),
        factors: o.factors.clone(),
        response: o.response.clone(),
        columns: o
            .columns
            .iter()
            .map(|c| rows.iter().map(|&r| c[r]).collect())
            .collect(),
        y: rows.iter().map(|&r| o.y[r]).collect(),
        lines: rows.iter().map(|&r| o.lines[r]).collect(),
    }
}

fn uncalibrated(
    name: &str,
    observations: Vec<Observations>,
    repetitions: Repetitions,
    choices: &BTreeMap<String, Choices>,
    provenance: Provenance,
) -> Result<PerformanceModel, BuildError> {
    let Some(first) = observations.first() else {
        let message = "no response to model".to_string();
        let file = provenance.datafile.clone();
        return Err(BuildError::Design { file, message });
    };
    let factors = first.factors.clone();
    let mut ranges = vec![(f64::INFINITY, f64::NEG_INFINITY); factors.len()];
    let mut categories = Vec::with_capacity(observations.len());
    for obs in observations {
        for (range, column) in ranges.iter_mut().zip(&obs.columns) {
            for &x in column {
                *range = (range.0.min(x), range.1.max(x));
            }
        }
        let obs = summarise(obs, repetitions);
        let choice = choices.get(&obs.response).cloned().unwrap_or_default();
        categories.push(combine(&obs, &choice)?);
    }
    Ok(PerformanceModel {
        kind: Kind::Response,
        name: name.to_string(),
        factors,
        ranges,
        held: BTreeMap::new(),
        categories,
        baseline: None,
        provenance,
        calibration: None,
        evaluator: None,
    })
}
