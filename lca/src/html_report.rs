//! `lca report MODEL... [--data DATAFILE] --out DIR`: one self-contained HTML page (charts
//! inline as SVG) with every chart also written as SVG and PNG beside it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use fit::Datafile;
use fit::crossover::ModelError;
use fit::observations::Cell;
use fit::performance::PerformanceModel;
use fit::validation::{Validation, ValidationPoint};
use reports::figures::Runs;
use reports::html::{Section, report};

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
    let models = args
        .models
        .iter()
        .map(|m| fit::model_file::read(m))
        .collect::<Result<Vec<_>, _>>()?;
    let data = args.data.as_deref().map(Datafile::read).transpose()?;
    let errors = match (&models[..], &data) {
        ([a, b], Some(data))
            if !args.validate_where.is_empty() || data.columns().iter().any(|c| c == "role") =>
        {
            crate::validated::model_errors([a, b], data, &args.validate_where)?
        }
        _ => [None, None],
    };
    write(
        &models,
        data.as_ref(),
        &args.title,
        &args.out,
        args.force,
        errors,
    )
}

/// Writes the report of `models` (and their measured runs) into `out`; returns what to print.
pub fn write(
    models: &[PerformanceModel],
    data: Option<&Datafile>,
    title: &str,
    out: &Path,
    force: bool,
    errors: [Option<ModelError>; 2],
) -> Result<String> {
    let index = out.join("index.html");
    files::output::check(&index)?;
    if index.exists() && !force {
        bail!(
            "{}: exists; not replaced (choose another --out, or --force)",
            index.display()
        );
    }
    let sections = models
        .iter()
        .map(|model| {
            let runs = match data {
                Some(d) => runs(model, d)?,
                None => Runs::default(),
            };
            let validation = validation(model, &runs);
            Ok(Section {
                model,
                runs,
                validation,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let lead = match models {
        [a, b] => map_section(a, b, &sections, errors),
        _ => String::new(),
    };
    let page = report(title, &lead, &sections)?;
    let charts = out.join("charts");
    std::fs::create_dir_all(&charts)
        .with_context(|| format!("{}: cannot create", charts.display()))?;
    for (name, chart) in &page.charts {
        for ext in ["svg", "png"] {
            reports::chart::write(chart, &charts.join(format!("{name}.{ext}")))?;
        }
    }
    files::output::write(&index, page.html.as_bytes())?;
    Ok(format!(
        "report: {} ({} charts, also as SVG and PNG in {})\n",
        index.display(),
        page.charts.len(),
        charts.display()
    ))
}

/// The winner map of two models over their two factors (41 x 41 cells), the models' validated
/// errors (when given) in its intervals.
pub fn winner_map(
    a: &PerformanceModel,
    b: &PerformanceModel,
    errors: [Option<ModelError>; 2],
) -> Result<fit::crossover::WinnerMap, fit::crossover::CrossoverError> {
    let pair = fit::crossover::Pair::new(a, b)?.with_model_errors(errors);
    let free = pair.free(&[])?;
    let [u, v] = &free[..] else {
        return Err(fit::crossover::CrossoverError(format!(
            "a winner map needs two factors; the models vary {}",
            free.join(", ")
        )));
    };
    pair.winner_map(&pair.default_axis(u)?, &pair.default_axis(v)?, &[], 41)
}

/// The verdict and winner map of two models as HTML; where they vary one factor, the verdict
/// and where they cross along it (as `lca crossover` says it); else why there is none.
fn map_section(
    a: &PerformanceModel,
    b: &PerformanceModel,
    sections: &[Section],
    errors: [Option<ModelError>; 2],
) -> String {
    let along = || -> Result<String, fit::crossover::CrossoverError> {
        let pair = fit::crossover::Pair::new(a, b)?.with_model_errors(errors);
        let free = pair.free(&[])?;
        let [var] = &free[..] else {
            return Err(fit::crossover::CrossoverError(String::new()));
        };
        let c = pair.crossover(&pair.default_axis(var)?, &[], 512)?;
        let text = reports::crossover::crossover(&c, reports::ranking::Format::Text);
        Ok(format!(
            "<h2>Which is faster: {} or {}, along {}</h2>\n<p class=\"verdict\">{}</p>\n\
             <pre>{}</pre>\n",
            reports::html::escape(&a.name),
            reports::html::escape(&b.name),
            reports::html::escape(var),
            reports::html::escape(&match reports::verdict::predictions(&[a, b]) {
                Some(note) => format!("{} {note}", reports::verdict::along(&c)),
                None => reports::verdict::along(&c),
            }),
            reports::html::escape(&text)
        ))
    };
    match winner_map(a, b, errors) {
        Ok(map) => reports::html::winner_map(
            &map,
            &measured(&map, sections),
            reports::verdict::predictions(&[a, b]).as_deref(),
        ),
        Err(e) => along().unwrap_or_else(|_| {
            format!(
                "<p class=\"note\">No winner map: {}</p>\n",
                reports::html::escape(&e.to_string())
            )
        }),
    }
}

/// Both implementations' measured runs as points of the map, `(u, v)`.
fn measured(map: &fit::crossover::WinnerMap, sections: &[Section]) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    for s in sections {
        let at = |f: &str| s.model.factors.iter().position(|x| x == f);
        let (Some(u), Some(v)) = (at(&map.u.factor), at(&map.v.factor)) else {
            continue;
        };
        points.extend(s.runs.points.iter().map(|p| (p[u], p[v])));
    }
    points
}

/// The rows of the model's implementation that hold a number for every factor and category.
fn runs(model: &PerformanceModel, data: &Datafile) -> Result<Runs> {
    let Some(data) = crate::validated::implementation_rows(model, data) else {
        return Ok(Runs::default());
    };
    let number = |row: usize, column: &str| match data.cell(row, column) {
        Some(Cell::Number(x)) => Some(x),
        _ => None,
    };
    let mut runs = Runs::default();
    for row in 0..data.rows().len() {
        let point: Option<Vec<f64>> = model.factors.iter().map(|f| number(row, f)).collect();
        let values: Option<Vec<f64>> = model
            .categories
            .iter()
            .map(|c| number(row, &c.category))
            .collect();
        let (Some(point), Some(values)) = (point, values) else {
            continue;
        };
        let time = number(row, "wall")
            .unwrap_or_else(|| values.iter().sum::<f64>() / model.processors(&point));
        runs.points.push(point);
        runs.categories.push(values);
        runs.time.push(time);
    }
    Ok(runs)
}

fn validation(model: &PerformanceModel, runs: &Runs) -> Option<Validation> {
    let points: Vec<ValidationPoint> = runs
        .points
        .iter()
        .zip(&runs.time)
        .enumerate()
        .map(|(i, (point, &measured))| ValidationPoint::new(model, i + 1, point, measured))
        .collect();
    (!points.is_empty()).then_some(Validation { points })
}
