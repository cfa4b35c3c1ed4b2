//! Two models to compare: checked to predict the same thing over the same factors, with the
//! values left free, the default ranges and the comparison at a named point.

use super::solver::Evaluator;
use super::{
    Axis, Comparison, CrossoverError, DifferenceModel, MeasuredPoint, ValidatedError, fail,
};
use crate::performance::{Kind, PerformanceModel};

/// Two models to compare, checked to be over the same factors.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'m> {
    /// The first implementation (A).
    pub a: &'m PerformanceModel,
    /// The second implementation (B).
    pub b: &'m PerformanceModel,
    /// Each model's validated error, when known ([`Pair::with_validated_errors`]).
    pub errors: [Option<ValidatedError>; 2],
    /// The points both implementations ran, decided by their runs ([`Pair::with_measured`]).
    pub measured: &'m [MeasuredPoint],
    /// The difference model of the two, deciding where it is tighter
    /// ([`Pair::with_difference`]).
    pub difference: Option<&'m DifferenceModel>,
}

/// What a model's comparisons compare: None for run time `T_p`, the response's name for a
/// response model (which must have exactly one).
pub(super) fn compared(m: &PerformanceModel) -> Result<Option<String>, CrossoverError> {
    if m.kind == Kind::LostCycles {
        return Ok(None);
    }
    match m.categories.as_slice() {
        [one] => Ok(Some(one.category.clone())),
        many => {
            let names: Vec<&str> = many.iter().map(|c| c.category.as_str()).collect();
            fail(format!(
                "{} models {} responses ({}); compare models of one response each",
                m.name,
                names.len(),
                names.join(", ")
            ))
        }
    }
}

impl<'m> Pair<'m> {
    pub fn new(a: &'m PerformanceModel, b: &'m PerformanceModel) -> Result<Self, CrossoverError> {
        let (ra, rb) = (compared(a)?, compared(b)?);
        if ra != rb {
            let what = |r: &Option<String>| match r {
                None => "run time T_p (lost cycles)".to_string(),
                Some(r) => format!("the response '{r}'"),
            };
            return fail(format!(
                "the models predict different things: {} models {}, {} models {}",
                a.name,
                what(&ra),
                b.name,
                what(&rb)
            ));
        }
        let mut fa = a.factors.clone();
        let mut fb = b.factors.clone();
        fa.sort();
        fb.sort();
        if fa != fb {
            return fail(format!(
                "the models are over different factors: {} has ({}), {} has ({})",
                a.name,
                a.factors.join(", "),
                b.name,
                b.factors.join(", ")
            ));
        }
        if let (Some(pa), Some(pb)) = (a.held.get("p"), b.held.get("p"))
            && pa != pb
        {
            return fail(format!(
                "the models hold p at different values: {} at p={pa}, {} at p={pb}",
                a.name, b.name
            ));
        }
        Ok(Pair {
            a,
            b,
            errors: [None, None],
            measured: &[],
            difference: None,
        })
    }

    /// Whether each model's intervals hold its own error on its runs (a model computed by an
    /// evaluator, PACE's) rather than its fitted coefficients' uncertainty.
    pub fn own_errors(&self) -> [bool; 2] {
        [self.a.evaluator.is_some(), self.b.evaluator.is_some()]
    }

    /// The same pair, its comparisons' intervals also holding each model's validated error.
    pub fn with_validated_errors(mut self, errors: [Option<ValidatedError>; 2]) -> Self {
        self.errors = errors.map(|e| e.filter(|e| e.points >= 2 && e.relative_sd.is_finite()));
        self
    }

    /// The same pair, the points both implementations ran deciding the verdict there (see
    /// [the module](super)).
    pub fn with_measured(mut self, measured: &'m [MeasuredPoint]) -> Self {
        self.measured = measured;
        self
    }

    /// The same pair, the difference model deciding wherever its interval is narrower than
    /// the two models' ([`DifferenceModel::decide`]).
    pub fn with_difference(mut self, difference: Option<&'m DifferenceModel>) -> Self {
        self.difference = difference;
        self
    }

