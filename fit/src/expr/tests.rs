use super::*;
use proptest::prelude::*;

/// Value of `src` at factor values `vars` and parameter values `params`, checking that
/// `eval_grad` agrees.
fn value(src: &str, vars: &[(&str, f64)], params: &[(&str, f64)]) -> f64 {
    let (vn, vv): (Vec<&str>, Vec<f64>) = vars.iter().copied().unzip();
    let (pn, pv): (Vec<&str>, Vec<f64>) = params.iter().copied().unzip();
    let bound = parse(src).unwrap().bind(&vn, &pn).unwrap();
    let v = bound.eval(&vv, &pv);
    let w = bound.eval_grad(&vv, &pv, &mut vec![0.0; pv.len()]);
    assert!(
        v.to_bits() == w.to_bits() || v.is_nan() && w.is_nan(),
        "{src}"
    );
    v
}

#[test]
fn known_values() {
    let c = |src: &str| {
        let v = parse(src).unwrap().constant_value().unwrap();
        assert!(
            v.to_bits() == value(src, &[], &[]).to_bits() || v.is_nan(),
            "{src}"
        );
        v
    };
    assert_eq!(
        [c("2^3^2"), c("-2^2"), c("2^-1"), c("log2(8)")],
        [512.0, -4.0, 0.5, 3.0]
    );
    assert_eq!(
        [c("1+2*3"), c("(1+2)*3"), c("8/2/2"), c("1 - -1")],
        [7.0, 9.0, 2.0, 2.0]
    );
    assert_eq!(c(" .5 + 1e-3 + 2E+4 + 1.5 "), 20002.001);
    approx::assert_relative_eq!(c("exp(log(3))"), 3.0, max_relative = 1e-15);
    assert!(c("log(-1)").is_nan() && c("1/0") == f64::INFINITY);
    let max = "max(p-$theta,0)";
    assert_eq!(value(max, &[("p", 5.0)], &[("theta", 3.0)]), 2.0);
    assert_eq!(value(max, &[("p", 2.0)], &[("theta", 3.0)]), 0.0);
    assert_eq!(value("p*sqrt(p)", &[("p", 4.0)], &[]), 8.0);
    assert_eq!(value("n^2*log2(n)", &[("p", 1.0), ("n", 4.0)], &[]), 32.0);
    // Rounds of p equal threads on 2 cores: 1, 2, 2, 3 for p = 2..5.
    let rounds: Vec<f64> = (2..=5)
        .map(|p| value("ceil(p/2)", &[("p", p as f64)], &[]))
        .collect();
    assert_eq!(rounds, [1.0, 2.0, 2.0, 3.0]);
    assert_eq!(value("floor(p/2)", &[("p", 5.0)], &[]), 2.0);
    assert_eq!(value("floor(-p/2)", &[("p", 5.0)], &[]), -3.0);
    let (vars, params) = ([("p", 1.0), ("rc.cpu", 5.0)], [("b", 0.0), ("a", 3.0)]);
    assert_eq!(value("rc.cpu - min(p, $a)", &vars, &params), 4.0);
    assert_eq!(parse("p").unwrap().constant_value(), None);
}

#[test]
fn names_and_roles() {
    let e = parse("max(p-$theta,0)*n^$a + exp($b*q)*$c/$theta").unwrap();
    assert_eq!(
        e.variables().into_iter().collect::<Vec<_>>(),
        ["n", "p", "q"]
    );
    assert_eq!(
        e.parameters().into_iter().collect::<Vec<_>>(),
        ["a", "b", "c", "theta"]
    );
    let roles = ["theta", "a", "b", "c", "d"].map(|name| e.parameter_role(name));
    use ParamRole::*;
    assert_eq!(
        roles,
        [
            Some(Threshold),
            Some(Exponent),
            Some(Exponent),
            Some(Other),
            None
        ]
    );
    let unknown = e.bind(&["p", "n", "q"], &["a", "b", "c"]).unwrap_err();
    assert_eq!(unknown.to_string(), "unknown parameter '$theta'");
    let unknown = parse("x").unwrap().bind(&[], &[]).unwrap_err();
    assert_eq!(unknown.to_string(), "unknown factor 'x'");
}

