//! The suggested runs of decision-directed measurement (`lca crossover --suggest K`), as text
//! or JSON.

use std::fmt::Write as _;

use fit::decision::{Decision, Which};

use crate::verdict::human;

/// What the suggestions are chosen by, as every output states it.
pub const CRITERION: &str = "the runs that most shrink the undecided region per second of \
                             run: each run's expected narrowing of the 90% intervals of \
                             E[T_A] - E[T_B] (its fits' covariance updated by one more \
                             observation where it lies), summed over the region as the \
                             relative amount by which the intervals still straddle zero, over \
                             its predicted T_p; chosen one after another";

fn point_text(point: &[(String, f64)]) -> String {
    point
        .iter()
        .map(|(f, v)| format!("{f}={}", human(*v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `region` names what was searched: `the range` or `the map`.
pub fn text(d: &Decision, region: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "next runs: the {} that most shrink the undecided region per second of run \
         (criterion: lca crossover --help)",
        d.suggestions.len()
    );
    let _ = writeln!(
        out,
        "  now undecided at 90%: {}% of {region}",
        human(100.0 * d.undecided)
    );
    if d.undecided == 0.0 {
        let _ = writeln!(out, "  nothing to decide: every point has a winner at 90%");
        return out;
    }
    for (i, s) in d.suggestions.iter().enumerate() {
        let who = match s.which {
            Which::A => "A",
            Which::B => "B",
        };
        let _ = writeln!(
            out,
            "  {}. {} ({who}) at {}: predicted T_p {} s; then undecided: {}% of {region}",
            i + 1,
            s.name,
            point_text(&s.point),
            crate::number::significant(s.cost, 3),
            human(100.0 * s.undecided_after)
        );
    }
    let _ = writeln!(
        out,
        "  expected if the runs land on the predictions; measure them, refit and ask again"
    );
    out
}

/// A JSON report (`lca crossover --format json`) with the suggestions added as `next_runs`.
pub fn into_json(report: &str, d: &Decision) -> serde_json::Result<String> {
    let mut doc: serde_json::Value = serde_json::from_str(report)?;
    doc["next_runs"] = json(d);
    Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?))
}

/// The same as a JSON value.
pub fn json(d: &Decision) -> serde_json::Value {
    serde_json::json!({
        "criterion": CRITERION,
        "undecided": d.undecided,
        "measure": d.measure,
        "measure_after": d.measure_after,
        "runs": d.suggestions.iter().map(|s| serde_json::json!({
            "implementation": match s.which { Which::A => "A", Which::B => "B" },
            "name": s.name,
            "at": s.point.iter().map(|(f, v)| (f.clone(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>(),
            "predicted_t_p": s.cost,
            "gain": s.gain,
            "undecided_after": s.undecided_after,
        })).collect::<Vec<_>>(),
    })
}
