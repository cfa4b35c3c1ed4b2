//! Allocation of variation (Jain, *The Art of Computer Systems Performance Analysis*,
//! ch. 17–18 and 22): how much of a response's variation each factor and interaction
//! explains. Two methods:
//!
//! * [`sign_table`]: the 2^k r design — every factor at two levels, r replicates per cell;
//!   effects from the sign table, sums of squares `2^k r q²`, 90% intervals of the effects
//!   from the replicates.
//! * [`two_factor_anova`]: a general two-factor full factorial with r ≥ 1 replicates
//!   (a × b cells): sums of squares of A, B, AB and error, mean squares, F tests.
//!
//! A design that is neither — the paper's edges design, say, whose interior levels are
//! measured along the edges only — still has a 2^k r design inside it when every corner (each
//! factor at its lowest or highest level) was measured: [`corners`] keeps those rows, and the
//! sign table allocates the variation between the extremes.

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use crate::observations::Observations;
use crate::stats::t_quantile;

/// One effect of a 2^k r design.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    /// `I` for the mean, `A`, `B`, `AB`, ... (factor names joined by `*` for interactions).
    pub name: String,
    /// The effect `q` (half the change from the low to the high level).
    pub value: f64,
    /// Sum of squares `2^k r q²` (0 for the mean).
    pub sum_of_squares: f64,
    /// Share of the total variation, 0..1 (0 for the mean).
    pub fraction: f64,
    /// Half-width of the 90% confidence interval (NaN without replicates).
    pub half_width: f64,
}

/// The allocation of variation of a 2^k r design.
#[derive(Debug, Clone, PartialEq)]
pub struct SignTable {
    /// Factors, with their low and high levels.
    pub factors: Vec<(String, f64, f64)>,
    /// Replicates per cell.
    pub replicates: usize,
    /// The mean, then every main effect and interaction in sign-table order.
    pub effects: Vec<Effect>,
    /// Sum of squared errors (within cells).
    pub sse: f64,
    /// Total variation about the mean.
    pub sst: f64,
}

/// An analysis that does not fit the data.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VariationError {
    /// A factor does not have exactly two levels (sign table) or has fewer than two.
    #[error("factor '{factor}' has {levels} levels ({values}); {expected}")]
    Levels {
        /// The factor.
        factor: String,
        /// How many it has.
        levels: usize,
        /// Them.
        values: String,
        /// What the method needs.
        expected: String,
    },
    /// The method needs another number of factors.
    #[error("{method} needs {expected} factors, got {got}")]
    Factors {
        /// The method.
        method: &'static str,
        /// How many it needs.
        expected: &'static str,
        /// How many were given.
        got: usize,
    },
    /// Cells with different numbers of replicates, or empty cells.
    #[error("the design is not balanced: {0}")]
    Unbalanced(String),
    /// Not a full factorial, and a corner was not measured either.
    #[error(
        "the design is not a full factorial and its 2^{factors} corners are not all measured: \
         corner {corner} has no observations"
    )]
    MissingCorner {
        /// How many factors.
        factors: usize,
        /// The missing corner, `n=32 p=8`.
        corner: String,
    },
}

/// The rows of a design at its 2^k corners, every factor at its lowest or highest level.
#[derive(Debug, Clone, PartialEq)]
pub struct Corners {
    /// The observations at the corners (with their datafile lines).
    pub observations: Observations,
    /// Per factor, the levels between its extremes that were left out (empty for a factor
    /// with two levels).
    pub left_out: Vec<(String, Vec<f64>)>,
    /// How many observations were left out.
    pub rows_left_out: usize,
}

/// The number of factors, when a 2^k r sign table can take them (1 to 16).
fn sign_table_factors(obs: &Observations) -> Result<usize, VariationError> {
    let k = obs.factors.len();
    if !(1..=16).contains(&k) {
        return Err(VariationError::Factors {
            method: "the 2^k r sign table",
            expected: "1 to 16",
            got: k,
        });
    }
    Ok(k)
}

