//! The category example end to end: each of its phases is built to produce one lost-cycles
//! category, and `pp` must find that category dominant among the overheads of that phase.
//!
//! How a fresh run divides its time depends on the machine and what else runs on it, so the
//! dominance claim is checked on a log recorded once (`tests/data/categories-p2.log`, whose
//! header comment says how and when), and a fresh run is checked only for what holds
//! whatever the load: every phase is there and the numbers add up exactly.

use std::path::Path;

use serde_json::Value;
use test_support::{example, log_text, pp, record, stdout_of, succeeded, temp_path};

const PHASES: [(&str, &str); 5] = [
    ("serial", "ip"),
    ("imbalance", "li"),
    ("locks", "sl"),
    ("copy", "cl"),
    ("oversubscribed", "rc"),
];

/// `pp --format json LOG` without a machine file.
fn profile(log: &Path) -> Value {
    serde_json::from_str(&stdout_of(pp!().args(["--format", "json"]).arg(log))).unwrap()
}

/// Seconds (JSON) as nanoseconds: pp writes whole nanoseconds times 1e-9, which round back
/// exactly (far below 2^53 ns).
fn ns(v: &Value) -> i64 {
    (v.as_f64().unwrap() * 1e9).round() as i64
}

/// A fresh run at p = 2, whatever the machine's load: every phase of the example shows up,
/// each breakdown row and the whole run add up (categories to total, rc.cpu + rc.comm to
/// rc), the phases add up to the run and the run to p × wall.
#[test]
fn a_fresh_run_has_every_phase_and_adds_up() {
    let log = temp_path("categories.log");
    record(&example("pp", "categories"), 2, &log);
    let profile = profile(&log);
    let _ = std::fs::remove_file(&log);
    let sum = |c: &Value| -> i64 {
        ["li", "ip", "sl", "cl", "rc", "pc"]
            .iter()
            .map(|k| ns(&c[k]))
            .sum()
    };
    let whole = &profile["categories"];
    let wall = (profile["window_ns"][1].as_u64().unwrap()
        - profile["window_ns"][0].as_u64().unwrap()) as i64;
    assert!(wall > 0);
    assert_eq!(sum(whole), 2 * wall, "{profile}");
    let phases = profile["by_phase"].as_object().unwrap();
    for (phase, _) in PHASES {
        assert!(phases.contains_key(phase), "{phase} missing: {profile}");
    }
    let mut by_phase = 0;
    for (phase, c) in phases {
        assert_eq!(
            ns(&c["rc.cpu"]) + ns(&c["rc.comm"]),
            ns(&c["rc"]),
            "{phase}: {c}"
        );
        by_phase += sum(c);
    }
    assert_eq!(by_phase, 2 * wall, "{profile}");
    // Without a machine file every copy is communication loss, and only copies are.
    assert!(ns(&phases["copy"]["cl"]) > 0, "{profile}");
    assert_eq!(ns(&whole["cl"]), ns(&phases["copy"]["cl"]), "{profile}");
    assert_eq!(ns(&whole["rc.comm"]), 0);
}

/// The phases of a recorded run (see the fixture's header): each one's dominant overhead is
/// the category it was built for (rc competes only in the phase built to produce it), and
/// the oversubscribed phase has rc.cpu.
#[test]
fn each_phase_of_a_recorded_run_shows_its_category() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/categories-p2.log");
    let profile = profile(&log);
    let phases = &profile["by_phase"];
    for (phase, intended) in PHASES {
        let seconds = |key: &str| phases[phase][key].as_f64().unwrap();
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
        assert_eq!(dominant, intended, "{phase}: {}", phases[phase]);
    }
    assert!(phases["oversubscribed"]["rc.cpu"].as_f64().unwrap() > 0.0);
}

/// `--phase A,B --repeats N` runs the list N times over, in its order, and one thread of the
/// team opens every region (the program runs on its team, so that a skeleton's signature can
/// fold it: docs/skeletons.md); a bad list is one line and a failure, before anything runs.
#[test]
fn a_list_of_phases_runs_over_and_over_on_the_team() {
    let program = example("pp", "categories");
    let log = temp_path("categories-list.log");
    let run = std::process::Command::new(&program)
        .args(["-p", "2", "--phase", "imbalance,locks", "--scale", "0.05"])
        .args(["--repeats", "3", "--unit", "1000"])
        .env("PP_LOG", &log)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = log_text(pp!(), &log);
    let _ = std::fs::remove_file(&log);
    let field = |l: &str, i: usize| l.split_whitespace().nth(i).unwrap_or("").to_string();
    let phases: Vec<String> = text
        .lines()
        .filter(|l| field(l, 1) == "0" && field(l, 2) == "phase")
        .map(|l| field(l, 3))
        .collect();
    assert_eq!(phases, ["imbalance", "locks"].repeat(3), "{text}");
    let openers: Vec<String> = text
        .lines()
        .filter(|l| field(l, 2) == "region_begin")
        .map(|l| field(l, 1))
        .collect();
    assert_eq!(openers.len(), 6, "{text}");
    assert!(openers.iter().all(|t| *t == openers[0]), "{openers:?}");

    for args in [&["--phase", "serial,bogus"][..], &["--repeats", "0"][..]] {
        let out = std::process::Command::new(&program)
            .args(args)
            .env("PP_LOG", temp_path("categories-refused.log"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with(args[0]), "{args:?}: {stderr}");
        assert!(!temp_path("categories-refused.log").exists(), "{args:?}");
    }
}

/// With `PP_LOCKS=every` the Rust recorder's `Mutex` records every acquisition: the locks
/// phase takes its lock once a round (240) and once more in each thread to see that the rounds
/// are done, in every pass, contended or not; and the passes, which split the rounds between
/// the threads differently each time, fold into one loop at the signature's last threshold
/// (docs/skeletons.md#locks-taken-in-varying-numbers).
#[test]
fn every_acquisition_is_recorded_and_the_passes_fold_with_runs_free() {
    let program = example("pp", "categories");
    let repeats = 6;
    let record = |every: bool| {
        let log = temp_path(&format!("categories-locks-{every}.log"));
        let mut cmd = std::process::Command::new(&program);
        cmd.args(["-p", "2", "--phase", "locks", "--scale", "0.05"])
            .args(["--repeats", &repeats.to_string(), "--unit", "20000"])
            .env("PP_LOG", &log)
            .env_remove("PP_LOCKS");
        if every {
            cmd.env("PP_LOCKS", "every");
        }
        succeeded("categories --phase locks", &cmd.output().unwrap());
        log
    };
    let waits = |log: &Path| {
        let text = log_text(pp!(), log);
        text.lines()
            .filter(|l| l.split_whitespace().nth(2) == Some("wait_begin"))
            .filter(|l| l.split_whitespace().nth(3) == Some("lock"))
            .count()
    };
    let every = record(true);
    assert_eq!(waits(&every), repeats * (240 + 2));
    let signature = stdout_of(pp!().args(["signature", "--threshold", "2"]).arg(&every));
    let _ = std::fs::remove_file(&every);
    let threads: Vec<&str> = signature.split("\nthread ").skip(1).collect();
    assert_eq!(threads.len(), 2, "{signature}");
    for t in threads {
        // The passes are one loop of `repeats`, whatever each thread's share of the rounds.
        let first = t.lines().nth(1).unwrap_or("").trim();
        assert_eq!(first, format!("loop {repeats} {{"), "{signature}");
    }
    // Without it only the acquisitions that waited are there.
    let contended = record(false);
    assert!(waits(&contended) < repeats * (240 + 2));
    let _ = std::fs::remove_file(&contended);
}
