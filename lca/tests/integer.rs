//! Integer structure through the command line (docs/modelling.md#integer-structure): `lca
//! model` says what the residual test found and chose, `lca DATAFILE --search` what it tried.

mod support;

use support::{lca, stdout};
use test_support::{scratch, write};

#[test]
fn lca_model_says_what_the_residual_test_found_on_the_16_core_runs() {
    let dir = scratch("integer-model");
    let data = datasets::path("fft2d-16core.dat");
    let out = dir.join("tp.toml");
    let output = lca()
        .args([
            "model",
            data.to_str().unwrap(),
            "--where",
            "impl=tp,role=model",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let summary = String::from_utf8(output.stdout).unwrap();
    assert!(
        summary.contains(
            "integer structure in p: residuals differ by p mod 2 (F = 9.21 on 1 and 71 df, \
             p = 0.013 after Holm over 4 grouping(s)); added `n^2*log2(n)*p/(2*floor(p/2))`"
        ),
        "{summary}"
    );
    let file = std::fs::read_to_string(&out).unwrap();
    assert!(file.contains("[category.integer]"), "{file}");
    assert!(file.contains("pattern = \"p mod 2\""), "{file}");
}

#[test]
fn the_search_says_which_integer_terms_it_tried() {
    let dir = scratch("integer-search");
    // 2 + 0.1 p + 0.3 at odd p, disturbed by a deterministic ±1% that follows no period.
    let rows: String = (0..3)
        .flat_map(|r| (2..=16).map(move |p| (r, p)))
        .map(|(r, p)| {
            let p = f64::from(p);
            let wobble = 1.0 + 0.01 * ((p * 7.3 + f64::from(r) * 3.1).sin());
            format!(
                "p={p} wall={}\n",
                (2.0 + 0.1 * p + 0.3 * (p % 2.0)) * wobble
            )
        })
        .collect();
    let data = write(&dir, "parity.dat", &rows);
    let text = stdout(&[
        "--var",
        "p",
        "--cat",
        "wall",
        "--search",
        data.to_str().unwrap(),
    ]);
    let note = text.lines().last().unwrap();
    assert!(
        note.starts_with("integer structure: the residuals of the best smooth model"),
        "{text}"
    );
    assert!(note.contains("differ by p mod 2"), "{text}");
    let best = text.lines().nth(1).unwrap();
    assert!(best.contains("floor(p/2)"), "{text}");
    // Without the odd steps, no note and no integer term.
    let smooth: String = rows
        .lines()
        .map(|l| {
            let (p, wall) = l.split_once(" wall=").unwrap();
            let p: f64 = p.trim_start_matches("p=").parse().unwrap();
            let wall: f64 = wall.parse().unwrap();
            format!(
                "p={p} wall={}\n",
                wall - 0.3 * (p % 2.0) * wall / (2.0 + 0.1 * p + 0.3 * (p % 2.0))
            )
        })
        .collect();
    let data = write(&dir, "smooth.dat", &smooth);
    let text = stdout(&[
        "--var",
        "p",
        "--cat",
        "wall",
        "--search",
        data.to_str().unwrap(),
    ]);
    assert!(
        !text.contains("integer structure") && !text.contains("floor"),
        "{text}"
    );
}

#[test]
fn on_the_edges_design_lca_model_says_why_parity_was_not_tested() {
    // The bundled 16-core study on the paper's edges design: p = 2, 3, 5, 7, 8, so only two even
    // levels, and the residual test would rest on two levels' noise.
    let dir = scratch("integer-edges");
    let data = datasets::path("fft2d-full-16core.dat");
    let output = lca()
        .args([
            "model",
            data.to_str().unwrap(),
            "--where",
            "impl=tp,role=model",
            "-o",
        ])
        .arg(dir.join("tp.toml"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let said = String::from_utf8(output.stderr).unwrap();
    assert!(
        said.contains(
            "integer structure in p not tested: p mod 2 needs 3 levels of each parity, and the \
             runs have even 2, 8 and odd 3, 5, 7; runs at p = 4 would let it be tested"
        ),
        "{said}"
    );
    let summary = String::from_utf8(output.stdout).unwrap();
    assert!(!summary.contains("integer structure in p:"), "{summary}");
}
