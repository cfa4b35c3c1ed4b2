//! Ordinary linear least squares, the core of every fit.
//!
//! The design matrix is scaled to unit column norms before a singular value decomposition,
//! which keeps ill-conditioned problems (NIST's Longley data) accurate to ~1e-10 and makes
//! the rank test independent of the units of each term.

use nalgebra::{DMatrix, DVector};

/// Singular values below this fraction of the largest (after column scaling) count as zero.
const RANK_TOLERANCE: f64 = 1e-10;

/// The solution of `min ||X b - y||²`.
#[derive(Debug, Clone)]
pub struct LeastSquares {
    /// Coefficients `b`, one per column of `X`.
    pub beta: DVector<f64>,
    /// Residuals `y - X b`.
    pub residuals: DVector<f64>,
    /// Residual sum of squares.
    pub sse: f64,
    /// `(XᵀX)⁻¹`; times the residual variance it is the covariance of `b`.
    pub unscaled_covariance: DMatrix<f64>,
    /// Diagonal of the hat matrix `X (XᵀX)⁻¹ Xᵀ` (leverage of each observation).
    pub leverage: DVector<f64>,
}

impl LeastSquares {
    /// Root mean square of the leave-one-out prediction errors, in closed form:
    /// `e_i / (1 - h_ii)`. Infinite when an observation alone determines the fit (`h_ii = 1`).
    pub fn loo_rmse(&self) -> f64 {
        self.loo_residuals().map_or(f64::INFINITY, |r| {
            (r.norm_squared() / r.len() as f64).sqrt()
        })
    }

    /// Leave-one-out residuals `e_i / (1 - h_ii)`: what each observation's residual would be
    /// had it been left out of the fit. `None` when an observation alone determines the fit.
    pub fn loo_residuals(&self) -> Option<DVector<f64>> {
        if self.leverage.iter().any(|&h| h >= 1.0 - 1e-10) {
            return None;
        }
        Some(self.residuals.zip_map(&self.leverage, |e, h| e / (1.0 - h)))
    }
}

/// `X` does not have full column rank: some combination of its columns is (numerically) zero.
#[derive(Debug, Clone)]
pub struct RankDeficient {
    /// Columns that take part in the combination (largest weights first).
    pub columns: Vec<usize>,
}

/// Solves the least-squares problem by SVD of the column-scaled design matrix.
///
/// Time: O(n k²) for `n` rows and `k` columns.
pub fn least_squares(x: &DMatrix<f64>, y: &DVector<f64>) -> Result<LeastSquares, RankDeficient> {
    let (n, k) = x.shape();
    debug_assert_eq!(n, y.len());
    if k == 0 {
        let sse = y.norm_squared();
        return Ok(LeastSquares {
            beta: DVector::zeros(0),
            residuals: y.clone(),
            sse,
            unscaled_covariance: DMatrix::zeros(0, 0),
            leverage: DVector::zeros(n),
        });
    }
    let scale = DVector::from_iterator(k, x.column_iter().map(|c| c.norm()));
    if let Some(zero) = scale.iter().position(|&s| s == 0.0 || !s.is_finite()) {
        return Err(RankDeficient {
            columns: vec![zero],
        });
    }
    let mut scaled = x.clone();
    for (j, mut column) in scaled.column_iter_mut().enumerate() {
        column /= scale[j];
    }
    if n < k {
        return Err(rank_deficiency(&scaled));
    }
    let svd = scaled.svd(true, true);
    let (u, v_t) = (svd.u.as_ref().unwrap(), svd.v_t.as_ref().unwrap());
    let s = &svd.singular_values;
    let s_max = s.max();
    let smallest = s.imin();
    if s[smallest] <= RANK_TOLERANCE * s_max {
        return Err(involved_columns(
            v_t.row(smallest).iter().copied().collect(),
        ));
    }
    // b_scaled = V Σ⁻¹ Uᵀ y ; b = D⁻¹ b_scaled
    let uty = u.transpose() * y;
    let mut beta_scaled = DVector::zeros(k);
    let mut vs_inv = v_t.transpose(); // columns of V scaled by 1/σ
    for j in 0..k {
        let inv = 1.0 / s[j];
        beta_scaled += vs_inv.column(j) * (uty[j] * inv);
        vs_inv.column_mut(j).scale_mut(inv);
    }
    let beta = beta_scaled.component_div(&scale);
    let residuals = y - x * &beta;
    let sse = residuals.norm_squared();
    let mut unscaled_covariance = &vs_inv * vs_inv.transpose();
    for i in 0..k {
        for j in 0..k {
            unscaled_covariance[(i, j)] /= scale[i] * scale[j];
        }
    }
    let leverage = DVector::from_iterator(n, u.row_iter().map(|r| r.norm_squared()));
    Ok(LeastSquares {
        beta,
        residuals,
        sse,
        unscaled_covariance,
        leverage,
    })
}