/// Keeps the observations at the corners of the design: the rows where every factor is at its
/// lowest or highest level. Fails, naming one, when a corner has no observation (a factor with
/// one level has no corners either).
///
/// ```
/// use fit::Observations;
/// // An edges design over two factors: the four corners and a midpoint of one edge.
/// let obs = Observations::new("edges", vec!["p".into(), "n".into()], "y",
///     vec![vec![2.0, 8.0, 2.0, 8.0, 5.0], vec![32.0, 32.0, 512.0, 512.0, 32.0]],
///     vec![1.0, 2.0, 3.0, 4.0, 9.0]).unwrap();
/// let c = fit::variation::corners(&obs).unwrap();
/// assert_eq!(c.observations.y, [1.0, 2.0, 3.0, 4.0]);
/// assert_eq!(c.left_out[0], ("p".to_string(), vec![5.0]));
/// assert_eq!(c.rows_left_out, 1);
/// ```
pub fn corners(obs: &Observations) -> Result<Corners, VariationError> {
    let k = sign_table_factors(obs)?;
    let levels: Vec<Vec<f64>> = (0..k).map(|f| obs.levels(f)).collect();
    for (f, l) in levels.iter().enumerate() {
        if l.len() < 2 {
            return Err(VariationError::Levels {
                factor: obs.factors[f].clone(),
                levels: l.len(),
                values: levels_text(l),
                expected: "an analysis of variation needs at least 2".into(),
            });
        }
    }
    let extremes: Vec<(f64, f64)> = levels.iter().map(|l| (l[0], l[l.len() - 1])).collect();
    let mut seen = vec![false; 1 << k];
    let mut rows = Vec::new();
    let mut point = vec![0.0; k];
    for row in 0..obs.len() {
        obs.point(row, &mut point);
        let mut corner = 0;
        let at_corner = point.iter().zip(&extremes).all(|(&v, &(lo, hi))| {
            corner = corner << 1 | usize::from(v == hi);
            v == lo || v == hi
        });
        if at_corner {
            seen[corner] = true;
            rows.push(row);
        }
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        let corner = (0..k)
            .map(|f| {
                let (lo, hi) = extremes[f];
                let high = missing >> (k - 1 - f) & 1 == 1;
                format!("{}={}", obs.factors[f], if high { hi } else { lo })
            })
            .collect::<Vec<_>>()
            .join(" ");
        return Err(VariationError::MissingCorner { factors: k, corner });
    }
    let observations = Observations {
        source: obs.source.clone(),
        factors: obs.factors.clone(),
        response: obs.response.clone(),
        columns: obs
            .columns
            .iter()
            .map(|c| rows.iter().map(|&r| c[r]).collect())
            .collect(),
        y: rows.iter().map(|&r| obs.y[r]).collect(),
        lines: rows.iter().map(|&r| obs.lines[r]).collect(),
    };
    Ok(Corners {
        left_out: obs
            .factors
            .iter()
            .zip(&levels)
            .map(|(f, l)| (f.clone(), l[1..l.len() - 1].to_vec()))
            .collect(),
        rows_left_out: obs.len() - rows.len(),
        observations,
    })
}

