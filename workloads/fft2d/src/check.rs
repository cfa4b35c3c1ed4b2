//! `--check`: every iteration's result against the [reference](mod@crate::reference) 2D FFT.

use crate::matrix::{Layout, MatrixRef, relative_error};
use crate::reference;

/// The largest relative error accepted ([`relative_error`]). Double precision FFTs of both
/// orders (rows first, columns first) agree to about `1e-15 · log2 n`; this leaves room
/// without letting a wrong element, index or twiddle pass.
pub const TOLERANCE: f64 = 1e-10;

/// Compares the results of a run with the reference as they come.
#[derive(Debug, Clone, Default)]
pub struct Checker {
    /// Iterations compared.
    pub checked: usize,
    /// The largest relative error seen.
    pub worst: f64,
    /// The first iteration whose error exceeded [`TOLERANCE`], with that error.
    pub first_mismatch: Option<(usize, f64)>,
}

impl Checker {
    /// Compares `y`, the result of iteration `k`, with the reference.
    pub fn observe(&mut self, k: usize, y: MatrixRef<'_>) {
        let want = reference::fft2d(y.n, k);
        let want = MatrixRef {
            n: y.n,
            layout: Layout::RowMajor,
            data: &want,
        };
        let error = relative_error(y, want);
        self.checked += 1;
        // NaN counts as a mismatch too.
        if (error.is_nan() || error > TOLERANCE) && self.first_mismatch.is_none() {
            self.first_mismatch = Some((k, error));
        }
        if error > self.worst || error.is_nan() {
            self.worst = error;
        }
    }

    /// `Ok` when all `iters` iterations were compared and matched, else the one-line reason.
    pub fn verdict(&self, iters: usize) -> Result<(), String> {
        match self.first_mismatch {
            Some((k, error)) => Err(format!(
                "iteration {k} differs from the reference 2D FFT: relative error {error:.3e} > {TOLERANCE:.0e}"
            )),
            None if self.checked != iters => Err(format!(
                "{} of {iters} iterations produced a result",
                self.checked
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(n: usize, k: usize) -> crate::matrix::Matrix {
        crate::matrix::Matrix {
            n,
            layout: Layout::RowMajor,
            data: reference::fft2d(n, k),
        }
    }

    #[test]
    fn the_reference_itself_passes() {
        let mut checker = Checker::default();
        for k in 0..3 {
            checker.observe(k, reference(6, k).as_ref());
        }
        assert_eq!(checker.verdict(3), Ok(()));
        assert_eq!(checker.worst, 0.0);
    }

    #[test]
    fn a_wrong_element_fails() {
        let mut checker = Checker::default();
        checker.observe(0, reference(8, 0).as_ref());
        let mut y = reference(8, 1);
        y.data[10].re += 1e-6 * y.data[10].norm().max(1.0);
        checker.observe(1, y.as_ref());
        let e = checker.verdict(2).unwrap_err();
        assert!(e.starts_with("iteration 1 differs"), "{e}");
    }

    #[test]
    fn the_wrong_iteration_or_layout_fails() {
        let mut checker = Checker::default();
        checker.observe(0, reference(8, 1).as_ref());
        assert!(checker.verdict(1).is_err());
        let mut checker = Checker::default();
        let mut y = reference(8, 0);
        y.layout = Layout::ColumnMajor;
        checker.observe(0, y.as_ref());
        assert!(checker.verdict(1).is_err());
    }

    #[test]
    fn missing_iterations_fail() {
        let mut checker = Checker::default();
        checker.observe(0, reference(4, 0).as_ref());
        assert_eq!(
            checker.verdict(2),
            Err("1 of 2 iterations produced a result".into())
        );
    }
}