/// Finds the columns of a (column-scaled) matrix that form its numerical null space.
fn rank_deficiency(scaled: &DMatrix<f64>) -> RankDeficient {
    // The eigenvector of XᵀX with the smallest eigenvalue spans the near-null direction.
    let eigen = (scaled.transpose() * scaled).symmetric_eigen();
    let smallest = eigen.eigenvalues.imin();
    involved_columns(
        eigen
            .eigenvectors
            .column(smallest)
            .iter()
            .copied()
            .collect(),
    )
}

/// The columns with a sizeable weight in a unit null direction.
fn involved_columns(direction: Vec<f64>) -> RankDeficient {
    let mut columns: Vec<usize> = (0..direction.len())
        .filter(|&j| direction[j].abs() > 0.1)
        .collect();
    columns.sort_by(|&a, &b| direction[b].abs().total_cmp(&direction[a].abs()));
    RankDeficient { columns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn straight_line_through_four_points() {
        // y = 1 + 2x exactly except one point: hand-computed least squares.
        let x = DMatrix::from_row_slice(4, 2, &[1.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 3.0]);
        let y = DVector::from_vec(vec![0.0, 1.0, 1.0, 2.0]);
        let ls = least_squares(&x, &y).unwrap();
        assert_relative_eq!(ls.beta[0], 0.1, epsilon = 1e-14);
        assert_relative_eq!(ls.beta[1], 0.6, epsilon = 1e-14);
        assert_relative_eq!(ls.sse, 0.2, epsilon = 1e-14);
        // (XᵀX)⁻¹ for x = 0..3: [[0.7, -0.3], [-0.3, 0.2]]
        assert_relative_eq!(ls.unscaled_covariance[(0, 0)], 0.7, epsilon = 1e-13);
        assert_relative_eq!(ls.unscaled_covariance[(0, 1)], -0.3, epsilon = 1e-13);
        assert_relative_eq!(ls.unscaled_covariance[(1, 1)], 0.2, epsilon = 1e-13);
        // Leverages sum to the number of coefficients.
        assert_relative_eq!(ls.leverage.sum(), 2.0, epsilon = 1e-13);
        assert_relative_eq!(ls.leverage[0], 0.7, epsilon = 1e-13);
        // Leave-one-out by brute force: refit without each point, predict it.
        let mut sum = 0.0;
        for skip in 0..4 {
            let rows: Vec<usize> = (0..4).filter(|&r| r != skip).collect();
            let xs = x.select_rows(&rows);
            let ys = DVector::from_iterator(3, rows.iter().map(|&r| y[r]));
            let fit = least_squares(&xs, &ys).unwrap();
            sum += (y[skip] - (x.row(skip) * &fit.beta)[0]).powi(2);
        }
        assert_relative_eq!(ls.loo_rmse(), (sum / 4.0).sqrt(), epsilon = 1e-12);
    }

    #[test]
    fn collinear_columns_are_named() {
        let x = DMatrix::from_row_slice(3, 3, &[1.0, 1.0, 2.0, 1.0, 2.0, 4.0, 1.0, 3.0, 6.0]);
        let y = DVector::from_vec(vec![1.0, 2.0, 3.0]);
        let err = least_squares(&x, &y).unwrap_err();
        let mut cols = err.columns.clone();
        cols.sort();
        assert_eq!(cols, vec![1, 2]);
    }

    #[test]
    fn zero_column_is_rank_deficient() {
        let x = DMatrix::from_row_slice(3, 2, &[1.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
        let y = DVector::from_vec(vec![1.0, 2.0, 3.0]);
        assert_eq!(least_squares(&x, &y).unwrap_err().columns, vec![1]);
    }
}
