//! End-to-end tests of `lca model`, `lca predict` and `lca validate`, run as a user runs them.

mod support;

use std::path::PathBuf;

use support::{error_of, lca, stdout};
use test_support::{scratch, write};

/// Category values of a known model of (n, p): li and rc multiplicative (rc with a
/// threshold at p = 6), cl additive; `wobble` is a deterministic ±1% disturbance.
fn row(implementation: &str, n: f64, p: f64, wobble: f64) -> String {
    let nlogn = n * n.log2();
    let cats = [
        ("pc", 3e-8 * n * nlogn + 0.002),
        ("li", 2e-9 * nlogn * p * p.sqrt()),
        ("ip", 0.004 + 0.003 * p),
        ("sl", 0.0005 * p),
        ("cl", 4e-9 * n * n + 0.002 * p),
        ("rc", 1e-4 + 1e-9 * n * n * (p - 6.0).max(0.0)),
    ];
    let cats: Vec<(&str, f64)> = cats.iter().map(|(c, v)| (*c, v * wobble)).collect();
    let wall = cats.iter().map(|(_, v)| v).sum::<f64>() / p;
    let mut line = format!("impl={implementation} n={n} p={p} wall={wall}");
    for (c, v) in cats {
        line += &format!(" {c}={v}");
    }
    line + "\n"
}

/// The edges design of `lca design --factor n=32..1024:log2 --factor p=2..16:lin:8 --edges 3`
/// for two implementations, and validation runs away from the edges.
fn datafiles(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let plan = lca()
        .args([
            "design",
            "--factor",
            "n=32..1024:log2",
            "--factor",
            "p=2..16:lin:8",
        ])
        .args(["--edges", "3"])
        .output()
        .unwrap();
    let plan = String::from_utf8(plan.stdout).unwrap();
    let mut text = String::new();
    for (i, line) in plan.lines().skip(1).enumerate() {
        let v: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let wobble = 1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0) / 2.0;
        text += &row("dp", v[2], v[3], wobble);
        text += &row("tp", v[2], v[3], 1.0 / wobble);
    }
    let mut validation = String::new();
    for n in [48.0, 100.0, 300.0, 700.0] {
        for p in [3.0, 7.0, 11.0, 15.0] {
            validation += &row("dp", n, p, 1.0);
        }
    }
    (
        write(dir, "runs.dat", &text),
        write(dir, "validation.dat", &validation),
    )
}

#[test]
fn model_predict_validate() {
    let dir = scratch("model");
    let (runs, validation) = datafiles(&dir);
    let model = dir.join("dp.toml");
    let _ = std::fs::remove_file(&model);
    let (runs, model_s) = (runs.to_str().unwrap(), model.to_str().unwrap());

    let summary = stdout(&["model", runs, "--where", "impl=dp", "--out", model_s]);
    assert!(
        summary.contains("performance model 'dp': 16 runs"),
        "{summary}"
    );
    assert!(
        summary.contains("li  = 1 + n*log2(n)*p*sqrt(p)"),
        "{summary}"
    );
    assert!(summary.contains("cl  = 1 + n^2 + p"), "{summary}");
    assert!(
        summary.contains("rc  = 1 + n^2*max(p-$theta_p,0)"),
        "{summary}"
    );
    assert!(summary.contains("multiplicative: interaction"), "{summary}");
    // Without --out the model goes to standard output: the same bytes as the file.
    let printed = stdout(&["model", runs, "--where", "impl=dp"]);
    assert_eq!(printed, std::fs::read_to_string(&model).unwrap());
    // An existing file is not replaced.
    let e = error_of(&["model", runs, "--where", "impl=dp", "--out", model_s]);
    assert!(e.contains("exists; not replaced"), "{e}");
    // Said before the runs are read and fitted (a datafile that is not there).
    let e = error_of(&["model", "no-such.dat", "--out", model_s]);
    assert!(e.contains("exists; not replaced"), "{e}");

    let at = stdout(&[
        "predict",
        model_s,
        "--at",
        "n=512,p=12",
        "--at",
        "n=4096,p=12",
    ]);
    assert!(at.contains("at n=512 p=12\n  T_p "), "{at}");
    assert!(
        at.contains("at n=4096 p=12  (extrapolation: n outside the fitted range)"),
        "{at}"
    );
    let grid = stdout(&[
        "predict",
        model_s,
        "--grid",
        "n=32..1024:log2,p=2,4,8",
        "--format",
        "csv",
    ]);
    assert_eq!(grid.lines().count(), 1 + 6 * 3, "{grid}");
    assert!(
        grid.starts_with("n,p,T_p,T_p_low,T_p_high,pc,pc_half_width"),
        "{grid}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&[
        "predict", model_s, "--at", "p=4,n=64", "--format", "json",
    ]))
    .unwrap();
    let t = json["predictions"][0]["T_p"]["value"].as_f64().unwrap();
    let expected = row("dp", 64.0, 4.0, 1.0);
    let wall: f64 = expected
        .split(' ')
        .find_map(|kv| kv.strip_prefix("wall="))
        .unwrap()
        .parse()
        .unwrap();
    assert!((t - wall).abs() / wall < 0.01, "{t} vs {wall}");
    // A fractional processor count is predicted, and said to be a point no run can measure.
    let note = |args: &[&str]| {
        let out = lca().args(args).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(String::from_utf8(out.stdout).unwrap().contains("T_p"));
        String::from_utf8(out.stderr).unwrap()
    };
    let e = note(&["predict", model_s, "--at", "n=512,p=2.5"]);
    assert_eq!(
        e,
        "note: p=2.5: p is not a whole number of processors, so no run can measure the prediction\n"
    );
    let e = note(&["predict", model_s, "--grid", "n=512,p=2,2.5,3"]);
    assert!(
        e.starts_with("note: 1 of the 3 points (the first p=2.5): "),
        "{e}"
    );
    assert_eq!(note(&["predict", model_s, "--at", "n=512,p=12"]), "");

    // The model's own selection (impl=dp) applies to the validation runs.
    let v = stdout(&[
        "validate",
        model_s,
        validation.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&v).unwrap();
    assert_eq!(v["points"].as_array().unwrap().len(), 16);
    let (mean, baseline) = (
        v["mean_error"].as_f64().unwrap(),
        v["baseline_mean_error"].as_f64().unwrap(),
    );
    assert!(mean < 0.02, "{mean}");
    assert!(baseline > 0.5, "{baseline}");
    let text = stdout(&["validate", model_s, validation.to_str().unwrap()]);
    assert!(text.contains("baseline: mean relative error"), "{text}");
}

