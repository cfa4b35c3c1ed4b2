//! The combination of a design without every corner (docs/modelling.md#without-every-corner):
//! allocation of variation needs the 2^k corners, so the forms the runs can estimate are
//! compared on the runs instead.
//!
//! Where the runs lie on lines through one point (a cross design: each factor varied alone
//! from a base point, as Extra-P's sparse measurements are), every multiplicative fit is also
//! an additive one there: along each line both are straight in that factor's shape, and the
//! multiplicative form only ties the lines' slopes to each other. The additive form then fits
//! at least as well whatever the truth, so the multiplicative form is kept unless the
//! additive's extra terms are significant (F test); leave-one-out error alone chose the
//! additive form for a multiplicative truth in 25 of 100 seeds (1% noise,
//! `fit/tests/cross_design.rs`). Elsewhere the lower leave-one-out error chooses.

use super::{
    Combination, CombineError, FULL_SIGNIFICANCE, extra_terms_p_value, full_if_significant,
};
use crate::fit::Fit;
use crate::observations::Observations;

/// Why a form was chosen without every corner: the first corner not measured, each form's
/// leave-one-out error (NaN: these runs cannot estimate the form), whether the additive form
/// holds the multiplicative one on these runs and then the F test of its extra terms, and the
/// F test of the full form's extra terms over the chosen simpler one.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaveOneOutChoice {
    /// The first corner without a run, `p=512, n=9000`.
    pub corner: String,
    /// On these runs every multiplicative fit is also an additive one.
    pub nested: bool,
    /// p-value of the partial F test of the additive form's extra terms over the
    /// multiplicative one, when `nested` (else NaN).
    pub additive_p_value: f64,
    /// Leave-one-out error of the additive form.
    pub additive_cv: f64,
    /// Leave-one-out error of the multiplicative form.
    pub multiplicative_cv: f64,
    /// Leave-one-out error of the full form.
    pub full_cv: f64,
    /// p-value of the partial F test of the full form's extra terms (NaN: not tested).
    pub full_p_value: f64,
}

/// Chooses the combination of `obs` without every corner: where the additive form holds the
/// multiplicative one on these runs, the multiplicative unless the additive's extra terms are
/// significant (F test, 1%); elsewhere the lower leave-one-out error (the additive on a tie; a
/// form these runs cannot estimate loses). Then the full form only when its extra terms are
/// significant over that one (F test, as with every corner). `fit` fits a form to
/// observations; an error from both simpler forms is the additive form's.
pub(super) fn choose(
    obs: &Observations,
    corner: String,
    fit: impl Fn(Combination, &Observations) -> Result<Fit, CombineError>,
) -> Result<(Combination, LeaveOneOutChoice, Fit), CombineError> {
    let additive = fit(Combination::Additive, obs);
    let multiplicative = fit(Combination::Multiplicative, obs);
    let cv = |f: &Result<Fit, CombineError>| f.as_ref().map_or(f64::NAN, |f| f.cv);
    let mut choice = LeaveOneOutChoice {
        corner,
        nested: false,
        additive_p_value: f64::NAN,
        additive_cv: cv(&additive),
        multiplicative_cv: cv(&multiplicative),
        full_cv: f64::NAN,
        full_p_value: f64::NAN,
    };
    let (combination, simpler) = match (additive, multiplicative) {
        (Ok(a), Ok(m)) if holds(obs, &m, &fit) => {
            choice.nested = true;
            choice.additive_p_value = extra_terms_p_value(&m, &a);
            if choice.additive_p_value < FULL_SIGNIFICANCE {
                (Combination::Additive, a)
            } else {
                (Combination::Multiplicative, m)
            }
        }
        (Ok(a), Ok(m)) if lower(m.cv, a.cv) => (Combination::Multiplicative, m),
        (Ok(a), _) => (Combination::Additive, a),
        (Err(_), Ok(m)) => (Combination::Multiplicative, m),
        (Err(e), Err(_)) => return Err(e),
    };
    let full = full_if_significant((combination, simpler), fit(Combination::Full, obs));
    (choice.full_cv, choice.full_p_value) = (full.cv, full.p_value);
    Ok((full.combination, choice, full.fit))
}

/// Whether the additive form holds the multiplicative fit `m` on the runs of `obs`: fitted
/// to `m`'s own values there, it leaves no residual beyond rounding.
fn holds(
    obs: &Observations,
    m: &Fit,
    fit: impl Fn(Combination, &Observations) -> Result<Fit, CombineError>,
) -> bool {
    let mut point = vec![0.0; obs.factors.len()];
    let values: Vec<f64> = (0..obs.len())
        .map(|row| {
            obs.point(row, &mut point);
            m.evaluate(&point)
        })
        .collect();
    let scale = values.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let on_values = Observations {
        y: values.clone(),
        ..obs.clone()
    };
    let Ok(a) = fit(Combination::Additive, &on_values) else {
        return false;
    };
    scale > 0.0
        && values.iter().enumerate().all(|(row, v)| {
            obs.point(row, &mut point);
            (a.evaluate(&point) - v).abs() <= 1e-7 * scale
        })
}

