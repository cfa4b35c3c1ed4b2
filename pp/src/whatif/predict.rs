//! [`predict`]: a measured run replayed on a target, as the [`PredictedLog`] to write: the
//! predicted log's header, every event's predicted time, and the measured and predicted walls.

use anyhow::Result;

use super::load::MeasuredRun;
use super::replay::{Predicted, replay};
use super::target::{Demand, Target};
use crate::event::{EventKind, Header};

/// What a replay measured and predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walls {
    /// The log's run window, ns.
    pub measured: u64,
    /// The predicted log's, ns.
    pub predicted: u64,
}

/// A replay's outcome.
#[derive(Debug, Clone)]
pub struct PredictedLog {
    /// The measured and predicted walls.
    pub walls: Walls,
    /// The predicted log's header: the log's, with `predicted=<what>`.
    pub header: Header,
    /// Every event's predicted time.
    pub replay: Predicted,
    /// Whether threads without `cpu` samples get some (a processor is shared).
    pub(super) sampled: bool,
    /// Whether the measured run-queue delays are dropped (demand from CPU time: the sharing
    /// they came from is gone).
    pub(super) unshared: bool,
}

/// Replays `run` on `target`.
pub fn predict(run: &MeasuredRun, target: &Target) -> Result<PredictedLog> {
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
    Ok(PredictedLog {
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
