//! The study file (TOML): the factors, the design the models are built from, the extra points
//! measured only to validate them, and each implementation's command. Every mistake is one line,
//! `FILE:LINE: what is wrong`.
//!
//! ```toml
//! name = "fft2d"
//! design = "edges:3"          # edges:K (the paper's), full or 2k
//! replicates = 1
//! timeout_s = 60
//!
//! [factors]                   # `lca design --factor` levels, in this order
//! n = "32..512:log2"
//! p = "2..8:lin:7"
//!
//! [validate]                  # measured only to check the models
//! grid = { n = "64,128,256", p = "3,5,7" }
//! points = [{ n = 96, p = 6 }]
//!
//! [[implementation]]
//! name = "dp"
//! command = ["{lca}", "workload", "fft2d", "-p", "{p}", "-n", "{n}", "--impl", "dp"]
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// The longest run a study waits for (30 days): beyond it a timeout is a typo, and a
/// `Duration` of 1e300 s cannot be made.
const MAX_TIMEOUT_S: f64 = 30.0 * 24.0 * 3600.0;

/// The most runs per point: beyond it a count is a typo, and the plan would not fit in memory.
const MAX_REPLICATES: i64 = 1000;

/// The most runs `[decide]` may spend.
const MAX_DECIDE: i64 = 10_000;

/// The most points along each edge of an `edges:K` design (edges:10^12 asked for 8 TB).
const MAX_EDGE_POINTS: usize = 1000;

/// The most points a validation grid may have, counted before any is made.
const MAX_GRID_POINTS: usize = 100_000;

use design::{Design, Factor};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use toml::Spanned;

/// Placeholders every command may use besides the factors.
pub const BUILTINS: [&str; 4] = ["lca", "pp", "impl", "replicate"];

/// Columns the study writes itself, or that hold a run's results: not factor names.
const RESERVED: [&str; 3] = ["impl", "role", "replicate"];

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
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

/// An argument with `{name}` placeholders (`{{` and `}}` are literal braces).
#[derive(Debug, Clone, PartialEq)]
pub struct Template(Vec<Piece>);

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Placeholder(String),
}

impl Template {
    /// Placeholders are `{name}` with `name` an identifier; other braces (a shell's `{ ..; }`)
    /// are kept as written, and `{{` / `}}` are literal braces.
    fn parse(text: &str) -> Template {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if let Some(after) = rest.strip_prefix("{{") {
                literal.push('{');
                rest = after;
                continue;
            }
            if let Some(after) = rest.strip_prefix("}}") {
                literal.push('}');
                rest = after;
                continue;
            }
            if c == '{'
                && let Some(end) = rest.find('}')
                && is_identifier(&rest[1..end])
            {
                if !literal.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut literal)));
                }
                pieces.push(Piece::Placeholder(rest[1..end].to_string()));
                rest = &rest[end + 1..];
                continue;
            }
            literal.push(c);
            rest = &rest[c.len_utf8()..];
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Template(pieces)
    }

    /// The placeholders used.
    pub fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| match p {
            Piece::Placeholder(name) => Some(name.as_str()),
            Piece::Text(_) => None,
        })
    }

    /// The argument with every placeholder replaced (all were checked at load time).
    pub fn expand(&self, values: &BTreeMap<&str, String>) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.as_str(),
                Piece::Placeholder(name) => values.get(name.as_str()).map_or("", |v| v.as_str()),
            })
            .collect()
    }
}

/// A factor value as a command and a datafile write it: integers without a decimal point.
pub fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

