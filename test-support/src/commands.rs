//! Commands of the workspace's binaries. `CARGO_BIN_EXE_<name>` is known only while the
//! crate that builds a binary compiles its tests, so [`pp!`](crate::pp) and
//! [`lca!`](crate::lca) are macros: they expand in the test that calls them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What `PP_MACHINE` is set to so that `pp` uses no machine file, whatever the user running
/// the tests has calibrated: a path that does not exist.
pub const NO_MACHINE: &str = "/nonexistent/machine.toml";

/// `pp` of the crate under test (`CARGO_BIN_EXE_pp`), as a [`std::process::Command`], with no
/// machine file ([`NO_MACHINE`]) and no `PP_LOG` from the environment: a test's `pp` reads
/// only the logs the test names (or `./pp.log` in its current folder).
#[macro_export]
macro_rules! pp {
    () => {{
        let mut pp = ::std::process::Command::new(::std::env!("CARGO_BIN_EXE_pp"));
        pp.env("PP_MACHINE", $crate::NO_MACHINE)
            .env_remove("PP_LOG");
        pp
    }};
}

/// `lca` of the crate under test (`CARGO_BIN_EXE_lca`), as a [`std::process::Command`].
#[macro_export]
macro_rules! lca {
    () => {
        ::std::process::Command::new(::std::env!("CARGO_BIN_EXE_lca"))
    };
}

/// `cargo build` (the `cargo` running the tests) in the profile whose output folder is `dir`
/// (`target/<profile>`, where a binary under test lies): `--release` when it is `release`.
/// The caller adds what to build (`-p pp-ompt`, `--example NAME`...). For tests that need a
/// target that `cargo test` of one crate does not build.
pub fn cargo_build(dir: &Path) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build.arg("build");
    if dir.file_name().is_some_and(|d| d == "release") {
        build.arg("--release");
    }
    build
}

/// Makes the skeleton of `log`, `k` times shorter, in `dir` (removed first) with `pp skeleton
/// LOG --scale K --out DIR`, `pp` being a command from [`pp!`](crate::pp); returns `dir`.
///
/// # Panics
/// When `pp skeleton` fails.
pub fn make_skeleton(mut pp: Command, log: &Path, k: u64, dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    let out = pp
        .arg("skeleton")
        .arg(log)
        .args(["--scale", &k.to_string(), "--out"])
        .arg(dir)
        .output()
        .unwrap();
    crate::succeeded("pp skeleton", &out);
    dir.to_path_buf()
}

/// The text form of the log at `log` (`pp convert --to text LOG -`, `pp` being a command from
/// [`pp!`](crate::pp)), for a test that reads its events.
///
/// # Panics
/// When `pp convert` fails.
pub fn log_text(mut pp: Command, log: &Path) -> String {
    crate::stdout_of(pp.args(["convert", "--to", "text"]).arg(log).arg("-"))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn cargo_builds_in_the_profile_of_the_folder() {
        let args = |dir: &str| -> Vec<String> {
            super::cargo_build(Path::new(dir))
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(args("target/debug"), ["build"]);
        assert_eq!(args("target/release"), ["build", "--release"]);
    }
}
