//! Predictions of `T_p` and its categories at points, with 90% prediction intervals.

use std::fmt::Write as _;

use fit::calibration::Reach;
use fit::performance::{Kind, PerformanceModel, TimePrediction};

use crate::Format;
use crate::number::{prediction, significant};

/// The predictions as text (one block per point), CSV (one row per point) or JSON.
pub fn predictions(
    model: &PerformanceModel,
    predictions: &[TimePrediction],
    format: Format,
) -> String {
    match format {
        Format::Text => text(model, predictions),
        Format::Csv => csv(model, predictions),
        Format::Json => json(model, predictions),
    }
}

fn point_text(model: &PerformanceModel, t: &TimePrediction) -> String {
    model
        .factors
        .iter()
        .zip(&t.point)
        .map(|(f, v)| format!("{f}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn text(model: &PerformanceModel, predictions: &[TimePrediction]) -> String {
    let mut out = String::new();
    for t in predictions {
        let _ = write!(out, "at {}", point_text(model, t));
        if !t.extrapolated.is_empty() {
            let _ = write!(
                out,
                "  (extrapolation: {} outside the fitted range{})",
                t.extrapolated.join(", "),
                match t.reach {
                    // docs/modelling.md#beyond-the-data
                    Reach::Uncalibrated => "; the interval is not calibrated there",
                    _ => "",
                }
            );
        }
        let _ = writeln!(out);
        if model.kind == Kind::LostCycles {
            let _ = writeln!(out, "  {:<6} {:>30}", "T_p", prediction(&t.time));
        }
        for (c, p) in model.categories.iter().zip(&t.categories) {
            let _ = writeln!(out, "  {:<6} {:>30}", c.category, prediction(p));
        }
    }
    out.push_str(match model.kind {
        Kind::LostCycles => {
            "(seconds; categories in processor-seconds; +/- is the 90% prediction interval, \
             (0 .. x) one cut at zero)\n"
        }
        Kind::Response => "(each response in its own units; +/- is the 90% prediction interval)\n",
    });
    out
}

fn csv(model: &PerformanceModel, predictions: &[TimePrediction]) -> String {
    let mut header: Vec<String> = model.factors.clone();
    header.extend(["T_p", "T_p_low", "T_p_high"].map(String::from));
    for c in &model.categories {
        header.push(c.category.clone());
        header.push(format!("{}_half_width", c.category));
        header.push(format!("{}_low", c.category));
    }
    header.push("extrapolated".into());
    let mut out = header.join(",") + "\n";
    for t in predictions {
        let mut row: Vec<String> = t.point.iter().map(|v| v.to_string()).collect();
        row.extend([t.time.value, t.time.lower, t.time.upper].map(|x| significant(x, 6)));
        for p in &t.categories {
            row.push(significant(p.value, 6));
            row.push(significant(p.half_width, 3));
            row.push(significant(p.lower, 6));
        }
        row.push(t.extrapolated.join(" "));
        let _ = writeln!(out, "{}", row.join(","));
    }
    out
}

fn json(model: &PerformanceModel, predictions: &[TimePrediction]) -> String {
    let number = |x: f64| {
        if x.is_finite() {
            serde_json::json!(x)
        } else {
            serde_json::Value::Null
        }
    };
    let points: Vec<serde_json::Value> = predictions
        .iter()
        .map(|t| {
            let at: serde_json::Map<String, serde_json::Value> = model
                .factors
                .iter()
                .zip(&t.point)
                .map(|(f, v)| (f.clone(), number(*v)))
                .collect();
            let categories: serde_json::Map<String, serde_json::Value> = model
                .categories
                .iter()
                .zip(&t.categories)
                .map(|(c, p)| {
                    let value = serde_json::json!({
                        "value": number(p.value), "half_width": number(p.half_width),
                        "low": number(p.lower), "high": number(p.upper)
                    });
                    (c.category.clone(), value)
                })
                .collect();
            serde_json::json!({
                "at": at,
                "T_p": {
                    "value": number(t.time.value), "half_width": number(t.time.half_width),
                    "low": number(t.time.lower), "high": number(t.time.upper)
                },
                "categories": categories,
                "extrapolated": t.extrapolated,
            })
        })
        .collect();
    let doc = serde_json::json!({ "model": model.name, "confidence": 0.9, "predictions": points });
    serde_json::to_string_pretty(&doc).expect("JSON values serialize") + "\n"
}