/// Whether leave-one-out error `a` is strictly lower than `b` (a non-finite error is never
/// lower, and any finite one is lower than a non-finite one).
fn lower(a: f64, b: f64) -> bool {
    a.is_finite() && (!b.is_finite() || a < b)
}

#[cfg(test)]
mod tests {
    use super::super::{Choices, ChosenBy, combine};
    use super::*;
    use crate::observations::Observations;

    /// A cross design: `p` from 2 to 64 at n = 10 and `n` from 10 to 160 at p = 2, two
    /// repetitions 1% apart; no corner beyond the base point.
    fn cross(y: impl Fn(f64, f64) -> f64) -> Observations {
        let mut points = Vec::new();
        for p in [2.0, 4.0, 8.0, 16.0, 32.0, 64.0] {
            points.push((p, 10.0));
        }
        for n in [20.0, 40.0, 80.0, 160.0] {
            points.push((2.0, n));
        }
        let (mut ps, mut ns, mut v) = (Vec::new(), Vec::new(), Vec::new());
        for (p, n) in points {
            for k in [1.0, 1.01] {
                ps.push(p);
                ns.push(n);
                v.push(k * y(p, n));
            }
        }
        Observations::new("cross", vec!["p".into(), "n".into()], "t", vec![ps, ns], v).unwrap()
    }

    fn shapes(p: &str, n: &str) -> Choices {
        Choices {
            shapes: [("p".to_string(), p.to_string()), ("n".into(), n.into())].into(),
            combination: None,
        }
    }

    #[test]
    fn a_sum_on_a_cross_design_is_additive() {
        let obs = cross(|p, n| 5.0 + 3.0 * p.log2() + 0.2 * n);
        let m = combine(&obs, &shapes("log2(p)", "n")).unwrap();
        assert_eq!(m.combination, Some(Combination::Additive));
        assert_eq!(m.chosen_by, Some(ChosenBy::LeaveOneOut));
        let c = m.leave_one_out.unwrap();
        assert_eq!(c.corner, "p=64, n=160");
        // On the cross the additive form holds every multiplicative fit, and beats it.
        assert!(c.nested && c.additive_p_value < 1e-6, "{c:?}");
        assert!(c.additive_cv < c.multiplicative_cv, "{c:?}");
        // The product's term is the product of the two lines' terms: collinear with them.
        assert!(c.full_cv.is_nan() && c.full_p_value.is_nan(), "{c:?}");
        assert!(m.variation.is_none());
    }

    #[test]
    fn a_product_on_a_cross_design_is_multiplicative() {
        let obs = cross(|p, n| 5.0 + 0.5 * p * n);
        let m = combine(&obs, &shapes("p", "n")).unwrap();
        assert_eq!(m.combination, Some(Combination::Multiplicative));
        assert_eq!(m.chosen_by, Some(ChosenBy::LeaveOneOut));
        let c = m.leave_one_out.unwrap();
        // Both fit; the additive's extra term explains nothing more.
        assert!(c.nested && c.additive_p_value > 0.01, "{c:?}");
        assert!(
            (m.fit.coefficients[1].value - 0.5).abs() < 0.01,
            "{:?}",
            m.fit
        );
    }

    #[test]
    fn off_the_lines_leave_one_out_error_chooses() {
        // The cross and one run off its lines, at (8, 40): the forms no longer nest.
        let mut obs = cross(|p, n| 5.0 + 0.5 * p * n);
        obs.columns[0].push(8.0);
        obs.columns[1].push(40.0);
        obs.y.push(5.0 + 0.5 * 8.0 * 40.0);
        obs.lines.push(obs.lines.len() + 1);
        let m = combine(&obs, &shapes("p", "n")).unwrap();
        assert_eq!(m.combination, Some(Combination::Multiplicative));
        let c = m.leave_one_out.unwrap();
        assert!(!c.nested && c.additive_p_value.is_nan(), "{c:?}");
        assert!(c.multiplicative_cv < c.additive_cv, "{c:?}");
    }

    #[test]
    fn the_users_combination_still_wins() {
        let obs = cross(|p, n| 5.0 + 0.5 * p * n);
        let mut choices = shapes("p", "n");
        choices.combination = Some(Combination::Additive);
        let m = combine(&obs, &choices).unwrap();
        assert_eq!(m.combination, Some(Combination::Additive));
        assert_eq!(m.chosen_by, Some(ChosenBy::User));
        assert!(m.leave_one_out.is_none());
    }

    #[test]
    fn lower_puts_errors_that_are_not_finite_last() {
        assert!(lower(1.0, 2.0) && !lower(2.0, 1.0) && !lower(1.0, 1.0));
        assert!(lower(1.0, f64::NAN) && lower(1.0, f64::INFINITY));
        assert!(!lower(f64::NAN, 1.0) && !lower(f64::NAN, f64::NAN));
    }
}
