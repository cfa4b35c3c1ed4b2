//! Designs over factors and the run plans they produce: full factorial, 2^k corners, and the
//! paper's edges design (every factor's extremes crossed, plus points along each edge).

use std::collections::HashSet;
use std::fmt::Write as _;

use crate::factor::Factor;

/// The most runs a plan may have (points times replicates), and so the most points of a
/// `lca predict --grid`: counted before anything is allocated.
pub const MAX_RUNS: usize = 1_000_000;

/// Which points of the space to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// Every combination of every level.
    Full,
    /// The 2^k corners: every combination of the factors' extremes.
    TwoK,
    /// The corners, plus `k` interior points along each edge (one factor varies, the others
    /// at an extreme) — the paper's design, sampling the edges of the space.
    Edges(usize),
}

/// One run of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Position in the run order (1-based).
    pub order: usize,
    /// Replicate number (1-based).
    pub replicate: usize,
    /// One value per factor, in the plan's factor order.
    pub values: Vec<f64>,
}

/// The runs to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Factor names, in the order of each run's values.
    pub factors: Vec<String>,
    /// The runs, in run order.
    pub runs: Vec<Run>,
}

/// A plan that cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// No factor given.
    #[error("a design needs at least one --factor")]
    NoFactors,
    /// A factor named twice.
    #[error("--factor {0} is given twice")]
    Duplicate(String),
    /// Zero replicates.
    #[error("--replicates must be at least 1")]
    NoReplicates,
    /// A fractional design of more factors than [`crate::fractional::MAX_FACTORS`].
    #[error("a fractional design has at most {max} factors; {0} given", max = crate::fractional::MAX_FACTORS)]
    TooManyFactors(usize),
    /// More runs than [`MAX_RUNS`]: `points` distinct points (at most; a float, as the count
    /// may not fit an integer), each `replicates` times.
    #[error("{}", too_large(*points, *replicates))]
    TooLarge { points: f64, replicates: usize },
}

fn too_large(points: f64, replicates: usize) -> String {
    let count = |n: f64| {
        if n < 1e15 {
            format!("{n}")
        } else {
            format!("{n:e}").replace('e', "e+")
        }
    };
    let limit = MAX_RUNS;
    if replicates == 1 {
        format!(
            "the design has {} points; the limit is {limit}",
            count(points)
        )
    } else {
        let runs = count(points * replicates as f64);
        let points = count(points);
        format!(
            "the design has {runs} runs ({points} points x {replicates} replicates); the limit is {limit}"
        )
    }
}

/// Refuses a plan of more than [`MAX_RUNS`] runs.
fn bounded(points: f64, replicates: usize) -> Result<(), PlanError> {
    if replicates == 0 {
        return Err(PlanError::NoReplicates);
    }
    if points * replicates as f64 > MAX_RUNS as f64 {
        return Err(PlanError::TooLarge { points, replicates });
    }
    Ok(())
}

/// The points of `design` (distinct, in a deterministic order), each replicated `replicates`
/// times; `seed` randomizes the run order (a Fisher–Yates shuffle with a fixed generator),
/// `None` keeps points in order with replicates adjacent.
pub fn plan(
    factors: &[Factor],
    design: Design,
    replicates: usize,
    seed: Option<u64>,
) -> Result<Plan, PlanError> {
    check(factors)?;
    // Count first: every product of level counts must fit before a point is made.
    let corners = 2f64.powi(i32::try_from(factors.len()).unwrap_or(i32::MAX));
    let interior = match design {
        Design::Full => {
            let points = factors.iter().map(|f| f.levels.len() as f64).product();
            bounded(points, replicates)?;
            Vec::new()
        }
        Design::TwoK => {
            bounded(corners, replicates)?;
            Vec::new()
        }
        Design::Edges(k) => {
            bounded(corners, replicates)?;
            // An edge has at most k interior points: fewer where they coincide once rounded.
            let along = |k: usize| corners + corners / 2.0 * factors.len() as f64 * k as f64;
            if k > MAX_RUNS {
                bounded(along(k), replicates)?;
            }
            let interior: Vec<Vec<f64>> = factors.iter().map(|f| f.interior(k)).collect();
            let points: f64 = interior.iter().map(|i| i.len() as f64).sum();
            bounded(corners + corners / 2.0 * points, replicates)?;
            interior
        }
    };
    let extremes: Vec<Vec<f64>> = factors
        .iter()
        .map(|f| {
            let (lo, hi) = f.extremes();
            vec![lo, hi]
        })
        .collect();
    let points = match design {
        Design::Full => cross(&factors.iter().map(|f| f.levels.clone()).collect::<Vec<_>>()),
        Design::TwoK => cross(&extremes),
        Design::Edges(_) => {
            let mut points = cross(&extremes);
            for i in 0..factors.len() {
                let mut axes = extremes.clone();
                axes[i] = interior[i].clone();
                points.extend(cross(&axes));
            }
            points
        }
    };
    replicate(factors, points, replicates, seed)
}

