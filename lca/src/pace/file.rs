//! The PACE model file (docs/pace.md#the-file): TOML, one table per layer, the subtask an
//! `lca` model file of its own inside `[subtask]`. Errors are one line naming the file, the
//! line and the field.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::messages::{Messages, Network, Pattern};
use super::model::{
    Activity, Application, Carrier, CoreSharing, DEFAULT_SLICE_S, Error, Handoff, Hardware,
    Members, PaceModel, Split, Step, known,
};

/// The most iterations a model replays at a point (each is `p` threads' events).
pub const MAX_REPLAYED: u32 = 1000;

/// The `kind` of a PACE model file.
pub const KIND: &str = "pace";

/// A PACE model file that cannot be read: `file:line: message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct PaceFileError {
    /// The file.
    pub file: String,
    /// The line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRecord {
    format: u32,
    kind: String,
    #[serde(default)]
    name: String,
    factors: Vec<String>,
    #[serde(default)]
    range: BTreeMap<String, [f64; 2]>,
    #[serde(default)]
    held: BTreeMap<String, f64>,
    #[serde(default)]
    notes: Vec<String>,
    application: Spanned<ApplicationRecord>,
    template: Vec<Spanned<StepRecord>>,
    hardware: Spanned<HardwareRecord>,
    #[serde(default)]
    error: Option<Spanned<ErrorRecord>>,
    subtask: Spanned<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApplicationRecord {
    iterations: String,
    startup_s: f64,
    teardown_s: f64,
    replayed: u32,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum ThreadsRecord {
    All,
    Group,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum SmallerRecord {
    First,
    Last,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum ActivityRecord {
    Work,
    Comm,
    Wait,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum SplitRecord {
    Equal,
    Chunks,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepRecord {
    region: String,
    threads: ThreadsRecord,
    group: Option<u32>,
    groups: Option<u32>,
    smaller: Option<SmallerRecord>,
    activity: ActivityRecord,
    split: SplitRecord,
    units: Option<String>,
    after: Option<String>,
    lag: Option<u32>,
    messages: Option<String>,
    bytes: Option<f64>,
    bytes_powers: Option<BTreeMap<String, f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HardwareRecord {
    cores: u32,
    speed: f64,
    fork_join_s: f64,
    handoff_s: f64,
    switch_s: f64,
    handoff_shared_s: f64,
    load: f64,
    #[serde(default)]
    compute_shared: f64,
    #[serde(default)]
    wait_cpu: f64,
    machine: Option<String>,
    network_alpha_s: Option<f64>,
    network_bytes_per_s: Option<f64>,
    #[serde(default)]
    sharing: Option<String>,
    messages: Option<String>,
    slice_s: Option<f64>,
    core_switch_s: Option<f64>,
    waits: Option<String>,
    rendezvous_bytes: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorRecord {
    relative_sd: f64,
    runs: u32,
}

/// Whether a text is one header token (a name a log's header can hold as a value).
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c))
}

/// Whether a model file's text says it is a PACE model (`kind = "pace"`).
pub fn is_pace(text: &str) -> bool {
    text.parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("kind").and_then(|k| k.as_str().map(|k| k == KIND)))
        .unwrap_or(false)
}

/// Reads a PACE model file.
pub fn read(path: &Path) -> Result<PaceModel, PaceFileError> {
    let file = path.display().to_string();
    let text =
        files::input::read_text(path, "model file", files::input::MAX_SMALL_FILE).map_err(|e| {
            PaceFileError {
                file: file.clone(),
                line: None,
                message: e.to_string(),
            }
        })?;
    let mut model = parse(&file, &text)?;
    // A machine file named relative to the model's folder.
    if let Some(m) = &mut model.hardware.machine
        && Path::new(m).is_relative()
        && let Some(dir) = path.parent()
    {
        *m = dir.join(&*m).display().to_string();
    }
    Ok(model)
}

/// Parses a PACE model file's text (`file` names it in errors).
pub fn parse(file: &str, text: &str) -> Result<PaceModel, PaceFileError> {
    let line_of = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
    let fail = |line: Option<usize>, message: String| PaceFileError {
        file: file.into(),
        line,
        message: files::quote::excerpt(&message.replace('\n', " "), 200),
    };
    let r: FileRecord = toml::from_str(text).map_err(|e| {
        let mut message = e.message().to_string();
        // The field the hardware layer had before `switch_s`
        // (docs/pace.md#how-the-template-is-derived).
        if message.contains("`fork_join_shared_s`") {
            message = "hardware.fork_join_shared_s: a model built by an older lca (the field is \
                       now switch_s): rebuild it with `lca pace build`"
                .into();
        }
        fail(e.span().map(|s| line_of(s.start)), message)
    })?;
    if r.format != 1 {
        return Err(fail(
            None,
            format!("format = {}: this lca reads format 1", r.format),
        ));
    }
    if r.kind != KIND {
        return Err(fail(
            None,
            format!("kind = \"{}\": a PACE model has kind = \"{KIND}\"", r.kind),
        ));
    }
    let factors = r.factors;
    let mut ranges = Vec::with_capacity(factors.len());
    for f in &factors {
        ranges.push(match r.range.get(f) {
            Some(&[lo, hi]) if lo.is_finite() && hi.is_finite() && lo <= hi => (lo, hi),
            Some(_) => return Err(fail(None, format!("range.{f}: not [low, high]"))),
            None => (f64::NEG_INFINITY, f64::INFINITY),
        });
    }
    let held = r.held;
    let a_line = Some(line_of(r.application.span().start));
    let a = r.application.into_inner();
    if !known(&a.iterations, &factors, &held) {
        return Err(fail(
            a_line,
            format!(
                "application.iterations = \"{}\": neither a factor, a held column nor a number",
                a.iterations
            ),
        ));
    }
    for (field, v) in [("startup_s", a.startup_s), ("teardown_s", a.teardown_s)] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(fail(
                a_line,
                format!(
                    "application.{field} = {}: not a number >= 0",
                    files::quote::number(v)
                ),
            ));
        }
    }
    if !(1..=MAX_REPLAYED).contains(&a.replayed) {
        return Err(fail(
            a_line,
            format!(
                "application.replayed = {}: replay 1 to {MAX_REPLAYED} iterations",
                a.replayed
            ),
        ));
    }
    let application = Application {
        iterations: a.iterations,
        startup_s: a.startup_s,
        teardown_s: a.teardown_s,
        replayed: a.replayed,
    };
    if r.template.is_empty() {
        return Err(fail(None, "template: no step".into()));
    }
    let mut template: Vec<Step> = Vec::with_capacity(r.template.len());
    for spanned in r.template {
        let line = Some(line_of(spanned.span().start));
        let s = spanned.into_inner();
        let err = |field: &str, m: String| {
            let region = files::quote::excerpt(&s.region, 40);
            fail(line, format!("template '{region}': {field}: {m}"))
        };
        if template.iter().any(|t| t.region == s.region) {
            return Err(err("region", "given twice".into()));
        }
        if !pp::log::is_name(&s.region) {
            return Err(err(
                "region",
                "not a name a log can hold (empty, or with whitespace, a control character or '#')"
                    .into(),
            ));
        }
        let members = match s.threads {
            ThreadsRecord::All => Members::All,
            ThreadsRecord::Group => {
                let groups = s
                    .groups
                    .ok_or_else(|| err("groups", "missing (threads = \"group\")".into()))?;
                let group = s
                    .group
                    .ok_or_else(|| err("group", "missing (threads = \"group\")".into()))?;
                if groups < 1 || group >= groups {
                    return Err(err(
                        "group",
                        format!("{group} is not below groups = {groups}"),
                    ));
                }
                Members::Group {
                    group,
                    groups,
                    smaller_first: s.smaller.unwrap_or(SmallerRecord::First)
                        == SmallerRecord::First,
                }
            }
        };
        let split = match s.split {
            SplitRecord::Equal => Split::Equal,
            SplitRecord::Chunks => {
                let units = s
                    .units
                    .clone()
                    .ok_or_else(|| err("units", "missing (split = \"chunks\")".into()))?;
                if !known(&units, &factors, &held) {
                    return Err(err(
                        "units",
                        format!("\"{units}\" is neither a factor, a held column nor a number"),
                    ));
                }
                Split::Chunks { units }
            }
        };
        let waits_for = match (&s.after, s.lag) {
            (Some(after), lag) => {
                let lag = lag.unwrap_or(0);
                if lag == 0 && !template.iter().any(|t| &t.region == after) {
                    return Err(err(
                        "after",
                        format!(
                            "'{after}' is not an earlier step (a wait in the same iteration, lag = 0, needs its releaser before it)"
                        ),
                    ));
                }
                Some(Handoff {
                    after: after.clone(),
                    lag,
                })
            }
            (None, Some(_)) => return Err(err("lag", "given without after".into())),
            (None, None) => None,
        };
        let messages = match (&s.messages, s.bytes, &s.bytes_powers) {
            (None, None, None) => None,
            (None, _, _) => {
                let field = if s.bytes.is_some() {
                    "bytes"
                } else {
                    "bytes_powers"
                };
                return Err(err(field, "given without messages".into()));
            }
            (Some(name), bytes, powers) => {
                let pattern = Pattern::parse(name).ok_or_else(|| {
                    err(
                        "messages",
                        format!(
                            "\"{name}\" is not a pattern (all-to-all, ring-up, ring-down, pairs)"
                        ),
                    )
                })?;
                if s.threads != ThreadsRecord::All {
                    return Err(err(
                        "threads",
                        "an exchange of messages is between all ranks (threads = \"all\")".into(),
                    ));
                }
                if s.activity != ActivityRecord::Wait {
                    return Err(err(
                        "activity",
                        "an exchange of messages is \"wait\" (its time is the network's)".into(),
                    ));
                }
                let bytes = bytes.ok_or_else(|| err("bytes", "missing (messages given)".into()))?;
                if !(bytes.is_finite() && bytes >= 0.0) {
                    return Err(err("bytes", format!("{bytes} is not a number >= 0")));
                }
                let powers = powers.clone().unwrap_or_default();
                for (name, power) in &powers {
                    if !factors.contains(name) && !held.contains_key(name) {
                        return Err(err(
                            "bytes_powers",
                            format!("'{name}' is neither a factor nor a held column"),
                        ));
                    }
                    if !power.is_finite() {
                        return Err(err(
                            "bytes_powers",
                            format!("{name} = {power} is not a finite number"),
                        ));
                    }
                }
                Some(Messages {
                    pattern,
                    bytes,
                    powers,
                })
            }
        };
        template.push(Step {
            messages,
            region: s.region.clone(),
            members,
            activity: match s.activity {
                ActivityRecord::Work => Activity::Work,
                ActivityRecord::Comm => Activity::Comm,
                ActivityRecord::Wait => Activity::Wait,
            },
            split,
            waits_for,
        });
    }
    for s in &template {
        if let Some(h) = &s.waits_for
            && !template.iter().any(|t| t.region == h.after)
        {
            return Err(fail(
                None,
                format!(
                    "template '{}': after: no step '{}'",
                    s.region,
                    files::quote::excerpt(&h.after, 40)
                ),
            ));
        }
    }
    let h_line = Some(line_of(r.hardware.span().start));
    let h = r.hardware.into_inner();
    if h.cores == 0 {
        return Err(fail(h_line, "hardware.cores = 0: at least 1".into()));
    }
    if !(h.speed.is_finite() && h.speed > 0.0) {
        return Err(fail(
            h_line,
            format!(
                "hardware.speed = {}: not a number > 0",
                files::quote::number(h.speed)
            ),
        ));
    }
    for (field, v) in [
        ("fork_join_s", h.fork_join_s),
        ("handoff_s", h.handoff_s),
        ("switch_s", h.switch_s),
        ("handoff_shared_s", h.handoff_shared_s),
        ("load", h.load),
        ("core_switch_s", h.core_switch_s.unwrap_or(0.0)),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(fail(
                h_line,
                format!(
                    "hardware.{field} = {}: not a number >= 0",
                    files::quote::number(v)
                ),
            ));
        }
    }
    // Computation past the cores is (1 + compute_shared * sharing) times as long, sharing up
    // to 1: above -1 it stays positive.
    if !(h.compute_shared.is_finite() && h.compute_shared > -1.0) {
        return Err(fail(
            h_line,
            format!(
                "hardware.compute_shared = {}: not a number above -1",
                files::quote::number(h.compute_shared)
            ),
        ));
    }
    if !(0.0..=1.0).contains(&h.wait_cpu) {
        return Err(fail(
            h_line,
            format!(
                "hardware.wait_cpu = {}: not a share from 0 to 1",
                files::quote::number(h.wait_cpu)
            ),
        ));
    }
    let network = match (h.network_alpha_s, h.network_bytes_per_s) {
        (None, None) => None,
        (Some(alpha_s), Some(bytes_per_s)) => {
            if !(alpha_s.is_finite() && alpha_s >= 0.0) {
                return Err(fail(
                    h_line,
                    format!(
                        "hardware.network_alpha_s = {}: not a number >= 0",
                        files::quote::number(alpha_s)
                    ),
                ));
            }
            if bytes_per_s.is_nan() || bytes_per_s <= 0.0 {
                return Err(fail(
                    h_line,
                    format!(
                        "hardware.network_bytes_per_s = {}: not a number > 0",
                        files::quote::number(bytes_per_s)
                    ),
                ));
            }
            Some(Network {
                alpha_s,
                bytes_per_s,
            })
        }
        (Some(_), None) => {
            return Err(fail(
                h_line,
                "hardware.network_bytes_per_s: missing (network_alpha_s given)".into(),
            ));
        }
        (None, Some(_)) => {
            return Err(fail(
                h_line,
                "hardware.network_alpha_s: missing (network_bytes_per_s given)".into(),
            ));
        }
    };
    let sharing = match h.sharing.as_deref() {
        None | Some("processor") => CoreSharing::Processor,
        Some("run-to-block") => CoreSharing::RunToBlock,
        Some(other) => {
            return Err(fail(
                h_line,
                format!(
                    "hardware.sharing = '{}': expected processor or run-to-block",
                    files::quote::excerpt(other, 40)
                ),
            ));
        }
    };
    let carrier = match h.messages.as_deref() {
        None | Some("network") => Carrier::Network,
        Some("processors") => Carrier::Processors,
        Some(other) => {
            return Err(fail(
                h_line,
                format!(
                    "hardware.messages = '{}': expected network or processors",
                    files::quote::excerpt(other, 40)
                ),
            ));
        }
    };
    let waits = match h.waits.as_deref() {
        None | Some("block") => pp::whatif::Waits::Block,
        Some("spin") if sharing == CoreSharing::RunToBlock => pp::whatif::Waits::Spin,
        Some("spin") => {
            return Err(fail(
                h_line,
                "hardware.waits = 'spin': needs sharing = \"run-to-block\"".into(),
            ));
        }
        Some(other) => {
            return Err(fail(
                h_line,
                format!(
                    "hardware.waits = '{}': expected block or spin",
                    files::quote::excerpt(other, 40)
                ),
            ));
        }
    };
    if h.rendezvous_bytes.is_some() && waits != pp::whatif::Waits::Spin {
        return Err(fail(
            h_line,
            "hardware.rendezvous_bytes: needs waits = \"spin\"".into(),
        ));
    }
    let slice_s = h.slice_s.unwrap_or(DEFAULT_SLICE_S);
    if !(slice_s.is_finite() && (1e-9..=1e3).contains(&slice_s)) {
        return Err(fail(
            h_line,
            format!(
                "hardware.slice_s = {}: not a number of seconds from 1e-9 to 1000",
                files::quote::number(slice_s)
            ),
        ));
    }
    let error = match r.error {
        Some(e) => {
            let line = Some(line_of(e.span().start));
            let e = e.into_inner();
            if !(e.relative_sd.is_finite() && e.relative_sd >= 0.0) || e.runs == 0 {
                return Err(fail(
                    line,
                    "error: relative_sd must be a number >= 0 and runs >= 1".into(),
                ));
            }
            Some(Error {
                relative_sd: e.relative_sd,
                runs: e.runs,
            })
        }
        None => None,
    };
    let s_line = line_of(r.subtask.span().start);
    let sub_text =
        toml::to_string(r.subtask.get_ref()).map_err(|e| fail(Some(s_line), e.to_string()))?;
    let subtask = fit::model_file::parse(&format!("{file} [subtask]"), &sub_text)
        .map_err(|e| fail(Some(s_line), format!("subtask: {}", e.message)))?;
    for c in &subtask.categories {
        match super::schedule::subtask_region(&c.category) {
            Some(region) if template.iter().any(|s| s.region == region) => {}
            _ => {
                return Err(fail(
                    Some(s_line),
                    format!(
                        "subtask: category '{}' is not pc.<region> or cl.<region> of a template step",
                        files::quote::excerpt(&c.category, 40)
                    ),
                ));
            }
        }
    }
    if let Some(f) = subtask
        .factors
        .iter()
        .find(|f| !factors.contains(f) && !held.contains_key(*f))
    {
        return Err(fail(
            Some(s_line),
            format!("subtask: factor '{f}' is neither a factor nor held"),
        ));
    }
    if !factors.iter().any(|f| f == "p") && !held.contains_key("p") {
        return Err(fail(
            None,
            "factors: a template needs p (a factor or held)".into(),
        ));
    }
    Ok(PaceModel {
        name: r.name,
        factors,
        ranges,
        held,
        application,
        template,
        subtask,
        hardware: Hardware {
            cores: h.cores,
            speed: h.speed,
            fork_join_s: h.fork_join_s,
            handoff_s: h.handoff_s,
            switch_s: h.switch_s,
            handoff_shared_s: h.handoff_shared_s,
            load: h.load,
            compute_shared: h.compute_shared,
            wait_cpu: h.wait_cpu,
            machine: h.machine,
            network,
            sharing,
            carrier,
            slice_s,
            core_switch_s: h.core_switch_s,
            waits,
            rendezvous_bytes: h.rendezvous_bytes,
        },
        error,
        notes: r.notes,
    })
}

