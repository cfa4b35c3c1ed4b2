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
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 8] = [
        Target::TextLog,
        Target::BinaryLog,
        Target::Datafile,
        Target::ModelFile,
        Target::StudyFile,
        Target::Expr,
        Target::ExtrapFile,
        Target::WhatifTarget,
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
            Target::TextLog | Target::BinaryLog => &[
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
