//! Crossovers of two implementations along one factor, and winner maps over two factors, as
//! text, CSV or JSON.

use std::fmt::Write as _;

use fit::crossover::{
    Axis, Band, Basis, BoundaryPoint, Comparison, Crossover, Extrapolation, Meeting, MeetingKind,
    Scale, Side, ValidatedError, Winner, WinnerMap,
};

use crate::Format;
use crate::number::significant;
use crate::sides::{LEVEL_ITEMS, side_groups, winners};

/// The crossovers along one factor: text (meetings, then sides), CSV (one row per meeting and
/// per side) or JSON.
pub fn crossover(c: &Crossover, format: Format) -> String {
    match format {
        Format::Text => text(c),
        Format::Csv => csv(c),
        Format::Json => json(c),
    }
}

/// The winner map over two factors: text (a character map and the boundary), CSV (one row per
/// cell and per boundary point) or JSON.
pub fn winner_map(m: &WinnerMap, format: Format) -> String {
    match format {
        Format::Text => map_text(m),
        Format::Csv => map_csv(m),
        Format::Json => map_json(m),
    }
}

/// A factor's value to 6 significant digits without trailing zeros: `32`, `55.5556`.
fn x(v: f64) -> String {
    let s = significant(v, 6);
    match s.split_once('e') {
        None if s.contains('.') => s.trim_end_matches('0').trim_end_matches('.').to_string(),
        Some((m, e)) if m.contains('.') => {
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

fn t(v: f64) -> String {
    significant(v, 4)
}

fn kind_name(k: MeetingKind) -> &'static str {
    match k {
        MeetingKind::Crossing => "crossing",
        MeetingKind::Touch => "touch",
        MeetingKind::NearTouch => "near_touch",
    }
}

fn winner_code(w: Winner) -> &'static str {
    match w {
        Winner::A => "A",
        Winner::B => "B",
        Winner::Tie => "=",
    }
}

fn scale_name(s: Scale) -> &'static str {
    match s {
        Scale::Linear => "linear",
        Scale::Log => "log",
    }
}

fn fixed_text(fixed: &[(String, f64)]) -> String {
    fixed
        .iter()
        .map(|(f, v)| format!("{f}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn axis_text(a: &Axis) -> String {
    format!(
        "{} from {} to {} ({} scale)",
        a.factor,
        x(a.lo),
        x(a.hi),
        scale_name(a.scale)
    )
}

/// The one rule of who wins, as every output states it.
pub const RULE: &str = "a model wins where the 90% confidence interval of E[T_A] - E[T_B] \
                        excludes zero (both models' mean intervals, Welch-Satterthwaite); \
                        elsewhere the two cannot be told apart";

/// The rule without intervals.
pub const RULE_WITHOUT_INTERVALS: &str =
    "no intervals (a model written by hand): the lower mean wins, untested";

fn rule(intervals: bool) -> &'static str {
    if intervals {
        RULE
    } else {
        RULE_WITHOUT_INTERVALS
    }
}

fn header(
    out: &mut String,
    a: &str,
    b: &str,
    what: String,
    fixed: &[(String, f64)],
    intervals: bool,
) {
    let _ = write!(out, "A: {a}  B: {b}  {what}");
    if !fixed.is_empty() {
        let _ = write!(out, "  at {}", fixed_text(fixed));
    }
    out.push('\n');
    let _ = writeln!(out, "who wins: {}", rule(intervals));
}

/// The models' validated errors the intervals hold, or that they hold none: one line (none
/// without intervals).
fn model_errors(
    out: &mut String,
    (a, b): (&str, &str),
    errors: &[Option<ValidatedError>; 2],
    own: [bool; 2],
    intervals: bool,
) {
    let mut parts: Vec<String> = [a, b]
        .iter()
        .zip(errors)
        .filter_map(|(name, e)| {
            e.map(|e| {
                format!(
                    "{name} ±{}% ({} validation points)",
                    significant(100.0 * e.relative_sd, 3),
                    e.points
                )
            })
        })
        .collect();
    if parts.len() == 1 {
        // The other model's validation runs, if any, cover fewer than two points
        // (lca's `model_errors`): say so rather than leave it out unremarked.
        let none = if errors[0].is_none() { a } else { b };
        parts.push(format!(
            "{none} none (validation runs at fewer than two points)"
        ));
    }
    if !parts.is_empty() {
        // A PACE model's interval was its error on its own runs: the validated error takes
        // its place (fit's `compare_with`).
        let replaced: Vec<&str> = [a, b]
            .into_iter()
            .zip(errors.iter().zip(own))
            .filter(|(_, (e, own))| e.is_some() && *own)
            .map(|(name, _)| name)
            .collect();
        let _ = writeln!(
            out,
            "model error: {} (RMS relative error of the predicted mean T_p against the measured \
             means), {}",
            parts.join(", "),
            match replaced[..] {
                [] => "added to the intervals".to_string(),
                [one] => format!(
                    "held by the intervals ({one}'s in place of its error on the runs it was \
                     built from)"
                ),
                _ => "held by the intervals (each PACE model's in place of its error on the runs \
                      it was built from)"
                    .to_string(),
            }
        );
    } else if intervals && own == [false, false] {
        let _ = writeln!(
            out,
            "model error: not included (the intervals hold the fitted coefficients' \
             uncertainty only; each model's error on its validation runs in `--data DATAFILE` \
             is added where they cover two points or more)"
        );
    } else if intervals {
        let _ = writeln!(
            out,
            "model error: the intervals hold {}, not an error on validation runs (each \
             model's on its validation runs in `--data DATAFILE` is added where they cover two \
             points or more)",
            crate::verdict::basis(own, a, b)
        );
    }
}

/// What each model's intervals hold, for JSON: `{"A": "fitted coefficients", "B": "error on
/// the runs it was built from"}` (a PACE model's); the validated errors come on top. Null
/// without intervals.
fn interval_basis(intervals: bool, own: [bool; 2]) -> serde_json::Value {
    if !intervals {
        return serde_json::Value::Null;
    }
    let what = |own: bool| {
        if own {
            "error on the runs it was built from"
        } else {
            "fitted coefficients"
        }
    };
    serde_json::json!({ "A": what(own[0]), "B": what(own[1]) })
}

/// `true`, `false` or empty (no intervals), for CSV.
fn significance_csv(s: Option<bool>) -> &'static str {
    match s {
        Some(true) => "true",
        Some(false) => "false",
        None => "",
    }
}

