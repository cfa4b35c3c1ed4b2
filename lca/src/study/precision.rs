//! `[precision]`: more runs of a point, one round at a time, until the 90% confidence interval
//! of its mean `T_p` (the `wall` of its rows: Student t over the replicates) is within the
//! target of the mean, or the point has `max_replicates` runs. Every replicate is a row of the
//! datafile, and all of them are fitted: the models predict the mean time, and the spread
//! between replicates is what their intervals are made of (seed 001 keeps the minimum of
//! repeats, for micro-benchmarks of a machine whose noise only ever adds time; a study's
//! runs are the program's own behaviour, noise included, and the mean is what a user will see).

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::{Result, anyhow};

use super::file::{Precision, Study};
use super::measure::Session;
use super::plan::{Key, Point, Role, key_of_line};

/// The precision phase: rounds of one more replicate of every point whose `T_p` is not yet
/// known to the target ([`next_round`]), each made and added to `points`, until there is none.
pub fn rounds(session: &mut Session, study: &Study, points: &mut Vec<Point>) -> Result<()> {
    let Some(target) = study.precision else {
        return Ok(());
    };
    loop {
        let times = times(study).map_err(|e| anyhow!(e))?;
        let known: HashSet<Key> = points.iter().map(|p| p.key(study)).collect();
        let round: Vec<Point> = next_round(study, points, &times, target, session.failed())
            .into_iter()
            .filter(|p| !known.contains(&p.key(study)))
            .collect();
        if round.is_empty() {
            return Ok(());
        }
        let why = format!(
            "more runs: their T_p is not yet within ±{}% (90%)",
            100.0 * target.target
        );
        session.announce(&round, &why, points);
        session.make(&round)?;
    }
}

/// The `wall` of every complete row of the datafile, by its run's key.
pub fn times(study: &Study) -> Result<HashMap<Key, f64>, String> {
    super::datafile::check(&study.datafile)?;
    let text = match std::fs::read_to_string(&study.datafile) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(format!("{}: cannot read: {e}", study.datafile.display())),
    };
    let names: Vec<&str> = study.factors.iter().map(|f| f.name.as_str()).collect();
    let mut times = HashMap::new();
    for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        let Some(key) = key_of_line(line, &names) else {
            continue;
        };
        let wall = line
            .split_whitespace()
            .find_map(|t| t.strip_prefix("wall="))
            .and_then(|v| v.parse::<f64>().ok());
        if let Some(wall) = wall {
            times.insert(key, wall);
        }
    }
    Ok(times)
}

/// A point without its replicate: what the replicates of one point share.
type Group = (usize, Role, Vec<u64>);

fn group(p: &Point) -> Group {
    (
        p.implementation,
        p.role,
        p.values.iter().map(|v| v.to_bits()).collect(),
    )
}

/// What the replicates of one point measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// The point (its first replicate).
    pub point: Point,
    /// Rows measured.
    pub runs: usize,
    /// Mean `T_p` (s).
    pub mean: f64,
    /// Coefficient of variation of `T_p` between the runs (NaN with fewer than 2).
    pub cv: f64,
    /// Half-width of the 90% confidence interval of the mean, relative to it (NaN with fewer
    /// than 2 runs).
    pub relative_half_width: f64,
}

/// Each point's spread over its measured replicates, in the order of `points`.
pub fn spreads(study: &Study, points: &[Point], times: &HashMap<Key, f64>) -> Vec<Spread> {
    let mut groups: BTreeMap<usize, (Point, Vec<f64>)> = BTreeMap::new();
    let mut index: HashMap<Group, usize> = HashMap::new();
    for p in points {
        let next = index.len();
        let i = *index.entry(group(p)).or_insert(next);
        let entry = groups.entry(i).or_insert_with(|| (p.clone(), Vec::new()));
        if let Some(&t) = times.get(&p.key(study)) {
            entry.1.push(t);
        }
    }
    groups
        .into_values()
        .map(|(point, ts)| {
            let n = ts.len();
            let mean = ts.iter().sum::<f64>() / n.max(1) as f64;
            let (cv, half) = if n >= 2 {
                let var = ts.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
                let sd = var.sqrt();
                let t = fit::stats::t_quantile(n - 1);
                (sd / mean, t * sd / (n as f64).sqrt() / mean)
            } else {
                (f64::NAN, f64::NAN)
            };
            Spread {
                point,
                runs: n,
                mean,
                cv,
                relative_half_width: half,
            }
        })
        .collect()
}

