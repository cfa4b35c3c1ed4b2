//! [`predict`]: a measured run replayed on a target, as the [`PredictedLog`] to write: the
//! predicted log's header, every event's predicted time, and the measured and predicted walls.

use anyhow::{Result, bail};

use super::load::MeasuredRun;
use super::replay::{Predicted, replay};
use super::target::Target;
use crate::event::Header;

/// What a replay measured and predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walls {
    /// The log's run window, ns.
    pub measured: u64,
    /// The predicted log's, ns.
    pub predicted: u64,
}

/// A replay's outcome.
#[derive(Debug)]
pub struct PredictedLog {
    /// The measured and predicted walls.
    pub walls: Walls,
    /// The predicted log's header: the log's, with `predicted=<what>`.
    pub header: Header,
    /// The predicted log's events.
    pub replay: Predicted,
    /// What the user should know about the prediction (times past a double's exact range).
    pub warnings: Vec<String>,
}

/// Predicted times past this many ns from the run's first event are no longer exact in a
/// double (104 days).
const EXACT_NS: f64 = (1u64 << 53) as f64;

/// Replays `run` on `target`.
pub fn predict(run: &MeasuredRun, target: &Target) -> Result<PredictedLog> {
    predicted(run, target, replay(run, target)?)
}

/// The predicted log of `run` on `target` from its `replay`.
pub(super) fn predicted(
    run: &MeasuredRun,
    target: &Target,
    replay: Predicted,
) -> Result<PredictedLog> {
    within_clock(&replay)?;
    let latest = replay.latest;
    let mut warnings = Vec::new();
    if latest > EXACT_NS {
        warnings.push(format!(
            "the predicted run lasts {} s: its times past 2^53 ns (104 days) are rounded to the double nearest",
            format_seconds(latest)
        ));
    }
    let measured = run.window;
    let predicted = replay.window;
    let header = predicted_header(&run.header, target);
    Ok(PredictedLog {
        walls: Walls {
            measured,
            predicted,
        },
        header,
        replay,
        warnings,
    })
}

/// Whether the latest predicted time fits the log's clock (u64 ns): a slower speed than that
/// is refused rather than written saturated. A replay that passed the clock may also have
/// stopped short (its times no longer add up), so this is asked before whether it is
/// [`super::replay::complete`].
pub(super) fn within_clock(replay: &Predicted) -> Result<()> {
    let latest = replay.latest;
    if !latest.is_finite() || replay.origin as f64 + latest >= u64::MAX as f64 {
        bail!(
            "the predicted run would end {} s after its start, past the log's clock (2^64 ns, 585 years, from its origin); is a --speed factor too small?",
            format_seconds(latest)
        );
    }
    Ok(())
}

/// The predicted log's header: `header` with `predicted=<what>` for `target`.
pub(super) fn predicted_header(header: &Header, target: &Target) -> Header {
    let mut header = header.clone();
    header.params.retain(|(k, _)| k != "predicted");
    header
        .params
        .push(("predicted".to_string(), target.describe()));
    header
}

/// Seconds of a time in ns, in the shortest form that shows its size (`3.2e7`).
fn format_seconds(ns: f64) -> String {
    let s = ns / 1e9;
    if s < 1e6 {
        format!("{s:.3}")
    } else {
        format!("{s:.3e}")
    }
}
