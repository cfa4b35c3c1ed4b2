//! Fuzzing of lca's readers (issue 17, item 9): byte mutations of the repository's own inputs
//! fed to the text and binary log readers with the profile sweep, the datafile reader, model
//! files, study files, expressions, PACE model files, skeleton files, and `pp signature` and
//! `pp skeleton` on logs. Each case must not panic, hang, abort or exhaust memory, must answer
//! bad input with one short line, and a datafile row it prints must add up. See `src/main.rs`
//! for the command line and `tests/budget.rs` for what CI runs.

pub mod case;
pub mod checks;
pub mod mutate;
pub mod runner;
pub mod seeds;
pub mod target;

/// Failure kinds accepted for now, as `(target, kind)`: printed, not failed. Reproducers are
/// in `fuzz/regressions/` (and, for hangs not yet fixed, `fuzz/known-slow/`). None at present.
pub const KNOWN: &[(&str, &str)] = &[];

/// Whether a failure of `kind` in `target` is on the [`KNOWN`] list.
pub fn is_known(target: &str, kind: &str) -> bool {
    KNOWN.iter().any(|&(t, k)| t == target && k == kind)
}

/// Runs `input` through `target` and panics on a failure not on [`KNOWN`]: the entry point of
/// the libFuzzer targets in `fuzz/libfuzzer/`, for which a panic is the finding.
pub fn assert_case(target: target::Target, input: &[u8]) {
    if let Err(f) = target.run(input)
        && f.kind != "slow"
        && !is_known(target.name(), &f.kind)
    {
        panic!("{target}: {f}");
    }
}
