//! `pp whatif`: a run replayed on another configuration (docs/whatif.md; seed 000's LBF and NF,
//! seed 001's `α + S/β` message model) — threads regrouped onto shared processors, messages
//! over another network, computation faster or slower by region or phase — into a predicted
//! log in the input's format (docs/whatif.md).
//!
//! [`MeasuredRun::read`] reads the log once, in time order, into a stream of records per thread
//! (each event and its dependencies in the [activity graph](crate::graph)), [`replay`]
//! simulates the target in predicted time order (a tournament tree of pending events, so
//! `O(n log p)` for `n` events, times the group size where processors are shared; no tree
//! where no processor is shared) reading each thread's stream at its own pace and encoding the predicted log's
//! blocks as it goes (`pp whatif` on a binary log: straight into the predicted log), [`predict`]
//! gives the [`PredictedLog`], and [`write::write`] writes it.
//! The streams, the predicted times and the blocks go to a temporary file past a bounded
//! buffer, so memory is bounded whatever the log's length (docs/whatif.md#cost).
//! [`run`] is `pp whatif` from its [`WhatifOptions`].

mod blocks;
mod load;
mod pending;
mod predict;
mod record;
mod replay;
mod sampled;
pub(crate) mod streams;
mod target;
mod times;
pub mod write;

pub use load::MeasuredRun;
pub use predict::{PredictedLog, Walls, predict};
pub use replay::{Predicted, Sample, replay};
pub use target::{Demand, RunToBlockSettings, Sharing, Target, Waits, load_machine, parse_groups};

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Result, bail};

use crate::event::Symbols;
use crate::log::{Encoding, LogReader};
use sampled::Sampled;
use streams::Streams;

/// What `pp whatif` is asked (its options, parsed): [`run`] builds the [`Target`] from them.
#[derive(Debug, Clone, Default)]
pub struct WhatifOptions {
    /// The event log (text or binary; `-`: standard input).
    pub log: PathBuf,
    /// Threads that share a processor (`0,1/2,3`), see [`parse_groups`].
    pub group: Option<String>,
    /// A machine file with an `[mpi]` table: the target network.
    pub machine: Option<PathBuf>,
    /// `NAME=FACTOR`: computation in this region or phase goes FACTOR times as fast.
    pub speed: Vec<String>,
    /// What a computation demands of its processor (default: the target file's, else
    /// [`Demand::Elapsed`]).
    pub demand: Option<Demand>,
    /// How a shared processor serves its threads (default: the target file's, else
    /// [`Sharing::Processor`]).
    pub sharing: Option<Sharing>,
    /// [`Sharing::RunToBlock`]'s slice, microseconds.
    pub slice_us: Option<f64>,
    /// [`Sharing::RunToBlock`]'s switch cost, microseconds.
    pub switch_us: Option<f64>,
    /// [`Sharing::RunToBlock`]'s wake-up cost onto an idle processor, microseconds.
    pub wake_us: Option<f64>,
    /// [`Sharing::RunToBlock`]'s waits: given up or spun.
    pub waits: Option<Waits>,
    /// [`Sharing::RunToBlock`]'s rendezvous above this many bytes (with spinning waits).
    pub rendezvous_bytes: Option<u64>,
    /// A target file; the options above override it.
    pub target: Option<PathBuf>,
    /// The predicted log to write (`-`: standard output, text only).
    pub out: PathBuf,
    /// Replace an existing `out`.
    pub force: bool,
}

/// What `pp whatif` tells its user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The walls and the file written (for standard error when the predicted log goes to
    /// standard output).
    pub report: String,
    /// Warnings, one line each, for standard error.
    pub warnings: Vec<String>,
}

/// Above this share of rc.cpu in the measured run, a regrouping that takes the demand from the
/// measured times warns (docs/whatif.md).
pub const CONTENTION_WARNING: f64 = 0.10;