#[test]
fn display_is_canonical() {
    for (src, text) in [
        ("2^3^2", "2^3^2"),
        ("(2^3)^2", "(2^3)^2"),
        ("-2^2", "-2^2"),
        ("(-2)^2", "(-2)^2"),
        ("2^-1", "2^-1"),
        ("max(p-$theta,0)", "max(p - $theta, 0)"),
        ("a-(b-c)", "a - (b - c)"),
        ("-(a*b)*c", "-(a*b)*c"),
        ("n^2*log2(n)/(p*1e-7)", "n^2*log2(n)/(p*1e-7)"),
    ] {
        assert_eq!(parse(src).unwrap().to_string(), text);
    }
}

#[test]
fn terms() {
    let texts = |src| parse_terms(src).unwrap().into_iter().map(|t| t.0);
    assert!(texts(" 1 + p ").eq(["1", "p"]));
    assert!(texts("max(p-$theta,0) + 1").eq(["max(p-$theta,0)", "1"]));
    assert!(texts("p - 1").eq(["p - 1"]));
    let nested = texts("max(p, (1 + p)) + n^2*log2(n)+1e+3");
    assert!(nested.eq(["max(p, (1 + p))", "n^2*log2(n)", "1e+3"]));
    assert_eq!(parse_terms("1 + p").unwrap()[1].1, Expr::Var("p".into()));
}

const EXPECTED: &str = "where a number, name or '(' was expected";
const KNOWN: &str = "(known: sqrt, log, log2, exp, ceil, floor, min, max)";

#[test]
fn error_messages() {
    let term_errors = [
        (
            "p + max(p",
            "column 10: expected ')' to close '(' at column 8".to_string(),
        ),
        ("p + 2*#", "column 7: unexpected character '#'".into()),
        ("p + 2*", format!("column 7: expression ends {EXPECTED}")),
        (
            "1 + (2 *) + p",
            format!("column 9: unexpected ')' {EXPECTED}"),
        ),
        ("1 + + p", "column 5: empty term".into()),
        ("1 + p +", "column 8: empty term".into()),
        ("", "column 1: empty term".into()),
    ];
    for (src, message) in term_errors {
        assert_eq!(parse_terms(src).unwrap_err().to_string(), message, "{src}");
    }
    let errors = [
        ("1 #", "column 3: unexpected character '#'".to_string()),
        (
            " (1+2 ",
            "column 7: expected ')' to close '(' at column 2".into(),
        ),
        (
            "max(1 2)",
            "column 7: expected ')' to close '(' at column 4".into(),
        ),
        ("1 + ", format!("column 5: expression ends {EXPECTED}")),
        (
            "sin(p)",
            format!("column 1: unknown function 'sin' {KNOWN}"),
        ),
        (
            "2*foo (p)",
            format!("column 3: unknown function 'foo' {KNOWN}"),
        ),
        ("max(p)", "column 1: max takes 2 arguments, got 1".into()),
        (
            "1+sqrt(p, 2)",
            "column 3: sqrt takes 1 argument, got 2".into(),
        ),
        ("min()", "column 1: min takes 2 arguments, got 0".into()),
        (
            "1 + sqrt",
            "column 5: function 'sqrt' needs '(' after it".into(),
        ),
        ("1 + 2)", "column 6: unmatched ')'".into()),
        ("2 p", "column 3: expected an operator before 'p'".into()),
        ("é + $", "column 1: unexpected character 'é'".into()),
        (
            "p + $",
            "column 6: expected a parameter name after '$'".into(),
        ),
        ("1 + 1e999", "column 5: number 1e999 is out of range".into()),
    ];
    for (src, message) in errors {
        assert_eq!(parse(src).unwrap_err().to_string(), message, "{src}");
    }
    assert_eq!(
        parse("1 #").unwrap_err(),
        ParseError::new(3, "unexpected character '#'")
    );
    for deep in ["(".repeat(5000), "-".repeat(5000), "2^".repeat(5000)] {
        let error = parse(&format!("{deep}1")).unwrap_err();
        assert!(error.message.contains("nested"));
    }
}

