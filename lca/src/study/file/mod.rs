//! The study file (TOML): the factors, the design the models are built from, the extra points
//! measured only to validate them, and each implementation's command. Every mistake is one line,
//! `FILE:LINE: what is wrong`.
//!
//! ```toml
//! name = "fft2d"
//! design = "edges:3"          # edges:K (the paper's), full or 2k
//! replicates = 1
//! timeout_s = 60
//! max_failures = 3            # runs of one implementation failing in a row stop the study
//!
//! [factors]                   # `lca design --factor` levels, in this order
//! n = "32..512:log2"
//! p = "2..8:lin:7"
//!
//! [validate]                  # measured only to check the models
//! grid = { n = "64,128,256", p = "3,5,7" }
//! points = [{ n = 96, p = 6 }]
//!
//! [shapes]                    # as lca model --shape li:p=p*sqrt(p)
//! li = { p = "p*sqrt(p)" }
//!
//! [[implementation]]
//! name = "dp"
//! command = ["{lca}", "workload", "fft2d", "-p", "{p}", "-n", "{n}", "--impl", "dp"]
//! ```

mod check;
mod implementation;
mod raw;
mod shapes;
mod source;
mod template;
#[cfg(test)]
mod tests;
mod validation;

use std::fmt;
use std::path::PathBuf;

use design::{Design, Factor};

pub use shapes::ShapeChoice;
pub use template::Template;

/// Placeholders every command may use besides the factors.
pub const BUILTINS: [&str; 4] = ["lca", "pp", "impl", "replicate"];

/// A study file that cannot be used: `FILE:LINE: message`.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyError {
    /// The file as named to the user.
    pub file: String,
    /// 1-based line (0 when the problem has no place in the file).
    pub line: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for StudyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for StudyError {}

/// A checked study.
#[derive(Debug, Clone)]
pub struct Study {
    /// Its name (letters, digits, `-`, `_`, `.`): names the output folder and the datafile.
    pub name: String,
    /// Output folder (default `study-<name>`).
    pub out: PathBuf,
    /// The datafile rows are appended to (default `<out>/<name>.dat`).
    pub datafile: PathBuf,
    /// A machine file for `pp` (default: `pp`'s default one, when it exists).
    pub machine: Option<PathBuf>,
    /// The factors, in the file's order.
    pub factors: Vec<Factor>,
    /// The design the models are built from.
    pub design: Design,
    /// Runs per point.
    pub replicates: usize,
    /// The retry budget: this many runs of one implementation failing in a row (none of it
    /// measured in between) stop the study (`max_failures`, default 3).
    pub max_failures: usize,
    /// More runs of a point until its `T_p` is known this well (`[precision]`), if asked for.
    pub precision: Option<Precision>,
    /// Runs chosen to decide the crossover of the first two implementations (`[decide]`).
    pub decide: Option<Decide>,
    /// The validation points (values in factor order), distinct, in the file's order.
    pub validate: Vec<Vec<f64>>,
    /// The implementations.
    pub implementations: Vec<Implementation>,
    /// Where the runs are made (`dispatch`; `lca study --dispatch` overrides it).
    pub dispatch: Dispatch,
    /// How Slurm jobs are submitted (`[slurm]`).
    pub slurm: SlurmOptions,
    /// The points whose rows `pp whatif` predicts from their runs (`[whatif]`).
    pub whatif: Option<Whatif>,
    /// Shapes fixed by the study (`[shapes]`), as `lca model --shape` fixes them.
    pub shapes: Vec<ShapeChoice>,
}

/// `[whatif]`: the points whose rows `pp whatif` predicts from their runs' logs, and how
/// (`lca/src/study/whatif.rs` replays them).
#[derive(Debug, Clone, PartialEq)]
pub struct Whatif {
    /// The points whose rows are predicted: those where every condition holds (`p>2`).
    pub conditions: Vec<fit::Condition>,
    /// What a computation demands of its processor (`demand`, default `cpu`).
    pub demand: pp::whatif::Demand,
}

