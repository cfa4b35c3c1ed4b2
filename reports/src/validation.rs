//! A model against measured runs: per point measured and predicted `T_p`, relative errors,
//! and the paper's corner-plane baseline on the same points.

use std::fmt::Write as _;

use fit::performance::PerformanceModel;
use fit::validation::Validation;

use crate::Format;
use crate::number::significant;

/// The validation as text, CSV (one row per run) or JSON.
pub fn validation(
    model: &PerformanceModel,
    v: &Validation,
    source: &str,
    format: Format,
) -> String {
    match format {
        Format::Text => text(model, v, source),
        Format::Csv => csv(model, v),
        Format::Json => json(model, v, source),
    }
}

fn percent(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{:.1}%", 100.0 * x))
}

fn text(model: &PerformanceModel, v: &Validation, source: &str) -> String {
    let mut out = format!(
        "model '{}' against {} run(s) of {source}\n",
        model.name,
        v.points.len()
    );
    let mut header = format!("{:>6}", "line");
    for f in &model.factors {
        let _ = write!(header, " {f:>8}");
    }
    let _ = writeln!(
        out,
        "{header} {:>11} {:>11} {:>8} {:>6} {:>11} {:>8}",
        "measured", "predicted", "error", "in PI", "baseline", "error"
    );
    for p in &v.points {
        let _ = write!(out, "{:>6}", p.line);
        for x in &p.predicted.point {
            let _ = write!(out, " {:>8}", x);
        }
        let inside = match p.within_interval() {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        let flag = if p.predicted.extrapolated.is_empty() {
            ""
        } else {
            "  extrapolated"
        };
        let _ = writeln!(
            out,
            " {:>11} {:>11} {:>8} {:>6} {:>11} {:>8}{flag}",
            significant(p.measured, 4),
            significant(p.predicted.time.value, 4),
            percent(Some(p.relative_error())),
            inside,
            p.baseline.map_or("-".into(), |b| significant(b, 4)),
            percent(p.baseline_error()),
        );
    }
    let e = v.model_errors();
    let _ = writeln!(
        out,
        "\nmodel:    mean relative error {}, max {}",
        percent(Some(e.mean)),
        percent(Some(e.max))
    );
    if let Some(c) = v.coverage() {
        let _ = writeln!(
            out,
            "          {} of the runs inside their 90% prediction interval",
            percent(Some(c))
        );
    }
    match v.baseline_errors() {
        Some(b) => {
            let _ = writeln!(
                out,
                "baseline: mean relative error {}, max {} (least-squares plane through the corners)",
                percent(Some(b.mean)),
                percent(Some(b.max))
            );
        }
        None => out.push_str("baseline: none (the model file has no corner plane)\n"),
    }
    let extrapolated = v
        .points
        .iter()
        .filter(|p| !p.predicted.extrapolated.is_empty())
        .count();
    if extrapolated > 0 {
        let _ = writeln!(
            out,
            "{extrapolated} run(s) lie outside the fitted range (extrapolation)"
        );
    }
    out
}

fn csv(model: &PerformanceModel, v: &Validation) -> String {
    let mut out = format!(
        "line,{},measured,predicted,half_width,error,baseline,baseline_error,extrapolated\n",
        model.factors.join(",")
    );
    for p in &v.points {
        let point: Vec<String> = p.predicted.point.iter().map(|x| x.to_string()).collect();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            p.line,
            point.join(","),
            p.measured,
            p.predicted.time.value,
            p.predicted.time.half_width,
            p.relative_error(),
            p.baseline.map_or(String::new(), |b| b.to_string()),
            p.baseline_error().map_or(String::new(), |b| b.to_string()),
            p.predicted.extrapolated.join(" ")
        );
    }
    out
}

fn json(model: &PerformanceModel, v: &Validation, source: &str) -> String {
    let number = |x: f64| {
        if x.is_finite() {
            serde_json::json!(x)
        } else {
            serde_json::Value::Null
        }
    };
    let e = v.model_errors();
    let points: Vec<serde_json::Value> = v
        .points
        .iter()
        .map(|p| {
            serde_json::json!({
                "line": p.line,
                "at": model.factors.iter().zip(&p.predicted.point)
                    .map(|(f, x)| (f.clone(), number(*x)))
                    .collect::<serde_json::Map<_, _>>(),
                "measured": number(p.measured),
                "predicted": number(p.predicted.time.value),
                "half_width": number(p.predicted.time.half_width),
                "error": number(p.relative_error()),
                "baseline": p.baseline.map(number),
                "baseline_error": p.baseline_error().map(number),
                "extrapolated": p.predicted.extrapolated,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "model": model.name,
        "datafile": source,
        "mean_error": number(e.mean),
        "max_error": number(e.max),
        "coverage": v.coverage().map(number),
        "baseline_mean_error": v.baseline_errors().map(|b| number(b.mean)),
        "baseline_max_error": v.baseline_errors().map(|b| number(b.max)),
        "points": points,
    });
    serde_json::to_string_pretty(&doc).expect("JSON values serialize") + "\n"
}
