//! `cargo run -p fuzz --release -- [--cases N] [--target T].. [--seed S] [--replay PATH]..`
//!
//! Runs N mutants (default 100,000) round-robin over the targets (default all), or replays saved
//! inputs (files named `TARGET.anything`, or folders of them), and prints cases and time per
//! target and the failures by kind with one example each. The first input of each new kind is
//! saved to `fuzz/crashes/` (`--no-save` to skip). `--minimize FILE --target T` shrinks a saved
//! input (not a crash, which would kill this process) while it fails the same way. Exit status
//! 1 when a failure is neither `slow` nor on the `KNOWN` list. `--case I` runs only case I of
//! the seed (with the same `--target`s: the target of case I is the (I mod count)-th).
//! `--from I` starts at case I. `--write-seeds DIR` writes the seeds to `DIR/TARGET/N` (a corpus for `fuzz/libfuzzer/`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use fuzz::runner::{Inputs, Limits, Report};
use fuzz::target::Target;
use fuzz::{case, is_known, seeds};

struct Args {
    cases: u64,
    first: u64,
    seed: u64,
    targets: Vec<Target>,
    replay: Vec<PathBuf>,
    minimize: Option<PathBuf>,
    write_seeds: Option<PathBuf>,
    save: bool,
    limits: Limits,
}

const USAGE: &str = "usage: fuzz [--cases N [--from I] | --case I] [--target T].. [--seed S] [--replay PATH].. \
    [--minimize FILE] [--write-seeds DIR] [--slow-ms MS] [--hang-s S] [--memory-mib M] [--no-save]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        cases: 100_000,
        first: 0,
        seed: 17,
        targets: Vec::new(),
        replay: Vec::new(),
        minimize: None,
        write_seeds: None,
        save: true,
        limits: Limits {
            slow: Duration::from_millis(1000),
            hang: Duration::from_secs(30),
            memory: 2 << 30,
        },
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--no-save" {
            args.save = false;
            continue;
        }
        let value = it.next().ok_or(format!("{flag}: needs a value\n{USAGE}"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag} {value}: expected a whole number"))
        };
        match flag.as_str() {
            "--cases" => args.cases = number()?,
            "--seed" => args.seed = number()?,
            "--case" => (args.first, args.cases) = (number()?, 1),
            "--from" => args.first = number()?,
            "--slow-ms" => args.limits.slow = Duration::from_millis(number()?),
            "--hang-s" => args.limits.hang = Duration::from_secs(number()?),
            "--memory-mib" => args.limits.memory = number()?.saturating_mul(1 << 20),
            "--target" => args.targets.push(
                Target::from_name(&value).ok_or(format!("--target {value}: unknown target"))?,
            ),
            "--replay" => args.replay.push(value.into()),
            "--minimize" => args.minimize = Some(value.into()),
            "--write-seeds" => args.write_seeds = Some(value.into()),
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    if args.targets.is_empty() {
        args.targets = Target::ALL.to_vec();
    }
    Ok(args)
}

/// The saved inputs under `paths`; a file's target is its name up to the first `.`.
fn saved(paths: &[PathBuf]) -> Result<Vec<(Target, String, Vec<u8>)>, String> {
    let mut files = Vec::new();
    for path in paths {
        let mut entries: Vec<PathBuf> = match std::fs::read_dir(path) {
            Ok(dir) => dir.flatten().map(|e| e.path()).collect(),
            Err(_) => vec![path.clone()],
        };
        entries.sort();
        for file in entries {
            let name = file
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if name.starts_with('.') || name.ends_with(".md") {
                continue;
            }
            let target = name
                .split('.')
                .next()
                .and_then(Target::from_name)
                .ok_or(format!(
                    "{}: the name does not start with a target",
                    file.display()
                ))?;
            let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            files.push((target, file.display().to_string(), bytes));
        }
    }
    Ok(files)
}

/// Writes every target's seeds to `DIR/TARGET/N` (a corpus for libFuzzer).
fn write_seeds(dir: &Path) -> Result<(), String> {
    for (t, seeds) in Target::ALL.iter().zip(seeds::all()) {
        let folder = dir.join(t.name());
        std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for (i, seed) in seeds.iter().enumerate() {
            let file = folder.join(i.to_string());
            std::fs::write(&file, seed).map_err(|e| format!("{}: {e}", file.display()))?;
        }
        println!("{}: {} seeds", folder.display(), seeds.len());
    }
    Ok(())
}

