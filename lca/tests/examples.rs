//! Every `lca` example a user can copy runs: the `$ lca ...` lines of the README and of the
//! guides (docs/measuring.md, modelling.md, comparing.md), in order, in a scratch folder that holds the bundled `datasets/` and `pp/` (the model files one line
//! writes, the next reads), and the `Examples:` of every `--help`, and the `--grid` examples of
//! `lca predict --help` (the issue that asked for this test found one that failed).
//!
//! Each line runs through `sh -c` with this build's `lca` first on `PATH`, so redirections
//! and quotes work as they do for the user. Only success is checked here: the numbers have
//! their own tests.

use std::path::{Path, PathBuf};

use test_support::{lines_of_pages, ran, repository, scratch, shell};

/// A scratch folder with `datasets/` linked in and a `bin/` holding this build's `lca`.
fn workspace(name: &str) -> PathBuf {
    let dir = scratch(name);
    // The README reads bundled data from datasets/ and pp's recorded runs from pp/tests/data/.
    for folder in ["datasets", "pp"] {
        let link = dir.join(folder);
        if !link.exists() {
            std::os::unix::fs::symlink(repository().join(folder), &link).unwrap();
        }
    }
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let lca = bin.join("lca");
    if !lca.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_lca"), &lca).unwrap();
    }
    dir
}

/// Runs one shell line in `dir`; panics with its output unless it succeeds.
fn run(dir: &Path, line: &str, origin: &str) -> String {
    ran(
        origin,
        line,
        &shell(dir, &dir.join("bin"), line).output().unwrap(),
    )
}

/// The pages whose `lca` lines run, in order: a guide's lines read the model files an earlier
/// page's lines wrote.
const PAGES: [&str; 4] = [
    "README.md",
    "docs/measuring.md",
    "docs/modelling.md",
    "docs/comparing.md",
];

/// The pages' `$ lca ...` lines inside code blocks, without trailing `# comments`, each with
/// its `page:line`.
fn readme_lines() -> Vec<(String, String)> {
    lines_of_pages(&PAGES, page_lines)
}

/// One page's `$ lca ...` lines with their line numbers.
fn page_lines(text: &str) -> Vec<(usize, String)> {
    let mut in_code = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let Some(command) = line.strip_prefix("$ lca ") else {
            continue;
        };
        if !in_code {
            continue;
        }
        // A `#` after whitespace starts a comment (none of the examples quote one).
        let command = match command.find(" #") {
            Some(at) => &command[..at],
            None => command,
        };
        lines.push((i + 1, format!("lca {}", command.trim())));
    }
    lines
}

#[test]
fn every_readme_lca_line_runs() {
    let dir = workspace("readme");
    let lines = readme_lines();
    assert!(lines.len() >= 10, "found only {lines:?}");
    for (origin, line) in &lines {
        run(&dir, line, origin);
    }
    println!("ran {} lines of {}", lines.len(), PAGES.join(", "));
}

/// The `Examples:` lines of a help text: indented lines starting with `lca ` after it.
fn help_examples(help: &str) -> Vec<String> {
    let mut examples = Vec::new();
    let mut in_examples = false;
    for line in help.lines() {
        if line.starts_with("Example") {
            in_examples = true;
            continue;
        }
        if in_examples {
            match line.trim_start().strip_prefix("lca ") {
                Some(rest) if line.starts_with(' ') => examples.push(format!("lca {rest}")),
                _ => in_examples = false,
            }
        }
    }
    examples
}

#[test]
fn every_help_example_runs() {
    let dir = workspace("help");
    let mut examples = Vec::new();
    for command in [
        "",
        "design",
        "variation",
        "model",
        "predict",
        "validate",
        "report",
        "crossover",
        "study",
    ] {
        let help = run(&dir, &format!("lca {command} --help"), "help");
        examples.extend(help_examples(&help));
    }
    assert!(examples.len() >= 2, "{examples:?}");
    for example in &examples {
        let words: Vec<&str> = example
            .split('#')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        match words[..] {
            // The bundled study measures for a minute: it is the README's first command, and
            // lca/tests/study.rs runs its commands on a small space. Its file is run small.
            ["lca", "study"] => {
                println!("skipped `{example}`: the bundled study, run small below");
                continue;
            }
            ["lca", "study", file] => {
                let small = std::fs::read_to_string(dir.join(file))
                    .unwrap()
                    .replace("32..512:log2", "16,32")
                    .replace("2..8:lin:7", "2,3")
                    .replace("design = \"edges:3\"", "design = \"full\"")
                    .replace("n = \"64,128,256\", p = \"4,6\"", "n = \"24\", p = \"3\"")
                    .replace("replicates = 2", "replicates = 1")
                    .replace("\"--iters\", \"500\"", "\"--iters\", \"3\"");
                std::fs::write(dir.join(file), small).unwrap();
            }
            _ => {}
        }
        run(&dir, example, "--help example");
    }

    // `lca predict --help`: "--grid n=32..1024:log2,p=2..26:lin:5 or --grid p=2,4,8 --grid
    // n=256". Take them from the help text itself.
    run(
        &dir,
        "lca model datasets/data/fft2d.dat --where impl=dp,role=model --out dp.toml --force",
        "setup",
    );
    let help = run(&dir, "lca predict --help", "help");
    let grids: Vec<&str> = help
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.starts_with("--grid"))
        .collect();
    assert_eq!(grids.len(), 2, "{help}");
    for grid in grids {
        let out = run(
            &dir,
            &format!("lca predict dp.toml {grid}"),
            "lca predict --help",
        );
        assert!(out.contains("T_p"), "{out}");
    }
}
