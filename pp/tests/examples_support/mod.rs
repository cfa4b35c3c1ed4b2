//! Running the example programs from integration tests.

use std::path::PathBuf;
use std::process::Command;

/// `target/<profile>/examples/<name>`. `cargo test` builds examples beside the tests; when
/// only one test target was asked for, build the example the same way.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", "pp", "--example", name]);
        if dir.file_name().is_some_and(|d| d == "release") {
            build.arg("--release");
        }
        assert!(
            build.status().unwrap().success(),
            "building the {name} example"
        );
    }
    path
}