fn significance_json(s: Option<bool>) -> serde_json::Value {
    s.map_or(serde_json::Value::Null, serde_json::Value::Bool)
}

/// What a crossing means at 90%, for text.
fn meeting_significance(m: &Meeting) -> &'static str {
    match (m.kind, m.significant) {
        (_, None) => "",
        (MeetingKind::Crossing, Some(true)) => "; the winner changes at 90%",
        (MeetingKind::Crossing, Some(false)) => "; not significant: no winner on both sides at 90%",
        (_, Some(_)) => "; the winner does not change",
    }
}

/// The verdict of a side, for text: `A (dp) wins at 90%, T_B/T_A up to 1.46 at p = 2`.
fn side_verdict(a: &str, b: &str, f: &str, s: &Side) -> String {
    match (s.winner, s.significant) {
        (Winner::Tie, None) => "neither wins: T_A = T_B".to_string(),
        (Winner::Tie, Some(_)) => format!(
            "cannot be told apart at 90% (T_A = {}, T_B = {} at {f} = {})",
            t(s.t_a),
            t(s.t_b),
            x(s.at)
        ),
        (w, significant) => {
            let (name, ratio) = if w == Winner::A {
                (format!("A ({a})"), "T_B/T_A")
            } else {
                (format!("B ({b})"), "T_A/T_B")
            };
            let how = if significant.is_some() {
                "wins at 90%"
            } else {
                "wins (no intervals: untested)"
            };
            let by = if s.ratio.is_finite() {
                format!(
                    "{ratio} up to {} at {f} = {}",
                    significant_digits(s.ratio),
                    x(s.at)
                )
            } else {
                format!(
                    "by {} at {f} = {} (times not positive: no ratio)",
                    t((s.t_a - s.t_b).abs()),
                    x(s.at)
                )
            };
            format!("{name} {how}, {by}")
        }
    }
}

/// For response models, what T_A and T_B are.
fn compared(out: &mut String, response: Option<&str>) {
    if let Some(r) = response {
        let _ = writeln!(
            out,
            "compared: {r} in its own units (T_A, T_B are its values)"
        );
    }
}

fn significant_digits(v: f64) -> String {
    significant(v, 4)
}

