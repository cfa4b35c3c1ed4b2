//! The multi-factor model of one category (docs/model-file.md): a shape per factor, `g(n)`, `h(p)`,
//! combined additively, `a + b*g(n) + c*h(p)`, or multiplicatively, `a + d*g(n)*h(p)`.
//!
//! * **Shapes** come from the user, or are ranked among the paper's defaults for the
//!   (category, factor) pair on the *edges* of the design: groups of runs in which only that
//!   factor varies (≥ 3 levels). On every edge each candidate is fitted as `1 + shape` (the
//!   other factors' contribution is a constant there, under either combination) and scored by
//!   its leave-one-out error relative to the edge's size; the lowest mean score wins.
//! * **The combination** is chosen by allocation of variation on the 2^k corners of the
//!   design (Jain ch. 17–18). An additive model has no interaction at the corners; the
//!   multiplicative one has an interaction share that its shapes fix, whatever its
//!   coefficients: with `g ∈ {1, 10}` and `h ∈ {1, 10}`, 25%. So "interaction explains the
//!   majority" would call that pure product additive; instead the measured interaction share
//!   is compared with both forms' implied shares (0 and the multiplicative model's own), and
//!   the nearer form is chosen.
//!   Without every corner the runs choose instead ([`LeaveOneOutChoice`]): by an F test where
//!   the additive form holds every multiplicative fit (a cross design), else by leave-one-out
//!   error.

mod corners;
mod integer;
mod leave_one_out;
mod shape;
mod together;

pub use corners::CornerVariation;
pub use integer::{FACTOR as INTEGER_FACTOR, IntegerChoice};
pub use leave_one_out::LeaveOneOutChoice;
pub use shape::{Shape, ShapeSource, own_parameters};
pub use together::Together;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use crate::fit::{Fit, FitError, Weighting, fit_weighted};
use crate::model::Model;
use crate::observations::Observations;
use corners::{corner_means, corner_shares};
use shape::shape;

/// How the per-factor shapes of a category combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combination {
    /// `a + b*g(n) + c*h(p)`: each factor adds its own lost cycles.
    Additive,
    /// `a + d*g(n)*h(p)`: the factors scale each other.
    Multiplicative,
    /// `a + b*g(n) + c*h(p) + d*g(n)*h(p)`: main effects and their product (Jain's model with
    /// interaction), which holds a product of shifted shapes such as `g(n)*(p - 2)`. Chosen
    /// over the multiplicative form only when its extra terms are significant (F test, 1%).
    Full,
}

impl FromStr for Combination {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "additive" | "add" => Ok(Combination::Additive),
            "multiplicative" | "mult" => Ok(Combination::Multiplicative),
            "full" => Ok(Combination::Full),
            _ => Err(format!(
                "unknown combination '{s}' (expected additive, multiplicative or full)"
            )),
        }
    }
}

impl fmt::Display for Combination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Combination::Additive => "additive",
            Combination::Multiplicative => "multiplicative",
            Combination::Full => "full",
        })
    }
}

/// What decided the combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChosenBy {
    /// Allocation of variation on the corners.
    Variation,
    /// The user.
    User,
    /// At most one factor has a shape, so both forms are the same model.
    Equivalent,
    /// A corner of the design was not measured: the runs chose ([`LeaveOneOutChoice`]: an F
    /// test where the additive form holds every multiplicative fit, else the lower
    /// leave-one-out error among the forms the runs can estimate).
    LeaveOneOut,
}

/// A category's fitted multi-factor model.
#[derive(Debug, Clone)]
pub struct CategoryModel {
    /// The category (response column).
    pub category: String,
    /// One shape per factor, in the factors' order.
    pub shapes: Vec<Shape>,
    /// The combination (None for a model written by hand).
    pub combination: Option<Combination>,
    /// What chose it (None for a model written by hand).
    pub chosen_by: Option<ChosenBy>,
    /// The corner allocation of variation, when the design has every corner.
    pub variation: Option<CornerVariation>,
    /// Why the form was chosen without every corner ([`ChosenBy::LeaveOneOut`]).
    pub leave_one_out: Option<LeaveOneOutChoice>,
    /// The products of the full form dropped as not significant, with three or more varying
    /// factors ([`drop_products`]); empty otherwise.
    pub dropped: Vec<String>,
    /// Groups of factors that vary together in every run ([`Observations::vary_together`]):
    /// their effects cannot be told apart, so the model follows each group's lead alone.
    pub vary_together: Vec<Together>,
    /// What the residual test found along `p`, when it fired, and whether an integer term
    /// was added (docs/modelling.md#integer-structure).
    pub integer: Option<IntegerChoice>,
    /// The combined model fitted to every observation.
    pub fit: Fit,
}

