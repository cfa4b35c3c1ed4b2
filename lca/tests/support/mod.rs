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

/// `lca model DATA --where impl=NAME<and> [extra...] --out DIR/NAME.toml` for each
/// implementation (`and`: more conditions, e.g. `,role=model`); the model files' paths.
pub fn model_each(
    dir: &std::path::Path,
    data: &str,
    implementations: &[&str],
    and: &str,
    extra: &[&str],
) -> Vec<String> {
    implementations
        .iter()
        .map(|implementation| {
            let out = dir.join(format!("{implementation}.toml"));
            let out = out.to_str().unwrap().to_string();
            let filter = format!("impl={implementation}{and}");
            let mut args = vec!["model", data, "--where", &filter];
            args.extend_from_slice(extra);
            args.extend(["--out", &out]);
            stdout(&args);
            out
        })
        .collect()
}
