//! The statistics every fit reports: confidence level, Student-t quantiles, R².

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Confidence level of every interval the toolkit reports.
pub const CONFIDENCE: f64 = 0.90;

/// The quantile `t` such that `±t` standard errors cover [`CONFIDENCE`] of a Student-t
/// distribution with `dof` degrees of freedom (two-sided). `NaN` when `dof == 0`.
pub fn t_quantile(dof: usize) -> f64 {
    if dof == 0 {
        return f64::NAN;
    }
    let t = StudentsT::new(0.0, 1.0, dof as f64).expect("dof > 0 is a valid Student t");
    t.inverse_cdf(0.5 + CONFIDENCE / 2.0)
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
