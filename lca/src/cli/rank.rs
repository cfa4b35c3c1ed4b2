//! `lca DATAFILE --var p --cat li`: rank candidate models of one lost-cycles category against
//! one factor (the paper's Figure 2).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use fit::observations::excerpt;
use fit::{Condition, Datafile, Model, Observations, RankBy, Ranking, Weighting};
use reports::Format;
use reports::number::significant;
use reports::ranking::RankingReport;

/// How many models `--search` adds to the ranking.
const SEARCH_KEEP: usize = 5;

/// Rank models of one lost-cycles category against one factor.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Datafile: `key=value` lines (as `pp -l` appends them) or CSV with a header row.
    #[arg(required = true)]
    pub datafile: Option<PathBuf>,
    /// The factor that varies (e.g. `p`, `n`).
    #[arg(long, value_name = "FACTOR", required = true)]
    pub var: Option<String>,
    /// The category (or any numeric column) to model: pc, li, ip, sl, cl, rc, ...
    #[arg(long, value_name = "COLUMN", required = true)]
    pub cat: Option<String>,
    /// A model of your own, e.g. `1 + p*log2(p)` or `max(p-$theta,0)`; repeatable.
    #[arg(long = "model", value_name = "EXPR")]
    pub models: Vec<String>,
    /// Hold another factor fixed, e.g. `--at n=256` (repeatable, or comma separated).
    #[arg(long, value_name = "FACTOR=VALUE", value_delimiter = ',')]
    pub at: Vec<String>,
    /// Keep only rows that meet a condition: `impl=dp`, `role!=validate`, `p<512` (`<=`, `>`, `>=`), `impl in dp,tp` (repeatable).
    #[arg(long = "where", value_name = "CONDITION", value_delimiter = ',')]
    pub filter: Vec<String>,
    /// Order of the ranking: r2 (the paper's), adj-r2, or cv (leave-one-out error); by
    /// default r2, and cv with --search (R² always favours more terms).
    #[arg(long, value_enum, value_name = "STAT", hide_possible_values = true)]
    pub rank: Option<RankBy>,
    /// Also search sums of up to two terms x^i*log2(x)^j plus a constant (fitted to relative
    /// error unless a value is zero); on a whole-numbered factor, integer terms too when the
    /// best smooth model's residuals show `x mod k` or rounds structure.
    #[arg(long)]
    pub search: bool,
    /// The cores of the machine that measured the runs: --search then also tests for rounds
    /// of `ceil(x/cores)`.
    #[arg(long, value_name = "N", requires = "search", value_parser = clap::value_parser!(u32).range(1..))]
    pub cores: Option<u32>,
    /// Fit every model to relative error ((y-f)/y)² instead of absolute error, for data
    /// whose noise grows with the value.
    #[arg(long)]
    pub relative: bool,
    /// Predict at a point with a 90% prediction interval, e.g. `--predict p=1024`. Each
    /// interval also holds the spread of the other ranked models' predictions there, weighted
    /// by how well each predicts left-out runs (model-selection uncertainty); with --search,
    /// beyond the data it also holds the 90% interval of the forms that fit as well.
    #[arg(long, value_name = "FACTOR=VALUE")]
    pub predict: Vec<String>,
    /// Output format: text, json or csv.
    #[arg(
        long,
        value_enum,
        default_value_t,
        value_name = "FORMAT",
        hide_possible_values = true
    )]
    pub format: Format,
    /// Draw the measured points and every fitted curve to an .svg or .png file.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Replace an existing --plot FILE.
    #[arg(long, requires = "plot")]
    pub force: bool,
}

/// The options, validated.
struct Config {
    var: String,
    cat: String,
    datafile: Datafile,
    at: Vec<(String, f64)>,
    filter: Vec<Condition>,
    rank: RankBy,
    format: Format,
    user_models: Vec<Model>,
    predict: Vec<f64>,
}

fn validate(args: &Args) -> Result<Config> {
    // Required by clap; optional in the type only because `lca design` shares the parser.
    let required = |value: &Option<String>, option: &str| {
        value
            .clone()
            .ok_or_else(|| anyhow::anyhow!("{option} is required"))
    };
    let (var, cat) = (required(&args.var, "--var")?, required(&args.cat, "--cat")?);
    let Some(datafile_path) = &args.datafile else {
        bail!("a DATAFILE is required");
    };
    let rank = match args.rank {
        Some(rank) => rank,
        None if args.search => RankBy::Cv,
        None => RankBy::R2,
    };
    let format = args.format;
    let conditions = |option: &str, values: &[String]| -> Result<Vec<Condition>> {
        values
            .iter()
            .map(|v| v.parse::<Condition>().with_context(|| option.to_string()))
            .collect()
    };
    let at = conditions("--at", &args.at)?
        .iter()
        .map(|c| c.to_at().context("--at"))
        .collect::<Result<Vec<_>>>()?;
    let filter = Condition::parse_all(&args.filter).context("--where")?;
    let user_models = args
        .models
        .iter()
        .map(|m| Model::parse(m).context("--model"))
        .collect::<Result<Vec<_>>>()?;
    let predict = conditions("--predict", &args.predict)?
        .iter()
        .map(|c| {
            let (factor, value) = c.to_at().context("--predict")?;
            if factor != var {
                bail!("--predict {c}: predictions are along --var {var}");
            }
            Ok(value)
        })
        .collect::<Result<Vec<_>>>()?;
    if let Some(plot) = &args.plot {
        reports::chart::ChartFormat::from_path(plot).context("--plot")?;
        files::output::check_new(plot, args.force).context("--plot")?;
    }
    let datafile = read_datafile(datafile_path)?;
    for (option, name) in [("--var", &var), ("--cat", &cat)] {
        if !datafile.columns().iter().any(|c| c == name) {
            let numeric = datafile.numeric_columns();
            let mut numeric: Vec<String> = numeric.iter().take(12).map(|c| excerpt(c)).collect();
            if datafile.numeric_columns().len() > 12 {
                numeric.push("...".into());
            }
            bail!(
                "{option} '{}': {} has no such column (numeric columns: {})",
                excerpt(name),
                datafile.source(),
                numeric.join(", ")
            );
        }
    }
    Ok(Config {
        var,
        cat,
        datafile,
        at,
        filter,
        rank,
        format,
        user_models,
        predict,
    })
}

