//! `lca`, the binary under test, wired to `test_support` for the `lca` end-to-end tests (its
//! path is known only to this crate's tests): its command, its one-line errors, its output.
#![allow(dead_code)]

use std::process::Command;

pub fn lca() -> Command {
    test_support::lca!()
}

/// Runs `lca` expecting failure; returns stderr after checking it is one line, not a panic
/// ([`test_support::error_of`]).
pub fn error_of(args: &[&str]) -> String {
    test_support::error_of(lca().args(args))
}

/// Runs `lca`; its standard output, after checking that it succeeded.
pub fn stdout(args: &[&str]) -> String {
    test_support::stdout_of(lca().args(args))
}