/// Why a category could not be modelled. One line, naming the category.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CombineError {
    /// The model could not be fitted.
    #[error("category '{category}': these runs cannot estimate it: {error}")]
    Fit {
        /// The category.
        category: String,
        /// Why.
        error: FitError,
    },
    /// A user shape or combination that cannot be used.
    #[error("category '{category}': {message}")]
    Invalid {
        /// The category.
        category: String,
        /// Why.
        message: String,
    },
}

/// What the user fixed for a category.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Choices {
    /// Shapes by factor.
    pub shapes: BTreeMap<String, String>,
    /// The combination.
    pub combination: Option<Combination>,
}

/// The combined model's formula from the shapes: `1` plus the sum or the product of the
/// non-constant shapes.
///
/// ```
/// use fit::combination::{Combination, combined_formula};
/// let shapes = ["n*log2(n)", "p*sqrt(p)"];
/// assert_eq!(combined_formula(&shapes, Combination::Additive), "1 + n*log2(n) + p*sqrt(p)");
/// assert_eq!(combined_formula(&shapes, Combination::Multiplicative), "1 + n*log2(n)*p*sqrt(p)");
/// assert_eq!(combined_formula(&["1", "p"], Combination::Multiplicative), "1 + p");
/// assert_eq!(combined_formula(&shapes, Combination::Full),
///     "1 + n*log2(n) + p*sqrt(p) + n*log2(n)*p*sqrt(p)");
/// ```
pub fn combined_formula(shapes: &[&str], combination: Combination) -> String {
    let varying: Vec<&str> = shapes.iter().copied().filter(|s| *s != "1").collect();
    if varying.is_empty() {
        return "1".into();
    }
    let product = |shapes: &[&str]| product_of(shapes, (1usize << shapes.len()) - 1);
    match combination {
        Combination::Additive => format!("1 + {}", varying.join(" + ")),
        Combination::Multiplicative => format!("1 + {}", product(&varying)),
        Combination::Full => products_formula(&varying, &every_product(varying.len())),
    }
}

/// Every product of a non-empty subset of `k` shapes, as bit sets, smaller subsets first.
fn every_product(k: usize) -> Vec<usize> {
    let mut subsets: Vec<usize> = (1..1usize << k).collect();
    subsets.sort_by_key(|s| (s.count_ones(), *s));
    subsets
}

