//! The allocation of variation of a category on the 2^k corners of the design (Jain ch.
//! 17–18): the shares of main effects and interactions in the measured means, and the
//! interaction share the fitted multiplicative model itself implies there.

use crate::fit::Fit;
use crate::observations::Observations;
use crate::variation::sign_table;

/// The allocation of variation of a category on the corners of the design.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CornerVariation {
    /// Corners (2^k cells; replicates are averaged).
    pub cells: usize,
    /// Share of the variation explained by main effects, 0..1.
    pub main: f64,
    /// Share explained by interactions, 0..1.
    pub interaction: f64,
    /// The interaction share the fitted multiplicative model has at the same corners (the
    /// additive one has none).
    pub implied_multiplicative: f64,
    /// Leave-one-out error of the multiplicative form, when an interaction was found (else NaN).
    pub multiplicative_cv: f64,
    /// Leave-one-out error of the full form, when it was fitted (else NaN).
    pub full_cv: f64,
    /// p-value of the partial F test of the full form's extra terms (else NaN).
    pub full_p_value: f64,
}

/// The 2^k corners of the observations' factor ranges and the mean response at each (rows at
/// a corner are replicates), or the first corner without a run, described.
pub(super) type Corners = (Vec<Vec<f64>>, Vec<f64>);

pub(super) fn corner_means(obs: &Observations) -> Result<Corners, String> {
    let k = obs.factors.len();
    let extremes: Vec<(f64, f64)> = (0..k)
        .map(|f| {
            let levels = obs.levels(f);
            (levels[0], levels[levels.len() - 1])
        })
        .collect();
    let cells = 1usize << k;
    let mut sums = vec![(0.0, 0usize); cells];
    'rows: for row in 0..obs.len() {
        let mut index = 0;
        for (f, &(lo, hi)) in extremes.iter().enumerate() {
            let v = obs.columns[f][row];
            let bit = if v == lo {
                0
            } else if v == hi {
                1
            } else {
                continue 'rows;
            };
            index = index << 1 | bit;
        }
        sums[index].0 += obs.y[row];
        sums[index].1 += 1;
    }
    let corner = |cell: usize| -> Vec<f64> {
        (0..k)
            .map(|f| {
                let (lo, hi) = extremes[f];
                if cell >> (k - 1 - f) & 1 == 1 { hi } else { lo }
            })
            .collect()
    };
    if let Some(missing) = sums.iter().position(|s| s.1 == 0) {
        let point = corner(missing);
        return Err(obs
            .factors
            .iter()
            .zip(point)
            .map(|(f, v)| format!("{f}={v}"))
            .collect::<Vec<_>>()
            .join(", "));
    }
    let points = (0..cells).map(corner).collect();
    let means = sums.iter().map(|(s, c)| s / *c as f64).collect();
    Ok((points, means))
}

/// Main and interaction shares at the corners, of the measured means and of the fitted
/// multiplicative model's values there.
pub(super) fn corner_shares(
    obs: &Observations,
    corners: &Corners,
    multiplicative: Option<&Fit>,
) -> CornerVariation {
    let (points, means) = corners;
    let shares = |y: Vec<f64>| -> (f64, f64) {
        let columns = (0..obs.factors.len())
            .map(|f| points.iter().map(|p| p[f]).collect())
            .collect();
        let cells = Observations {
            source: obs.source.clone(),
            factors: obs.factors.clone(),
            response: obs.response.clone(),
            columns,
            lines: (1..=y.len()).collect(),
            y,
        };
        match sign_table(&cells) {
            Ok(table) => table.effects.iter().skip(1).fold((0.0, 0.0), |(m, i), e| {
                if e.name.contains('*') {
                    (m, i + e.fraction)
                } else {
                    (m + e.fraction, i)
                }
            }),
            Err(_) => (f64::NAN, f64::NAN),
        }
    };
    let (main, interaction) = shares(means.clone());
    let implied_multiplicative = match multiplicative {
        Some(fit) => shares(points.iter().map(|p| fit.evaluate(p)).collect()).1,
        None => 0.0,
    };
    CornerVariation {
        cells: points.len(),
        main,
        interaction,
        implied_multiplicative,
        multiplicative_cv: f64::NAN,
        full_cv: f64::NAN,
        full_p_value: f64::NAN,
    }
}
