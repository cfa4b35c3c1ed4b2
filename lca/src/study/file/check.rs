//! From the file as written ([`Raw`]) to a checked [`Study`]: one checker per table or
//! setting, called in the file's order of concerns, each error naming the line of the value at
//! fault.

use std::path::PathBuf;

use design::{Design, Factor};
use toml::Spanned;

use super::raw::{Raw, RawDecide, RawPrecision, RawSlurm, RawWhatif};
use super::source::{Source, is_name, parse_factor, timeout};
use super::{
    BUILTINS, Decide, Dispatch, Precision, SlurmOptions, Study, StudyError, Whatif, excerpt,
};

/// The most runs per point: beyond it a count is a typo, and the plan would not fit in memory.
pub(super) const MAX_REPLICATES: i64 = 1000;

/// The most runs `[decide]` may spend.
const MAX_DECIDE: i64 = 10_000;

/// The most points along each edge of an `edges:K` design (edges:10^12 asked for 8 TB).
const MAX_EDGE_POINTS: usize = 1000;

/// The most jobs of an array running at once that `max_running` may ask for.
const MAX_RUNNING: i64 = 100_000;

/// Columns the study writes itself, or that hold a run's results: not factor names.
const RESERVED: [&str; 3] = ["impl", "role", "replicate"];

/// Reads and checks the whole file.
pub(super) fn checked(file: &str, text: &str) -> Result<Study, StudyError> {
    let src = Source { file, text };
    let raw: Raw = toml::from_str(text).map_err(|e| StudyError {
        file: file.to_string(),
        line: e.span().map_or(0, |s| src.line_of(s.start)),
        message: e.message().trim().replace('\n', " "),
    })?;
    let name = name(&src, &raw.name)?;
    let factors = factors(&src, &raw)?;
    let names: Vec<&str> = factors.iter().map(|f| f.name.as_str()).collect();
    let design = match &raw.design {
        None => Design::Edges(3),
        Some(d) => parse_design(d.get_ref()).map_err(|m| src.at(d, m))?,
    };
    let replicates = replicates(&src, raw.replicates.as_ref())?;
    let max_failures = max_failures(&src, raw.max_failures.as_ref())?;
    let precision = raw
        .precision
        .as_ref()
        .map(|p| precision(&src, p.get_ref(), replicates))
        .transpose()?;
    let decide = raw
        .decide
        .as_ref()
        .map(|d| decide(&src, d.get_ref()))
        .transpose()?;
    let timeout_s = raw
        .timeout_s
        .as_ref()
        .map(|t| timeout(&src, t))
        .transpose()?
        .unwrap_or(60.0);
    let validate = super::validation::points(&src, raw.validate.as_ref(), &names)?;
    let implementations =
        super::implementation::implementations(&src, &raw.implementation, &names, timeout_s)?;
    if let (Some(d), true) = (&raw.decide, implementations.len() < 2) {
        return Err(src.at(
            d,
            "[decide] settles the crossover of the first two implementations: give two \
             [[implementation]]s"
                .into(),
        ));
    }
    let dispatch = dispatch(&src, raw.dispatch.as_ref())?;
    let slurm = raw
        .slurm
        .map(|s| slurm(&src, s))
        .transpose()?
        .unwrap_or_default();
    let whatif = raw
        .whatif
        .as_ref()
        .map(|w| whatif(&src, w, &names))
        .transpose()?;
    let shapes = super::shapes::shapes(&src, raw.shapes.as_ref(), &names)?;
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
        max_failures,
        precision,
        decide,
        validate,
        implementations,
        dispatch,
        slurm,
        whatif,
        shapes,
    })
}

/// `name`: it names the output folder and the datafile.
fn name(src: &Source, raw: &Spanned<String>) -> Result<String, StudyError> {
    let name = raw.get_ref().trim().to_string();
    if !is_name(&name) {
        return Err(src.at(
            raw,
            format!(
                "name '{}': expected letters, digits, '-', '_' or '.' (it names files)",
                excerpt(&name)
            ),
        ));
    }
    Ok(name)
}

/// `[factors]`, in the file's order.
fn factors(src: &Source, raw: &Raw) -> Result<Vec<Factor>, StudyError> {
    let mut factors: Vec<Factor> = Vec::new();
    for (key, spec) in &raw.factors.get_ref().0 {
        check_factor_name(key).map_err(|m| src.at(spec, m))?;
        factors.push(parse_factor(key, spec.get_ref()).map_err(|m| src.at(spec, m))?);
    }
    if factors.is_empty() {
        return Err(src.at(
            &raw.factors,
            "[factors] is empty: name at least one, like p = \"2..8:lin:7\"".into(),
        ));
    }
    Ok(factors)
}