// ---------------------------------------------------------------------------------------------
// The file as written.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Spanned<String>,
    out: Option<String>,
    datafile: Option<String>,
    machine: Option<String>,
    factors: Spanned<Ordered<Spanned<String>>>,
    design: Option<Spanned<String>>,
    replicates: Option<Spanned<i64>>,
    timeout_s: Option<Spanned<f64>>,
    validate: Option<RawValidate>,
    precision: Option<Spanned<RawPrecision>>,
    decide: Option<Spanned<RawDecide>>,
    dispatch: Option<Spanned<String>>,
    slurm: Option<RawSlurm>,
    whatif: Option<Spanned<RawWhatif>>,
    #[serde(default)]
    implementation: Vec<Spanned<RawImplementation>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWhatif {
    #[serde(rename = "where")]
    conditions: String,
    demand: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlurm {
    partition: Option<String>,
    account: Option<String>,
    time: Option<String>,
    max_running: Option<Spanned<i64>>,
    #[serde(default)]
    options: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDecide {
    budget: Spanned<i64>,
    per_round: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrecision {
    target: Spanned<f64>,
    max_replicates: Spanned<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawValidate {
    grid: Option<Spanned<Ordered<Spanned<String>>>>,
    #[serde(default)]
    points: Vec<Spanned<BTreeMap<String, f64>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawImplementation {
    name: Spanned<String>,
    command: Spanned<Vec<Spanned<String>>>,
    timeout_s: Option<Spanned<f64>>,
    ntasks: Option<Spanned<toml::Value>>,
    cpus_per_task: Option<Spanned<toml::Value>>,
    nodes: Option<Spanned<toml::Value>>,
    mem: Option<Spanned<toml::Value>>,
}

/// The most jobs of an array running at once that `max_running` may ask for.
const MAX_RUNNING: i64 = 100_000;

/// A table whose keys keep the file's order.
#[derive(Debug)]
struct Ordered<V>(Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for OrderedVisitor<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered<V>, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, V>()? {
                    entries.push((k, v));
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(OrderedVisitor(std::marker::PhantomData))
    }
}

/// Parses and checks a study file; `file` names it in errors, which are one line each.
pub fn parse(file: &str, text: &str) -> Result<Study, StudyError> {
    checked(file, text).map_err(|mut e| {
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

fn checked(file: &str, text: &str) -> Result<Study, StudyError> {
    let line_of = |offset: usize| 1 + text[..offset.min(text.len())].matches('\n').count();
    let error = |offset: usize, message: String| StudyError {
        file: file.to_string(),
        line: line_of(offset),
        message,
    };
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(0, |s| line_of(s.start));
        StudyError {
            file: file.to_string(),
            line,
            message: e.message().trim().replace('\n', " "),
        }
    })?;

    let name = raw.name.get_ref().trim().to_string();
    if !is_name(&name) {
        return Err(error(
            raw.name.span().start,
            format!(
                "name '{}': expected letters, digits, '-', '_' or '.' (it names files)",
                excerpt(&name)
            ),
        ));
    }

    // Factors, in the file's order.
    let mut factors: Vec<Factor> = Vec::new();
    for (key, spec) in &raw.factors.get_ref().0 {
        let at = spec.span().start;
        check_factor_name(key).map_err(|m| error(at, m))?;
        factors.push(parse_factor(key, spec.get_ref()).map_err(|m| error(at, m))?);
    }
    if factors.is_empty() {
        return Err(error(
            raw.factors.span().start,
            "[factors] is empty: name at least one, like p = \"2..8:lin:7\"".into(),
        ));
    }
    let names: Vec<&str> = factors.iter().map(|f| f.name.as_str()).collect();

    let design = match &raw.design {
        None => Design::Edges(3),
        Some(d) => parse_design(d.get_ref()).map_err(|m| error(d.span().start, m))?,
    };
    let replicates = match &raw.replicates {
        None => 1,
        Some(r) if (1..=MAX_REPLICATES).contains(r.get_ref()) => *r.get_ref() as usize,
        Some(r) => {
            return Err(error(
                r.span().start,
                format!(
                    "replicates = {}: expected 1 to {MAX_REPLICATES}",
                    r.get_ref()
                ),
            ));
        }
    };
    let precision = match &raw.precision {
        None => None,
        Some(p) => {
            let p = p.get_ref();
            let target = *p.target.get_ref();
            if !(target > 0.0 && target < 1.0) {
                return Err(error(
                    p.target.span().start,
                    format!(
                        "target = {target}: expected the relative half-width of the 90% \
                         interval of T_p, above 0 and below 1 (0.03 for ±3%)"
                    ),
                ));
            }
            let most = *p.max_replicates.get_ref();
            let least = replicates.max(2) as i64;
            if !(least..=MAX_REPLICATES).contains(&most) {
                return Err(error(
                    p.max_replicates.span().start,
                    format!(
                        "max_replicates = {most}: expected {least} to {MAX_REPLICATES} (at \
                         least replicates, and 2: one run has no spread)"
                    ),
                ));
            }
            Some(Precision {
                target,
                max_replicates: most as usize,
            })
        }
    };
    let decide = match &raw.decide {
        None => None,
        Some(d) => {
            let d = d.get_ref();
            let count = |v: &Spanned<i64>, what: &str, most: i64| {
                if (1..=most).contains(v.get_ref()) {
                    Ok(*v.get_ref() as usize)
                } else {
                    Err(error(
                        v.span().start,
                        format!("{what} = {}: expected 1 to {most} runs", v.get_ref()),
                    ))
                }
            };
            Some(Decide {
                budget: count(&d.budget, "budget", MAX_DECIDE)?,
                per_round: match &d.per_round {
                    None => 4,
                    Some(v) => count(v, "per_round", 100)?,
                },
            })
        }
    };
    let timeout = |t: &Spanned<f64>| -> Result<f64, StudyError> {
        let v = *t.get_ref();
        if v.is_finite() && v > 0.0 && v <= MAX_TIMEOUT_S {
            Ok(v)
        } else {
            Err(error(
                t.span().start,
                format!(
                    "timeout_s = {}: expected a positive number of seconds, at most \
                     {MAX_TIMEOUT_S} (30 days)",
                    // 1e300 as written, not its 301 digits.
                    if v.abs() >= 1e9 {
                        format!("{v:e}")
                    } else {
                        v.to_string()
                    }
                ),
            ))
        }
    };
    let timeout_s = raw
        .timeout_s
        .as_ref()
        .map(timeout)
        .transpose()?
        .unwrap_or(60.0);

    // Validation points: the full grid, then the explicit points.
    let mut validate: Vec<Vec<f64>> = Vec::new();
    if let Some(v) = &raw.validate {
        if let Some(grid) = &v.grid {
            let mut axes: Vec<Option<Vec<f64>>> = vec![None; factors.len()];
            for (key, spec) in &grid.get_ref().0 {
                let at = spec.span().start;
                let Some(i) = names.iter().position(|n| n == key) else {
                    return Err(error(
                        at,
                        format!(
                            "validate.grid: '{}' is not a factor ({})",
                            excerpt(key),
                            names.join(", ")
                        ),
                    ));
                };
                axes[i] = Some(grid_levels(key, spec.get_ref()).map_err(|m| error(at, m))?);
            }
            if let Some(i) = axes.iter().position(Option::is_none) {
                return Err(error(
                    grid.span().start,
                    format!("validate.grid: no levels for factor '{}'", names[i]),
                ));
            }
            let count = axes
                .iter()
                .flatten()
                .try_fold(1usize, |n, axis| n.checked_mul(axis.len()));
            if count.is_none_or(|n| n > MAX_GRID_POINTS) {
                let asked = count.map_or_else(
                    || {
                        let n: f64 = axes.iter().flatten().map(|a| a.len() as f64).product();
                        format!("{n:e}")
                    },
                    |n| n.to_string(),
                );
                return Err(error(
                    grid.span().start,
                    format!("validate.grid has {asked} points; the limit is {MAX_GRID_POINTS}"),
                ));
            }
            let mut grid_points: Vec<Vec<f64>> = vec![Vec::new()];
            for axis in axes.into_iter().flatten() {
                grid_points = grid_points
                    .into_iter()
                    .flat_map(|point| {
                        axis.iter().map(move |&v| {
                            let mut point = point.clone();
                            point.push(v);
                            point
                        })
                    })
                    .collect();
            }
            validate.extend(grid_points);
        }
        for point in &v.points {
            let at = point.span().start;
            let map = point.get_ref();
            if let Some(key) = map.keys().find(|k| !names.contains(&k.as_str())) {
                return Err(error(
                    at,
                    format!(
                        "validate.points: '{}' is not a factor ({})",
                        excerpt(key),
                        names.join(", ")
                    ),
                ));
            }
            let values = names
                .iter()
                .map(|n| match map.get(*n) {
                    None => Err(error(
                        at,
                        format!("validate.points: no value for factor '{n}'"),
                    )),
                    Some(v) if !v.is_finite() => Err(error(
                        at,
                        format!("validate.points: {n} = {v}: expected a finite number"),
                    )),
                    Some(v) => Ok(*v),
                })
                .collect::<Result<Vec<f64>, _>>()?;
            validate.push(values);
        }
    }
    let mut seen = Vec::new();
    validate.retain(|v| {
        let new = !seen.contains(v);
        seen.push(v.clone());
        new
    });

    // Implementations.
    if raw.implementation.is_empty() {
        return Err(error(
            text.len(),
            "no [[implementation]]: give at least one, with a name and a command".into(),
        ));
    }
    let mut implementations: Vec<Implementation> = Vec::new();
    for imp in &raw.implementation {
        let imp = imp.get_ref();
        let iname = imp.name.get_ref().trim().to_string();
        if !is_name(&iname) {
            return Err(error(
                imp.name.span().start,
                format!(
                    "implementation name '{}': expected letters, digits, '-', '_' or '.'",
                    excerpt(&iname)
                ),
            ));
        }
        if implementations.iter().any(|i| i.name == iname) {
            return Err(error(
                imp.name.span().start,
                format!("implementation '{iname}' is given twice"),
            ));
        }
        if imp.command.get_ref().is_empty() {
            return Err(error(
                imp.command.span().start,
                format!("implementation '{iname}': the command is empty"),
            ));
        }
        let mut command = Vec::new();
        let mut used: Vec<String> = Vec::new();
        for arg in imp.command.get_ref() {
            let at = arg.span().start;
            let template = Template::parse(arg.get_ref());
            for p in template.placeholders() {
                if !names.contains(&p) && !BUILTINS.contains(&p) {
                    let mut known: Vec<String> = names.iter().map(|n| format!("{{{n}}}")).collect();
                    known.extend(BUILTINS.iter().map(|b| format!("{{{b}}}")));
                    return Err(error(
                        at,
                        format!(
                            "unknown placeholder {{{p}}} in the command of '{iname}' (known: {})",
                            known.join(", ")
                        ),
                    ));
                }
                used.push(p.to_string());
            }
            command.push(template);
        }
        if let Some(missing) = names.iter().find(|n| !used.iter().any(|u| u == *n)) {
            return Err(error(
                imp.command.span().start,
                format!(
                    "the command of '{iname}' does not use {{{missing}}}: every factor must reach the program"
                ),
            ));
        }
        let timeout_s = imp
            .timeout_s
            .as_ref()
            .map(timeout)
            .transpose()?
            .unwrap_or(timeout_s);
        let mut resources = Vec::new();
        let given = [&imp.ntasks, &imp.cpus_per_task, &imp.nodes, &imp.mem];
        for ((key, option), value) in RESOURCES.iter().zip(given) {
            let Some(value) = value else { continue };
            let at = value.span().start;
            let text = match value.get_ref() {
                toml::Value::Integer(n) if *n > 0 => n.to_string(),
                toml::Value::String(s) => s.clone(),
                other => {
                    return Err(error(
                        at,
                        format!(
                            "{key} = {}: expected a positive integer or a string with \
                             placeholders, like \"{{p}}\"",
                            excerpt(&other.to_string())
                        ),
                    ));
                }
            };
            let template = Template::parse(&text);
            if let Some(p) = template
                .placeholders()
                .find(|p| !names.contains(p) && !matches!(*p, "impl" | "replicate"))
            {
                return Err(error(
                    at,
                    format!(
                        "unknown placeholder {{{p}}} in {key} of '{iname}' (known: the \
                         factors, {{impl}}, {{replicate}})"
                    ),
                ));
            }
            resources.push((*option, template));
        }
        implementations.push(Implementation {
            name: iname,
            command,
            timeout_s,
            resources,
        });
    }

    if let (Some(d), true) = (&raw.decide, implementations.len() < 2) {
        return Err(error(
            d.span().start,
            "[decide] settles the crossover of the first two implementations: give two \
             [[implementation]]s"
                .into(),
        ));
    }
    let dispatch = match &raw.dispatch {
        None => Dispatch::Local,
        Some(d) => match d.get_ref().as_str() {
            "local" => Dispatch::Local,
            "slurm" => Dispatch::Slurm,
            other => {
                return Err(error(
                    d.span().start,
                    format!(
                        "dispatch = \"{}\": expected \"local\" or \"slurm\"",
                        excerpt(other)
                    ),
                ));
            }
        },
    };
    let slurm = match raw.slurm {
        None => SlurmOptions::default(),
        Some(s) => SlurmOptions {
            max_running: match &s.max_running {
                None => None,
                Some(m) if (1..=MAX_RUNNING).contains(m.get_ref()) => Some(*m.get_ref() as usize),
                Some(m) => {
                    return Err(error(
                        m.span().start,
                        format!(
                            "max_running = {}: expected 1 to {MAX_RUNNING} jobs",
                            m.get_ref()
                        ),
                    ));
                }
            },
            partition: s.partition,
            account: s.account,
            time: s.time,
            options: s.options,
        },
    };
    let whatif = match &raw.whatif {
        None => None,
        Some(w) => Some(
            Whatif::new(
                &w.get_ref().conditions,
                w.get_ref().demand.as_deref(),
                &names,
            )
            .map_err(|m| error(w.span().start, m))?,
        ),
    };
    let out = PathBuf::from(raw.out.unwrap_or_else(|| format!("study-{name}")));
    let datafile = raw
        .datafile
        .map(PathBuf::from)
        .unwrap_or_else(|| out.join(format!("{name}.dat")));
    Ok(Study {
        name,
        out,
        datafile,
        machine: raw.machine.map(PathBuf::from),
        factors,
        design,
        replicates,
        precision,
        decide,
        validate,
        implementations,
        dispatch,
        slurm,
        whatif,
    })
}

fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn check_factor_name(key: &str) -> Result<(), String> {
    let ok = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(format!(
            "factor '{}': expected a name of letters, digits and '_' (a datafile column)",
            excerpt(key)
        ));
    }
    if RESERVED.contains(&key)
        || BUILTINS.contains(&key)
        || fit::observations::is_response_column(key)
    {
        return Err(format!(
            "factor '{key}': the name is taken (impl, role, replicate, lca, pp and the measured columns)"
        ));
    }
    Ok(())
}

fn parse_factor(name: &str, spec: &str) -> Result<Factor, String> {
    Factor::parse(&format!("{name}={spec}"))
        .map_err(|e| format!("factor {name} = \"{}\": {}", excerpt(spec), e.message))
}

/// A validation grid's levels: a factor specification, or a list that may have one level.
fn grid_levels(name: &str, spec: &str) -> Result<Vec<f64>, String> {
    if spec.contains("..") {
        return Ok(parse_factor(name, spec)?.levels);
    }
    spec.split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    format!(
                        "validate.grid: {name} = \"{}\": '{}' is not a number",
                        excerpt(spec),
                        excerpt(v.trim())
                    )
                })
        })
        .collect()
}

fn parse_design(text: &str) -> Result<Design, String> {
    let t = text.trim();
    match t {
        "full" => return Ok(Design::Full),
        "2k" => return Ok(Design::TwoK),
        "edges" => return Ok(Design::Edges(3)),
        _ => {}
    }
    if let Some(k) = t.strip_prefix("edges:")
        && let Ok(k) = k.trim().parse::<usize>()
        && (1..=MAX_EDGE_POINTS).contains(&k)
    {
        return Ok(Design::Edges(k));
    }
    Err(format!(
        "design = \"{}\": expected edges:K (the corners and K points along each edge, \
         1 <= K <= {MAX_EDGE_POINTS}), full or 2k",
        excerpt(text)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"name = "t"
[factors]
n = "32..512:log2"
p = "2..8:lin:7"
[validate]
grid = { p = "3,5", n = "64" }
points = [{ n = 96, p = 6 }, { n = 64, p = 3 }]
[[implementation]]
name = "a"
command = ["prog", "-n{n}", "{p}", "{{x}}", "{ a; }{x", "}{ p}"]
"#;

    #[test]
    fn a_good_file() {
        let s = parse("s.toml", GOOD).unwrap();
        assert_eq!(s.factors[0].name, "n");
        assert_eq!(s.design, Design::Edges(3));
        assert_eq!(s.validate, [[64.0, 3.0], [64.0, 5.0], [96.0, 6.0]]);
        assert_eq!(s.datafile, PathBuf::from("study-t/t.dat"));
        let values = BTreeMap::from([("n", "64".to_string()), ("p", "3".to_string())]);
        let argv: Vec<String> = s.implementations[0]
            .command
            .iter()
            .map(|t| t.expand(&values))
            .collect();
        assert_eq!(argv, ["prog", "-n64", "3", "{x}", "{ a; }{x", "}{ p}"]);
    }

    #[test]
    fn slurm_fields() {
        let text = GOOD.replace(
            "name = \"t\"",
            "name = \"t\"\ndispatch = \"slurm\"\n[slurm]\npartition = \"debug\"\naccount = \"x\"\n\
             time = \"5\"\nmax_running = 3\noptions = [\"--exclusive\"]",
        ) + "ntasks = \"{p}\"\nmem = \"4G\"\n";
        let s = parse("s.toml", &text).unwrap();
        assert_eq!(s.dispatch, Dispatch::Slurm);
        assert_eq!(
            s.slurm,
            SlurmOptions {
                partition: Some("debug".into()),
                account: Some("x".into()),
                time: Some("5".into()),
                max_running: Some(3),
                options: vec!["--exclusive".into()],
            }
        );
        let values = BTreeMap::from([("p", "3".to_string())]);
        let resources: Vec<(&str, String)> = s.implementations[0]
            .resources
            .iter()
            .map(|(option, t)| (*option, t.expand(&values)))
            .collect();
        assert_eq!(
            resources,
            [("--ntasks", "3".into()), ("--mem", "4G".into())]
        );
        assert_eq!(parse("s.toml", GOOD).unwrap().dispatch, Dispatch::Local);
    }

    fn err(text: &str) -> String {
        parse("s.toml", text).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_line() {
        let e = err(&GOOD.replace("\"{p}\"", "\"{q}\""));
        assert!(e.starts_with("s.toml:10: unknown placeholder {q}"), "{e}");
        let e = err(&GOOD.replace("[factors]", "colour = 3\n[factors]"));
        assert!(e.starts_with("s.toml:2: unknown field `colour`"), "{e}");
        let e = err(&GOOD.replace("2..8:lin:7", "2..x"));
        assert!(e.starts_with("s.toml:4: factor p = \"2..x\""), "{e}");
        let e = err(&GOOD.replace("\"-n{n}\", ", ""));
        assert!(
            e.starts_with("s.toml:10: the command of 'a' does not use {n}"),
            "{e}"
        );
        let e = err(&GOOD.replace("name = \"t\"", "name = \"t\"\ndesign = \"edges:0\""));
        assert!(e.starts_with("s.toml:2: design"), "{e}");
        let e = err(&GOOD.replace("n = 96, ", ""));
        assert!(e.contains("no value for factor 'n'"), "{e}");
        let e = err("name = \n");
        assert!(e.starts_with("s.toml:1: ") && !e.contains('\n'), "{e}");
        let e = err(&GOOD.replace(
            "grid = { p = \"3,5\", n = \"64\" }",
            "grid = { p = \"1..1000:lin:1000\", n = \"1..1000:lin:1000\" }",
        ));
        assert!(
            e.starts_with("s.toml:6: validate.grid has 1000000 points; the limit is 100000"),
            "{e}"
        );
        // A value with a newline (a literal string of ''') or of any length: one short line.
        let e = err(&GOOD.replace("\"2..8:lin:7\"", "'''2..8:l\n:7'''"));
        assert!(e.starts_with("s.toml:4: factor p = \"2..8:l\\n:7\""), "{e}");
        let long = format!("name = \"{}\"", "é/".repeat(50_000));
        let e = err(&GOOD.replace("name = \"t\"", &long));
        assert!(e.starts_with("s.toml:1: name 'é/é/"), "{e}");
        assert!(e.chars().count() < 400 && e.contains('…'), "{e}");
        let e = err(&GOOD.replace("n = 96,", "n = nan,"));
        assert!(
            e.starts_with("s.toml:7: validate.points: n = NaN: expected a finite number"),
            "{e}"
        );
        let e = err(&GOOD.replace(
            "name = \"t\"",
            "name = \"t\"\ndesign = \"edges:1000000000000\"",
        ));
        assert!(
            e.starts_with("s.toml:2: design = \"edges:1000000000000\""),
            "{e}"
        );
        assert!(e.contains("1 <= K <= 1000"), "{e}");
        let e = err(&GOOD.replace("name = \"t\"", "name = \"t\"\nreplicates = 1001"));
        assert!(
            e.starts_with("s.toml:2: replicates = 1001: expected 1 to 1000"),
            "{e}"
        );
        let precision = |table: &str| {
            GOOD.replace(
                "name = \"t\"",
                &format!("name = \"t\"\nreplicates = 3\n{table}"),
            )
        };
        let e = err(&precision("[precision]\ntarget = 0\nmax_replicates = 5\n"));
        assert!(
            e.starts_with("s.toml:4: target = 0: expected the relative"),
            "{e}"
        );
        let e = err(&precision(
            "[precision]\ntarget = 0.03\nmax_replicates = 2\n",
        ));
        assert!(
            e.starts_with("s.toml:5: max_replicates = 2: expected 3 to 1000"),
            "{e}"
        );
        let e = err(&precision("[decide]\nbudget = 0\n"));
        assert!(
            e.starts_with("s.toml:4: budget = 0: expected 1 to 10000 runs"),
            "{e}"
        );
        let e = err(&precision("[decide]\nbudget = 10\n"));
        assert!(
            e.contains("[decide] settles the crossover of the first two"),
            "{e}"
        );
        let e = err(&precision("[decide]\nbudget = 10\nper_round = 101\n"));
        assert!(
            e.starts_with("s.toml:5: per_round = 101: expected 1 to 100"),
            "{e}"
        );
        let e = err(&precision("[precision]\ntarget = 0.03\n"));
        assert!(e.contains("missing field `max_replicates`"), "{e}");
        let e = err(&precision(
            "[precision]\ntarget = 0.03\nmax_replicates = 5\nmin = 1\n",
        ));
        assert!(e.contains("unknown field `min`"), "{e}");
        let e = err("name = \"t\"\n[factors]\nn = \"1,2\"\n");
        assert!(
            e.starts_with("s.toml:") && e.contains("[[implementation]]"),
            "{e}"
        );
    }
}