/// A 2^(k−q) fractional design: each run's signs (see [`crate::fractional::signs`]) mapped to
/// the factors' extremes (−1 low, +1 high).
pub fn fractional_plan(
    factors: &[Factor],
    generators: &[crate::fractional::Generator],
    replicates: usize,
    seed: Option<u64>,
) -> Result<Plan, PlanError> {
    check(factors)?;
    let max = crate::fractional::MAX_FACTORS;
    if factors.len() > max {
        return Err(PlanError::TooManyFactors(factors.len()));
    }
    let base = factors.len().saturating_sub(generators.len());
    bounded(
        2f64.powi(i32::try_from(base).unwrap_or(i32::MAX)),
        replicates,
    )?;
    let points = crate::fractional::signs(factors.len(), generators)
        .into_iter()
        .map(|signs| {
            signs
                .iter()
                .zip(factors)
                .map(|(&s, f)| {
                    let (lo, hi) = f.extremes();
                    if s > 0.0 { hi } else { lo }
                })
                .collect()
        })
        .collect();
    replicate(factors, points, replicates, seed)
}

fn check(factors: &[Factor]) -> Result<(), PlanError> {
    if factors.is_empty() {
        return Err(PlanError::NoFactors);
    }
    for (i, f) in factors.iter().enumerate() {
        if factors[..i].iter().any(|g| g.name == f.name) {
            return Err(PlanError::Duplicate(f.name.clone()));
        }
    }
    Ok(())
}

/// Distinct points, each `replicates` times, in order or shuffled by `seed`.
fn replicate(
    factors: &[Factor],
    mut points: Vec<Vec<f64>>,
    replicates: usize,
    seed: Option<u64>,
) -> Result<Plan, PlanError> {
    bounded(points.len() as f64, replicates)?;
    // Distinct points only (an edge point can coincide with a level of another list).
    let mut seen = HashSet::new();
    points.retain(|p| seen.insert(p.iter().map(|v| v.to_bits()).collect::<Vec<u64>>()));
    let mut runs: Vec<(usize, Vec<f64>)> = points
        .into_iter()
        .flat_map(|p| (1..=replicates).map(move |r| (r, p.clone())))
        .collect();
    if let Some(seed) = seed {
        shuffle(&mut runs, seed);
    }
    Ok(Plan {
        factors: factors.iter().map(|f| f.name.clone()).collect(),
        runs: runs
            .into_iter()
            .enumerate()
            .map(|(i, (replicate, values))| Run {
                order: i + 1,
                replicate,
                values,
            })
            .collect(),
    })
}

/// Every combination of one value per axis, the first axis varying slowest.
fn cross(axes: &[Vec<f64>]) -> Vec<Vec<f64>> {
    axes.iter().fold(vec![Vec::new()], |acc, axis| {
        acc.into_iter()
            .flat_map(|prefix| {
                axis.iter().map(move |&v| {
                    let mut point = prefix.clone();
                    point.push(v);
                    point
                })
            })
            .collect()
    })
}

/// Fisher–Yates with SplitMix64: the same seed gives the same order on every machine.
fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

impl Plan {
    /// CSV: a header `run,replicate,<factors>`, one row per run.
    pub fn to_csv(&self) -> String {
        let mut out = format!("run,replicate,{}\n", self.factors.join(","));
        for run in &self.runs {
            let values: Vec<String> = run.values.iter().map(|v| v.to_string()).collect();
            let _ = writeln!(out, "{},{},{}", run.order, run.replicate, values.join(","));
        }
        out
    }

