//! End-to-end tests for users coming from Extra-P: `lca model --response` on a datafile with a
//! sample-count and a text column, an Extra-P file modelled into one table and one model file,
//! and `lca crossover` of two response models in the response's units.

mod support;

use support::{error_of, lca};
use test_support::{scratch, write};

/// `latency = 5 + 0.25 p n` exactly, with a varying sample count `N` and host name.
fn latencies(dir: &std::path::Path) -> std::path::PathBuf {
    let mut text = String::from("p,n,N,host,latency\n");
    for p in [2, 4, 8, 16] {
        for n in [64, 256, 1024] {
            for (r, host) in ["a", "b"].iter().enumerate() {
                let latency = 5.0 + 0.25 * (p * n) as f64;
                text.push_str(&format!("{p},{n},{},{host},{latency}\n", 100 + r));
            }
        }
    }
    write(dir, "lat.csv", &text)
}

#[test]
fn a_response_with_a_count_and_a_text_column_is_modelled_in_its_units() {
    let dir = scratch("extrap-response");
    let data = latencies(&dir);
    let model = dir.join("lat.toml");
    let out = lca()
        .args(["model", data.to_str().unwrap(), "--response", "latency"])
        .args(["--factors", "p,n", "-o", model.to_str().unwrap(), "--force"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr, "factors: p, n; ignored columns: N, host\n");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("responses, each in its own units: latency"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(text.contains("\nkind = \"response\"\n"));
    // 5 + 0.25 * 32 * 64 = 517, not divided by p.
    let out = lca()
        .args([
            "predict",
            model.to_str().unwrap(),
            "--at",
            "p=32,n=64",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let value: f64 = row[5].parse().unwrap();
    assert!((value - 517.0).abs() < 1e-3, "{csv}");
    // Validated against the response column itself (not `wall`): 5 + 0.25 * 2 * 64 = 37.
    let out = lca()
        .args(["validate", model.to_str().unwrap(), data.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("     2        2       64       37.00       37.00     0.0%"),
        "{text}"
    );
    // Without --factors, the varying count N is a factor by the stated rule; host is ignored.
    let out = lca()
        .args(["model", data.to_str().unwrap(), "--response", "latency"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("factors (inferred): p, n, N; ignored columns: host\n"),
        "{stderr}"
    );
}

#[test]
fn response_options_refuse_what_they_cannot_do_in_one_line() {
    let dir = scratch("extrap-errors");
    let data = latencies(&dir);
    let data = data.to_str().unwrap();
    let e = error_of(&[
        "model",
        data,
        "--response",
        "latency",
        "--repetitions",
        "avg",
    ]);
    assert_eq!(
        e,
        "Error: --repetitions: invalid value 'avg' (expected all, median or mean)\n"
    );
    let e = error_of(&["model", data, "--response", "lat"]);
    assert!(e.starts_with("Error: "), "{e}");
    assert!(
        e.contains("unknown response 'lat'; the numeric columns are: p, n, N, latency"),
        "{e}"
    );
    let e = error_of(&[
        "model",
        data,
        "--response",
        "latency",
        "--factors",
        "p,host",
    ]);
    assert!(
        e.contains("lat.csv:2: field 'host': expected a number, found 'a'"),
        "{e}"
    );
}

const EXTRAP: &str = "\
PARAMETER p
PARAMETER n
POINTS ( 2 10 ) ( 4 10 ) ( 8 10 ) ( 16 10 ) ( 32 10 )
POINTS ( 2 20 ) ( 4 20 ) ( 8 20 ) ( 16 20 ) ( 32 20 )
POINTS ( 2 40 ) ( 4 40 ) ( 8 40 ) ( 16 40 ) ( 32 40 )
";

/// Two callpaths: `main` = 3 + 0.5 n log2(p), `main->solve` = 1 + 2 n, each twice per point.
fn extrap_file(dir: &std::path::Path) -> std::path::PathBuf {
    let mut text = String::from(EXTRAP);
    let points: Vec<(f64, f64)> = [10.0, 20.0, 40.0]
        .iter()
        .flat_map(|&n| [2.0, 4.0, 8.0, 16.0, 32.0].map(|p| (p, n)))
        .collect();
    text.push_str("REGION main\nMETRIC time\n");
    for (p, n) in &points {
        let v = 3.0 + 0.5 * n * f64::log2(*p);
        text.push_str(&format!("DATA {v} {v}\n"));
    }
    text.push_str("REGION main->solve\n");
    for (_, n) in &points {
        let v = 1.0 + 2.0 * n;
        text.push_str(&format!("DATA {v} {v}\n"));
    }
    write(dir, "exp.txt", &text)
}

#[test]
fn an_extrap_file_is_modelled_into_one_table_and_one_model_file() {
    let dir = scratch("extrap-file");
    let file = extrap_file(&dir);
    let model = dir.join("exp.toml");
    let out = lca()
        .args(["model", file.to_str().unwrap(), "--predict", "p=64,n=40"])
        .args(["-o", model.to_str().unwrap(), "--force"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "Extra-P text: 2 callpath × metric series over p, n (repetitions: all)"
    );
    assert!(lines[1].starts_with("callpath"), "{stdout}");
    // 3 + 0.5 * 40 * log2(64) = 123 and 1 + 2 * 40 = 81, in the metric's units.
    assert!(
        lines[2].starts_with("main         time    3.00 + 0.500*log2(p)*n  1.000"),
        "{stdout}"
    );
    assert!(lines[2].contains("  123.0 ± "), "{stdout}");
    assert!(
        lines[3].starts_with("main->solve  time    1.00 + 2.00*n"),
        "{stdout}"
    );
    assert!(lines[3].contains("  81.00 ± "), "{stdout}");
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(text.contains("name = \"main [time]\""));
    assert!(text.contains("name = \"main->solve [time]\""));
    let e = error_of(&["model", file.to_str().unwrap(), "--where", "q<32"]);
    assert!(
        e.starts_with("Error: ") && e.contains("exp.txt: --where q<32: 'q' is not a parameter"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    let bad = write(&dir, "bad.txt", "PARAMETER p\nPOINTS 1 2\nDATA 1\nDATA x\n");
    let e = error_of(&["model", bad.to_str().unwrap()]);
    assert!(
        e.ends_with("bad.txt:4: DATA: expected a finite number, found 'x'\n"),
        "{e}"
    );
}

#[test]
fn two_latency_models_cross_where_the_hand_computation_says() {
    let dir = scratch("extrap-crossover");
    // intel 2 + 3p, open 20 + p: equal at p = 9, both 29 there.
    for (name, a, b) in [("intel", 2, 3), ("open", 20, 1)] {
        let mut text = String::from("p,latency\n");
        for p in [1, 2, 4, 8, 12, 16] {
            text.push_str(&format!("{p},{}\n", a + b * p));
        }
        let data = write(&dir, &format!("{name}.csv"), &text);
        let model = dir.join(format!("{name}.toml"));
        let out = lca()
            .args(["model", data.to_str().unwrap(), "--response", "latency"])
            .args(["-o", model.to_str().unwrap(), "--force"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (a, b) = (dir.join("intel.toml"), dir.join("open.toml"));
    let out = lca()
        .args([
            "crossover",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--var",
            "p",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("compared: latency in its own units"),
        "{text}"
    );
    assert!(
        text.contains(
            "verdict: At 90% confidence in the fitted coefficients alone: intel has the lower latency (in its own units) for p ≤ 9; \
             open has the lower latency (in its own units) for p ≥ 9."
        ),
        "{text}"
    );
    assert!(
        text.contains("crossing   at p = 9          T_A = T_B = 29.00"),
        "{text}"
    );
    // A lost-cycles model is not compared with a latency.
    let lost = write(
        &dir,
        "lost.toml",
        "format = 1\nname = \"lost\"\nfactors = [\"p\"]\n\n[[category]]\nname = \"pc\"\nformula = \"2*p\"\n",
    );
    let e = error_of(&[
        "crossover",
        a.to_str().unwrap(),
        lost.to_str().unwrap(),
        "--var",
        "p",
    ]);
    assert_eq!(
        e,
        "Error: the models predict different things: intel models the response 'latency', \
         lost models run time T_p (lost cycles)\n"
    );
}

#[test]
fn an_extrap_model_that_is_not_finite_is_refused_in_one_line() {
    let dir = scratch("extrap-non-finite");
    // One value of 1e308: the fit's sums of squares overflow, and the model file written
    // could not be read back.
    let text = std::fs::read_to_string(extrap_file(&dir)).unwrap();
    let first = text.lines().find(|l| l.starts_with("DATA")).unwrap();
    let big = write(&dir, "big.txt", &text.replacen(first, "DATA 1e308 3", 1));
    let model = dir.join("big.toml");
    let e = error_of(&[
        "model",
        big.to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
    ]);
    assert!(
        e.contains("big.toml: not written: category 'main [time]': statistics: sse = inf"),
        "{e}"
    );
    assert!(!model.exists());
    // 1 + 2 p^2 n at p = 1e300: the prediction overflows; it was printed `inf ± n/a`, exit 0,
    // where `lca predict` refuses the point.
    let mut text = String::from(EXTRAP);
    text.push_str("REGION main\nMETRIC time\n");
    for n in [10.0, 20.0, 40.0] {
        for (i, p) in [2.0f64, 4.0, 8.0, 16.0, 32.0].iter().enumerate() {
            let v = 1.0 + 2.0 * n * p * p * (1.0 + 0.01 * (i as f64 - 2.0));
            text.push_str(&format!("DATA {v} {}\n", v * 1.01));
        }
    }
    let square = write(&dir, "square.txt", &text);
    let e = error_of(&[
        "model",
        square.to_str().unwrap(),
        "--predict",
        "p=1e300,n=40",
    ]);
    assert!(
        e.starts_with("Error: --predict 'p=1e300,n=40': ") && e.contains(" is inf "),
        "{e}"
    );
    assert!(!e.contains("± "), "{e}");
    // The point is written as given, not as its 301 digits.
    assert!(e.contains("at p=1e300, n=40:"), "{e}");
    assert!(e.len() < 300, "{e}");
}

/// The output of a successful `lca` run (stdout, stderr).
fn success(args: &[&str]) -> (String, String) {
    let out = lca().args(args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(out.status.success(), "{stderr}");
    (stdout, stderr)
}

#[test]
fn where_filters_an_extrap_files_measurement_points() {
    let dir = scratch("extrap-where");
    let file = extrap_file(&dir);
    let model = dir.join("small.toml");
    let (stdout, _) = success(&[
        "model",
        file.to_str().unwrap(),
        "--where",
        "p<32",
        "-o",
        model.to_str().unwrap(),
    ]);
    assert!(stdout.contains("3.00 + 0.500*log2(p)*n"), "{stdout}");
    let text = std::fs::read_to_string(&model).unwrap();
    // The fitted range of p ends where the filter does, and the filter is recorded.
    assert!(text.contains("p = [2.0, 16.0]"), "{text}");
    assert!(text.contains("p<32") || text.contains("p < 32"), "{text}");
    let e = error_of(&["model", file.to_str().unwrap(), "--where", "p>64"]);
    assert!(e.contains("no measurement point is left"), "{e}");
}

#[test]
fn without_a_corner_leave_one_out_error_chooses_the_form_and_says_why() {
    let dir = scratch("extrap-corner");
    // p x n without the corner (32, 40): both factors vary, so a form must be chosen.
    let mut text = String::from("PARAMETER p\nPARAMETER n\nPOINTS");
    let mut points = Vec::new();
    for n in [10.0, 20.0, 40.0] {
        for p in [2.0, 4.0, 8.0, 16.0, 32.0] {
            if (p, n) != (32.0, 40.0) {
                points.push((p, n));
                text.push_str(&format!(" ( {p} {n} )"));
            }
        }
    }
    text.push_str("\nREGION main\nMETRIC time\n");
    for (p, n) in &points {
        let v = 3.0 + 0.5 * n * f64::log2(*p);
        text.push_str(&format!("DATA {v} {}\n", v * 1.01));
    }
    let file = write(&dir, "corner.txt", &text);
    let model = dir.join("corner.toml");
    let (stdout, _) = success(&[
        "model",
        file.to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
    ]);
    assert!(stdout.contains("3.01 + 0.502*log2(p)*n"), "{stdout}");
    assert!(
        stdout.contains(
            "multiplicative: no run at the corner p=32, n=40, so leave-one-out error chose among \
             the forms: additive "
        ),
        "{stdout}"
    );
    // The model file keeps why, and reads back.
    let text = std::fs::read_to_string(&model).unwrap();
    assert!(text.contains("chosen_by = \"leave-one-out\""), "{text}");
    assert!(text.contains("[category.leave_one_out]"), "{text}");
    assert!(text.contains("corner = \"p=32, n=40\""), "{text}");
    let (stdout, _) = success(&["predict", model.to_str().unwrap(), "--at", "p=32,n=40"]);
    assert!(stdout.contains("main [time]"), "{stdout}");
    // The user still chooses with --combine.
    let (stdout, _) = success(&[
        "model",
        file.to_str().unwrap(),
        "--combine",
        "main [time]=full",
    ]);
    assert!(!stdout.contains("no run at the corner"), "{stdout}");
    assert!(stdout.contains("chosen_by = \"user\""), "{stdout}");
    let e = error_of(&["model", file.to_str().unwrap(), "--combine", "solve=full"]);
    assert!(e.contains("'solve' is not a modelled category"), "{e}");
}

/// The bundled cross design (datasets/data/extrap/cross.txt, measured here): the runs lie on
/// two lines through (2, 64), so the F test chooses, and the additive form it chooses holds
/// the runs measured off the cross in its 90% interval (docs/modelling.md#without-every-corner).
#[test]
fn a_measured_cross_design_is_additive_and_holds_the_runs_off_it() {
    let dir = scratch("extrap-cross");
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/data/extrap/cross.txt");
    let model = dir.join("cross.toml");
    let (stdout, _) = success(&[
        "model",
        file.to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
    ]);
    assert!(
        stdout.contains(
            "additive: no run at the corner p=8, n=1024, and these runs lie where every \
             multiplicative fit is also an additive one"
        ),
        "{stdout}"
    );
    // Measured off the cross, the same minutes (the file's header).
    for (at, runs) in [
        ("p=8,n=1024", [1.443101, 1.465684, 1.495022].as_slice()),
        ("p=3,n=512", [0.501271, 0.513231].as_slice()),
    ] {
        let (stdout, _) = success(&["predict", model.to_str().unwrap(), "--at", at]);
        let line = stdout.lines().find(|l| l.contains("fft2d [time]")).unwrap();
        let numbers: Vec<f64> = line
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let (value, half) = (numbers[0], numbers[1]);
        for run in runs {
            assert!((run - value).abs() <= half, "{at}: {run} outside {line}");
        }
    }
}

/// A weak-scaling series in Extra-P's JSON (x and y grow together, as Extra-P's own test
/// `json/new/input2.json` has them), with a count that is the same in every run: the model
/// follows x along the series and says that the factors' effects cannot be told apart,
/// `lca predict` says where a point leaves the series, and the constant count is no poor fit.
#[test]
fn a_weak_scaling_series_follows_its_lead_and_says_where_no_run_was() {
    let dir = scratch("extrap-together");
    let points: Vec<String> = [(4, 10, 3.5), (8, 20, 5.5), (16, 30, 9.5), (32, 40, 17.5)]
        .iter()
        .map(|(x, y, t)| format!("{{\"point\": [{x}, {y}], \"values\": [{t}, {t}]}}"))
        .collect();
    let visits: Vec<String> = [(4, 10), (8, 20), (16, 30), (32, 40)]
        .iter()
        .map(|(x, y)| format!("{{\"point\": [{x}, {y}], \"values\": [5]}}"))
        .collect();
    let text = format!(
        "{{\"parameters\": [\"x\", \"y\"], \"measurements\": {{\"sweep\": {{\"time\": [{}], \
         \"visits\": [{}]}}}}}}",
        points.join(", "),
        visits.join(", ")
    );
    let file = write(&dir, "weak.json", &text);
    let model = dir.join("weak.toml");
    let (stdout, _) = success(&[
        "model",
        file.to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
    ]);
    assert!(
        stdout.contains(
            "x and y vary together in every run (each value of one comes with one value of the \
             other): these runs cannot tell their effects apart, so the model follows x alone \
             (y's shape is 1)"
        ),
        "{stdout}"
    );
    let visits = &stdout[stdout.find("sweep [visits]  =").unwrap()..];
    let visits = &visits[..visits.find("\n\n").unwrap()];
    assert!(!visits.contains("poor fit"), "{visits}");
    // The time follows x along the series (3.5, 5.5, 9.5, 17.5 at x = 4, 8, 16, 32 is
    // 1.5 + 0.5 x); before, neither factor had an edge and the model was a constant.
    let time = &stdout[stdout.find("sweep [time]  =").unwrap()..];
    let time = &time[..time.find("\n\n").unwrap()];
    assert!(time.starts_with("sweep [time]  = 1 + x\n"), "{time}");
    assert!(
        time.contains("shape in y: 1  (varies with x in every run, which the model follows)"),
        "{time}"
    );
    // A prediction on the series says nothing more; one off it says that no run is there.
    let model = model.to_str().unwrap();
    let (on, said) = success(&["predict", model, "--at", "x=16,y=30"]);
    assert!(on.contains("9.5"), "{on}");
    assert!(!said.contains("note"), "{said}");
    let (_, said) = success(&["predict", model, "--at", "x=16,y=10"]);
    assert!(
        said.contains(
            "note: y=10 at x=16: in every run y went with x (at x=16 the runs had y=30); the \
             model follows x alone, so this prediction rests on no run"
        ),
        "{said}"
    );
}

/// Experiments Extra-P saved (a `.extra-p` ZIP holding `experiment.json`, and Extra-P 3's
/// binary format) are refused in one line that says what to give instead, not as text that is
/// not UTF-8.
#[test]
fn an_experiment_extrap_saved_is_refused_with_what_to_give() {
    let dir = scratch("extrap-saved");
    let zip = dir.join("exp.extra-p");
    let mut bytes = b"PK\x03\x04\x14\x00\x00\x00\x08\x00".to_vec();
    bytes.extend(b"\xdb\x65\x36\x53\x55\x2c\x1a\xc4experiment.json\x8d\xff\xfe");
    std::fs::write(&zip, &bytes).unwrap();
    let old = dir.join("experiment_3");
    let mut bytes = b"\x01\x00\x11\x00\x00\x00EXTRAP_EXPERIMENT\x03\x00\x00\x001.0".to_vec();
    bytes.extend([0xff, 0xfe, 0x00]);
    std::fs::write(&old, &bytes).unwrap();
    for file in [zip, old] {
        let e = error_of(&["model", file.to_str().unwrap()]);
        assert!(
            e.contains(
                ": an experiment saved by Extra-P (its own format) is not read: give lca \
                        the measurement files it was made from"
            ),
            "{e}"
        );
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    }
}

/// TALPAS files (JSON Lines with `;` between the fields and `parameters` for `params`, as
/// Extra-P's `--talpas` reads them) are read; a `;` inside a name stays.
#[test]
fn a_talpas_file_is_read() {
    let dir = scratch("extrap-talpas");
    let mut text = String::new();
    for x in [2, 4, 8, 16, 32] {
        for k in [1.0, 1.01] {
            let t = k * (3.0 + 0.5 * f64::from(x));
            text += &format!(
                "{{\"parameters\":{{\"x\":{x}}};\"metric\":\"time\";\"callpath\":\"main;solve\";\"value\":{t}}}\n"
            );
        }
    }
    let file = write(&dir, "run.txt", &text);
    let (_, stderr) = success(&["model", file.to_str().unwrap(), "-o", "-"]);
    assert!(
        stderr.starts_with("TALPAS: 1 callpath × metric series over x"),
        "{stderr}"
    );
    assert!(stderr.contains("main;solve  time"), "{stderr}");
    assert!(stderr.contains("3.01 + 0.502*x"), "{stderr}");
}

#[test]
fn a_response_without_factors_warns_that_they_were_guessed() {
    let dir = scratch("response-guess");
    let data = write(
        &dir,
        "t.csv",
        "p,count,t\n2,10,1.0\n4,11,1.1\n8,12,1.3\n16,13,1.5\n",
    );
    let (_, stderr) = success(&["model", data.to_str().unwrap(), "--response", "t"]);
    assert!(
        stderr.contains("warning: --response without --factors: the factors were guessed"),
        "{stderr}"
    );
    assert!(stderr.contains("(p, count)"), "{stderr}");
    let (_, stderr) = success(&[
        "model",
        data.to_str().unwrap(),
        "--response",
        "t",
        "--factors",
        "p",
    ]);
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// The sum of overheads, `5 + 1000/p + 2 log2(p)` at p = 2, 4, ..., 128, three
/// repetitions with about 3% noise (fixed numbers), in Extra-P's text format and as a
/// datafile.
const SUM_OF_OVERHEADS: [(u32, [f64; 3]); 7] = [
    (2, [514.2, 497.9, 509.6]),
    (4, [259.1, 265.8, 252.3]),
    (8, [138.3, 133.9, 143.1]),
    (16, [75.4, 77.9, 73.2]),
    (32, [46.2, 47.9, 44.8]),
    (64, [32.9, 33.8, 31.6]),
    (128, [26.9, 27.8, 26.1]),
];

#[test]
fn beyond_the_data_one_parameter_holds_the_forms_that_fit_as_well() {
    let dir = scratch("extrap-rivals");
    let points: Vec<String> = SUM_OF_OVERHEADS
        .iter()
        .map(|(p, _)| format!("( {p} )"))
        .collect();
    let mut text = format!(
        "PARAMETER p\nPOINTS {}\nMETRIC time\nREGION main\n",
        points.join(" ")
    );
    let mut rows = String::new();
    for (p, runs) in SUM_OF_OVERHEADS {
        let runs: Vec<String> = runs.iter().map(f64::to_string).collect();
        text += &format!("DATA {}\n", runs.join(" "));
        for t in &runs {
            rows += &format!("p={p} wall={t}\n");
        }
    }
    let file = write(&dir, "sum.txt", &text);
    let model = dir.join("sum.toml");
    let truth = 5.0 + 1000.0 / 1024.0 + 20.0;
    let interval = |cell: &str| -> (f64, f64) {
        let (v, h) = cell.split_once(" ± ").unwrap();
        let (v, h): (f64, f64) = (v.parse().unwrap(), h.parse().unwrap());
        (v - h, v + h)
    };
    let (out, _) = success(&[
        "model",
        file.to_str().unwrap(),
        "--predict",
        "p=1024",
        "-o",
        model.to_str().unwrap(),
    ]);
    let row = out.lines().find(|l| l.starts_with("main")).unwrap();
    let cell = row.split("  ").last().unwrap().trim();
    let (lo, hi) = interval(cell);
    assert!(lo <= truth && truth <= hi, "{row}");
    let written = std::fs::read_to_string(&model).unwrap();
    assert!(written.contains("[[extrapolation.rival]]"), "{written}");
    let (predicted, _) = success(&["predict", model.to_str().unwrap(), "--at", "p=1024"]);
    assert!(!predicted.contains("not calibrated"), "{predicted}");

    // `--search --predict` on the same runs: the top model's interval holds the truth.
    let data = write(&dir, "sum.dat", &rows);
    let (ranked, _) = success(&[
        data.to_str().unwrap(),
        "--var",
        "p",
        "--cat",
        "wall",
        "--search",
        "--predict",
        "p=1024",
    ]);
    let top = ranked
        .lines()
        .find(|l| l.trim_start().starts_with("at p=1024"))
        .unwrap();
    // `at p=1024: 31 +/- 22 (90% ...)`, or `43.4 (0 .. 368) (90% ...)` where cut at zero.
    let after = top.split_once(": ").unwrap().1;
    let (lo, hi): (f64, f64) = match after.split_once(" +/- ") {
        Some((v, h)) => {
            let v: f64 = v.parse().unwrap();
            let h: f64 = h.split(' ').next().unwrap().parse().unwrap();
            (v - h, v + h)
        }
        None => {
            let bounds = after.split(" (").nth(1).unwrap();
            let (lo, hi) = bounds.split_once(" .. ").unwrap();
            let hi = hi.split(')').next().unwrap();
            (lo.parse().unwrap(), hi.parse().unwrap())
        }
    };
    assert!(lo <= truth && truth <= hi, "{top}");
}

#[test]
fn beyond_the_data_every_series_holds_its_own_rivals_in_lca_predict_too() {
    // The table of `lca model --predict` holds each series' rivals beyond the data; the model
    // file keeps them per response, so `lca predict` gives the same interval for the second
    // series, not its fit's own (which held no error of form: ±2.8 against ±113 here before).
    let dir = scratch("extrap-rivals-each");
    let mut text = String::from("PARAMETER p\nPOINTS ( 2 ) ( 4 ) ( 8 ) ( 16 ) ( 32 ) ( 64 )\n");
    text += "METRIC time\nREGION main\n";
    for p in [2.0_f64, 4.0, 8.0, 16.0, 32.0, 64.0] {
        let t = 3.0 + 0.5 * p.log2();
        text += &format!("DATA {} {} {}\n", t, t * 1.004, t * 0.997);
    }
    text += "REGION comm\n";
    for p in [2.0_f64, 4.0, 8.0, 16.0, 32.0, 64.0] {
        let t = 0.05 * p;
        text += &format!("DATA {} {}\n", t * 1.01, t * 0.99);
    }
    let file = write(&dir, "two.txt", &text);
    let model = dir.join("two.toml");
    let (table, _) = success(&[
        "model",
        file.to_str().unwrap(),
        "--predict",
        "p=1024",
        "-o",
        model.to_str().unwrap(),
    ]);
    let (predicted, _) = success(&[
        "predict",
        model.to_str().unwrap(),
        "--at",
        "p=1024",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&predicted).unwrap();
    let categories = &doc["predictions"][0]["categories"];
    for (series, response) in [("main", "main [time]"), ("comm", "comm [time]")] {
        let row = table.lines().find(|l| l.starts_with(series)).unwrap();
        let cell = row.split("  ").last().unwrap().trim();
        let half: f64 = cell.split_once(" ± ").unwrap().1.parse().unwrap();
        let own = categories[response]["half_width"].as_f64().unwrap();
        // The table prints two significant digits.
        assert!(
            (own - half).abs() <= 0.05 * half,
            "{response}: {own} against {row}"
        );
    }
    let written = std::fs::read_to_string(&model).unwrap();
    assert!(written.contains("response = \"comm [time]\""), "{written}");
}
