//! `lca report MODEL... [--data DATAFILE] --out DIR`: the HTML report of the models
//! ([`lca::html_report`]).

use std::path::PathBuf;

use anyhow::Result;
use fit::Datafile;

/// Write an HTML report with charts of one or more models (and measured runs).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Model files (one per implementation).
    #[arg(required = true)]
    models: Vec<PathBuf>,
    /// Measured runs to draw against the models: each model gets the rows of its own
    /// implementation (its `--where impl=...`), every row when it has none. With two models,
    /// each model's error on the validation runs among them (`role=validate`, or
    /// --validate-where) widens the verdict's intervals, as `lca crossover --data` does.
    #[arg(long, value_name = "DATAFILE")]
    data: Option<PathBuf>,
    /// The rows of --data that check the models [default: role=validate, when the datafile
    /// has a role column] (repeatable, comma separated).
    #[arg(
        long,
        value_name = "CONDITION",
        value_delimiter = ',',
        requires = "data"
    )]
    validate_where: Vec<String>,
    /// The directory to write `index.html` and `charts/` into.
    #[arg(long, short, value_name = "DIR")]
    out: PathBuf,
    /// The page's title.
    #[arg(long, default_value = "Lost cycles analysis")]
    title: String,
    /// Replace an existing report in DIR.
    #[arg(long)]
    force: bool,
}

/// Runs the command and returns what to print.
pub fn run(args: &Args) -> Result<String> {
    // Before the models' errors and comparisons are computed (checked again when writing).
    files::output::check_new(&args.out.join("index.html"), args.force)?;
    let models = args
        .models
        .iter()
        .map(|m| lca::pace::read_model(m))
        .collect::<Result<Vec<_>, _>>()?;
    let data = args.data.as_deref().map(Datafile::read).transpose()?;
    let validation = match &data {
        Some(data) => lca::validated_error::validation_rows_noted(data, &args.validate_where)?,
        None => None,
    };
    let errors = match (&models[..], &data) {
        ([a, b], Some(data)) => {
            lca::validated_error::model_errors([a, b], data, validation.as_deref())?
        }
        _ => [None, None],
    };
    let models: Vec<_> = models.iter().collect();
    // A PACE model beside the flat model of its implementation (docs/pace.md#against-the-flat-model).
    let comparisons = match (&data, &validation) {
        (Some(data), Some(validation)) => {
            lca::pace::against_flat::compare(&models, data, validation)?
        }
        _ => Vec::new(),
    };
    let extra: String = comparisons.iter().map(|c| c.html()).collect();
    let mut text = String::new();
    for c in &comparisons {
        text += &format!("{}\n{}", c.sentence(), c.text());
    }
    let written = lca::html_report::write(
        &models,
        data.as_ref(),
        &args.title,
        &args.out,
        args.force,
        errors,
        &extra,
    )?;
    // docs/modelling.md, "Completeness check": said once the report is out, so that a refusal
    // stays the one line on standard error.
    if let (Some(data), Some(path)) = (&data, &args.data) {
        let logs = lca::completeness::logs_beside(path);
        eprint!("{}", lca::completeness::report(data, logs.as_deref()));
    }
    Ok(text + &written)
}