#[test]
fn gradient_edge_cases() {
    let grad = |src: &str, p: f64, theta: &[f64]| {
        let bound = parse(src).unwrap().bind(&["p"], &["a", "b"]).unwrap();
        let mut g = vec![0.0; 2];
        bound.eval_grad(&[p], theta, &mut g);
        g
    };
    assert_eq!(grad("$a*p^2", -1.0, &[3.0, 0.0]), [1.0, 0.0]);
    assert_eq!(grad("max(p-$a,0) + $b", 2.0, &[3.0, 1.0]), [0.0, 1.0]);
    assert_eq!(grad("min(p-$a,0)", 5.0, &[3.0, 1.0]), [0.0, 0.0]);
    assert_eq!(grad("sqrt(max(p-$a,0))", 2.0, &[3.0, 1.0]), [0.0, 0.0]);
    // Deep expressions fall back to heap stacks and still agree.
    let deep = format!("{}$a{}", "p*(".repeat(40), ")".repeat(40));
    assert_eq!(grad(&deep, 1.0, &[2.0, 0.0]), [1.0, 0.0]);
}

/// Checks `eval_grad` against central differences at `p` and parameter values `params`.
fn check_gradient(src: &str, p: f64, params: &[(&str, f64)]) {
    let (names, mut theta): (Vec<&str>, Vec<f64>) = params.iter().copied().unzip();
    let bound = parse(src).unwrap().bind(&["p"], &names).unwrap();
    let mut g = vec![0.0; theta.len()];
    let v = bound.eval_grad(&[p], &theta, &mut g);
    assert_eq!(v, bound.eval(&[p], &theta));
    for k in 0..theta.len() {
        let (x, h) = (theta[k], 1e-6 * theta[k].abs().max(1.0));
        theta[k] = x + h;
        let up = bound.eval(&[p], &theta);
        theta[k] = x - h;
        let down = bound.eval(&[p], &theta);
        theta[k] = x;
        let fd = (up - down) / (2.0 * h);
        let (name, g) = (names[k], g[k]);
        assert!(
            (g - fd).abs() <= 1e-5 * g.abs().max(1.0),
            "{src} d/d{name}: {g} vs {fd}"
        );
    }
}

fn arb_expr() -> impl Strategy<Value = Expr> {
    use {BinOp::*, UnOp::*};
    let reserved = ["sqrt", "log", "log2", "exp", "ceil", "floor", "min", "max"];
    let var = "[a-z_][a-z0-9_.]{0,3}".prop_filter("reserved", move |n| !reserved.contains(&&**n));
    let leaf = prop_oneof![
        prop_oneof![0.0..1e3f64, Just(1e-7), Just(2.5e20)].prop_map(Expr::Num),
        var.prop_map(Expr::Var),
        "[a-z_][a-z0-9_]{0,3}".prop_map(Expr::Param),
    ];
    let un = prop::sample::select(&[Neg, Sqrt, Log, Log2, Exp, Ceil, Floor][..]);
    let bin = prop::sample::select(&[Add, Sub, Mul, Div, Pow, Min, Max][..]);
    leaf.prop_recursive(6, 48, 2, move |inner| {
        let unary = (un.clone(), inner.clone()).prop_map(|(op, x)| Expr::Unary(op, x.into()));
        let binary = (bin.clone(), inner.clone(), inner);
        prop_oneof![
            unary,
            binary.prop_map(|(op, l, r)| Expr::Binary(op, l.into(), r.into()))
        ]
    })
}

