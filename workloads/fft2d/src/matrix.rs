//! The n×n complex matrices of the workload: the deterministic input, the storage layouts and
//! what is compared and printed about a result.
//!
//! A matrix is a flat buffer of `n*n` values, stored as `n` contiguous lines of `n` values.
//! The 1-D transforms always run along the contiguous lines; which index of the logical matrix
//! a line holds is the matrix's [`Layout`].

pub use rustfft::num_complex::Complex64 as C64;

/// Which index of the logical matrix `M(i, j)` the contiguous lines of a buffer hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Line `i` holds row `i`: `M(i, j)` is at `i*n + j`.
    RowMajor,
    /// Line `j` holds column `j`: `M(i, j)` is at `j*n + i`.
    ColumnMajor,
}

impl Layout {
    /// The buffer index of `M(i, j)` in an n×n matrix.
    #[inline]
    pub fn index(self, n: usize, i: usize, j: usize) -> usize {
        match self {
            Layout::RowMajor => i * n + j,
            Layout::ColumnMajor => j * n + i,
        }
    }
}

/// An n×n matrix with its layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    /// Side length.
    pub n: usize,
    /// How `data` is laid out.
    pub layout: Layout,
    /// `n*n` values.
    pub data: Vec<C64>,
}

impl Matrix {
    /// The matrix, borrowed.
    pub fn as_ref(&self) -> MatrixRef<'_> {
        MatrixRef {
            n: self.n,
            layout: self.layout,
            data: &self.data,
        }
    }
}

/// A borrowed n×n matrix with its layout.
#[derive(Debug, Clone, Copy)]
pub struct MatrixRef<'a> {
    /// Side length.
    pub n: usize,
    /// How `data` is laid out.
    pub layout: Layout,
    /// `n*n` values.
    pub data: &'a [C64],
}

impl MatrixRef<'_> {
    /// `M(i, j)`.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> C64 {
        self.data[self.layout.index(self.n, i, j)]
    }

    /// The sum of the magnitudes of all elements (independent of the layout): the checksum
    /// the program prints.
    pub fn magnitude_sum(&self) -> f64 {
        self.data.iter().map(|c| c.norm()).sum()
    }
}

/// The input element `X_k(i, j)` of iteration `k`: real and imaginary parts in `[-1, 1)`
/// from a hash of `(i, j, k)` (a few nanoseconds, so that initialising is cheap next to the
/// transforms, and any thread can compute any element).
#[inline]
pub fn input(i: usize, j: usize, k: usize) -> C64 {
    let seed = (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (i as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ (j as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
    let a = splitmix64(seed);
    let b = splitmix64(a);
    C64::new(unit(a), unit(b))
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
#[inline]
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The top 53 bits of `h` as a number in `[-1, 1)`.
#[inline]
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
}

/// How far `got` is from `want`: the largest element difference relative to the largest
/// element magnitude of `want` (0 for two zero matrices). Both must have the same `n`.
pub fn relative_error(got: MatrixRef<'_>, want: MatrixRef<'_>) -> f64 {
    assert_eq!(got.n, want.n, "comparing matrices of different sizes");
    let n = want.n;
    let mut diff = 0.0f64;
    let mut scale = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            let w = want.get(i, j);
            diff = diff.max((got.get(i, j) - w).norm());
            scale = scale.max(w.norm());
        }
    }
    if scale == 0.0 { diff } else { diff / scale }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_deterministic_and_in_range() {
        for (i, j, k) in [(0, 0, 0), (1, 2, 3), (511, 7, 19)] {
            let x = input(i, j, k);
            assert_eq!(x, input(i, j, k));
            assert!((-1.0..1.0).contains(&x.re) && (-1.0..1.0).contains(&x.im));
        }
        assert_ne!(input(1, 2, 3), input(2, 1, 3));
        assert_ne!(input(1, 2, 3), input(1, 2, 4));
    }

    #[test]
    fn layouts_address_the_same_element() {
        let n = 3;
        let row: Vec<C64> = (0..n * n).map(|x| C64::new(x as f64, 0.0)).collect();
        let mut col = vec![C64::default(); n * n];
        for i in 0..n {
            for j in 0..n {
                col[j * n + i] = row[i * n + j];
            }
        }
        let a = MatrixRef {
            n,
            layout: Layout::RowMajor,
            data: &row,
        };
        let b = MatrixRef {
            n,
            layout: Layout::ColumnMajor,
            data: &col,
        };
        assert_eq!(relative_error(a, b), 0.0);
        assert_eq!(a.magnitude_sum(), b.magnitude_sum());
    }
}
