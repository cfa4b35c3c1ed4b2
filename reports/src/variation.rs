//! Allocation of variation as text tables (Jain's layout).

use std::fmt::Write as _;

use fit::variation::{AnovaRow, Corners, SignTable};

use crate::number::{estimate, significant};

/// The effects of a 2^k r design: value with its 90% interval, sum of squares, % of variation.
pub fn sign_table(response: &str, t: &SignTable) -> String {
    let mut out = format!(
        "allocation of variation of {response}: 2^{} design, {} replicate(s) per cell\n",
        t.factors.len(),
        t.replicates
    );
    for (name, lo, hi) in &t.factors {
        let _ = writeln!(out, "  {name}: -1 = {lo}, +1 = {hi}");
    }
    let _ = writeln!(
        out,
        "{:<12} {:>26} {:>14} {:>10}",
        "effect", "q (90% CI)", "SS", "variation"
    );
    for e in &t.effects {
        let (ss, share) = if e.name == "I" {
            (String::new(), String::new())
        } else {
            (
                significant(e.sum_of_squares, 6),
                format!("{:.2}%", 100.0 * e.fraction),
            )
        };
        let _ = writeln!(
            out,
            "{:<12} {:>26} {:>14} {:>10}",
            e.name,
            estimate(e.value, e.half_width),
            ss,
            share
        );
    }
    if t.replicates > 1 {
        let _ = writeln!(
            out,
            "{:<12} {:>26} {:>14} {:>10}",
            "error",
            "",
            significant(t.sse, 6),
            format!("{:.2}%", 100.0 * t.sse / t.sst)
        );
    }
    let _ = writeln!(
        out,
        "{:<12} {:>26} {:>14}",
        "total",
        "",
        significant(t.sst, 6)
    );
    out
}

/// An ANOVA table: source, SS, % of variation, dof, mean square, F, p-value.
pub fn anova(response: &str, rows: &[AnovaRow]) -> String {
    let mut out = format!("analysis of variation of {response} (full factorial)\n");
    let _ = writeln!(
        out,
        "{:<12} {:>14} {:>10} {:>5} {:>14} {:>10} {:>10}",
        "source", "SS", "variation", "dof", "MS", "F", "p"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<12} {:>14} {:>10} {:>5} {:>14} {:>10} {:>10}",
            r.source,
            significant(r.sum_of_squares, 6),
            format!("{:.2}%", 100.0 * r.fraction),
            r.dof,
            if r.mean_square.is_nan() {
                String::new()
            } else {
                significant(r.mean_square, 6)
            },
            if r.f.is_nan() {
                String::new()
            } else {
                significant(r.f, 4)
            },
            if r.p_value.is_nan() {
                String::new()
            } else {
                significant(r.p_value, 3)
            },
        );
    }
    out
}

/// What a sign table of a design's corners left out: the design, the rows used (datafile
/// lines) and the levels between the extremes.
pub fn corners_note(c: &Corners, cells: usize, with_runs: usize) -> String {
    let o = &c.observations;
    let shape: Vec<String> = c
        .left_out
        .iter()
        .map(|(_, l)| (l.len() + 2).to_string())
        .collect();
    let mut out = format!(
        "the design is not a full factorial ({} levels, {with_runs} of {cells} cells with runs): \
         the 2^{} sign table below uses its corners only\n",
        shape.join(" x "),
        o.factors.len()
    );
    let lines: Vec<String> = o.lines.iter().map(usize::to_string).collect();
    let _ = writeln!(
        out,
        "  rows used: {} at lines {} of {}",
        o.len(),
        lines.join(", "),
        o.source
    );
    let levels: Vec<String> = c
        .left_out
        .iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(f, l)| {
            let values: Vec<String> = l.iter().map(f64::to_string).collect();
            format!("{f} = {}", values.join(", "))
        })
        .collect();
    let _ = writeln!(
        out,
        "  left out: {} row(s) at the levels between the extremes ({})",
        c.rows_left_out,
        levels.join("; ")
    );
    out
}