    /// TOML: an array of tables `[[run]]` with `order`, `replicate` and each factor.
    pub fn to_toml(&self) -> String {
        let mut out = format!(
            "# run plan: {} runs over {}\n",
            self.runs.len(),
            self.factors.join(", ")
        );
        for run in &self.runs {
            let _ = write!(
                out,
                "\n[[run]]\norder = {}\nreplicate = {}\n",
                run.order, run.replicate
            );
            for (name, v) in self.factors.iter().zip(&run.values) {
                let value = if v.fract() == 0.0 && v.abs() < 1e15 {
                    format!("{}", *v as i64)
                } else {
                    format!("{v:?}")
                };
                let _ = writeln!(out, "{name} = {value}");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factors(specs: &[&str]) -> Vec<Factor> {
        specs.iter().map(|s| Factor::parse(s).unwrap()).collect()
    }

    #[test]
    fn full_and_corners() {
        let f = factors(&["p=2,4,8", "n=64,256"]);
        assert_eq!(plan(&f, Design::Full, 1, None).unwrap().runs.len(), 6);
        let corners = plan(&f, Design::TwoK, 1, None).unwrap();
        let points: Vec<Vec<f64>> = corners.runs.iter().map(|r| r.values.clone()).collect();
        assert_eq!(
            points,
            [[2.0, 64.0], [2.0, 256.0], [8.0, 64.0], [8.0, 256.0]]
        );
    }

    #[test]
    fn the_papers_edges_design() {
        // 2 factors, 3 points per edge: 4 corners + 2 factors x 2 edges x 3 = 16 runs.
        let f = factors(&["p=2,26", "n=32..1024:log2"]);
        let plan = plan(&f, Design::Edges(3), 1, None).unwrap();
        assert_eq!(plan.runs.len(), 16);
        let has = |p: f64, n: f64| plan.runs.iter().any(|r| r.values == [p, n]);
        assert!(has(2.0, 32.0) && has(26.0, 1024.0));
        assert!(has(14.0, 32.0) && has(14.0, 1024.0)); // along p, n at its extremes
        assert!(has(2.0, 256.0) && has(26.0, 256.0)); // along n, p at its extremes
        assert!(!has(14.0, 256.0)); // never the middle of the space
        // k factors: 2^k + k * 2^(k-1) * K.
        let f3 = factors(&["a=1,9", "b=1,9", "c=1,9"]);
        assert_eq!(
            super::plan(&f3, Design::Edges(3), 1, None)
                .unwrap()
                .runs
                .len(),
            8 + 3 * 4 * 3
        );
    }

    #[test]
    fn replicates_and_a_seeded_order() {
        let f = factors(&["p=2,26", "n=32,1024"]);
        let ordered = plan(&f, Design::TwoK, 3, None).unwrap();
        assert_eq!(ordered.runs.len(), 12);
        assert_eq!(ordered.runs[1].replicate, 2);
        let a = plan(&f, Design::TwoK, 3, Some(7)).unwrap();
        let b = plan(&f, Design::TwoK, 3, Some(7)).unwrap();
        let c = plan(&f, Design::TwoK, 3, Some(8)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.runs, c.runs);
        // A permutation: the same runs, another order.
        let mut x: Vec<_> = a
            .runs
            .iter()
            .map(|r| (r.replicate, r.values.clone()))
            .collect();
        let mut y: Vec<_> = ordered
            .runs
            .iter()
            .map(|r| (r.replicate, r.values.clone()))
            .collect();
        x.sort_by(|l, r| l.partial_cmp(r).unwrap());
        y.sort_by(|l, r| l.partial_cmp(r).unwrap());
        assert_eq!(x, y);
    }

    #[test]
    fn outputs() {
        let f = factors(&["p=2,4", "x=0.5,1.5"]);
        let plan = plan(&f, Design::TwoK, 1, None).unwrap();
        assert_eq!(plan.to_csv().lines().next().unwrap(), "run,replicate,p,x");
        assert_eq!(plan.to_csv().lines().nth(1).unwrap(), "1,1,2,0.5");
        assert!(
            plan.to_toml()
                .contains("[[run]]\norder = 1\nreplicate = 1\np = 2\nx = 0.5\n")
        );
    }

    #[test]
    fn bad_plans() {
        let f = factors(&["p=2,4", "p=8,16"]);
        assert_eq!(
            plan(&f, Design::Full, 1, None).unwrap_err().to_string(),
            "--factor p is given twice"
        );
        assert!(plan(&[], Design::Full, 1, None).is_err());
        assert!(plan(&f[..1], Design::Full, 0, None).is_err());
    }
}
