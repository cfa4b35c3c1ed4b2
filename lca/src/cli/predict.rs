//! `lca predict MODEL --at n=512,p=12` or `--grid n=32..1024:log2,p=2..26:lin:5`: `T_p` and
//! every category with 90% prediction intervals.

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use design::{Design, plan};
use fit::performance::PerformanceModel;
use reports::Format;

/// Predict run time and lost cycles from a model file.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The model file (from `lca model`, or written by hand).
    model: PathBuf,
    /// A point: every factor's value, e.g. `--at n=512,p=12` (repeatable).
    #[arg(long, value_name = "FACTOR=VALUE,...")]
    at: Vec<String>,
    /// Every point of a grid: each factor as `lca design` takes it, e.g.
    /// `--grid n=32..1024:log2,p=2..26:lin:5` or `--grid p=2,4,8 --grid n=256`. A point
    /// outside the model's domain (a log of 0, p <= 0, ...) refuses the whole grid, naming it.
    #[arg(long, value_name = "FACTOR=LEVELS,...")]
    grid: Vec<String>,
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
    if args.at.is_empty() && args.grid.is_empty() {
        bail!("give a point (--at n=512,p=12) or a grid (--grid n=32..1024:log2,p=2..26:lin:5)");
    }
    let mut points = Vec::new();
    for spec in &args.at {
        let values = super::specs::values(spec)?;
        points.push(
            model
                .point(&values)
                .map_err(|e| anyhow!("--at '{spec}': {e}"))?,
        );
    }
    if !args.grid.is_empty() {
        points.extend(grid(&model, &args.grid)?);
    }
    // A point outside the model's domain refuses the whole output, naming the first such
    // point: a table with holes is easily misread.
    let mut predictions = Vec::with_capacity(points.len());
    let mut outside = Vec::new();
    for point in &points {
        match model.try_predict(point) {
            Ok(p) => predictions.push(p),
            Err(e) => outside.push(e),
        }
    }
    match outside.first() {
        None => {}
        Some(e) if points.len() == 1 => bail!("{e}"),
        Some(e) => bail!(
            "{} of the {} points are outside the model's domain, the first: {e}",
            outside.len(),
            points.len()
        ),
    }
    if let Some(note) = unrunnable(&model.factors, &points) {
        eprintln!("note: {note}");
    }
    if let Some(note) = off_the_runs(&model, &points) {
        eprintln!("note: {note}");
    }
    Ok(reports::prediction::predictions(
        &model,
        &predictions,
        format,
    ))
}

/// What to say of points whose processor count `p` is not a whole number: a model answers
/// there, but no run can measure such a point (docs/comparing.md, "Runnable values").
fn unrunnable(factors: &[String], points: &[Vec<f64>]) -> Option<String> {
    let k = factors.iter().position(|f| f == "p")?;
    let fractional: Vec<f64> = points
        .iter()
        .map(|point| point[k])
        .filter(|p| p.fract() != 0.0)
        .collect();
    let first = *fractional.first()?;
    let which = match fractional.len() {
        1 if points.len() == 1 => format!("p={first}"),
        n => format!("{n} of the {} points (the first p={first})", points.len()),
    };
    Some(format!(
        "{which}: p is not a whole number of processors, so no run can measure the prediction"
    ))
}

/// What to say of points where factors that varied together in every run do not go together
/// as they did (docs/modelling.md#factors-that-vary-together).
fn off_the_runs(model: &PerformanceModel, points: &[Vec<f64>]) -> Option<String> {
    let mut off = points.iter().filter_map(|p| model.off_the_runs(p));
    let first = off.next()?;
    Some(match 1 + off.count() {
        1 => first,
        n => format!("{n} of the {} points, the first: {first}", points.len()),
    })
}

/// The points of the full factorial over the grid's factors, in the model's factor order.
fn grid(model: &PerformanceModel, specs: &[String]) -> Result<Vec<Vec<f64>>> {
    let factors = super::specs::factors(specs, "--grid")?;
    let plan = plan(&factors, Design::Full, 1, None).map_err(|e| {
        let message = e.to_string().replace("--factor", "--grid");
        anyhow!("--grid: {}", message.replace("the design", "the grid"))
    })?;
    plan.runs
        .iter()
        .map(|run| {
            let values: Vec<(String, f64)> = plan
                .factors
                .iter()
                .cloned()
                .zip(run.values.iter().copied())
                .collect();
            model.point(&values).map_err(|e| anyhow!("--grid: {e}"))
        })
        .collect()
}