fn extrapolation_text(out: &mut String, list: &[Extrapolation]) {
    for e in list {
        let part = if e.outside.0 == e.outside.1 {
            format!("{}={}", e.factor, x(e.outside.0))
        } else {
            format!("{} from {} to {}", e.factor, x(e.outside.0), x(e.outside.1))
        };
        let _ = writeln!(
            out,
            "extrapolation: {} is fitted on {} from {} to {}; {part} is outside it",
            e.model,
            e.factor,
            x(e.fitted.0),
            x(e.fitted.1)
        );
    }
}

fn band_text(factor: &str, band: Option<&Band>) -> String {
    match band {
        None => "no interval".into(),
        Some(b) => {
            let lo = if b.lo_open {
                format!("{} (range end)", x(b.lo))
            } else {
                x(b.lo)
            };
            let hi = if b.hi_open {
                format!("{} (range end)", x(b.hi))
            } else {
                x(b.hi)
            };
            format!("cannot be told apart at 90% for {factor} from {lo} to {hi}")
        }
    }
}

fn text(c: &Crossover) -> String {
    let mut out = String::new();
    let f = &c.axis.factor;
    header(
        &mut out,
        &c.a,
        &c.b,
        format!("along {}, {} samples", axis_text(&c.axis), c.samples),
        &c.fixed,
        c.intervals,
    );
    compared(&mut out, c.response.as_deref());
    model_errors(&mut out, (&c.a, &c.b), &c.errors, c.own_errors, c.intervals);
    let _ = writeln!(out, "verdict: {}", crate::verdict::along(c));
    crate::measured::text(&mut out, &c.a, &c.b, &c.measured);
    if c.meetings.is_empty() {
        out.push_str("no crossover in the range\n");
    }
    // Beyond LEVEL_ITEMS meetings (a model that steps at every value), the crossings that are
    // not significant and the near touches are counted, each kind on one line.
    let counted = |m: &&Meeting| {
        c.meetings.len() > LEVEL_ITEMS
            && (m.kind == MeetingKind::NearTouch
                || (m.kind == MeetingKind::Crossing && m.significant != Some(true)))
    };
    for kind in [MeetingKind::Crossing, MeetingKind::NearTouch] {
        let these: Vec<&Meeting> = c
            .meetings
            .iter()
            .filter(|m| m.kind == kind)
            .filter(counted)
            .collect();
        let (Some(first), Some(last)) = (these.first(), these.last()) else {
            continue;
        };
        let what = match (kind, c.intervals) {
            (MeetingKind::NearTouch, _) => "the winner does not change",
            (_, true) => "none significant",
            (_, false) => "untested",
        };
        let _ = writeln!(
            out,
            "{:<10} at {} values of {f} from {} to {}; {what} (rests on models)",
            kind_name(kind).replace('_', " "),
            these.len(),
            x(first.x),
            x(last.x)
        );
    }
    for m in c.meetings.iter().filter(|m| !counted(m)) {
        let stepped = (m.t_a - m.t_b).abs() > 1e-6 * (m.t_a.abs() + m.t_b.abs());
        let times = if m.kind == MeetingKind::NearTouch {
            format!("T_A = {}, T_B = {}", t(m.t_a), t(m.t_b))
        } else if stepped {
            // A model that steps (a PACE model's replay) crosses the other at the step, and
            // so does the hand-over to the difference model where the two disagree in sign.
            format!("T_A = {}, T_B = {} (a step)", t(m.t_a), t(m.t_b))
        } else {
            format!("T_A = T_B = {}", t(m.t_a))
        };
        let _ = writeln!(
            out,
            "{:<10} at {f} = {:<10} {times}; {}{} (rests on models)",
            kind_name(m.kind).replace('_', " "),
            x(m.x),
            band_text(f, m.band.as_ref()),
            meeting_significance(m)
        );
    }
    for group in side_groups(&c.axis, &c.sides) {
        let (s, last) = (&group[0], &group[group.len() - 1]);
        let range = if s.basis == Basis::Runs {
            format!("{f} = {}", x(s.from))
        } else {
            format!("{f} from {} to {}", x(s.from), x(last.to))
        };
        let verdict = if group.len() == 1 {
            side_verdict(&c.a, &c.b, f, s)
        } else {
            let said: Vec<String> = winners(group)
                .into_iter()
                .map(|w| match w {
                    Winner::A => format!("A ({}) faster", c.a),
                    Winner::B => format!("B ({}) faster", c.b),
                    Winner::Tie if c.intervals => "cannot be told apart".to_string(),
                    Winner::Tie => "equal".to_string(),
                })
                .collect();
            format!("{} in turn ({} sides)", said.join(" and "), group.len())
        };
        let _ = writeln!(out, "{range:<30} {verdict} (rests on {})", s.basis.name());
    }
    extrapolation_text(&mut out, &c.extrapolation);
    out
}