#[test]
fn bad_input_gets_one_line_errors() {
    let dir = scratch("model-errors");
    let (runs, _) = datafiles(&dir);
    let runs = runs.to_str().unwrap();
    let model = dir.join("m.toml");
    let _ = std::fs::remove_file(&model);
    let model_s = model.to_str().unwrap();
    stdout(&["model", runs, "--where", "impl=dp", "--out", model_s]);

    let e = error_of(&["model", runs]);
    assert!(
        e.contains(
            "column 'impl' takes several values (dp, tp); model one of them with --where impl=VALUE"
        ),
        "{e}"
    );
    let e = error_of(&["predict", model_s, "--at", "n=512,q=3"]);
    assert!(
        e.contains("--at 'n=512,q=3': unknown factor 'q' (the model's factors: n, p)"),
        "{e}"
    );
    let e = error_of(&["predict", model_s, "--at", "n=512"]);
    assert!(e.contains("no value for factor 'p'"), "{e}");
    let e = error_of(&["predict", model_s]);
    assert!(e.contains("give a point"), "{e}");
    let e = error_of(&["model", runs, "--where", "impl=dp", "--shape", "li:q=q^2"]);
    assert!(
        e.contains("category 'li': a shape is given for 'q', which is not a factor"),
        "{e}"
    );
    let e = error_of(&[
        "model",
        runs,
        "--where",
        "impl=dp",
        "--combine",
        "li=sideways",
    ]);
    assert!(e.contains("unknown combination 'sideways'"), "{e}");
    let e = error_of(&["model", runs, "--where", "impl=dp", "--shape", "li"]);
    assert!(e.contains("expected CAT:FACTOR=EXPR"), "{e}");

    // A design that cannot estimate the model: the corners alone for a threshold.
    let corners: String = std::fs::read_to_string(runs)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("impl=dp"))
        .take(4)
        .map(|l| format!("{l}\n"))
        .collect();
    let corners = write(&dir, "corners.dat", &corners);
    let e = error_of(&["model", corners.to_str().unwrap()]);
    assert!(
        e.contains(
            "category 'rc': these runs cannot estimate it: model `1 + n^2*max(p-$theta_p,0)`: terms"
        ),
        "{e}"
    );

    let broken = write(
        &dir,
        "broken.toml",
        "format = 1\nfactors = [\"n\", \"p\"]\n\n[[category]]\nname = \"pc\"\n",
    );
    let e = error_of(&["predict", broken.to_str().unwrap(), "--at", "n=1,p=1"]);
    assert!(e.contains("broken.toml:4: missing field `formula`"), "{e}");
    let e = error_of(&[
        "predict",
        dir.join("absent.toml").to_str().unwrap(),
        "--at",
        "n=1,p=1",
    ]);
    assert!(e.contains("absent.toml: cannot read the model file"), "{e}");
}