fn levels_text(levels: &[f64]) -> String {
    levels
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Groups the observations by cell (index per factor) and checks the balance.
fn cells(obs: &Observations, levels: &[Vec<f64>]) -> Result<Vec<Vec<f64>>, VariationError> {
    let shape: Vec<usize> = levels.iter().map(Vec::len).collect();
    let count: usize = shape.iter().product();
    let mut cells = vec![Vec::new(); count];
    let mut point = vec![0.0; obs.factors.len()];
    for row in 0..obs.len() {
        obs.point(row, &mut point);
        let mut index = 0;
        for (f, &v) in point.iter().enumerate() {
            let level = levels[f]
                .iter()
                .position(|&l| l == v)
                .expect("levels come from the observations");
            index = index * shape[f] + level;
        }
        cells[index].push(obs.y[row]);
    }
    let r = cells[0].len();
    if let Some(bad) = cells.iter().position(|c| c.len() != r || c.is_empty()) {
        return Err(VariationError::Unbalanced(format!(
            "cell {} has {} observations, cell 1 has {r}",
            bad + 1,
            cells[bad].len()
        )));
    }
    Ok(cells)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The 2^k r sign-table method over every factor of `obs` (each with exactly two levels).
///
/// ```
/// use fit::Observations;
/// // Jain's 2² workstation example: effects 40, 20, 10, 5; 76%, 19%, 5% of the variation.
/// let obs = Observations::new("jain", vec!["A".into(), "B".into()], "y",
///     vec![vec![-1.0, 1.0, -1.0, 1.0], vec![-1.0, -1.0, 1.0, 1.0]],
///     vec![15.0, 45.0, 25.0, 75.0]).unwrap();
/// let t = fit::variation::sign_table(&obs).unwrap();
/// let q: Vec<f64> = t.effects.iter().map(|e| e.value).collect();
/// assert_eq!(q, [40.0, 20.0, 10.0, 5.0]);
/// assert!((t.effects[1].fraction - 0.7619).abs() < 1e-4);
/// ```
pub fn sign_table(obs: &Observations) -> Result<SignTable, VariationError> {
    let k = sign_table_factors(obs)?;
    let levels: Vec<Vec<f64>> = (0..k).map(|f| obs.levels(f)).collect();
    for (f, l) in levels.iter().enumerate() {
        if l.len() != 2 {
            return Err(VariationError::Levels {
                factor: obs.factors[f].clone(),
                levels: l.len(),
                values: levels_text(l),
                expected: "the 2^k r sign table needs exactly 2".into(),
            });
        }
    }
    let cells = cells(obs, &levels)?;
    let r = cells[0].len();
    let means: Vec<f64> = cells.iter().map(|c| mean(c)).collect();
    let n_cells = cells.len(); // 2^k
    // Cell index bit (k-1-f) is factor f's level (the first factor varies slowest).
    let sign = |cell: usize, f: usize| {
        if cell >> (k - 1 - f) & 1 == 1 {
            1.0
        } else {
            -1.0
        }
    };
    let grand = mean(&means);
    let sst: f64 = cells.iter().flatten().map(|y| (y - grand).powi(2)).sum();
    let sse: f64 = cells
        .iter()
        .zip(&means)
        .map(|(c, m)| c.iter().map(|y| (y - m).powi(2)).sum::<f64>())
        .sum();
    let dof = n_cells * (r - 1);
    let half_width = if dof > 0 {
        let se = (sse / dof as f64).sqrt();
        t_quantile(dof) * se / ((n_cells * r) as f64).sqrt()
    } else {
        f64::NAN
    };
    // Effects in the order I, A, B, AB, C, AC, BC, ABC, ... (subsets by binary counting).
    let effects = (0..n_cells)
        .map(|subset| {
            let members: Vec<usize> = (0..k).filter(|f| subset >> f & 1 == 1).collect();
            let value = (0..n_cells)
                .map(|cell| members.iter().map(|&f| sign(cell, f)).product::<f64>() * means[cell])
                .sum::<f64>()
                / n_cells as f64;
            let ss = if members.is_empty() {
                0.0
            } else {
                (n_cells * r) as f64 * value * value
            };
            Effect {
                name: if members.is_empty() {
                    "I".into()
                } else {
                    members
                        .iter()
                        .map(|&f| obs.factors[f].as_str())
                        .collect::<Vec<_>>()
                        .join("*")
                },
                value,
                sum_of_squares: ss,
                fraction: if sst > 0.0 { ss / sst } else { 0.0 },
                half_width,
            }
        })
        .collect();
    Ok(SignTable {
        factors: (0..k)
            .map(|f| (obs.factors[f].clone(), levels[f][0], levels[f][1]))
            .collect(),
        replicates: r,
        effects,
        sse,
        sst,
    })
}

/// One row of an ANOVA table.
#[derive(Debug, Clone, PartialEq)]
pub struct AnovaRow {
    /// `A`, `B`, `A*B`, `error` or `total`.
    pub source: String,
    /// Sum of squares.
    pub sum_of_squares: f64,
    /// Share of the total variation, 0..1.
    pub fraction: f64,
    /// Degrees of freedom.
    pub dof: usize,
    /// Mean square (NaN for the total).
    pub mean_square: f64,
    /// F statistic against the error mean square (NaN without replicates, and for error/total).
    pub f: f64,
    /// P-value of the F test (probability of an F this large by chance).
    pub p_value: f64,
}

/// A two-factor full factorial (Jain ch. 22): `obs` must have exactly two factors, every
/// combination of their levels, the same number r ≥ 1 of observations per cell. With r = 1
/// the interaction cannot be separated from the error and is reported as error.
pub fn two_factor_anova(obs: &Observations) -> Result<Vec<AnovaRow>, VariationError> {
    if obs.factors.len() != 2 {
        return Err(VariationError::Factors {
            method: "a general full factorial analysis",
            expected: "exactly 2",
            got: obs.factors.len(),
        });
    }
    let levels: Vec<Vec<f64>> = (0..2).map(|f| obs.levels(f)).collect();
    for (f, l) in levels.iter().enumerate() {
        if l.len() < 2 {
            return Err(VariationError::Levels {
                factor: obs.factors[f].clone(),
                levels: l.len(),
                values: levels_text(l),
                expected: "an analysis of variation needs at least 2".into(),
            });
        }
    }
    let cells = cells(obs, &levels)?;
    let (a, b, r) = (levels[0].len(), levels[1].len(), cells[0].len());
    let cell_mean = |i: usize, j: usize| mean(&cells[i * b + j]);
    let grand = mean(&cells.iter().flatten().copied().collect::<Vec<_>>());
    let row_mean = |i: usize| (0..b).map(|j| cell_mean(i, j)).sum::<f64>() / b as f64;
    let col_mean = |j: usize| (0..a).map(|i| cell_mean(i, j)).sum::<f64>() / a as f64;
    let ssa = (b * r) as f64 * (0..a).map(|i| (row_mean(i) - grand).powi(2)).sum::<f64>();
    let ssb = (a * r) as f64 * (0..b).map(|j| (col_mean(j) - grand).powi(2)).sum::<f64>();
    let ssab = r as f64
        * (0..a)
            .flat_map(|i| (0..b).map(move |j| (i, j)))
            .map(|(i, j)| (cell_mean(i, j) - row_mean(i) - col_mean(j) + grand).powi(2))
            .sum::<f64>();
    let sse: f64 = (0..a * b)
        .map(|c| {
            let m = mean(&cells[c]);
            cells[c].iter().map(|y| (y - m).powi(2)).sum::<f64>()
        })
        .sum();
    let sst = ssa + ssb + ssab + sse;
    let (na, nb) = (obs.factors[0].clone(), obs.factors[1].clone());
    // Without replicates the interaction is the only estimate of error.
    let (effects, error_ss, error_dof) = if r > 1 {
        (
            vec![
                (na.clone(), ssa, a - 1),
                (nb.clone(), ssb, b - 1),
                (format!("{na}*{nb}"), ssab, (a - 1) * (b - 1)),
            ],
            sse,
            a * b * (r - 1),
        )
    } else {
        (
            vec![(na, ssa, a - 1), (nb, ssb, b - 1)],
            ssab,
            (a - 1) * (b - 1),
        )
    };
    let mse = if error_dof > 0 {
        error_ss / error_dof as f64
    } else {
        f64::NAN
    };
    let fraction = |ss: f64| if sst > 0.0 { ss / sst } else { 0.0 };
    let mut rows: Vec<AnovaRow> = effects
        .into_iter()
        .map(|(source, ss, dof)| {
            let ms = ss / dof as f64;
            let f = ms / mse;
            let p_value = match FisherSnedecor::new(dof as f64, error_dof as f64) {
                Ok(dist) if f.is_finite() => 1.0 - dist.cdf(f),
                _ => f64::NAN,
            };
            AnovaRow {
                source,
                sum_of_squares: ss,
                fraction: fraction(ss),
                dof,
                mean_square: ms,
                f,
                p_value,
            }
        })
        .collect();
    rows.push(AnovaRow {
        source: "error".into(),
        sum_of_squares: error_ss,
        fraction: fraction(error_ss),
        dof: error_dof,
        mean_square: mse,
        f: f64::NAN,
        p_value: f64::NAN,
    });
    rows.push(AnovaRow {
        source: "total".into(),
        sum_of_squares: sst,
        fraction: 1.0,
        dof: a * b * r - 1,
        mean_square: f64::NAN,
        f: f64::NAN,
        p_value: f64::NAN,
    });
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// Jain's replicated 2² example: cells (A-,B-), (A+,B-), (A-,B+), (A+,B+), r = 3.
    fn replicated() -> Observations {
        let cells = [
            (-1.0, -1.0, [15.0, 18.0, 12.0]),
            (1.0, -1.0, [45.0, 48.0, 51.0]),
            (-1.0, 1.0, [25.0, 28.0, 19.0]),
            (1.0, 1.0, [75.0, 75.0, 81.0]),
        ];
        let (mut a, mut b, mut y) = (Vec::new(), Vec::new(), Vec::new());
        for (xa, xb, ys) in cells {
            for v in ys {
                a.push(xa);
                b.push(xb);
                y.push(v);
            }
        }
        Observations::new("jain", vec!["A".into(), "B".into()], "y", vec![a, b], y).unwrap()
    }

    #[test]
    fn replicated_two_squared_by_hand() {
        // Cell means 15, 48, 24, 77: q = 41, 21.5, 9.5, 5; SSA 5547, SSB 1083, SSAB 300,
        // SSE 102, SST 7032 (78.88%, 15.40%, 4.27%; 1.45% unexplained).
        let t = sign_table(&replicated()).unwrap();
        let q: Vec<f64> = t.effects.iter().map(|e| e.value).collect();
        assert_eq!(q, [41.0, 21.5, 9.5, 5.0]);
        let ss: Vec<f64> = t.effects.iter().map(|e| e.sum_of_squares).collect();
        assert_eq!(ss, [0.0, 5547.0, 1083.0, 300.0]);
        assert_relative_eq!(t.sse, 102.0, epsilon = 1e-9);
        assert_relative_eq!(t.sst, 7032.0, epsilon = 1e-9);
        assert_relative_eq!(t.effects[1].fraction, 0.7888, epsilon = 1e-4);
        // 90% interval: s_e = sqrt(102/8), s_q = s_e/sqrt(12), t(0.95; 8) = 1.8595480.
        let half = 1.859_548_038 * (102.0f64 / 8.0).sqrt() / 12f64.sqrt();
        assert_relative_eq!(t.effects[1].half_width, half, epsilon = 1e-8);
        assert_eq!(t.effects[3].name, "A*B");
    }

    /// Jain's replicated 2² at the corners of A in {-1, 0, 1} x B in {-1, 0.5, 1}, with edge
    /// and interior points (replicated too) that the corners leave out.
    fn edges_around_replicated() -> Observations {
        let base = replicated();
        let (mut a, mut b, mut y) = (base.columns[0].clone(), base.columns[1].clone(), base.y);
        for (xa, xb, v) in [
            (0.0, -1.0, 1000.0),
            (0.0, -1.0, 1001.0),
            (0.0, 1.0, -5.0),
            (-1.0, 0.5, 7.0),
            (1.0, 0.5, 3.0),
            (0.0, 0.5, 0.0),
        ] {
            a.push(xa);
            b.push(xb);
            y.push(v);
        }
        Observations::new("edges", vec!["A".into(), "B".into()], "y", vec![a, b], y).unwrap()
    }

    #[test]
    fn the_corners_of_an_edges_design_are_its_two_squared_r_design() {
        let c = corners(&edges_around_replicated()).unwrap();
        assert_eq!(c.rows_left_out, 6);
        assert_eq!(
            c.left_out,
            [("A".to_string(), vec![0.0]), ("B".to_string(), vec![0.5])]
        );
        assert_eq!(c.observations.lines, (1..=12).collect::<Vec<_>>());
        // The same answer as Jain's replicated 2² alone (see replicated_two_squared_by_hand).
        let t = sign_table(&c.observations).unwrap();
        assert_eq!(t.replicates, 3);
        let q: Vec<f64> = t.effects.iter().map(|e| e.value).collect();
        assert_eq!(q, [41.0, 21.5, 9.5, 5.0]);
        assert_relative_eq!(t.sse, 102.0, epsilon = 1e-9);
        assert_relative_eq!(t.effects[1].fraction, 0.7888, epsilon = 1e-4);
    }

    #[test]
    fn a_missing_corner_is_named() {
        let mut obs = edges_around_replicated();
        // Drop the three (A+, B+) runs.
        let keep: Vec<usize> = (0..obs.len()).filter(|&r| !(9..12).contains(&r)).collect();
        obs.columns = obs
            .columns
            .iter()
            .map(|c| keep.iter().map(|&r| c[r]).collect())
            .collect();
        obs.y = keep.iter().map(|&r| obs.y[r]).collect();
        obs.lines = keep.iter().map(|&r| obs.lines[r]).collect();
        assert_eq!(
            corners(&obs).unwrap_err().to_string(),
            "the design is not a full factorial and its 2^2 corners are not all measured: \
             corner A=1 B=1 has no observations"
        );
    }

    #[test]
    fn anova_agrees_with_the_sign_table_on_two_levels() {
        let obs = replicated();
        let rows = two_factor_anova(&obs).unwrap();
        let t = sign_table(&obs).unwrap();
        for (row, effect) in rows.iter().zip(&t.effects[1..]) {
            assert_relative_eq!(row.sum_of_squares, effect.sum_of_squares, epsilon = 1e-9);
        }
        assert_relative_eq!(rows[3].sum_of_squares, 102.0, epsilon = 1e-9);
        assert_eq!((rows[0].dof, rows[3].dof, rows[4].dof), (1, 8, 11));
        // F(A) = 5547 / (102/8) = 435.06; p tiny.
        assert_relative_eq!(rows[0].f, 5547.0 / 12.75, epsilon = 1e-9);
        assert!(rows[0].p_value < 1e-6);
    }

    #[test]
    fn a_three_by_two_design_by_hand() {
        // A at 3 levels, B at 2, r = 2. Cell means: A1 (2, 4), A2 (6, 8), A3 (10, 18);
        // grand mean 8; row means 3, 7, 14; column means 6, 10.
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut y = Vec::new();
        for (xa, xb, m) in [
            (1.0, 1.0, 2.0),
            (1.0, 2.0, 4.0),
            (2.0, 1.0, 6.0),
            (2.0, 2.0, 8.0),
            (3.0, 1.0, 10.0),
            (3.0, 2.0, 18.0),
        ] {
            for d in [-1.0, 1.0] {
                a.push(xa);
                b.push(xb);
                y.push(m + d);
            }
        }
        let obs = Observations::new("t", vec!["A".into(), "B".into()], "y", vec![a, b], y).unwrap();
        let rows = two_factor_anova(&obs).unwrap();
        // SSA = 4·(25+1+36) = 248; SSB = 6·(4+4) = 48; SSAB = 2·Σ(interaction²) with
        // interactions (1,-1), (1,-1), (-2,2) -> 2·12 = 24; SSE = 12·1 = 12.
        let ss: Vec<f64> = rows.iter().map(|r| r.sum_of_squares).collect();
        for (got, want) in ss.iter().zip([248.0, 48.0, 24.0, 12.0, 332.0]) {
            assert_relative_eq!(*got, want, epsilon = 1e-9);
        }
        assert_eq!(
            rows.iter().map(|r| r.dof).collect::<Vec<_>>(),
            [2, 1, 2, 6, 11]
        );
    }

    #[test]
    fn designs_that_do_not_fit() {
        let obs = Observations::new(
            "t",
            vec!["A".into()],
            "y",
            vec![vec![1.0, 2.0, 3.0]],
            vec![1.0, 2.0, 3.0],
        )
        .unwrap();
        let err = sign_table(&obs).unwrap_err().to_string();
        assert_eq!(
            err,
            "factor 'A' has 3 levels (1, 2, 3); the 2^k r sign table needs exactly 2"
        );
        let obs = Observations::new(
            "t",
            vec!["A".into()],
            "y",
            vec![vec![1.0, 2.0, 2.0]],
            vec![1.0, 2.0, 3.0],
        )
        .unwrap();
        assert!(
            sign_table(&obs)
                .unwrap_err()
                .to_string()
                .contains("not balanced")
        );
    }
}