fn csv(c: &Crossover) -> String {
    let mut out = format!(
        "record,{},kind,band_low,band_high,from,to,winner,significant,ratio,T_A,T_B,basis\n",
        c.axis.factor
    );
    for m in &c.meetings {
        let (lo, hi) = m.band.map_or((f64::NAN, f64::NAN), |b| (b.lo, b.hi));
        let _ = writeln!(
            out,
            "meeting,{},{},{},{},,,,{},,{},{},models",
            m.x,
            kind_name(m.kind),
            significant(lo, 6),
            significant(hi, 6),
            significance_csv(m.significant),
            significant(m.t_a, 6),
            significant(m.t_b, 6)
        );
    }
    for s in &c.sides {
        let _ = writeln!(
            out,
            "side,{},,,,{},{},{},{},{},{},{},{}",
            s.at,
            s.from,
            s.to,
            winner_code(s.winner),
            significance_csv(s.significant),
            significant(s.ratio, 6),
            significant(s.t_a, 6),
            significant(s.t_b, 6),
            s.basis.name()
        );
    }
    for m in &c.measured {
        let _ = writeln!(
            out,
            "measured,{},{},,,,,{},{},{},{},{},runs",
            m.value(&c.axis.factor).unwrap_or(f64::NAN),
            m.test.name(),
            winner_code(m.winner),
            m.winner != Winner::Tie,
            significant(
                match m.winner {
                    Winner::B => m.mean[0] / m.mean[1],
                    _ => m.mean[1] / m.mean[0],
                },
                6
            ),
            significant(m.mean[0], 6),
            significant(m.mean[1], 6)
        );
    }
    out
}

fn comparison_json(c: &Comparison) -> serde_json::Value {
    serde_json::json!({
        "T_A": number(c.t_a), "T_B": number(c.t_b), "difference": number(c.difference()),
        "half_width": number(c.half_width), "winner": winner_json(c.winner),
        "significant": significance_json(c.significant), "basis": c.basis.name(),
    })
}

fn number(v: f64) -> serde_json::Value {
    if v.is_finite() {
        serde_json::json!(v)
    } else {
        serde_json::Value::Null
    }
}

fn winner_json(w: Winner) -> &'static str {
    match w {
        Winner::A => "A",
        Winner::B => "B",
        Winner::Tie => "tie",
    }
}

fn axis_json(a: &Axis) -> serde_json::Value {
    serde_json::json!({
        "factor": a.factor, "range": [number(a.lo), number(a.hi)], "scale": scale_name(a.scale)
    })
}

fn fixed_json(fixed: &[(String, f64)]) -> serde_json::Value {
    serde_json::Value::Object(fixed.iter().map(|(f, v)| (f.clone(), number(*v))).collect())
}

fn extrapolation_json(list: &[Extrapolation]) -> serde_json::Value {
    list.iter()
        .map(|e| {
            serde_json::json!({
                "model": e.model,
                "factor": e.factor,
                "fitted": [number(e.fitted.0), number(e.fitted.1)],
                "outside": [number(e.outside.0), number(e.outside.1)],
            })
        })
        .collect()
}

