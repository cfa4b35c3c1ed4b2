//! A performance model in a few lines: per category the formula with its coefficients, how
//! its shapes were chosen, the combination and the allocation of variation that chose it.

use std::fmt::Write as _;

use fit::combination::{CategoryModel, ChosenBy, ShapeSource};
use fit::performance::PerformanceModel;

use crate::number::{estimate, significant};

/// The summary `lca model` prints.
pub fn summary(model: &PerformanceModel) -> String {
    let mut out = String::new();
    let name = if model.name.is_empty() {
        "(unnamed)"
    } else {
        &model.name
    };
    let p = &model.provenance;
    let selection = if p.conditions.is_empty() {
        String::new()
    } else {
        format!(" where {}", p.conditions.join(", "))
    };
    let _ = writeln!(
        out,
        "performance model '{name}': {} runs of {}{selection}",
        p.lines.len(),
        if p.datafile.is_empty() {
            "(no datafile)"
        } else {
            &p.datafile
        }
    );
    let ranges: Vec<String> = model
        .factors
        .iter()
        .zip(&model.ranges)
        .map(|(f, (lo, hi))| format!("{f} in [{lo}, {hi}]"))
        .collect();
    let held: Vec<String> = model.held.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if let Some(predicted) = &p.predicted {
        let _ = writeln!(
            out,
            "predicted, not measured: {}",
            predicted.describe(&model.factors, &model.ranges)
        );
    }
    let _ = write!(out, "factors: {}", ranges.join(", "));
    if !held.is_empty() {
        let _ = write!(out, "; held: {}", held.join(", "));
    }
    let names: Vec<&str> = model
        .categories
        .iter()
        .map(|c| c.category.as_str())
        .collect();
    if model.kind == fit::performance::Kind::Response {
        let _ = writeln!(
            out,
            "\nresponses, each in its own units: {}\n",
            names.join(", ")
        );
    } else {
        let _ = writeln!(out, "\nT_p = ({}) / p\n", names.join(" + "));
    }
    for line in together(model) {
        let _ = writeln!(out, "{line}\n");
    }
    for c in &model.categories {
        category(&mut out, c);
    }
    if let Some(b) = &model.baseline {
        let coefficients: Vec<String> = b
            .coefficients
            .iter()
            .map(|e| format!("{} {}", e.name, significant(e.value, 4)))
            .collect();
        let _ = writeln!(
            out,
            "baseline (the paper's): plane `{}` through the {} corner runs' T_p: {}",
            b.model.text(),
            b.n,
            coefficients.join(", ")
        );
    }
    out
}

/// What the model says of factors that varied together in every run, one line for each group
/// (the categories' models share them): the model follows the group's lead alone
/// (docs/modelling.md#factors-that-vary-together).
pub fn together(model: &PerformanceModel) -> Vec<String> {
    let mut groups: Vec<&fit::combination::Together> = Vec::new();
    for t in model.categories.iter().flat_map(|c| &c.vary_together) {
        if !groups.iter().any(|g| g.factors == t.factors) {
            groups.push(t);
        }
    }
    let mut out = Vec::new();
    for t in groups {
        let (lead, others) = (&t.factors[0], &t.factors[1..]);
        let (names, rest, shapes, verb) = match others {
            [one] => (
                format!("{lead} and {one}"),
                "the other",
                format!("{one}'s shape is 1"),
                format!("{one} does"),
            ),
            _ => (
                format!("{lead}, {}", others.join(", ")),
                "the others",
                format!("{} shapes are 1", others.join("'s and ") + "'s"),
                format!("{} do", others.join(" or ")),
            ),
        };
        out.push(format!(
            "{names} vary together in every run (each value of one comes with one value of \
             {rest}): these runs cannot tell their effects apart, so the model follows {lead} \
             alone ({shapes}); a prediction where {verb} not go with {lead} as in these runs \
             rests on no run. To model them apart, measure runs where one varies alone"
        ));
    }
    out
}

