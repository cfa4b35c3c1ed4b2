//! `lca pace build`: a PACE model from a study folder's logs (docs/pace.md#building). Every log
//! of the implementation is profiled by region (the subtask's data) and read for its structure
//! ([`super::detect`]); the template is what all of them agree on, and what had to be assumed
//! is written into the model's `notes`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use fit::observations::Cell;
use fit::performance::{BuildOptions, PerformanceModel};
use fit::{Condition, Datafile};
use pp::log::LogReader;

use super::detect::{LogSeen, detect};
use super::model::{
    Activity, Application, Carrier, CoreSharing, DEFAULT_SLICE_S, Error, Handoff, Hardware,
    Members, PaceModel, Split, Step,
};
use super::spin::{Spin, spin};

/// What `lca pace build` is asked.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    /// The study folder (its `logs/`).
    pub study: PathBuf,
    /// The implementation (the logs' `impl=`).
    pub implementation: String,
    /// Conditions on the logs' parameters (`p<=4`, `role=model`).
    pub conditions: Vec<Condition>,
    /// The cores of the hardware layer.
    pub cores: u32,
    /// Iterations replayed at each point.
    pub replayed: u32,
    /// What a busy core spends going from one thread to the next queued one, seconds
    /// ([`Hardware::core_switch_s`]; `lca pace build` measures it): `None` takes the fitted
    /// `switch_s` for it.
    pub core_switch_s: Option<f64>,
}

/// One log used: its name, parameters, wall and per-region busy times.
struct Measured {
    name: String,
    values: BTreeMap<String, f64>,
    wall_s: f64,
    /// The share of a core the threads had while they computed, from the `cpu` samples around
    /// their busy stretches ([`super::spin`]); `None` without such stretches.
    share: Option<f64>,
    /// Region → (pc, cl) seconds.
    regions: BTreeMap<String, (f64, f64)>,
    seen: LogSeen,
    /// Its threads' waiting stretches and the CPU time they consumed in them.
    spin: Spin,
}

/// Builds the model.
pub fn build(request: &BuildRequest) -> Result<PaceModel> {
    let logs_dir = request.study.join("logs");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&logs_dir)
        .with_context(|| format!("{}: not a study folder (no logs/)", request.study.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.ends_with(".log") && !n.ends_with(".predicted.log")
        })
        .collect();
    names.sort();
    let rows = study_rows(&request.study);
    let mut runs = Vec::new();
    for path in &names {
        if let Some(m) = measure(path, request, &rows)? {
            runs.push(m);
        }
    }
    if runs.len() < 2 {
        bail!(
            "{}: {} log(s) of impl={} match{}: a model needs at least 2",
            logs_dir.display(),
            runs.len(),
            request.implementation,
            if request.conditions.is_empty() {
                String::new()
            } else {
                format!(
                    " the conditions ({})",
                    request
                        .conditions
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
    }
    let (factors, held) = factors_of(&runs);
    let mut notes = Vec::new();
    let mpi = runs.iter().any(|r| !r.seen.exchanges.is_empty());
    let (template, application, network) = if mpi {
        let seen: Vec<super::mpi::Seen<'_>> = runs
            .iter()
            .map(|r| super::mpi::Seen {
                name: &r.name,
                seen: &r.seen,
                values: &r.values,
            })
            .collect();
        let m = super::mpi::derive(
            &seen,
            &factors,
            &held,
            request.replayed,
            request.cores,
            &mut notes,
        )?;
        // The computing steps' data: their shares of the tracer's region.
        for (r, shares) in runs.iter_mut().zip(&m.shares) {
            for (step, (region, share)) in shares {
                let (pc, cl) = r.regions.get(region).copied().unwrap_or((0.0, 0.0));
                r.regions.insert(step.clone(), (pc * share, cl * share));
            }
        }
        (m.template, m.application, m.network)
    } else {
        refuse_collectives(&runs)?;
        let template = template(&runs, &factors, &held, &mut notes)?;
        let application = application(&runs, &factors, &held, request.replayed, &template)?;
        (template, application, None)
    };
    let subtask = subtask(&runs, &factors, &template, request, &mut notes)?;
    let ranges = factors
        .iter()
        .map(|f| {
            runs.iter()
                .map(|r| r.values[f])
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                })
        })
        .collect();
    // Ranks neither fork nor hand off: their waits are the messages'.
    let (fork_join, handoff) = if mpi {
        ((0.0, 0.0), (0.0, 0.0))
    } else {
        (
            fork_join(&runs, &template, request.cores, &mut notes),
            latency(&runs, request.cores, &mut notes, "handoff", |s| {
                &s.handoff_ns
            }),
        )
    };
    let mut model = PaceModel {
        name: request.implementation.clone(),
        factors,
        ranges,
        held,
        application,
        template,
        subtask,
        hardware: Hardware {
            cores: request.cores,
            speed: 1.0,
            fork_join_s: fork_join.0,
            handoff_s: handoff.0,
            switch_s: fork_join.1,
            handoff_shared_s: handoff.1,
            load: 0.0,
            compute_shared: 0.0,
            wait_cpu: wait_cpu(&runs, &mut notes),
            machine: None,
            network,
            sharing: CoreSharing::Processor,
            carrier: Carrier::Network,
            slice_s: DEFAULT_SLICE_S,
            core_switch_s: request.core_switch_s,
            waits: pp::whatif::Waits::Block,
            rendezvous_bytes: None,
        },
        error: None,
        notes: Vec::new(),
    };
    if !mpi {
        fork_join_by_runs(&mut model, &runs, &mut notes)?;
    }
    if let Some(c) = request.core_switch_s {
        notes.push(format!(
            "hardware.core_switch_s: {:.2} µs, a busy core's switch from one thread to the next (measured: two threads on one CPU); run to block takes it where a core goes from a thread to the next queued one, and switch_s where it starts a thread woken onto it idle",
            c * 1e6
        ));
    }
    if !mpi {
        model.hardware.load = load(&model, &runs, &mut notes)?;
        let (mut model, shared) = fit_sharing(model, &runs, notes)?;
        model.notes = shared;
        return Ok(model);
    }
    // What carries an MPI program's messages: each carrier with its own fit, the one closer to
    // the training runs kept, the processors on a tie (docs/pace.md#how-the-template-is-derived).
    // Runs that cannot tell them apart (a core per rank, one message an exchange to each) leave
    // the processors, as on one node, without a second fit.
    let apart = runs.iter().any(|r| {
        let p = r.seen.p;
        p > model.hardware.cores
            || model
                .template
                .iter()
                .filter_map(|s| s.messages.as_ref())
                .any(|m| (0..p).any(|t| m.pattern.from(t, p).len() > 1))
    });
    if !apart {
        model.hardware.carrier = Carrier::Processors;
        model.hardware.load = load(&model, &runs, &mut notes)?;
        let (mut model, mut shared) = fit_sharing(model, &runs, notes)?;
        shared.push(
            "hardware.messages: no training run had more ranks than cores or a rank receiving more than one message in an exchange, so the runs cannot tell a copy by the receiver's processor from a message in flight: processors kept (on one node the processors copy every message)"
                .into(),
        );
        model.notes = shared;
        return Ok(model);
    }
    let mut copied = model.clone();
    let mut copied_notes = notes.clone();
    model.hardware.load = load(&model, &runs, &mut notes)?;
    let (flight, flight_notes) = fit_sharing(model, &runs, notes)?;
    copied.hardware.carrier = Carrier::Processors;
    copied.hardware.load = load(&copied, &runs, &mut copied_notes)?;
    let (copied, copied_notes) = fit_sharing(copied, &runs, copied_notes)?;
    let sd = |m: &PaceModel| m.error.map_or(f64::INFINITY, |e| e.relative_sd);
    let (a, b) = (sd(&copied), sd(&flight));
    let (mut model, mut shared) = if b < a {
        (flight, flight_notes)
    } else {
        (copied, copied_notes)
    };
    shared.push(format!(
        "hardware.messages: each message copied by its receiver's processor fits the training runs' T_p to {:.1}% (RMS of ln), in flight on the network while the processors are free to {:.1}%: {} kept",
        100.0 * a,
        100.0 * b,
        model.hardware.carrier.name()
    ));
    model.notes = shared;
    Ok(model)
}