#[test]
fn points_outside_a_models_domain_are_one_line_errors() {
    // The README's models of the bundled 2D FFT runs: pc = 1 + n^2*log2(n) has no value at
    // n = 0, and T_p divides by p.
    let dir = scratch("model-domain");
    let data = datasets::path("fft2d.dat");
    let data = data.to_str().unwrap();
    let mut models = Vec::new();
    for name in ["dp", "tp"] {
        let out = dir.join(format!("{name}.toml"));
        let _ = std::fs::remove_file(&out);
        let where_ = format!("impl={name},role=model");
        stdout(&[
            "model",
            data,
            "--where",
            &where_,
            "--out",
            out.to_str().unwrap(),
        ]);
        models.push(out.to_str().unwrap().to_string());
    }
    let dp = models[0].as_str();
    let e = error_of(&["predict", dp, "--at", "n=0,p=4"]);
    assert_eq!(
        e.trim_end(),
        "Error: dp: cannot predict at n=0, p=4: category pc: log2(n) is -inf (a logarithm of a \
         value <= 0) at n=0 (term `n^2*log2(n)`)"
    );
    let e = error_of(&["predict", dp, "--at", "n=256,p=0"]);
    assert_eq!(
        e.trim_end(),
        "Error: dp: cannot predict at n=256, p=0: T_p = (sum of the categories) / p needs p > 0, \
         and p=0"
    );
    // A grid with bad points is refused whole, naming the first and counting them.
    let e = error_of(&["predict", dp, "--grid", "n=0,256,512", "--grid", "p=0,4"]);
    assert!(
        e.starts_with(
            "Error: 4 of the 6 points are outside the model's domain, the first: dp: cannot \
             predict at n=0, p=0: "
        ),
        "{e}"
    );
    stdout(&["predict", dp, "--grid", "n=256,512", "--grid", "p=2,4"]);
    // Crossovers: a fixed value, and a range that reaches a bad point.
    let e = error_of(&["crossover", dp, &models[1], "--var", "p", "--at", "n=0"]);
    assert!(
        e.starts_with("Error: dp: cannot predict at n=0, p=2: "),
        "{e}"
    );
    let e = error_of(&[
        "crossover",
        dp,
        &models[1],
        "--var",
        "p",
        "--at",
        "n=256",
        "--range",
        "p=0..8",
    ]);
    assert!(
        e.starts_with("Error: dp: cannot predict at n=256, p=0: "),
        "{e}"
    );
    let e = error_of(&["crossover", dp, &models[1], "--range", "n=0..512"]);
    assert!(e.contains("cannot predict at n=0, p=2"), "{e}");
    // Validation runs outside the domain name their line.
    let runs = write(&dir, "runs.dat", "impl=dp n=0 p=4 iters=100 wall=0.01\n");
    let e = error_of(&["validate", dp, runs.to_str().unwrap(), "--where", "impl=dp"]);
    assert!(
        e.contains("runs.dat:1: dp: cannot predict at n=0, p=4"),
        "{e}"
    );
    // A model file with a number no prediction can use is refused on load.
    let text = std::fs::read_to_string(dp).unwrap();
    let broken = text.replacen("residual_sd = ", "residual_sd = -", 1);
    let broken = write(&dir, "broken.toml", &broken);
    let e = error_of(&["predict", broken.to_str().unwrap(), "--at", "n=256,p=4"]);
    assert!(
        e.contains("broken.toml: category 'pc': statistics: residual_sd = -"),
        "{e}"
    );
}

