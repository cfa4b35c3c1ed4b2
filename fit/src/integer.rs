//! Integer structure along a factor such as `p` (docs/modelling.md#integer-structure): a
//! residual test that decides when the smooth shapes miss a pattern that only whole numbers
//! have, and the terms that can follow it.
//!
//! A program that splits `p` threads into two groups of `floor(p/2)` and `ceil(p/2)` loses time
//! at odd `p` only; `p` threads on `c` cores run in `ceil(p/c)` rounds. No smooth shape follows
//! either. The test: average the smooth fit's residuals (relative residuals for a relative fit)
//! over each cell of the design (runs with the same factor values, so that replicates count
//! once), then, for each grouping of the factor's levels (`p mod 2`, `p mod k`, rounds of
//! `ceil(p/cores)`), fit the cell means by a quadratic trend in the factor with and without
//! one effect per group, and test the group effects by the partial F test (a one-way ANOVA of
//! the groups once a smooth trend is taken out, so a curved misfit of the smooth shape is not
//! mistaken for a pattern). The groupings' p-values are adjusted by Holm's step-down method;
//! those below [`LEVEL`] fire, and only then are their terms offered to the category's model.

use nalgebra::{DMatrix, DVector};
use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use crate::fit::{Fit, Weighting};
use crate::linear::least_squares;
use crate::observations::{Cell, Datafile, Observations};

/// The family-wise level of the residual tests (after Holm's adjustment).
pub const LEVEL: f64 = 0.05;

/// Coefficients of the smooth trend taken out before the group effects are tested (a
/// quadratic in the factor).
const TREND: usize = 3;

/// Fewest distinct levels a factor needs before its integer structure is tested.
const MIN_LEVELS: usize = 5;

/// Fewest distinct levels of the factor in each group: an effect resting on two levels per
/// group is too easily two levels' noise.
const MIN_PER_GROUP: usize = 3;

/// A grouping of the levels of a whole-numbered factor `x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// `x mod k`, `k >= 2`: odd against even for `k = 2`.
    Modulo(u32),
    /// The rounds `ceil(x / cores)` in which `x` threads run on `cores` cores.
    Rounds(u32),
}

impl Grouping {
    /// The group of level `x`.
    fn group(self, x: f64) -> i64 {
        let x = x.round() as i64;
        match self {
            Grouping::Modulo(k) => x.rem_euclid(k as i64),
            Grouping::Rounds(c) => (x + c as i64 - 1).div_euclid(c as i64),
        }
    }

    /// `p mod 2`, `rounds ceil(p/16)`.
    pub fn describe(self, factor: &str) -> String {
        match self {
            Grouping::Modulo(k) => format!("{factor} mod {k}"),
            Grouping::Rounds(c) => format!("rounds ceil({factor}/{c})"),
        }
    }

    /// The terms that can follow the pattern, in model syntax:
    /// * for `x mod k`, the steps `floor(x/k)` and `ceil(x/k)` (beside a smooth term in `x`
    ///   they make a saw-tooth of period `k`) and the imbalance of `k` groups,
    ///   `x/(k*floor(x/k))`: how much longer the smallest of `k` groups that share the work
    ///   equally takes than an even split of `x` would (1 where `k` divides `x`); for `k = 2`
    ///   also the odd indicator `(x-2*floor(x/2))`;
    /// * for rounds, `ceil(x/cores)` and their imbalance `cores*ceil(x/cores)/x` (1 when the
    ///   last round is full).
    ///
    /// ```
    /// use fit::integer::Grouping;
    /// assert_eq!(Grouping::Modulo(2).terms("p")[0], "(p-2*floor(p/2))");
    /// assert_eq!(Grouping::Modulo(3).terms("p"), ["floor(p/3)", "ceil(p/3)", "p/(3*floor(p/3))"]);
    /// assert_eq!(Grouping::Rounds(16).terms("p"), ["ceil(p/16)", "16*ceil(p/16)/p"]);
    /// ```
    pub fn terms(self, x: &str) -> Vec<String> {
        match self {
            Grouping::Modulo(k) => {
                let mut terms = vec![
                    format!("floor({x}/{k})"),
                    format!("ceil({x}/{k})"),
                    format!("{x}/({k}*floor({x}/{k}))"),
                ];
                if k == 2 {
                    terms.insert(0, format!("({x}-2*floor({x}/2))"));
                }
                terms
            }
            Grouping::Rounds(c) => vec![format!("ceil({x}/{c})"), format!("{c}*ceil({x}/{c})/{x}")],
        }
    }
}

