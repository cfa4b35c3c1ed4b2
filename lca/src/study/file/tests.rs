//! The study file parser's tests.

use std::collections::BTreeMap;

use super::*;

const GOOD: &str = r#"name = "t"
[factors]
n = "32..512:log2"
p = "2..8:lin:7"
[validate]
grid = { p = "3,5", n = "64" }
points = [{ n = 96, p = 6 }, { n = 64, p = 3 }]
[[implementation]]
name = "a"
command = ["prog", "-n{n}", "{p}", "{{x}}", "{ a; }{x", "}{ p}"]
"#;

#[test]
fn a_good_file() {
    let s = parse("s.toml", GOOD).unwrap();
    assert_eq!(s.factors[0].name, "n");
    assert_eq!(s.design, Design::Edges(3));
    assert_eq!(s.max_failures, 3, "the default retry budget");
    assert_eq!(s.validate, [[64.0, 3.0], [64.0, 5.0], [96.0, 6.0]]);
    assert_eq!(s.datafile, PathBuf::from("study-t/t.dat"));
    let values = BTreeMap::from([("n", "64".to_string()), ("p", "3".to_string())]);
    let argv: Vec<String> = s.implementations[0]
        .command
        .iter()
        .map(|t| t.expand(&values))
        .collect();
    assert_eq!(argv, ["prog", "-n64", "3", "{x}", "{ a; }{x", "}{ p}"]);
}

#[test]
fn slurm_fields() {
    let text = GOOD.replace(
        "name = \"t\"",
        "name = \"t\"\ndispatch = \"slurm\"\n[slurm]\npartition = \"debug\"\naccount = \"x\"\n\
         time = \"5\"\nmax_running = 3\noptions = [\"--exclusive\"]",
    ) + "ntasks = \"{p}\"\nmem = \"4G\"\n";
    let s = parse("s.toml", &text).unwrap();
    assert_eq!(s.dispatch, Dispatch::Slurm);
    assert_eq!(
        s.slurm,
        SlurmOptions {
            partition: Some("debug".into()),
            account: Some("x".into()),
            time: Some("5".into()),
            max_running: Some(3),
            options: vec!["--exclusive".into()],
        }
    );
    let values = BTreeMap::from([("p", "3".to_string())]);
    let resources: Vec<(&str, String)> = s.implementations[0]
        .resources
        .iter()
        .map(|(option, t)| (*option, t.expand(&values)))
        .collect();
    assert_eq!(
        resources,
        [("--ntasks", "3".into()), ("--mem", "4G".into())]
    );
    assert_eq!(parse("s.toml", GOOD).unwrap().dispatch, Dispatch::Local);
}

fn err(text: &str) -> String {
    parse("s.toml", text).unwrap_err().to_string()
}

