//! NIST StRD linear least squares reference datasets: fitted coefficients, their standard
//! errors, the residual standard deviation and R² must match the certified values.

use fit::{Datafile, Model, fit_model};

fn fit_csv(name: &str, text: &str, factors: &[&str], model: &str) -> fit::Fit {
    let data = Datafile::parse(name, text).unwrap();
    let obs = data.observations(factors, "y", &[]).unwrap();
    fit_model(&Model::parse(model).unwrap(), &obs).unwrap()
}

fn assert_rel(name: &str, got: f64, want: f64, tol: f64) {
    let rel = ((got - want) / want).abs();
    assert!(
        rel <= tol,
        "{name}: got {got:.15e}, certified {want:.15e}, relative error {rel:.2e}"
    );
}

#[test]
fn norris_matches_certified_values() {
    let fit = fit_csv("norris.csv", datasets::NORRIS, &["x"], "1 + x");
    let certified = [
        (-0.262323073774029, 0.232818234301152),
        (1.00211681802045, 0.429796848199937e-03),
    ];
    for (c, (value, sd)) in fit.coefficients.iter().zip(certified) {
        assert_rel(&c.name, c.value, value, 1e-8);
        assert_rel(&c.name, c.std_error, sd, 1e-8);
    }
    assert_rel("residual sd", fit.residual_sd, 0.884796396144373, 1e-8);
    assert_rel("R2", fit.r2, 0.999993745883712, 1e-8);
    assert_rel("SSE", fit.sse, 26.6173985294224, 1e-8);
}

#[test]
fn longley_matches_certified_values() {
    let fit = fit_csv(
        "longley.csv",
        datasets::LONGLEY,
        &["x1", "x2", "x3", "x4", "x5", "x6"],
        "1 + x1 + x2 + x3 + x4 + x5 + x6",
    );
    let certified = [
        (-3482258.63459582, 890420.383607373),
        (15.0618722713733, 84.9149257747669),
        (-0.358191792925910e-01, 0.334910077722432e-01),
        (-2.02022980381683, 0.488399681651699),
        (-1.03322686717359, 0.214274163161675),
        (-0.511041056535807e-01, 0.226073200069370),
        (1829.15146461355, 455.478499142212),
    ];
    for (c, (value, sd)) in fit.coefficients.iter().zip(certified) {
        assert_rel(&c.name, c.value, value, 1e-8);
        assert_rel(&c.name, c.std_error, sd, 1e-8);
    }
    assert_rel("residual sd", fit.residual_sd, 304.854073561965, 1e-8);
    assert_rel("R2", fit.r2, 0.995479004577296, 1e-8);
}

#[test]
fn norris_interval_by_hand() {
    // 90% interval of the slope: b ± t(0.95, 34) * sd, with t(0.95, 34) = 1.690924255
    // (any Student-t table).
    let fit = fit_csv("norris.csv", datasets::NORRIS, &["x"], "1 + x");
    let slope = &fit.coefficients[1];
    assert_eq!(fit.dof, 34);
    assert_rel(
        "half width",
        slope.half_width,
        1.690_924_255 * 0.429796848199937e-03,
        1e-8,
    );
    let (lo, hi) = slope.interval();
    assert!(lo < 1.00211681802045 && 1.00211681802045 < hi);
    assert!(!slope.indistinguishable_from_zero());
}
