//! `[decide]`: after the planned runs, runs chosen where they would most shrink the region in
//! which the first two implementations cannot be told apart at 90% (`lca crossover
//! --suggest`, `fit::decision`), a round at a time with the models refitted in between, until
//! that region is empty or the budget is spent. The chosen runs are model runs (`role=model`)
//! at points the plan did not have (or more replicates of them); a resumed study counts them
//! against the budget.

use std::collections::HashMap;

use anyhow::{Result, anyhow};
use fit::decision::Which;

use super::datafile::Rows;
use super::file::{Decide, Study};
use super::measure::Session;
use super::models::{self, Fitted};
use super::plan::{Key, Point, Role};

/// A point without its replicate.
type Group = (usize, Role, Vec<u64>);

fn group(p: &Point) -> Group {
    (
        p.implementation,
        p.role,
        p.values.iter().map(|v| v.to_bits()).collect(),
    )
}

/// The runs `[decide]` chose so far.
pub fn spent(points: &[Point]) -> usize {
    points.iter().filter(|p| p.role == Role::Decide).count()
}

/// The runs an earlier start chose (the datafile's `role=decide` rows), as points.
pub fn earlier(study: &Study, times: &HashMap<Key, f64>) -> Vec<Point> {
    let mut chosen: Vec<Point> = times
        .keys()
        .filter_map(|k| k.point(study))
        .filter(|p| p.role == Role::Decide)
        .collect();
    chosen.sort_by(|a, b| {
        (a.implementation, &a.values, a.replicate)
            .partial_cmp(&(b.implementation, &b.values, b.replicate))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    chosen
}

/// The decide phase: rounds of runs chosen by [`round`], each made and added to `points`,
/// the models fitted again before each, until the budget is spent or nothing is left
/// undecided; the summary's line on them.
pub fn rounds(
    session: &mut Session,
    study: &Study,
    points: &mut Vec<Point>,
) -> Result<Option<String>> {
    let Some(decide) = study.decide else {
        return Ok(None);
    };
    let mut spent = spent(points);
    let (mut before, mut rounds) = (None, 0);
    while spent < decide.budget {
        let k = decide.per_round.min(decide.budget - spent);
        let fitted = models::fit(study, points, &Rows::read(study)?);
        let Some((share, runs)) = round(study, points, &fitted, k)? else {
            break;
        };
        before.get_or_insert(share);
        if runs.is_empty() {
            break;
        }
        let why = format!(
            "runs to decide the crossover ({}% of the map undecided)",
            reports::verdict::human(100.0 * share)
        );
        session.announce(&runs, &why, points);
        session.make(&runs)?;
        spent += runs.len();
        rounds += 1;
    }
    Ok(Some(summary(study, decide, spent, before, rounds)))
}

/// The summary's line: the runs chosen, and how much was undecided before this start's.
fn summary(
    study: &Study,
    decide: Decide,
    spent: usize,
    before: Option<f64>,
    rounds: usize,
) -> String {
    let how = match (before, rounds) {
        (_, 0) if spent >= decide.budget => "(spent by an earlier start of the study)".into(),
        (Some(share), _) if share > 0.0 => format!(
            "({}% of it undecided before this start's; the verdict below is after them)",
            reports::verdict::human(100.0 * share)
        ),
        (Some(_), _) => "(nothing is left undecided)".into(),
        (None, _) => "(no crossover of two models to decide)".into(),
    };
    format!(
        "decide:   {spent} of {} runs chosen where they would most narrow the undecided \
         region of {} against {} {how}\n",
        decide.budget, study.implementations[0].name, study.implementations[1].name
    )
}

/// One round: the `k` runs that would most shrink the undecided region of the crossover of the
/// first two implementations' `fitted` models, with the share of the region undecided now.
/// None when there is no crossover to decide (a model missing, or the models vary more than two
/// factors); no runs when everything is decided.
pub fn round(
    study: &Study,
    points: &[Point],
    fitted: &[Fitted],
    k: usize,
) -> Result<Option<(f64, Vec<Point>)>> {
    let [a, b, ..] = fitted else {
        return Ok(None);
    };
    let (Some(ma), Some(mb)) = (&a.model, &b.model) else {
        return Ok(None);
    };
    let pair = fit::crossover::Pair::new(ma, mb)?;
    let free = pair.free(&[])?;
    if free.is_empty() || free.len() > 2 {
        return Ok(None);
    }
    let axes = free
        .iter()
        .map(|f| pair.default_axis(f))
        .collect::<Result<Vec<_>, _>>()?;
    let (region, candidates) = crate::compare::grids(&axes, &[]);
    let decision = fit::decision::suggest(&pair, &region, &candidates, k, 1.0)
        .map_err(|e| anyhow!("[decide]: {e}"))?;
    if decision.undecided == 0.0 {
        return Ok(Some((0.0, Vec::new())));
    }
    let mut highest: HashMap<Group, usize> = HashMap::new();
    for p in points {
        let r = highest.entry(group(p)).or_insert(0);
        *r = (*r).max(p.replicate);
    }
    let mut round = Vec::new();
    for s in decision.suggestions {
        let values: Vec<f64> = study
            .factors
            .iter()
            .map(|f| {
                let v = s
                    .point
                    .iter()
                    .find(|(n, _)| *n == f.name)
                    .map_or(f.levels[0], |(_, v)| *v);
                // Runnable: a whole number on an integer factor, inside the study's levels.
                let (lo, hi) = (f.levels[0], f.levels[f.levels.len() - 1]);
                let v = if f.integer { v.round() } else { v };
                v.clamp(lo, hi)
            })
            .collect();
        let mut point = Point {
            implementation: if s.which == Which::A { 0 } else { 1 },
            role: Role::Decide,
            values,
            replicate: 1,
        };
        let r = highest.entry(group(&point)).or_insert(0);
        *r += 1;
        point.replicate = *r;
        round.push(point);
    }
    Ok(Some((decision.undecided, round)))
}