fn json(c: &Crossover) -> String {
    let meetings: Vec<serde_json::Value> = c
        .meetings
        .iter()
        .map(|m| {
            let band = m.band.map_or(serde_json::Value::Null, |b| {
                serde_json::json!({
                    "low": number(b.lo), "high": number(b.hi),
                    "low_is_range_end": b.lo_open, "high_is_range_end": b.hi_open,
                })
            });
            serde_json::json!({
                "at": number(m.x), "kind": kind_name(m.kind),
                "T_A": number(m.t_a), "T_B": number(m.t_b), "band": band,
                "significant": significance_json(m.significant),
            })
        })
        .collect();
    let sides: Vec<serde_json::Value> = c
        .sides
        .iter()
        .map(|s| {
            serde_json::json!({
                "from": number(s.from), "to": number(s.to), "winner": winner_json(s.winner),
                "significant": significance_json(s.significant),
                "ratio": number(s.ratio), "at": number(s.at),
                "T_A": number(s.t_a), "T_B": number(s.t_b), "basis": s.basis.name(),
            })
        })
        .collect();

    let doc = serde_json::json!({
        "A": c.a,
        "B": c.b,
        "axis": axis_json(&c.axis),
        "at": fixed_json(&c.fixed),
        "samples": c.samples,
        "confidence": 0.9,
        "intervals": c.intervals,
        "interval_basis": interval_basis(c.intervals, c.own_errors),
        "rule": rule(c.intervals),
        "runs_rule": crate::measured::RULE,
        "measured": c.measured.iter().map(crate::measured::json).collect::<Vec<_>>(),
        "meetings": meetings,
        "sides": sides,
        "extrapolation": extrapolation_json(&c.extrapolation),
    });
    serde_json::to_string_pretty(&doc).expect("JSON values serialize") + "\n"
}

fn map_text(m: &WinnerMap) -> String {
    let mut out = String::new();
    header(
        &mut out,
        &m.a,
        &m.b,
        format!(
            "winner map over {} across and {} up",
            axis_text(&m.u),
            axis_text(&m.v)
        ),
        &m.fixed,
        m.intervals,
    );
    compared(&mut out, m.response.as_deref());
    model_errors(&mut out, (&m.a, &m.b), &m.errors, m.own_errors, m.intervals);
    let _ = writeln!(out, "verdict: {}", crate::verdict::map(m));
    crate::measured::text(&mut out, &m.a, &m.b, &m.measured);
    let tie = if m.intervals {
        "cannot be told apart at 90%"
    } else {
        "equal (no intervals)"
    };
    let _ = writeln!(out, "A = {} faster, B = {} faster, = {tie}", m.a, m.b);
    if !m.measured.is_empty() {
        let _ = writeln!(
            out,
            "(the cell nearest each measured point shows its runs' verdict; the others the models')"
        );
    }
    let labels: Vec<String> = m.vs.iter().map(|&v| x(v)).collect();
    let width = labels
        .iter()
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max(m.v.factor.len());
    let _ = writeln!(out, "{:>width$}", m.v.factor);
    let last = m.vs.len() - 1;
    for j in (0..m.vs.len()).rev() {
        let label = if j == last || j == 0 || j == last / 2 {
            labels[j].as_str()
        } else {
            ""
        };
        let row: String = m.cells[j].iter().map(|&w| winner_code(w)).collect();
        let _ = writeln!(out, "{label:>width$} |{row}");
    }
    let _ = writeln!(out, "{:>width$} +{}", "", "-".repeat(m.us.len()));
    let (lo, hi) = (x(m.u.lo), x(m.u.hi));
    let inner = m.us.len().saturating_sub(lo.len() + hi.len()).max(1);
    let name = format!("{:^inner$}", m.u.factor);
    let _ = writeln!(out, "{:>width$}  {lo}{name}{hi}", "");
    let _ = writeln!(
        out,
        "boundary: who wins along {} at each level of {}, and the crossovers",
        m.u.factor, m.v.factor
    );
    for (j, &v) in m.vs.iter().enumerate() {
        let sides = level_sides(&m.u, &m.levels[j]);
        let points: Vec<&BoundaryPoint> = m.boundary.iter().filter(|b| b.v == v).collect();
        let _ = writeln!(
            out,
            "  {}={}: {}; crossing: {}",
            m.v.factor,
            x(v),
            sides.join(", "),
            level_crossings(&m.u.factor, &points)
        );
    }
    extrapolation_text(&mut out, &m.extrapolation);
    out
}

