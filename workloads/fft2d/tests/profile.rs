//! End to end: the `fft2d` binary writes a log to `$PP_LOG`, and `pp`'s reader and profiler
//! (the library behind `pp -l`) make a datafile row of it with the run's parameters and
//! categories that add up to `p × wall`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pp::log::LogReader;
use pp::profile::{CATEGORIES, Category, Profile, profile_log};

use test_support::{one_line_error, temp_path};

fn fft2d(args: &[&str], log: Option<&PathBuf>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fft2d"));
    cmd.args(args);
    match log {
        Some(path) => cmd.env("PP_LOG", path),
        None => cmd.env_remove("PP_LOG"),
    };
    cmd.output().unwrap()
}

fn temp_log(name: &str) -> PathBuf {
    temp_path(&format!("{name}.log"))
}

/// What `pp` does with a log (no machine calibration: all communication is `cl`).
fn profile(path: &Path) -> Profile {
    let mut reader = LogReader::open(path).unwrap();
    let profiled = profile_log(&mut reader, None, None);
    assert!(profiled.finished, "the log has no end marker");
    let profile = profiled.whole(&path.display().to_string()).unwrap();
    assert!(profile.warnings.is_empty(), "{:?}", profile.warnings);
    profile
}

/// The `key=value` fields of a datafile row.
fn fields(row: &str) -> Vec<(String, String)> {
    row.split_whitespace()
        .map(|f| {
            let (k, v) = f.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn field<'a>(fields: &'a [(String, String)], key: &str) -> &'a str {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {fields:?}"))
}

/// Runs the binary recorded and returns the profile of its log.
fn recorded_run(implementation: &str, p: usize, n: usize, iters: usize) -> Profile {
    let log = temp_log(&format!("{implementation}-{p}-{n}"));
    let (p_arg, n_arg, iters_arg) = (p.to_string(), n.to_string(), iters.to_string());
    let out = fft2d(
        &[
            "--impl",
            implementation,
            "-p",
            &p_arg,
            "-n",
            &n_arg,
            "--iters",
            &iters_arg,
        ],
        Some(&log),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("checksum "), "{stdout}");
    let profile = profile(&log);
    let _ = std::fs::remove_file(&log);

    let row = profile.datafile_row();
    let f = fields(&row);
    assert_eq!(field(&f, "impl"), implementation, "{row}");
    assert_eq!(field(&f, "n"), n_arg, "{row}");
    assert_eq!(field(&f, "p"), p_arg, "{row}");
    assert_eq!(field(&f, "iters"), iters_arg, "{row}");
    // Every thread-instant is in exactly one category (exact, in nanoseconds) ...
    let wall = u128::from(profile.wall_ns());
    assert_eq!(profile.total_ns(), p as u128 * wall, "{row}");
    let sum: u128 = CATEGORIES.iter().map(|&c| profile.totals.get(c)).sum();
    assert_eq!(sum, profile.total_ns(), "{row}");
    // ... and the row says so too (seconds with 9 decimals).
    let seconds = |key: &str| field(&f, key).parse::<f64>().unwrap();
    let categories: f64 = CATEGORIES.iter().map(|c| seconds(c.key())).sum();
    assert!((categories - seconds("total")).abs() < 1e-6, "{row}");
    assert!(
        (seconds("total") - p as f64 * seconds("wall")).abs() < 1e-6,
        "{row}"
    );
    assert!(profile.totals.get(Category::Pc) > 0, "{row}");
    // Both transpose through an intermediate matrix, recorded as communication.
    assert!(profile.totals.get(Category::Cl) > 0, "{row}");
    profile
}

#[test]
fn dp_log_makes_a_datafile_row() {
    let profile = recorded_run("dp", 2, 64, 4);
    let regions: Vec<&str> = profile.by_region.iter().map(|(r, _)| r.as_str()).collect();
    for r in ["init", "columns", "transpose.out", "transpose.back", "rows"] {
        assert!(regions.contains(&r), "no region {r} in {regions:?}");
    }
}

#[test]
fn tp_log_makes_a_datafile_row() {
    let profile = recorded_run("tp", 3, 64, 4);
    let regions: Vec<&str> = profile.by_region.iter().map(|(r, _)| r.as_str()).collect();
    for r in [
        "recv.free",
        "init",
        "rows",
        "recv.full",
        "transpose.out",
        "transpose.back",
        "columns",
    ] {
        assert!(regions.contains(&r), "no region {r} in {regions:?}");
    }
    // Stage 1 (thread 0) only works on init and rows, stage 2 (threads 1, 2) only moves data
    // in the transpose: communication happens on the second group only.
    assert_eq!(profile.by_thread[0].get(Category::Cl), 0);
    assert!(profile.by_thread[1].get(Category::Cl) > 0);
}

#[test]
fn check_passes_and_no_record_writes_no_log() {
    let log = temp_log("norecord");
    let _ = std::fs::remove_file(&log);
    for implementation in ["dp", "tp"] {
        let out = fft2d(
            &[
                "--impl",
                implementation,
                "-p",
                "2",
                "-n",
                "24",
                "--iters",
                "3",
                "--check",
                "--no-record",
            ],
            Some(&log),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("not recorded"), "{stdout}");
        assert!(
            stdout.contains("check: 3 iterations match the reference"),
            "{stdout}"
        );
        assert!(!log.exists(), "--no-record wrote {}", log.display());
    }
}

#[test]
fn bad_arguments_give_one_error_line() {
    for args in [
        &["--impl", "tp", "-p", "1"][..],
        &["-p", "0"],
        &["-n", "0"],
        &["-n", "lots"],
        &["--impl", "mpi"],
        &["--iters", "0"],
        &["--frobnicate"],
    ] {
        let out = fft2d(args, None);
        let stderr = one_line_error(&out, Some(1), &[]);
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(stderr.starts_with("Error: "), "{args:?}: {stderr}");
    }
    let out = fft2d(&["--impl", "tp", "-p", "1"], None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("tp needs at least 2 threads"));
}