/// A TOML string.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A number as TOML writes it (shortest form that reads back the same).
fn number(x: f64) -> String {
    toml::Value::Float(x).to_string()
}

/// The file's text; [`parse`] of it gives the same model.
pub fn write(model: &PaceModel) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# lca PACE model (docs/pace.md): application, parallel template, subtask and hardware.\n\
         # Read by `lca pace predict`, `lca predict`, `lca validate`, `lca crossover`."
    );
    let _ = writeln!(
        out,
        "format = 1\nkind = \"{KIND}\"\nname = {}",
        quoted(&model.name)
    );
    let list = |v: &[String]| v.iter().map(|s| quoted(s)).collect::<Vec<_>>().join(", ");
    let _ = writeln!(out, "factors = [{}]", list(&model.factors));
    if !model.notes.is_empty() {
        let _ = writeln!(out, "notes = [");
        for n in &model.notes {
            let _ = writeln!(out, "    {},", quoted(n));
        }
        let _ = writeln!(out, "]");
    }
    let ranged: Vec<_> = model
        .factors
        .iter()
        .zip(&model.ranges)
        .filter(|(_, (lo, hi))| lo.is_finite() && hi.is_finite())
        .collect();
    if !ranged.is_empty() {
        let _ = writeln!(out, "\n[range]");
        for (f, (lo, hi)) in ranged {
            let _ = writeln!(out, "{} = [{}, {}]", key(f), number(*lo), number(*hi));
        }
    }
    if !model.held.is_empty() {
        let _ = writeln!(out, "\n[held]");
        for (k, v) in &model.held {
            let _ = writeln!(out, "{} = {}", key(k), number(*v));
        }
    }
    let a = &model.application;
    let _ = writeln!(
        out,
        "\n[application]\niterations = {}\nstartup_s = {}\nteardown_s = {}\nreplayed = {}",
        quoted(&a.iterations),
        number(a.startup_s),
        number(a.teardown_s),
        a.replayed
    );
    for s in &model.template {
        let _ = writeln!(out, "\n[[template]]\nregion = {}", quoted(&s.region));
        match s.members {
            Members::All => {
                let _ = writeln!(out, "threads = \"all\"");
            }
            Members::Group {
                group,
                groups,
                smaller_first,
            } => {
                let smaller = if smaller_first { "first" } else { "last" };
                let _ = writeln!(
                    out,
                    "threads = \"group\"\ngroup = {group}\ngroups = {groups}\nsmaller = \"{smaller}\""
                );
            }
        }
        let activity = match s.activity {
            Activity::Work => "work",
            Activity::Comm => "comm",
            Activity::Wait => "wait",
        };
        let _ = writeln!(out, "activity = \"{activity}\"");
        match &s.split {
            Split::Equal => {
                let _ = writeln!(out, "split = \"equal\"");
            }
            Split::Chunks { units } => {
                let _ = writeln!(out, "split = \"chunks\"\nunits = {}", quoted(units));
            }
        }
        if let Some(h) = &s.waits_for {
            let _ = writeln!(out, "after = {}\nlag = {}", quoted(&h.after), h.lag);
        }
        if let Some(m) = &s.messages {
            let powers: Vec<String> = m
                .powers
                .iter()
                .map(|(k, v)| format!("{} = {}", key(k), number(*v)))
                .collect();
            let _ = writeln!(
                out,
                "messages = {}\nbytes = {}\nbytes_powers = {{ {} }}",
                quoted(m.pattern.name()),
                number(m.bytes),
                powers.join(", ")
            );
        }
    }
    let h = &model.hardware;
    let _ = writeln!(
        out,
        "\n[hardware]\ncores = {}\nspeed = {}\nfork_join_s = {}\nhandoff_s = {}\n\
         switch_s = {}\nhandoff_shared_s = {}\nload = {}\ncompute_shared = {}\nwait_cpu = {}",
        h.cores,
        number(h.speed),
        number(h.fork_join_s),
        number(h.handoff_s),
        number(h.switch_s),
        number(h.handoff_shared_s),
        number(h.load),
        number(h.compute_shared),
        number(h.wait_cpu)
    );
    let sharing = match h.sharing {
        CoreSharing::Processor => "processor",
        CoreSharing::RunToBlock => "run-to-block",
    };
    let _ = writeln!(
        out,
        "sharing = \"{sharing}\"\nslice_s = {}",
        number(h.slice_s)
    );
    if let Some(c) = h.core_switch_s {
        let _ = writeln!(out, "core_switch_s = {}", number(c));
    }
    if h.waits == pp::whatif::Waits::Spin {
        let _ = writeln!(out, "waits = \"spin\"");
    }
    if let Some(b) = h.rendezvous_bytes {
        let _ = writeln!(out, "rendezvous_bytes = {b}");
    }
    if h.carrier != Carrier::Network {
        let _ = writeln!(out, "messages = \"{}\"", h.carrier.name());
    }
    if let Some(m) = &h.machine {
        let _ = writeln!(out, "machine = {}", quoted(m));
    }
    if let Some(n) = &h.network {
        let _ = writeln!(
            out,
            "network_alpha_s = {}\nnetwork_bytes_per_s = {}",
            number(n.alpha_s),
            number(n.bytes_per_s)
        );
    }
    if let Some(e) = &model.error {
        let _ = writeln!(
            out,
            "\n[error]\nrelative_sd = {}\nruns = {}",
            number(e.relative_sd),
            e.runs
        );
    }
    // The subtask: an lca model file, its tables moved under [subtask].
    let sub = fit::model_file::write(&model.subtask);
    let table: toml::Table = sub.parse().expect("fit writes TOML it reads");
    let mut wrapper = toml::Table::new();
    wrapper.insert("subtask".into(), toml::Value::Table(table));
    let _ = write!(
        out,
        "\n{}",
        toml::to_string(&wrapper).expect("a table serializes")
    );
    out
}

/// A bare key where TOML allows it, else quoted.
fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        quoted(k)
    }
}
