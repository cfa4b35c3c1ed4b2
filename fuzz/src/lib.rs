//! Fuzzing of lca's readers (issue 17, item 9): byte mutations of the repository's own inputs
//! fed to the text and binary log readers with the profile sweep, the datafile reader, model
//! files, study files and expressions. Each case must not panic, hang, abort or exhaust
//! memory, must answer bad input with one short line, and a datafile row it prints must add
//! up. See `src/main.rs` for the command line and `tests/budget.rs` for what CI runs.

pub mod case;
pub mod checks;
pub mod mutate;
pub mod runner;
pub mod seeds;
pub mod target;

/// `lca study`'s study file parser, compiled here as it is (the `lca` crate has no library).
#[allow(dead_code)]
#[path = "../../lca/src/study/file.rs"]
pub mod study_file;

/// Failure kinds of other helpers' areas that are being fixed on their branches now, as
/// `(target, kind)`: printed, not failed. Empty this list once their branches are merged.
/// Reproducers are in `fuzz/regressions/` (and, for hangs, `fuzz/known-slow/`).
pub const KNOWN: &[(&str, &str)] = &[
    // logread: a header error quotes the whole (long) first line.
    ("text-log", "long-error"),
    ("binary-log", "long-error"),
    // sweep: time sums overflow u64 (debug builds panic, release builds wrap).
    ("text-log", "panic@pp/src/profile/totals.rs"),
    ("text-log", "panic@core/src/iter/traits/accum.rs"),
    ("binary-log", "panic@pp/src/profile/totals.rs"),
    ("binary-log", "panic@core/src/iter/traits/accum.rs"),
    ("text-log", "row-arithmetic"),
    ("binary-log", "row-arithmetic"),
    // sweep: a warning lists a thread's whole stack of intervals.
    ("text-log", "long-warning"),
    ("binary-log", "long-warning"),
    // sweep: p = 1048576 with a few events takes minutes.
    ("text-log", "hang"),
    ("binary-log", "hang"),
    // logread/inputs: a header value `nan` or `inf` goes into the row, which lca then refuses.
    ("text-log", "row-reread"),
    ("binary-log", "row-reread"),
    // inputs: "column 'y' takes several values (..every value..)"; a last line without a
    // newline is read as a row.
    ("datafile", "long-error"),
    ("datafile", "torn-row-read"),
    // study: a TOML error quotes a long key or value whole.
    ("study-file", "long-error"),
    // inputs (design::plan) / study: a full design of huge factors is allocated unsized.
    ("study-file", "panic@alloc/src/raw_vec/mod.rs"),
    ("study-file", "abort-out-of-memory"),
    // inputs (design::plan): a plan of ~10^8 points under 2 GiB takes minutes to build.
    ("study-file", "hang"),
    // inputs (design::Factor): a level range near u64::MAX overflows.
    ("study-file", "panic@design/src/factor.rs"),
];

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
