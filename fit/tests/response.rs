//! Response models (`lca model --response`): any numeric column modelled in its own units,
//! factors declared or inferred, other columns ignored; repetitions; the model file's `kind`;
//! crossovers of two responses.

use std::collections::BTreeMap;

use fit::Datafile;
use fit::combination::Choices;
use fit::crossover::{Axis, Pair};
use fit::model_file::{parse, write};
use fit::performance::{Kind, PerformanceModel};
use fit::repetitions::Repetitions;
use fit::response::{ResponseOptions, build, columns};

fn options(responses: &[&str], factors: &[&str]) -> ResponseOptions {
    ResponseOptions {
        name: "m".into(),
        responses: responses.iter().map(|s| s.to_string()).collect(),
        factors: factors.iter().map(|s| s.to_string()).collect(),
        ..ResponseOptions::default()
    }
}

/// `latency = 5 + 0.25 p n` exactly, over p in {2, 4, 8, 16} and n in {64, 256, 1024}, with a
/// sample-count column `N` and a text column `host` that vary, and a `wall` column.
fn latencies() -> Datafile {
    let mut text = String::from("p,n,N,host,latency,wall,iters\n");
    for p in [2.0, 4.0, 8.0, 16.0] {
        for n in [64.0, 256.0, 1024.0] {
            for r in 0..2 {
                let latency = 5.0 + 0.25 * p * n;
                let host = ["a", "b"][r];
                text.push_str(&format!(
                    "{p},{n},{},{host},{latency},{},10\n",
                    100 + r,
                    3.0 * p
                ));
            }
        }
    }
    Datafile::parse("lat.csv", &text).unwrap()
}

#[test]
fn factors_are_inferred_by_the_stated_rule_and_other_columns_ignored() {
    let data = latencies();
    let roles = columns(&data, &["latency".into()], &[]).unwrap();
    // N varies and holds only numbers: a factor by the rule. host is text, wall an output.
    assert_eq!(roles.factors, ["p", "n", "N"]);
    assert_eq!(roles.ignored, ["host", "wall"]);
    assert_eq!(roles.held, BTreeMap::from([("iters".to_string(), 10.0)]));
    let roles = columns(&data, &["latency".into()], &["p".into(), "n".into()]).unwrap();
    assert_eq!(roles.factors, ["p", "n"]);
    assert_eq!(roles.ignored, ["N", "host", "wall"]);
}

#[test]
fn a_known_truth_is_recovered_exactly_in_its_own_units() {
    let data = latencies();
    let (model, _) = build(&data, &options(&["latency"], &["p", "n"])).unwrap();
    assert_eq!(model.kind, Kind::Response);
    let fit = &model.categories[0].fit;
    assert_eq!(fit.model.text(), "1 + p*n");
    assert!((fit.coefficients[0].value - 5.0).abs() < 1e-9);
    assert!((fit.coefficients[1].value - 0.25).abs() < 1e-12);
    // The prediction is the response itself: no division by p, no sum.
    let t = model.predict(&[32.0, 64.0]);
    assert!((t.time.value - (5.0 + 0.25 * 32.0 * 64.0)).abs() < 1e-6);
    assert_eq!(t.categories.len(), 1);
    assert_eq!(model.held, BTreeMap::from([("iters".to_string(), 10.0)]));
}