/// What the user should not trust in a category's model, one line each: a poor fit
/// ([`fit::Fit::poor_fit`]) and shapes that predict their edges no better than a constant.
pub fn warnings(c: &CategoryModel) -> Vec<String> {
    let mut out: Vec<String> = c
        .fit
        .poor_fit()
        .map(|why| format!("poor fit: {why}"))
        .into_iter()
        .collect();
    for s in c.shapes.iter().filter(|s| s.no_better_than_constant()) {
        out.push(format!(
            "weak shape: on its edges `{}` predicts left-out runs no better than a constant \
             ({}% against {}%): these runs do not show how {} depends on {}",
            s.expr,
            significant(100.0 * s.score.unwrap_or(f64::NAN), 2),
            significant(100.0 * s.constant_score.unwrap_or(f64::NAN), 2),
            c.category,
            s.factor
        ));
    }
    out
}

fn category(out: &mut String, c: &CategoryModel) {
    let f = &c.fit;
    let _ = writeln!(out, "{}  = {}", c.category, f.model.text());
    for e in f.coefficients.iter().chain(&f.parameters) {
        let _ = writeln!(
            out,
            "    {:<28} {}",
            e.name,
            estimate(e.value, e.half_width)
        );
    }
    if f.n > 0 {
        let _ = writeln!(
            out,
            "    R² {}  LOO error {}  ({} runs, {} fit)",
            significant(f.r2, 4),
            significant(f.cv, 3),
            f.n,
            match f.weighting {
                fit::Weighting::Absolute => "absolute",
                fit::Weighting::Relative => "relative",
            }
        );
    }
    for s in &c.shapes {
        let how = match s.source {
            ShapeSource::User => "given".to_string(),
            ShapeSource::Only => "the only default".to_string(),
            ShapeSource::BeyondDefaults => format!(
                "error {}% on {} edge(s); the defaults fit at least twice as badly, best `{}` {}%",
                significant(100.0 * s.score.unwrap_or(f64::NAN), 2),
                s.edges,
                s.runner_up.as_ref().map_or("-", |r| r.0.as_str()),
                significant(100.0 * s.runner_up.as_ref().map_or(f64::NAN, |r| r.1), 2)
            ),
            ShapeSource::LackOfFit => format!(
                "error {}% on {} edge(s); the replicates reject the best default `{}` ({}%) by \
                 lack of fit (1%), and not this one",
                significant(100.0 * s.score.unwrap_or(f64::NAN), 2),
                s.edges,
                s.runner_up.as_ref().map_or("-", |r| r.0.as_str()),
                significant(100.0 * s.runner_up.as_ref().map_or(f64::NAN, |r| r.1), 2)
            ),
            ShapeSource::Unranked => "first default; no edge with 3 levels to rank on".into(),
            ShapeSource::Follows => {
                let lead = c
                    .vary_together
                    .iter()
                    .find(|t| t.factors.contains(&s.factor));
                format!(
                    "varies with {} in every run, which the model follows",
                    lead.map_or("another factor", |t| t.factors[0].as_str())
                )
            }
            ShapeSource::Ranked => {
                let mut how = format!(
                    "best of the defaults on {} edge(s), error {}%",
                    s.edges,
                    significant(100.0 * s.score.unwrap_or(f64::NAN), 2)
                );
                if let Some((runner, score)) = &s.runner_up {
                    let _ = write!(how, "; next `{runner}` {}%", significant(100.0 * score, 2));
                }
                how
            }
        };
        let _ = writeln!(out, "    shape in {}: {}  ({how})", s.factor, s.expr);
    }
    if let Some(i) = &c.integer {
        let _ = writeln!(out, "    {}", integer_line(i));
    }
    for warning in warnings(c) {
        let _ = writeln!(out, "    {warning}");
    }
    if let (Some(combination), Some(by)) = (c.combination, c.chosen_by) {
        let why = match (by, c.variation) {
            (ChosenBy::Equivalent, _) => {
                "at most one factor has a shape: both forms are the same".into()
            }
            (ChosenBy::User, _) => "chosen by the user".to_string(),
            (ChosenBy::Variation, Some(v)) => {
                let mut why = format!(
                    "interaction {:.1}% of the variation at the {} corners; additive implies \
                     0%, multiplicative {:.1}%",
                    100.0 * v.interaction,
                    v.cells,
                    100.0 * v.implied_multiplicative
                );
                if v.multiplicative_cv.is_finite() {
                    let _ = write!(
                        why,
                        "; LOO error multiplicative {}, full {} (F test of the full form's \
                         extra terms: p = {})",
                        significant(v.multiplicative_cv, 3),
                        significant(v.full_cv, 3),
                        significant(v.full_p_value, 2)
                    );
                } else if v.full_p_value.is_finite() {
                    let _ = write!(
                        why,
                        "; F test of the full form's products over the additive form: p = {} \
                         (LOO error full {})",
                        significant(v.full_p_value, 2),
                        significant(v.full_cv, 3)
                    );
                }
                why
            }
            (ChosenBy::Variation, None) => "allocation of variation".into(),
            (ChosenBy::LeaveOneOut, _) => match &c.leave_one_out {
                Some(l) => leave_one_out_why(l),
                None => "leave-one-out error, a corner of the design not measured".into(),
            },
        };
        let _ = writeln!(out, "    {combination}: {why}");
        if !c.dropped.is_empty() {
            let _ = writeln!(
                out,
                "    without {}: not significant (F test, 1%; the least significant first, never \
                 one that a kept product contains)",
                c.dropped
                    .iter()
                    .map(|d| format!("`{d}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    out.push('\n');
}

/// Why a form was chosen without every corner: each form's leave-one-out error, or that
/// these runs cannot estimate it, and on runs where the additive form holds the
/// multiplicative one, the F test that decided (docs/modelling.md#without-every-corner).
fn leave_one_out_why(l: &fit::combination::LeaveOneOutChoice) -> String {
    let error = |cv: f64| {
        if cv.is_finite() {
            significant(cv, 3)
        } else {
            "cannot be estimated on these runs".into()
        }
    };
    let errors = format!(
        "additive {}, multiplicative {}, full {}",
        error(l.additive_cv),
        error(l.multiplicative_cv),
        error(l.full_cv)
    );
    let mut why = if l.nested {
        format!(
            "no run at the corner {}, and these runs lie where every multiplicative fit is also \
             an additive one (lines through one point), so the multiplicative form stands unless \
             the additive's extra terms are significant (F test: p = {}); leave-one-out error \
             {errors}; a run at that corner would tell the forms apart",
            l.corner,
            significant(l.additive_p_value, 2)
        )
    } else {
        format!(
            "no run at the corner {}, so leave-one-out error chose among the forms: {errors}",
            l.corner
        )
    };
    if l.full_p_value.is_finite() {
        let _ = write!(
            why,
            " (F test of the full form's extra terms: p = {})",
            significant(l.full_p_value, 2)
        );
    }
    why
}

/// What the residual test found along `p` and what was chosen
/// (docs/modelling.md#integer-structure).
fn integer_line(i: &fit::combination::IntegerChoice) -> String {
    let found = format!(
        "integer structure in {}: residuals differ by {} (F = {} on {} and {} df, p = {} after \
         Holm over {} grouping(s))",
        i.factor,
        i.pattern,
        significant(i.f, 3),
        i.dof[0],
        i.dof[1],
        significant(i.p_value, 2),
        i.tests
    );
    match (&i.term, i.term_cv) {
        (Some(term), Some(cv)) if i.chosen => format!(
            "{found}; added `{term}`: LOO error {}, the smooth model's {}",
            significant(cv, 3),
            significant(i.smooth_cv, 3)
        ),
        (Some(term), Some(cv)) => format!(
            "{found}; kept the smooth model: LOO error {}, with `{term}` {}",
            significant(i.smooth_cv, 3),
            significant(cv, 3)
        ),
        _ => format!("{found}; kept the smooth model: no integer term's coefficient excludes zero"),
    }
}
