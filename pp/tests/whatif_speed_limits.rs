//! `pp whatif --speed` at its extremes (issue 37, item 3): a factor so small that one
//! nanosecond of computation would outlast the log's clock is refused in one line (it hung
//! the replay: its times overflowed to infinity), and what the user wrote is quoted short.

use test_support::{error_of, pp, repository};

fn log() -> String {
    repository()
        .join("pp/tests/data/categories-p2.log")
        .display()
        .to_string()
}

#[test]
fn a_factor_below_2_pow_minus_128_is_refused_in_one_line() {
    let out = test_support::scratch("whatif-speed-tiny").join("predicted.log");
    for factor in ["1e-320", "1e-300", "1e-40"] {
        let err = error_of(pp!().args([
            "whatif",
            &log(),
            "--speed",
            &format!("serial={factor}"),
            "--out",
            out.to_str().unwrap(),
        ]));
        assert!(err.contains("below 2^-128"), "{factor}: {err}");
        assert!(!out.exists());
    }
}

#[test]
fn a_long_speed_argument_is_quoted_short() {
    let out = test_support::scratch("whatif-speed-long").join("predicted.log");
    let long = "x".repeat(2000);
    for arg in [
        long.clone(),
        format!("serial={long}"),
        format!("={long}"),
        format!("{long}=2"),
    ] {
        let err = error_of(pp!().args([
            "whatif",
            &log(),
            "--speed",
            &arg,
            "--out",
            out.to_str().unwrap(),
        ]));
        assert!(err.len() < 300, "{} bytes: {err}", err.len());
    }
    let err = error_of(pp!().args([
        "whatif",
        &log(),
        "--group",
        &format!("0,{long}"),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(err.len() < 300, "{} bytes: {err}", err.len());
}
