//! `lca` under hostile input: endless and huge datafiles end with a short one-line error in
//! bounded memory (an address-space limit is set in the child), a row cut short is reported,
//! not read, and designs, grids and maps too large to make are refused before anything is
//! allocated, naming how many points were asked and the limit.

mod support;

use std::path::{Path, PathBuf};

use support::lca;
use test_support::{limit, one_line_error, scratch, write};

/// The address space `lca` gets in these tests.
const MEMORY: libc::rlim_t = 300 << 20;

/// Runs `lca` with at most [`MEMORY`] of address space; returns its one-line error, checking
/// that it failed, did not panic and wrote under 300 bytes.
fn capped_error(args: &[&str]) -> String {
    let mut command = lca();
    command.args(args);
    let out = limit(&mut command, libc::RLIMIT_AS, MEMORY)
        .output()
        .unwrap();
    let line = one_line_error(&out, Some(1), &[]);
    assert!(out.stderr.len() < 300, "{} bytes: {line}", out.stderr.len());
    assert!(line.starts_with("Error: "), "{line}");
    line
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A sparse file of `size` zero bytes.
fn zeros(dir: &Path, size: u64) -> PathBuf {
    let path = dir.join("zeros.dat");
    std::fs::File::create(&path).unwrap().set_len(size).unwrap();
    path
}

#[test]
fn an_endless_line_ends_with_a_short_error_in_bounded_memory() {
    let long = "the line is longer than 65536 bytes (a datafile holds one run per line)";
    let e = capped_error(&["/dev/zero", "--var", "p", "--cat", "li"]);
    assert_eq!(e, format!("Error: /dev/zero:1: {long}"));
    let dir = scratch("limits-zeros");
    let file = zeros(&dir, 1 << 30);
    let f = text(&file);
    for args in [
        vec![f, "--var", "p", "--cat", "li"],
        vec!["model", f],
        vec!["variation", f, "--factors", "p", "--response", "li"],
    ] {
        assert_eq!(capped_error(&args), format!("Error: {f}:1: {long}"));
    }
}

/// A row as `pp -l` writes it (189 bytes with its newline).
const ROW: &str = "impl=dp n=8 iters=10 p=4 wall=0.002330308 total=0.009321232 \
                   li=0.000634868 ip=0.000381338 sl=0.002450964 cl=0.000331503 \
                   rc=0.000000000 pc=0.005522559 rc.cpu=0.000000000 rc.comm=0.000000000\n";

#[test]
fn a_row_cut_short_is_reported_not_read() {
    let dir = scratch("limits-torn");
    let rows: String = [1, 2, 4, 8]
        .iter()
        .map(|p| ROW.replace("p=4", &format!("p={p}")))
        .collect();
    // A full disk cut the last append: 127 of the row's bytes, no newline.
    assert_eq!(ROW.len(), 189);
    let torn = format!("{rows}{}", &ROW[..127]);
    assert!(torn.ends_with("rc=0.00"));
    let file = write(&dir, "d.dat", &torn);
    let f = text(&file);
    let e = capped_error(&[f, "--var", "p", "--cat", "rc"]);
    assert!(
        e.starts_with(&format!("Error: {f}:5: the last line has no newline")),
        "{e}"
    );
    assert!(e.contains("it was not read"), "{e}");
    capped_error(&["model", f]);
}

#[test]
fn designs_too_large_are_refused_before_allocating() {
    let e = capped_error(&[
        "design",
        "--factor",
        "n=1..1000000000000:lin:1000000000000",
        "--full",
    ]);
    assert!(
        e.ends_with("1000000000000 levels; a factor has at most 1000000"),
        "{e}"
    );
    let e = capped_error(&["design", "--factor", "p=1..2:lin:4294967295"]);
    assert!(
        e.contains("4294967295 levels; a factor has at most 1000000"),
        "{e}"
    );
    let thousand = [
        "a=1..1000:lin:1000",
        "b=1..1000:lin:1000",
        "c=1..1000:lin:1000",
    ];
    let mut args = vec!["design", "--full"];
    for f in &thousand {
        args.extend(["--factor", f]);
    }
    let e = capped_error(&args);
    assert_eq!(
        e,
        "Error: the design has 1000000000 points; the limit is 1000000"
    );
    let e = capped_error(&[
        "design",
        "--factor",
        "p=1,2",
        "--edges",
        "18446744073709551615",
    ]);
    assert!(e.contains("points; the limit is 1000000"), "{e}");
    let e = capped_error(&[
        "design",
        "--factor",
        "p=1,2",
        "--2k",
        "--replicates",
        "18446744073709551615",
    ]);
    assert!(
        e.contains("runs (2 points x 18446744073709551615 replicates); the limit is 1000000"),
        "{e}"
    );
    let names: Vec<String> = (0..40).map(|i| format!("--factor=f{i}=1,2")).collect();
    let mut args: Vec<&str> = vec!["design", "--fractional", "f39=f0*f1"];
    args.extend(names.iter().map(String::as_str));
    let e = capped_error(&args);
    assert!(e.contains("a fractional design has at most 31"), "{e}");
    let mut args: Vec<&str> = vec!["design", "--2k"];
    args.extend(names.iter().map(String::as_str));
    let e = capped_error(&args);
    assert!(e.contains("the design has 1099511627776 points"), "{e}");
}

/// A hand-written model of `n` and `p`.
fn model(dir: &Path, name: &str) -> String {
    let text = format!(
        "format = 1\nname = \"{name}\"\nfactors = [\"n\", \"p\"]\n\
         range = {{ n = [1.0, 100.0], p = [1.0, 64.0] }}\n\n\
         [[category]]\nname = \"pc\"\nformula = \"n / p\"\n"
    );
    text_of(write(dir, &format!("{name}.toml"), &text))
}

fn text_of(path: PathBuf) -> String {
    path.to_str().unwrap().to_string()
}

#[test]
fn grids_and_maps_too_large_are_refused() {
    let dir = scratch("limits-grid");
    let a = model(&dir, "a");
    let b = model(&dir, "b");
    let e = capped_error(&[
        "predict",
        &a,
        "--grid",
        "n=1..100000:lin:100000,p=1..100000:lin:100000",
    ]);
    assert_eq!(
        e,
        "Error: --grid: the grid has 10000000000 points; the limit is 1000000"
    );
    let e = capped_error(&["crossover", &a, &b, "--cells", "4294967295"]);
    assert!(e.contains("--cells 4294967295: at most 1000"), "{e}");
    for few in ["0", "1"] {
        let e = capped_error(&["crossover", &a, &b, "--cells", few]);
        assert!(e.contains(&format!("--cells {few}: at least 2")), "{e}");
    }
    let e = capped_error(&[
        "crossover",
        &a,
        &b,
        "--var",
        "n",
        "--at",
        "p=2",
        "--samples",
        "99999999999",
    ]);
    assert!(e.contains("--samples 99999999999: at most 1000000"), "{e}");
}

/// Runs `lca`; it must succeed with finite numbers or fail with one line, never panic.
fn finite_or_one_line(args: &[&str]) {
    let out = lca().args(args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    if out.status.success() {
        for word in ["NaN", "inf"] {
            assert!(!stdout.contains(word), "{args:?}: {stdout}");
        }
    } else {
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    }
}

#[test]
fn extreme_option_values_give_finite_output_or_one_line() {
    let dir = scratch("limits-extreme");
    let a = model(&dir, "a");
    let b = model(&dir, "b");
    let data = text_of(datasets::path("fig2.dat"));
    let runs: &[&[&str]] = &[
        &["design", "--factor", "p=-1e308..1e308:lin:3", "--full"],
        &["design", "--factor", "p=-1e308..1e308", "--edges", "3"],
        &["design", "--factor", "p=1e-320..1e-310:log2", "--full"],
        &[
            "design",
            "--factor",
            "p=5e-324..1.7e308:log2:5",
            "--format",
            "toml",
        ],
        &[
            "design",
            "--factor",
            "p=1,2",
            "--seed",
            "18446744073709551615",
            "--replicates",
            "3",
        ],
        &["predict", &a, "--at", "p=1e308,n=1e308"],
        &["predict", &a, "--at", "p=5e-324,n=1e308"],
        &["predict", &a, "--grid", "p=-1e308..1e308:lin:3,n=1"],
        &["predict", &a, "--at", ",,,"],
        &["predict", &a, "--grid", ",,,"],
        &[
            "crossover",
            &a,
            &b,
            "--var",
            "n",
            "--at",
            "p=1",
            "--range",
            "n=1e-300..1e300:log2",
        ],
        &[
            "crossover",
            &a,
            &b,
            "--var",
            "n",
            "--at",
            "p=1",
            "--range",
            "n=-1e308..1e308",
        ],
        &["crossover", &a, &b, "--cells", "0"],
        &[&data, "--var", "p", "--cat", "li", "--predict", "p=1e308"],
        &[&data, "--var", "p", "--cat", "li", "--at", "p=1e400"],
        &["variation", &data, "--factors", ",", "--response", "li"],
    ];
    for args in runs {
        finite_or_one_line(args);
    }
}
