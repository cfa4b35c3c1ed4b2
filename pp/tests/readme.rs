//! Every `pp` line of the README and of the guide docs/measuring.md runs: their `$ pp ...` and
//! `$ cargo run --release -p pp ...` lines, in order, in one scratch folder (the log one line writes, the next reads), through
//! `sh -c` with this build's `pp` first on `PATH`. `cargo run -p pp --example NAME -- ARGS`
//! stands for the example binary this build made, `cargo run -p pp --bin pp -- ARGS` for `pp`.
//! `pp calibrate` writes under a scratch `$HOME`, never the user's. Only success is checked:
//! the figures have their own tests.

use test_support::{example, lines_of_pages, ran, scratch, shell};

/// The pages whose `pp` lines run, in order (the guide's lines read the log the README's wrote).
const PAGES: [&str; 2] = ["README.md", "docs/measuring.md"];

/// The pages' `pp` lines inside code blocks, comments cut, `cargo run` spelled as binaries,
/// each with its `page:line`.
fn readme_lines() -> Vec<(String, String)> {
    lines_of_pages(&PAGES, page_lines)
}

/// One page's `pp` lines with their line numbers.
fn page_lines(text: &str) -> Vec<(usize, String)> {
    let mut in_code = false;
    let mut openmp = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        // The OpenMP and MPI sections' lines need clang or Open MPI and the examples built:
        // tests/openmp_examples.rs and tests/mpi_examples.rs run them (and skip visibly).
        if line.starts_with("## ") {
            openmp = line.starts_with("## Measuring an OpenMP program")
                || line.starts_with("## Measuring an MPI program");
        }
        if openmp {
            continue;
        }
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let Some(command) = line.strip_prefix("$ ") else {
            continue;
        };
        let command = match command.find(" #") {
            Some(at) => &command[..at],
            None => command,
        };
        if !in_code || !(command.starts_with("pp ") || command.contains("-p pp ")) {
            continue;
        }
        lines.push((i + 1, spell(command.trim())));
    }
    lines
}

/// `cargo run --release -p pp --example NAME -- ARGS` → `NAME ARGS` (the example is on
/// `PATH`); `cargo run --release -p pp --bin pp [-- ARGS]` → `pp ARGS`.
fn spell(command: &str) -> String {
    command
        .split(" && ")
        .map(|part| {
            let Some(rest) = part.strip_prefix("cargo run --release -p pp ") else {
                return part.to_string();
            };
            let (target, args) = rest.split_once(" -- ").unwrap_or((rest, ""));
            let name = target
                .strip_prefix("--example ")
                .or_else(|| target.strip_prefix("--bin "))
                .unwrap_or_else(|| panic!("unknown cargo run target in `{part}`"));
            format!("{name} {args}").trim().to_string()
        })
        .collect::<Vec<_>>()
        .join(" && ")
}

#[test]
fn every_readme_pp_line_runs() {
    let dir = scratch("readme");
    let bin = dir.join("bin");
    let home = dir.join("home");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pp"), bin.join("pp")).unwrap();
    let lines = readme_lines();
    assert!(lines.len() >= 6, "found only {lines:?}");
    for (_, line) in &lines {
        for word in line.split_whitespace() {
            if ["categories", "contention"].contains(&word) && !bin.join(word).exists() {
                std::os::unix::fs::symlink(example("pp", word), bin.join(word)).unwrap();
            }
        }
    }
    for (origin, line) in &lines {
        let out = shell(&dir, &bin, line)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("PP_LOG")
            .env_remove("PP_MACHINE")
            .output()
            .unwrap();
        ran(origin, line, &out);
    }
    // What the lines promise to leave: a log, a row, a trace, a machine file.
    for file in ["pp.log", "datafile", "trace.json"] {
        assert!(dir.join(file).exists(), "{file}");
    }
    assert!(home.join(".config/pp/machine.toml").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cargo_run_lines_are_spelled_as_binaries() {
    assert_eq!(
        spell("cargo run --release -p pp --example categories -- -p 2"),
        "categories -p 2"
    );
    assert_eq!(spell("cargo run --release -p pp --bin pp"), "pp");
    assert_eq!(
        spell("cargo run --release -p pp --example contention -- -p 2 && pp --by phase"),
        "contention -p 2 && pp --by phase"
    );
}