/// One grouping's test on the residuals.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The grouping.
    pub grouping: Grouping,
    /// The partial F statistic of the group effects.
    pub f: f64,
    /// Its degrees of freedom (groups − 1, cells − trend − groups + 1).
    pub dof: (usize, usize),
    /// The unadjusted p-value.
    pub p_value: f64,
    /// The p-value adjusted by Holm's method over every grouping tested.
    pub adjusted: f64,
}

impl Finding {
    /// Whether the test fires at [`LEVEL`].
    pub fn fires(&self) -> bool {
        self.adjusted < LEVEL
    }
}

/// Whether every value is a whole number of at least 1 and there are enough levels to test.
pub fn is_integer_factor(levels: &[f64]) -> bool {
    levels.len() >= MIN_LEVELS && levels.iter().all(|&x| x >= 1.0 && x.fract() == 0.0)
}

/// The groupings worth testing on these (sorted, distinct) levels: `x mod k` for every `k`
/// that leaves at least three levels in each residue class, and the rounds of `cores` when the
/// levels span at least two rounds with three levels each. Rounds that coincide with a modulo
/// grouping already listed are left out.
pub fn groupings(levels: &[f64], cores: Option<u32>) -> Vec<Grouping> {
    let eligible = |g: Grouping| {
        let mut groups: Vec<(i64, usize)> = Vec::new();
        for &x in levels {
            match groups.iter_mut().find(|(k, _)| *k == g.group(x)) {
                Some((_, count)) => *count += 1,
                None => groups.push((g.group(x), 1)),
            }
        }
        groups.len() >= 2 && groups.iter().all(|(_, count)| *count >= MIN_PER_GROUP)
    };
    let mut out: Vec<Grouping> = (2..=(levels.len() / MIN_PER_GROUP) as u32)
        .map(Grouping::Modulo)
        .filter(|&g| eligible(g))
        .collect();
    if let Some(c) = cores.filter(|&c| c >= 1) {
        let rounds = Grouping::Rounds(c);
        let same_partition = |g: Grouping| {
            levels.iter().all(|&a| {
                levels
                    .iter()
                    .all(|&b| (g.group(a) == g.group(b)) == (rounds.group(a) == rounds.group(b)))
            })
        };
        if eligible(rounds) && !out.iter().any(|&g| same_partition(g)) {
            out.push(rounds);
        }
    }
    out
}

