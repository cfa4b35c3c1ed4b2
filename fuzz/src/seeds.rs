//! Seeds: the repository's own inputs of each kind, read from the checkout at run time (the
//! example logs and datafiles of the tests and datasets, the fenced examples of the docs, the
//! study files, and model files built from the bundled measurements as `lca model` does).

use std::path::{Path, PathBuf};

use crate::target::Target;

/// The repository root (the folder above this crate).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the fuzz crate lives in the workspace")
        .to_path_buf()
}

fn read(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

fn files(dir: &str, ext: &str) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    paths.sort();
    paths.iter().filter_map(|p| read(p)).collect()
}

/// The fenced code blocks of the docs and the README.
fn doc_blocks() -> Vec<String> {
    let mut docs = vec![root().join("README.md")];
    docs.extend(
        std::fs::read_dir(root().join("docs"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    docs.sort();
    let mut blocks = Vec::new();
    for doc in docs {
        let Ok(text) = std::fs::read_to_string(&doc) else {
            continue;
        };
        let mut block: Option<String> = None;
        for line in text.lines() {
            match (&mut block, line.trim_start().starts_with("```")) {
                (None, true) => block = Some(String::new()),
                (Some(_), true) => blocks.extend(block.take()),
                (Some(b), false) => {
                    b.push_str(line);
                    b.push('\n');
                }
                (None, false) => {}
            }
        }
    }
    blocks
}

/// The raw string literals (`r#"..."#`) of a source file: the inline inputs of its tests.
fn raw_strings(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(path)).unwrap_or_default();
    text.split("r#\"")
        .skip(1)
        .filter_map(|s| s.split_once("\"#").map(|(body, _)| body.to_string()))
        .collect()
}

/// The plain string literals of the Rust files under `dir` (or of the file `dir`), with `\n`,
/// `\t`, `\"`, `\\` and line continuations undone: the inline inputs of tests.
fn string_literals(dir: &str) -> Vec<String> {
    let path = root().join(dir);
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(&path) {
        Ok(d) => d.flatten().map(|e| e.path()).collect(),
        Err(_) => vec![path],
    };
    paths.retain(|p| p.extension().is_some_and(|e| e == "rs"));
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let mut chars = text.chars().peekable();
        let mut previous = ' ';
        while let Some(c) = chars.next() {
            // A literal opens with `"` not preceded by `'`, `r`, `#` or `\\`.
            if c != '"' || matches!(previous, '\'' | 'r' | '#' | '\\') {
                previous = c;
                continue;
            }
            let mut s = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some('n') => s.push('\n'),
                        Some('t') => s.push('\t'),
                        Some('\n') => while chars.next_if(|c| c.is_whitespace()).is_some() {},
                        Some(other) => s.push(other),
                        None => {}
                    },
                    _ => s.push(c),
                }
            }
            out.push(s);
            previous = '"';
        }
    }
    out
}

fn first_content_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("")
}

fn text_logs() -> Vec<Vec<u8>> {
    let mut seeds = files("pp/tests/data", "log");
    let inline = doc_blocks()
        .into_iter()
        .chain(string_literals("pp/tests"))
        .chain(string_literals("pp/src/log"))
        .chain(string_literals("pp/src/profile"));
    let mut logs: Vec<String> = inline
        .filter(|b| first_content_line(b).starts_with("pplog") && b.len() > 12)
        .collect();
    logs.sort();
    logs.dedup();
    seeds.extend(logs.into_iter().map(String::into_bytes));
    seeds
}

