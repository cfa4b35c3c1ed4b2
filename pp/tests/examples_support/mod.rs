//! Running the example programs from integration tests.
#![allow(dead_code)]

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

/// Runs example `name` with `-p P` writing its log to `log`; panics with its standard error
/// unless it succeeds.
pub fn record(name: &str, p: u32, log: &std::path::Path) {
    let run = Command::new(example(name))
        .args(["-p", &p.to_string()])
        .env("PP_LOG", log)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{name} -p {p}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}
