//! The category example end to end: each of its phases is built to produce one lost-cycles
//! category, and `pp` must find that category dominant among the overheads of that phase.

mod examples_support;

use std::path::PathBuf;
use std::process::Command;

fn example() -> PathBuf {
    examples_support::example("categories")
}

/// The phases whose dominant overhead is not the intended one in one run (empty: all right).
fn misattributed_phases(run: usize) -> Vec<String> {
    let log = std::env::temp_dir().join(format!("pp-categories-{}-{run}.log", std::process::id()));
    // p = 2: one thread per core here, so only the oversubscribed phase oversubscribes.
    let example = Command::new(example())
        .args(["-p", "2"])
        .env("PP_LOG", &log)
        .output()
        .unwrap();
    assert!(
        example.status.success(),
        "{}",
        String::from_utf8_lossy(&example.stderr)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_pp"))
        .env("PP_MACHINE", "/nonexistent/machine.toml")
        .args(["--format", "json"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_file(&log);
    let profile: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let phases = &profile["by_phase"];
    let mut wrong = Vec::new();
    for (phase, intended) in [
        ("serial", "ip"),
        ("imbalance", "li"),
        ("locks", "sl"),
        ("copy", "cl"),
        ("oversubscribed", "rc"),
    ] {
        let seconds = |key: &str| phases[phase][key].as_f64().unwrap();
        // Contention can also come from other processes on the machine: rc competes only in
        // the phase built to produce it.
        let candidates: &[&str] = if intended == "rc" {
            &["li", "ip", "sl", "cl", "rc"]
        } else {
            &["li", "ip", "sl", "cl"]
        };
        let dominant = candidates
            .iter()
            .copied()
            .max_by(|a, b| seconds(a).total_cmp(&seconds(b)))
            .unwrap();
        if dominant != intended {
            wrong.push(format!(
                "{phase}: {dominant} instead of {intended} in {}",
                phases[phase]
            ));
        }
    }
    if phases["oversubscribed"]["rc.cpu"].as_f64().unwrap() <= 0.0 {
        wrong.push("oversubscribed: no rc.cpu".into());
    }
    wrong
}

/// A measurement, not a simulation: on a busy machine a run can legitimately look different,
/// so up to three runs are made and one must show every phase's intended category.
#[test]
fn each_phase_produces_its_category() {
    let mut failures = Vec::new();
    for run in 0..3 {
        let wrong = misattributed_phases(run);
        if wrong.is_empty() {
            return;
        }
        eprintln!("run {run}: {wrong:?}");
        failures.push(wrong);
    }
    panic!("no run showed the intended categories: {failures:?}");
}
