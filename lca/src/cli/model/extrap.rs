//! `lca model FILE` on an Extra-P file (text, JSON or JSON Lines, told by content): every
//! callpath × metric modelled over the parameters, a table of them (model, R², leave-one-out
//! error, the prediction at `--predict`), and one model file holding them all, each
//! callpath × metric a response named `callpath [metric]`.

use std::fmt::Write as _;

use anyhow::{Result, anyhow, bail};
use fit::combination::CategoryModel;
use fit::performance::{Kind, PerformanceModel, Provenance};
use fit::repetitions::Repetitions;
use reports::number::significant;

use super::Args;

/// Runs `lca model` on an Extra-P file.
pub fn run(args: &Args, repetitions: Repetitions) -> Result<String> {
    let refused = [
        (!args.response.is_empty(), "--response"),
        (!args.categories.is_empty(), "--cat"),
        (!args.shape.is_empty() || args.shapes.is_some(), "--shape"),
    ];
    if let Some((_, option)) = refused.iter().find(|r| r.0) {
        bail!(
            "{option}: not for an Extra-P file (every callpath and metric is modelled over \
             its parameters)"
        );
    }
    // --where keeps the measurement points whose parameters meet it (docs/extrap.md).
    let conditions = fit::Condition::parse_all(&args.filter)?;
    let experiment = fit::extrap::read(&args.datafile)?.filter(&conditions)?;
    let source = experiment.source.clone();
    // --combine HOW for every series, or --combine 'callpath [metric]=HOW' for one (as the
    // missing-corner error suggests).
    let names: Vec<String> = experiment.series.iter().map(|s| s.name()).collect();
    let choices = super::choices(&[], &args.combine, &names)?;
    let name = super::name(args, &[]);
    // Each series on its own: one that cannot be modelled is a row of the table, not an error.
    let mut rows: Vec<(String, String, Result<CategoryModel, String>)> = Vec::new();
    // Over one parameter, each series' rival forms: beyond the data its interval holds theirs
    // (docs/modelling.md#beyond-the-data).
    let mut rivals: Vec<Vec<fit::rivals::Rival>> = Vec::new();
    let mut lines = Vec::new();
    for series in &experiment.series {
        let runs = series.observations(&source, &experiment.parameters);
        if lines.is_empty() {
            lines = runs.lines.clone();
        }
        let obs = fit::repetitions::summarise(runs.clone(), repetitions);
        let choice = choices.get(&series.name()).cloned().unwrap_or_default();
        let model = fit::combination::combine(&obs, &choice).map_err(|e| e.to_string());
        rivals.push(match &model {
            Ok(m) if experiment.parameters.len() == 1 => fit::rivals::rivals(&runs, Some(&m.fit)),
            _ => Vec::new(),
        });
        rows.push((series.callpath.clone(), series.metric.clone(), model));
    }
    let mut ranges = vec![(f64::INFINITY, f64::NEG_INFINITY); experiment.parameters.len()];
    for series in &experiment.series {
        for point in &series.points {
            for (r, &x) in ranges.iter_mut().zip(point) {
                *r = (r.0.min(x), r.1.max(x));
            }
        }
    }
    // Each modelled series' rivals: the first's are the model's own (the response `lca
    // predict`, `crossover` and `validate` compare), the others' named by their response, so
    // that `lca predict` holds them as this table does.
    let modelled: Vec<(String, &Vec<fit::rivals::Rival>)> = (experiment.series.iter())
        .zip(&rows)
        .zip(&rivals)
        .filter(|((_, r), _)| r.2.is_ok())
        .map(|((s, _), rivals)| (s.name(), rivals))
        .collect();
    let calibration = (experiment.parameters.len() == 1)
        .then(|| {
            (modelled.iter().enumerate())
                .filter(|(_, (_, r))| !r.is_empty())
                .map(|(k, (name, r))| {
                    fit::calibration::Calibration::rivals_only(
                        &experiment.parameters[0],
                        (*r).clone(),
                        (k > 0).then(|| name.clone()),
                    )
                })
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty());
    let model = PerformanceModel {
        kind: Kind::Response,
        name,
        factors: experiment.parameters.clone(),
        ranges,
        held: Default::default(),
        categories: rows.iter().filter_map(|r| r.2.clone().ok()).collect(),
        baseline: None,
        provenance: Provenance {
            datafile: source.clone(),
            conditions: conditions.iter().map(|c| c.to_string()).collect(),
            lines,
            created_by: format!("lca {}", env!("CARGO_PKG_VERSION")),
            predicted: None,
        },
        calibration,
        evaluator: None,
    };
    if model.categories.is_empty() {
        let first = rows.iter().find_map(|r| r.2.as_ref().err());
        bail!(
            "{source}: no callpath and metric could be modelled{}",
            first
                .map(|e| format!(", the first: {e}"))
                .unwrap_or_default()
        );
    }
    let point = match &args.predict {
        Some(spec) => {
            let values = crate::cli::specs::values(spec)?;
            let point = model
                .point(&values)
                .map_err(|e| anyhow!("--predict '{spec}': {e}"))?;
            // The refusals of `lca predict`: no `inf` or `NaN` in the table (a point far
            // beyond the data overflows a prediction or its interval).
            model
                .try_predict(&point)
                .map_err(|e| anyhow!("--predict '{spec}': {e}"))?;
            if let Some(note) = model.off_the_runs(&point) {
                eprintln!("note: --predict '{spec}': {note}");
            }
            Some(point)
        }
        None => None,
    };
    let table = table(
        &experiment,
        &rows,
        &rivals,
        &model.ranges,
        point.as_deref(),
        repetitions,
    );
    super::output(args, &model, table)
}

/// The table: one row per callpath × metric.
fn table(
    experiment: &fit::extrap::Experiment,
    rows: &[(String, String, Result<CategoryModel, String>)],
    rivals: &[Vec<fit::rivals::Rival>],
    ranges: &[(f64, f64)],
    point: Option<&[f64]>,
    repetitions: Repetitions,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} callpath × metric series over {} (repetitions: {repetitions})",
        experiment.format,
        rows.len(),
        experiment.parameters.join(", ")
    );
    let at = point.map(|p| {
        let values: Vec<String> = experiment
            .parameters
            .iter()
            .zip(p)
            .map(|(f, v)| format!("{f}={v}"))
            .collect();
        values.join(",")
    });
    let mut lines = vec![vec![
        "callpath".to_string(),
        "metric".to_string(),
        "model".to_string(),
        "R²".to_string(),
        "LOO error".to_string(),
        at.map_or_else(String::new, |at| format!("at {at} (90%)")),
    ]];
    for ((callpath, metric, model), rivals) in rows.iter().zip(rivals) {
        let mut line = vec![dash(callpath), dash(metric)];
        match model {
            Err(e) => line.push(format!("cannot be modelled: {e}")),
            Ok(m) => {
                line.push(expression(m));
                line.push(significant(m.fit.r2, 4));
                line.push(significant(m.fit.cv, 3));
                if let Some(point) = point {
                    let beyond = ranges
                        .iter()
                        .zip(point)
                        .any(|(&(lo, hi), &x)| x < lo || x > hi);
                    let mixture = beyond
                        .then(|| fit::rivals::mixture(rivals, point))
                        .flatten();
                    // The series' own value, its interval widened to hold the rivals' too
                    // (as `--search --predict` does).
                    let own = m.fit.predict(point);
                    let p = match mixture {
                        Some(mix) => fit::rivals::hold(&own, &mix, m.fit.floor()),
                        None => own,
                    };
                    line.push(format!(
                        "{} ± {}",
                        significant(p.value, 4),
                        significant(p.half_width, 2)
                    ));
                }
            }
        }
        lines.push(line);
    }
    let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|j| {
            lines
                .iter()
                .filter(|l| l.len() > j + 1)
                .map(|l| l[j].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for line in &lines {
        let cells: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(j, c)| {
                let pad = widths[j].saturating_sub(c.chars().count());
                if j + 1 == line.len() {
                    c.clone()
                } else {
                    format!("{c}{}", " ".repeat(pad))
                }
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out.push('\n');
    out
}

fn dash(name: &str) -> String {
    if name.is_empty() {
        "-".into()
    } else {
        name.to_string()
    }
}

/// The fitted model with its coefficients: `3.1 + 0.52*p*log2(p)`.
fn expression(m: &CategoryModel) -> String {
    let terms: Vec<String> = m
        .fit
        .coefficients
        .iter()
        .map(|e| {
            let c = significant(e.value, 3);
            if e.name == "1" {
                c
            } else {
                format!("{c}*{}", e.name)
            }
        })
        .collect();
    let mut text = terms.join(" + ").replace("+ -", "- ");
    for p in &m.fit.parameters {
        let _ = write!(text, "  ({} = {})", p.name, significant(p.value, 3));
    }
    text
}