/// Why the integer structure of a whole-numbered factor with these (sorted, distinct) levels
/// cannot be tested, and which runs would let it be: `None` when a grouping is eligible, or when
/// the factor is not whole-numbered or has fewer than three levels (no pattern to miss). The
/// bundled edges design, `p` = 2, 3, 5, 7, 8, is the usual case: two even levels only.
///
/// ```
/// let why = fit::integer::untested("p", &[2.0, 3.0, 5.0, 7.0, 8.0], None).unwrap();
/// assert!(why.contains("even 2, 8"), "{why}");
/// assert!(why.contains("p = 4"), "{why}");
/// assert_eq!(fit::integer::untested("p", &[2.0, 3.0, 4.0, 5.0, 6.0, 7.0], None), None);
/// ```
pub fn untested(factor: &str, levels: &[f64], cores: Option<u32>) -> Option<String> {
    let whole = levels.iter().all(|&x| x >= 1.0 && x.fract() == 0.0);
    if !whole || levels.len() < 3 || !groupings(levels, cores).is_empty() {
        return None;
    }
    let list = |xs: &[f64]| match xs {
        [] => "none".to_string(),
        _ => xs
            .iter()
            .map(|x| format!("{x}"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let parity = Grouping::Modulo(2);
    let (even, odd): (Vec<f64>, Vec<f64>) = levels.iter().partition(|&&x| parity.group(x) == 0);
    // The fewest new whole levels inside the range, nearest its middle first, that give each
    // parity at least MIN_PER_GROUP levels (and so the factor more than MIN_LEVELS).
    let (lo, hi) = (levels[0], levels[levels.len() - 1]);
    let mid = (lo + hi) / 2.0;
    // A window about the middle wide enough to hold the few levels needed beside the measured
    // ones (p may range over millions).
    let reach = 64.0 + levels.len() as f64;
    let (from, to) = ((mid - reach).max(lo).ceil(), (mid + reach).min(hi).floor());
    let mut free: Vec<f64> = (from as i64..=to as i64)
        .map(|x| x as f64)
        .filter(|x| !levels.contains(x))
        .collect();
    free.sort_by(|a, b| {
        (a - mid)
            .abs()
            .total_cmp(&(b - mid).abs())
            .then(a.total_cmp(b))
    });
    let (mut e, mut o) = (even.len(), odd.len());
    let mut add = Vec::new();
    for x in free {
        let count = if parity.group(x) == 0 { &mut e } else { &mut o };
        if *count < MIN_PER_GROUP {
            *count += 1;
            add.push(x);
        }
    }
    add.sort_by(f64::total_cmp);
    let runs = if e >= MIN_PER_GROUP && o >= MIN_PER_GROUP {
        format!("; runs at {factor} = {} would let it be tested", list(&add))
    } else {
        format!("; the range {lo}..{hi} has too few whole levels for it")
    };
    Some(format!(
        "integer structure in {factor} not tested: {factor} mod 2 needs {MIN_PER_GROUP} levels \
         of each parity, and the runs have even {} and odd {}{runs} \
         (docs/modelling.md#integer-structure)",
        list(&even),
        list(&odd),
    ))
}

/// [`untested`] for the processors `p` of a datafile's rows (the factor the default models
/// test, [`crate::combination::INTEGER_FACTOR`]); `cores` as given, else a `cores` column
/// that holds one value.
pub fn untested_in(data: &Datafile, cores: Option<u32>) -> Option<String> {
    let factor = crate::combination::INTEGER_FACTOR;
    let number = |row: usize, column: &str| match data.cell(row, column) {
        Some(Cell::Number(x)) => Some(x),
        _ => None,
    };
    let mut levels: Vec<f64> = (0..data.rows().len())
        .filter_map(|row| number(row, factor))
        .collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    let cores = cores.or_else(|| {
        let mut held = (0..data.rows().len()).filter_map(|row| number(row, "cores"));
        let first = held.next()?;
        (held.all(|c| c == first) && first >= 1.0 && first.fract() == 0.0 && first <= 1e6)
            .then_some(first as u32)
    });
    untested(factor, &levels, cores)
}

/// The residuals of `fit` on `obs` (relative to each value for a relative fit), averaged
/// over each cell of equal factor values: (the cell's value of factor `f`, mean residual).
pub fn cell_residuals(obs: &Observations, fit: &Fit, f: usize) -> Vec<(f64, f64)> {
    let mut point = vec![0.0; obs.factors.len()];
    let mut cells: Vec<(Vec<u64>, f64, f64, usize)> = Vec::new();
    for row in 0..obs.len() {
        obs.point(row, &mut point);
        let y = obs.y[row];
        let r = y - fit.evaluate(&point);
        let r = match fit.weighting {
            Weighting::Relative if y != 0.0 => r / y.abs(),
            _ => r,
        };
        let key: Vec<u64> = point.iter().map(|v| v.to_bits()).collect();
        match cells.iter_mut().find(|c| c.0 == key) {
            Some(cell) => {
                cell.2 += r;
                cell.3 += 1;
            }
            None => cells.push((key, point[f], r, 1)),
        }
    }
    cells
        .into_iter()
        .map(|(_, x, sum, count)| (x, sum / count as f64))
        .filter(|(_, r)| r.is_finite())
        .collect()
}

/// Every eligible grouping of factor `f` tested on the residuals of `fit`, Holm-adjusted,
/// most significant first. Empty when the factor is not whole-numbered or has too few
/// levels, or the cells leave too few degrees of freedom.
pub fn residual_tests(obs: &Observations, fit: &Fit, f: usize, cores: Option<u32>) -> Vec<Finding> {
    let levels = obs.levels(f);
    if !is_integer_factor(&levels) {
        return Vec::new();
    }
    let cells = cell_residuals(obs, fit, f);
    let mut found: Vec<Finding> = groupings(&levels, cores)
        .into_iter()
        .filter_map(|g| group_effect_test(&cells, g))
        .collect();
    holm(&mut found);
    found
}

/// The partial F test of one effect per group over a quadratic trend, on the cell means.
fn group_effect_test(cells: &[(f64, f64)], grouping: Grouping) -> Option<Finding> {
    let mut groups: Vec<i64> = cells.iter().map(|c| grouping.group(c.0)).collect();
    groups.sort_unstable();
    groups.dedup();
    let n = cells.len();
    let extra = groups.len() - 1;
    let full_k = TREND + extra;
    if extra == 0 || n < full_k + 2 {
        return None;
    }
    // The factor centred and scaled, so the trend's columns are well conditioned.
    let (lo, hi) = cells
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
            (lo.min(c.0), hi.max(c.0))
        });
    let mid = (lo + hi) / 2.0;
    let half = ((hi - lo) / 2.0).max(1.0);
    let design = |k: usize| {
        DMatrix::from_fn(n, k, |i, j| {
            let x = (cells[i].0 - mid) / half;
            if j < TREND {
                x.powi(j as i32)
            } else {
                f64::from(u8::from(
                    grouping.group(cells[i].0) == groups[j - TREND + 1],
                ))
            }
        })
    };
    let y = DVector::from_iterator(n, cells.iter().map(|c| c.1));
    let trend = least_squares(&design(TREND), &y).ok()?;
    let full = least_squares(&design(full_k), &y).ok()?;
    let dof = n - full_k;
    if full.sse <= 0.0 {
        return None;
    }
    let f = ((trend.sse - full.sse).max(0.0) / extra as f64) / (full.sse / dof as f64);
    let p_value = FisherSnedecor::new(extra as f64, dof as f64).ok()?.sf(f);
    p_value.is_finite().then_some(Finding {
        grouping,
        f,
        dof: (extra, dof),
        p_value,
        adjusted: p_value,
    })
}

/// Holm's step-down adjustment, in place; sorts the findings most significant first.
fn holm(found: &mut [Finding]) {
    found.sort_by(|a, b| a.p_value.total_cmp(&b.p_value));
    let m = found.len();
    let mut running: f64 = 0.0;
    for (i, finding) in found.iter_mut().enumerate() {
        running = running.max(((m - i) as f64 * finding.p_value).min(1.0));
        finding.adjusted = running;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_groupings() {
        assert_eq!(Grouping::Rounds(4).group(4.0), 1);
        assert_eq!(Grouping::Rounds(4).group(5.0), 2);
        assert_eq!(Grouping::Modulo(3).group(7.0), 1);
        let levels: Vec<f64> = (2..=8).map(f64::from).collect();
        // p = 2..8: only p mod 2 leaves three levels in each class.
        assert_eq!(groupings(&levels, None), [Grouping::Modulo(2)]);
        // Three cores: the rounds 1,1,2,2,2,3,3 of p = 2..8 leave two levels in two rounds.
        assert_eq!(groupings(&levels, Some(3)), [Grouping::Modulo(2)]);
        // Two cores on p = 1..16: rounds 1..8, two levels each; four cores: rounds of 4.
        let levels: Vec<f64> = (1..=16).map(f64::from).collect();
        assert_eq!(groupings(&levels, None).len(), 4);
        assert_eq!(groupings(&levels, Some(2)).len(), 4);
        assert_eq!(
            groupings(&levels, Some(4)).last(),
            Some(&Grouping::Rounds(4))
        );
        // Sixteen cores: one round only, nothing to test.
        assert_eq!(groupings(&levels, Some(16)).len(), 4);
    }

    #[test]
    fn untested_says_which_runs_would_test_it() {
        // The edges design: one even level short, and p = 4 is nearest the middle.
        let why = untested("p", &[2.0, 3.0, 5.0, 7.0, 8.0], None).unwrap();
        assert!(
            why.contains("even 2, 8 and odd 3, 5, 7; runs at p = 4 would"),
            "{why}"
        );
        // Two levels only: no pattern to miss, nothing said.
        assert_eq!(untested("p", &[2.0, 8.0], None), None);
        // Three levels: three more are needed, the nearest to the middle of each parity.
        let why = untested("p", &[2.0, 5.0, 8.0], None).unwrap();
        assert!(why.contains("odd 5; runs at p = 3, 4, 7 would"), "{why}");
        // p = 2..6 cannot have three odd levels.
        let why = untested("p", &[2.0, 3.0, 4.0, 5.0, 6.0], None).unwrap();
        assert!(why.contains("too few whole levels"), "{why}");
        // Rounds of two cores over p = 1..6 are testable: nothing to say.
        let levels: Vec<f64> = (1..=6).map(f64::from).collect();
        assert_eq!(untested("p", &levels, Some(2)), None);
        // A range of millions: the runs suggested are still the few nearest the middle.
        let why = untested("p", &[1.0, 2.0, 1e6, 1e12], None).unwrap();
        assert!(why.contains("runs at p = "), "{why}");
        // Not whole numbers: no integer structure to look for.
        assert_eq!(untested("p", &[0.5, 1.5, 2.5, 3.5], None), None);
    }

    #[test]
    fn holm_by_hand() {
        let finding = |p_value| Finding {
            grouping: Grouping::Modulo(2),
            f: 1.0,
            dof: (1, 1),
            p_value,
            adjusted: p_value,
        };
        let mut found = [finding(0.04), finding(0.01), finding(0.03)];
        holm(&mut found);
        let adjusted: Vec<f64> = found.iter().map(|f| f.adjusted).collect();
        // 3 * 0.01, max(0.03, 2 * 0.03), max(0.06, 1 * 0.04).
        assert!((adjusted[0] - 0.03).abs() < 1e-12, "{adjusted:?}");
        assert!((adjusted[1] - 0.06).abs() < 1e-12, "{adjusted:?}");
        assert!((adjusted[2] - 0.06).abs() < 1e-12, "{adjusted:?}");
    }

    #[test]
    fn parity_effect_by_hand() {
        // Cell means: a quadratic trend plus 0.5 at odd x, and a little alternating noise that
        // the group effect cannot explain, so the F statistic is finite.
        let cells: Vec<(f64, f64)> = (2..=12)
            .map(|x| {
                let x = f64::from(x);
                let noise = if (x as i64) % 4 < 2 { 0.01 } else { -0.01 };
                (x, 0.1 * x * x + 0.5 * (x % 2.0) + noise)
            })
            .collect();
        let found = group_effect_test(&cells, Grouping::Modulo(2)).unwrap();
        assert_eq!(found.dof, (1, 7));
        assert!(found.f > 1000.0 && found.p_value < 1e-6, "{found:?}");
        // A smooth curve alone gives no group effect.
        let smooth: Vec<(f64, f64)> = (2..=12)
            .map(|x| {
                (
                    f64::from(x),
                    0.1 * f64::from(x).powi(2) + if x % 4 < 2 { 0.01 } else { -0.01 },
                )
            })
            .collect();
        let found = group_effect_test(&smooth, Grouping::Modulo(2)).unwrap();
        assert!(found.p_value > 0.05, "{found:?}");
    }
}
