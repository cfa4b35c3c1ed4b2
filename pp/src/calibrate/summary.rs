//! The summary of one repeated measurement: minimum, median, coefficient of variation.

use crate::machine::{CV_LIMIT, Measurement};

/// Summarizes repeated timings of one figure (ns each).
///
/// * `min_ns`: the smallest sample (the figure used: interference only ever adds time).
/// * `median_ns`: the middle sample; for an even count, the mean of the two middle ones.
/// * `cv`: sample standard deviation (divisor `n - 1`) over the mean; 0 for fewer than two
///   samples or a zero mean.
/// * `flagged`: `cv > CV_LIMIT` (5%); a figure with no samples at all is flagged too.
///
/// Samples are expected to be finite; NaNs sort last (no panic) but spoil the statistics.
pub fn summarize(samples_ns: &[f64]) -> Measurement {
    let reps = u32::try_from(samples_ns.len()).unwrap_or(u32::MAX);
    if samples_ns.is_empty() {
        return Measurement {
            reps: 0,
            min_ns: 0.0,
            median_ns: 0.0,
            cv: 0.0,
            flagged: true,
        };
    }
    let mut sorted = samples_ns.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median_ns = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let cv = coefficient_of_variation(&sorted);
    Measurement {
        reps,
        min_ns: sorted[0],
        median_ns,
        cv,
        flagged: cv > CV_LIMIT,
    }
}

/// Sample standard deviation over the absolute mean (two-pass, so no cancellation).
fn coefficient_of_variation(samples: &[f64]) -> f64 {
    let n = samples.len();
    if n < 2 {
        return 0.0;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    if mean == 0.0 {
        return 0.0;
    }
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    var.sqrt() / mean.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn odd_count() {
        // mean 4, deviations -2 0 2 -> variance 8/2 = 4, sd 2, cv 0.5.
        let m = summarize(&[6.0, 2.0, 4.0]);
        assert_eq!(m.reps, 3);
        assert_eq!(m.min_ns, 2.0);
        assert_eq!(m.median_ns, 4.0);
        assert!(close(m.cv, 0.5), "{}", m.cv);
        assert!(m.flagged);
    }

    #[test]
    fn even_count() {
        // mean 102.5; deviations -2.5 -0.5 0.5 2.5 -> 13/3 -> sd 2.0817; cv 0.020309.
        let m = summarize(&[105.0, 100.0, 103.0, 102.0]);
        assert_eq!(m.reps, 4);
        assert_eq!(m.min_ns, 100.0);
        assert_eq!(m.median_ns, 102.5);
        assert!(close(m.cv, (13.0f64 / 3.0).sqrt() / 102.5), "{}", m.cv);
        assert!(!m.flagged);
    }

    #[test]
    fn flags_strictly_above_five_percent() {
        // Two samples 100 -/+ d: mean 100, sd = d * sqrt(2), cv = d * sqrt(2) / 100.
        let at = |cv: f64| {
            let d = cv * 100.0 / 2f64.sqrt();
            summarize(&[100.0 - d, 100.0 + d])
        };
        let just_below = at(CV_LIMIT * (1.0 - 1e-9));
        let just_above = at(CV_LIMIT * (1.0 + 1e-9));
        assert!(!just_below.flagged, "{just_below:?}");
        assert!(just_above.flagged, "{just_above:?}");
        assert!(close(at(CV_LIMIT).cv, CV_LIMIT));
    }

    #[test]
    fn degenerate_inputs() {
        let one = summarize(&[7.0]);
        assert_eq!(
            (one.reps, one.min_ns, one.median_ns, one.cv),
            (1, 7.0, 7.0, 0.0)
        );
        assert!(!one.flagged);
        let same = summarize(&[3.0; 5]);
        assert_eq!((same.cv, same.flagged), (0.0, false));
        let zeros = summarize(&[0.0, 0.0]);
        assert_eq!(zeros.cv, 0.0);
        let none = summarize(&[]);
        assert_eq!(none.reps, 0);
        assert!(none.flagged);
    }
}