/// `pp whatif`: replays the log, writes the predicted log, returns the report and warnings.
pub fn run(args: &WhatifOptions) -> Result<Outcome> {
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
    if let Some(d) = args.demand {
        target.demand = d;
    }
    if let Some(s) = args.sharing {
        // The file's slice and switch stay unless the options give others.
        if !matches!(
            (s, target.sharing),
            (Sharing::RunToBlock { .. }, Sharing::RunToBlock { .. })
        ) {
            target.sharing = s;
        }
    }
    target
        .set_run_to_block(&RunToBlockSettings {
            slice_us: args.slice_us,
            switch_us: args.switch_us,
            wake_us: args.wake_us,
            waits: args.waits,
            rendezvous_bytes: args.rendezvous_bytes,
        })
        .map_err(|e| {
            // The target's names as the options write them.
            let mut e = e.to_string();
            for name in [
                "slice_us",
                "switch_us",
                "wake_us",
                "rendezvous_bytes",
                "waits",
            ] {
                e = e.replace(name, &format!("--{}", name.replace('_', "-")));
            }
            anyhow::anyhow!("{e}")
        })?;
    let path = args.log.clone();
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
    if args.out.as_os_str() != "-" {
        write::check("--out", &args.out, args.force)?;
    }
    // The measured run's contention matters to a regrouping from the measured times only.
    let regrouped = target.groups.iter().any(|g| g.len() > 1) && target.demand == Demand::Elapsed;
    let reader = LogReader::open(&path)?;
    // What the header says is checked before the log is read.
    if reader.encoding() == Encoding::Binary && args.out.as_os_str() == "-" {
        bail!("--out -: standard output takes a text log only; name a file");
    }
    target.processors(reader.header().p)?;
    // The replay follows the reading on another thread (docs/whatif.md#cost). A regular file
    // is read a second time for the attribution, afterwards and only where the reading found
    // that its rc.cpu may pass the warning's share; standard input or a FIFO only once, the
    // attribution with the replay's reading.
    let regular = path.as_os_str() != "-" && std::fs::metadata(&path).is_ok_and(|m| m.is_file());
    let p = reader.header().p as usize;
    // Read once, by the replay: chunks it follows closely are handed over in memory.
    let (records, shares) = (Streams::read_once(p), Streams::read_once(p));
    let sampled = Sampled::new(p);
    // Only a demand from CPU time reads the shares: otherwise they end empty at once.
    let cpu = target.demand == Demand::Cpu;
    if !cpu {
        shares.writer().finish();
    }
    let mut header = predict::predicted_header(reader.header(), &target);
    from(&mut header, &path);
    // A binary predicted log is written as the replay goes (docs/whatif.md#cost); its names
    // and teams come from the reading.
    let symbols = Mutex::new(Symbols::default());
    let direct = match reader.encoding() {
        Encoding::Binary => Some(blocks::Direct::new(
            write::open_binary("--out", &args.out, &header)?,
            format!("--out {}", args.out.display()),
            &symbols,
            p,
        )),
        Encoding::Text => None,
    };
    let publish = direct.is_some().then_some(&symbols);
    let (reading, replayed) = std::thread::scope(|s| {
        let replay =
            s.spawn(|| replay::replay_streams(&records, &shares, &sampled, &target, direct));
        let reading = load::read_into(
            reader,
            &name,
            &target.speeds,
            regrouped && !regular,
            &records,
            cpu.then_some(&shares),
            &sampled,
            publish,
        );
        (reading, join(replay))
    });
    let mut run = reading?.run(records, shares, sampled);
    // A replay that failed says why (the reading then stopped too).
    let replayed = replayed?;
    // Below the bound the warning cannot be due: rc.cpu stays unknown (None).
    if regrouped && regular && run.rc_cpu_bound > 0.9 * CONTENTION_WARNING {
        run.rc_cpu = Some(
            LogReader::open(&path)
                .ok()
                .and_then(load::rc_cpu)
                .unwrap_or(0.0),
        );
    }
    replay::complete(&replayed, &run.counts)?;
    let mut warnings = Vec::new();
    if let Some(rc) = run.rc_cpu.filter(|&rc| rc > CONTENTION_WARNING) {
        warnings.push(format!(
            "{name} has {:.1}% rc.cpu: its threads waited for a core, and that time counts as demand in the regrouped run; --demand cpu takes the demand from the CPU time they received",
            rc * 100.0
        ));
    }
    let mut prediction = predict::predicted(&run, &target, replayed)?;
    warnings.extend(prediction.warnings.iter().cloned());
    prediction.header = header;
    match prediction.replay.written.take() {
        Some(written) => write::commit(written, "--out", &args.out, args.force)?,
        None => write::write(&run, &prediction, "--out", &args.out, args.force)?,
    }
    let walls = prediction.walls;
    let report = format!(
        "measured wall:  {}\npredicted wall: {} ({:+.1}%)\nwrote {} (predicted: {})\n",
        seconds(walls.measured),
        seconds(walls.predicted),
        (walls.predicted as f64 / walls.measured.max(1) as f64 - 1.0) * 100.0,
        args.out.display(),
        target.describe()
    );
    Ok(Outcome { report, warnings })
}

/// Names in `header` the measured log it is predicted from (`predicted_from`), by its file
/// name where that is a name a header can hold.
fn from(header: &mut crate::event::Header, path: &Path) {
    let params = &mut header.params;
    params.retain(|(k, _)| k != "predicted_from");
    if let Some(file) = path.file_name().and_then(|f| f.to_str())
        && crate::log::is_name(file)
        && file.parse::<f64>().is_err()
        && path.as_os_str() != "-"
    {
        params.push(("predicted_from".to_string(), file.to_string()));
    }
}

/// A scoped thread's result; its panic goes on in this thread.
fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
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
