//! The report phase: the summary `lca study` prints (where the study stands, the noise of
//! `T_p`, each implementation's model and its errors, the verdicts on the first two), and the
//! files beside the models: `crossover.txt` and the HTML report.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::{Result, anyhow};
use fit::crossover::{ValidatedError, Winner, WinnerMap};
use fit::performance::PerformanceModel;
use reports::Format;

use super::datafile::Rows;
use super::file::{Dispatch, Study};
use super::measure::Made;
use super::models::Fitted;
use super::plan::Point;
use super::precision;

/// What the study came to: the summary to print and the runs of this start that failed.
#[derive(Debug)]
pub struct Report {
    /// The summary.
    pub text: String,
    /// Runs of this start that gave no row.
    pub failures: usize,
    /// Runs this start made.
    pub made: usize,
}

/// The report phase: the summary of the study's `points` (what this start `made`, in
/// `elapsed`, `decided` by `[decide]`, and the `fitted` models), with `crossover.txt` and the
/// HTML report of the models and the datafile's `rows` written in the study's folder.
pub fn report(
    study: &Study,
    points: &[Point],
    made: &Made,
    decided: Option<String>,
    fitted: &[Fitted],
    rows: &Rows,
    elapsed: Duration,
) -> Result<Report> {
    let mut text = summary(study, points, made, elapsed);
    let times = precision::times(study).map_err(|e| anyhow!(e))?;
    text += &precision::report(study, points, &times);
    if let Some(line) = decided {
        text += &line;
    }
    if !made.calibrated && made.communicated {
        text += "note: no machine calibration (pp calibrate): all communication time counts as \
                 cl, none as rc.comm\n";
    }
    text += &table(fitted);
    text += &completeness(study, points, rows);
    text += &compare(study, fitted, rows)?;
    Ok(Report {
        text,
        failures: made.failures,
        made: made.made,
    })
}

/// The completeness check of the study's runs (docs/modelling.md, "Completeness check"), with
/// the regions where a drifting pc grew, from the runs' logs.
fn completeness(study: &Study, points: &[Point], rows: &Rows) -> String {
    let keys = points.iter().map(|p| p.key(study)).collect();
    match rows.select(&keys) {
        Some(data) => crate::completeness::report(&data, Some(&study.out.join("logs"))),
        None => String::new(),
    }
}

/// The crossover of the first two implementations' models (both factors: a winner map) and
/// the HTML report of every model with the study's runs, in the study's folder.
fn compare(study: &Study, fitted: &[Fitted], rows: &Rows) -> Result<String> {
    let built: Vec<&Fitted> = fitted.iter().filter(|f| f.model.is_some()).collect();
    let models: Vec<&PerformanceModel> = built.iter().filter_map(|f| f.model.as_ref()).collect();
    let unbuilt: Vec<&str> = fitted
        .iter()
        .filter(|f| f.model.is_none())
        .map(|f| f.name.as_str())
        .collect();
    if models.is_empty() {
        // Never an empty study without a word: say what is missing and why.
        return Ok(format!(
            "\nverdict: none, crossover: none, report: none: no model was built ({} above: not \
             built)\n",
            unbuilt.join(", ")
        ));
    }
    let mut text = String::new();
    if fitted.len() >= 2 && models.len() < 2 {
        text += &format!(
            "\nverdict: none, crossover: none: it compares two models, and {}'s was not built \
             (above)\n",
            unbuilt.join(", ")
        );
    }
    let mut errors = [None, None];
    if let ([a, b, ..], [fa, fb, ..]) = (&models[..], &built[..]) {
        errors = [fa.validated_error, fb.validated_error];
        let measured = rows
            .all()
            .map_or_else(Vec::new, |d| crate::compare::measured(a, b, d));
        let difference = rows.all().and_then(|d| crate::compare::difference(a, b, d));
        text += &verdicts(study, [a, b], [fa, fb], &measured, difference.as_ref())?;
    }
    let title = format!("Lost cycles analysis: study {}", study.name);
    text += &crate::html_report::write(
        &models,
        rows.all(),
        &title,
        &study.out.join("report"),
        true,
        errors,
        "",
    )?;
    Ok(text)
}

