//! Least squares under linear inequality constraints, `min ||X b - y||²` subject to `G b ≥ 0`: how
//! a category's model is kept from predicting negative lost cycles inside the range it was fitted
//! on (docs/model-file.md). Each row of `G` holds the model's terms evaluated at one point of that
//! range, so `G b ≥ 0` says the model is non-negative there.
//!
//! The problem is a convex quadratic program, solved by Clarabel's interior-point method on
//! the column-scaled problem (the same scaling [`least_squares`](crate::linear::least_squares)
//! uses, so that `n^2*log2(n)` and `1` meet on equal terms). Where the unconstrained solution
//! already satisfies the constraints it is the answer and no QP is solved.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus,
};
use nalgebra::{DMatrix, DVector};

/// A constraint value at or below this fraction of its row's scale (`Σ |G_ij b_j|`) is active:
/// the model touches zero there.
pub(crate) const ACTIVE_TOLERANCE: f64 = 1e-7;

/// Whether `G b ≥ 0` holds, allowing rounding relative to each row's scale.
pub(crate) fn satisfied(g: &DMatrix<f64>, b: &DVector<f64>) -> bool {
    (0..g.nrows()).all(|i| {
        let (value, scale) = row_value(g, b, i);
        value >= -1e-12 * scale
    })
}

/// Rows of `G` where the constraint is active at `b`.
pub(crate) fn active_rows(g: &DMatrix<f64>, b: &DVector<f64>) -> Vec<usize> {
    (0..g.nrows())
        .filter(|&i| {
            let (value, scale) = row_value(g, b, i);
            scale > 0.0 && value <= ACTIVE_TOLERANCE * scale
        })
        .collect()
}

fn row_value(g: &DMatrix<f64>, b: &DVector<f64>, i: usize) -> (f64, f64) {
    let mut value = 0.0;
    let mut scale = 0.0;
    for j in 0..g.ncols() {
        let v = g[(i, j)] * b[j];
        value += v;
        scale += v.abs();
    }
    (value, scale)
}

/// Solves `min ||X b - y||²` subject to `G b ≥ 0`. `None` when the solver fails.
pub(crate) fn least_squares_nonnegative(
    x: &DMatrix<f64>,
    y: &DVector<f64>,
    g: &DMatrix<f64>,
) -> Option<DVector<f64>> {
    let k = x.ncols();
    if k == 0 {
        return Some(DVector::zeros(0));
    }
    // Scale the columns to unit norm and the response to unit norm: the solver's tolerances
    // are then relative to the problem, whatever its units.
    let column_scale: Vec<f64> = x.column_iter().map(|c| c.norm()).collect();
    if column_scale.iter().any(|s| *s == 0.0 || !s.is_finite()) {
        return None;
    }
    let y_scale = y.norm();
    if y_scale == 0.0 {
        return Some(DVector::zeros(k));
    }
    let xs = DMatrix::from_fn(x.nrows(), k, |i, j| x[(i, j)] / column_scale[j]);
    let ys = y / y_scale;
    let p = xs.transpose() * &xs;
    let q = -(xs.transpose() * ys);
    // Rows of -G (scaled columns, each row to unit norm): -G b + s = 0, s ≥ 0.
    let rows: Vec<Vec<f64>> = (0..g.nrows())
        .filter_map(|i| {
            let row: Vec<f64> = (0..k).map(|j| g[(i, j)] / column_scale[j]).collect();
            let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            (norm > 0.0 && norm.is_finite()).then(|| row.iter().map(|v| -v / norm).collect())
        })
        .collect();
    let p_upper: Vec<Vec<f64>> = (0..k)
        .map(|i| {
            (0..k)
                .map(|j| if j >= i { p[(i, j)] } else { 0.0 })
                .collect()
        })
        .collect();
    let p_csc = CscMatrix::from(&p_upper);
    let a_csc = CscMatrix::from(&rows);
    let b = vec![0.0; rows.len()];
    let cones = [NonnegativeConeT(rows.len())];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-12)
        .tol_gap_rel(1e-12)
        .tol_feas(1e-12)
        .max_iter(200)
        .build()
        .ok()?;
    let mut solver = DefaultSolver::new(&p_csc, q.as_slice(), &a_csc, &b, &cones, settings).ok()?;
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {}
        _ => return None,
    }
    let beta = DVector::from_iterator(
        k,
        solver
            .solution
            .x
            .iter()
            .zip(&column_scale)
            .map(|(b, s)| b * y_scale / s),
    );
    beta.iter().all(|b| b.is_finite()).then_some(beta)
}

