//! A factor and the range it is explored over, sampled on a log scale when the range is
//! positive and spans more than 10x, else linearly. A range between whole numbers at least 2
//! apart is taken as a factor of whole numbers (processor counts, sizes), and so is `p`, the
//! processor count, between any two whole numbers: its runnable values are the integers in it,
//! and what is said about it is said on them (docs/comparing.md, "Runnable values").

use super::{CrossoverError, fail};

/// How samples are spaced along an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced logarithms.
    Log,
}

/// A factor and the range it is explored over.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The factor.
    pub factor: String,
    /// The smallest value.
    pub lo: f64,
    /// The largest value.
    pub hi: f64,
    /// How samples are spaced.
    pub scale: Scale,
    /// Only whole numbers can be run (both ends whole, and at least 2 apart or the factor is
    /// `p`).
    pub integer: bool,
}

impl Axis {
    /// The range `lo..hi` of a factor, on a log scale when it is positive and spans more than
    /// 10x, else linear.
    pub fn new(factor: &str, lo: f64, hi: f64) -> Result<Axis, CrossoverError> {
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return fail(format!(
                "the range of '{factor}' must be finite and increasing ({lo}..{hi})"
            ));
        }
        let scale = if lo > 0.0 && hi > 10.0 * lo {
            Scale::Log
        } else {
            Scale::Linear
        };
        Ok(Axis {
            factor: factor.to_string(),
            lo,
            hi,
            scale,
            // `p` counts processors (T_p divides by it): `p` from 2 to 3 is p = 2 and p = 3,
            // while a factor from 0 to 1 is more likely a fraction.
            integer: lo.fract() == 0.0 && hi.fract() == 0.0 && (hi - lo >= 2.0 || factor == "p"),
        })
    }

    /// The runnable values from `from` to `to`: on a whole-number axis the integers inside
    /// (None when there is none), else the stretch itself.
    pub fn runnable(&self, from: f64, to: f64) -> Option<(f64, f64)> {
        if !self.integer {
            return Some((from, to));
        }
        let eps = 1e-9 * from.abs().max(to.abs()).max(1.0);
        let (lo, hi) = ((from - eps).ceil(), (to + eps).floor());
        (lo <= hi).then_some((lo, hi))
    }

    /// `count` values for a grid: on a whole-number axis with at most `count` integers, every
    /// integer; else [`Axis::samples`].
    pub fn grid(&self, count: usize) -> Vec<f64> {
        if self.integer && self.hi - self.lo < count as f64 {
            let (lo, hi) = (self.lo as i64, self.hi as i64);
            return (lo..=hi).map(|v| v as f64).collect();
        }
        self.samples(count)
    }

    /// `count` values from `lo` to `hi` on the axis's scale (both ends included).
    pub fn samples(&self, count: usize) -> Vec<f64> {
        let count = count.max(2);
        let last = (count - 1) as f64;
        (0..count)
            .map(|i| match i {
                0 => self.lo,
                _ if i == count - 1 => self.hi,
                _ => self.at(i as f64 / last),
            })
            .collect()
    }

    /// The value a fraction `t` of the way from `lo` to `hi` on the axis's scale.
    pub fn at(&self, t: f64) -> f64 {
        match self.scale {
            Scale::Linear => self.lo + (self.hi - self.lo) * t,
            Scale::Log => (self.lo.ln() + (self.hi.ln() - self.lo.ln()) * t).exp(),
        }
    }

    pub(super) fn midpoint(&self, a: f64, b: f64) -> f64 {
        match self.scale {
            Scale::Log if a > 0.0 && b > 0.0 => (a * b).sqrt(),
            _ => 0.5 * (a + b),
        }
    }
}
