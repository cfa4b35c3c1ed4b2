//! The verdict: one or two sentences a person can act on, saying which implementation is
//! faster where, at what confidence, and where the runs cannot tell — from a crossover along
//! one factor or a winner map over two. It restates what `fit::crossover` decided (the one rule
//! of who wins); it decides nothing itself. Where both implementations ran the same points, it
//! says first what their runs decided there, then what the models say between them
//! (docs/comparing.md#measured-points-decide-first): every sentence names what it rests on.

use fit::crossover::{Axis, Crossover, MeasuredPoint, Side, ValidatedError, Winner, WinnerMap};
use fit::performance::PerformanceModel;

/// What of a comparison rests on predicted rather than measured runs (`pp whatif`'s rows):
/// `It rests on predicted runs: dp's model on 48 of 96 rows (pp whatif demand:cpu; p from 3
/// to 8).` None when both models rest on measured runs only.
pub fn predictions(models: &[&PerformanceModel]) -> Option<String> {
    let parts: Vec<String> = models
        .iter()
        .filter_map(|m| {
            let p = m.provenance.predicted.as_ref()?;
            let text = p.describe(&m.factors, &m.ranges);
            Some(format!("{}'s model: {text}", m.name))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "It rests on predicted runs, not measured ones: {}.",
            parts.join("; ")
        )
    })
}

/// `out` (a crossover or winner map in `format`) saying what of it rests on predicted runs: a
/// `predicted:` line after the verdict, a `predicted` field in JSON, a `# predicted:` comment
/// line first in CSV.
pub fn with_predictions(
    out: String,
    format: crate::Format,
    models: &[&PerformanceModel],
) -> serde_json::Result<String> {
    let Some(note) = predictions(models) else {
        return Ok(out);
    };
    Ok(match format {
        crate::Format::Text => {
            let mut lines: Vec<&str> = out.lines().collect();
            let at = lines
                .iter()
                .position(|l| l.starts_with("verdict: "))
                .map_or(0, |k| k + 1);
            let line = format!("predicted: {note}");
            lines.insert(at, &line);
            lines.join("\n") + "\n"
        }
        crate::Format::Json => {
            let mut doc: serde_json::Value = serde_json::from_str(&out)?;
            doc["predicted"] = serde_json::Value::String(note);
            format!("{}\n", serde_json::to_string_pretty(&doc)?)
        }
        crate::Format::Csv => format!("# predicted: {note}\n{out}"),
    })
}