/// One level's sides along `u`, in words: each as `B from 64 to 99.9`; where there are more
/// than [`LEVEL_ITEMS`], the sides of the models shorter than a quarter of the axis (on its
/// scale) that follow one another as one, `B and = in turn from 64 to 99.9 (27 sides)`.
fn level_sides(u: &Axis, sides: &[Side]) -> Vec<String> {
    let one = |s: &Side| match s.basis {
        Basis::Runs => format!("{} at {} (runs)", winner_code(s.winner), x(s.from)),
        Basis::Models => format!(
            "{} from {} to {}",
            winner_code(s.winner),
            x(s.from),
            x(s.to)
        ),
        Basis::Difference => format!(
            "{} from {} to {} (difference model)",
            winner_code(s.winner),
            x(s.from),
            x(s.to)
        ),
    };
    side_groups(u, sides)
        .into_iter()
        .map(|group| match group {
            [s] => one(s),
            _ => {
                let codes: Vec<&str> = winners(group).into_iter().map(winner_code).collect();
                let by = if group[0].basis == Basis::Difference {
                    " (difference model)"
                } else {
                    ""
                };
                format!(
                    "{} in turn from {} to {} ({} sides){by}",
                    codes.join(" and "),
                    x(group[0].from),
                    x(group[group.len() - 1].to),
                    group.len()
                )
            }
        })
        .collect()
}

/// One level's crossings and touches along `u`, in words: `none`, or each as `n=120
/// (significant)`; where there are more than [`LEVEL_ITEMS`], the significant ones each and the
/// others counted, `41 more from n=194.048 to n=255, none significant`.
fn level_crossings(u: &str, points: &[&BoundaryPoint]) -> String {
    let one = |b: &BoundaryPoint| {
        let what = match (b.kind, b.significant) {
            (MeetingKind::Crossing, Some(true)) => " (significant)",
            (MeetingKind::Crossing, Some(false)) => " (not significant)",
            (MeetingKind::Crossing, None) => "",
            (_, _) => " (touch)",
        };
        format!("{u}={}{what}", x(b.u))
    };
    if points.is_empty() {
        return "none".to_string();
    }
    if points.len() <= LEVEL_ITEMS {
        return points.iter().map(|b| one(b)).collect::<Vec<_>>().join(", ");
    }
    let significant =
        |b: &&&BoundaryPoint| b.kind == MeetingKind::Crossing && b.significant == Some(true);
    let mut out: Vec<String> = points.iter().filter(significant).map(|b| one(b)).collect();
    let others: Vec<&&BoundaryPoint> = points.iter().filter(|b| !significant(b)).collect();
    if let (Some(first), Some(last)) = (others.first(), others.last()) {
        let untested = others.iter().any(|b| b.significant.is_none());
        let touches = others
            .iter()
            .filter(|b| b.kind != MeetingKind::Crossing)
            .count();
        let what = match (out.is_empty(), touches) {
            (false, _) => "more",
            (true, 0) => "crossings",
            (true, t) if t == others.len() => "touches",
            (true, _) => "crossings and touches",
        };
        out.push(format!(
            "{} {what} from {u}={} to {u}={}{}",
            others.len(),
            x(first.u),
            x(last.u),
            if untested { "" } else { ", none significant" }
        ));
    }
    out.join(", ")
}

fn map_csv(m: &WinnerMap) -> String {
    let mut out = format!(
        "record,{},{},to,kind,winner,significant,T_A,T_B,difference,half_width,basis,test,\
         runs_A,runs_B\n",
        m.u.factor, m.v.factor
    );
    for (j, &v) in m.vs.iter().enumerate() {
        for (i, &u) in m.us.iter().enumerate() {
            if let Some(k) = m.measured_cells.iter().position(|&c| c == (j, i)) {
                let fields = crate::measured::csv_fields(&m.measured[k]);
                let _ = writeln!(out, "cell,{u},{v},,,{fields}");
                continue;
            }
            let c = &m.comparisons[j][i];
            let _ = writeln!(
                out,
                "cell,{u},{v},,,{},{},{},{},{},{},{},,,",
                winner_code(c.winner),
                significance_csv(c.significant),
                significant(c.t_a, 6),
                significant(c.t_b, 6),
                significant(c.difference(), 6),
                significant(c.half_width, 6),
                c.basis.name()
            );
        }
    }
    for b in &m.boundary {
        let _ = writeln!(
            out,
            "boundary,{},{},,{},,{},,,,,models,,,",
            b.u,
            b.v,
            kind_name(b.kind),
            significance_csv(b.significant)
        );
    }
    for (j, &v) in m.vs.iter().enumerate() {
        for s in &m.levels[j] {
            let _ = writeln!(
                out,
                "side,{},{v},{},,{},{},,,,,{},,,",
                s.from,
                s.to,
                winner_code(s.winner),
                significance_csv(s.significant),
                s.basis.name()
            );
        }
    }
    for k in &m.measured {
        let (u, v) = (
            k.value(&m.u.factor).unwrap_or(f64::NAN),
            k.value(&m.v.factor).unwrap_or(f64::NAN),
        );
        let _ = writeln!(out, "measured,{u},{v},,,{}", crate::measured::csv_fields(k));
    }
    out
}