#[test]
fn errors_name_the_line() {
    let e = err(&GOOD.replace("\"{p}\"", "\"{q}\""));
    assert!(e.starts_with("s.toml:10: unknown placeholder {q}"), "{e}");
    let e = err(&GOOD.replace("[factors]", "colour = 3\n[factors]"));
    assert!(e.starts_with("s.toml:2: unknown field `colour`"), "{e}");
    let e = err(&GOOD.replace("2..8:lin:7", "2..x"));
    assert!(e.starts_with("s.toml:4: factor p = \"2..x\""), "{e}");
    let e = err(&GOOD.replace("\"-n{n}\", ", ""));
    assert!(
        e.starts_with("s.toml:10: the command of 'a' does not use {n}"),
        "{e}"
    );
    let e = err(&GOOD.replace("name = \"t\"", "name = \"t\"\ndesign = \"edges:0\""));
    assert!(e.starts_with("s.toml:2: design"), "{e}");
    let e = err(&GOOD.replace("n = 96, ", ""));
    assert!(e.contains("no value for factor 'n'"), "{e}");
    let e = err("name = \n");
    assert!(e.starts_with("s.toml:1: ") && !e.contains('\n'), "{e}");
    let e = err(&GOOD.replace(
        "grid = { p = \"3,5\", n = \"64\" }",
        "grid = { p = \"1..1000:lin:1000\", n = \"1..1000:lin:1000\" }",
    ));
    assert!(
        e.starts_with("s.toml:6: validate.grid has 1000000 points; the limit is 100000"),
        "{e}"
    );
    // A value with a newline (a literal string of ''') or of any length: one short line.
    let e = err(&GOOD.replace("\"2..8:lin:7\"", "'''2..8:l\n:7'''"));
    assert!(e.starts_with("s.toml:4: factor p = \"2..8:l\\n:7\""), "{e}");
    let long = format!("name = \"{}\"", "é/".repeat(50_000));
    let e = err(&GOOD.replace("name = \"t\"", &long));
    assert!(e.starts_with("s.toml:1: name 'é/é/"), "{e}");
    assert!(e.chars().count() < 400 && e.contains('…'), "{e}");
    let e = err(&GOOD.replace("n = 96,", "n = nan,"));
    assert!(
        e.starts_with("s.toml:7: validate.points: n = NaN: expected a finite number"),
        "{e}"
    );
    let e = err(&GOOD.replace(
        "name = \"t\"",
        "name = \"t\"\ndesign = \"edges:1000000000000\"",
    ));
    assert!(
        e.starts_with("s.toml:2: design = \"edges:1000000000000\""),
        "{e}"
    );
    assert!(e.contains("1 <= K <= 1000"), "{e}");
    let e = err(&GOOD.replace("name = \"t\"", "name = \"t\"\nreplicates = 1001"));
    assert!(
        e.starts_with("s.toml:2: replicates = 1001: expected 1 to 1000"),
        "{e}"
    );
    for bad in ["0", "10001", "-1"] {
        let e = err(&GOOD.replace(
            "name = \"t\"",
            &format!("name = \"t\"\nmax_failures = {bad}"),
        ));
        assert!(
            e.starts_with(&format!(
                "s.toml:2: max_failures = {bad}: expected 1 to 10000"
            )),
            "{e}"
        );
    }
    let precision = |table: &str| {
        GOOD.replace(
            "name = \"t\"",
            &format!("name = \"t\"\nreplicates = 3\n{table}"),
        )
    };
    let e = err(&precision("[precision]\ntarget = 0\nmax_replicates = 5\n"));
    assert!(
        e.starts_with("s.toml:4: target = 0: expected the relative"),
        "{e}"
    );
    let e = err(&precision(
        "[precision]\ntarget = 0.03\nmax_replicates = 2\n",
    ));
    assert!(
        e.starts_with("s.toml:5: max_replicates = 2: expected 3 to 1000"),
        "{e}"
    );
    let e = err(&precision("[decide]\nbudget = 0\n"));
    assert!(
        e.starts_with("s.toml:4: budget = 0: expected 1 to 10000 runs"),
        "{e}"
    );
    let e = err(&precision("[decide]\nbudget = 10\n"));
    assert!(
        e.contains("[decide] settles the crossover of the first two"),
        "{e}"
    );
    let e = err(&precision("[decide]\nbudget = 10\nper_round = 101\n"));
    assert!(
        e.starts_with("s.toml:5: per_round = 101: expected 1 to 100"),
        "{e}"
    );
    let e = err(&precision("[precision]\ntarget = 0.03\n"));
    assert!(e.contains("missing field `max_replicates`"), "{e}");
    let e = err(&precision(
        "[precision]\ntarget = 0.03\nmax_replicates = 5\nmin = 1\n",
    ));
    assert!(e.contains("unknown field `min`"), "{e}");
    let e = err("name = \"t\"\n[factors]\nn = \"1,2\"\n");
    assert!(
        e.starts_with("s.toml:") && e.contains("[[implementation]]"),
        "{e}"
    );
}

#[test]
fn shapes_are_read_in_file_order() {
    let text = GOOD.replace(
        "[[implementation]]",
        "[shapes]\nli = { p = \"p*sqrt(p)\", n = \"n*log2(n)\" }\n[shapes.rc]\np = \"max(p-$theta,0)\"\n[[implementation]]",
    );
    let s = parse("s.toml", &text).unwrap();
    let got: Vec<(&str, &str, &str)> = s
        .shapes
        .iter()
        .map(|c| (c.category.as_str(), c.factor.as_str(), c.expr.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("li", "p", "p*sqrt(p)"),
            ("li", "n", "n*log2(n)"),
            ("rc", "p", "max(p-$theta,0)")
        ]
    );
    assert!(parse("s.toml", GOOD).unwrap().shapes.is_empty());
}

#[test]
fn bad_shapes_name_line_and_field() {
    let with = |shapes: &str| {
        err(&GOOD.replace(
            "[[implementation]]",
            &format!("[shapes]\n{shapes}\n[[implementation]]"),
        ))
    };
    let cases = [
        (
            "xx = { p = \"p\" }",
            "s.toml:9: [shapes] xx: not a modelled category (pc, li",
        ),
        (
            "li = \"p\"",
            "s.toml:9: [shapes] li: expected a table of factor = \"shape\"",
        ),
        (
            "li = { q = \"q\" }",
            "s.toml:9: [shapes] li.q: not a factor of the study (n, p)",
        ),
        (
            "li = { p = 3 }",
            "s.toml:9: [shapes] li.p: the shape must be a non-empty string",
        ),
        (
            "li = { p = \" \" }",
            "s.toml:9: [shapes] li.p: the shape must be a non-empty",
        ),
        (
            "li = { p = \"p*(\" }",
            "s.toml:9: [shapes] li.p = \"p*(\": ",
        ),
        (
            "li = { p = \"n*p\" }",
            "s.toml:9: [shapes] li.p = \"n*p\": a shape along p may use only p, not 'n'",
        ),
        (
            "\nli = { n = \"n\" }\n[shapes.cl]\n\np = \"sqrt(n)\"",
            "s.toml:13: [shapes] cl.p = \"sqrt(n)\"",
        ),
    ];
    for (shapes, want) in cases {
        let e = with(shapes);
        assert!(e.starts_with(want), "{shapes}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