/// A factor's value for people: whole numbers from 100 up, else 3 significant digits, without
/// trailing zeros (`65`, `2.27`, `0.5`, `1024`).
pub fn human(v: f64) -> String {
    if !v.is_finite() {
        return crate::number::significant(v, 3);
    }
    if v.abs() >= 100.0 {
        return format!("{v:.0}");
    }
    let s = crate::number::significant(v, 3);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Where `[from, to]` lies on the axis, in words, on its runnable values (the integers inside,
/// on a whole-number axis): the whole range, `n ≤ 65`, `n ≥ 65`, `p = 3` or `n from 65 to
/// 180`. None where a whole-number axis has no integer inside (`p` from 2.51 to 2.52).
fn runnable(axis: &Axis, from: f64, to: f64) -> Option<String> {
    let (from, to) = axis.runnable(from, to)?;
    if axis.integer && from == to && !(near(from, axis.lo) && near(to, axis.hi)) {
        return Some(format!("{} = {}", axis.factor, human(from)));
    }
    Some(stretch(axis, from, to))
}

/// Where `[from, to]` lies on the axis, in words: the whole range, `n ≤ 65`, `n ≥ 65`, or
/// `n from 65 to 180`.
fn stretch(axis: &Axis, from: f64, to: f64) -> String {
    let f = &axis.factor;
    let (lo_end, hi_end) = (near(from, axis.lo), near(to, axis.hi));
    match (lo_end, hi_end) {
        (true, true) => format!("all {f} from {} to {}", human(axis.lo), human(axis.hi)),
        (true, false) => format!("{f} ≤ {}", human(to)),
        (false, true) => format!("{f} ≥ {}", human(from)),
        (false, false) => format!("{f} from {} to {}", human(from), human(to)),
    }
}

/// Equal up to the printed precision of the axis' ends.
fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn name(w: Winner, a: &str, b: &str) -> String {
    match w {
        Winner::A => a.to_string(),
        Winner::B => b.to_string(),
        Winner::Tie => String::new(),
    }
}

/// What the intervals of two models hold without validated errors: their fitted
/// coefficients' uncertainty, or for a model computed by a program (PACE's) its error on the
/// runs it was built from (`own`).
pub fn basis(own: [bool; 2], a: &str, b: &str) -> String {
    const RUNS: &str = "error on the runs it was built from";
    match own {
        [false, false] => "the fitted coefficients".to_string(),
        [true, true] => "the models' errors on the runs they were built from".to_string(),
        [true, false] => format!("{a}'s {RUNS} and {b}'s fitted coefficients"),
        [false, true] => format!("{a}'s fitted coefficients and {b}'s {RUNS}"),
    }
}

/// Which validated errors the intervals include: both models', or the one model's that has
/// one (the other's validation runs cover fewer than two points).
fn included(errors: &[Option<ValidatedError>; 2], a: &str, b: &str) -> String {
    match errors {
        [Some(_), Some(_)] => "the models' validated errors included".to_string(),
        [Some(_), None] => format!("{a}'s validated error included ({b} has none)"),
        [None, Some(_)] => format!("{b}'s validated error included ({a} has none)"),
        [None, None] => "no validated error included".to_string(),
    }
}

/// How sure, and where the other factors are: `At 90% confidence, at p = 26: `.
fn lead(
    intervals: bool,
    errors: &[Option<ValidatedError>; 2],
    own: [bool; 2],
    (a, b): (&str, &str),
    fixed: &[(String, f64)],
) -> String {
    let how = match (intervals, errors.iter().any(Option::is_some)) {
        (true, true) => format!("At 90% confidence, {}", included(errors, a, b)),
        (true, false) => format!("At 90% confidence in {} alone", basis(own, a, b)),
        (false, _) => "Comparing means only (models without intervals: untested)".to_string(),
    };
    let comma = if fixed.is_empty() { "" } else { "," };
    format!("{how}{comma}{}: ", at(fixed))
}

/// ` at p = 26` where other factors are held, else nothing.
fn at(fixed: &[(String, f64)]) -> String {
    if fixed.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = fixed
        .iter()
        .map(|(f, v)| format!("{f} = {}", human(*v)))
        .collect();
    format!(" at {}", parts.join(", "))
}

/// A measured point for people: `n=384 p=3`.
pub fn point_text(point: &[(String, f64)]) -> String {
    point
        .iter()
        .map(|(f, v)| format!("{f}={}", human(*v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the runs decided at the points both implementations ran: `By the runs at the 51
/// points both measured (90%, paired t where the runs were interleaved, else Welch): dp is
/// faster at 9 (n=384 p=3: dp/tp = 0.67, ...); tp is faster at 2 (...); the runs cannot tell
/// them apart at the other 40.` None without measured points.
pub fn by_runs(
    a: &str,
    b: &str,
    response: Option<&str>,
    measured: &[MeasuredPoint],
) -> Option<String> {
    if measured.is_empty() {
        return None;
    }
    const LISTED: usize = 6;
    let mut parts = Vec::new();
    for (w, name, other) in [(Winner::A, a, b), (Winner::B, b, a)] {
        let mut won: Vec<&MeasuredPoint> = measured.iter().filter(|m| m.winner == w).collect();
        if won.is_empty() {
            continue;
        }
        // The largest advantages first.
        let ratio = |m: &MeasuredPoint| match w {
            Winner::A => m.mean[0] / m.mean[1],
            _ => m.mean[1] / m.mean[0],
        };
        won.sort_by(|p, q| ratio(p).total_cmp(&ratio(q)));
        let mut listed: Vec<String> = won
            .iter()
            .take(LISTED)
            .map(|m| {
                format!(
                    "{}: {name}/{other} = {}",
                    point_text(&m.point),
                    crate::number::significant(ratio(m), 2)
                )
            })
            .collect();
        if won.len() > LISTED {
            listed.push(format!("{} more", won.len() - LISTED));
        }
        let points = if won.len() == 1 { "point" } else { "points" };
        parts.push(format!(
            "{name} {} at {} {points} ({})",
            better(response),
            won.len(),
            listed.join(", ")
        ));
    }
    let ties = measured.iter().filter(|m| m.winner == Winner::Tie).count();
    let tests: Vec<&str> = {
        let mut t: Vec<&str> = measured.iter().map(|m| m.test.name()).collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    let lead = format!(
        "By the runs at the {} point{} both measured (90%, {}):",
        measured.len(),
        if measured.len() == 1 { "" } else { "s" },
        tests.join(" or ")
    );
    let mut out = if parts.is_empty() {
        format!("{lead} the runs cannot tell {a} and {b} apart at any of them.")
    } else {
        format!("{lead} {}.", parts.join("; "))
    };
    if !parts.is_empty() && ties > 0 {
        out.push_str(&format!(
            " At the other {ties} point{} the runs cannot tell them apart.",
            if ties == 1 { "" } else { "s" }
        ));
    }
    out.push_str(&chance(measured.len(), measured.len() - ties));
    Some(out)
}

/// Each point's test errs 10% of the time when the two are the same, so of `n` points about
/// `n/10` differ by chance alone: where `decided` of them is not unlikely under that (the
/// binomial tail P(X >= decided) above 10%), a sentence that says so; else nothing.
fn chance(n: usize, decided: usize) -> String {
    use statrs::distribution::{Binomial, DiscreteCDF};
    let Ok(null) = Binomial::new(0.1, n as u64) else {
        return String::new();
    };
    if decided == 0 {
        return String::new();
    }
    let p = null.sf(decided as u64 - 1);
    if p <= 0.1 {
        return String::new();
    }
    format!(
        " {decided} of {n} is about what chance alone gives (probability {} if the two were \
         the same: each point's test errs 10% of the time), so these points alone do not show \
         that either is faster.",
        crate::number::significant(p, 2)
    )
}

/// The runs' sentence, then the models' introduced as holding between the measured points,
/// then where the models call the other implementation faster than the runs at a measured
/// point (a stretch the models name may hold such a point: the runs decide it).
fn runs_first(runs: Option<String>, models: String, disagree: String) -> String {
    match runs {
        None => models,
        Some(runs) => {
            format!("{runs} Between the measured points, by the models: {models}{disagree}")
        }
    }
}

/// ` At 1 measured point the runs and the models name opposite winners (n=32 p=2: the runs
/// say tp, the models dp): the runs decide there, and the models' confidence near it is in
/// doubt.` Nothing where no measured point has its runs and the models on opposite sides.
fn disagreements(a: &str, b: &str, measured: &[MeasuredPoint]) -> String {
    let opposite: Vec<String> = measured
        .iter()
        .filter(|m| {
            matches!(
                (m.winner, m.models),
                (Winner::A, Some(Winner::B)) | (Winner::B, Some(Winner::A))
            )
        })
        .map(|m| {
            let models = if m.winner == Winner::A { b } else { a };
            format!(
                "{}: the runs say {}, the models {models}",
                point_text(&m.point),
                name(m.winner, a, b)
            )
        })
        .collect();
    if opposite.is_empty() {
        return String::new();
    }
    let (count, them) = match opposite.len() {
        1 => ("1 measured point".to_string(), "it"),
        n => (format!("{n} measured points"), "them"),
    };
    format!(
        " At {count} the runs and the models name opposite winners ({}): the runs decide \
         there, and the models' confidence near {them} is in doubt.",
        opposite.join("; ")
    )
}

/// The verdict along one factor: who is faster on which stretch, and where the runs cannot
/// tell the two apart; first what the runs decided at the points both measured.
pub fn along(c: &Crossover) -> String {
    let runs = by_runs(&c.a, &c.b, c.response.as_deref(), &c.measured);
    runs_first(
        runs,
        along_models(c),
        disagreements(&c.a, &c.b, &c.measured),
    )
}

/// The models' verdict along one factor.
fn along_models(c: &Crossover) -> String {
    let sides: Vec<Side> = c
        .sides
        .iter()
        .filter(|s| s.to > s.from && s.basis != fit::crossover::Basis::Runs)
        .cloned()
        .collect();
    // On a whole-number axis a measured point the runs decided otherwise is not part of the
    // models' stretches on either side of it (`p ≤ 5` and `p ≥ 7` around the runs' p = 6).
    let runs_at: Vec<f64> = c
        .sides
        .iter()
        .filter(|s| s.basis == fit::crossover::Basis::Runs)
        .map(|s| s.from)
        .collect();
    let open = |x: f64| c.axis.integer && runs_at.iter().any(|r| near(*r, x));
    let words = |s: &Side| {
        let from = if open(s.from) { s.from + 0.5 } else { s.from };
        let to = if open(s.to) { s.to - 0.5 } else { s.to };
        runnable(&c.axis, from, to)
    };
    // Many short sides one after another (a model that steps at every value) are said
    // together: each winner among them "in places" over their hull.
    let mut wins: Vec<String> = Vec::new();
    let mut ties: Vec<String> = Vec::new();
    for group in crate::sides::side_groups(&c.axis, &sides) {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let hull = Side {
            from: first.from,
            to: last.to,
            ..first.clone()
        };
        let places = if group.len() > 1 { "in places " } else { "" };
        for w in [Winner::A, Winner::B, Winner::Tie] {
            let Some(s) = group.iter().find(|s| s.winner == w) else {
                continue;
            };
            let Some(at) = words(if group.len() > 1 { &hull } else { s }) else {
                continue;
            };
            if w == Winner::Tie {
                ties.push(format!(
                    "{at}{}",
                    if places.is_empty() { "" } else { " in places" }
                ));
            } else {
                wins.push(format!(
                    "{} {} {places}for {at}",
                    name(w, &c.a, &c.b),
                    better(c.response.as_deref()),
                ));
            }
        }
    }
    ties.dedup();
    let mut out = if wins.is_empty() {
        format!(
            "{} and {} {} for {}{}.",
            c.a,
            c.b,
            apart(c.intervals, &c.errors, c.own_errors, &c.a, &c.b),
            stretch(&c.axis, c.axis.lo, c.axis.hi),
            at(&c.fixed)
        )
    } else {
        format!(
            "{}{}.",
            lead(c.intervals, &c.errors, c.own_errors, (&c.a, &c.b), &c.fixed),
            wins.join("; ")
        )
    };
    if !wins.is_empty() && !ties.is_empty() {
        out.push_str(&format!(
            " For {} these runs cannot tell them apart.",
            ties.join(" and ")
        ));
    }
    out.push_str(&extrapolated(!c.extrapolation.is_empty()));
    out
}

/// The verdict over two factors: for each implementation the levels of the second factor
/// where it is faster somewhere, and along the first where it is faster at the lowest and the
/// highest of those levels; then how much of the map is undecided. First what the runs decided
/// at the points both measured.
pub fn map(m: &WinnerMap) -> String {
    let runs = by_runs(&m.a, &m.b, m.response.as_deref(), &m.measured);
    runs_first(runs, map_models(m), disagreements(&m.a, &m.b, &m.measured))
}

/// The models' verdict over two factors (the cells nearest the measured points hold the runs').
fn map_models(m: &WinnerMap) -> String {
    let cells = (m.us.len() * m.vs.len()).max(1);
    let mut sentences = Vec::new();
    let mut decided = 0;
    for w in [Winner::A, Winner::B] {
        // Per level where `w` wins somewhere: the level and the hull of its stretches along u.
        let mut levels: Vec<(f64, f64, f64)> = Vec::new();
        let mut count = 0;
        // Whether, at some level, another verdict lies inside that hull: `w` wins there in
        // places, not throughout (a model that steps with a whole-number factor).
        let mut gaps = false;
        // The models' cells: the runs' verdicts at the measured points are said above.
        for (j, row) in m.comparisons.iter().enumerate() {
            let row: Vec<Winner> = row.iter().map(|c| c.winner).collect();
            let n = row.iter().filter(|&&c| c == w).count();
            if n == 0 {
                continue;
            }
            count += n;
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for s in m.levels.get(j).into_iter().flatten() {
                if s.winner == w && s.to > s.from {
                    lo = lo.min(s.from);
                    hi = hi.max(s.to);
                }
            }
            for (i, &c) in row.iter().enumerate() {
                if c == w {
                    lo = lo.min(m.us[i]);
                    hi = hi.max(m.us[i]);
                }
            }
            gaps |= m
                .levels
                .get(j)
                .into_iter()
                .flatten()
                .any(|s| s.winner != w && s.to > s.from && s.from >= lo && s.to <= hi);
            levels.push((m.vs[j], lo, hi));
        }
        let (Some(&(v0, lo0, hi0)), Some(&(v1, lo1, hi1))) = (levels.first(), levels.last()) else {
            continue;
        };
        decided += count;
        let v = &m.v.factor;
        let on_u = |lo: f64, hi: f64| {
            runnable(&m.u, lo, hi).unwrap_or_else(|| {
                let at = if m.u.integer { lo.round() } else { lo };
                format!("{} = {}", m.u.factor, human(at))
            })
        };
        let (first, last) = (on_u(lo0, hi0), on_u(lo1, hi1));
        // A level of a whole-number factor said as the nearest runnable value.
        let (v0, v1) = if m.v.integer {
            (v0.round(), v1.round())
        } else {
            (v0, v1)
        };
        let region = if v0 == v1 {
            format!("{first} at {v} = {}", human(v0))
        } else if first == last {
            format!("{first} when {}", stretch(&m.v, v0, v1))
        } else {
            format!(
                "{} ({first} at {v} = {}, {last} at {v} = {})",
                stretch(&m.v, v0, v1),
                human(v0),
                human(v1)
            )
        };
        let share = human(100.0 * count as f64 / cells as f64);
        sentences.push(format!(
            "{} {} {}for {region}: {share}% of the map",
            name(w, &m.a, &m.b),
            better(m.response.as_deref()),
            if gaps { "in places " } else { "" }
        ));
    }
    let undecided = 100.0 * (cells - decided) as f64 / cells as f64;
    let mut out = if sentences.is_empty() {
        format!(
            "{} and {} {} anywhere on the map ({} by {}){}.",
            m.a,
            m.b,
            apart(m.intervals, &m.errors, m.own_errors, &m.a, &m.b),
            stretch(&m.u, m.u.lo, m.u.hi),
            stretch(&m.v, m.v.lo, m.v.hi),
            at(&m.fixed)
        )
    } else {
        format!(
            "{}{}.",
            lead(m.intervals, &m.errors, m.own_errors, (&m.a, &m.b), &m.fixed),
            sentences.join("; ")
        )
    };
    if !sentences.is_empty() && decided < cells {
        out.push_str(&format!(
            " Elsewhere ({}% of the map) {}.",
            human(undecided),
            if m.intervals {
                "these runs cannot tell them apart"
            } else {
                "they predict the same time"
            }
        ));
    }
    out.push_str(&extrapolated(!m.extrapolation.is_empty()));
    out
}

/// What winning means: `is faster` for run times, `has the lower latency (in its own units)`
/// for a response.
fn better(response: Option<&str>) -> String {
    match response {
        None => "is faster".into(),
        Some(r) => format!("has the lower {r} (in its own units)"),
    }
}

/// What the two do where neither wins: with intervals, the runs cannot tell them apart (and
/// how sure that is); without, the means are equal.
fn apart(
    intervals: bool,
    errors: &[Option<ValidatedError>; 2],
    own: [bool; 2],
    a: &str,
    b: &str,
) -> String {
    match (intervals, errors.iter().any(Option::is_some)) {
        (true, true) => format!("cannot be told apart at 90%, {},", included(errors, a, b)),
        (true, false) => format!(
            "cannot be told apart at 90% (in {} alone)",
            basis(own, a, b)
        ),
        (false, _) => "predict the same time".to_string(),
    }
}

fn extrapolated(yes: bool) -> String {
    if yes {
        " Part of it lies outside the measured runs (extrapolation).".into()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::{basis, chance, included};
    use fit::crossover::ValidatedError;

    #[test]
    fn a_verdict_names_the_one_model_whose_validated_error_it_includes() {
        let e = Some(ValidatedError {
            relative_sd: 0.1,
            points: 2,
        });
        assert_eq!(
            included(&[e, e], "dp", "tp"),
            "the models' validated errors included"
        );
        assert_eq!(
            included(&[e, None], "dp", "tp"),
            "dp's validated error included (tp has none)"
        );
        assert_eq!(
            included(&[None, e], "dp", "tp"),
            "tp's validated error included (dp has none)"
        );
    }

    #[test]
    fn each_models_intervals_are_named_for_what_they_hold() {
        assert_eq!(
            format!("{} alone", basis([false, false], "dp", "tp")),
            "the fitted coefficients alone"
        );
        assert_eq!(
            format!("{} alone", basis([true, true], "dp", "tp")),
            "the models' errors on the runs they were built from alone"
        );
        assert_eq!(
            format!("{} alone", basis([true, false], "dp", "flat")),
            "dp's error on the runs it was built from and flat's fitted coefficients alone"
        );
        assert_eq!(
            format!("{} alone", basis([false, true], "flat", "dp")),
            "flat's fitted coefficients and dp's error on the runs it was built from alone"
        );
    }

    #[test]
    fn as_many_decided_points_as_chance_gives_are_said_to_be_no_difference() {
        // P(X >= 2) for X ~ Binomial(22, 0.1) = 1 - 0.9^22 - 22 * 0.1 * 0.9^21 = 0.661.
        let said = chance(22, 2);
        assert!(said.contains("2 of 22 is about what chance alone gives (probability 0.66"));
        // 16 of 51 is far beyond the 5.1 that chance gives (P about 2e-5): nothing to add.
        assert_eq!(chance(51, 16), "");
        assert_eq!(chance(51, 0), "");
        assert!(chance(51, 6).contains("of 51"));
    }
    use super::human;

    #[test]
    fn numbers_for_people() {
        assert_eq!(human(65.0163), "65");
        assert_eq!(human(2.2738), "2.27");
        assert_eq!(human(0.5), "0.5");
        assert_eq!(human(1024.0), "1024");
        assert_eq!(human(8.0), "8");
        assert_eq!(human(0.000123), "0.000123");
    }
}