/// The next round: one more replicate of every point whose mean `T_p` is not yet known to the
/// target and that has fewer than `max_replicates` runs, unless a run of it failed in this
/// start (`failed`: a failing point is not retried, under the next replicate number, forever).
pub fn next_round(
    study: &Study,
    points: &[Point],
    times: &HashMap<Key, f64>,
    precision: Precision,
    failed: &HashSet<Key>,
) -> Vec<Point> {
    let highest: HashMap<Group, usize> = points.iter().fold(HashMap::new(), |mut m, p| {
        let r = m.entry(group(p)).or_insert(0);
        *r = (*r).max(p.replicate);
        m
    });
    let failing: HashSet<Group> = points
        .iter()
        .filter(|p| failed.contains(&p.key(study)))
        .map(group)
        .collect();
    spreads(study, points, times)
        .into_iter()
        .filter(|s| !failing.contains(&group(&s.point)))
        .filter(|s| {
            s.runs < precision.max_replicates
                // Not reached: wider than the target, or unknown (NaN: fewer than 2 runs).
                && (s.relative_half_width > precision.target || s.relative_half_width.is_nan())
                && s.mean.is_finite()
        })
        .map(|s| {
            let mut point = s.point;
            point.replicate = highest[&group(&point)] + 1;
            point
        })
        .collect()
}

/// The runs an earlier start of the study added for precision (replicates beyond the
/// study's `replicates` of its points), as points.
pub fn earlier(study: &Study, planned: &[Point], times: &HashMap<Key, f64>) -> Vec<Point> {
    let mut more = Vec::new();
    for p in planned.iter().filter(|p| p.replicate == 1) {
        for replicate in study.replicates + 1.. {
            let point = Point {
                replicate,
                ..p.clone()
            };
            if !times.contains_key(&point.key(study)) {
                break;
            }
            more.push(point);
        }
    }
    more
}

/// The summary's lines on the noise of `T_p` between replicates: per implementation the median
/// and the largest coefficient of variation, and with `[precision]` how many points reached
/// the target. Nothing when no point has two runs.
pub fn report(study: &Study, points: &[Point], times: &HashMap<Key, f64>) -> String {
    let spreads = spreads(study, points, times);
    let mut text = String::new();
    for (i, implementation) in study.implementations.iter().enumerate() {
        let mine: Vec<&Spread> = spreads
            .iter()
            .filter(|s| s.point.implementation == i && s.cv.is_finite())
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut cvs: Vec<f64> = mine.iter().map(|s| s.cv).collect();
        cvs.sort_by(f64::total_cmp);
        let median = cvs[cvs.len() / 2];
        let worst = mine
            .iter()
            .max_by(|a, b| a.cv.total_cmp(&b.cv))
            .expect("not empty");
        let mut line = format!(
            "noise:    {}: T_p varies between runs of a point by {:.1}% (median CV of {} points), \
             most {:.1}% at {}",
            implementation.name,
            100.0 * median,
            mine.len(),
            100.0 * worst.cv,
            worst.point.place(study)
        );
        if let Some(precision) = study.precision {
            let reached = mine
                .iter()
                .filter(|s| s.relative_half_width <= precision.target)
                .count();
            let runs: Vec<usize> = mine.iter().map(|s| s.runs).collect();
            line += &format!(
                "; ±{}% (90%) reached at {reached} of {} points with {} to {} runs",
                100.0 * precision.target,
                mine.len(),
                runs.iter().min().unwrap_or(&0),
                runs.iter().max().unwrap_or(&0)
            );
        }
        text += &line;
        text.push('\n');
    }
    text
}
