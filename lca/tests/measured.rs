//! Measured points decide first, end to end on the bundled 306-run study
//! (datasets/data/fft2d-study.dat; docs/comparing.md#measured-points-decide-first): at the 51
//! points both implementations ran, the verdict is what their runs say, computed here a second
//! way (a paired t by hand, with the published t quantile), in the text, the JSON and the map.

mod support;

use std::collections::BTreeMap;

use support::{model_each, stdout};
use test_support::scratch;

/// t(0.95; 2 dof), the 90% two-sided quantile every point here uses (3 interleaved replicates).
const T_2: f64 = 2.919_985_580_4;

/// The rows' `wall` by (impl, n, p), in replicate order.
fn walls(file: &str) -> BTreeMap<(String, u64, u64), Vec<(u64, f64)>> {
    let path = datasets::path(file);
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: BTreeMap<(String, u64, u64), Vec<(u64, f64)>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let field = |k: &str| {
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(&format!("{k}=")))
                .unwrap()
                .to_string()
        };
        let n: u64 = field("n").parse().unwrap();
        let p: u64 = field("p").parse().unwrap();
        let r: u64 = field("replicate").parse().unwrap();
        let wall: f64 = field("wall").parse().unwrap();
        out.entry((field("impl"), n, p))
            .or_default()
            .push((r, wall));
    }
    out
}

/// Who is faster at each point both ran, by a paired t on the replicates: "A" (dp), "B" (tp)
/// or "tie".
fn by_hand(file: &str) -> BTreeMap<(u64, u64), &'static str> {
    let walls = walls(file);
    let mut out = BTreeMap::new();
    for ((implementation, n, p), dp) in &walls {
        if implementation != "dp" {
            continue;
        }
        let Some(tp) = walls.get(&("tp".to_string(), *n, *p)) else {
            continue;
        };
        let d: Vec<f64> = dp
            .iter()
            .map(|(r, a)| a - tp.iter().find(|(s, _)| s == r).unwrap().1)
            .collect();
        assert_eq!(d.len(), 3);
        let mean = d.iter().sum::<f64>() / 3.0;
        let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        let half = T_2 * sd / 3f64.sqrt();
        let w = if mean.abs() <= half {
            "tie"
        } else if mean < 0.0 {
            "A"
        } else {
            "B"
        };
        out.insert((*n, *p), w);
    }
    out
}

#[test]
fn the_runs_decide_the_bundled_studys_verdict_where_both_ran() {
    // The study on the 2-core VM: 16 of the 51 points differ at 90%.
    check("fft2d-study.dat", 16);
}

#[test]
fn the_runs_decide_the_real_core_studys_verdict_where_both_ran() {
    // The same study on 16 dedicated cores (datasets/data/fft2d-full-16core.dat), where the
    // models alone, their validated errors included, cannot tell the two apart anywhere.
    check("fft2d-full-16core.dat", 6);
}

