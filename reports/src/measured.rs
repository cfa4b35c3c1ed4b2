//! The points both implementations ran, as every format shows them: who is faster there by
//! their runs (docs/comparing.md#measured-points-decide-first), the test, the means and the
//! interval. `fit::crossover::measured` decides; this only writes it down.

use std::fmt::Write as _;

use fit::crossover::{MeasuredPoint, Winner};

use crate::number::significant;

/// How the runs decide, for the text's and JSON's `rule`.
pub const RULE: &str = "at a point both implementations ran, their runs decide: the 90% \
                        confidence interval of mean_A - mean_B (paired t where the runs share \
                        replicate indices, else Welch) excludes zero; the models decide between \
                        the measured points";

fn winner_code(w: Winner) -> &'static str {
    match w {
        Winner::A => "A",
        Winner::B => "B",
        Winner::Tie => "=",
    }
}

fn number(v: f64) -> serde_json::Value {
    if v.is_finite() {
        serde_json::json!(v)
    } else {
        serde_json::Value::Null
    }
}

/// The verdict of one measured point in words: `A (dp) faster at 90%, T_B/T_A = 1.49`.
fn verdict(a: &str, b: &str, m: &MeasuredPoint) -> String {
    match m.winner {
        Winner::Tie => "cannot be told apart at 90%".into(),
        Winner::A => format!(
            "A ({a}) wins at 90%, T_B/T_A = {}",
            significant(m.mean[1] / m.mean[0], 4)
        ),
        Winner::B => format!(
            "B ({b}) wins at 90%, T_A/T_B = {}",
            significant(m.mean[0] / m.mean[1], 4)
        ),
    }
}

/// The text's lines: the rule, then one line per measured point. Nothing without any.
pub fn text(out: &mut String, a: &str, b: &str, measured: &[MeasuredPoint]) {
    if measured.is_empty() {
        return;
    }
    let _ = writeln!(out, "runs: {RULE}");
    for m in measured {
        let _ = writeln!(
            out,
            "measured   at {}: T_A = {} ({} runs), T_B = {} ({} runs), difference {} ± {} \
             ({}, {} dof); {} (rests on runs)",
            crate::verdict::point_text(&m.point),
            significant(m.mean[0], 4),
            m.runs[0],
            significant(m.mean[1], 4),
            m.runs[1],
            significant(m.difference(), 3),
            significant(m.half_width, 3),
            m.test.name(),
            significant(m.dof, 3),
            verdict(a, b, m)
        );
    }
}

/// One measured point in JSON.
pub fn json(m: &MeasuredPoint) -> serde_json::Value {
    serde_json::json!({
        "point": serde_json::Value::Object(
            m.point.iter().map(|(f, v)| (f.clone(), number(*v))).collect()
        ),
        "runs": m.runs,
        "T_A": number(m.mean[0]),
        "T_B": number(m.mean[1]),
        "difference": number(m.difference()),
        "half_width": number(m.half_width),
        "test": m.test.name(),
        "dof": number(m.dof),
        "winner": match m.winner {
            Winner::A => "A",
            Winner::B => "B",
            Winner::Tie => "tie",
        },
        "significant": m.winner != Winner::Tie,
        "basis": "runs",
        // What the models alone would call there (docs/comparing.md): null where unknown.
        "models": m.models.map(|w| match w {
            Winner::A => "A",
            Winner::B => "B",
            Winner::Tie => "tie",
        }),
    })
}

/// The CSV fields after the record name and the point: winner, significant, T_A, T_B,
/// difference, half-width, test, runs of A, runs of B.
pub fn csv_fields(m: &MeasuredPoint) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{}",
        winner_code(m.winner),
        m.winner != Winner::Tie,
        significant(m.mean[0], 6),
        significant(m.mean[1], 6),
        significant(m.difference(), 6),
        significant(m.half_width, 6),
        m.test.name(),
        m.runs[0],
        m.runs[1]
    )
}