fn map_json(m: &WinnerMap) -> String {
    let rows: Vec<String> = m
        .cells
        .iter()
        .map(|row| row.iter().map(|&w| winner_code(w)).collect())
        .collect();
    let boundary: Vec<serde_json::Value> = m
        .boundary
        .iter()
        .map(|b| {
            serde_json::json!({
                m.u.factor.clone(): number(b.u), m.v.factor.clone(): number(b.v),
                "kind": kind_name(b.kind), "significant": significance_json(b.significant),
            })
        })
        .collect();
    let mut cells: Vec<Vec<serde_json::Value>> = m
        .comparisons
        .iter()
        .map(|row| row.iter().map(comparison_json).collect())
        .collect();
    for (k, &(j, i)) in m.measured_cells.iter().enumerate() {
        cells[j][i] = crate::measured::json(&m.measured[k]);
    }
    let levels: Vec<serde_json::Value> =
        m.vs.iter()
            .zip(&m.levels)
            .map(|(&v, sides)| {
                let sides: Vec<serde_json::Value> = sides
                    .iter()
                    .map(|s| {
                        serde_json::json!({
                            "from": number(s.from), "to": number(s.to),
                            "winner": winner_json(s.winner),
                            "significant": significance_json(s.significant),
                            "basis": s.basis.name(),
                        })
                    })
                    .collect();
                serde_json::json!({ m.v.factor.clone(): number(v), "sides": sides })
            })
            .collect();
    let doc = serde_json::json!({
        "A": m.a,
        "B": m.b,
        "across": axis_json(&m.u),
        "up": axis_json(&m.v),
        "at": fixed_json(&m.fixed),
        "confidence": 0.9,
        "intervals": m.intervals,
        "interval_basis": interval_basis(m.intervals, m.own_errors),
        "rule": rule(m.intervals),
        "runs_rule": crate::measured::RULE,
        "measured": m.measured.iter().map(crate::measured::json).collect::<Vec<_>>(),
        "across_values": m.us.iter().map(|&v| number(v)).collect::<Vec<_>>(),
        "up_values": m.vs.iter().map(|&v| number(v)).collect::<Vec<_>>(),
        "rows": rows,
        "cells_legend": "rows[j][i] is the winner at (across_values[i], up_values[j]): A, B, or = (cannot be told apart); cells[j][i] the comparison behind it (basis runs: the measured point nearest the cell, decided by its runs)",
        "cells": cells,
        "boundary": boundary,
        "levels": levels,
        "extrapolation": extrapolation_json(&m.extrapolation),
    });
    serde_json::to_string_pretty(&doc).expect("JSON values serialize") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(u: f64, significant: Option<bool>) -> BoundaryPoint {
        BoundaryPoint {
            u,
            v: 3.0,
            kind: MeetingKind::Crossing,
            significant,
        }
    }

    #[test]
    fn many_crossings_of_a_level_are_counted_the_significant_ones_named() {
        let few: Vec<BoundaryPoint> = (1..=6).map(|k| point(f64::from(k), Some(false))).collect();
        let few: Vec<&BoundaryPoint> = few.iter().collect();
        assert_eq!(
            level_crossings("n", &few),
            "n=1 (not significant), n=2 (not significant), n=3 (not significant), \
             n=4 (not significant), n=5 (not significant), n=6 (not significant)"
        );
        let mut many: Vec<BoundaryPoint> = (1..=9)
            .map(|k| point(f64::from(k) + 0.5, Some(false)))
            .collect();
        many[2].significant = Some(true);
        let many: Vec<&BoundaryPoint> = many.iter().collect();
        assert_eq!(
            level_crossings("n", &many),
            "n=3.5 (significant), 8 more from n=1.5 to n=9.5, none significant"
        );
        let untested: Vec<BoundaryPoint> = (1..=7).map(|k| point(f64::from(k), None)).collect();
        let untested: Vec<&BoundaryPoint> = untested.iter().collect();
        assert_eq!(
            level_crossings("n", &untested),
            "7 crossings from n=1 to n=7"
        );
        assert_eq!(level_crossings("n", &[]), "none");
    }
}