/// `compute_shared` fitted for each sharing of a core past the cores; the one closer to the
/// training runs is kept (docs/pace.md#how-the-template-is-derived), with its notes.
fn fit_sharing(
    mut model: PaceModel,
    runs: &[Measured],
    notes: Vec<String>,
) -> Result<(PaceModel, Vec<String>)> {
    let mut shared = notes.clone();
    model.hardware.compute_shared = compute_shared(&model, runs, &mut shared)?;
    model.error = Some(error(&model, runs)?);
    if runs.iter().any(|r| r.seen.p > model.hardware.cores) {
        let mut other = model.clone();
        other.hardware.sharing = CoreSharing::RunToBlock;
        let mut blocked = notes;
        other.hardware.compute_shared = compute_shared(&other, runs, &mut blocked)?;
        other.error = Some(error(&other, runs)?);
        let sd = |m: &PaceModel| m.error.map_or(f64::INFINITY, |e| e.relative_sd);
        let (a, b) = (sd(&model), sd(&other));
        if b < a {
            (model, shared) = (other, blocked);
        }
        shared.push(format!(
            "hardware.sharing: run to block fits the training runs' T_p to {:.1}% (RMS of ln), processor sharing to {:.1}%: {} kept",
            100.0 * b,
            100.0 * a,
            if b < a { "run to block" } else { "processor sharing" }
        ));
    }
    Ok((model, shared))
}

/// The log at `path` if it is of the implementation and meets the conditions.
fn measure(
    path: &Path,
    request: &BuildRequest,
    rows: &[BTreeMap<String, String>],
) -> Result<Option<Measured>> {
    let name = path.display().to_string();
    let reader = LogReader::open(path).with_context(|| name.clone())?;
    let header = reader.header().clone();
    let mut text: BTreeMap<String, String> = header.params.iter().cloned().collect();
    // A log whose header lacks the run's parameters (`pp run`'s, under `lca study`): the
    // study's datafile row of the same stem gives them.
    if !text.contains_key("impl")
        && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        && let Some(row) = row_of(stem, rows)
    {
        for (k, v) in row {
            text.entry(k).or_insert(v);
        }
    }
    if text.get("impl") != Some(&request.implementation) {
        return Ok(None);
    }
    text.insert("p".into(), header.p.to_string());
    // The study's file names say the run's role: <impl>-<role>-...
    if let Some(role) = path
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.strip_prefix(&format!("{}-", request.implementation)))
        .and_then(|s| s.split('-').next())
    {
        text.entry("role".into())
            .or_insert_with(|| role.to_string());
    }
    for c in &request.conditions {
        let cell = match text.get(&c.key) {
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() => Cell::Number(x),
                _ => Cell::Text(v),
            },
            None => return Ok(None),
        };
        if !c.holds(cell) {
            return Ok(None);
        }
    }
    let values: BTreeMap<String, f64> = text
        .iter()
        .filter_map(|(k, v)| {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(|x| (k.clone(), x))
        })
        .collect();
    let mut r = reader;
    let profile = pp::profile::profile_log(&mut r, None, None);
    if let Some(damage) = profile.damage {
        bail!("{name}: {damage}");
    }
    let profile = profile
        .profile
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let regions = profile
        .by_region
        .iter()
        .map(|(k, t)| {
            let s = |c| t.get(c) as f64 * 1e-9;
            (
                k.clone(),
                (s(pp::profile::Category::Pc), s(pp::profile::Category::Cl)),
            )
        })
        .collect();
    let seen = detect(LogReader::open(path).with_context(|| name.clone())?)
        .with_context(|| name.clone())?;
    let spin =
        spin(LogReader::open(path).with_context(|| name.clone())?).with_context(|| name.clone())?;
    Ok(Some(Measured {
        name,
        values,
        share: spin.busy_share(),
        wall_s: profile.wall_ns() as f64 * 1e-9,
        regions,
        seen,
        spin,
    }))
}

