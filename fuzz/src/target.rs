//! The fuzz targets: each reads one input the way the tools do and checks the result.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use pp::chrome::ChromeTrace;
use pp::log::LogReader;
use pp::profile::{By, Profile, Sink, Sweep};

use crate::checks::{self, Failure, one_line};
use lca::study::file as study_file;

/// What a case is fed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// `pp -l` on a text log: `LogReader`, the sweep, the reports and the datafile row.
    TextLog,
    /// The same on a binary log.
    BinaryLog,
    /// `fit::Datafile::parse` and the factors `lca model` would take from it.
    Datafile,
    /// `fit::model_file::parse`, writing it again, and a prediction at its range's corners.
    ModelFile,
    /// The study file parser of `lca study`, its plan and its commands.
    StudyFile,
    /// `fit::expr` and `fit::Model`: parse, print, re-parse, bind and evaluate.
    Expr,
    /// `lca model` on an Extra-P text file: `fit::extrap::parse`, a model of its first series,
    /// and that model written only if it reads back (`fit::model_file::written`).
    ExtrapFile,
    /// `pp whatif --target FILE`: `pp::whatif::Target::load` of a target file.
    WhatifTarget,
    /// `pp whatif LOG` with `--group`, `--speed`, `--demand` and `--machine` options read from
    /// the input (see [`whatif_options`]) on one of the repository's recorded logs.
    WhatifOptions,
    /// `pp critical-path` on a text or binary log: `pp::graph::report::Report`.
    CriticalPath,
    /// `pp import` of an OTF2 trace whose files are packed in the input (see [`otf2`]).
    Otf2Trace,
    /// `lca pace predict FILE`: `lca::pace::file::parse` of a PACE model, writing it again, and
    /// its evaluation at its range's corners and past them (see [`pace_file`]).
    PaceFile,
    /// `pp skeleton run DIR`'s reading of `skeleton.txt`: `pp::skeleton::file::parse`, writing
    /// it again, and parsing that to the same text.
    SkeletonFile,
    /// `pp signature` and `pp skeleton --scale 4` on a text or binary log (see [`signature`]).
    Signature,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 14] = [
        Target::TextLog,
        Target::BinaryLog,
        Target::Datafile,
        Target::ModelFile,
        Target::StudyFile,
        Target::Expr,
        Target::ExtrapFile,
        Target::WhatifTarget,
        Target::WhatifOptions,
        Target::CriticalPath,
        Target::Otf2Trace,
        Target::PaceFile,
        Target::SkeletonFile,
        Target::Signature,
    ];

    /// The name on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Target::TextLog => "text-log",
            Target::BinaryLog => "binary-log",
            Target::Datafile => "datafile",
            Target::ModelFile => "model-file",
            Target::StudyFile => "study-file",
            Target::Expr => "expr",
            Target::ExtrapFile => "extrap-file",
            Target::WhatifTarget => "whatif-target",
            Target::WhatifOptions => "whatif-options",
            Target::CriticalPath => "critical-path",
            Target::Otf2Trace => "otf2-trace",
            Target::PaceFile => "pace-file",
            Target::SkeletonFile => "skeleton-file",
            Target::Signature => "signature",
        }
    }

    /// The target named `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Position in [`Target::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Tokens worth inserting into this target's inputs.
    pub fn dictionary(self) -> &'static [&'static str] {
        match self {
            Target::TextLog | Target::BinaryLog | Target::CriticalPath | Target::Signature => &[
                "pplog 1 p=2\n",
                " start",
                " stop",
                " work_begin x",
                " work_end x",
                " wait_begin barrier",
                " wait_begin lock x",
                " wait_end",
                " comm_begin 64",
                " comm_end 64",
                " region_begin 0 r",
                " region_end 0",
                " phase ph",
                " cpu 1 2",
                " send 1 5 8",
                " recv 0 5 8 comm=c",
                " coll allreduce 8 root=0 comm=c",
                " team 0 0,1",
                "\n0 0 start\n",
                "\n0 1 stop\n",
                " p=1048576",
                "PPLOG",
                "#",
            ],
            Target::Datafile => &[
                "p=", " wall=", " total=", " li=", " rc.cpu=", " impl=dp", ",", "\n", "#",
                "\u{feff}", "nan", "inf", "=",
            ],
            Target::ModelFile => &[
                "[[category]]\n",
                "formula = \"",
                "[held]\n",
                "[range]\n",
                "p = [",
                "nan",
                "inf",
                "\"\"\"",
                "[[category.coefficient]]\n",
                "value = ",
                "covariance = [[",
                "factors = [\"p\"]\n",
                "format = 1\n",
                "[[category.vary_together]]\n",
                "points = [[",
            ],
            Target::StudyFile => &[
                "[[implementation]]\n",
                "command = [\"{p}\"]\n",
                "timeout_s = ",
                "design = \"",
                "full",
                "edges:",
                "2k",
                "replicates = ",
                "[factors]\n",
                "n = \"1..1000000000:lin:",
                "[validate]\n",
                "grid = {",
                "points = [{",
                "{{",
                "}}",
                "{lca}",
                "\"\"\"",
                "max_failures = ",
                "[precision]\n",
                "target = 0.",
                "max_replicates = ",
                "[decide]\n",
                "budget = ",
                "per_round = ",
                "[whatif]\n",
                "where = \"p > ",
                "demand = \"",
                "measured",
                "{replicate}",
            ],
            Target::ExtrapFile => &[
                "PARAMETER p\n",
                "POINTS ( 2 10 ) ( 4 10 )\n",
                "POINTS 1 2 4\n",
                "REGION main\n",
                "METRIC time\n",
                "DATA ",
                "1e308",
                "-1e308",
                "nan",
                " ( ",
                " ) ",
            ],
            Target::WhatifTarget => &[
                "group = \"",
                "0,1",
                ";",
                "machine = \"",
                "[speed]\n",
                "par = ",
                "1e-300",
                "1e300",
                "demand = \"",
                "measured",
                "\"\n",
                "sharing = \"run-to-block\"\n",
                "slice_us = ",
                "switch_us = ",
                "wake_us = ",
                "waits = \"spin\"\n",
                "rendezvous_bytes = ",
            ],
            Target::WhatifOptions => &[
                "--group ",
                "--speed ",
                "--demand ",
                "--log ",
                "--sharing ",
                "run-to-block",
                "processor",
                "--slice-us ",
                "--switch-us ",
                "--wake-us ",
                "--waits ",
                "--rendezvous-bytes ",
                "spin",
                "block",
                "0,1/2,3",
                "0,1",
                "/",
                "=1e-15",
                "=1e300",
                "=0",
                "=-1",
                "serial",
                "imbalance",
                "cpu",
                "elapsed",
                "\n---\n",
                "[mpi]\n",
                "[[mpi.points]]\n",
                "bytes = ",
                "ns = ",
                "nan",
            ],
            Target::Otf2Trace => &[
                "traces.otf2\n",
                "traces.def\n",
                "traces/0.evt\n",
                "traces/1.evt\n",
                "traces/0.def\n",
                "\n0\n",
                "\x00",
                "\u{ff}",
            ],
            Target::PaceFile => &[
                "[hardware]\n",
                "cores = ",
                "speed = ",
                "load = ",
                "compute_shared = ",
                "sharing = \"run-to-block\"\n",
                "slice_s = ",
                "core_switch_s = ",
                "waits = \"spin\"\n",
                "rendezvous_bytes = ",
                "[[template]]\n",
                "threads = \"group\"\n",
                "groups = ",
                "group = ",
                "split = \"chunks\"\n",
                "units = \"n\"\n",
                "after = \"",
                "lag = ",
                "replayed = ",
                "iterations = \"",
                "p = [",
                "n = [64.0, ",
                "1e8",
                "1e12",
                "1e300",
                "1e-300",
                "nan",
                "-1",
            ],
            Target::SkeletonFile => &[
                "pp-skeleton 1\n",
                "thread ",
                "loop ",
                " {\n",
                "}\n",
                "step cpu_ns=",
                " wall_ns=",
                " op_ns=",
                " op_cpu_ns=",
                " bytes=",
                " copy",
                " wait kind=barrier object=b",
                " stop",
                "k ",
                "p ",
                "omp_blocktime_ms ",
                "18446744073709551615",
                "4294967296",
            ],
            Target::Expr => &[
                "sqrt(", "log(", "log2(", "exp(", "min(", "max(", "$a", "^", "-", "*", "/", "+",
                "(", ")", ",", "1e308", "p", "rc.cpu", "0",
            ],
        }
    }

    /// Mutants are cut to this many bytes.
    pub fn max_len(self) -> usize {
        match self {
            Target::Expr => 1 << 16,
            _ => 1 << 18,
        }
    }

    /// Runs one case: `Err` says what went wrong (a panic is caught by the caller).
    pub fn run(self, input: &[u8]) -> Result<(), Failure> {
        match self {
            Target::TextLog | Target::BinaryLog => log(input),
            Target::Datafile => datafile(&String::from_utf8_lossy(input)),
            Target::ModelFile => model_file(&String::from_utf8_lossy(input)),
            Target::StudyFile => study(&String::from_utf8_lossy(input)),
            Target::Expr => expr(&String::from_utf8_lossy(input)),
            Target::ExtrapFile => extrap(&String::from_utf8_lossy(input)),
            Target::WhatifTarget => whatif_target(input),
            Target::WhatifOptions => whatif_options(&String::from_utf8_lossy(input)),
            Target::CriticalPath => critical_path(input),
            Target::Otf2Trace => otf2(input),
            Target::PaceFile => pace_file(&String::from_utf8_lossy(input)),
            Target::SkeletonFile => skeleton_file(&String::from_utf8_lossy(input)),
            Target::Signature => signature(input),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What `pp`, `pp -l`, `pp --by` and `pp --chrome` do with a log (see `pp/src/main.rs`).
fn log(input: &[u8]) -> Result<(), Failure> {
    let mut reader = match LogReader::from_bytes("case.log", input.to_vec()) {
        Ok(r) => r,
        Err(e) => return one_line("error", &e.to_string()),
    };
    let header = reader.header().clone();
    // Outputs with a line or an entry per thread (the Chrome trace, JSON, the breakdown by
    // thread) are as long as p by design: a mutated header of p near 2^20 makes each take
    // seconds, so they are made for small teams only. The Chrome trace costs as much as the
    // sweep: one case in four.
    let small = header.p <= 4096;
    let mut chrome = (small && input.len().is_multiple_of(4))
        .then(|| ChromeTrace::new(Vec::new(), header.p).ok())
        .flatten();
    let (attribution, damage) = {
        let sink = chrome.as_mut().map(|c| c as &mut dyn Sink);
        let mut sweep = Sweep::new(&header, sink);
        let damage = sweep.read(&mut reader).err();
        (sweep.finish(reader.symbols()), damage)
    };
    if let Some(d) = &damage {
        one_line("error", &d.to_string())?;
    }
    if let Some(c) = chrome {
        let _ = c.finish();
    }
    let attribution = match attribution {
        Ok(a) => a,
        Err(e) => return one_line("error", &e.to_string()),
    };
    let profile = Profile::new(header, attribution, reader.symbols());
    for w in &profile.warnings {
        one_line("warning", w)?;
    }
    let _ = profile.figure1();
    if small {
        let _ = profile.json();
        let _ = profile.breakdown(By::Thread);
    }
    for by in [By::Region, By::Phase] {
        let _ = profile.breakdown(by);
    }
    match profile.checked_datafile_row() {
        Ok(row) => checks::row(&row),
        Err(e) => one_line("error", &e.to_string()),
    }
}

/// A key-value datafile whose last line has no newline is torn if that line is a row that
/// lacks a column the other rows have: such a row must not be read as data. (A last line that
/// is a comment may lack its newline, and a whole row may lack keys.)
fn datafile(text: &str) -> Result<(), Failure> {
    let data = match fit::Datafile::parse("case.dat", text) {
        Ok(d) => d,
        Err(e) => return one_line("error", &e.to_string()),
    };
    let _ = data.numeric_columns();
    if let Err(e) = fit::performance::factors_of(&data) {
        one_line("error", &e.to_string())?;
    }
    if let Some(last) = data.rows().len().checked_sub(1)
        && !text.ends_with('\n')
        && last > 0
        && data.rows()[last].line == text.lines().count()
        && data.columns().iter().any(|c| data.cell(last, c).is_none())
    {
        return Err(Failure::new(
            "torn-row-read",
            text.lines().last().unwrap_or(""),
        ));
    }
    Ok(())
}

/// Reads a model file, writes it, reads that and writes it again (same bytes), and predicts
/// at the corners and the middle of its range.
fn model_file(text: &str) -> Result<(), Failure> {
    let model = match fit::model_file::parse("case.toml", text) {
        Ok(m) => m,
        Err(e) => return one_line("error", &e.to_string()),
    };
    let written = fit::model_file::write(&model);
    let again = fit::model_file::parse("rewritten.toml", &written)
        .map_err(|e| Failure::new("model-rewrite-unreadable", e.to_string()))?;
    if fit::model_file::write(&again) != written {
        return Err(Failure::new("model-rewrite-differs", &written));
    }
    let corner =
        |pick: fn(&(f64, f64)) -> f64| -> Vec<f64> { model.ranges.iter().map(pick).collect() };
    for point in [
        corner(|r| r.0),
        corner(|r| r.1),
        corner(|r| (r.0 + r.1) / 2.0),
    ] {
        if point.len() == model.factors.len() {
            let _ = model.predict(&point);
        }
    }
    let named: Vec<(String, f64)> = model.factors.iter().map(|f| (f.clone(), 2.0)).collect();
    if let Err(e) = model.point(&named) {
        one_line("error", &e)?;
    }
    Ok(())
}

/// A PACE model file as `lca pace predict` reads it: parsed, written and parsed again to the
/// same text, and evaluated at the corners of its range, in their middle and at twice the
/// upper corner, `p` rounded to a whole number. Points past 64 threads are not evaluated: a
/// replay of thousands of threads takes seconds by design.
fn pace_file(text: &str) -> Result<(), Failure> {
    let model = match lca::pace::file::parse("case.toml", text) {
        Ok(m) => m,
        Err(e) => return one_line("error", &e.to_string()),
    };
    let written = lca::pace::file::write(&model);
    let again = lca::pace::file::parse("rewritten.toml", &written)
        .map_err(|e| Failure::new("pace-rewrite-unreadable", e.to_string()))?;
    if lca::pace::file::write(&again) != written {
        return Err(Failure::new("pace-rewrite-differs", &written));
    }
    let at = |pick: fn(&(f64, f64)) -> f64| -> Vec<f64> {
        model
            .factors
            .iter()
            .zip(&model.ranges)
            .map(|(f, r)| if f == "p" { pick(r).round() } else { pick(r) })
            .collect()
    };
    for point in [
        at(|r| r.0),
        at(|r| r.1),
        at(|r| (r.0 + r.1) / 2.0),
        at(|r| 2.0 * r.1),
    ] {
        let p = model.factors.iter().position(|f| f == "p");
        if p.is_some_and(|i| point[i] > 64.0) {
            continue;
        }
        match model.evaluate(&point) {
            Ok(e) => {
                let numbers = std::iter::once(e.t_p).chain(e.categories.iter().map(|c| c.1));
                if numbers.clone().any(|v| !v.is_finite()) {
                    return Err(Failure::new("pace-non-finite", format!("{point:?}: {e:?}")));
                }
                // The categories add up to p × T_p (docs/pace.md#evaluation).
                let sum: f64 = e.categories.iter().map(|c| c.1).sum();
                let whole = p.map_or(1.0, |i| point[i]) * e.t_p;
                if (sum - whole).abs() > 1e-6 * whole.abs().max(1e-9) {
                    return Err(Failure::new(
                        "pace-categories-sum",
                        format!("{point:?}: {sum} against p x T_p = {whole}"),
                    ));
                }
            }
            Err(e) => one_line("error", &e)?,
        }
    }
    Ok(())
}

/// A skeleton file as `pp skeleton run` reads it: parsed, written and parsed again to the same
/// text.
fn skeleton_file(text: &str) -> Result<(), Failure> {
    let skeleton = match pp::skeleton::file::parse(text) {
        Ok(s) => s,
        Err((line, e)) => return one_line("error", &format!("skeleton.txt:{line}: {e}")),
    };
    let written = pp::skeleton::file::text(&skeleton);
    let again = pp::skeleton::file::parse(&written)
        .map_err(|(line, e)| Failure::new("skeleton-rewrite-unreadable", format!("{line}: {e}")))?;
    if pp::skeleton::file::text(&again) != written {
        return Err(Failure::new("skeleton-rewrite-differs", &written));
    }
    Ok(())
}

/// Reads a study file as `lca study` does, plans its runs and expands its commands.
fn study(text: &str) -> Result<(), Failure> {
    let study = match study_file::parse("case.toml", text) {
        Ok(s) => s,
        Err(e) => return one_line("error", &e.to_string()),
    };
    for i in &study.implementations {
        if Duration::try_from_secs_f64(i.timeout_s).is_err() {
            return Err(Failure::new("study-timeout", format!("{}", i.timeout_s)));
        }
    }
    let plan = match design::plan(&study.factors, study.design, study.replicates, None) {
        Ok(p) => p,
        Err(e) => return one_line("error", &e.to_string()),
    };
    let _ = plan.to_csv();
    let values: BTreeMap<&str, String> = study
        .factors
        .iter()
        .map(|f| (f.name.as_str(), study_file::format_value(f.extremes().0)))
        .collect();
    for i in &study.implementations {
        for arg in &i.command {
            let _ = arg.expand(&values);
        }
    }
    Ok(())
}

/// Parses an expression and a model; prints, re-parses (same tree), binds and evaluates.
fn expr(text: &str) -> Result<(), Failure> {
    match fit::expr::parse(text) {
        Err(e) => one_line("error", &e.to_string())?,
        Ok(e) => {
            let printed = e.to_string();
            match fit::expr::parse(&printed) {
                Ok(back) if back == e => {}
                other => {
                    return Err(Failure::new(
                        "expr-print-reparse",
                        format!("{text} printed as {printed} reads as {other:?}"),
                    ));
                }
            }
            let vars: Vec<String> = e.variables().into_iter().collect();
            let params: Vec<String> = e.parameters().into_iter().collect();
            let v: Vec<&str> = vars.iter().map(String::as_str).collect();
            let q: Vec<&str> = params.iter().map(String::as_str).collect();
            let bound = e
                .bind(&v, &q)
                .map_err(|err| Failure::new("expr-bind", format!("{text}: {err}")))?;
            let x: Vec<f64> = (0..v.len()).map(|i| 1.5 + i as f64).collect();
            let a: Vec<f64> = (0..q.len()).map(|i| 0.5 + i as f64).collect();
            let mut grad = vec![0.0; q.len()];
            let value = bound.eval(&x, &a);
            let with_grad = bound.eval_grad(&x, &a, &mut grad);
            if value.to_bits() != with_grad.to_bits() && !(value.is_nan() && with_grad.is_nan()) {
                return Err(Failure::new(
                    "expr-eval-differs",
                    format!("{text}: eval {value} eval_grad {with_grad}"),
                ));
            }
            let _ = e.constant_value();
            for p in &params {
                let _ = (e.parameter_role(p), e.threshold_variables(p));
            }
        }
    }
    if let Err(e) = fit::expr::parse_terms(text) {
        one_line("error", &e.to_string())?;
    }
    match fit::Model::parse(text) {
        Err(e) => one_line("error", &e.to_string()),
        Ok(m) => {
            let _ = (m.variables(), m.fitted_count(), m.is_zero());
            Ok(())
        }
    }
}

/// What `lca model FILE.txt` does with an Extra-P file, for its first series: parse, model,
/// and the model file written only when it reads back (a value of 1e308 overflowed the
/// statistics into a file nothing could load).
fn extrap(text: &str) -> Result<(), Failure> {
    let experiment = match fit::extrap::parse("case.txt", text) {
        Ok(e) => e,
        Err(e) => return one_line("error", &e.to_string()),
    };
    let Some(series) = experiment.series.first() else {
        return Ok(());
    };
    // A fit per case: only series of a size a user's file has.
    if series.points.len() > 200 || experiment.parameters.len() > 4 {
        return Ok(());
    }
    let obs = series.observations(&experiment.source, &experiment.parameters);
    let obs = fit::repetitions::summarise(obs, fit::repetitions::Repetitions::All);
    let model = match fit::combination::combine(&obs, &Default::default()) {
        Ok(m) => m,
        Err(e) => return one_line("error", &e.to_string()),
    };
    let performance = fit::performance::PerformanceModel {
        kind: fit::performance::Kind::Response,
        name: "case".into(),
        factors: experiment.parameters.clone(),
        ranges: vec![(0.0, 1.0); experiment.parameters.len()],
        held: Default::default(),
        categories: vec![model],
        baseline: None,
        provenance: Default::default(),
        calibration: None,
        evaluator: None,
    };
    match fit::model_file::written(&performance, "case.toml") {
        Ok(text) => fit::model_file::parse("case.toml", &text)
            .map(|_| ())
            .map_err(|e| Failure::new("model-written-unreadable", e.to_string())),
        Err(e) => one_line("error", &e.to_string()),
    }
}

/// `pp whatif --target FILE`: the target file loaded (from a file, as the command reads it).
fn whatif_target(input: &[u8]) -> Result<(), Failure> {
    let path = std::env::temp_dir().join(format!("lca-fuzz-target-{}.toml", std::process::id()));
    if std::fs::write(&path, input).is_err() {
        return Ok(());
    }
    let loaded = pp::whatif::Target::load(&path);
    let _ = std::fs::remove_file(&path);
    match loaded {
        Ok(target) => {
            let _ = target.describe();
            let _ = target.processors(4);
            Ok(())
        }
        Err(e) => one_line("error", &format!("{e:#}")),
    }
}

/// A scratch path of this process for one case's files (`what`, numbered).
fn scratch(what: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "lca-fuzz-{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The recorded logs `pp whatif` options are tried on (`--log K` picks one, K modulo their
/// number).
pub const WHATIF_LOGS: [&str; 3] = [
    "pp/tests/data/categories-p2.log",
    "pp/tests/data/hogs/critical-hogs.log",
    "pp/tests/data/hogs/imbalance-hogs.log",
];

/// `pp whatif LOG --out PREDICTED [options]`. The input is one option a line (`--group G`,
/// `--speed NAME=FACTOR`, repeatable, `--demand D`, `--sharing S`, `--slice-us`, `--switch-us`,
/// `--wake-us`, `--waits W`, `--rendezvous-bytes B`, `--log K`; other lines are ignored), then
/// optionally a line `---` and the contents of a `--machine` file. A valid result has no
/// non-finite number in its report, one-line warnings, and a predicted log that reads and
/// profiles without damage.
fn whatif_options(text: &str) -> Result<(), Failure> {
    let (options, machine) = match text.split_once("\n---\n") {
        Some((o, m)) => (o, Some(m)),
        None => (text, None),
    };
    let mut log = 0usize;
    let mut opts = pp::whatif::WhatifOptions {
        log: Default::default(),
        group: None,
        machine: None,
        speed: Vec::new(),
        demand: None,
        sharing: None,
        slice_us: None,
        switch_us: None,
        wake_us: None,
        waits: None,
        rendezvous_bytes: None,
        target: None,
        out: Default::default(),
        force: true,
    };
    for line in options.lines() {
        let Some((key, value)) = line.split_once(' ') else {
            continue;
        };
        match key {
            "--group" => opts.group = Some(value.to_string()),
            // Bounded so that a case stays one replay, as a command line would.
            "--speed" if opts.speed.len() < 16 => opts.speed.push(value.to_string()),
            "--demand" => match value.parse() {
                Ok(d) => opts.demand = Some(d),
                // clap refuses it before pp does anything.
                Err(_) => return Ok(()),
            },
            "--log" => log = value.trim().parse::<usize>().unwrap_or(0) % WHATIF_LOGS.len(),
            "--sharing" => match value.parse() {
                Ok(s) => opts.sharing = Some(s),
                Err(_) => return Ok(()),
            },
            "--waits" => match value.parse() {
                Ok(w) => opts.waits = Some(w),
                Err(_) => return Ok(()),
            },
            "--rendezvous-bytes" => match value.trim().parse() {
                Ok(b) => opts.rendezvous_bytes = Some(b),
                // clap refuses a value that is not a whole number.
                Err(_) => return Ok(()),
            },
            "--slice-us" | "--switch-us" | "--wake-us" => {
                // clap refuses a value that is not a number.
                let Ok(us) = value.trim().parse::<f64>() else {
                    return Ok(());
                };
                match key {
                    "--slice-us" => opts.slice_us = Some(us),
                    "--switch-us" => opts.switch_us = Some(us),
                    _ => opts.wake_us = Some(us),
                }
            }
            _ => {}
        }
    }
    opts.log = crate::seeds::root().join(WHATIF_LOGS[log]);
    let dir = scratch("whatif");
    if std::fs::create_dir_all(&dir).is_err() {
        return Ok(());
    }
    if let Some(m) = machine {
        let path = dir.join("machine.toml");
        if std::fs::write(&path, m).is_err() {
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(());
        }
        opts.machine = Some(path);
    }
    opts.out = dir.join("predicted.log");
    let result = whatif_result(&opts);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn whatif_result(opts: &pp::whatif::WhatifOptions) -> Result<(), Failure> {
    let outcome = match pp::whatif::run(opts) {
        Ok(o) => o,
        Err(e) => return one_line("error", &format!("{e:#}")),
    };
    for w in &outcome.warnings {
        one_line("warning", w)?;
    }
    checks::finite_numbers("whatif-report", &outcome.report)?;
    let mut reader = LogReader::open(&opts.out)
        .map_err(|e| Failure::new("whatif-predicted-unreadable", e.to_string()))?;
    let profiled = pp::profile::profile_log(&mut reader, None, None);
    if let Some(d) = profiled.damage {
        return Err(Failure::new("whatif-predicted-damaged", d.to_string()));
    }
    if let Err(e) = profiled.profile {
        return Err(Failure::new("whatif-predicted-unprofiled", e.to_string()));
    }
    Ok(())
}

/// The log of a case for a command that keeps a record per event and thread (the critical
/// path, the signature): `None` where the header is damaged (its error one line) or names
/// more than 4096 threads (as for the sweep's per-thread outputs, huge headers are the
/// readers' business, not these targets').
fn small_log(input: &[u8]) -> Result<Option<LogReader>, Failure> {
    let reader = match LogReader::from_bytes("case.log", input.to_vec()) {
        Ok(r) => r,
        Err(e) => return one_line("error", &e.to_string()).map(|_| None),
    };
    Ok((reader.header().p <= 4096).then_some(reader))
}

/// `pp critical-path LOG`: an error is one line; a path's segments meet, lie in the run
/// window, and the text and JSON reports are made.
fn critical_path(input: &[u8]) -> Result<(), Failure> {
    let Some(reader) = small_log(input)? else {
        return Ok(());
    };
    let report = match pp::graph::report::Report::from_log(reader, "case.log") {
        Ok(r) => r,
        Err(e) => return one_line("error", &format!("{e:#}")),
    };
    if let Some(w) = &report.warning {
        one_line("warning", w)?;
    }
    let (start, end) = report.window;
    let segments = &report.path.segments;
    for (i, s) in segments.iter().enumerate() {
        let meets = segments.get(i + 1).is_none_or(|next| next.start == s.end);
        if s.start > s.end || s.start < start || s.end > end || !meets {
            return Err(Failure::new(
                "critical-path-segments",
                format!(
                    "segment {i} of {}: {s:?}, window {start}..{end}",
                    segments.len()
                ),
            ));
        }
    }
    let _ = (report.text(), report.json());
    Ok(())
}

/// `pp signature LOG` (text and JSON, the numbers finite) and `pp skeleton LOG --scale 4`, whose
/// skeleton file must read back to the same text.
fn signature(input: &[u8]) -> Result<(), Failure> {
    let Some(reader) = small_log(input)? else {
        return Ok(());
    };
    match pp::signature::from_reader(reader, pp::signature::Threshold::Fixed(0.05)) {
        Ok(s) => {
            if let Some(w) = &s.warning {
                one_line("warning", w)?;
            }
            checks::finite_numbers("signature-non-finite", &s.text())?;
            checks::finite_numbers("signature-non-finite", &s.json())?;
        }
        Err(e) => return one_line("error", &format!("{e:#}")),
    }
    let path = std::env::temp_dir().join(format!("lca-fuzz-skeleton-{}.log", std::process::id()));
    if std::fs::write(&path, input).is_err() {
        return Ok(());
    }
    let made = pp::skeleton::from_log(&path, pp::skeleton::Size::Scale(4.0));
    let _ = std::fs::remove_file(&path);
    match made {
        Ok((skeleton, warnings)) => {
            for w in &warnings {
                one_line("warning", &w.replace(&*path.to_string_lossy(), "case.log"))?;
            }
            let written = pp::skeleton::file::text(&skeleton);
            match pp::skeleton::file::parse(&written) {
                Ok(again) if pp::skeleton::file::text(&again) == written => Ok(()),
                Ok(_) => Err(Failure::new("skeleton-rewrite-differs", &written)),
                Err((line, e)) => Err(Failure::new(
                    "skeleton-unreadable",
                    format!("{line}: {e}\n{written}"),
                )),
            }
        }
        // Named as the other targets name their input, not by the temporary path.
        Err(e) => one_line(
            "error",
            &format!("{e:#}").replace(&*path.to_string_lossy(), "case.log"),
        ),
    }
}

/// The files of an OTF2 trace packed in one input: entries `PATH\nLENGTH\nBYTES` one after
/// another, PATH relative (letters, digits, `_`, `-`, `.` and `/`, no `..`), at most 64
/// entries. `None` where the packing itself is damaged.
pub fn unpack(input: &[u8]) -> Option<Vec<(String, &[u8])>> {
    let mut files = Vec::new();
    let mut rest = input;
    while !rest.is_empty() && files.len() < 64 {
        let nl = rest.iter().position(|&b| b == b'\n')?;
        let path = std::str::from_utf8(&rest[..nl]).ok()?;
        let safe = !path.is_empty()
            && !path.starts_with('/')
            && !path.split('/').any(|c| c.is_empty() || c == "..")
            && path
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-./".contains(&b));
        if !safe {
            return None;
        }
        rest = &rest[nl + 1..];
        let nl = rest.iter().position(|&b| b == b'\n')?;
        let len: usize = std::str::from_utf8(&rest[..nl]).ok()?.parse().ok()?;
        rest = &rest[nl + 1..];
        let bytes = rest.get(..len)?;
        rest = &rest[len..];
        files.push((path.to_string(), bytes));
    }
    Some(files)
}

/// `pp import TRACE -o LOG`: the trace's files (see [`unpack`]) written to a folder, its
/// `traces.otf2` imported. An error is one line; an imported log reads back without damage.
/// Nothing to do without the OTF2 library (`fuzz` says so once when it starts).
fn otf2(input: &[u8]) -> Result<(), Failure> {
    if pp::trace::otf2::library().is_err() {
        return Ok(());
    }
    let Some(files) = unpack(input) else {
        return Ok(());
    };
    let dir = scratch("otf2");
    let result = (|| {
        for (path, bytes) in &files {
            let path = dir.join(path);
            let made = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&path, bytes));
            if made.is_err() {
                return Ok(());
            }
        }
        let out = dir.join("imported.log");
        let anchor = dir.join("traces.otf2");
        match pp::trace::otf2::import(&anchor, &out, pp::log::Encoding::Text, true) {
            Err(e) => one_line("error", &e),
            Ok(_) => {
                let mut reader = LogReader::open(&out)
                    .map_err(|e| Failure::new("otf2-imported-unreadable", e.to_string()))?;
                let profiled = pp::profile::profile_log(&mut reader, None, None);
                match profiled.damage {
                    Some(d) => Err(Failure::new("otf2-imported-damaged", d.to_string())),
                    None => Ok(()),
                }
            }
        }
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