/// The verdicts on models `a` and `b` (of `fa` and `fb`): from the coefficients' uncertainty
/// only (what `lca crossover` says from the model files), then with each model's error on the
/// validation points, which the study measured, and the `difference` model of the two deciding
/// where it is tighter (what `lca crossover --data` says); `crossover.txt` holds the latter's
/// map where there is one. The runs decide at the `measured` points in both.
fn verdicts(
    study: &Study,
    [a, b]: [&PerformanceModel; 2],
    [fa, fb]: [&Fitted; 2],
    measured: &[fit::crossover::MeasuredPoint],
    difference: Option<&crate::compare::Difference>,
) -> Result<String> {
    let mut text = String::new();
    let errors = [fa.validated_error, fb.validated_error];
    let plain = crate::compare::winner_map(a, b, [None, None], measured);
    let validated = errors.iter().any(Option::is_some).then(|| {
        crate::compare::winner_map_with(a, b, errors, measured, difference.map(|d| &d.model))
    });
    match &plain {
        Ok(map) => {
            text += &format!("\nverdict: {}\n", reports::verdict::map(map));
            if let Some(note) = reports::verdict::predictions(&[a, b]) {
                text += &format!("predicted: {note}\n");
            }
            if map.intervals && map.cells.iter().flatten().any(|&w| w == Winner::Tie) {
                text += &format!(
                    "next runs: lca crossover {} {} --suggest 6   (the runs that would decide \
                     most)\n",
                    fa.model_file.as_deref().unwrap_or(Path::new("")).display(),
                    fb.model_file.as_deref().unwrap_or(Path::new("")).display()
                );
            }
        }
        Err(e) => text += &format!("\ncrossover: none ({e})\n"),
    }
    if let Some(Ok(map)) = &validated {
        let sd = |name: &str, e: Option<ValidatedError>| {
            e.map_or(format!("{name} unknown"), |e| {
                format!("{name} ±{:.1}%", 100.0 * e.relative_sd)
            })
        };
        text += &format!(
            "model error: {}, {} (RMS relative error of each model's T_p on the validation \
             points' means)\n{}verdict: {}\n",
            sd(&fa.name, errors[0]),
            sd(&fb.name, errors[1]),
            difference.map_or_else(String::new, crate::compare::difference_line),
            reports::verdict::map(map)
        );
    }
    if let Some(Err(e)) = &validated {
        text += &format!("crossover with the models' validated errors: none ({e})\n");
    }
    // The validated map where there is one, else the plain one.
    let written = match &validated {
        Some(Ok(map)) => Ok(map),
        _ => plain.as_ref(),
    };
    if let Ok(map) = written {
        text += &crossover_file(study, map, [a, b])?;
    }
    Ok(text)
}

/// Writes `crossover.txt`: the winner map, and what of it rests on predicted runs.
fn crossover_file(
    study: &Study,
    map: &WinnerMap,
    models: [&PerformanceModel; 2],
) -> Result<String> {
    let path = study.out.join("crossover.txt");
    let written = reports::verdict::with_predictions(
        reports::crossover::winner_map(map, Format::Text),
        Format::Text,
        &models,
    )?;
    files::output::write(&path, written.as_bytes()).map_err(|e| anyhow!("{e}"))?;
    Ok(format!("crossover: {}\n", path.display()))
}

/// Where the study stands and where its files are.
fn summary(study: &Study, points: &[Point], made: &Made, elapsed: Duration) -> String {
    let Made { made, failures, .. } = *made;
    let mut text = format!(
        "study {}: {} runs, {} made now in {:.1} s",
        study.name,
        points.len(),
        made - failures,
        elapsed.as_secs_f64()
    );
    if failures > 0 {
        text += &format!(", {failures} failed");
    }
    let earlier = points.len() - made;
    if earlier > 0 {
        text += &format!(", {earlier} measured earlier");
    }
    text += "\n";
    let _ = writeln!(text, "datafile: {}", study.datafile.display());
    let _ = writeln!(
        text,
        "logs:     {} (each run's log, standard output and error)",
        study.out.join("logs").display()
    );
    // Runs with more processors than the machine has: real contention, kept and counted.
    // (Slurm's runs are on its nodes, not this machine.)
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    if let Some(f) = study.factors.iter().position(|f| f.name == "p")
        && study.dispatch == Dispatch::Local
    {
        let over = points
            .iter()
            .filter(|pt| pt.values[f] > cores as f64)
            .count();
        if over > 0 && cores > 0 {
            let _ = writeln!(
                text,
                "note:     {over} runs have p above this machine's {cores} cores: oversubscribed, \
                 their contention is real and counted (rc.cpu), kept in the models"
            );
        }
    }
    text
}

/// Per implementation: the runs, the model file and the validation errors of `T_p`.
fn table(outcomes: &[Fitted]) -> String {
    let percent = |e: Option<(f64, f64)>| match e {
        Some((mean, max)) => format!("{:>6.1}% {:>6.1}%", 100.0 * mean, 100.0 * max),
        None => format!("{:>7} {:>7}", "-", "-"),
    };
    let width = outcomes
        .iter()
        .map(|o| o.name.len())
        .max()
        .unwrap_or(0)
        .max(4);
    let mut text = format!(
        "\n{:<width$}  {:>5}  {:>8}  {:^15}  {:^15}  model\n",
        "impl", "model", "validate", "T_p error", "baseline error"
    );
    let _ = writeln!(
        text,
        "{:<width$}  {:>5}  {:>8}  {:>7} {:>7}  {:>7} {:>7}",
        "", "runs", "runs", "mean", "max", "mean", "max"
    );
    for o in outcomes {
        let model = match (&o.model_file, &o.problem) {
            (_, Some(problem)) => format!("not built: {problem}"),
            (Some(path), None) => path.display().to_string(),
            (None, None) => "-".to_string(),
        };
        let _ = writeln!(
            text,
            "{:<width$}  {:>5}  {:>8}  {}  {}  {model}",
            o.name,
            o.model_runs,
            o.validation_runs,
            percent(o.errors),
            percent(o.baseline)
        );
    }
    for o in outcomes {
        for w in &o.warnings {
            let _ = writeln!(text, "{}: {w}", o.name);
        }
    }
    text += "\nT_p error: |predicted - measured| / measured on the validation runs; baseline: the \
             paper's corner plane\n(1 + every factor, fitted to the corners) on the same runs. \
             Beside each model file: <impl>-model.txt\n(its summary) and \
             <impl>-validation.txt (every validation run).\n";
    text
}
