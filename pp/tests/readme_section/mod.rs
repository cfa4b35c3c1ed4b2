//! Running the `$ pp` lines of one section of the guide docs/measuring.md, in order, as a user would from the
//! repository root: in a scratch folder whose `examples/<kind>/build` is the examples the test
//! built and whose `pp` (on `PATH`) is the one under test. Shared by the tests of the OpenMP
//! and MPI sections, whose lines need their compilers and so are not run by `readme.rs`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use test_support::{NO_MACHINE, ran, scratch, shell};

/// The page whose sections these are.
pub const PAGE: &str = "docs/measuring.md";

/// The `$ pp ...` lines of the section of [`PAGE`] whose heading starts with `heading`, with
/// their line numbers, trailing ` #` comments cut.
pub fn pp_lines(heading: &str) -> Vec<(usize, String)> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(PAGE);
    let readme = std::fs::read_to_string(readme).unwrap();
    let mut section = false;
    let mut lines = Vec::new();
    for (i, line) in readme.lines().enumerate() {
        if line.starts_with("## ") {
            section = line.starts_with(heading);
        }
        let Some(command) = line.strip_prefix("$ pp ").filter(|_| section) else {
            continue;
        };
        let command = command.find(" #").map_or(command, |at| &command[..at]);
        lines.push((i + 1, format!("pp {}", command.trim())));
    }
    lines
}

/// Runs `lines` with `sh -c` in a fresh folder named after `test`, where
/// `examples/<kind>/build` links to `built`, without `PP_LOG`, the variables of `unset` or a
/// machine file. Every line must succeed without a panic. Returns the folder, for the test's
/// own checks of what the lines left (the caller removes it).
pub fn run(
    test: &str,
    lines: &[(usize, String)],
    kind: &str,
    built: &Path,
    unset: &[&str],
) -> PathBuf {
    let dir = scratch(test);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::create_dir_all(dir.join("examples").join(kind)).unwrap();
    std::os::unix::fs::symlink(built, dir.join("examples").join(kind).join("build")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pp"), dir.join("bin/pp")).unwrap();
    for (number, line) in lines {
        let mut command = shell(&dir, &dir.join("bin"), line);
        command.env_remove("PP_LOG").env("PP_MACHINE", NO_MACHINE);
        for var in unset {
            command.env_remove(var);
        }
        ran(
            &format!("{PAGE}:{number}"),
            line,
            &command.output().unwrap(),
        );
    }
    dir
}