/// The text logs that read, converted to the binary encoding by `pp::log::convert`.
fn binary_logs() -> Vec<Vec<u8>> {
    let dir = std::env::temp_dir().join(format!("lca-fuzz-seeds-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return Vec::new();
    }
    let mut seeds = Vec::new();
    for (i, text) in text_logs().iter().enumerate() {
        let (input, output) = (dir.join(format!("{i}.log")), dir.join(format!("{i}.bin")));
        if std::fs::write(&input, text).is_ok()
            && pp::log::convert(&input, &output, Some(pp::log::Encoding::Binary), true).is_ok()
        {
            seeds.extend(read(&output));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    seeds
}

fn datafiles() -> Vec<Vec<u8>> {
    let mut seeds = files("datasets/data", "dat");
    seeds.extend(files("datasets/data/nist", "csv"));
    seeds.extend(files("pp/tests/data", "dat"));
    seeds.extend(
        doc_blocks()
            .into_iter()
            .filter(|b| {
                let first = first_content_line(b);
                first.split_whitespace().count() > 2
                    && first.split_whitespace().all(|f| f.contains('='))
            })
            .map(String::into_bytes),
    );
    seeds
}

/// The model files `lca model datasets/data/fft2d.dat --where impl=dp,role=model` and `lca
/// model datasets/data/fft2d-16core-weak.dat --where impl=dp` write: the second's `n` and `p`
/// vary together, so it holds `[[category.vary_together]]` tables.
fn built_models() -> Vec<String> {
    [
        ("fft2d.dat", &["impl=dp", "role=model"][..]),
        ("fft2d-16core-weak.dat", &["impl=dp"][..]),
    ]
    .iter()
    .filter_map(|(file, conditions)| built_model(file, conditions))
    .collect()
}

fn built_model(file: &str, conditions: &[&str]) -> Option<String> {
    let data = fit::Datafile::read(&root().join("datasets/data").join(file)).ok()?;
    let conditions: Vec<fit::Condition> =
        conditions.iter().filter_map(|c| c.parse().ok()).collect();
    let data = data.filter(&conditions).ok()?;
    let options = fit::performance::BuildOptions {
        name: "dp".into(),
        conditions,
        created_by: "fuzz".into(),
        ..Default::default()
    };
    let model = fit::performance::PerformanceModel::build(&data, &options).ok()?;
    Some(fit::model_file::write(&model))
}

fn model_files(built: &[String]) -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = built.iter().map(|m| m.clone().into_bytes()).collect();
    seeds.extend(
        doc_blocks()
            .into_iter()
            .filter(|b| b.contains("format = 1"))
            .map(String::into_bytes),
    );
    seeds
}

fn study_files() -> Vec<Vec<u8>> {
    let mut seeds = files("lca/src/study", "toml");
    seeds.extend(files("datasets/studies", "toml"));
    let inline = doc_blocks()
        .into_iter()
        .chain(raw_strings("lca/tests/study.rs"))
        .chain(raw_strings("lca/src/study/file/tests.rs"))
        .chain(string_literals("lca/tests"))
        .chain(string_literals("lca/src/study/file"));
    seeds.extend(
        inline
            .filter(|b| b.contains("[[implementation]]"))
            .map(String::into_bytes),
    );
    // Every optional table at once, so that mutants reach their checkers together.
    seeds.push(
        b"name = \"all\"\ndesign = \"full\"\nreplicates = 2\nmax_failures = 3\n\n[factors]\n\
          n = \"32..512:log2\"\np = \"2..8:lin:4\"\n\n[precision]\ntarget = 0.05\n\
          max_replicates = 5\n\n[decide]\nbudget = 8\nper_round = 2\n\n[whatif]\n\
          where = \"p > 4\"\ndemand = \"measured\"\n\n[[implementation]]\nname = \"a\"\n\
          command = [\"{lca}\", \"{n}\", \"{p}\", \"{replicate}\"]\n\n[[implementation]]\n\
          name = \"b\"\ncommand = [\"{pp}\", \"{n}\", \"{p}\"]\ntimeout_s = 1e-9\n"
            .to_vec(),
    );
    seeds
}

/// An Extra-P text file over three parameters on {2, 4, 8, 16}³, `200 + 100 log2(x) + 2 y
/// sqrt(z)` with two repetitions 1% apart: its full form's products are dropped one by one
/// (docs/modelling.md), a path no two-parameter seed takes.
fn three_parameters() -> String {
    let levels = [2.0f64, 4.0, 8.0, 16.0];
    let mut points = Vec::new();
    let mut data = String::new();
    for x in levels {
        for y in levels {
            for z in levels {
                points.push(format!("( {x} {y} {z} )"));
                let t = 200.0 + 100.0 * x.log2() + 2.0 * y * z.sqrt();
                data.push_str(&format!("DATA {} {}\n", t * 0.995, t * 1.005));
            }
        }
    }
    format!(
        "PARAMETER x\nPARAMETER y\nPARAMETER z\nPOINTS {}\nREGION main\nMETRIC time\n{data}",
        points.join(" ")
    )
}

/// Extra-P text files: the docs' examples and the tests' inline ones, and one of three
/// parameters.
fn extrap_files() -> Vec<Vec<u8>> {
    let inline = doc_blocks()
        .into_iter()
        .chain(string_literals("lca/tests/extrap.rs"))
        .chain(string_literals("fit/src/extrap"));
    let mut seeds: Vec<String> = inline
        .filter(|b| first_content_line(b).starts_with("PARAMETER"))
        .collect();
    seeds.push(three_parameters());
    seeds.sort();
    seeds.dedup();
    seeds.into_iter().map(String::into_bytes).collect()
}

/// `pp whatif` target files: the docs' examples and the tests' inline ones.
fn whatif_targets() -> Vec<Vec<u8>> {
    let inline = doc_blocks()
        .into_iter()
        .chain(string_literals("pp/tests"))
        .chain(string_literals("pp/src/whatif"));
    let mut seeds: Vec<String> = inline
        .filter(|b| {
            let first = first_content_line(b);
            ["group = ", "machine = ", "demand = ", "[speed]"]
                .iter()
                .any(|k| first.starts_with(k))
        })
        .collect();
    seeds.push("group = \"0,1;2,3\"\ndemand = \"measured\"\n\n[speed]\npar = 2\n".into());
    seeds.sort();
    seeds.dedup();
    seeds.into_iter().map(String::into_bytes).collect()
}

/// The recorded logs of [`crate::target::WHATIF_LOGS`] with option sets as `pp whatif`'s
/// tests and docs use them (the target's input: one option a line, then a machine file).
fn whatif_options() -> Vec<Vec<u8>> {
    let machines: Vec<String> = doc_blocks()
        .into_iter()
        .filter(|b| b.contains("[mpi]") || b.contains("cores ="))
        .collect();
    let mut seeds: Vec<String> = vec![
        "--log 0\n--group 0,1\n".into(),
        "--log 0\n--speed serial=2\n--speed imbalance=0.5\n".into(),
        "--log 1\n--demand cpu\n--group 0,1\n".into(),
        "--log 2\n--demand elapsed\n--speed imbalance=4\n".into(),
        "--log 1\n--group 0/1\n--speed critical=3\n".into(),
        "--log 0\n--group 0,1\n--sharing run-to-block\n--slice-us 3000\n--switch-us 2\n".into(),
        "--log 2\n--group 0,1\n--sharing run-to-block\n--wake-us 20\n--speed imbalance=1e-9\n"
            .into(),
        "--log 1\n--group 0,1\n--sharing run-to-block\n--waits spin\n--slice-us 50\n".into(),
        "--log 0\n--group 0,1\n--sharing run-to-block\n--waits spin\n--rendezvous-bytes 0\n".into(),
        "--log 0\n--group 0,1\n--sharing run-to-block\n--waits spin\n--speed serial=1e-9\n".into(),
    ];
    for m in machines {
        seeds.push(format!("--log 0\n--group 0,1\n---\n{m}"));
    }
    seeds.into_iter().map(String::into_bytes).collect()
}

/// The OTF2 traces in `fuzz/otf2/` (each a folder written by `pp/tests/otf2_writer.c` from
/// its `script.txt`), each packed as [`crate::target::unpack`] reads them.
fn otf2_traces() -> Vec<Vec<u8>> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(root().join("fuzz/otf2"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    let mut seeds = Vec::new();
    for folder in folders {
        let mut files = Vec::new();
        let mut stack = vec![folder.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.file_name().is_some_and(|n| n != "script.txt") {
                    files.push(path);
                }
            }
        }
        files.sort();
        let mut packed = Vec::new();
        for f in files {
            let (Ok(rel), Some(bytes)) = (f.strip_prefix(&folder), read(&f)) else {
                continue;
            };
            packed.extend_from_slice(format!("{}\n{}\n", rel.display(), bytes.len()).as_bytes());
            packed.extend_from_slice(&bytes);
        }
        seeds.push(packed);
    }
    seeds
}

fn expressions(built: &[String]) -> Vec<Vec<u8>> {
    let mut seeds: Vec<String> = [
        "1 + p + p^2",
        "p*sqrt(p)",
        "n^2*log2(n)",
        "max(p-$theta,0)",
        "min(n, $c)*p^$a",
        "exp(-$k*p) + log(n)/p",
        "2.1e-8*n^2*log2(n) + rc.cpu",
        "-(-p)^-1.5",
    ]
    .map(String::from)
    .to_vec();
    for text in built.iter().chain(doc_blocks().iter()) {
        for line in text.lines() {
            if let Some(f) = line.trim().strip_prefix("formula = \"") {
                seeds.push(f.trim_end_matches('"').to_string());
            }
        }
    }
    seeds.extend(
        string_literals("fit/src/expr/tests.rs")
            .into_iter()
            .filter(|s| !s.is_empty() && s.len() < 200),
    );
    seeds.sort();
    seeds.dedup();
    seeds.into_iter().map(String::into_bytes).collect()
}

/// The seeds of every target, in the order of [`Target::ALL`]. A target without a seed gets
/// one empty input (so that mutation still has something to grow).
pub fn all() -> Vec<Vec<Vec<u8>>> {
    let built = built_models();
    Target::ALL
        .iter()
        .map(|t| {
            let mut seeds = match t {
                Target::TextLog => text_logs(),
                Target::BinaryLog => binary_logs(),
                Target::Datafile => datafiles(),
                Target::ModelFile => model_files(&built),
                Target::StudyFile => study_files(),
                Target::Expr => expressions(&built),
                Target::ExtrapFile => extrap_files(),
                Target::WhatifTarget => whatif_targets(),
                Target::WhatifOptions => whatif_options(),
                Target::SkeletonFile => doc_blocks()
                    .into_iter()
                    .chain(raw_strings("pp/tests/skeleton.rs"))
                    .chain(raw_strings("pp/tests/skeleton_partners.rs"))
                    .filter(|b| b.contains("pp-skeleton 1"))
                    .map(String::into_bytes)
                    .collect(),
                Target::PaceFile => {
                    let mut models: Vec<Vec<u8>> = files("lca/tests/data/pace", "toml")
                        .into_iter()
                        .chain(files("lca/tests/data/pace/mpi-quiet", "toml"))
                        .filter(|f| String::from_utf8_lossy(f).contains("kind = \"pace\""))
                        .collect();
                    // An MPI model swapped to ranks that poll (docs/pace.md#swapping-a-layer).
                    let polling: Vec<Vec<u8>> = models
                        .iter()
                        .map(|m| String::from_utf8_lossy(m).into_owned())
                        .filter(|m| m.contains("messages = \"processors\""))
                        .map(|m| {
                            m.replacen(
                                "sharing = \"processor\"",
                                "sharing = \"run-to-block\"\nwaits = \"spin\"\nrendezvous_bytes = 4096",
                                1,
                            )
                            .into_bytes()
                        })
                        .take(1)
                        .collect();
                    models.extend(polling);
                    models
                }
                Target::CriticalPath | Target::Signature => {
                    let mut logs = text_logs();
                    logs.extend(binary_logs());
                    logs
                }
                Target::Otf2Trace => otf2_traces(),
            };
            if seeds.is_empty() {
                seeds.push(Vec::new());
            }
            seeds
        })
        .collect()
}
