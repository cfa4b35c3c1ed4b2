//! The statistics every fit reports: confidence level, Student-t quantiles, R².

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Confidence level of every interval the toolkit reports.
pub const CONFIDENCE: f64 = 0.90;

/// Integer degrees of freedom whose quantiles are computed once and kept.
const TABLE: usize = 1024;

/// Below this many degrees of freedom a fractional quantile is computed exactly.
const EXACT_BELOW: f64 = 8.0;

/// The quantile `t` such that `±t` standard errors cover [`CONFIDENCE`] of a Student-t
/// distribution with `dof` degrees of freedom (two-sided). `NaN` when `dof == 0`. Above the
/// table, interpolated as [`t_quantile_real`] does (within 1e-4): the exact quantile takes
/// minutes for `dof = 2^32`, which a model file can say.
pub fn t_quantile(dof: usize) -> f64 {
    match dof {
        0 => f64::NAN,
        d if d <= TABLE => table()[d],
        d => t_quantile_real(d as f64),
    }
}

/// The 90% half-width of a sum of independent terms from their summed `variance` and
/// Welch–Satterthwaite `denominator` (the sum of each term's `variance² / dof`): the t
/// quantile at `variance² / denominator` degrees of freedom times the standard deviation; 0
/// without variance.
pub fn welch_half_width(variance: f64, denominator: f64) -> f64 {
    if variance > 0.0 {
        t_quantile_real(variance * variance / denominator) * variance.sqrt()
    } else {
        0.0
    }
}

/// [`t_quantile`] for real degrees of freedom (Welch–Satterthwaite): exact below 8; above,
/// interpolated linearly in `1/dof` between integer degrees of freedom (and the normal
/// quantile at infinity), which is within 1e-4 relative of the exact value there. `NaN` for
/// `dof <= 0` or NaN.
pub fn t_quantile_real(dof: f64) -> f64 {
    if dof.is_nan() || dof <= 0.0 {
        return f64::NAN;
    }
    if dof < EXACT_BELOW {
        return exact(dof);
    }
    let table = table();
    let (lo, hi, t_lo, t_hi) = if dof >= TABLE as f64 {
        let z = exact(f64::INFINITY);
        (TABLE as f64, f64::INFINITY, table[TABLE], z)
    } else {
        let lo = dof.floor();
        (lo, lo + 1.0, table[lo as usize], table[lo as usize + 1])
    };
    if dof == lo {
        return t_lo;
    }
    let w = (1.0 / lo - 1.0 / dof) / (1.0 / lo - 1.0 / hi);
    t_lo + w * (t_hi - t_lo)
}

fn exact(dof: f64) -> f64 {
    if dof.is_infinite() {
        return statrs::distribution::Normal::new(0.0, 1.0)
            .expect("the standard normal exists")
            .inverse_cdf(0.5 + CONFIDENCE / 2.0);
    }
    let t = StudentsT::new(0.0, 1.0, dof).expect("dof > 0 is a valid Student t");
    t.inverse_cdf(0.5 + CONFIDENCE / 2.0)
}

/// Quantiles for 0..=TABLE degrees of freedom (index 0 is NaN), computed on first use.
fn table() -> &'static [f64] {
    static TABLE_CELL: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    TABLE_CELL.get_or_init(|| {
        std::iter::once(f64::NAN)
            .chain((1..=TABLE).map(|d| exact(d as f64)))
            .collect()
    })
}

/// Coefficient of determination `1 - SSE/SST`, with `SST` centred on the mean.
/// `NaN` when the response does not vary (`SST == 0`).
pub fn r_squared(sse: f64, sst: f64) -> f64 {
    if sst > 0.0 { 1.0 - sse / sst } else { f64::NAN }
}

/// R² adjusted for the `k` fitted quantities of a model on `n` observations:
/// `1 - (SSE/(n-k)) / (SST/(n-1))`. `NaN` when `n <= k` or `SST == 0`.
pub fn adjusted_r_squared(sse: f64, sst: f64, n: usize, k: usize) -> f64 {
    if n <= k || n < 2 || sst <= 0.0 {
        return f64::NAN;
    }
    1.0 - (sse / (n - k) as f64) / (sst / (n - 1) as f64)
}

/// Sum of squares of `y` about its mean.
pub fn total_sum_of_squares(y: &[f64]) -> f64 {
    if y.is_empty() {
        return 0.0;
    }
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    y.iter().map(|v| (v - mean).powi(2)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_dof_quantiles_match_the_exact_ones() {
        for dof in [1.0, 2.5, 7.9, 8.0, 8.3, 13.7, 99.5, 1023.5, 1500.2, 1e6] {
            let (approx, exact) = (t_quantile_real(dof), exact(dof));
            assert!(
                (approx - exact).abs() / exact < 1e-4,
                "{dof}: {approx} vs {exact}"
            );
        }
        assert_eq!(t_quantile_real(10.0), t_quantile(10));
        assert!(t_quantile_real(0.0).is_nan() && t_quantile_real(f64::NAN).is_nan());
    }
    use approx::assert_relative_eq;

    #[test]
    fn t_quantiles_match_printed_tables() {
        // Two-sided 90% (one-sided 0.95) values from any Student-t table.
        assert_relative_eq!(t_quantile(1), 6.313_751_514_675_04, epsilon = 1e-9);
        assert_relative_eq!(t_quantile(2), 2.919_985_580_353_72, epsilon = 1e-9);
        assert_relative_eq!(t_quantile(10), 1.812_461_122_811_68, epsilon = 1e-9);
        assert_relative_eq!(t_quantile(30), 1.697_260_886_954_75, epsilon = 1e-9);
        assert!(t_quantile(0).is_nan());
        // Large dof tends to the normal quantile 1.6448536.
        assert_relative_eq!(t_quantile(1_000_000), 1.644_853_6, epsilon = 1e-5);
        // A model file's dof of 2^32 (found by fuzzing: the exact quantile took minutes).
        assert_relative_eq!(t_quantile(1 << 32), 1.644_853_6, epsilon = 1e-5);
        assert_relative_eq!(t_quantile(1500), exact(1500.0), max_relative = 1e-4);
    }

    #[test]
    fn r_squared_by_hand() {
        // y = 0,1,1,2 ; line 0.1 + 0.6x : SSE 0.2, SST 2.0
        let sst = total_sum_of_squares(&[0.0, 1.0, 1.0, 2.0]);
        assert_relative_eq!(sst, 2.0);
        assert_relative_eq!(r_squared(0.2, sst), 0.9);
        // adjusted: 1 - (0.2/2)/(2/3) = 0.85
        assert_relative_eq!(adjusted_r_squared(0.2, sst, 4, 2), 0.85, epsilon = 1e-15);
        assert!(r_squared(0.0, 0.0).is_nan());
    }
}
