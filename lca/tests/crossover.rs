//! End-to-end tests of `lca crossover`: known answers from hand-written models, snapshots of
//! the text and JSON reports, bands from fitted models, and bad input.

mod support;

use std::path::{Path, PathBuf};

use support::{error_of, lca, stdout};
use test_support::{scratch, write};

/// A hand-written model of `n` with `p` held at 1 (so `T_p = pc`), fitted on n in [32, 1024].
fn model(dir: &Path, name: &str, pc: &str) -> String {
    let text = format!(
        "format = 1\nname = \"{name}\"\nfactors = [\"n\"]\nheld = {{ p = 1 }}\n\
         range = {{ n = [32.0, 1024.0] }}\n\n[[category]]\nname = \"pc\"\nformula = \"{pc}\"\n"
    );
    path(write(dir, &format!("{name}.toml"), &text))
}

/// A hand-written model of `n` and `p`: `T_p = pc / p`.
fn model2(dir: &Path, name: &str, pc: &str) -> String {
    let text = format!(
        "format = 1\nname = \"{name}\"\nfactors = [\"n\", \"p\"]\n\
         range = {{ n = [1.0, 100.0], p = [1.0, 64.0] }}\n\n\
         [[category]]\nname = \"pc\"\nformula = \"{pc}\"\n"
    );
    path(write(dir, &format!("{name}.toml"), &text))
}

fn path(p: PathBuf) -> String {
    p.to_str().unwrap().to_string()
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut args = args.to_vec();
    args.extend(["--format", "json"]);
    serde_json::from_str(&stdout(&args)).unwrap()
}