    /// The measured points on the region: at the `fixed` values, inside every axis; each with
    /// what the models would call there ([`MeasuredPoint::models`]).
    pub(super) fn measured_on(
        &self,
        axes: &[&Axis],
        fixed: &[(String, f64)],
    ) -> Vec<MeasuredPoint> {
        self.measured
            .iter()
            .filter(|m| m.at(fixed))
            .filter(|m| {
                axes.iter().all(|a| {
                    m.value(&a.factor).is_some_and(|x| {
                        x >= a.lo - 1e-9 * a.lo.abs() && x <= a.hi + 1e-9 * a.hi.abs()
                    })
                })
            })
            .cloned()
            .map(|mut m| {
                m.models = self.compare_at(&m.point).ok().map(|c| c.winner);
                m
            })
            .collect()
    }

    /// The factors, in the first model's order.
    pub fn factors(&self) -> &[String] {
        &self.a.factors
    }

    /// Checks the fixed values (every name a factor or a held value of both models, a held one
    /// at its held value) and returns the factors left free, in the first model's order.
    pub fn free(&self, fixed: &[(String, f64)]) -> Result<Vec<String>, CrossoverError> {
        for (name, value) in fixed {
            if self.a.factors.contains(name) {
                continue;
            }
            let held = [self.a, self.b]
                .into_iter()
                .find_map(|m| m.held.get(name).map(|h| (m, *h)));
            match held {
                Some((m, h)) if h != *value => {
                    return fail(format!(
                        "--at {name}={value}: {} holds {name} at {h} (it is not a factor)",
                        m.name
                    ));
                }
                Some(_) => {}
                None => {
                    return fail(format!(
                        "--at {name}={value}: '{name}' is not a factor of the models ({})",
                        self.a.factors.join(", ")
                    ));
                }
            }
        }
        Ok(self
            .a
            .factors
            .iter()
            .filter(|f| !fixed.iter().any(|(n, _)| n == *f))
            .cloned()
            .collect())
    }

    /// The default range of a factor: the union of the two models' fitted ranges.
    pub fn default_axis(&self, factor: &str) -> Result<Axis, CrossoverError> {
        let range = |m: &PerformanceModel| {
            m.factors
                .iter()
                .position(|f| f == factor)
                .map(|i| m.ranges[i])
                .filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
        };
        let (lo, hi) = match (range(self.a), range(self.b)) {
            (Some(a), Some(b)) => (a.0.min(b.0), a.1.max(b.1)),
            (Some(r), None) | (None, Some(r)) => r,
            (None, None) => {
                return fail(format!(
                    "neither model has a fitted range of '{factor}': give one, e.g. \
                     --range {factor}=LOW..HIGH"
                ));
            }
        };
        if lo >= hi {
            return fail(format!(
                "the models were fitted at {factor}={lo} only: give a range, e.g. \
                 --range {factor}=LOW..HIGH"
            ));
        }
        Axis::new(factor, lo, hi)
    }

    /// Who wins at a point given by name (every factor, or held value at its value), by
    /// [`compare`](super::compare); an error where a model cannot predict.
    pub fn compare_at(&self, point: &[(String, f64)]) -> Result<Comparison, CrossoverError> {
        let free = self.free(point)?;
        if let Some(missing) = free.first() {
            return fail(format!(
                "factor '{missing}' has no value: give one, e.g. {missing}=VALUE"
            ));
        }
        Evaluator {
            a: self.a,
            b: self.b,
            errors: self.errors,
            difference: self.difference,
        }
        .at(point)
    }

    pub(super) fn evaluator(
        &self,
        free: &[&str],
        fixed: &[(String, f64)],
    ) -> Result<Evaluator<'m>, CrossoverError> {
        let left = self.free(fixed)?;
        for f in free {
            if !self.a.factors.iter().any(|g| g == f) {
                return fail(format!(
                    "'{f}' is not a factor of the models ({})",
                    self.a.factors.join(", ")
                ));
            }
            if fixed.iter().any(|(n, _)| n == f) {
                return fail(format!("'{f}' is both varied and fixed with --at"));
            }
        }
        if let Some(missing) = left.iter().find(|f| !free.contains(&f.as_str())) {
            return fail(format!(
                "factor '{missing}' is neither varied nor fixed: give its value, e.g. \
                 --at {missing}=VALUE"
            ));
        }
        Ok(Evaluator {
            a: self.a,
            b: self.b,
            errors: self.errors,
            difference: self.difference,
        })
    }
}

/// The fixed values other than `factor`, last one of a name winning.
pub(super) fn fixed_point(fixed: &[(String, f64)], factor: &str) -> Vec<(String, f64)> {
    fixed.iter().filter(|(n, _)| n != factor).cloned().collect()
}