impl Whatif {
    /// Checks `where` and `demand` against the study's factors; an error is the message for
    /// the study file's line.
    pub fn new(conditions: &str, demand: Option<&str>, factors: &[&str]) -> Result<Whatif, String> {
        let conditions = fit::Condition::parse_all(&[conditions.to_string()])
            .map_err(|e| format!("where: {e}"))?;
        if conditions.is_empty() {
            return Err("where: give the points to predict, like where = \"p>2\"".into());
        }
        if let Some(c) = conditions
            .iter()
            .find(|c| !factors.contains(&c.key.as_str()))
        {
            return Err(format!(
                "where: '{}' is not a factor of the study ({})",
                c.key,
                factors.join(", ")
            ));
        }
        let demand = match demand {
            None => pp::whatif::Demand::Cpu,
            Some(d) => d.parse().map_err(|e| format!("demand = {e}"))?,
        };
        Ok(Whatif { conditions, demand })
    }

    /// Whether the point with these factor values (in `factors`' order) is predicted.
    pub fn applies(&self, factors: &[&str], values: &[f64]) -> bool {
        self.conditions.iter().all(|c| {
            factors
                .iter()
                .position(|f| *f == c.key)
                .is_some_and(|i| c.holds(fit::observations::Cell::Number(values[i])))
        })
    }
}

/// Where a study's runs are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dispatch {
    /// On this machine, as child processes of `lca`.
    #[default]
    Local,
    /// As Slurm jobs (`sbatch` job arrays), one per run.
    Slurm,
}

/// `[slurm]`: what every job array of the study is submitted with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlurmOptions {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--account`.
    pub account: Option<String>,
    /// `--time`, as Slurm takes it (default: from the runs' `timeout_s`).
    pub time: Option<String>,
    /// The most jobs of one array running at once (`--array=...%N`).
    pub max_running: Option<usize>,
    /// More `sbatch` options, passed as written.
    pub options: Vec<String>,
}

/// The `sbatch` options an implementation's table may set per run, with the study's
/// placeholders: the table's key and the option.
pub const RESOURCES: [(&str, &str); 4] = [
    ("ntasks", "--ntasks"),
    ("cpus_per_task", "--cpus-per-task"),
    ("nodes", "--nodes"),
    ("mem", "--mem"),
];

/// `[precision]`: a point gets more runs, one at a time, until the 90% confidence interval of
/// its mean `T_p` is within `target` of the mean (relative half-width), or it has
/// `max_replicates` runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    /// The relative half-width to reach, e.g. 0.03 for ±3%.
    pub target: f64,
    /// The most runs of a point.
    pub max_replicates: usize,
}

/// `[decide]`: after the planned runs, runs chosen where they would most shrink the region
/// in which the first two implementations cannot be told apart (`lca crossover --suggest`),
/// `per_round` at a time with the models refitted between rounds, until the region is decided
/// or `budget` runs are spent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decide {
    /// The most runs to spend.
    pub budget: usize,
    /// Runs chosen per round.
    pub per_round: usize,
}

/// One implementation: its name (the datafile's `impl`) and its command.
#[derive(Debug, Clone)]
pub struct Implementation {
    /// The datafile's `impl` value.
    pub name: String,
    /// The argument vector, each argument a template.
    pub command: Vec<Template>,
    /// Seconds a run may take.
    pub timeout_s: f64,
    /// Its Slurm resources per run: the `sbatch` option and its value's template.
    pub resources: Vec<(&'static str, Template)>,
}

/// A factor value as a command and a datafile write it: integers without a decimal point.
pub fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Parses and checks a study file; `file` names it in errors, which are one line each.
pub fn parse(file: &str, text: &str) -> Result<Study, StudyError> {
    check::checked(file, text).map_err(|mut e| {
        e.message = one_line(&e.message);
        e
    })
}

/// The most bytes of an error message (a value quoted whole could be megabytes).
const MAX_MESSAGE: usize = 200;

/// The message with control characters escaped (a value may hold a newline) and cut short.
fn one_line(message: &str) -> String {
    files::quote::excerpt(message, MAX_MESSAGE)
}

/// A value written in the file, as an error quotes it: at most 40 characters.
fn excerpt(value: &str) -> String {
    files::quote::excerpt(value, 40)
}
