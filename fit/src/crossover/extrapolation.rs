//! Where a comparison leaves a model's fitted range: the part of an explored range, or a fixed
//! value, outside the data the model was fitted to.

use super::{Axis, Pair};

/// Where the comparison leaves a model's fitted range.
#[derive(Debug, Clone, PartialEq)]
pub struct Extrapolation {
    /// The model's name.
    pub model: String,
    /// The factor.
    pub factor: String,
    /// The model's fitted range of the factor.
    pub fitted: (f64, f64),
    /// The part of the explored range (or the fixed value, `(v, v)`) outside it.
    pub outside: (f64, f64),
}

impl Pair<'_> {
    /// Where the explored `axes` and the `fixed` values leave each model's fitted ranges.
    pub(super) fn extrapolation(
        &self,
        axes: &[&Axis],
        fixed: &[(String, f64)],
    ) -> Vec<Extrapolation> {
        let mut out = Vec::new();
        for m in [self.a, self.b] {
            for (f, &(lo, hi)) in m.factors.iter().zip(&m.ranges) {
                let mut push = |outside: (f64, f64)| {
                    out.push(Extrapolation {
                        model: m.name.clone(),
                        factor: f.clone(),
                        fitted: (lo, hi),
                        outside,
                    })
                };
                if let Some(axis) = axes.iter().find(|a| &a.factor == f) {
                    if axis.lo < lo {
                        push((axis.lo, axis.hi.min(lo)));
                    }
                    if axis.hi > hi {
                        push((axis.lo.max(hi), axis.hi));
                    }
                } else if let Some((_, v)) = fixed.iter().rev().find(|(n, _)| n == f)
                    && (*v < lo || *v > hi)
                {
                    push((*v, *v));
                }
            }
        }
        out
    }
}
