//! What CI runs of the fuzzer: 50,000 mutants from a fixed seed (about 10 s of cases on the
//! 2-core development VM, 6 of them one log with p = 2^20), and every saved reproducer in
//! `fuzz/regressions/`. Failure kinds on
//! `fuzz::KNOWN` are printed, not failed; `slow` cases are printed, never failed (time depends
//! on the machine); a hang is a case that finishes nothing for 300 s.

use std::process::Command;

fn fuzz(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fuzz"))
        .args(args)
        .args(["--no-save", "--hang-s", "300"])
        .output()
        .expect("the fuzz binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    (out.status.success(), text)
}

#[test]
fn a_fixed_budget_of_mutants_finds_no_new_failure() {
    let (ok, text) = fuzz(&["--cases", "50000", "--seed", "17"]);
    assert!(ok, "{text}");
    let total = text.lines().find_map(|l| l.strip_prefix("total"));
    let cases = total.and_then(|t| t.split_whitespace().next());
    assert_eq!(cases, Some("50000"), "{text}");
}

#[test]
fn every_saved_reproducer_passes() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/regressions");
    let (ok, text) = fuzz(&["--replay", dir]);
    assert!(ok, "{text}");
}
