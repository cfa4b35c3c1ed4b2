//! `lca model DATAFILE [--where impl=dp]`: the performance model of one implementation — every
//! category over every factor, shapes combined additively or multiplicatively — as a TOML
//! model file (docs/model-file.md).

mod extrap;

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use fit::combination::{Choices, Combination};
use fit::performance::{BuildOptions, CATEGORIES, PerformanceModel};
use fit::repetitions::Repetitions;
use fit::response::ResponseOptions;
use fit::{Condition, Datafile};

/// Build a performance model (every category over every factor) from a datafile.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Datafile: `key=value` lines (as `pp -l` appends them) or CSV with a header row.
    pub datafile: PathBuf,
    /// Keep only rows that meet a condition: `impl=dp`, `role!=validate`, `p<512` (`<=`, `>`, `>=`), `impl in dp,tp` (repeatable).
    #[arg(long = "where", value_name = "CONDITION", value_delimiter = ',')]
    pub filter: Vec<String>,
    /// Categories to model, comma separated [default: pc,li,ip,sl,cl,rc].
    #[arg(
        long = "cat",
        value_name = "CATEGORIES",
        value_delimiter = ',',
        conflicts_with = "response"
    )]
    pub categories: Vec<String>,
    /// Model these numeric columns instead of lost cycles, each on its own and in its own
    /// units (a latency, an energy): no sum, no division by p. Other columns are ignored, with
    /// a note.
    #[arg(long, value_name = "COLUMNS", value_delimiter = ',')]
    pub response: Vec<String>,
    /// The factors of --response [default: every column holding only numbers that takes more
    /// than one value, other than the responses, the lost-cycles columns (wall, total, li, ...)
    /// and run, replicate].
    #[arg(
        long,
        value_name = "FACTORS",
        value_delimiter = ',',
        requires = "response"
    )]
    pub factors: Vec<String>,
    /// How runs at the same point (replicates) enter a --response or Extra-P model: `all` (each
    /// run an observation, so their spread is in every interval), `median` or `mean` (one
    /// observation per point, as Extra-P does).
    #[arg(
        long,
        value_enum,
        default_value_t,
        value_name = "all|median|mean",
        hide_possible_values = true
    )]
    pub repetitions: Repetitions,
    /// For an Extra-P file: the point at which the table predicts each callpath and metric,
    /// e.g. `--predict p=1024,n=64`.
    #[arg(long, value_name = "FACTOR=VALUE,...")]
    pub predict: Option<String>,
    /// A category's shape along a factor, instead of the best of the defaults, e.g.
    /// `--shape 'li:p=p*sqrt(p)'` (repeatable).
    #[arg(long, value_name = "CAT:FACTOR=EXPR")]
    pub shape: Vec<String>,
    /// A shapes file (TOML: `[li]` then `n = "n*log2(n)"`, one table per category), as if each
    /// entry were a `--shape`; a `--shape` for the same category and factor wins. The paper's
    /// Table 1 is `datasets/data/paper/table1-shapes.toml`.
    #[arg(long, value_name = "FILE")]
    pub shapes: Option<PathBuf>,
    /// Override the combination chosen by allocation of variation: `li=multiplicative`,
    /// or `additive` for every category, or `full` (`a + b*g(n) + c*h(p) + d*g(n)*h(p)`: it
    /// holds either of the others for one more coefficient, the choice when the corner that
    /// would decide between them was not measured) (repeatable).
    #[arg(long, value_name = "[CAT=]additive|multiplicative|full")]
    pub combine: Vec<String>,
    /// The cores of the machine that measured the runs (else a held `cores` column): the
    /// residual test then also looks for rounds of `ceil(p/cores)` (threads beyond the cores
    /// wait their turn).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub cores: Option<u32>,
    /// The implementation's name [default: the value of `--where impl=...`, else the
    /// datafile's name].
    #[arg(long)]
    pub name: Option<String>,
    /// Write the model file here and print the summary; without it (or with `-`) the model
    /// goes to standard output and the summary to standard error.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Replace an existing --out file.
    #[arg(long)]
    pub force: bool,
}

/// Runs the command and returns what to print.
pub fn run(args: &Args) -> Result<String> {
    // Before the fit, which a search can make long.
    if let Some(path) = args.out.as_ref().filter(|p| p.as_os_str() != "-") {
        files::output::check_new(path, args.force)?;
    }
    let repetitions = args.repetitions;
    if fit::extrap::detect_file(&args.datafile) {
        return extrap::run(args, repetitions);
    }
    if args.predict.is_some() {
        bail!("--predict is for Extra-P files; for a model file use `lca predict MODEL --at ...`");
    }
    let conditions = Condition::parse_all(&args.filter)?;
    let data = Datafile::read(&args.datafile)?.filter(&conditions)?;
    if !args.response.is_empty() {
        return responses(args, data, conditions, repetitions);
    }
    if repetitions != Repetitions::All {
        bail!(
            "--repetitions {repetitions}: only for --response and Extra-P files (a lost-cycles \
             model fits every run)"
        );
    }
    let categories: Vec<String> = if args.categories.is_empty() {
        CATEGORIES.iter().map(|c| c.to_string()).collect()
    } else {
        args.categories.clone()
    };
    let name = name(args, &conditions);
    let options = BuildOptions {
        name,
        choices: choices(&shapes(args, &categories)?, &args.combine, &categories)?,
        categories,
        conditions,
        created_by: format!("lca {}", env!("CARGO_PKG_VERSION")),
        cores: args.cores,
    };
    let model = PerformanceModel::build(&data, &options)?;
    let written = output(args, &model, String::new())?;
    // docs/modelling.md, "Completeness check": said once the model is out, so that a refusal
    // stays the one line on standard error.
    let logs = lca::completeness::logs_beside(&args.datafile);
    eprint!("{}", lca::completeness::report(&data, logs.as_deref()));
    if let Some(why) = fit::integer::untested_in(&data, args.cores) {
        eprintln!("{why}");
    }
    Ok(written)
}