/// The product of the shapes in the bit set `subset` of `varying`, sums parenthesised.
fn product_of(varying: &[&str], subset: usize) -> String {
    let members: Vec<&str> = (0..varying.len())
        .filter(|i| subset >> i & 1 == 1)
        .map(|i| varying[i])
        .collect();
    if members.len() == 1 {
        return members[0].to_string();
    }
    members
        .iter()
        .map(|s| {
            if has_top_level_sum(s) {
                format!("({s})")
            } else {
                s.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("*")
}

/// `1` plus the products of the given subsets of the shapes.
fn products_formula(varying: &[&str], subsets: &[usize]) -> String {
    let terms: Vec<String> = subsets.iter().map(|&s| product_of(varying, s)).collect();
    format!("1 + {}", terms.join(" + "))
}

/// Whether `+` or `-` occurs outside parentheses (so the text needs them in a product).
fn has_top_level_sum(s: &str) -> bool {
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '+' | '-' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Fits the multi-factor model of `obs.response` against every factor of `obs`, on a machine
/// whose core count is not known.
pub fn combine(obs: &Observations, choices: &Choices) -> Result<CategoryModel, CombineError> {
    combine_on(obs, choices, None)
}

/// Fits the multi-factor model of `obs.response` against every factor of `obs`; `cores`, when
/// known, lets the residual test look for rounds of `ceil(p/cores)`.
pub fn combine_on(
    obs: &Observations,
    choices: &Choices,
    cores: Option<u32>,
) -> Result<CategoryModel, CombineError> {
    let category = obs.response.clone();
    let invalid = |message: String| CombineError::Invalid {
        category: category.clone(),
        message,
    };
    if let Some(factor) = choices.shapes.keys().find(|f| !obs.factors.contains(f)) {
        return Err(invalid(format!(
            "a shape is given for '{factor}', which is not a factor (factors: {})",
            obs.factors.join(", ")
        )));
    }
    let groups = together::groups(obs, &choices.shapes);
    let mut shapes = (0..obs.factors.len())
        .map(|f| {
            let user = choices.shapes.get(&obs.factors[f]);
            match groups.iter().find(|g| g.contains(&f)) {
                // A factor the group's lead stands for: no shape of its own, unless given.
                Some(group) if group[0] != f && user.is_none() => Ok(Shape {
                    factor: obs.factors[f].clone(),
                    expr: "1".into(),
                    source: ShapeSource::Follows,
                    edges: 0,
                    score: None,
                    runner_up: None,
                    constant_score: None,
                }),
                Some(group) if group[0] == f => shape(obs, f, user, &group[1..]),
                _ => shape(obs, f, user, &[]),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    for s in &mut shapes {
        s.expr = own_parameters(&s.expr, &s.factor);
    }
    let texts: Vec<&str> = shapes.iter().map(|s| s.expr.as_str()).collect();
    let weighting = weighting_for(&obs.y);
    let fit_formula = |formula: &str, on: &Observations| {
        let model = Model::parse(formula).map_err(|e| invalid(e.to_string()))?;
        fit_weighted(&model, on, weighting).map_err(|error| CombineError::Fit {
            category: category.clone(),
            error,
        })
    };
    let fit_on =
        |combination, on: &Observations| fit_formula(&combined_formula(&texts, combination), on);
    let fit_form = |combination| fit_on(combination, obs);

    let varying = shapes.iter().filter(|s| !s.is_constant()).count();
    let corners = corner_means(obs);
    let mut leave_one_out = None;
    let (combination, chosen_by, variation, mut fit) = if varying <= 1 {
        let variation = corners.as_ref().ok().map(|c| corner_shares(obs, c, None));
        let combination = choices.combination.unwrap_or(Combination::Additive);
        let fit = fit_form(combination)?;
        (combination, ChosenBy::Equivalent, variation, fit)
    } else {
        let multiplicative = fit_form(Combination::Multiplicative);
        let variation = match (&corners, &multiplicative) {
            (Ok(c), Ok(m)) => Ok(corner_shares(obs, c, Some(m))),
            (Ok(_), Err(e)) => Err(Some(e.clone())),
            (Err(_), _) => Err(None),
        };
        match (choices.combination, variation) {
            (Some(c), variation) => {
                let fit = match c {
                    Combination::Multiplicative => multiplicative?,
                    other => fit_form(other)?,
                };
                (c, ChosenBy::User, variation.ok(), fit)
            }
            (None, Ok(mut v)) => {
                // With little interaction at the corners additive, else multiplicative; the
                // full form replaces either where its extra terms are significant: after an
                // additive choice, an interaction of two factors that a third's main effect
                // dwarfs at the corners (Extra-P's `a + b f(x) + c g(y) h(z)`).
                let simpler = if v.interaction > v.implied_multiplicative / 2.0 {
                    let multiplicative = multiplicative?;
                    v.multiplicative_cv = multiplicative.cv;
                    (Combination::Multiplicative, multiplicative)
                } else {
                    (Combination::Additive, fit_form(Combination::Additive)?)
                };
                let full = full_if_significant(simpler, fit_form(Combination::Full));
                (v.full_cv, v.full_p_value) = (full.cv, full.p_value);
                (full.combination, ChosenBy::Variation, Some(v), full.fit)
            }
            (None, Err(Some(e))) => return Err(e),
            (None, Err(None)) => {
                let corner = corners.err().unwrap_or_default();
                let (c, choice, fit) = leave_one_out::choose(obs, corner, fit_on)?;
                leave_one_out = Some(choice);
                (c, ChosenBy::LeaveOneOut, None, fit)
            }
        }
    };
    let mut dropped = Vec::new();
    if combination == Combination::Full && chosen_by != ChosenBy::User {
        let varying: Vec<&str> = texts.iter().copied().filter(|s| *s != "1").collect();
        (fit, dropped) = drop_products(&varying, fit, |f| fit_formula(f, obs));
    }
    let user_shape = choices.shapes.contains_key(integer::FACTOR);
    let integer = integer::refine(obs, &shapes, &fit, cores, user_shape).map(|(choice, with)| {
        if let Some(with) = with {
            fit = with;
        }
        choice
    });
    Ok(CategoryModel {
        category,
        shapes,
        combination: Some(combination),
        chosen_by: Some(chosen_by),
        variation,
        leave_one_out,
        dropped,
        vary_together: groups.iter().map(|g| Together::of(obs, g)).collect(),
        integer,
        fit,
    })
}

/// The full form replaces the form chosen only when its extra terms are significant at this
/// level (partial F test): they must earn their place.
const FULL_SIGNIFICANCE: f64 = 0.01;

/// What [`full_if_significant`] chose, with the full form's leave-one-out error and the
/// p-value of its extra terms (NaN where it could not be fitted).
struct FullChoice {
    combination: Combination,
    fit: Fit,
    cv: f64,
    p_value: f64,
}

/// The `full` form in place of the `simpler` one (the form and its fit) when the full form's
/// extra terms are significant at [`FULL_SIGNIFICANCE`]: every choice of form ends with it.
fn full_if_significant(
    (combination, simpler): (Combination, Fit),
    full: Result<Fit, CombineError>,
) -> FullChoice {
    let Ok(full) = full else {
        return FullChoice {
            combination,
            fit: simpler,
            cv: f64::NAN,
            p_value: f64::NAN,
        };
    };
    let (cv, p_value) = (full.cv, extra_terms_p_value(&simpler, &full));
    let (combination, fit) = if p_value < FULL_SIGNIFICANCE {
        (Combination::Full, full)
    } else {
        (combination, simpler)
    };
    FullChoice {
        combination,
        fit,
        cv,
        p_value,
    }
}

/// The full form of three or more varying shapes without the products its runs do not need:
/// hierarchical backward elimination. Of the products that no other kept product contains,
/// the one with the least `t²` (its coefficient over its standard error, squared: the partial F
/// statistic of dropping it alone, in a linear fit) is refitted away, and dropped while the
/// partial F test's p-value is at least [`FULL_SIGNIFICANCE`] (or the form without it still
/// fits exactly); then again on what is left. Main effects always stay. Extra-P's `200 + 100
/// f(x) + 2 g(y) h(z)` keeps `g(y) h(z)` and loses `f(x) g(y)`, `f(x) h(z)` and `f(x) g(y)
/// h(z)`, whose noise would otherwise be carried beyond the data. To spare fits (six factors
/// have 57 products), a round first tries every such product whose own `t²` is not
/// significant at once, kept out only if their joint F test is not significant either.
/// Returns the fit and the dropped products' texts.
fn drop_products(
    varying: &[&str],
    full: Fit,
    fit: impl Fn(&str) -> Result<Fit, CombineError>,
) -> (Fit, Vec<String>) {
    let (mut current, mut dropped) = (full, Vec::new());
    if varying.len() < 3 {
        return (current, dropped);
    }
    let mut kept = every_product(varying.len());
    loop {
        // The coefficients follow the formula's terms: `1`, then the kept products in order.
        if current.coefficients.len() != kept.len() + 1 {
            return (current, dropped);
        }
        let t2 = |i: usize| {
            let c = &current.coefficients[i + 1];
            let t2 = (c.value / c.std_error).powi(2);
            if t2.is_nan() { 0.0 } else { t2 }
        };
        let mut outermost: Vec<usize> = (0..kept.len())
            .filter(|&i| {
                let s = kept[i];
                s.count_ones() >= 2 && !kept.iter().any(|&t| t != s && t & s == s)
            })
            .collect();
        outermost.sort_by(|&a, &b| t2(a).total_cmp(&t2(b)));
        let alone = FisherSnedecor::new(1.0, current.dof as f64).ok();
        let insignificant: Vec<usize> = outermost
            .iter()
            .copied()
            .filter(|&i| {
                alone
                    .as_ref()
                    .is_some_and(|d| d.sf(t2(i)) >= FULL_SIGNIFICANCE)
            })
            .collect();
        let mut tries = vec![outermost.iter().copied().take(1).collect::<Vec<_>>()];
        if insignificant.len() > 1 {
            tries.insert(0, insignificant);
        }
        let step = tries.into_iter().find_map(|out| {
            let without: Vec<usize> = (0..kept.len())
                .filter(|i| !out.contains(i))
                .map(|i| kept[i])
                .collect();
            let smaller = fit(&products_formula(varying, &without)).ok()?;
            let exact = smaller.r2 >= 1.0 - 1e-12;
            (exact || extra_terms_p_value(&smaller, &current) >= FULL_SIGNIFICANCE)
                .then_some((out, without, smaller))
        });
        let Some((out, without, smaller)) = step else {
            return (current, dropped);
        };
        dropped.extend(out.iter().map(|&i| product_of(varying, kept[i])));
        kept = without;
        current = smaller;
    }
}

/// The p-value of the partial F test of the `larger` form's extra terms over the `simpler`
/// form nested in it (the multiplicative in the full, say), on the (weighted) residual sums
/// of squares. NaN when undefined; 0 when the larger form fits exactly and the simpler not.
fn extra_terms_p_value(simpler: &Fit, larger: &Fit) -> f64 {
    let sse = |f: &Fit| f.residual_sd.powi(2) * f.dof as f64;
    let q = simpler.dof.saturating_sub(larger.dof);
    // An exact simpler fit leaves only rounding for the extra terms to explain.
    if q == 0 || larger.dof == 0 || simpler.r2 >= 1.0 - 1e-12 {
        return f64::NAN;
    }
    let f = ((sse(simpler) - sse(larger)) / q as f64) / (sse(larger) / larger.dof as f64);
    match FisherSnedecor::new(q as f64, larger.dof as f64) {
        Ok(dist) if f.is_finite() => dist.sf(f.max(0.0)),
        _ if f == f64::INFINITY => 0.0,
        _ => f64::NAN,
    }
}

/// Relative error where every value is non-zero (timings' noise grows with the value),
/// absolute error otherwise.
pub fn weighting_for(y: &[f64]) -> Weighting {
    if y.iter().all(|v| *v != 0.0) {
        Weighting::Relative
    } else {
        Weighting::Absolute
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Observations of `y(n, p)` on the corners of {1, 10}² and along the edges.
    fn grid(y: impl Fn(f64, f64) -> f64, category: &str) -> Observations {
        let (mut n, mut p, mut v) = (Vec::new(), Vec::new(), Vec::new());
        for &a in &[1.0, 2.0, 4.0, 7.0, 10.0] {
            for &b in &[1.0, 10.0] {
                for (x, z) in [(a, b), (b, a)] {
                    n.push(x);
                    p.push(z);
                    v.push(y(x, z));
                }
            }
        }
        Observations::new(
            "grid",
            vec!["n".into(), "p".into()],
            category,
            vec![n, p],
            v,
        )
        .unwrap()
    }

    fn user(shapes: &[(&str, &str)]) -> Choices {
        Choices {
            shapes: shapes
                .iter()
                .map(|(f, e)| (f.to_string(), e.to_string()))
                .collect(),
            combination: None,
        }
    }

    /// Observations of `y(x, y, z)` on {2, 4, 8, 16, 32}³, three replicates each with
    /// multiplicative noise uniform in ±`noise` (a fixed sequence).
    fn cube(truth: impl Fn(f64, f64, f64) -> f64, noise: f64) -> Observations {
        let (mut columns, mut v) = (vec![Vec::new(), Vec::new(), Vec::new()], Vec::new());
        let mut state = 12345u64;
        let levels = [2.0, 4.0, 8.0, 16.0, 32.0];
        for &x in &levels {
            for &y in &levels {
                for &z in &levels {
                    for _ in 0..3 {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                        for (c, value) in columns.iter_mut().zip([x, y, z]) {
                            c.push(value);
                        }
                        v.push(truth(x, y, z) * (1.0 + noise * (2.0 * u - 1.0)));
                    }
                }
            }
        }
        let factors = vec!["x".into(), "y".into(), "z".into()];
        Observations::new("cube", factors, "t", columns, v).unwrap()
    }

    #[test]
    fn products_the_runs_do_not_need_are_dropped() {
        // Extra-P's `test_modeling_3p_mul_plus` family: one main effect and one product.
        let shapes = user(&[("x", "log2(x)"), ("y", "y"), ("z", "z^(1/3)")]);
        for noise in [0.0, 0.01, 0.05] {
            let obs = cube(
                |x, y, z| 200.0 + 100.0 * x.log2() + 2.0 * y * z.cbrt(),
                noise,
            );
            let m = combine(&obs, &shapes).unwrap();
            assert_eq!(m.combination, Some(Combination::Full), "±{noise}");
            assert_eq!(
                m.fit.model.text(),
                "1 + log2(x) + y + z^(1/3) + y*z^(1/3)",
                "±{noise}: dropped {:?}",
                m.dropped
            );
            let mut dropped = m.dropped.clone();
            dropped.sort();
            assert_eq!(
                dropped,
                ["log2(x)*y", "log2(x)*y*z^(1/3)", "log2(x)*z^(1/3)"],
                "±{noise}"
            );
        }
    }

    #[test]
    fn products_the_runs_need_are_kept() {
        // Every product of the shifted shapes has a coefficient: nothing may go.
        let shapes = user(&[("x", "x"), ("y", "y"), ("z", "z")]);
        let obs = cube(|x, y, z| 10.0 * (x + 3.0) * (y + 5.0) * (z + 7.0), 0.01);
        let m = combine(&obs, &shapes).unwrap();
        assert_eq!(m.combination, Some(Combination::Full));
        assert!(m.dropped.is_empty(), "{:?}", m.dropped);
        assert_eq!(
            m.fit.model.text(),
            "1 + x + y + z + x*y + x*z + y*z + x*y*z"
        );
    }

    #[test]
    fn pure_product_is_multiplicative_although_interaction_is_a_minority() {
        let obs = grid(|n, p| n * p, "y");
        let m = combine(&obs, &user(&[("n", "n"), ("p", "p")])).unwrap();
        let v = m.variation.unwrap();
        assert!((v.interaction - 0.25078).abs() < 1e-4, "{v:?}");
        assert!((v.implied_multiplicative - v.interaction).abs() < 1e-9);
        assert_eq!(m.combination, Some(Combination::Multiplicative));
        assert_eq!(m.chosen_by, Some(ChosenBy::Variation));
        assert_eq!(m.fit.model.text(), "1 + n*p");
    }

    #[test]
    fn shifted_product_takes_the_full_form() {
        // n * (p - 0.5): a product, but of a shifted shape, which `a + d*n*p` cannot hold.
        let obs = grid(|n, p| n * (p - 0.5), "y");
        let m = combine(&obs, &user(&[("n", "n"), ("p", "p")])).unwrap();
        assert_eq!(m.combination, Some(Combination::Full));
        assert_eq!(m.fit.model.text(), "1 + n + p + n*p");
        let v = m.variation.unwrap();
        assert!(v.full_p_value < 1e-6 && v.full_cv < 1e-9, "{v:?}");
        assert!((m.fit.coefficients[1].value + 0.5).abs() < 1e-9);
    }

    #[test]
    fn sum_is_additive() {
        let obs = grid(|n, p| 3.0 + n + 2.0 * p, "y");
        let m = combine(&obs, &user(&[("n", "n"), ("p", "p")])).unwrap();
        assert!(m.variation.unwrap().interaction < 1e-12);
        assert_eq!(m.combination, Some(Combination::Additive));
        assert_eq!(m.fit.model.text(), "1 + n + p");
        assert!((m.fit.coefficients[2].value - 2.0).abs() < 1e-9);
    }

    #[test]
    fn the_user_overrides_the_combination() {
        let obs = grid(|n, p| n * p, "y");
        let mut choices = user(&[("n", "n"), ("p", "p")]);
        choices.combination = Some(Combination::Additive);
        let m = combine(&obs, &choices).unwrap();
        assert_eq!(m.combination, Some(Combination::Additive));
        assert_eq!(m.chosen_by, Some(ChosenBy::User));
    }

    #[test]
    fn default_shapes_are_ranked_on_the_edges() {
        // li against p: p*sqrt(p), p or 1; against n: n*log2(n) only.
        let obs = grid(|n, p| 0.5 + 0.01 * n * n.log2() * p * p.sqrt(), "li");
        let m = combine(&obs, &Choices::default()).unwrap();
        assert_eq!(m.shapes[0].expr, "n*log2(n)");
        assert_eq!(m.shapes[0].source, ShapeSource::Only);
        assert_eq!(m.shapes[1].expr, "p*sqrt(p)");
        assert_eq!(m.shapes[1].source, ShapeSource::Ranked);
        assert_eq!(m.shapes[1].edges, 2);
    }

    #[test]
    fn constant_shapes_leave_one_form() {
        // ip against n has the single default `1`: the forms coincide.
        let obs = grid(|_, p| 0.5 + 0.1 * p, "ip");
        let m = combine(&obs, &Choices::default()).unwrap();
        assert_eq!(m.shapes[0].expr, "1");
        assert_eq!(m.chosen_by, Some(ChosenBy::Equivalent));
        assert_eq!(m.fit.model.text(), "1 + p");
    }

    #[test]
    fn a_missing_corner_is_named_and_leave_one_out_error_chooses() {
        let full = grid(|n, p| n * p, "y");
        let keep: Vec<usize> = (0..full.len())
            .filter(|&r| !(full.columns[0][r] == 10.0 && full.columns[1][r] == 10.0))
            .collect();
        let obs = Observations::new(
            "grid",
            full.factors.clone(),
            "y",
            full.columns
                .iter()
                .map(|c| keep.iter().map(|&r| c[r]).collect())
                .collect(),
            keep.iter().map(|&r| full.y[r]).collect(),
        )
        .unwrap();
        // Leave-one-out error chooses: the product fits exactly, and the full form's extra
        // terms explain nothing more.
        let model = combine(&obs, &user(&[("n", "n"), ("p", "p")])).unwrap();
        assert_eq!(model.combination, Some(Combination::Multiplicative));
        assert_eq!(model.chosen_by, Some(ChosenBy::LeaveOneOut));
        let choice = model.leave_one_out.unwrap();
        assert_eq!(choice.corner, "n=10, p=10");
        assert!(choice.multiplicative_cv < 1e-9, "{choice:?}");
        assert!(choice.additive_cv > 0.1, "{choice:?}");
        // The user's full form fits without the corner too: the product n*p is in it.
        let mut choices = user(&[("n", "n"), ("p", "p")]);
        choices.combination = Some(Combination::Full);
        let model = combine(&obs, &choices).unwrap();
        assert_eq!(model.combination, Some(Combination::Full));
        assert_eq!(model.chosen_by, Some(ChosenBy::User));
        assert!(model.fit.r2 > 1.0 - 1e-9, "{}", model.fit.r2);
    }

    #[test]
    fn a_shape_no_better_than_a_constant_is_kept_and_marked() {
        // li against n has one default, n*log2(n); these data do not grow with n (a zigzag of
        // ±3% about 0.01 over its levels 1, 2, 4, 7, 10), so a constant predicts the edges at
        // least as well.
        let zigzag = |n: f64| match n as u32 {
            1 | 4 | 10 => 1.03,
            _ => 0.97,
        };
        let obs = grid(|n, _| 0.01 * zigzag(n), "li");
        let m = combine(&obs, &Choices::default()).unwrap();
        let n = &m.shapes[0];
        assert_eq!(n.expr, "n*log2(n)");
        assert!(n.no_better_than_constant(), "{n:?}");
        // A shape the data do show is not marked.
        let obs = grid(|n, p| 0.5 + 0.01 * n * n.log2() * p * p.sqrt(), "li");
        let m = combine(&obs, &Choices::default()).unwrap();
        assert!(
            m.shapes.iter().all(|s| !s.no_better_than_constant()),
            "{:?}",
            m.shapes
        );
    }

    #[test]
    fn products_of_sums_are_parenthesised() {
        let f = combined_formula(&["n + n^2", "max(p-$theta,0)"], Combination::Multiplicative);
        assert_eq!(f, "1 + (n + n^2)*max(p-$theta,0)");
    }
}
