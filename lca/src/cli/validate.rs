//! `lca validate MODEL DATAFILE`: measured against predicted `T_p` on every run, with the
//! paper's corner-plane baseline on the same runs.

use std::path::PathBuf;

use anyhow::Result;
use fit::{Condition, Datafile};
use reports::Format;

/// Check a model's predictions against measured runs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The model file.
    model: PathBuf,
    /// Datafile of measured runs (e.g. points the model was not built from).
    datafile: PathBuf,
    /// Keep only rows where a column has a value [default: the model's own selection, e.g.
    /// impl=dp].
    #[arg(long = "where", value_name = "CONDITION", value_delimiter = ',')]
    filter: Vec<String>,
    /// Output format: text, csv or json.
    #[arg(
        long,
        value_enum,
        default_value_t,
        value_name = "FORMAT",
        hide_possible_values = true
    )]
    format: Format,
}

/// Runs the command and returns what to print.
pub fn run(args: &Args) -> Result<String> {
    let format = args.format;
    let model = lca::pace::read_model(&args.model)?;
    let filter = if args.filter.is_empty() {
        &model.provenance.conditions
    } else {
        &args.filter
    };
    let conditions = Condition::parse_all(filter)?;
    let data = Datafile::read(&args.datafile)?.filter(&conditions)?;
    let validation = fit::validation::validate(&model, &data)?;
    let mut source = args.datafile.display().to_string();
    if !conditions.is_empty() {
        let c: Vec<String> = conditions.iter().map(|c| c.to_string()).collect();
        source += &format!(" where {}", c.join(", "));
    }
    // Rows pp whatif predicted (a study's [whatif] points) are not measurements: say so.
    if let Some(p) = fit::performance::PredictedRows::of(&data, &model.factors) {
        source += &format!(
            " ({}, not measured)",
            p.describe(&model.factors, &model.ranges)
        );
        if model.evaluator.is_some() {
            eprintln!(
                "note: a PACE model predicts the machine of its hardware layer, and pp whatif's \
                 rows another (demand:cpu: a processor per thread), so the error compares two \
                 predictions; `lca pace predict --cores N` swaps the layer's cores \
                 (docs/pace.md)"
            );
        }
    }
    Ok(reports::validation::validation(
        &model,
        &validation,
        &source,
        format,
    ))
}