/// The verdict on `file`'s study at its 51 measured points, `significant` of which differ.
fn check(file: &str, significant: usize) {
    let dir = scratch(&format!("measured-{file}"));
    let data = datasets::path(file);
    let data = data.to_str().unwrap();
    let models = model_each(&dir, data, &["dp", "tp"], ",role=model", &[]);
    let hand = by_hand(file);
    assert_eq!(hand.len(), 51);
    assert_eq!(
        hand.values().filter(|w| **w != "tie").count(),
        significant,
        "{hand:?}"
    );

    // The winner map: every measured point in JSON as the hand says, and its cell too.
    let args = ["crossover", &models[0], &models[1], "--data", data];
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&[&args[..], &["--format", "json"]].concat())).unwrap();
    let measured = doc["measured"].as_array().unwrap();
    assert_eq!(measured.len(), 51);
    for m in measured {
        let n = m["point"]["n"].as_f64().unwrap() as u64;
        let p = m["point"]["p"].as_f64().unwrap() as u64;
        assert_eq!(m["winner"], hand[&(n, p)], "{m}");
        assert_eq!(m["test"], "paired t", "{m}");
        assert_eq!(m["basis"], "runs", "{m}");
    }
    let rows = doc["rows"].as_array().unwrap();
    let mut runs_cells = 0;
    for (j, row) in doc["cells"].as_array().unwrap().iter().enumerate() {
        for (i, cell) in row.as_array().unwrap().iter().enumerate() {
            if cell["basis"] != "runs" {
                continue;
            }
            runs_cells += 1;
            let n = cell["point"]["n"].as_f64().unwrap() as u64;
            let p = cell["point"]["p"].as_f64().unwrap() as u64;
            let code = rows[j].as_str().unwrap().chars().nth(i).unwrap();
            let expected = match hand[&(n, p)] {
                "A" => 'A',
                "B" => 'B',
                _ => '=',
            };
            // Never "cannot be told apart" where the runs differ, never against them.
            assert_eq!(code, expected, "n={n} p={p}");
        }
    }
    assert_eq!(runs_cells, 51);

    // The text says first what the runs decided, then what the models say between them.
    let text = stdout(&args);
    let verdict = text.lines().find(|l| l.starts_with("verdict: ")).unwrap();
    let dp = hand.values().filter(|w| **w == "A").count();
    let tp = hand.values().filter(|w| **w == "B").count();
    assert!(
        verdict.starts_with(&format!(
            "verdict: By the runs at the 51 points both measured (90%, paired t): dp is faster \
             at {dp} points"
        )),
        "{verdict}"
    );
    assert!(
        verdict.contains(&format!("; tp is faster at {tp} points")),
        "{verdict}"
    );
    assert!(
        verdict.contains("Between the measured points, by the models: "),
        "{verdict}"
    );
    assert!(
        text.lines()
            .filter(|l| l.starts_with("measured "))
            .all(|l| l.ends_with("(rests on runs)")),
        "{text}"
    );

    // Along p at n = 384: a side of its own, resting on the runs, where they say otherwise
    // than the models; no models' side covers a measured point against its runs.
    let along = [
        &args[..],
        &["--var", "p", "--at", "n=384", "--format", "json"],
    ]
    .concat();
    let doc: serde_json::Value = serde_json::from_str(&stdout(&along)).unwrap();
    for p in 2..=8u64 {
        let Some(w) = hand.get(&(384, p)) else {
            continue;
        };
        let x = p as f64;
        let sides: Vec<&serde_json::Value> = doc["sides"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["from"].as_f64().unwrap() <= x && x <= s["to"].as_f64().unwrap())
            .collect();
        match sides.iter().find(|s| s["basis"] == "runs") {
            Some(s) => assert_eq!(s["winner"], *w, "p={p}"),
            None => assert!(sides.iter().all(|s| s["winner"] == *w), "p={p}: {sides:?}"),
        }
    }

    // CSV says what each row rests on.
    let csv = stdout(&[&args[..], &["--format", "csv"]].concat());
    let header = csv.lines().next().unwrap();
    assert!(header.contains(",basis,"), "{header}");
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("measured,")).count(),
        51
    );
}

/// Two implementations of one factor `p` = 2..10, 3 replicates each (deterministic noise of
/// about 1%): `t = 1 + 0.1 p` and `1.2 + 0.1 p`, except where `dip` makes b's `t = 0.9 + 0.1
/// p` at p = 6 (so b is faster there, plainly, while a smooth model of b is not).
fn dip_rows(dip: bool) -> String {
    let mut rows = String::new();
    for (implementation, base) in [("a", 1.0), ("b", 1.2)] {
        for p in 2..=10u32 {
            for r in 0..3u32 {
                let shift = if implementation == "b" { 1.0 } else { 0.0 };
                let noise = 0.01 * (f64::from(7 * p + 3 * r) + shift).sin();
                let t = if dip && implementation == "b" && p == 6 {
                    0.9 + 0.1 * f64::from(p) + 0.1 * noise
                } else {
                    base + 0.1 * f64::from(p) + noise
                };
                rows.push_str(&format!(
                    "impl={implementation} p={p} replicate={r} t={t:.6}\n"
                ));
            }
        }
    }
    rows
}

#[test]
fn where_the_runs_and_the_models_name_opposite_winners_the_verdict_says_so() {
    // Issue 33: the verdict never contradicts the runs. A stretch the models name may hold a
    // measured point whose runs say the other one is faster; the verdict names that point.
    for dip in [true, false] {
        let dir = scratch(&format!("measured-dip-{dip}"));
        let data = test_support::write(&dir, "t.dat", &dip_rows(dip));
        let data = data.to_str().unwrap();
        let response = ["--response", "t", "--factors", "p"];
        let models = model_each(&dir, data, &["a", "b"], "", &response);
        let args = [
            "crossover",
            &models[0],
            &models[1],
            "--data",
            data,
            "--validate-where",
            "p=4",
        ];
        let text = stdout(&args);
        let verdict = text.lines().find(|l| l.starts_with("verdict: ")).unwrap();
        let sentence = "At 1 measured point the runs and the models name opposite winners \
                        (p=6: the runs say b, the models a): the runs decide there, and the \
                        models' confidence near it is in doubt.";
        assert_eq!(verdict.contains(sentence), dip, "{verdict}");
        // The models' stretches on either side leave out p = 6, which the runs decided.
        let stretches = "a has the lower t (in its own units) for p ≤ 5; a has the lower t (in \
                         its own units) for p ≥ 7.";
        assert_eq!(verdict.contains(stretches), dip, "{verdict}");
        // With no rows named to check the models (t.dat has no role column), the runs still
        // decide where both measured.
        let unchecked = stdout(&args[..5]);
        let verdict = unchecked
            .lines()
            .find(|l| l.starts_with("verdict: "))
            .unwrap();
        assert_eq!(verdict.contains(sentence), dip, "{verdict}");
        let doc: serde_json::Value =
            serde_json::from_str(&stdout(&[&args[..], &["--format", "json"]].concat())).unwrap();
        for m in doc["measured"].as_array().unwrap() {
            let p = m["point"]["p"].as_f64().unwrap();
            assert_eq!(m["models"], "A", "p={p}: {m}");
            let runs = if dip && p == 6.0 { "B" } else { "A" };
            assert_eq!(m["winner"], runs, "p={p}: {m}");
        }
    }
}