fn read_datafile(path: &Path) -> Result<Datafile> {
    Ok(Datafile::read(path)?)
}

/// Runs the command and returns the report to print.
pub fn run(args: &Args) -> Result<String> {
    let config = validate(args)?;
    let weighting = if args.relative {
        Weighting::Relative
    } else {
        Weighting::Absolute
    };
    let data = config.datafile.filter(&config.filter)?;
    let obs = data.observations(&[config.var.as_str()], &config.cat, &config.at)?;

    // The user's models must fit: their failures are errors, not skipped candidates.
    let mut ranking = Ranking::default();
    for model in &config.user_models {
        ranking
            .fits
            .push(fit::fit_weighted(model, &obs, weighting).context("--model")?);
    }
    let defaults: Vec<Model> = fit::default_candidates(&config.cat, &config.var)
        .iter()
        .map(|m| Model::parse(m).expect("default candidates parse"))
        .filter(|m| config.user_models.iter().all(|u| u.text() != m.text()))
        .collect();
    let candidates = fit::rank(&obs, &defaults, config.rank, weighting);
    ranking.fits.extend(candidates.fits);
    ranking.skipped.extend(candidates.skipped);
    let mut integer_note = None;
    if args.search {
        let searched = fit::search::search_integer(&obs, 0, SEARCH_KEEP, args.cores);
        integer_note = integer_note_of(&searched, &config.var);
        ranking.fits.extend(searched.fits);
    }
    if ranking.fits.is_empty() {
        match ranking.skipped.first() {
            Some(first) => bail!("no candidate model fits these observations: {first}"),
            None => bail!("no candidate model to fit"),
        }
    }
    fit::ranking::sort(&mut ranking.fits, config.rank);
    // Beyond the data the searched forms part: every interval holds their spread there
    // (docs/modelling.md#beyond-the-data).
    if args.search && !config.predict.is_empty() {
        ranking.calibrate(&obs);
    }

    if let Some(path) = &args.plot {
        let chart = reports::ranking::chart(&obs, &ranking);
        reports::chart::write(&chart, path).context("--plot")?;
    }
    let predict_at: Vec<Vec<f64>> = config.predict.iter().map(|&v| vec![v]).collect();
    // A prediction that overflows (p=1e308) would print as inf, or poison the others' spread.
    for point in &predict_at {
        let predictions = ranking.predict(point);
        let finite =
            |p: &fit::Prediction| [p.value, p.lower, p.upper].iter().all(|v| v.is_finite());
        if let Some(f) = ranking
            .fits
            .iter()
            .zip(&predictions)
            .find(|(_, p)| !finite(p))
        {
            let at = match point[0] {
                v if v.abs() < 1e15 => v.to_string(),
                v => format!("{v:e}"),
            };
            bail!(
                "--predict {}={at}: {} has no finite prediction there",
                config.var,
                excerpt(f.0.model.text())
            );
        }
    }
    let mut out = report(&obs, &ranking, config.rank, &predict_at, config.format);
    if let (Some(note), Format::Text) = (integer_note, config.format) {
        out.push_str(&note);
    }
    // Rows pp whatif predicted (a study's [whatif] points) are ranked on too: say so.
    let var = [config.var.clone()];
    if let (Some(rows), Format::Text) = (
        fit::performance::PredictedRows::describe_in(&data, &var),
        config.format,
    ) {
        out.push_str(&format!(
            "predicted, not measured: {rows}; they are fitted as the measured rows are\n"
        ));
    }
    Ok(out)
}

/// What the search's residual test found, for the text report (docs/modelling.md#integer-structure).
fn integer_note_of(searched: &fit::search::Searched, var: &str) -> Option<String> {
    let (smooth, first) = (searched.smooth.as_ref()?, searched.fired.first()?);
    let fired: Vec<String> = searched
        .fired
        .iter()
        .map(|f| f.grouping.describe(var))
        .collect();
    let offered: Vec<String> = searched
        .fired
        .iter()
        .flat_map(|f| f.grouping.terms(var))
        .collect();
    Some(format!(
        "integer structure: the residuals of the best smooth model `{}` differ by {} (F = {} on \
         {} and {} df, p = {} after Holm over {} grouping(s)); the search also tried {} added to \
         its best smooth models, ranked with the rest\n",
        smooth.model.text(),
        fired.join(", "),
        significant(first.f, 3),
        first.dof.0,
        first.dof.1,
        significant(first.adjusted, 2),
        searched.tested,
        offered
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

fn report(
    obs: &Observations,
    ranking: &Ranking,
    rank_by: RankBy,
    predict_at: &[Vec<f64>],
    format: Format,
) -> String {
    RankingReport {
        observations: obs,
        rank_by,
        ranking,
        predict_at,
    }
    .render(format)
}