/// A model of the `--response` columns.
fn responses(
    args: &Args,
    data: Datafile,
    conditions: Vec<Condition>,
    repetitions: Repetitions,
) -> Result<String> {
    let options = ResponseOptions {
        name: name(args, &conditions),
        choices: choices(
            &shapes(args, &args.response)?,
            &args.combine,
            &args.response,
        )?,
        responses: args.response.clone(),
        factors: args.factors.clone(),
        repetitions,
        conditions,
        created_by: format!("lca {}", env!("CARGO_PKG_VERSION")),
    };
    let (model, roles) = fit::response::build(&data, &options)?;
    let mut note = format!(
        "factors{}: {}",
        if args.factors.is_empty() {
            " (inferred)"
        } else {
            ""
        },
        roles.factors.join(", ")
    );
    if !roles.ignored.is_empty() {
        note.push_str(&format!("; ignored columns: {}", roles.ignored.join(", ")));
    }
    eprintln!("{note}");
    if args.factors.is_empty() {
        eprintln!(
            "warning: --response without --factors: the factors were guessed as every numeric \
             column that varies ({}); name them with --factors (docs/modelling.md)",
            roles.factors.join(", ")
        );
    }
    output(args, &model, String::new())
}

/// Writes the model where `--out` says, and returns what to print.
pub fn output(args: &Args, model: &PerformanceModel, table: String) -> Result<String> {
    let summary = table + &reports::model::summary(model);
    match &args.out {
        Some(path) if path.as_os_str() != "-" => {
            fit::model_file::save(model, path, args.force)?;
            Ok(format!("{summary}model written to {}\n", path.display()))
        }
        _ => {
            let text = fit::model_file::written(model, "-o -")?;
            eprint!("{summary}");
            Ok(text)
        }
    }
}

/// The model's name: `--name`, else the value of `--where impl=...`, else the file's stem.
pub fn name(args: &Args, conditions: &[Condition]) -> String {
    args.name.clone().unwrap_or_else(|| {
        conditions
            .iter()
            .find(|c| c.key == "impl")
            .and_then(|c| c.equal_value())
            .map(str::to_string)
            .unwrap_or_else(|| {
                args.datafile
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
    })
}

/// The `--shape`s, after the `--shapes` file's entries (so that they win: the later one of a
/// category and factor is kept).
fn shapes(args: &Args, categories: &[String]) -> Result<Vec<String>> {
    let mut all = Vec::new();
    if let Some(path) = &args.shapes {
        for (category, factor, expr) in lca::shapes::read(path)? {
            if !categories.contains(&category) {
                bail!(
                    "{}: [{category}]: not a modelled category ({}; --cat chooses them)",
                    path.display(),
                    categories.join(", ")
                );
            }
            all.push(format!("{category}:{factor}={expr}"));
        }
    }
    all.extend(args.shape.iter().cloned());
    Ok(all)
}

/// The user's shapes and combinations, by category.
pub fn choices(
    shapes: &[String],
    combines: &[String],
    categories: &[String],
) -> Result<BTreeMap<String, Choices>> {
    let mut choices: BTreeMap<String, Choices> = BTreeMap::new();
    let known = |category: &str, option: &str| -> Result<()> {
        if categories.iter().any(|c| c == category) {
            Ok(())
        } else {
            bail!(
                "{option}: '{category}' is not a modelled category ({})",
                categories.join(", ")
            )
        }
    };
    for spec in shapes {
        let error = || anyhow!("--shape '{spec}': expected CAT:FACTOR=EXPR, like li:p=p*sqrt(p)");
        let (category, rest) = spec.split_once(':').ok_or_else(error)?;
        let (factor, expr) = rest.split_once('=').ok_or_else(error)?;
        let (category, factor, expr) = (category.trim(), factor.trim(), expr.trim());
        if category.is_empty() || factor.is_empty() || expr.is_empty() {
            return Err(error());
        }
        known(category, "--shape")?;
        let entry = choices.entry(category.to_string()).or_default();
        entry.shapes.insert(factor.to_string(), expr.to_string());
    }
    for spec in combines {
        let (targets, how) = match spec.split_once('=') {
            Some((category, how)) => {
                known(category.trim(), "--combine")?;
                (vec![category.trim().to_string()], how)
            }
            None => (categories.to_vec(), spec.as_str()),
        };
        let combination: Combination = how
            .trim()
            .parse()
            .map_err(|e| anyhow!("--combine '{spec}': {e}"))?;
        for category in targets {
            choices.entry(category).or_default().combination = Some(combination);
        }
    }
    Ok(choices)
}