#[test]
fn an_unknown_or_doubly_named_column_is_one_line() {
    let data = latencies();
    let e = build(&data, &options(&["lat"], &[]))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("lat.csv: unknown response 'lat'; the numeric columns are: p, n, N"),
        "{e}"
    );
    let e = build(&data, &options(&["latency"], &["p", "latency"]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "lat.csv: 'latency' is named both as a factor and as a response"
    );
    let e = build(&data, &options(&["latency"], &["host"]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("lat.csv:2: field 'host': expected a number, found 'a'"),
        "{e}"
    );
}

#[test]
fn median_and_mean_of_repetitions_on_hand_values() {
    // At p = 1, 2, 3 the runs are {1, 2, 6}, {4, 4, 10}, {5, 6, 16}: medians 2, 4, 6 (on the
    // line 2p), means 3, 6, 9 (on 3p). With the shape `p` each summary is fitted exactly.
    let text = "p,y\n1,1\n1,2\n1,6\n2,4\n2,4\n2,10\n3,5\n3,6\n3,16\n";
    let data = Datafile::parse("r.csv", text).unwrap();
    let fitted = |how: Repetitions| {
        let mut o = options(&["y"], &["p"]);
        o.repetitions = how;
        let shape = BTreeMap::from([("p".to_string(), "p".to_string())]);
        let choices = Choices {
            shapes: shape,
            ..Choices::default()
        };
        o.choices = BTreeMap::from([("y".to_string(), choices)]);
        let (m, _) = build(&data, &o).unwrap();
        (m.categories[0].fit.n, m.predict(&[4.0]).time.value)
    };
    let (n, at4) = fitted(Repetitions::Median);
    assert_eq!(n, 3);
    assert!((at4 - 8.0).abs() < 1e-9, "{at4}");
    let (n, at4) = fitted(Repetitions::Mean);
    assert_eq!(n, 3);
    assert!((at4 - 12.0).abs() < 1e-9, "{at4}");
    // Every run an observation: nine of them, their spread in the residuals.
    assert_eq!(fitted(Repetitions::All).0, 9);
}

#[test]
fn the_model_file_records_the_kind_and_old_files_stay_lost_cycles() {
    let data = latencies();
    let (model, _) = build(&data, &options(&["latency"], &["p", "n"])).unwrap();
    let text = write(&model);
    assert!(text.contains("\nkind = \"response\"\n"), "{text}");
    assert!(text.starts_with("# lca response model: latency, each in its own units"));
    let back = parse("m.toml", &text).unwrap();
    assert_eq!(back.kind, Kind::Response);
    assert_eq!(write(&back), text);
    let old = "format = 1\nfactors = [\"p\"]\n\n[[category]]\nname = \"pc\"\nformula = \"2*p\"\n";
    assert_eq!(parse("old.toml", old).unwrap().kind, Kind::LostCycles);
    let bad = "format = 1\nkind = \"speed\"\nfactors = [\"p\"]\n";
    let e = parse("bad.toml", bad).unwrap_err().to_string();
    assert!(e.starts_with("bad.toml:2: unknown variant `speed`"), "{e}");
}

/// A hand-written response model of `p` alone.
fn response(name: &str, formula: &str) -> PerformanceModel {
    let text = format!(
        "format = 1\nkind = \"response\"\nname = \"{name}\"\nfactors = [\"p\"]\n\
         range = {{ p = [1.0, 16.0] }}\n\n[[category]]\nname = \"latency\"\nformula = \"{formula}\"\n"
    );
    parse(&format!("{name}.toml"), &text).unwrap()
}

#[test]
fn two_responses_cross_where_the_hand_computation_says_in_their_units() {
    // 2 + 3p = 20 + p at p = 9, where both are 29 (microseconds, say): not divided by p.
    let (a, b) = (response("intel", "2 + 3*p"), response("open", "20 + p"));
    let pair = Pair::new(&a, &b).unwrap();
    let axis = Axis::new("p", 1.0, 16.0).unwrap();
    let c = pair.crossover(&axis, &[], 512).unwrap();
    assert_eq!(c.response.as_deref(), Some("latency"));
    assert_eq!(c.meetings.len(), 1);
    assert!((c.meetings[0].x - 9.0).abs() < 1e-6, "{}", c.meetings[0].x);
    assert!((c.meetings[0].t_a - 29.0).abs() < 1e-5);
}

#[test]
fn models_of_different_things_are_not_compared() {
    let a = response("intel", "2 + 3*p");
    let lost = parse(
        "lc.toml",
        "format = 1\nname = \"lc\"\nfactors = [\"p\"]\n\n[[category]]\nname = \"pc\"\nformula = \"2*p\"\n",
    )
    .unwrap();
    let e = Pair::new(&a, &lost).err().unwrap().to_string();
    assert!(
        e.contains("the models predict different things: intel models the response 'latency', lc models run time T_p (lost cycles)"),
        "{e}"
    );
    let energy = parse(
        "e.toml",
        "format = 1\nkind = \"response\"\nname = \"e\"\nfactors = [\"p\"]\n\n[[category]]\nname = \"energy\"\nformula = \"2*p\"\n",
    )
    .unwrap();
    let e = Pair::new(&a, &energy).err().unwrap().to_string();
    assert!(e.contains("e models the response 'energy'"), "{e}");
    assert!(!e.contains('\n'));
}

#[test]
fn a_strong_scaling_time_is_recovered_with_the_decreasing_shape() {
    // T = 10 + 0.5 n / p: the generic shapes hold 1/p, which a run time (unlike lost cycles)
    // needs.
    let mut text = String::from("p,n,time\n");
    for p in [1.0, 2.0, 4.0, 8.0, 16.0] {
        for n in [64.0, 128.0, 256.0, 512.0, 1024.0] {
            text.push_str(&format!("{p},{n},{}\n", 10.0 + 0.5 * n / p));
        }
    }
    let data = Datafile::parse("s.csv", &text).unwrap();
    let (model, _) = build(&data, &options(&["time"], &[])).unwrap();
    let shapes: Vec<&str> = model.categories[0]
        .shapes
        .iter()
        .map(|s| s.expr.as_str())
        .collect();
    assert_eq!(shapes, ["1/p", "n"]);
    let at = model.predict(&[64.0, 2048.0]).time.value;
    assert!((at - (10.0 + 0.5 * 2048.0 / 64.0)).abs() < 1e-6, "{at}");
}