#[test]
fn where_takes_comparisons_and_lists() {
    let data = datasets::path("fft2d.dat");
    let data = data.to_str().unwrap();
    // The bundled runs: n in 32..512, p in 2..8, dp and tp, model and validation runs.
    let out = lca()
        .args([
            "model",
            data,
            "--where",
            "impl in dp,ep",
            "--where",
            "role!=validate,n<=256",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let summary = String::from_utf8(out.stderr).unwrap();
    assert!(
        summary.contains("where impl in dp,ep, role!=validate, n<=256"),
        "{summary}"
    );
    assert!(
        summary.contains("factors: n in [32, 256], p in [2, 8]"),
        "{summary}"
    );
    // The file keeps the conditions as written, and reads back.
    let model = String::from_utf8(out.stdout).unwrap();
    assert!(
        model.contains("where = [\"impl in dp,ep\", \"role!=validate\", \"n<=256\"]"),
        "{model}"
    );
    let e = error_of(&["model", data, "--where", "p<many"]);
    assert!(
        e.contains("condition 'p<many': expected a number after '<'"),
        "{e}"
    );
    let e = error_of(&["model", data, "--where", "p>8"]);
    assert!(
        e.contains("no rows with p > 8 (--where); p takes 2, 3, 5, 7, 8"),
        "{e}"
    );
}

#[test]
fn no_model_or_error_that_is_not_finite_is_written_or_printed() {
    let dir = scratch("model-non-finite");
    let fft = std::fs::read_to_string(datasets::path("fft2d.dat")).unwrap();
    // The first dp row's value replaced: (the field, the value).
    let with = |field: &str, value: &str| {
        let mut done = false;
        let text: Vec<String> = fft
            .lines()
            .map(|line| {
                if done || !line.starts_with("impl=dp ") {
                    return line.to_string();
                }
                done = true;
                line.split(' ')
                    .map(|t| match t.split_once('=') {
                        Some((k, _)) if k == field => format!("{k}={value}"),
                        _ => t.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        write(&dir, &format!("{field}.dat"), &(text.join("\n") + "\n"))
    };
    // sl = -1e308 overflows the sums of squares: the model was written, and nothing could
    // load it ("statistics: sse = inf must be a finite number").
    let data = with("sl", "-1e308");
    let model = dir.join("sl.toml");
    for out in [model.to_str().unwrap(), "-"] {
        let out = lca()
            .args([
                "model",
                data.to_str().unwrap(),
                "--where",
                "impl=dp,role=model",
            ])
            .args(["-o", out])
            .output()
            .unwrap();
        let e = test_support::one_line_error(&out, Some(1), &[]);
        assert!(
            e.contains(": not written: category 'sl': statistics: sse = inf must be a finite"),
            "{e}"
        );
        assert!(out.stdout.is_empty());
    }
    assert!(!model.exists());
    // wall = 0: the relative error was printed as "inf%" with exit 0.
    let good = dir.join("dp.toml");
    stdout(&[
        "model",
        datasets::path("fft2d.dat").to_str().unwrap(),
        "--where",
        "impl=dp,role=model",
        "-o",
        good.to_str().unwrap(),
    ]);
    let zero = with("wall", "0");
    let e = error_of(&[
        "validate",
        good.to_str().unwrap(),
        zero.to_str().unwrap(),
        "--where",
        "impl=dp,role=model",
    ]);
    assert!(
        e.contains("wall.dat:")
            && e.contains(
                ": wall = 0: a prediction is checked against a measured value other than 0"
            ),
        "{e}"
    );
}

/// Beyond the data `lca predict` widens `T_p` by the model's forward validation; a model file
/// without it (written before it existed) keeps its fits' interval and says it is not
/// calibrated there (docs/modelling.md#beyond-the-data).
#[test]
fn predictions_beyond_the_data_say_whether_they_are_calibrated() {
    let dir = scratch("model-beyond");
    let (runs, _) = datafiles(&dir);
    let model = dir.join("dp.toml");
    let _ = std::fs::remove_file(&model);
    let (runs, model_s) = (runs.to_str().unwrap(), model.to_str().unwrap());
    stdout(&["model", runs, "--where", "impl=dp", "--out", model_s]);
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(
        text.contains("\n[[extrapolation]]\nfactor = \"n\"\n"),
        "{text}"
    );
    let start = text.find("\n[[extrapolation]]").unwrap();
    let old = write(&dir, "old.toml", &format!("{}\n", &text[..start]));
    let old_s = old.to_str().unwrap();
    let t_p = |out: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with("T_p"))
            .unwrap()
            .to_string()
    };
    // Inside the data: the same interval, no note.
    let (now, then) = (
        stdout(&["predict", model_s, "--at", "n=256,p=8"]),
        stdout(&["predict", old_s, "--at", "n=256,p=8"]),
    );
    assert_eq!(now, then);
    // Beyond it: the old file says so. These runs follow their model's forms (±1%), so forward
    // validation finds no drift along n and the interval is the fits' own in both.
    let (now, then) = (
        stdout(&["predict", model_s, "--at", "n=4096,p=8"]),
        stdout(&["predict", old_s, "--at", "n=4096,p=8"]),
    );
    assert!(
        now.contains("(extrapolation: n outside the fitted range)\n"),
        "{now}"
    );
    assert!(
        then.contains(
            "(extrapolation: n outside the fitted range; the interval is not calibrated there)"
        ),
        "{then}"
    );
    assert!(
        text.contains("factor = \"n\"\nrelative_sd = 0.0\n"),
        "{text}"
    );
    assert_eq!(t_p(&now), t_p(&then));
}