fn minimize(path: &Path, target: Target) -> Result<(), String> {
    let mut input = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let Err(failure) = case::check(target, &input) else {
        return Err(format!("{}: passes on {target}", path.display()));
    };
    // Halving chunks, at most 20,000 tries (a 40 KB log does not shrink to single bytes).
    let (mut chunk, mut tries) = (input.len().div_ceil(2), 0);
    while chunk > 0 && tries < 20_000 {
        let mut at = 0;
        while at < input.len() && tries < 20_000 {
            tries += 1;
            let mut shorter = input.clone();
            shorter.drain(at..(at + chunk).min(input.len()));
            match case::check(target, &shorter) {
                Err(f) if f.kind == failure.kind => input = shorter,
                _ => at += chunk,
            }
        }
        chunk /= 2;
    }
    let out = PathBuf::from(format!("{}.min", path.display()));
    std::fs::write(&out, &input).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "{}: {} bytes, still {}",
        out.display(),
        input.len(),
        failure.kind
    );
    Ok(())
}

fn print_report(report: &Report, inputs: &Inputs, wall: Duration, save: bool) -> bool {
    println!(
        "{:<16}{:>10}{:>10}{:>12}",
        "target", "cases", "seconds", "cases/s"
    );
    for t in Target::ALL {
        let (n, s) = (
            report.cases[t.index()],
            report.nanos[t.index()] as f64 / 1e9,
        );
        if n > 0 {
            println!(
                "{:<16}{n:>10}{s:>10.1}{:>12.0}",
                t.name(),
                n as f64 / s.max(1e-9)
            );
        }
    }
    let total: u64 = report.cases.iter().sum();
    println!(
        "{:<16}{total:>10}{:>10.1}{:>12.0}   (wall, {} child processes)",
        "total",
        wall.as_secs_f64(),
        total as f64 / wall.as_secs_f64().max(1e-9),
        report.children
    );
    let mut kinds: BTreeMap<(Target, &str), Vec<&fuzz::runner::Found>> = BTreeMap::new();
    for f in &report.found {
        kinds
            .entry((f.target, f.failure.kind.as_str()))
            .or_default()
            .push(f);
    }
    let mut failed = false;
    if kinds.is_empty() {
        println!("no failures");
    }
    let crashes = Path::new(env!("CARGO_MANIFEST_DIR")).join("crashes");
    for ((t, kind), found) in &kinds {
        let known = is_known(t.name(), kind);
        let verdict = match (*kind == "slow", known) {
            (true, _) => "measured",
            (false, true) => "KNOWN",
            (false, false) => {
                failed = true;
                "FAIL"
            }
        };
        let first = found[0];
        let (_, input, name) = inputs.get(first.case);
        println!(
            "{verdict:<8} {:<11} {kind:<38} {:>7}  e.g. {name}: {}",
            t.name(),
            found.len(),
            first.failure.detail
        );
        if save && std::fs::create_dir_all(&crashes).is_ok() {
            let origin = name.rsplit('/').next().unwrap_or("").replace(' ', "-");
            let kind = kind.replace(['/', ':'], "_");
            let file = crashes.join(format!("{}.{kind}.{origin}", t.name()));
            let _ = std::fs::write(file, &input);
        }
    }
    !failed
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fuzz: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(dir) = &args.write_seeds {
        return match write_seeds(dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("fuzz: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(path) = &args.minimize {
        return match minimize(path, args.targets[0]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("fuzz: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let inputs = if args.replay.is_empty() {
        let seeds = seeds::all();
        let counts: Vec<String> = Target::ALL
            .iter()
            .map(|t| format!("{} {}", t.name(), seeds[t.index()].len()))
            .collect();
        println!(
            "fuzz: seed {}, {} cases; seeds: {}",
            args.seed,
            args.cases,
            counts.join(", ")
        );
        if args.targets.contains(&Target::Otf2Trace)
            && let Err(why) = pp::trace::otf2::library()
        {
            eprintln!("skipped: fuzz otf2-trace: {why}");
        }
        Inputs::Mutants {
            seed: args.seed,
            first: args.first,
            cases: args.cases,
            targets: args.targets.clone(),
            seeds,
        }
    } else {
        match saved(&args.replay) {
            Ok(files) => {
                println!("fuzz: replaying {} saved inputs", files.len());
                Inputs::Files(files)
            }
            Err(e) => {
                eprintln!("fuzz: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    let start = Instant::now();
    let report = fuzz::runner::run(&inputs, args.limits);
    if print_report(&report, &inputs, start.elapsed(), args.save) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
