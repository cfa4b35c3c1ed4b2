//! Number formatting shared by every report.

/// `value +/- half_width` with the half-width to two significant digits and the value to the
/// same decimal place, as the paper prints `0.000298 +/- 0.000017`. Very large or very small
/// numbers share one exponent: `(2.98 +/- 0.17)e-4` prints as `2.98 +/- 0.17 e-4`.
///
/// A missing half-width (no degrees of freedom left) prints as `n/a`.
/// A prediction with its 90% interval: `value +/- half_width`, or where the interval was cut
/// at zero (lost cycles cannot be negative), `value (0 .. upper)`.
pub fn prediction(p: &fit::Prediction) -> String {
    if p.is_cut() {
        // A value held at zero by a bound comes out of the solver as rounding noise.
        let value = if p.value.abs() <= 1e-9 * p.upper.abs() {
            0.0
        } else {
            p.value
        };
        format!(
            "{} ({} .. {})",
            significant(value, 3),
            significant(p.lower, 3),
            significant(p.upper, 3)
        )
    } else {
        estimate(p.value, p.half_width)
    }
}

pub fn estimate(value: f64, half_width: f64) -> String {
    if !value.is_finite() {
        return format!("{value} +/- n/a");
    }
    if !half_width.is_finite() || half_width < 0.0 {
        return format!("{} +/- n/a", significant(value, 4));
    }
    if half_width <= 1e-9 * value.abs() {
        // An exact fit: the interval is rounding noise.
        return format!("{} +/- 0", significant(value, 6));
    }
    let decimals = 1 - half_width.log10().floor() as i32;
    let magnitude = value.abs().max(half_width);
    if decimals <= 8 && magnitude < 1e7 {
        if decimals < 0 {
            let unit = 10f64.powi(-decimals);
            let round = |x: f64| (x / unit).round() * unit;
            return format!("{} +/- {}", round(value), round(half_width));
        }
        let d = decimals as usize;
        return format!("{value:.d$} +/- {half_width:.d$}");
    }
    let exponent = magnitude.log10().floor() as i32;
    let scale = 10f64.powi(exponent);
    let (v, h) = (value / scale, half_width / scale);
    let d = (1 - h.log10().floor() as i32).clamp(0, 12) as usize;
    format!("{v:.d$} +/- {h:.d$} e{exponent}")
}

/// `v` to `digits` significant digits, in plain notation for 1e-4 <= |v| < 1e7 and
/// scientific notation otherwise; non-finite values print as `n/a` (NaN) or `inf`.
pub fn significant(v: f64, digits: usize) -> String {
    if v.is_nan() {
        return "n/a".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return "0".into();
    }
    let magnitude = v.abs().log10().floor() as i32;
    if (-4..7).contains(&magnitude) {
        let d = (digits as i32 - 1 - magnitude).max(0) as usize;
        format!("{v:.d$}")
    } else {
        format!("{v:.*e}", digits.saturating_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_style_estimates() {
        assert_eq!(estimate(0.000298, 0.000017), "0.000298 +/- 0.000017");
        assert_eq!(estimate(12.346, 0.26), "12.35 +/- 0.26");
        // Digits below the uncertainty are not shown.
        assert_eq!(estimate(3.0, 1234.0), "0 +/- 1200");
        assert_eq!(estimate(123456.0, 1234.0), "123500 +/- 1200");
        assert_eq!(estimate(-1.5, 0.05), "-1.500 +/- 0.050");
        assert_eq!(estimate(2.98e-10, 1.7e-11), "2.98 +/- 0.17 e-10");
        assert_eq!(estimate(1.0, f64::NAN), "1.000 +/- n/a");
        assert_eq!(estimate(2.0, 3e-16), "2.00000 +/- 0");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(0.975123, 3), "0.975");
        assert_eq!(significant(1024.0, 6), "1024.00");
        assert_eq!(significant(0.000031, 3), "3.10e-5");
        assert_eq!(significant(f64::NAN, 3), "n/a");
        assert_eq!(significant(0.0, 3), "0");
    }
}