fn roots(doc: &serde_json::Value) -> Vec<(f64, String)> {
    doc["meetings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["at"].as_f64().unwrap(),
                m["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn winners(doc: &serde_json::Value) -> Vec<String> {
    doc["sides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["winner"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn known_crossovers_in_both_directions() {
    let dir = scratch("crossover-known");
    let sq = model(&dir, "sq", "n^2");
    let lin = model(&dir, "lin", "100*n");
    let cube = model(&dir, "cube", "n^3");
    let quad = model(&dir, "quad", "6*n^2 - 11*n + 6");
    // n^2 + 1 - 2n = (n-1)^2; lost cycles are never negative, so no model here dips below 0.
    let sq1 = model(&dir, "sq1", "n^2 + 1");
    let line = model(&dir, "line", "2*n");
    let twice = model(&dir, "twice", "2*n^2");

    // One crossing at n = 100, A wins below it.
    let doc = json(&["crossover", &sq, &lin, "--var", "n", "--at", "p=1"]);
    let r = roots(&doc);
    assert_eq!(r.len(), 1);
    assert!(
        (r[0].0 - 100.0).abs() < 1e-9 && r[0].1 == "crossing",
        "{r:?}"
    );
    assert_eq!(winners(&doc), ["A", "B"]);
    let doc = json(&["crossover", &lin, &sq, "--var", "n"]);
    assert_eq!(winners(&doc), ["B", "A"]);

    // Three crossings at 1, 2, 3 (outside the data: extrapolation, flagged).
    for (a, b, expected) in [
        (&cube, &quad, ["A", "B", "A", "B"]),
        (&quad, &cube, ["B", "A", "B", "A"]),
    ] {
        let doc = json(&["crossover", a, b, "--var", "n", "--range", "n=0..4"]);
        let r: Vec<f64> = roots(&doc).iter().map(|r| r.0).collect();
        assert_eq!(r.len(), 3, "{r:?}");
        for (got, want) in r.iter().zip([1.0, 2.0, 3.0]) {
            assert!((got - want).abs() < 1e-9, "{r:?}");
        }
        assert_eq!(winners(&doc), expected);
        assert_eq!(doc["extrapolation"].as_array().unwrap().len(), 2);
    }

    // None: one winner over the whole range, by a factor of 2.
    let doc = json(&["crossover", &sq, &twice, "--var", "n"]);
    assert!(roots(&doc).is_empty());
    assert_eq!(winners(&doc), ["A"]);
    assert_eq!(doc["sides"][0]["ratio"].as_f64(), Some(2.0));

    // A tangential touch at n = 1; the winner does not change.
    for (a, b, w) in [(&sq1, &line, "B"), (&line, &sq1, "A")] {
        let doc = json(&["crossover", a, b, "--var", "n", "--range", "n=0..3"]);
        let r = roots(&doc);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!((r[0].0 - 1.0).abs() < 1e-6 && r[0].1 == "touch", "{r:?}");
        assert_eq!(winners(&doc), [w]);
    }
}

#[test]
fn text_report() {
    let dir = scratch("crossover-text");
    let sq = model(&dir, "sq", "n^2");
    let lin = model(&dir, "lin", "100*n");
    let text = stdout(&[
        "crossover",
        &sq,
        &lin,
        "--var",
        "n",
        "--range",
        "n=16..2048:log2",
    ]);
    insta::assert_snapshot!(text, @r#"
    A: sq  B: lin  along n from 16 to 2048 (log scale), 512 samples  at p=1
    who wins: no intervals (a model written by hand): the lower mean wins, untested
    verdict: Comparing means only (models without intervals: untested), at p = 1: sq is faster for n ≤ 100; lin is faster for n ≥ 100. Part of it lies outside the measured runs (extrapolation).
    crossing   at n = 100        T_A = T_B = 10000; no interval (rests on models)
    n from 16 to 100               A (sq) wins (no intervals: untested), T_B/T_A up to 6.250 at n = 16 (rests on models)
    n from 100 to 2048             B (lin) wins (no intervals: untested), T_A/T_B up to 20.48 at n = 2048 (rests on models)
    extrapolation: sq is fitted on n from 32 to 1024; n from 16 to 32 is outside it
    extrapolation: sq is fitted on n from 32 to 1024; n from 1024 to 2048 is outside it
    extrapolation: lin is fitted on n from 32 to 1024; n from 16 to 32 is outside it
    extrapolation: lin is fitted on n from 32 to 1024; n from 1024 to 2048 is outside it
    "#);
}

#[test]
fn json_report() {
    let dir = scratch("crossover-json");
    let sq = model(&dir, "sq", "n^2 + 1");
    let line = model(&dir, "line", "2*n");
    let text = stdout(&[
        "crossover",
        &sq,
        &line,
        "--var",
        "n",
        "--range",
        "n=0..3",
        "--format",
        "json",
    ]);
    insta::assert_snapshot!(text, @r#"
    {
      "A": "sq",
      "B": "line",
      "at": {
        "p": 1.0
      },
      "axis": {
        "factor": "n",
        "range": [
          0.0,
          3.0
        ],
        "scale": "linear"
      },
      "confidence": 0.9,
      "extrapolation": [
        {
          "factor": "n",
          "fitted": [
            32.0,
            1024.0
          ],
          "model": "sq",
          "outside": [
            0.0,
            3.0
          ]
        },
        {
          "factor": "n",
          "fitted": [
            32.0,
            1024.0
          ],
          "model": "line",
          "outside": [
            0.0,
            3.0
          ]
        }
      ],
      "interval_basis": null,
      "intervals": false,
      "measured": [],
      "meetings": [
        {
          "T_A": 2.0000000000002247,
          "T_B": 2.0000000000002247,
          "at": 1.0000000000001124,
          "band": null,
          "kind": "touch",
          "significant": null
        }
      ],
      "rule": "no intervals (a model written by hand): the lower mean wins, untested",
      "runs_rule": "at a point both implementations ran, their runs decide: the 90% confidence interval of mean_A - mean_B (paired t where the runs share replicate indices, else Welch) excludes zero; the models decide between the measured points",
      "samples": 512,
      "sides": [
        {
          "T_A": 1.0000344667797687,
          "T_B": 0.011741682974559686,
          "at": 0.005870841487279843,
          "basis": "models",
          "from": 0.0,
          "ratio": 85.16960208741031,
          "significant": null,
          "to": 3.0,
          "winner": "B"
        }
      ]
    }
    "#);
}

#[test]
fn csv_report() {
    let dir = scratch("crossover-csv");
    let sq = model(&dir, "sq", "n^2");
    let lin = model(&dir, "lin", "100*n");
    let csv = stdout(&["crossover", &sq, &lin, "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "record,n,kind,band_low,band_high,from,to,winner,significant,ratio,T_A,T_B,basis"
    );
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[1].starts_with("meeting,100"), "{csv}");
    assert!(
        lines[2].starts_with("side,32,") && lines[2].contains(",A,,3.125"),
        "{csv}"
    );
    assert!(
        lines[3].starts_with("side,1024,") && lines[3].contains(",B,,10.24"),
        "{csv}"
    );
}

#[test]
fn winner_map_of_a_known_pair() {
    // T_A = n, T_B = 50/p + n/10: equal where n = 500/(9p).
    let dir = scratch("crossover-map");
    let a = model2(&dir, "a", "n*p");
    let b = model2(&dir, "b", "50 + 0.1*n*p");
    let doc = json(&["crossover", &a, &b]);
    let us: Vec<f64> = doc["across_values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let vs: Vec<f64> = doc["up_values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!((us.len(), vs.len()), (41, 41));
    for (j, row) in doc["rows"].as_array().unwrap().iter().enumerate() {
        let row = row.as_str().unwrap();
        for (i, cell) in row.chars().enumerate() {
            let expected = if us[i] * vs[j] < 500.0 / 9.0 {
                'A'
            } else {
                'B'
            };
            assert_eq!(cell, expected, "n={} p={}", us[i], vs[j]);
        }
    }
    let boundary = doc["boundary"].as_array().unwrap();
    assert_eq!(
        boundary.len(),
        39,
        "two levels of p put the boundary below n = 1"
    );
    for point in boundary {
        let (n, p) = (point["n"].as_f64().unwrap(), point["p"].as_f64().unwrap());
        assert!((n - 500.0 / (9.0 * p)).abs() < 1e-9 * n, "{point}");
    }
    let text = stdout(&["crossover", &a, &b, "--cells", "9"]);
    insta::assert_snapshot!(text, @r#"
    A: a  B: b  winner map over n from 1 to 100 (log scale) across and p from 1 to 64 (log scale) up
    who wins: no intervals (a model written by hand): the lower mean wins, untested
    verdict: Comparing means only (models without intervals: untested): a is faster for p ≤ 38 (n ≤ 55 at p = 1, n = 1 at p = 38): 43.2% of the map; b is faster for all p from 1 to 64 (n ≥ 56 at p = 1, all n from 1 to 100 at p = 64): 56.8% of the map.
    A = a faster, B = b faster, = equal (no intervals)
          p
         64 |BBBBBBBBB
            |ABBBBBBBB
            |AABBBBBBB
            |AAABBBBBB
          8 |AAAABBBBB
            |AAAAABBBB
            |AAAAAABBB
            |AAAAAAABB
          1 |AAAAAAABB
            +---------
             1  n  100
    boundary: who wins along n at each level of p, and the crossovers
      p=1: A from 1 to 55.5556, B from 55.5556 to 100; crossing: n=55.5556
      p=1.68179: A from 1 to 33.0335, B from 33.0335 to 100; crossing: n=33.0335
      p=2.82843: A from 1 to 19.6419, B from 19.6419 to 100; crossing: n=19.6419
      p=4.75683: A from 1 to 11.6791, B from 11.6791 to 100; crossing: n=11.6791
      p=8: A from 1 to 6.94444, B from 6.94444 to 100; crossing: n=6.94444
      p=13.4543: A from 1 to 4.12919, B from 4.12919 to 100; crossing: n=4.12919
      p=22.6274: A from 1 to 2.45523, B from 2.45523 to 100; crossing: n=2.45523
      p=38.0546: A from 1 to 1.45989, B from 1.45989 to 100; crossing: n=1.45989
      p=64: B from 1 to 100; crossing: none
    "#);
}

/// Runs of `pc = f(n)` at p = 1 with a deterministic +/-2% disturbance, for `lca model`.
#[test]
fn a_winner_that_changes_at_every_step_is_said_in_turn() {
    // T_A - T_B = (tri(n) - 0.5) p, tri a triangle wave of period 2 between 0 and 1: a wins
    // around odd n, b around even n, and they cross at every n + 0.5.
    let dir = scratch("crossover-in-turn");
    let tri = "max(n - 2*floor(n/2) - 1, 1 - n + 2*floor(n/2))";
    let a = model2(&dir, "a", &format!("n*p + ({tri} - 0.5)*p"));
    let b = model2(&dir, "b", "n*p");
    let args = ["crossover", &a, &b, "--cells", "3", "--range", "n=1..12"];
    let text = stdout(&args);
    assert!(
        text.contains("a is faster in places for") && text.contains("b is faster in places for"),
        "{text}"
    );
    assert!(
        text.contains(
            "  p=8: A and B in turn from 1 to 12 (12 sides); crossing: 11 crossings from n=1.5 to n=11.5\n"
        ),
        "{text}"
    );
    // Along n alone, the same.
    let along = stdout(&[
        "crossover",
        &a,
        &b,
        "--var",
        "n",
        "--at",
        "p=8",
        "--range",
        "n=1..12",
    ]);
    for said in [
        "a is faster in places for all n from 1 to 12; b is faster in places for all n from 1 to 12.",
        "crossing   at 11 values of n from 1.5 to 11.5; untested (rests on models)\n",
        "n from 1 to 12                 A (a) faster and B (b) faster in turn (12 sides) (rests on models)\n",
    ] {
        assert!(along.contains(said), "{along}\nexpected: {said}");
    }
    // The JSON keeps every crossing.
    let doc = json(&args);
    let at_8: Vec<f64> = doc["boundary"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| (b["p"].as_f64().unwrap() - 8.0).abs() < 1e-9)
        .map(|b| b["n"].as_f64().unwrap())
        .collect();
    assert_eq!(at_8.len(), 11, "{doc}");
    for (k, n) in at_8.iter().enumerate() {
        assert!((n - (k as f64 + 1.5)).abs() < 1e-6, "{at_8:?}");
    }
}

#[test]
fn a_formula_with_floor_crosses_at_its_steps_and_a_pole_is_still_refused() {
    // T_A - T_B = (1 - 2 s) p with s = n - 2 floor(n/2): it crosses zero smoothly at every
    // 2k + 0.5 and jumps from -3p to p at every even n. The jumps were refused as "a division
    // by zero or a jump"; a formula with floor or ceil steps there, as a PACE model does.
    let dir = scratch("crossover-floor");
    let a = model2(&dir, "a", "(n + 1 - 2*(n - 2*floor(n/2)))*p");
    let b = model2(&dir, "b", "n*p");
    let along = [
        "crossover",
        &a,
        &b,
        "--var",
        "n",
        "--at",
        "p=8",
        "--range",
        "n=1..12",
    ];
    let found: Vec<f64> = roots(&json(&along)).iter().map(|r| r.0).collect();
    let expected = [2.0, 2.5, 4.0, 4.5, 6.0, 6.5, 8.0, 8.5, 10.0, 10.5, 12.0];
    assert_eq!(found.len(), expected.len(), "{found:?}");
    for (f, e) in found.iter().zip(expected) {
        assert!((f - e).abs() < 1e-6, "{found:?}");
    }
    // Without floor or ceil, a sign change through a pole is still an error.
    let pole = model2(&dir, "pole", "n*p + p/(n - 5.3)");
    let e = error_of(&[
        "crossover",
        &pole,
        &b,
        "--var",
        "n",
        "--at",
        "p=8",
        "--range",
        "n=1..12",
    ]);
    assert!(e.contains("a division by zero or a jump"), "{e}");
}

fn runs(name: &str, f: impl Fn(f64) -> f64) -> String {
    let mut text = String::new();
    for (i, n) in [32.0, 48.0, 64.0, 96.0, 128.0, 192.0, 256.0]
        .iter()
        .enumerate()
    {
        let wobble = 1.0 + 0.02 * (((i * 5) % 7) as f64 - 3.0) / 3.0;
        text += &format!("impl={name} p=1 n={n} pc={}\n", f(*n) * wobble);
    }
    text
}

#[test]
fn fitted_models_give_bands() {
    let dir = scratch("crossover-fitted");
    let data = write(
        &dir,
        "runs.dat",
        &(runs("sq", |n| n * n) + &runs("lin", |n| 100.0 * n)),
    );
    let data = path(data);
    let mut models = Vec::new();
    for (name, shape) in [("sq", "pc:n=n^2"), ("lin", "pc:n=n")] {
        let out = path(dir.join(format!("{name}.toml")));
        let _ = std::fs::remove_file(&out);
        let where_ = format!("impl={name}");
        stdout(&[
            "model", &data, "--where", &where_, "--cat", "pc", "--shape", shape, "--out", &out,
        ]);
        models.push(out);
    }
    let doc = json(&["crossover", &models[0], &models[1], "--var", "n"]);
    assert_eq!(doc["intervals"], true);
    assert_eq!(doc["interval_basis"]["A"], "fitted coefficients");
    assert_eq!(doc["interval_basis"]["B"], "fitted coefficients");
    let m = &doc["meetings"][0];
    let x = m["at"].as_f64().unwrap();
    assert!((x - 100.0).abs() < 5.0, "{m}");
    let (lo, hi) = (
        m["band"]["low"].as_f64().unwrap(),
        m["band"]["high"].as_f64().unwrap(),
    );
    assert!(lo < x && x < hi && lo > 32.0 && hi < 256.0, "{m}");
    assert_eq!(m["significant"], true, "{m}");
    let sides: Vec<(String, bool)> = doc["sides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["winner"].as_str().unwrap().to_string(),
                s["significant"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        sides,
        [
            ("A".to_string(), true),
            ("tie".to_string(), false),
            ("B".to_string(), true)
        ]
    );
    assert_eq!(doc["sides"][1]["from"], m["band"]["low"]);
    assert_eq!(doc["sides"][1]["to"], m["band"]["high"]);
    let text = stdout(&["crossover", &models[0], &models[1], "--var", "n"]);
    assert!(
        text.contains("cannot be told apart at 90% for n from"),
        "{text}"
    );
    assert!(text.contains("; the winner changes at 90%"), "{text}");
    assert!(text.contains("A (sq) wins at 90%, T_B/T_A up to"), "{text}");
    assert!(
        text.contains("cannot be told apart at 90% (T_A = "),
        "{text}"
    );
    // The verdict names the band as the undecided stretch, on runnable values: n runs between
    // whole numbers, so each stretch is said on the integers inside it (docs/comparing.md).
    let verdict = text.lines().find(|l| l.starts_with("verdict: ")).unwrap();
    assert!(lo.fract() != 0.0 && hi.fract() != 0.0, "{lo} {hi}");
    assert_eq!(
        verdict,
        format!(
            "verdict: At 90% confidence in the fitted coefficients alone, at p = 1: sq is faster for n ≤ {}; lin is faster for \
             n ≥ {}. For n from {} to {} these runs cannot tell them apart.",
            lo.floor(),
            hi.ceil(),
            lo.ceil(),
            hi.floor()
        ),
        "{text}"
    );
    // The map of the same pair names the same verdicts: one factor free, so --var n is
    // implied; the CSV carries significance per side.
    let csv = stdout(&["crossover", &models[0], &models[1], "--format", "csv"]);
    assert!(
        csv.contains(",crossing,") && csv.contains(",true,"),
        "{csv}"
    );
}

/// The `model error:` line of a crossover's text and sq's error on it, %.
fn sq_error(text: &str) -> (&str, f64) {
    let line = text
        .lines()
        .find(|l| l.starts_with("model error: "))
        .unwrap();
    let sq = line["model error: sq ±".len()..]
        .split('%')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (line, sq)
}

/// `--data` adds each model's error on its validation runs (`role=validate`) to the
/// intervals: sq measured 30% slower than it predicts on two points is off by 1/1.3 - 1 =
/// -23.1% on both (RMS 23.1%), lin by nothing; the undecided band around the crossing widens.
#[test]
fn validation_runs_widen_the_verdict() {
    let dir = scratch("crossover-validated");
    let data = path(write(
        &dir,
        "runs.dat",
        &(runs("sq", |n| n * n) + &runs("lin", |n| 100.0 * n)),
    ));
    let mut models = Vec::new();
    for (name, shape) in [("sq", "pc:n=n^2"), ("lin", "pc:n=n")] {
        let out = path(dir.join(format!("{name}.toml")));
        let _ = std::fs::remove_file(&out);
        let where_ = format!("impl={name}");
        stdout(&[
            "model", &data, "--where", &where_, "--cat", "pc", "--shape", shape, "--out", &out,
        ]);
        models.push(out);
    }
    let mut rows = String::new();
    for n in [64.0_f64, 181.0] {
        rows += &format!("impl=sq role=validate p=1 n={n} pc={}\n", 1.3 * n * n);
        rows += &format!("impl=lin role=validate p=1 n={n} pc={}\n", 100.0 * n);
        // Rows the models were built from do not count.
        rows += &format!("impl=sq role=model p=1 n={n} pc={}\n", 9.0 * n * n);
    }
    let validation = path(write(&dir, "validation.dat", &rows));
    let band = |extra: &[&str]| {
        let mut args = vec!["crossover", &models[0], &models[1], "--var", "n"];
        args.extend(extra);
        let doc = json(&args);
        let m = &doc["meetings"][0]["band"];
        (m["low"].as_f64().unwrap(), m["high"].as_f64().unwrap())
    };
    let (lo, hi) = band(&[]);
    let (wide_lo, wide_hi) = band(&["--data", &validation]);
    assert!(
        wide_lo < lo && wide_hi > hi,
        "{lo}..{hi} -> {wide_lo}..{wide_hi}"
    );

    let text = stdout(&[
        "crossover",
        &models[0],
        &models[1],
        "--var",
        "n",
        "--data",
        &validation,
    ]);
    let (line, sq) = sq_error(&text);
    assert!((sq - 23.1).abs() < 0.6, "{line}");
    assert!(
        line.contains(", lin ±") && line.contains("(2 validation points)"),
        "{line}"
    );
    assert!(
        text.contains(
            "verdict: At 90% confidence, the models' validated errors included, at p = 1: "
        ),
        "{text}"
    );
    // Without --data the verdict says what its intervals leave out.
    let plain = stdout(&["crossover", &models[0], &models[1], "--var", "n"]);
    assert!(plain.contains("model error: not included"), "{plain}");
    // lin's validation runs at one point give it no error: the model-error line and the
    // verdict say whose error the intervals hold.
    let one: String = rows
        .lines()
        .filter(|l| !(l.starts_with("impl=lin") && l.contains("n=181")))
        .map(|l| format!("{l}\n"))
        .collect();
    let one = path(write(&dir, "one.dat", &one));
    let text = stdout(&[
        "crossover",
        &models[0],
        &models[1],
        "--var",
        "n",
        "--data",
        &one,
    ]);
    assert!(
        text.contains("validation points), lin none (validation runs at fewer than two points)"),
        "{text}"
    );
    assert!(
        text.contains("verdict: At 90% confidence, sq's validated error included (lin has none)"),
        "{text}"
    );

    // A datafile without a role column checks no model unless the rows are named: said on
    // standard error (it was an error, a dead end for a user's own runs, none marked for
    // validation, whose runs decide where both measured: tests/measured.rs).
    let unmarked = path(write(
        &dir,
        "unmarked.dat",
        &rows
            .replace(" role=validate", "")
            .replace(" role=model", ""),
    ));
    let out = lca()
        .args([
            "crossover",
            &models[0],
            &models[1],
            "--var",
            "n",
            "--data",
            &unmarked,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.starts_with("note: ")
            && stderr.contains("unmarked.dat has no role column, so no rows check the models")
            && stderr.contains("--validate-where"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(said.contains("model error: not included"), "{said}");
    // Named, the 9 n^2 rows count too: sq's measured means are 5.15 n^2, 1/5.15 - 1 = -80.6%.
    let named = stdout(&[
        "crossover",
        &models[0],
        &models[1],
        "--var",
        "n",
        "--data",
        &unmarked,
        "--validate-where",
        "n>=64",
    ]);
    let (line, sq) = sq_error(&named);
    assert!((sq - 80.6).abs() < 0.6, "{line}");
}

/// Rows profiled from `pp whatif`'s predicted logs carry a `predicted` column: the model
/// counts them, its file keeps them, and the crossover says the answer rests on them.
#[test]
fn a_verdict_says_what_rests_on_predicted_runs() {
    let dir = scratch("crossover-predicted");
    let row = |name: &str, p: u32, li: f64, predicted: bool| {
        let mark = if predicted {
            format!(" predicted=demand:cpu predicted_from={name}{p}.log")
        } else {
            String::new()
        };
        format!("impl={name} p={p} n=10 pc=10 li={li} ip=0 sl=0 cl=0 rc=0{mark}\n")
    };
    let mut text = String::new();
    for (p, replicate) in [1u32, 2, 4, 8].iter().flat_map(|p| [(*p, 0.0), (*p, 0.1)]) {
        text += &row("a", p, p as f64 - 1.0 + replicate, p >= 4);
        text += &row("b", p, 2.0 * (p as f64 - 1.0) + replicate, false);
    }
    let data = path(write(&dir, "runs.dat", &text));
    let mut models = Vec::new();
    for name in ["a", "b"] {
        let out = path(dir.join(format!("{name}.toml")));
        let _ = std::fs::remove_file(&out);
        let summary = stdout(&[
            "model",
            &data,
            "--where",
            &format!("impl={name}"),
            "--cat",
            "pc,li",
            "--out",
            &out,
        ]);
        let note =
            "predicted, not measured: 4 of 8 rows predicted (pp whatif demand:cpu; p from 4 to 8)";
        assert_eq!(summary.contains(note), name == "a", "{summary}");
        models.push(out);
    }
    let file = std::fs::read_to_string(&models[0]).unwrap();
    assert!(
        file.contains("[provenance.predicted]\nrows = 4\nof = 8\n"),
        "{file}"
    );
    let note = "It rests on predicted runs, not measured ones: a's model: 4 of 8 rows predicted \
                (pp whatif demand:cpu; p from 4 to 8).";
    let text = stdout(&["crossover", &models[0], &models[1], "--var", "p"]);
    let lines: Vec<&str> = text.lines().collect();
    let verdict = lines
        .iter()
        .position(|l| l.starts_with("verdict: "))
        .unwrap();
    assert_eq!(lines[verdict + 1], format!("predicted: {note}"), "{text}");
    let doc = json(&["crossover", &models[0], &models[1], "--var", "p"]);
    assert_eq!(doc["predicted"], note);
    // Measured models say nothing of predictions.
    let plain = stdout(&["crossover", &models[1], &models[1], "--var", "p"]);
    assert!(!plain.contains("rests on predicted"), "{plain}");
}

#[test]
fn verdicts_without_a_crossing() {
    let dir = scratch("crossover-verdicts");
    let sq = model(&dir, "sq", "n^2");
    let double = model(&dir, "double", "2*n^2");
    let verdict = |a: &str, b: &str| {
        let text = stdout(&["crossover", a, b, "--var", "n"]);
        text.lines()
            .find_map(|l| l.strip_prefix("verdict: ").map(str::to_string))
            .unwrap_or_else(|| panic!("{text}"))
    };
    assert_eq!(
        verdict(&sq, &double),
        "Comparing means only (models without intervals: untested), at p = 1: sq is faster \
         for all n from 32 to 1024."
    );
    assert_eq!(
        verdict(&double, &sq),
        "Comparing means only (models without intervals: untested), at p = 1: sq is faster \
         for all n from 32 to 1024."
    );
    let same = path(write(
        &dir,
        "same.toml",
        &std::fs::read_to_string(&sq).unwrap(),
    ));
    assert_eq!(
        verdict(&sq, &same),
        "sq and same predict the same time for all n from 32 to 1024 at p = 1."
    );
}

/// A model of `n` (p held at 1) with one category, one coefficient and statistics, so that
/// its predictions have intervals: `pc = value * term`, the coefficient's variance given.
fn fitted(
    dir: &Path,
    name: &str,
    term: &str,
    value: f64,
    variance: f64,
    noise: (&str, f64),
) -> String {
    let (weighting, residual_sd) = noise;
    let text = format!(
        "format = 1\nname = \"{name}\"\nfactors = [\"n\"]\nheld = {{ p = 1 }}\n\
         range = {{ n = [1.0, 100.0] }}\n\n[[category]]\nname = \"pc\"\nformula = \"{term}\"\n\n\
         [category.statistics]\nmethod = \"linear\"\nweighting = \"{weighting}\"\n\
         observations = 10\ndof = 9\nsse = 1.0\nsst = 10.0\nr2 = 0.9\nadj_r2 = 0.9\ncv = 0.1\n\
         residual_sd = {residual_sd:?}\ncovariance = [[{variance:?}]]\n\n\
         [[category.coefficient]]\nname = \"{term}\"\nvalue = {value:?}\n"
    );
    path(write(dir, &format!("{name}.toml"), &text))
}

/// The first suggested run: (implementation, n).
fn first_run(a: &str, b: &str, overhead: &str) -> (String, f64) {
    let doc = json(&[
        "crossover",
        a,
        b,
        "--var",
        "n",
        "--suggest",
        "3",
        "--run-overhead",
        overhead,
    ]);
    let run = &doc["next_runs"]["runs"][0];
    let undecided = doc["next_runs"]["undecided"].as_f64().unwrap();
    let after = run["undecided_after"].as_f64().unwrap();
    assert!(undecided > 0.0 && after <= undecided, "{doc}");
    (
        run["name"].as_str().unwrap().to_string(),
        run["at"]["n"].as_f64().unwrap(),
    )
}

#[test]
fn the_suggested_run_is_the_known_best() {
    // T_A = c g(n) with c = 1 uncertain, T_B a constant known almost exactly; they cross
    // at n = 50, undecided around it. A run of B tells nothing new; a run of A at n adds the
    // information g(n)^2 / s(n)^2 about c. The candidates are tried from n = 1 up, so a
    // criterion that ignored cost or information would pick n = 1 (the first of equals).
    let dir = scratch("crossover-suggest");
    // Relative noise, s(n) = 0.1 c g(n): every run of A tells the same about c, so the
    // cheapest is best: with g = 200 - n and no overhead per run, the largest n.
    let b = fitted(&dir, "b", "1", 150.0, 1e-12, ("absolute", 1e-6));
    let relative = fitted(&dir, "a", "200 - n", 1.0, 0.01, ("relative", 0.1));
    assert_eq!(first_run(&relative, &b, "0"), ("a".to_string(), 100.0));
    // Absolute noise and g = n: a run at n tells n^2 / s^2, most at the largest n; with a
    // large overhead per run every run costs about the same, so the most informative is best.
    let b = fitted(&dir, "b", "1", 50.0, 1e-12, ("absolute", 1e-6));
    let absolute = fitted(&dir, "a", "n", 1.0, 0.01, ("absolute", 5.0));
    assert_eq!(
        first_run(&absolute, &b, "1000000"),
        ("a".to_string(), 100.0)
    );
    // The same in the other order: the run is still of the uncertain one.
    assert_eq!(
        first_run(&b, &absolute, "1000000"),
        ("a".to_string(), 100.0)
    );
    // Nothing to decide without intervals.
    let hand = model(&dir, "hand", "n");
    let e = error_of(&["crossover", &hand, &b, "--var", "n", "--suggest", "2"]);
    assert!(e.contains("has no intervals"), "{e}");
    let e = error_of(&["crossover", &absolute, &b, "--var", "n", "--suggest", "0"]);
    assert!(
        e.contains("--suggest 0: give a number of runs from 1 to 100"),
        "{e}"
    );
}

#[test]
fn bad_input_gets_one_line_errors() {
    let dir = scratch("crossover-bad");
    let sq = model(&dir, "sq", "n^2");
    let a2 = model2(&dir, "a", "n*p");
    let b2 = model2(&dir, "b", "50 + 0.1*n*p");
    let missing = path(dir.join("missing.toml"));
    let broken = path(write(&dir, "broken.toml", "format = 1\nfactors = [\"n\"\n"));

    let e = error_of(&["crossover", &sq, &a2, "--var", "n"]);
    assert_eq!(
        e.trim_end(),
        "Error: the models are over different factors: sq has (n), a has (n, p)"
    );
    let e = error_of(&["crossover", &missing, &sq, "--var", "n"]);
    assert!(
        e.contains("missing.toml: cannot read the model file"),
        "{e}"
    );
    let e = error_of(&["crossover", &sq, &broken, "--var", "n"]);
    assert!(e.contains("broken.toml:"), "{e}");
    let e = error_of(&["crossover", &a2, &b2, "--var", "n"]);
    assert_eq!(
        e.trim_end(),
        "Error: factor 'p' is neither varied nor fixed: give its value, e.g. --at p=VALUE"
    );
    let e = error_of(&["crossover", &a2, &b2, "--var", "m", "--at", "p=2"]);
    assert_eq!(
        e.trim_end(),
        "Error: --var m: 'm' is not a factor of the models (n, p)"
    );
    let e = error_of(&["crossover", &a2, &b2, "--var", "n", "--at", "q=2"]);
    assert_eq!(
        e.trim_end(),
        "Error: --at q=2: 'q' is not a factor of the models (n, p)"
    );
    let e = error_of(&["crossover", &sq, &sq, "--var", "n", "--at", "p=4"]);
    assert!(e.contains("holds p at 1 (it is not a factor)"), "{e}");
    let e = error_of(&[
        "crossover",
        &a2,
        &b2,
        "--var",
        "n",
        "--at",
        "p=2",
        "--range",
        "n=5..1",
    ]);
    assert!(e.starts_with("Error: --range 'n=5..1': column"), "{e}");
    let e = error_of(&[
        "crossover",
        &a2,
        &b2,
        "--var",
        "n",
        "--at",
        "p=2",
        "--range",
        "p=1..4",
    ]);
    assert!(e.contains("'p' is fixed with --at"), "{e}");
    let e = error_of(&["crossover", &a2, &b2, "--at", "n=3,p=2"]);
    assert!(e.contains("(free: none)"), "{e}");
    let e = error_of(&["crossover", &sq, &sq, "--format", "xml"]);
    assert!(
        e.contains("--format: invalid value 'xml' (expected text, json or csv)"),
        "{e}"
    );
}

#[test]
fn a_range_outside_the_data_is_flagged_not_refused() {
    let dir = scratch("crossover-extrapolation");
    let sq = model(&dir, "sq", "n^2");
    let lin = model(&dir, "lin", "100*n");
    let text = stdout(&[
        "crossover",
        &sq,
        &lin,
        "--var",
        "n",
        "--range",
        "n=2000..4000",
    ]);
    assert!(
        text.contains(
            "extrapolation: sq is fitted on n from 32 to 1024; n from 2000 to 4000 is outside it"
        ),
        "{text}"
    );
    assert!(text.contains("extrapolation: lin is fitted on n"), "{text}");
    assert!(text.contains("no crossover in the range"), "{text}");
}

#[test]
fn p_between_two_whole_numbers_is_compared_at_those_two() {
    // A study of p = "2,3" (issue 33): `p` counts processors, so its map has the rows p = 2
    // and p = 3 and its verdict names no p between them, although the two ends are 1 apart
    // (docs/comparing.md, "Runnable values"). T_A = 3, T_B = 7.5 / p: they meet at p = 2.5.
    let dir = scratch("crossover-p-2-3");
    let model = |name: &str, pc: &str| {
        let text = format!(
            "format = 1\nname = \"{name}\"\nfactors = [\"n\", \"p\"]\n\
             range = {{ n = [1.0, 100.0], p = [2.0, 3.0] }}\n\n\
             [[category]]\nname = \"pc\"\nformula = \"{pc}\"\n"
        );
        path(write(&dir, &format!("{name}.toml"), &text))
    };
    let (a, b) = (model("a", "3*p"), model("b", "7.5"));
    let map = json(&["crossover", &a, &b]);
    assert_eq!(map["up"]["factor"], "p");
    assert_eq!(map["up_values"], serde_json::json!([2.0, 3.0]));
    let text = stdout(&["crossover", &a, &b]);
    let verdict = text.lines().find(|l| l.starts_with("verdict: ")).unwrap();
    assert!(
        verdict.contains("a is faster for all n from 1 to 100 at p = 2")
            && verdict.contains("b is faster for all n from 1 to 100 at p = 3")
            && !verdict.contains("2.5"),
        "{verdict}"
    );
    let along = stdout(&["crossover", &a, &b, "--var", "p", "--at", "n=10"]);
    let verdict = along.lines().find(|l| l.starts_with("verdict: ")).unwrap();
    assert!(
        verdict.ends_with("a is faster for p = 2; b is faster for p = 3."),
        "{verdict}"
    );
    // The report's map labels p at 2 and 3 only (it labelled 2.1, 2.2, ... 2.9 too).
    let report = dir.join("report");
    stdout(&["report", &a, &b, "--out", report.to_str().unwrap()]);
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let map = &html[html.find("<svg").unwrap()..];
    let map = &map[..map.find("</svg>").unwrap()];
    let labels: Vec<&str> = map
        .split("</text>")
        .filter_map(|t| t.rsplit('>').next())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    assert!(labels.contains(&"2") && labels.contains(&"3"), "{labels:?}");
    assert!(
        !labels
            .iter()
            .any(|l| l.parse::<f64>().is_ok_and(|v| v > 2.0 && v < 3.0)),
        "{labels:?}"
    );
    // Another factor from 2 to 3 may be a fraction: its map is sampled between them.
    let other = |name: &str, pc: &str| {
        let text = format!(
            "format = 1\nname = \"{name}\"\nfactors = [\"n\", \"q\"]\nheld = {{ p = 1 }}\n\
             range = {{ n = [1.0, 100.0], q = [2.0, 3.0] }}\n\n\
             [[category]]\nname = \"pc\"\nformula = \"{pc}\"\n"
        );
        path(write(&dir, &format!("{name}.toml"), &text))
    };
    let (a, b) = (other("qa", "3*q"), other("qb", "7.5"));
    let map = json(&["crossover", &a, &b]);
    assert!(map["up_values"].as_array().unwrap().len() > 2, "{map}");
}

#[test]
fn a_hand_over_to_the_difference_model_across_zero_is_a_step() {
    // The README's `lca study` once gave these runs (tests/data/handover.dat). With --data, the
    // difference model decides where its interval is narrower than the two models'; at p = 2
    // it takes over at n = 34, where the two models and it give T_A - T_B opposite signs. The
    // crossover stopped there with "changes sign ... without the models meeting", and the
    // study printed no verdict with the models' validated errors and wrote no crossover.txt.
    let dir = scratch("crossover-handover");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/handover.dat");
    let data = data.to_str().unwrap();
    let models = support::model_each(&dir, data, &["dp", "tp"], ",role=model", &[]);
    let (a, b) = (models[0].as_str(), models[1].as_str());
    let along = stdout(&[
        "crossover",
        a,
        b,
        "--data",
        data,
        "--var",
        "n",
        "--at",
        "p=2",
    ]);
    let step = along
        .lines()
        .find(|l| l.starts_with("crossing ") && l.contains("(a step)"))
        .unwrap_or_else(|| panic!("{along}"));
    assert!(step.contains("at n = 34."), "{step}");
    let map = stdout(&["crossover", a, b, "--data", data]);
    let verdict = map.lines().find(|l| l.starts_with("verdict: ")).unwrap();
    assert!(
        verdict.contains("the models' validated errors included"),
        "{verdict}"
    );
}
