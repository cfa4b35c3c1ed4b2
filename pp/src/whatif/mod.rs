//! `pp whatif`: a run replayed on another configuration (DESIGN §9; seed 000's LBF and NF,
//! seed 001's `α + S/β` message model) — threads regrouped onto shared processors, messages
//! over another network, computation faster or slower by region or phase — into a predicted
//! log in the input's format (docs/whatif.md).
//!
//! [`Run::read`] keeps the log and its [activity graph](crate::graph) in memory (about 100
//! bytes an event), [`replay`] simulates the target in predicted time order (a heap of
//! pending events, so `O(n log p)` for `n` events, times the group size where processors are
//! shared), [`write::thread_events`] and [`write::write`] write the predicted log.

mod load;
mod replay;
mod target;
pub mod write;

pub use load::{Entry, Run};
pub use replay::{Predicted, Sample, replay};
pub use target::{Demand, Target, load_machine, parse_groups};

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::event::{Event, EventKind, Header};
use crate::log::{Encoding, LogReader};

/// `pp whatif`'s arguments.
#[derive(Debug, clap::Args)]
pub struct WhatifArgs {
    /// The event log (text or binary); default $PP_LOG, else ./pp.log.
    log: Option<PathBuf>,
    /// Threads that share a processor: `0,1/2,3` puts 0 and 1 on one, 2 and 3 on another;
    /// threads in no group keep a processor of their own.
    #[arg(long, value_name = "GROUPS")]
    group: Option<String>,
    /// A machine file with an `[mpi]` table (pp calibrate --mpi): the target network.
    #[arg(long, value_name = "FILE")]
    machine: Option<PathBuf>,
    /// Computation in this region or phase goes FACTOR times as fast (repeatable).
    #[arg(long, value_name = "NAME=FACTOR")]
    speed: Vec<String>,
    /// What a computation demands of its processor: `elapsed`, its measured time (a source
    /// run with a processor per thread), or `cpu`, the CPU time its thread received (a source
    /// run that shared processors: more threads than cores, `taskset`): waits lose the
    /// run-queue delay around their end too [default: elapsed].
    #[arg(long, value_name = "elapsed|cpu")]
    demand: Option<String>,
    /// A target file (TOML: group, machine, demand, [speed]); the options above override it.
    #[arg(long, value_name = "FILE.toml")]
    target: Option<PathBuf>,
    /// The predicted log to write (text or binary as the input; `-`: standard output, text
    /// only, and the walls go to standard error).
    #[arg(long, value_name = "PREDICTED.log")]
    out: PathBuf,
    /// Replace an existing --out.
    #[arg(long)]
    force: bool,
}

/// What a replay measured and predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walls {
    /// The log's run window, ns.
    pub measured: u64,
    /// The predicted log's, ns.
    pub predicted: u64,
}