/// Logs whose ranks communicate only by collectives (an `MPI_Alltoall` transpose) and run
/// no loop of regions: refused in one line, since a template of messages takes point-to-point
/// messages (docs/pace.md#mpi-programs-messages).
fn refuse_collectives(runs: &[Measured]) -> Result<()> {
    for r in runs {
        let looped = r.seen.regions.values().any(|s| s.instances > 1);
        if let Some((op, count)) = r.seen.collectives.iter().max_by_key(|(_, c)| **c)
            && !looped
        {
            bail!(
                "{}: its ranks communicate by collectives ({count} {op}) and exchange no point-to-point message: a PACE template models send/recv messages (fft2d: --transpose p2p), not collectives",
                r.name
            );
        }
    }
    Ok(())
}

/// The rows of the study folder's datafiles (`*.dat`), each as its `key=value` fields;
/// unreadable files and lines give none.
fn study_rows(study: &Path) -> Vec<BTreeMap<String, String>> {
    let Ok(entries) = std::fs::read_dir(study) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dat") && p.is_file())
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .map(|l| l.split('#').next().unwrap_or(""))
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    l.split_whitespace()
                        .filter_map(|f| f.split_once('='))
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect::<BTreeMap<_, _>>()
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The run parameters (`impl`, `role`, `replicate` and the factors) of the datafile row whose
/// `lca study` file stem is `stem`: `<impl>-<role>-<factor><value>...-r<replicate>`, each
/// factor a field of the row with that value.
fn row_of(stem: &str, rows: &[BTreeMap<String, String>]) -> Option<BTreeMap<String, String>> {
    rows.iter().find_map(|row| {
        let (imp, role, rep) = (row.get("impl")?, row.get("role")?, row.get("replicate")?);
        let middle = stem
            .strip_prefix(&format!("{imp}-{role}-"))?
            .strip_suffix(&format!("-r{rep}"))?;
        let mut out: BTreeMap<String, String> = [("impl", imp), ("role", role), ("replicate", rep)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        for token in middle.split('-') {
            let (k, v) = row.iter().find(|(k, v)| {
                !["impl", "role", "replicate"].contains(&k.as_str())
                    && token.strip_prefix(k.as_str()).is_some_and(|rest| {
                        matches!((rest.parse::<f64>(), v.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
                    })
            })?;
            out.insert(k.clone(), v.clone());
        }
        Some(out)
    })
}

/// The numeric parameters that vary (factors, `p` last) and those that do not (held).
fn factors_of(runs: &[Measured]) -> (Vec<String>, BTreeMap<String, f64>) {
    let keys: Vec<String> = runs[0].values.keys().cloned().collect();
    let mut factors = Vec::new();
    let mut held = BTreeMap::new();
    for k in keys {
        if ["replicate", "run"].contains(&k.as_str()) {
            continue;
        }
        let vals: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.values.get(&k).copied())
            .collect();
        if vals.len() != runs.len() {
            continue;
        }
        if vals.iter().all(|v| *v == vals[0]) {
            held.insert(k, vals[0]);
        } else if k != "p" {
            factors.push(k);
        }
    }
    if !held.contains_key("p") {
        factors.push("p".into());
    }
    (factors, held)
}

/// The template all the logs agree on.
fn template(
    runs: &[Measured],
    factors: &[String],
    held: &BTreeMap<String, f64>,
    notes: &mut Vec<String>,
) -> Result<Vec<Step>> {
    // The loop: regions that ran as often as the most frequent one, in every log.
    let loops: Vec<u64> = runs
        .iter()
        .map(|r| {
            r.seen
                .regions
                .values()
                .map(|s| s.instances)
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut names: Vec<String> = runs[0].seen.regions.keys().cloned().collect();
    names.retain(|n| {
        runs.iter()
            .zip(&loops)
            .all(|(r, &l)| r.seen.regions.get(n).is_some_and(|s| s.instances == l))
    });
    for n in runs[0].seen.regions.keys().filter(|n| !names.contains(n)) {
        notes.push(format!(
            "region '{n}' does not run once per iteration of the loop in every log: left out of the template (its time is not predicted)"
        ));
    }
    if names.is_empty() {
        bail!("no region runs once per iteration of a loop in every log: no template to derive");
    }
    // Members.
    let mut members: BTreeMap<String, Members> = BTreeMap::new();
    let mut smaller: Option<bool> = None;
    for n in &names {
        let mut all = true;
        let mut group: Option<(u32, u32)> = None;
        for r in runs {
            let s = &r.seen.regions[n];
            let everyone: Vec<u32> = (0..r.seen.p).collect();
            if s.teams.keys().all(|t| *t == everyone) {
                continue;
            }
            all = false;
            let blocks = partition(&r.seen, &names)
                .ok_or_else(|| anyhow::anyhow!("{}: the teams of the loop's regions are not consecutive blocks of threads that cover them all: no template of groups fits", r.name))?;
            let team = s.teams.keys().next().expect("a region has a team");
            if s.teams.len() > 1 {
                bail!(
                    "{}: region '{n}' runs with {} different teams",
                    r.name,
                    s.teams.len()
                );
            }
            let g = blocks
                .iter()
                .position(|b| b == team)
                .expect("a team is a block") as u32;
            let k = blocks.len() as u32;
            if group.is_some_and(|x| x != (g, k)) {
                bail!(
                    "{}: region '{n}' is group {g} of {k} here, not as in the other logs",
                    r.name
                );
            }
            group = Some((g, k));
            let (first, last) = (blocks[0].len(), blocks[blocks.len() - 1].len());
            if first != last {
                let s = first < last;
                if smaller.is_some_and(|x| x != s) {
                    bail!(
                        "{}: the smaller groups come first in some logs, last in others",
                        r.name
                    );
                }
                smaller = Some(s);
            }
        }
        let m = match (all, group) {
            (true, _) | (false, None) => Members::All,
            (false, Some((group, groups))) => Members::Group {
                group,
                groups,
                smaller_first: true,
            },
        };
        members.insert(n.clone(), m);
    }
    if members.values().any(|m| matches!(m, Members::Group { .. })) {
        let groups = members
            .values()
            .find_map(|m| match m {
                Members::Group { groups, .. } => Some(*groups),
                _ => None,
            })
            .unwrap_or(1);
        let first = smaller.unwrap_or_else(|| {
            notes.push(format!(
                "threads split into {groups} groups; no log had groups of different sizes, so the smaller groups are assumed to come first"
            ));
            true
        });
        notes.push(format!(
            "threads split into {groups} groups of consecutive threads, of floor(p/{groups}) and ceil(p/{groups}), the smaller {} (seen in the logs' teams)",
            if first { "first" } else { "last" }
        ));
        for m in members.values_mut() {
            if let Members::Group { smaller_first, .. } = m {
                *smaller_first = first;
            }
        }
    }
    // Activity.
    let activity = |n: &str| {
        let (work, comm) = runs.iter().fold((0, 0), |(w, c), r| {
            let s = &r.seen.regions[n];
            (w + s.work, c + s.comm)
        });
        if comm > 0 {
            Activity::Comm
        } else if work > 0 {
            Activity::Work
        } else {
            Activity::Wait
        }
    };
    // Splits: copies in chunks of a unit (the gcd of the sizes at the same other factors).
    let mut splits: BTreeMap<String, Split> = BTreeMap::new();
    for n in names.iter().filter(|n| activity(n) == Activity::Comm) {
        match units(runs, n, factors, held) {
            Some(u) => {
                splits.insert(n.clone(), Split::Chunks { units: u });
            }
            None => {
                notes.push(format!("region '{n}': its copies do not show whole units dealt to the members: split equally"));
            }
        }
    }
    let copies = splits.clone();
    for n in names.iter().filter(|n| activity(n) == Activity::Work) {
        let twin = copies
            .iter()
            .find(|(o, s)| members[*o] == members[n] && matches!(s, Split::Chunks { .. }))
            .map(|(o, s)| (o.clone(), s.clone()));
        if let Some((o, s)) = twin {
            notes.push(format!(
                "region '{n}' is assumed split in the same chunks as '{o}' (the same threads; its computation shows no sizes)"
            ));
            splits.insert(n.clone(), s);
        }
    }
    // Hand-offs: the most frequent releasing region, at a lag of 0 or more.
    let mut handoffs: BTreeMap<String, Handoff> = BTreeMap::new();
    for n in &names {
        let mut votes: BTreeMap<(String, i64), u64> = BTreeMap::new();
        for r in runs {
            for ((from, lag), c) in &r.seen.regions[n].released_by {
                if *lag >= 0 && names.contains(from) {
                    *votes.entry((from.clone(), *lag)).or_default() += c;
                }
            }
        }
        if let Some(((from, lag), _)) = votes
            .into_iter()
            .max_by_key(|(k, c)| (*c, std::cmp::Reverse(k.1)))
        {
            handoffs.insert(
                n.clone(),
                Handoff {
                    after: from,
                    lag: lag as u32,
                },
            );
        }
    }
    // Order: the first-appearance order of the log with the most threads, each step after
    // its same-iteration releaser.
    let widest = runs.iter().max_by_key(|r| r.seen.p).expect("runs");
    let mut pending: Vec<String> = names.clone();
    pending.sort_by_key(|n| widest.seen.regions[n].first);
    let mut order: Vec<String> = Vec::new();
    while !pending.is_empty() {
        let pick = pending
            .iter()
            .position(|n| match handoffs.get(n) {
                Some(h) if h.lag == 0 => order.contains(&h.after),
                _ => true,
            })
            .unwrap_or(0);
        let n = pending.remove(pick);
        if let Some(h) = handoffs.get(&n)
            && h.lag == 0
            && !order.contains(&h.after)
        {
            notes.push(format!(
                "region '{n}' waits for '{}' in the same iteration, which comes after it: the wait is left out",
                h.after
            ));
            handoffs.remove(&n);
        }
        order.push(n);
    }
    Ok(order
        .into_iter()
        .map(|n| Step {
            members: members[&n],
            activity: activity(&n),
            split: splits.get(&n).cloned().unwrap_or(Split::Equal),
            waits_for: handoffs.get(&n).cloned(),
            messages: None,
            region: n,
        })
        .collect())
}

/// The blocks of threads the loop's regions' teams form, in thread order, when they are
/// consecutive and cover every thread once.
fn partition(seen: &LogSeen, names: &[String]) -> Option<Vec<Vec<u32>>> {
    let everyone: Vec<u32> = (0..seen.p).collect();
    let mut blocks: Vec<Vec<u32>> = names
        .iter()
        .flat_map(|n| seen.regions[n].teams.keys().cloned())
        .filter(|t| *t != everyone)
        .collect();
    blocks.sort();
    blocks.dedup();
    let mut next = 0;
    for b in &blocks {
        if b.first() != Some(&next) || b.windows(2).any(|w| w[1] != w[0] + 1) {
            return None;
        }
        next = b[b.len() - 1] + 1;
    }
    (next == seen.p).then_some(blocks)
}

/// The units a region's copies deal out, as a factor's or held column's name or a number.
///
/// The finest split the sizes allow comes first: a factor or held column `V` whose value in
/// every log divides each instance's bytes into `V` equal units of which every member moved a
/// whole number (`n` rows). With few members the sizes cannot tell `n` rows from two halves
/// (1 or 2 members at p <= 4 move `n` or `n/2` rows, multiples of `n/2`), and taking the
/// coarser split gave 3 members at p = 5 one half each and one nothing. Without such a name,
/// the greatest common divisor of the members' sizes is the unit, and the count of units is
/// matched with a name or written as a number.
fn units(
    runs: &[Measured],
    region: &str,
    factors: &[String],
    held: &BTreeMap<String, f64>,
) -> Option<String> {
    if let Some(name) = finest_units(runs, region, factors, held) {
        return Some(name);
    }
    let others: Vec<&String> = factors.iter().filter(|f| *f != "p").collect();
    let key =
        |r: &Measured| -> Vec<u64> { others.iter().map(|f| r.values[*f].to_bits()).collect() };
    // The unit: the gcd of every member's bytes over the logs at the same other factors.
    let mut unit: BTreeMap<Vec<u64>, u64> = BTreeMap::new();
    for r in runs {
        let g = r.seen.regions[region]
            .bytes
            .iter()
            .flat_map(|b| b.values().copied())
            .filter(|b| *b > 0)
            .fold(0, gcd);
        let e = unit.entry(key(r)).or_default();
        *e = gcd(*e, g);
    }
    let mut counts = Vec::new();
    for r in runs {
        let u = unit[&key(r)];
        if u == 0 {
            return None;
        }
        let mut per: Vec<u64> = r.seen.regions[region]
            .bytes
            .iter()
            .map(|b| b.values().sum::<u64>() / u)
            .collect();
        per.sort_unstable();
        counts.push(*per.get(per.len() / 2)? as f64);
    }
    let candidates = factors
        .iter()
        .filter(|f| *f != "p")
        .map(|f| {
            (
                f.clone(),
                runs.iter().map(|r| r.values[f]).collect::<Vec<_>>(),
            )
        })
        .chain(held.iter().map(|(k, v)| (k.clone(), vec![*v; runs.len()])));
    for (name, values) in candidates {
        if values.iter().zip(&counts).all(|(v, c)| v == c) {
            return Some(name);
        }
    }
    counts
        .iter()
        .all(|c| *c == counts[0])
        .then(|| counts[0].to_string())
}

/// The factor or held column (not `p`) with the most units that every instance of the region,
/// in every log, splits into whole units among its members ([`units`]).
fn finest_units(
    runs: &[Measured],
    region: &str,
    factors: &[String],
    held: &BTreeMap<String, f64>,
) -> Option<String> {
    let names = factors
        .iter()
        .filter(|f| *f != "p")
        .cloned()
        .chain(held.keys().filter(|k| *k != "p").cloned());
    let mut best: Option<(String, f64)> = None;
    for name in names {
        let mut fits = true;
        let mut least = f64::INFINITY;
        for r in runs {
            let Some(&v) = r.values.get(&name).or_else(|| held.get(&name)) else {
                fits = false;
                break;
            };
            if !(v >= 2.0 && v.fract() == 0.0 && v < 1e12) {
                fits = false;
                break;
            }
            least = least.min(v);
            let count = v as u64;
            let instances = &r.seen.regions[region].bytes;
            fits &= !instances.is_empty()
                && instances.iter().all(|members| {
                    let total: u64 = members.values().sum();
                    total > 0
                        && total.is_multiple_of(count)
                        && members.values().all(|b| b.is_multiple_of(total / count))
                });
            if !fits {
                break;
            }
        }
        if fits && best.as_ref().is_none_or(|(_, l)| least > *l) {
            best = Some((name, least));
        }
    }
    best.map(|(name, _)| name)
}

/// `hardware.fork_join_s` and `hardware.switch_s`, seconds
/// (docs/pace.md#how-the-template-is-derived). The fork and join is the median over the logs
/// with a core per thread of each log's median time in a region when none of its members
/// computed or copied. The switch is what that time grows by per round after the first on the
/// busiest core ([`super::model::Members::rounds`]) in the logs with more threads than cores:
/// least squares through the origin of each loop region's median there, less the fork and
/// join, on its rounds less one.
fn fork_join(
    runs: &[Measured],
    template: &[Step],
    cores: u32,
    notes: &mut Vec<String>,
) -> (f64, f64) {
    let base = median(fork_join_medians(runs, cores)).unwrap_or_else(|| {
        notes.push(
            "hardware.fork_join_s: no log had a core per thread; taken as 0, all of it in switch_s"
                .into(),
        );
        0.0
    });
    (base, switch(runs, template, cores, base, notes))
}

/// Each log's median time in a region when none of its members computed or copied, over the
/// logs with a core per thread: the candidates for `hardware.fork_join_s`, seconds.
fn fork_join_medians(runs: &[Measured], cores: u32) -> Vec<f64> {
    let seconds = |v: &[u64]| v.iter().map(|&x| x as f64 * 1e-9).collect::<Vec<f64>>();
    runs.iter()
        .filter(|r| r.seen.p <= cores)
        .filter_map(|r| {
            let all: Vec<u64> = r
                .seen
                .regions
                .values()
                .flat_map(|s| s.fork_join_ns.iter().copied())
                .collect();
            median(seconds(&all))
        })
        .collect()
}

/// `hardware.switch_s` over a fork and join of `base` seconds ([`fork_join`]).
fn switch(
    runs: &[Measured],
    template: &[Step],
    cores: u32,
    base: f64,
    notes: &mut Vec<String>,
) -> f64 {
    let seconds = |v: &[u64]| v.iter().map(|&x| x as f64 * 1e-9).collect::<Vec<f64>>();
    let (mut xy, mut xx) = (0.0, 0.0);
    for r in runs.iter().filter(|r| r.seen.p > cores) {
        for step in template {
            let Some(m) = r
                .seen
                .regions
                .get(&step.region)
                .and_then(|s| median(seconds(&s.fork_join_ns)))
            else {
                continue;
            };
            let x = f64::from(step.members.rounds(r.seen.p, cores) - 1);
            xy += x * (m - base);
            xx += x * x;
        }
    }
    if xx == 0.0 {
        notes.push(format!(
            "hardware.switch_s: no log had a region with more members than its share of the {cores} cores; taken as 0"
        ));
    }
    if xx > 0.0 { (xy / xx).max(0.0) } else { 0.0 }
}

/// A latency of the hardware, seconds: the median over the logs with a core per thread of
/// each log's median (a typical instance: a rare long wait for a core, when other programs
/// ran, is not the program's); and what it grows by per unit of
/// [`super::model::sharing`] (`(p - cores) / cores`, at most 1) in the logs with more threads than cores (least squares through the
/// origin of their medians less the first figure), 0 without such logs.
fn latency(
    runs: &[Measured],
    cores: u32,
    notes: &mut Vec<String>,
    what: &str,
    of: impl Fn(&LogSeen) -> &Vec<u64>,
) -> (f64, f64) {
    let medians: Vec<(u32, f64)> = runs
        .iter()
        .filter_map(|r| {
            median(of(&r.seen).iter().map(|&x| x as f64 * 1e-9).collect()).map(|m| (r.seen.p, m))
        })
        .collect();
    let alone: Vec<f64> = medians
        .iter()
        .filter(|(p, _)| *p <= cores)
        .map(|m| m.1)
        .collect();
    let base = match median(alone) {
        Some(b) => b,
        None => {
            if !medians.is_empty() {
                notes.push(format!(
                    "hardware.{what}_s: no log had a core per thread; taken as 0, all of it in {what}_shared_s"
                ));
            }
            0.0
        }
    };
    let (mut xy, mut xx) = (0.0, 0.0);
    for &(p, m) in medians.iter().filter(|(p, _)| *p > cores) {
        let x = super::model::sharing(p, cores);
        xy += x * (m - base);
        xx += x * x;
    }
    let shared = if xx > 0.0 { (xy / xx).max(0.0) } else { 0.0 };
    (base, shared)
}

/// The share of a core the threads used while they waited, over all the runs' waiting
/// stretches (docs/pace.md#how-the-template-is-derived); the replay takes waits as blocking, which
/// past the cores underestimates `T_p` when they spin.
fn wait_cpu(runs: &[Measured], notes: &mut Vec<String>) -> f64 {
    let (waiting, cpu) = runs.iter().fold((0u64, 0u64), |(w, c), r| {
        (w + r.spin.waiting_ns, c + r.spin.cpu_ns)
    });
    let share = Spin {
        waiting_ns: waiting,
        cpu_ns: cpu,
        ..Spin::default()
    }
    .share()
    .unwrap_or(0.0)
    .clamp(0.0, 1.0);
    if share > 0.5 {
        notes.push(format!(
            "hardware.wait_cpu: the threads used {:.0}% of a core while they waited: their waits spin, and the replay takes them as blocking, so T_p past the cores is underestimated",
            100.0 * share
        ));
    }
    share
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The loop's count as the application layer writes it, from each log's count (`counts`) and
/// parameters (`values`): the factor or held column equal to the count in every log, else the
/// count itself where every log has the same one; `None` where neither.
pub(super) fn loop_count(
    values: &[&BTreeMap<String, f64>],
    factors: &[String],
    held: &BTreeMap<String, f64>,
    counts: &[f64],
) -> Option<String> {
    factors
        .iter()
        .map(|f| (f.clone(), values.iter().map(|v| v[f]).collect::<Vec<_>>()))
        .chain(
            held.iter()
                .map(|(k, v)| (k.clone(), vec![*v; values.len()])),
        )
        .find(|(_, v)| v.iter().zip(counts).all(|(a, b)| a == b))
        .map(|(n, _)| n)
        .or_else(|| {
            let first = counts.first()?;
            counts.iter().all(|c| c == first).then(|| first.to_string())
        })
}

/// The application layer: the loop's count, and the time around it.
fn application(
    runs: &[Measured],
    factors: &[String],
    held: &BTreeMap<String, f64>,
    replayed: u32,
    template: &[Step],
) -> Result<Application> {
    let counts: Vec<f64> = runs
        .iter()
        .map(|r| r.seen.regions[&template[0].region].instances as f64)
        .collect();
    let values: Vec<_> = runs.iter().map(|r| &r.values).collect();
    let Some(iterations) = loop_count(&values, factors, held, &counts) else {
        bail!(
            "the loop runs a different number of times in different logs, and no parameter says how many"
        )
    };
    let mean = |f: &dyn Fn(&Measured) -> u64| {
        runs.iter().map(|r| f(r) as f64 * 1e-9).sum::<f64>() / runs.len() as f64
    };
    Ok(Application {
        iterations,
        startup_s: mean(&|r| r.seen.startup_ns),
        teardown_s: mean(&|r| r.seen.teardown_ns),
        replayed,
    })
}

/// The subtask layer: each step's busy time fitted over the factors by `fit`.
fn subtask(
    runs: &[Measured],
    factors: &[String],
    template: &[Step],
    request: &BuildRequest,
    notes: &mut Vec<String>,
) -> Result<PerformanceModel> {
    let mut columns = Vec::new();
    for s in template {
        match s.activity {
            Activity::Work => columns.push((format!("pc.{}", s.region), s.region.clone(), 0)),
            Activity::Comm => columns.push((format!("cl.{}", s.region), s.region.clone(), 1)),
            Activity::Wait => {}
        }
    }
    if columns.is_empty() {
        bail!("no region of the loop computes or copies: nothing for the subtask to model");
    }
    let mut text = String::new();
    for r in runs {
        let mut row: Vec<String> = factors
            .iter()
            .map(|f| format!("{f}={}", r.values[f]))
            .collect();
        for (column, region, which) in &columns {
            let (pc, cl) = r.regions.get(region).copied().unwrap_or((0.0, 0.0));
            row.push(format!("{column}={}", if *which == 0 { pc } else { cl }));
        }
        text += &row.join(" ");
        text.push('\n');
    }
    let source = format!(
        "{} (impl={}, by region)",
        request.study.join("logs").display(),
        request.implementation
    );
    let data = Datafile::parse(&source, &text)?;
    let options = BuildOptions {
        name: format!("{} subtask", request.implementation),
        categories: columns.iter().map(|c| c.0.clone()).collect(),
        conditions: request.conditions.clone(),
        created_by: format!("lca pace build {}", env!("CARGO_PKG_VERSION")),
        ..BuildOptions::default()
    };
    // Without every corner of the design the allocation of variation cannot choose how the
    // factors combine: then each factor adds its own (additive), said in the notes.
    let mut model = match PerformanceModel::build(&data, &options) {
        Ok(m) => m,
        Err(first) => {
            let mut additive = options.clone();
            for c in &options.categories {
                additive.choices.insert(
                    c.clone(),
                    fit::combination::Choices {
                        shapes: BTreeMap::new(),
                        combination: Some(fit::combination::Combination::Additive),
                    },
                );
            }
            let m = PerformanceModel::build(&data, &additive).map_err(|e| {
                anyhow::anyhow!("the subtask (per-region times): {first}; additive: {e}")
            })?;
            notes.push(format!(
                "subtask: {first}; every region's time is additive over the factors instead"
            ));
            m
        }
    };
    // The extrapolation record and the baseline are about T_p, which the subtask does not
    // predict.
    model.baseline = None;
    model.calibration = None;
    Ok(model)
}

/// A hardware parameter fitted to the `T_p` of some of the runs: the value from `min` (at most
/// 0) to `max` that makes the model closest to them (the least sum of [`huber`]'s loss of `ln(measured /
/// predicted)`: squares up to 25% off, linear beyond, so that one run far off does not pull
/// it: docs/pace.md#how-the-template-is-derived),
/// searched on a grid of `max / 80` (0 first, kept on a tie), then of a tenth of that around
/// the best. `None` without such runs.
fn fit_hardware(
    model: &PaceModel,
    runs: &[&Measured],
    (min, max): (f64, f64),
    set: impl Fn(&mut Hardware, f64),
) -> Result<Option<(f64, f64)>> {
    if runs.is_empty() {
        return Ok(None);
    }
    let mut trial = model.clone();
    let mut misfit = |v: f64| -> Result<f64> {
        set(&mut trial.hardware, v);
        let mut sum = 0.0;
        for r in runs {
            let point: Vec<f64> = trial.factors.iter().map(|f| r.values[f]).collect();
            let e = trial.evaluate(&point).map_err(|e| {
                anyhow::anyhow!("{}: the model cannot evaluate its own run: {e}", r.name)
            })?;
            sum += huber((r.wall_s / e.t_p).ln());
        }
        Ok(sum)
    };
    // 0 first, so that a tie keeps it; then the grid up to `max` and down to `min`.
    let step = max / 80.0;
    let below = (-min / step).floor() as i32;
    let mut best = (0.0, misfit(0.0)?);
    for k in (1..=80).chain((1..=below).map(|k| -k)) {
        let v = f64::from(k) * step;
        let m = misfit(v)?;
        if m < best.1 {
            best = (v, m);
        }
    }
    let centre = best.0;
    for k in -10..=10 {
        let v = centre + f64::from(k) * step / 10.0;
        if k != 0 && (min..=max).contains(&v) {
            let m = misfit(v)?;
            if m < best.1 {
                best = (v, m);
            }
        }
    }
    Ok(Some(best))
}

/// `hardware.fork_join_s` (and the `switch_s` over it) chosen among the logs' own medians
/// ([`fork_join_medians`]) by the runs with a core per thread: the one that, with the `load`
/// fitted for it, makes the model closest to their `T_p` ([`fit_hardware`]'s loss). A log's
/// median is bimodal on a 2-core VM: 2–6 µs where the members' waits were short, 14–39 µs in
/// some runs of larger regions (their members slept and were woken), and the median over the
/// logs then falls on whichever mode has more logs (docs/pace.md#how-the-template-is-derived).
fn fork_join_by_runs(
    model: &mut PaceModel,
    runs: &[Measured],
    notes: &mut Vec<String>,
) -> Result<()> {
    let cores = model.hardware.cores;
    let mut candidates = fork_join_medians(runs, cores);
    candidates.sort_by(f64::total_cmp);
    candidates.dedup();
    if candidates.len() < 2 {
        return Ok(());
    }
    let alone: Vec<&Measured> = runs.iter().filter(|r| r.seen.p <= cores).collect();
    let max = MAX_LOAD_PER_CORE * f64::from(cores);
    let median = model.hardware.fork_join_s;
    let mut best: Option<(f64, f64, f64)> = None;
    for &c in &candidates {
        let mut trial = model.clone();
        trial.hardware.fork_join_s = c;
        trial.hardware.switch_s = switch(runs, &model.template, cores, c, &mut Vec::new());
        if let Some((_, misfit)) = fit_hardware(&trial, &alone, (0.0, max), |h, v| h.load = v)?
            && best.is_none_or(|b| misfit < b.2)
        {
            best = Some((c, trial.hardware.switch_s, misfit));
        }
    }
    let Some((c, sw, _)) = best else {
        return Ok(());
    };
    if c != median {
        notes.push(format!(
            "hardware.fork_join_s: the logs with a core per thread had medians of {:.1} to {:.1} µs; {:.1} µs fits their T_p best (with its load), not the median of the logs, {:.1} µs",
            candidates[0] * 1e6,
            candidates[candidates.len() - 1] * 1e6,
            c * 1e6,
            median * 1e6
        ));
    }
    model.hardware.fork_join_s = c;
    model.hardware.switch_s = sw;
    Ok(())
}

/// `hardware.load`, fitted to the runs with a core per thread (docs/pace.md#how-the-template-is-derived):
/// other programs' runnable threads, from 0 to [`MAX_LOAD_PER_CORE`] a core. Fitted, not read
/// from the logs' samples: a loaded machine took its time mostly at the wake-ups (a woken
/// thread waits on its waker's busy core while the other runs something else), which the
/// latencies' medians leave out, not while the threads computed; the note says the share of
/// a core their computation had.
fn load(model: &PaceModel, runs: &[Measured], notes: &mut Vec<String>) -> Result<f64> {
    let cores = model.hardware.cores;
    let alone: Vec<&Measured> = runs.iter().filter(|r| r.seen.p <= cores).collect();
    let max = MAX_LOAD_PER_CORE * f64::from(cores);
    let Some((load, _)) = fit_hardware(model, &alone, (0.0, max), |h, v| h.load = v)? else {
        return Ok(0.0);
    };
    if load > 0.0 {
        let shares: Vec<f64> = alone.iter().filter_map(|r| r.share).collect();
        let busy = if shares.is_empty() {
            String::new()
        } else {
            format!(
                "; their computation had {:.0}% of a core while it ran (cpu samples), so most of it was lost elsewhere (waiting for a core after a wake-up)",
                100.0 * shares.iter().sum::<f64>() / shares.len() as f64
            )
        };
        notes.push(format!(
            "hardware.load: the {} run(s) with a core per thread took as long as if {load:.2} other runnable threads had shared the {cores} cores (fitted to their T_p){busy}",
            alone.len()
        ));
    }
    Ok(load)
}

/// Huber's loss of a residual: its square within [`HUBER_DELTA`], linear beyond.
fn huber(r: f64) -> f64 {
    let d = HUBER_DELTA;
    if r.abs() <= d {
        r * r
    } else {
        d * (2.0 * r.abs() - d)
    }
}

/// Where [`huber`] turns linear: `ln(1.25)`, a run 25% off.
pub const HUBER_DELTA: f64 = 0.223_143_551_314_209_76;

/// The largest `hardware.load` the builder fits, per core.
pub const MAX_LOAD_PER_CORE: f64 = 16.0;

/// `hardware.compute_shared`: the growth of computation per unit of sharing that makes the
/// model's `T_p` closest to the runs with more threads than cores, from
/// [`MIN_COMPUTE_SHARED`] to [`MAX_COMPUTE_SHARED`] ([`fit_hardware`]); 0 without such runs.
/// Negative where the `load` fitted on the runs with a core per thread overstates the runs
/// past the cores (docs/pace.md#how-the-template-is-derived).
fn compute_shared(model: &PaceModel, runs: &[Measured], notes: &mut Vec<String>) -> Result<f64> {
    let shared: Vec<&Measured> = runs
        .iter()
        .filter(|r| r.seen.p > model.hardware.cores)
        .collect();
    let range = (MIN_COMPUTE_SHARED, MAX_COMPUTE_SHARED);
    let Some((g, _)) = fit_hardware(model, &shared, range, |h, v| h.compute_shared = v)? else {
        return Ok(0.0);
    };
    if g < 0.0 {
        notes.push(format!(
            "hardware.compute_shared: in the {} run(s) with more threads than the {} cores, computation took {:.0}% less per unit of (p - cores)/cores than the load fitted on the runs with a core per thread gives (fitted to their T_p): what that load stands for (time lost at wake-ups on idle cores) shrinks once the cores are shared",
            shared.len(),
            model.hardware.cores,
            -100.0 * g
        ));
    }
    if g > 0.0 {
        notes.push(format!(
            "hardware.compute_shared: in the {} run(s) with more threads than the {} cores, computation took {:.0}% longer per unit of (p - cores)/cores than the replay's sharing of the cores gives (fitted to their T_p)",
            shared.len(),
            model.hardware.cores,
            100.0 * g
        ));
    }
    Ok(g)
}

/// The largest `hardware.compute_shared` the builder fits: computation 5 times as long where
/// the threads share the cores.
pub const MAX_COMPUTE_SHARED: f64 = 4.0;

/// The least `hardware.compute_shared` the builder fits: computation past the cores half as
/// long as the load and the replay's sharing give (the file takes anything above -1).
pub const MIN_COMPUTE_SHARED: f64 = -0.5;

/// The model's `T_p` against each log's measured wall.
fn error(model: &PaceModel, runs: &[Measured]) -> Result<Error> {
    let mut sum = 0.0;
    for r in runs {
        let point: Vec<f64> = model.factors.iter().map(|f| r.values[f]).collect();
        let e = model.evaluate(&point).map_err(|e| {
            anyhow::anyhow!("{}: the model cannot evaluate its own run: {e}", r.name)
        })?;
        sum += (r.wall_s / e.t_p).ln().powi(2);
    }
    Ok(Error {
        relative_sd: (sum / runs.len() as f64).sqrt(),
        runs: runs.len() as u32,
    })
}
