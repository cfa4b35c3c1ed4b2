//! The domain of a performance model: a prediction, a crossover or a validation at a point
//! where a model cannot predict (a log of 0, a square root of a negative value, a division by
//! zero, p <= 0) is a one-line error naming the factor values, never NaN or infinity.

mod bundled;

use bundled::fft2d;
use fit::Datafile;
use fit::crossover::{Axis, Pair};
use fit::model_file::parse;
use fit::performance::PerformanceModel;

/// A hand-written model of `n` and `p` with one category.
fn hand(formula: &str) -> PerformanceModel {
    let text = format!(
        "format = 1\nname = \"h\"\nfactors = [\"n\", \"p\"]\n\n\
         [[category]]\nname = \"pc\"\nformula = \"{formula}\"\n"
    );
    parse("h.toml", &text).unwrap()
}

fn error(m: &PerformanceModel, point: [f64; 2]) -> String {
    m.try_predict(&point).unwrap_err().to_string()
}

#[test]
fn predictions_outside_the_domain_name_the_point_and_what_fails() {
    let dp = fft2d("dp");
    assert_eq!(dp.factors, ["n", "p"]);
    // Inside: the same prediction as `predict`.
    let inside = dp.try_predict(&[256.0, 4.0]).unwrap();
    assert_eq!(inside, dp.predict(&[256.0, 4.0]));
    assert!(inside.time.value.is_finite() && inside.time.half_width.is_finite());
    // `predict` alone has no honest value here (NaN or -inf, or 0 once cut at zero):
    // `try_predict` checks each term before any cut.
    assert_eq!(
        error(&dp, [0.0, 4.0]),
        "dp: cannot predict at n=0, p=4: category pc: log2(n) is -inf (a logarithm of a value \
         <= 0) at n=0 (term `n^2*log2(n)`)"
    );
    assert_eq!(
        error(&dp, [-2.0, 4.0]),
        "dp: cannot predict at n=-2, p=4: category pc: log2(n) is NaN (a logarithm of a value \
         <= 0) at n=-2 (term `n^2*log2(n)`)"
    );
    for p in [0.0, -1.0] {
        assert_eq!(
            error(&dp, [256.0, p]),
            format!(
                "dp: cannot predict at n=256, p={p}: T_p = (sum of the categories) / p needs \
                 p > 0, and p={p}"
            )
        );
    }
    assert_eq!(
        error(&dp, [f64::NAN, 4.0]),
        "dp: cannot predict at n=NaN, p=4: n=NaN is not a number"
    );
}

#[test]
fn hand_written_formulas_fail_where_their_functions_do() {
    assert_eq!(
        error(&hand("sqrt(n - 10)"), [4.0, 2.0]),
        "h: cannot predict at n=4, p=2: category pc: sqrt(n - 10) is NaN (a square root of a \
         negative value) at n=4 (term `sqrt(n - 10)`)"
    );
    assert_eq!(
        error(&hand("1 + 5/(n - p)"), [3.0, 3.0]),
        "h: cannot predict at n=3, p=3: category pc: 5/(n - p) is inf (a division by zero) at \
         n=3, p=3 (term `5/(n - p)`)"
    );
    assert_eq!(
        error(&hand("n^(-1)"), [0.0, 2.0]),
        "h: cannot predict at n=0, p=2: category pc: n^-1 is inf (a power outside its domain) \
         at n=0 (term `n^(-1)`)"
    );
    assert_eq!(
        error(&hand("exp(n)"), [1000.0, 2.0]),
        "h: cannot predict at n=1000, p=2: category pc: exp(n) is inf (an overflow) at n=1000 \
         (term `exp(n)`)"
    );
    // A failure that does not reach the term's value is none: max(-inf, 0) = 0.
    let t = hand("1 + max(log2(n), 0)")
        .try_predict(&[0.0, 2.0])
        .unwrap();
    assert_eq!(t.time.value, 0.5);
    // A held p must be positive (refused when the file is read).
    let text = "format = 1\nfactors = [\"n\"]\nheld = { p = -2.0 }\n\n\
                [[category]]\nname = \"pc\"\nformula = \"n\"\n";
    assert_eq!(
        parse("h.toml", text).unwrap_err().to_string(),
        "h.toml: held: p = -2: T_p = (sum of the categories) / p needs p > 0"
    );
}

#[test]
fn crossovers_that_touch_a_bad_point_are_errors() {
    let (dp, tp) = (fft2d("dp"), fft2d("tp"));
    let pair = Pair::new(&dp, &tp).unwrap();
    let along_p = pair.default_axis("p").unwrap();
    // `--at n=0`: every point of the line is outside; the first sample is named.
    let e = pair
        .crossover(&along_p, &[("n".into(), 0.0)], 512)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "dp: cannot predict at n=0, p=2: category pc: log2(n) is -inf (a logarithm of a value \
         <= 0) at n=0 (term `n^2*log2(n)`)"
    );
    // A range that reaches p = 0.
    let e = pair
        .crossover(
            &Axis::new("p", 0.0, 8.0).unwrap(),
            &[("n".into(), 256.0)],
            512,
        )
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("dp: cannot predict at n=256, p=0: T_p = (sum of the categories) / p"),
        "{e}"
    );
    // A winner map whose range of n reaches 0.
    let e = pair
        .winner_map(&Axis::new("n", 0.0, 512.0).unwrap(), &along_p, &[], 5)
        .unwrap_err();
    assert!(e.to_string().contains("at n=0, p=2"), "{e}");
    // A point, by name.
    let e = pair
        .compare_at(&[("n".into(), 0.0), ("p".into(), 4.0)])
        .unwrap_err();
    assert!(
        e.to_string().starts_with("dp: cannot predict at n=0, p=4"),
        "{e}"
    );
    // A hole strictly between two samples (at n = 100) is found while refining.
    let a = hand("n");
    let b = hand("1/(n - 100) + n");
    let e = Pair::new(&a, &b)
        .unwrap()
        .crossover(
            &Axis::new("n", 1.0, 201.0).unwrap(),
            &[("p".into(), 1.0)],
            512,
        )
        .map(|c| format!("{:?}", c.meetings))
        .unwrap_err();
    assert!(e.to_string().contains("a division by zero"), "{e}");
}

#[test]
fn validation_runs_outside_the_domain_name_their_line() {
    let dp = fft2d("dp");
    let data = Datafile::parse(
        "runs.dat",
        "n=256 p=4 iters=100 wall=0.05\nn=0 p=4 iters=100 wall=0.01\n",
    )
    .unwrap();
    let e = fit::validation::validate(&dp, &data).unwrap_err();
    assert_eq!(
        e.to_string(),
        "runs.dat:2: dp: cannot predict at n=0, p=4: category pc: log2(n) is -inf (a logarithm \
         of a value <= 0) at n=0 (term `n^2*log2(n)`)"
    );
}