/// `pp whatif`: replays the log, writes the predicted log, returns the report.
pub fn run(args: &WhatifArgs, default_log: PathBuf) -> Result<String> {
    let mut target = match &args.target {
        Some(file) => Target::load(file)?,
        None => Target::default(),
    };
    if let Some(g) = &args.group {
        target.groups = parse_groups(g).map_err(|e| anyhow::anyhow!("--group {e}"))?;
    }
    if let Some(m) = &args.machine {
        target.machine = Some(load_machine(m).map_err(|e| anyhow::anyhow!("--machine {e:#}"))?);
    }
    for s in &args.speed {
        target.add_speed(s)?;
    }
    if let Some(d) = &args.demand {
        target.demand = d.parse().map_err(|e| anyhow::anyhow!("--demand {e}"))?;
    }
    let path = args.log.clone().unwrap_or(default_log);
    let name = if path.as_os_str() == "-" {
        "stdin".to_string()
    } else {
        path.display().to_string()
    };
    if path.as_os_str() != "-" && args.out.exists() && same_file(&path, &args.out) {
        bail!(
            "--out {}: is the input log; refusing to overwrite it",
            args.out.display()
        );
    }
    let run = Run::read(LogReader::open(&path)?, &name, &target.speeds)?;
    if run.encoding == Encoding::Binary && args.out.as_os_str() == "-" {
        bail!("--out -: standard output takes a text log only; name a file");
    }
    target.processors(run.header.p)?;
    let mut prediction = predict(&run, &target)?;
    // From what: the measured log's file name, where it is a name a header can hold.
    let params = &mut prediction.header.params;
    params.retain(|(k, _)| k != "predicted_from");
    if let Some(file) = path.file_name().and_then(|f| f.to_str())
        && crate::log::is_name(file)
        && file.parse::<f64>().is_err()
        && path.as_os_str() != "-"
    {
        params.push(("predicted_from".to_string(), file.to_string()));
    }
    write::write(&run, &prediction, &args.out, args.force)?;
    let walls = prediction.walls;
    let report = format!(
        "measured wall:  {}\npredicted wall: {} ({:+.1}%)\nwrote {} (predicted: {})\n",
        seconds(walls.measured),
        seconds(walls.predicted),
        (walls.predicted as f64 / walls.measured.max(1) as f64 - 1.0) * 100.0,
        args.out.display(),
        target.describe()
    );
    if args.out.as_os_str() == "-" {
        // The predicted log has standard output.
        eprint!("{report}");
        return Ok(String::new());
    }
    Ok(report)
}

/// A replay's outcome.
#[derive(Debug, Clone)]
pub struct Prediction {
    /// The measured and predicted walls.
    pub walls: Walls,
    /// The predicted log's header: the log's, with `predicted=<what>`.
    pub header: Header,
    /// Every event's predicted time.
    pub replay: Predicted,
    /// Whether threads without `cpu` samples get some (a processor is shared).
    sampled: bool,
    /// Whether the measured run-queue delays are dropped (demand from CPU time: the sharing
    /// they came from is gone).
    unshared: bool,
}

impl Prediction {
    /// Thread `i`'s events in the predicted log ([`write::thread_events`]).
    pub fn events<'a>(&'a self, run: &'a Run, i: usize) -> impl Iterator<Item = Event> + 'a {
        write::thread_events(run, &self.replay, i, self.sampled, self.unshared)
    }
}

/// Replays `run` on `target`.
pub fn predict(run: &Run, target: &Target) -> Result<Prediction> {
    let replay = replay(run, target)?;
    let sampled = target.groups.iter().any(|g| g.len() > 1);
    let measured = window(
        run.threads
            .iter()
            .flatten()
            .map(|e| (e.event.t, e.event.kind)),
    );
    let predicted = window(
        run.threads
            .iter()
            .zip(&replay.times)
            .flat_map(|(entries, times)| {
                entries
                    .iter()
                    .zip(times)
                    .map(|(e, &t)| (replay.origin.saturating_add(t.round() as u64), e.event.kind))
            }),
    );
    let mut header = run.header.clone();
    header.params.retain(|(k, _)| k != "predicted");
    header
        .params
        .push(("predicted".to_string(), target.describe()));
    Ok(Prediction {
        walls: Walls {
            measured,
            predicted,
        },
        header,
        replay,
        sampled,
        unshared: target.demand == Demand::Cpu,
    })
}

/// The run window's length: the first `start` to the last event (0 without a `start`).
fn window(events: impl Iterator<Item = (u64, EventKind)>) -> u64 {
    let mut first = None::<u64>;
    let mut last = 0;
    for (t, kind) in events {
        if matches!(kind, EventKind::Start) {
            first = Some(first.map_or(t, |f| f.min(t)));
        }
        last = last.max(t);
    }
    first.map_or(0, |f| last.saturating_sub(f))
}

/// `1.234567890 s`.
fn seconds(ns: u64) -> String {
    format!("{}.{:09} s", ns / 1_000_000_000, ns % 1_000_000_000)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
