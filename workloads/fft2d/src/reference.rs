//! The single-threaded reference 2D FFT that `--check` and the tests compare against: the
//! textbook order, rows then columns, with `rustfft`, on a row-major matrix, independent of
//! the parallel code (no transposes, no teams, nothing recorded).

use rustfft::FftPlanner;

use crate::matrix::{C64, input};

/// `Y_k = DFT2(X_k)` for iteration `k`, row-major: `Y(u, v)` at `u*n + v`.
pub fn fft2d(n: usize, k: usize) -> Vec<C64> {
    let fft = FftPlanner::<f64>::new().plan_fft_forward(n);
    let mut data: Vec<C64> = (0..n * n).map(|x| input(x / n, x % n, k)).collect();
    let mut scratch = vec![C64::default(); fft.get_inplace_scratch_len()];
    // Rows: the buffer is n contiguous rows, transformed one after the other.
    fft.process_with_scratch(&mut data, &mut scratch);
    // Columns: gathered into a line, transformed, scattered back.
    let mut column = vec![C64::default(); n];
    for j in 0..n {
        for (i, c) in column.iter_mut().enumerate() {
            *c = data[i * n + j];
        }
        fft.process_with_scratch(&mut column, &mut scratch);
        for (i, c) in column.iter().enumerate() {
            data[i * n + j] = *c;
        }
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, `Y(u, v) = sum_ij X(i, j) e^{-2πi(iu + jv)/n}`, for a small n.
    #[test]
    fn matches_the_definition() {
        let n = 5;
        let k = 2;
        let y = fft2d(n, k);
        let w = |e: usize| {
            let a = -2.0 * std::f64::consts::PI * (e % n) as f64 / n as f64;
            C64::new(a.cos(), a.sin())
        };
        for u in 0..n {
            for v in 0..n {
                let mut s = C64::default();
                for i in 0..n {
                    for j in 0..n {
                        s += input(i, j, k) * w(i * u + j * v);
                    }
                }
                assert!((y[u * n + v] - s).norm() < 1e-9, "({u}, {v})");
            }
        }
    }
}
