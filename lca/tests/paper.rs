//! The paper's own models (Crovella & LeBlanc 1994), bundled in `datasets/data/paper/`: Table
//! 2's data-parallel and task-parallel 2D FFT on the KSR1 cross where a bisection of the
//! closed forms says, and Table 1's shapes fit as the same `--shape` options do.

mod support;

use support::{error_of, stdout};
use test_support::{scratch, write};

fn paper(name: &str) -> String {
    datasets::path(&format!("paper/{name}"))
        .to_str()
        .unwrap()
        .to_string()
}

/// Table 2 summed, with log2, over p = 26 processors: T_dp(n) - T_tp(n).
fn dp_minus_tp(n: f64) -> f64 {
    let (n2, log) = (n * n, n.log2());
    let dp = n2 * log / 3550.0 + n * log / 63.0 + 3.36 + n2 / 14900.0 + n2 / 20100.0;
    let tp = n2 * log / 3350.0
        + n * log / 81.9
        + n2 / 992.0
        + n2 / 31600.0
        + n2 / 12200.0
        + n2 / 35600.0;
    (dp - tp) / 26.0
}

#[test]
fn table_2_crosses_where_a_bisection_of_its_formulas_does() {
    // By bisection on the closed forms: tp is faster at n = 32, dp at n = 1024.
    let (mut lo, mut hi) = (32.0, 1024.0);
    assert!(dp_minus_tp(lo) > 0.0 && dp_minus_tp(hi) < 0.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if dp_minus_tp(mid) > 0.0 {
            lo = mid
        } else {
            hi = mid
        }
    }
    let json: serde_json::Value = serde_json::from_str(&stdout(&[
        "crossover",
        &paper("table2-dp.toml"),
        &paper("table2-tp.toml"),
        "--var",
        "n",
        "--format",
        "json",
    ]))
    .unwrap();
    let text = json.to_string();
    let meetings = json["meetings"]
        .as_array()
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(meetings.len(), 1, "{text}");
    let at = meetings[0]["at"]
        .as_f64()
        .unwrap_or_else(|| panic!("{text}"));
    assert!((at - lo).abs() / lo < 1e-3, "lca {at} vs bisection {lo}");
    // tp below the crossing, dp above it.
    let sides = json["sides"].as_array().unwrap();
    let winners: Vec<&str> = sides
        .iter()
        .map(|s| s["winner"].as_str().unwrap())
        .collect();
    assert_eq!(winners, ["B", "A"], "{text}");
}

#[test]
fn the_report_of_table_2_says_where_they_cross() {
    let dir = scratch("paper-report");
    let out = dir.join("report");
    let _ = std::fs::remove_dir_all(&out);
    let o = out.to_str().unwrap();
    stdout(&[
        "report",
        &paper("table2-dp.toml"),
        &paper("table2-tp.toml"),
        "-o",
        o,
    ]);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("Which is faster: dp or tp, along n"),
        "{html}"
    );
    assert!(html.contains("crossing   at n = 65.0"), "{html}");
}

#[test]
fn a_shapes_file_fits_as_its_shape_options_do() {
    let dir = scratch("paper-shapes");
    let data = datasets::path("fft2d.dat");
    let data = data.to_str().unwrap();
    let common = ["model", data, "--where", "impl=dp,role=model"];
    let from_file = stdout(&[&common[..], &["--shapes", &paper("table1-shapes.toml")]].concat());
    let options = [
        "pc:n=n^2*log2(n)",
        "pc:p=1",
        "li:n=n*log2(n)",
        "li:p=p*sqrt(p)",
        "ip:n=1",
        "ip:p=p",
        "cl:n=n^2",
        "cl:p=p",
        "rc:n=n^2",
        "rc:p=max(p-$theta,0)",
    ];
    let mut args = common.to_vec();
    for o in &options {
        args.extend(["--shape", o]);
    }
    assert_eq!(from_file, stdout(&args));
    // A --shape wins over the file's entry for the same category and factor.
    let with = stdout(
        &[
            &common[..],
            &[
                "--shapes",
                &paper("table1-shapes.toml"),
                "--shape",
                "li:p=p",
            ],
        ]
        .concat(),
    );
    // (li's form is the runs' choice: full since its products' F test, 2026-12-01.)
    assert!(with.contains("formula = \"1 + n*log2(n) + p"), "{with}");
    assert!(!with.contains("p*sqrt(p)"), "{with}");

    let bad = write(&dir, "bad.toml", "[li]\np = 2\n");
    let e = error_of(&[&common[..], &["--shapes", bad.to_str().unwrap()]].concat());
    assert!(e.contains("bad.toml: [li] p: the shape must be"), "{e}");
    let unknown = write(&dir, "unknown.toml", "[xx]\np = \"p\"\n");
    let e = error_of(&[&common[..], &["--shapes", unknown.to_str().unwrap()]].concat());
    assert!(
        e.contains("unknown.toml: [xx]: not a modelled category"),
        "{e}"
    );
}
