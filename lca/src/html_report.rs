//! The HTML report of models and their measured runs: one self-contained page (charts inline
//! as SVG), every chart also written as SVG and PNG beside it; with two models, their verdict
//! and winner map. `lca report` writes it from model files, `lca study` from its models.

use std::path::Path;

use anyhow::{Context, Result};
use fit::Datafile;
use fit::crossover::ValidatedError;
use fit::observations::Cell;
use fit::performance::PerformanceModel;
use fit::validation::{Validation, ValidationPoint};
use reports::figures::Runs;
use reports::html::{Section, report};

/// Writes the report of `models` (and their measured runs) into `out`; returns what to print.
/// `sections` (HTML) go after the verdict, before the models.
pub fn write(
    models: &[&PerformanceModel],
    data: Option<&Datafile>,
    title: &str,
    out: &Path,
    force: bool,
    errors: [Option<ValidatedError>; 2],
    extra: &str,
) -> Result<String> {
    let index = out.join("index.html");
    files::output::check_new(&index, force)?;
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
        [a, b] => {
            let measured = data.map_or_else(Vec::new, |d| crate::compare::measured(a, b, d));
            let difference = data.and_then(|d| crate::compare::difference(a, b, d));
            map_section(
                a,
                b,
                &sections,
                errors,
                &measured,
                difference.as_ref().map(|d| &d.model),
            )
        }
        _ => String::new(),
    } + extra;
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

/// The verdict and winner map of two models as HTML; where they vary one factor, the verdict
/// and where they cross along it (as `lca crossover` says it); else why there is none.
fn map_section(
    a: &PerformanceModel,
    b: &PerformanceModel,
    sections: &[Section],
    errors: [Option<ValidatedError>; 2],
    both: &[fit::crossover::MeasuredPoint],
    difference: Option<&fit::crossover::DifferenceModel>,
) -> String {
    let along = || -> Result<String, fit::crossover::CrossoverError> {
        let pair = fit::crossover::Pair::new(a, b)?
            .with_validated_errors(errors)
            .with_measured(both)
            .with_difference(difference);
        let free = pair.free(&[])?;
        let [var] = &free[..] else {
            return Err(fit::crossover::CrossoverError(String::new()));
        };
        let c = pair.crossover(&pair.default_axis(var)?, &[], 512)?;
        let text = reports::crossover::crossover(&c, reports::Format::Text);
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
    match crate::compare::winner_map_with(a, b, errors, both, difference) {
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

/// Both implementations' runs as points of the map, `(u, v, predicted)`: predicted when `pp
/// whatif` made the row (a study's `[whatif]` points).
fn measured(map: &fit::crossover::WinnerMap, sections: &[Section]) -> Vec<(f64, f64, bool)> {
    let mut points = Vec::new();
    for s in sections {
        let at = |f: &str| s.model.factors.iter().position(|x| x == f);
        let (Some(u), Some(v)) = (at(&map.u.factor), at(&map.v.factor)) else {
            continue;
        };
        points.extend(
            (s.runs.points.iter().enumerate()).map(|(i, p)| (p[u], p[v], s.runs.is_predicted(i))),
        );
    }
    points
}

/// The rows of the model's implementation that hold a number for every factor and category.
fn runs(model: &PerformanceModel, data: &Datafile) -> Result<Runs> {
    let Some(data) = crate::validated_error::implementation_rows(model, data) else {
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
            .unwrap_or_else(|| values.iter().sum::<f64>() / model.divisor(&point));
        runs.points.push(point);
        runs.categories.push(values);
        runs.time.push(time);
        runs.predicted
            .push(data.cell(row, fit::observations::PREDICTED).is_some());
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