#[test]
fn a_predicted_row_is_not_a_measured_run() {
    // A study's `[whatif]` rows are pp whatif's predictions of its runs, not measurements:
    // the points they hold are left to the models (which say they rest on predicted rows),
    // never decided "by the runs".
    let dir = scratch("measured-predicted");
    let rows: String = dip_rows(true)
        .lines()
        .map(|l| {
            if l.contains(" p=6 ") {
                format!("{l} predicted=demand:cpu predicted_from=r.log\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let data = test_support::write(&dir, "t.dat", &rows);
    let data = data.to_str().unwrap();
    let response = ["--response", "t", "--factors", "p"];
    let models = model_each(&dir, data, &["a", "b"], "", &response);
    let args = [
        "crossover",
        &models[0],
        &models[1],
        "--data",
        data,
        "--validate-where",
        "p=4",
    ];
    let text = stdout(&args);
    let verdict = text.lines().find(|l| l.starts_with("verdict: ")).unwrap();
    assert!(
        verdict.starts_with("verdict: By the runs at the 8 points both measured"),
        "{verdict}"
    );
    assert!(!verdict.contains("p=6"), "{verdict}");
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&[&args[..], &["--format", "json"]].concat())).unwrap();
    let points: Vec<f64> = doc["measured"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["point"]["p"].as_f64().unwrap())
        .collect();
    assert_eq!(points.len(), 8, "{points:?}");
    assert!(!points.contains(&6.0), "{points:?}");
    assert!(text.contains("predicted"), "{text}");
    // The difference model is fitted to every row, as the two models are, and says how many of
    // its points were predicted.
    assert!(
        text.contains("over 9 points both ran (1 of them predicted by pp whatif, not measured)"),
        "{text}"
    );
    // lca variation says so before its table.
    let corners = test_support::write(
        &dir,
        "corners.dat",
        "p=2 n=1 t=1\np=2 n=1 t=1.1\np=2 n=2 t=2\np=2 n=2 t=2.1\np=4 n=1 t=3\np=4 n=1 t=3.2\n\
         p=4 n=2 t=5 predicted=demand:cpu\np=4 n=2 t=5.1 predicted=demand:cpu\n",
    );
    let variation = stdout(&[
        "variation",
        corners.to_str().unwrap(),
        "--factors",
        "p,n",
        "--response",
        "t",
    ]);
    assert!(
        variation.starts_with(
            "predicted, not measured: 2 of 8 rows predicted (pp whatif demand:cpu; p = 4, n = 2); \
             they are analysed as the measured rows are\n"
        ),
        "{variation}"
    );
    // So does the ranking of one category against one factor.
    let ranked = stdout(&[
        corners.to_str().unwrap(),
        "--var",
        "p",
        "--cat",
        "t",
        "--where",
        "n=2",
    ]);
    assert!(
        ranked.ends_with(
            "predicted, not measured: 2 of 4 rows predicted (pp whatif demand:cpu; p = 4); they \
             are fitted as the measured rows are\n"
        ),
        "{ranked}"
    );
    // lca validate says which of its runs were predicted.
    let validated = stdout(&["validate", &models[1], data, "--where", "impl=b"]);
    assert!(
        validated
            .lines()
            .next()
            .unwrap()
            .ends_with("(3 of 27 rows predicted (pp whatif demand:cpu; p = 6), not measured)"),
        "{validated}"
    );
    // The report draws them apart and counts them.
    let out = dir.join("report");
    stdout(&[
        "report",
        &models[0],
        &models[1],
        "--data",
        data,
        "--out",
        out.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(
        html.matches("3 of them predicted by pp whatif, not measured")
            .count(),
        2,
        "one per implementation"
    );
    assert!(html.contains("hollow: predicted by pp whatif, not measured"));
    // Without predicted rows, nothing is said of them.
    let plain = test_support::write(&dir, "plain.dat", &dip_rows(true));
    let plain_out = dir.join("plain-report");
    stdout(&[
        "report",
        &models[0],
        &models[1],
        "--data",
        plain.to_str().unwrap(),
        "--out",
        plain_out.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(plain_out.join("index.html")).unwrap();
    assert!(!html.contains("predicted by pp whatif"));
}