/// `replicates`: runs per point (default 1).
fn replicates(src: &Source, raw: Option<&Spanned<i64>>) -> Result<usize, StudyError> {
    match raw {
        None => Ok(1),
        Some(r) if (1..=MAX_REPLICATES).contains(r.get_ref()) => Ok(*r.get_ref() as usize),
        Some(r) => Err(src.at(
            r,
            format!(
                "replicates = {}: expected 1 to {MAX_REPLICATES}",
                r.get_ref()
            ),
        )),
    }
}

/// The most failures in a row that `max_failures` may allow: a study that fails more often
/// than this is not measuring anything.
const MAX_FAILURES: i64 = 10_000;

/// `max_failures`: runs of one implementation failing in a row before the study stops
/// (default 3).
fn max_failures(src: &Source, raw: Option<&Spanned<i64>>) -> Result<usize, StudyError> {
    match raw {
        None => Ok(3),
        Some(r) if (1..=MAX_FAILURES).contains(r.get_ref()) => Ok(*r.get_ref() as usize),
        Some(r) => Err(src.at(
            r,
            format!(
                "max_failures = {}: expected 1 to {MAX_FAILURES} (runs of one implementation \
                 failing in a row before the study stops)",
                r.get_ref()
            ),
        )),
    }
}

/// `[precision]`: the target and the most replicates (at least `replicates`, and 2).
fn precision(src: &Source, p: &RawPrecision, replicates: usize) -> Result<Precision, StudyError> {
    let target = *p.target.get_ref();
    if !(target > 0.0 && target < 1.0) {
        return Err(src.at(
            &p.target,
            format!(
                "target = {target}: expected the relative half-width of the 90% \
                 interval of T_p, above 0 and below 1 (0.03 for ±3%)"
            ),
        ));
    }
    let most = *p.max_replicates.get_ref();
    let least = replicates.max(2) as i64;
    if !(least..=MAX_REPLICATES).contains(&most) {
        return Err(src.at(
            &p.max_replicates,
            format!(
                "max_replicates = {most}: expected {least} to {MAX_REPLICATES} (at \
                 least replicates, and 2: one run has no spread)"
            ),
        ));
    }
    Ok(Precision {
        target,
        max_replicates: most as usize,
    })
}

/// `[decide]`: the budget and the runs per round (default 4).
fn decide(src: &Source, d: &RawDecide) -> Result<Decide, StudyError> {
    let count = |v: &Spanned<i64>, what: &str, most: i64| {
        if (1..=most).contains(v.get_ref()) {
            Ok(*v.get_ref() as usize)
        } else {
            Err(src.at(
                v,
                format!("{what} = {}: expected 1 to {most} runs", v.get_ref()),
            ))
        }
    };
    Ok(Decide {
        budget: count(&d.budget, "budget", MAX_DECIDE)?,
        per_round: match &d.per_round {
            None => 4,
            Some(v) => count(v, "per_round", 100)?,
        },
    })
}

/// `dispatch`: local (the default) or slurm.
fn dispatch(src: &Source, raw: Option<&Spanned<String>>) -> Result<Dispatch, StudyError> {
    let Some(d) = raw else {
        return Ok(Dispatch::Local);
    };
    match d.get_ref().as_str() {
        "local" => Ok(Dispatch::Local),
        "slurm" => Ok(Dispatch::Slurm),
        other => Err(src.at(
            d,
            format!(
                "dispatch = \"{}\": expected \"local\" or \"slurm\"",
                excerpt(other)
            ),
        )),
    }
}

/// `[slurm]`: passed to `sbatch` as written, but `max_running`, which is counted.
fn slurm(src: &Source, s: RawSlurm) -> Result<SlurmOptions, StudyError> {
    let max_running = match &s.max_running {
        None => None,
        Some(m) if (1..=MAX_RUNNING).contains(m.get_ref()) => Some(*m.get_ref() as usize),
        Some(m) => {
            return Err(src.at(
                m,
                format!(
                    "max_running = {}: expected 1 to {MAX_RUNNING} jobs",
                    m.get_ref()
                ),
            ));
        }
    };
    Ok(SlurmOptions {
        max_running,
        partition: s.partition,
        account: s.account,
        time: s.time,
        options: s.options,
    })
}

/// `[whatif]`: its conditions over the factors, and the demand.
fn whatif(src: &Source, w: &Spanned<RawWhatif>, names: &[&str]) -> Result<Whatif, StudyError> {
    let raw = w.get_ref();
    Whatif::new(&raw.conditions, raw.demand.as_deref(), names).map_err(|m| src.at(w, m))
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