proptest! {
    #[test]
    fn gradient_matches_central_differences(
        p in 1.5f64..20.0, a in -2.0f64..3.0, b in -0.5f64..0.5, theta in 1.0f64..20.0,
    ) {
        prop_assume!((p - theta).abs() > 1e-3);
        let params = [("a", a), ("b", b), ("c", 1.7), ("theta", theta)];
        for src in ["p^$a", "$c*p^$a", "max(p-$theta,0)", "min($theta,p)*p", "exp($b*p)",
                    "log2(p)*p^$a", "$a*$a*p", "sqrt($theta)*log(p)/$c - $a^2"] {
            check_gradient(src, p, &params);
        }
    }

    #[test]
    fn display_round_trips(e in arb_expr()) {
        prop_assert_eq!(parse(&e.to_string()), Ok(e));
    }

    #[test]
    fn arbitrary_text_never_panics(any in any::<String>(), near in "[ 0-9a-z$+*/^().,eE_-]{0,24}") {
        for src in [any, near] {
            let _ = parse_terms(&src);
            if let Ok(e) = parse(&src) {
                prop_assert_eq!(parse(&e.to_string()), Ok(e.clone()));
                let (vars, params) = (e.variables(), e.parameters());
                let vars: Vec<&str> = vars.iter().map(String::as_str).collect();
                let params: Vec<&str> = params.iter().map(String::as_str).collect();
                let bound = e.bind(&vars, &params).unwrap();
                let (x, theta) = (vec![2.0; vars.len()], vec![0.5; params.len()]);
                let v = bound.eval(&x, &theta);
                let w = bound.eval_grad(&x, &theta, &mut vec![0.0; params.len()]);
                prop_assert!(v.to_bits() == w.to_bits() || (v.is_nan() && w.is_nan()));
            }
        }
    }
}

#[test]
fn trees_deeper_than_the_limit_are_refused_in_one_line() {
    use super::parse::MAX_TREE_DEPTH;
    // At the limit: parsed, printed, re-parsed, bound and evaluated (each walks the tree).
    let deepest = vec!["p"; MAX_TREE_DEPTH].join("*");
    let e = parse(&deepest).unwrap();
    assert_eq!(parse(&e.to_string()), Ok(e.clone()));
    assert_eq!(e.bind(&["p"], &[]).unwrap().eval(&[1.0], &[]), 1.0);
    for src in [
        format!("{deepest}*p"),
        format!("{deepest}+p"),
        "-".repeat(50) + &"p^".repeat(500) + "p",
    ] {
        let err = parse(&src).unwrap_err();
        assert!(err.message.contains("deep"), "{err}");
    }
    // A long model is many shallow terms, not one deep tree.
    let long = vec!["p"; 5000].join(" + ");
    assert_eq!(crate::Model::parse(&long).unwrap().terms().len(), 5000);
}

#[test]
fn errors_quote_at_most_an_excerpt_on_one_line() {
    let long_name = "x".repeat(10_000);
    let long_number = "9".repeat(400);
    for src in [
        format!("p {long_name}"),
        format!("{long_name}(p)"),
        format!("p*{long_number}"),
        format!("2*foo (p\n{long_name})"),
        format!("p {}", "\u{fffd}\u{1}".repeat(300)),
    ] {
        let err = crate::Model::parse(&src).unwrap_err().to_string();
        assert!(
            err.len() < 200 && !err.contains('\n'),
            "{} bytes: {err}",
            err.len()
        );
    }
    let unknown = parse(&long_name)
        .unwrap()
        .bind(&[], &[])
        .unwrap_err()
        .to_string();
    assert!(unknown.len() < 100, "{unknown}");
}

#[test]
fn an_expression_steps_where_it_takes_floor_or_ceil() {
    let steps = |text: &str| parse(text).unwrap().steps();
    assert!(steps("floor(n/2)"));
    assert!(steps("p * (1 + ceil(p/4))^2"));
    assert!(steps("max(n - 2*floor(n/2) - 1, 0)"));
    assert!(!steps("n*p + p/(n - 5.3)"));
    assert!(!steps("max(p - $theta, 0) + log2(p)"));
}
