//! End-to-end tests of `lca DATAFILE --var p --cat li`, run as a user runs it.

use std::path::PathBuf;

mod support;

use assert_cmd::assert::OutputAssertExt;
use support::{error_of, lca};
use test_support::{scratch, write};

fn fig2() -> PathBuf {
    datasets::path("fig2.dat")
}

#[test]
fn fig2_ranks_p_sqrt_p_first() {
    let out = lca()
        .arg(fig2())
        .args(["--var", "p", "--cat", "li"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("li against p: 12 observations from "),
        "{text}"
    );
    // The paper's answer: p*sqrt(p) best, with its coefficient close to 0.000298.
    assert!(
        lines[1].starts_with("(0.0003041 +/- 0.0000059) *p*sqrt(p)"),
        "{text}"
    );
    assert!(lines[1].contains("R2: 0.995"), "{text}");
    assert!(lines[2].contains("*p "), "{text}");
    assert!(lines[3].starts_with("(0.0037 +/- 0.0012) "), "{text}");
}

#[test]
fn user_models_predictions_and_ranking_by_cv() {
    let out = lca()
        .arg(fig2())
        .args(["--var", "p", "--cat", "li", "--rank", "cv"])
        .args(["--model", "p^$a", "--predict", "p=16"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("ranked by leave-one-out error"), "{text}");
    assert!(text.contains("*p^$a"), "{text}");
    assert!(text.contains("    $a = 1.490 +/- 0.085"), "{text}");
    assert_eq!(text.matches("at p=16: ").count(), 4, "{text}");
    assert!(
        text.contains("(90% prediction interval, with the other models' spread)"),
        "{text}"
    );
}

#[test]
fn json_and_csv_outputs_parse() {
    let out = lca()
        .arg(fig2())
        .args([
            "--var",
            "p",
            "--cat",
            "li",
            "--format",
            "json",
            "--predict",
            "p=10",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["response"], "li");
    assert_eq!(doc["observations"], 12);
    let best = &doc["models"][0];
    assert_eq!(best["model"], "p*sqrt(p)");
    assert!((best["coefficients"][0]["value"].as_f64().unwrap() - 0.000304).abs() < 1e-6);
    assert_eq!(best["predictions"][0]["at"], "p=10");

    let out = lca()
        .arg(fig2())
        .args(["--var", "p", "--cat", "li", "--format", "csv"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "rank,model,formula,r2,adj_r2,cv,residual_sd,n,dof"
    );
    assert!(lines.next().unwrap().starts_with("1,p*sqrt(p),"));
    assert_eq!(lines.count(), 2);
}

#[test]
fn search_adds_models() {
    let out = lca()
        .arg(fig2())
        .args(["--var", "p", "--cat", "li", "--search"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() > 4, "{text}");
    assert!(text.contains("fitted to relative error"), "{text}");
}

#[test]
fn plot_writes_png_and_svg() {
    let dir = scratch("plot");
    for name in ["li.png", "li.svg"] {
        let path = dir.join(name);
        lca()
            .arg(fig2())
            .args(["--var", "p", "--cat", "li", "--plot"])
            .arg(&path)
            .assert()
            .success();
        let bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        } else {
            let svg = String::from_utf8(bytes).unwrap();
            assert!(svg.contains("*p*sqrt(p)"), "curve label in the SVG");
        }
    }
}

#[test]
fn varying_factor_needs_at() {
    let dir = scratch("at");
    let data = write(
        &dir,
        "two.dat",
        "p=2 n=64 li=1\np=4 n=64 li=2\np=6 n=64 li=3\np=2 n=256 li=4\np=4 n=256 li=8\np=6 n=256 li=12\n",
    );
    let err = error_of(&[data.to_str().unwrap(), "--var", "p", "--cat", "li"]);
    assert!(err.contains("factor 'n' varies"), "{err}");
    assert!(err.contains("64, 256"), "{err}");
    assert!(err.contains("--at n=VALUE"), "{err}");
    let out = lca()
        .arg(&data)
        .args(["--var", "p", "--cat", "li", "--at", "n=256", "--model", "p"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("(2.00000 +/- 0) *p "), "{text}");
}

#[test]
fn bad_input_gives_one_line_errors() {
    let dir = scratch("bad");
    let good = fig2();
    let good = good.to_str().unwrap();
    let path = |name: &str, text: &str| write(&dir, name, text).to_str().unwrap().to_string();

    let empty = path("empty.dat", "# nothing here\n\n");
    assert!(error_of(&[&empty, "--var", "p", "--cat", "li"]).contains("empty.dat: no data rows"));

    let no_eq = path("noeq.dat", "p=2 li=1\np=4 abc\n");
    let err = error_of(&[&no_eq, "--var", "p", "--cat", "li"]);
    assert!(
        err.contains("noeq.dat:2: token 'abc' is not key=value"),
        "{err}"
    );

    let text = path("text.dat", "p=2 li=1\np=4 li=2\np=6 li=abc\n");
    let err = error_of(&[&text, "--var", "p", "--cat", "li"]);
    assert!(err.contains("text.dat:3: field 'li'"), "{err}");
    assert!(err.contains("'abc'"), "{err}");

    for (name, value) in [("nan.dat", "nan"), ("inf.dat", "inf"), ("big.dat", "1e999")] {
        let file = path(name, &format!("p=2 li=1\np=4 li={value}\n"));
        let err = error_of(&[&file, "--var", "p", "--cat", "li"]);
        assert!(err.contains(&format!("{name}:2: field 'li'")), "{err}");
        assert!(err.contains("finite"), "{err}");
    }

    let err = error_of(&[good, "--var", "p", "--cat", "xx"]);
    assert!(
        err.contains("--cat 'xx'") && err.contains("no such column"),
        "{err}"
    );
    assert!(err.contains("numeric columns: "), "{err}");

    let err = error_of(&[good, "--var", "q", "--cat", "li"]);
    assert!(err.contains("--var 'q'"), "{err}");

    let two = path("two.dat", "p=2 li=1\np=4 li=2\n");
    let err = error_of(&[&two, "--var", "p", "--cat", "li", "--model", "1 + p + p^2"]);
    assert!(
        err.contains("2 observation(s) cannot determine 3 fitted quantities"),
        "{err}"
    );

    let err = error_of(&[good, "--var", "p", "--cat", "li", "--model", "p + 2*p"]);
    assert!(err.contains("collinear"), "{err}");
    assert!(err.contains("`p`") && err.contains("`2*p`"), "{err}");

    let err = error_of(&[good, "--var", "p", "--cat", "li", "--model", "p*(1+"]);
    assert!(err.contains("--model: model `p*(1+`: column "), "{err}");

    let err = error_of(&[good, "--var", "p", "--cat", "li", "--model", "sin(p)"]);
    assert!(err.contains("column 1: unknown function 'sin'"), "{err}");

    let err = error_of(&[good, "--var", "p", "--cat", "li", "--model", "q*p"]);
    assert!(err.contains("unknown factor 'q'"), "{err}");

    let err = error_of(&[good, "--var", "p", "--cat", "li", "--model", "log2(p-2)"]);
    assert!(
        err.contains("is not a finite number at ") && err.contains("fig2.dat:"),
        "{err}"
    );

    let err = error_of(&[good, "--var", "p", "--cat", "li", "--rank", "best"]);
    assert!(
        err.contains("--rank: invalid value 'best' (expected r2, adj-r2 or cv)"),
        "{err}"
    );

    let err = error_of(&[good, "--var", "p", "--cat", "li", "--plot", "li.jpg"]);
    assert!(err.contains("--plot") && err.contains("li.jpg"), "{err}");

    let err = error_of(&[good, "--var", "p", "--cat", "li", "--where", "impl"]);
    assert!(err.contains("--where"), "{err}");

    let err = error_of(&[good, "--var", "p", "--cat", "li", "--where", "impl=tp"]);
    assert!(err.contains("impl") && err.contains("dp"), "{err}");

    let missing = dir.join("missing.dat");
    let err = error_of(&[missing.to_str().unwrap(), "--var", "p", "--cat", "li"]);
    assert!(err.contains("missing.dat: cannot read the file"), "{err}");
}

#[test]
fn closed_pipe_is_not_an_error() {
    // `lca ... | head -1`: the reader goes away; lca must not complain.
    let mut child = lca()
        .arg(fig2())
        .args(["--var", "p", "--cat", "li", "--search"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn design_plans_the_papers_edges() {
    let out = lca()
        .args([
            "design",
            "--factor",
            "p=2,26",
            "--factor",
            "n=32..1024:log2",
            "--edges",
            "3",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next().unwrap(), "run,replicate,p,n");
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 16);
    assert!(rows.contains(&"7,1,14,32"), "{csv}");

    let out = lca()
        .args([
            "design",
            "--factor",
            "p=2,4",
            "--factor",
            "x=0.5,1.5",
            "--2k",
        ])
        .args(["--replicates", "2", "--seed", "3", "--format", "toml"])
        .output()
        .unwrap();
    let toml = String::from_utf8(out.stdout).unwrap();
    assert_eq!(toml.matches("[[run]]").count(), 8, "{toml}");

    let err = error_of(&["design", "--factor", "n=32..1024:cube"]);
    assert!(
        err.contains("--factor 'n=32..1024:cube': column 12: unknown scale 'cube'"),
        "{err}"
    );
    let err = error_of(&["design", "--factor", "p=2,4", "--factor", "p=8,16"]);
    assert!(err.contains("--factor p is given twice"), "{err}");
    let err = error_of(&["design", "--factor", "p=2,4", "--edges", "0"]);
    assert!(err.contains("--edges"), "{err}");
}

#[test]
fn variation_allocates_jains_workstation_example() {
    // Jain's 2^2 example (memory size x cache size): 15, 45, 25, 75 -> effects 40, 20, 10,
    // 5 explaining 76%, 19% and 5% of the variation.
    let dir = scratch("variation");
    let data = write(
        &dir,
        "ws.dat",
        "mem=4 cache=1 y=15\nmem=16 cache=1 y=45\nmem=4 cache=2 y=25\nmem=16 cache=2 y=75\n",
    );
    let out = lca()
        .arg("variation")
        .arg(&data)
        .args(["--factors", "mem,cache", "--response", "y"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let row = |effect: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(effect))
            .unwrap_or_else(|| panic!("{effect} in {text}"))
            .to_string()
    };
    assert!(row("I").contains("40"), "{text}");
    assert!(row("mem").contains("76.19%"), "{text}");
    assert!(row("cache").contains("19.05%"), "{text}");
    assert!(row("mem*cache").contains("4.76%"), "{text}");

    let three = write(
        &dir,
        "three.dat",
        "a=1 b=1 c=1 y=1\na=2 b=2 c=2 y=2\na=3 b=1 c=1 y=3\n",
    );
    let err = error_of(&[
        "variation",
        three.to_str().unwrap(),
        "--factors",
        "a,b,c",
        "--response",
        "y",
    ]);
    assert!(
        err.contains("not a full factorial") && err.contains("corner a=1 b=1 c=2"),
        "{err}"
    );
    // Two levels each, one corner missing.
    let three = write(
        &dir,
        "three-corners.dat",
        "mem=4 cache=1 y=15\nmem=16 cache=1 y=45\nmem=4 cache=2 y=25\n",
    );
    let err = error_of(&[
        "variation",
        three.to_str().unwrap(),
        "--factors",
        "mem,cache",
        "--response",
        "y",
    ]);
    assert_eq!(
        err.trim_end(),
        "Error: the design is not a full factorial and its 2^2 corners are not all measured: \
         corner mem=16 cache=2 has no observations"
    );
}

#[test]
fn variation_of_an_edges_design_uses_its_corners() {
    // The README's command on its own edges data: 16 runs, 4 of them at the corners.
    let out = lca()
        .arg("variation")
        .arg(datasets::path("fft2d.dat"))
        .args(["--factors", "p,n", "--response", "li"])
        .args(["--where", "impl=dp,role=model"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("not a full factorial (5 x 5 levels, 16 of 25 cells with runs)"),
        "{text}"
    );
    assert!(text.contains("rows used: 4 at lines "), "{text}");
    assert!(
        text.contains(
            "left out: 12 row(s) at the levels between the extremes (p = 3, 5, 7; n = 64, 128, 256)"
        ),
        "{text}"
    );
    assert!(
        text.contains("2^2 design, 1 replicate(s) per cell"),
        "{text}"
    );
    let share = |effect: &str| {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(effect))
            .unwrap_or_else(|| panic!("{effect} in {text}"));
        line.split_whitespace().last().unwrap().to_string()
    };
    // The allocation at the four corners of the bundled runs (datasets/data/fft2d.dat).
    assert_eq!(share("p"), "11.76%", "{text}");
    assert_eq!(share("n"), "78.42%", "{text}");
    assert_eq!(share("p*n"), "9.81%", "{text}");
}

#[test]
fn design_fractional_prints_aliases_and_resolution() {
    let out = lca()
        .args([
            "design",
            "--factor",
            "p=2,8",
            "--factor",
            "n=64,256",
            "--factor",
            "iters=1,4",
        ])
        .args(["--fractional", "iters=p*n"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.contains("\n1,1,2,64,4\n"), "{csv}"); // p-, n- -> iters = (+) -> high
    let aliases = String::from_utf8(out.stderr).unwrap();
    assert!(
        aliases.contains("2^(3-1): 4 runs, resolution III"),
        "{aliases}"
    );
    assert!(aliases.contains("  p = n*iters\n"), "{aliases}");
    let err = error_of(&[
        "design",
        "--factor",
        "p=2,8",
        "--factor",
        "n=1,2",
        "--fractional",
        "p=n*q",
    ]);
    assert!(err.contains("'q' is not a factor"), "{err}");
}