/// The covariance of an estimator whose active constraints hold as equalities: `C − C Aᵀ (A C
/// Aᵀ)⁺ A C`, with `A` the active constraints' rows (in the coordinates of `C`). Along the
/// directions the constraints pin, the estimate has no freedom and so no variance.
pub(crate) fn project_covariance(c: &DMatrix<f64>, a: &DMatrix<f64>) -> DMatrix<f64> {
    // Without finite numbers (a fit with no residual degrees of freedom has no variance)
    // there is nothing to project; nalgebra's SVD would iterate forever on them.
    if a.nrows() == 0 || c.iter().chain(a.iter()).any(|v| !v.is_finite()) {
        return c.clone();
    }
    let aca = a * c * a.transpose();
    let Some(svd) = aca.clone().try_svd(true, true, f64::EPSILON, 1000) else {
        return c.clone();
    };
    let Ok(pinv) = svd.pseudo_inverse(1e-12 * aca.norm().max(f64::MIN_POSITIVE)) else {
        return c.clone();
    };
    let ca = c * a.transpose();
    let projected = c - &ca * pinv * ca.transpose();
    // Symmetric, and no negative variance from rounding.
    DMatrix::from_fn(c.nrows(), c.ncols(), |i, j| {
        let v = 0.5 * (projected[(i, j)] + projected[(j, i)]);
        if i == j { v.max(0.0) } else { v }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_feasible_problem_keeps_the_unconstrained_solution() {
        // y = 1 + 2x exactly; the model is positive on [1, 4].
        let x = DMatrix::from_row_slice(4, 2, &[1., 1., 1., 2., 1., 3., 1., 4.]);
        let y = DVector::from_row_slice(&[3., 5., 7., 9.]);
        let g = x.clone();
        let b = least_squares_nonnegative(&x, &y, &g).unwrap();
        assert!(
            (b[0] - 1.0).abs() < 1e-6 && (b[1] - 2.0).abs() < 1e-6,
            "{b}"
        );
    }

    #[test]
    fn a_line_through_negative_values_is_held_at_zero() {
        // Data on y = x - 2 for x in 1..4 (negative at x = 1): the best line a + b x that is
        // non-negative at x = 1 and x = 4. Known answer: the constraint a + b = 0 is active and
        // b minimises Σ (b(x-1) - (x-2))² over x = 1..4: b = Σ(x-1)(x-2) / Σ(x-1)² = 8/14.
        let x = DMatrix::from_row_slice(4, 2, &[1., 1., 1., 2., 1., 3., 1., 4.]);
        let y = DVector::from_row_slice(&[-1., 0., 1., 2.]);
        let g = DMatrix::from_row_slice(2, 2, &[1., 1., 1., 4.]);
        let b = least_squares_nonnegative(&x, &y, &g).unwrap();
        let slope = 8.0 / 14.0;
        assert!((b[1] - slope).abs() < 1e-6, "{b}");
        assert!((b[0] + slope).abs() < 1e-6, "{b}");
        assert_eq!(active_rows(&g, &b), [0]);
    }

    #[test]
    fn projection_of_an_undefined_covariance_returns_it() {
        // dof = 0: the covariance is NaN. (nalgebra's SVD looped forever on it.)
        let c = DMatrix::from_element(2, 2, f64::NAN);
        let a = DMatrix::from_row_slice(1, 2, &[1.0, 0.0]);
        assert!(project_covariance(&c, &a).iter().all(|v| v.is_nan()));
    }

    #[test]
    fn projection_removes_variance_along_a_pinned_direction() {
        let c = DMatrix::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0]);
        // b0 fixed by the constraint: its variance goes, b1's shrinks by the covariance.
        let a = DMatrix::from_row_slice(1, 2, &[1.0, 0.0]);
        let projected = project_covariance(&c, &a);
        assert!(projected[(0, 0)].abs() < 1e-12);
        assert!((projected[(1, 1)] - (1.0 - 0.25 / 2.0)).abs() < 1e-12);
    }
}
