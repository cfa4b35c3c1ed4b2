//! One run of the workload: the settings, the recording session around it, the timing and
//! the checksum.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use pp_recorder::{Session, Team};
use rustfft::{Fft, FftPlanner};

use crate::matrix::MatrixRef;
use crate::{dp, tp};

/// The largest side accepted: a matrix is `16 n²` bytes and a run holds up to four.
pub const MAX_N: usize = 8192;

/// The most threads accepted.
pub const MAX_P: usize = 1024;

/// The implementation to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Impl {
    /// Data parallel ([`dp`]).
    Dp,
    /// Task + data parallel ([`tp`]).
    Tp,
}

impl fmt::Display for Impl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Impl::Dp => "dp",
            Impl::Tp => "tp",
        })
    }
}

impl FromStr for Impl {
    type Err = String;
    fn from_str(s: &str) -> Result<Impl, String> {
        match s {
            "dp" => Ok(Impl::Dp),
            "tp" => Ok(Impl::Tp),
            _ => Err(format!("'{s}': expected dp or tp")),
        }
    }
}

/// The settings of a run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Which implementation.
    pub implementation: Impl,
    /// Side of the matrix (any `1..=MAX_N`; `rustfft` handles every length).
    pub n: usize,
    /// Threads, all of them (`tp`: both groups together, at least 2).
    pub p: usize,
    /// Matrices transformed, one after the other.
    pub iters: usize,
    /// Record an event log (a [`Session`] of `p` processors with the parameters `impl`, `n`,
    /// `iters`); without it the recorder's guards do nothing.
    pub record: bool,
    /// Where the log goes; `None`: `$PP_LOG`, else `./pp.log`.
    pub log: Option<PathBuf>,
}

impl Config {
    /// Checks the settings; the message names the option (as the command line spells it).
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_N).contains(&self.n) {
            return Err(format!("-n {}: expected 1 to {MAX_N}", self.n));
        }
        if !(1..=MAX_P).contains(&self.p) {
            return Err(format!("-p {}: expected 1 to {MAX_P}", self.p));
        }
        if self.implementation == Impl::Tp && self.p < 2 {
            return Err(format!(
                "-p {}: tp needs at least 2 threads, one group per pipeline stage",
                self.p
            ));
        }
        if self.iters == 0 {
            return Err("--iters 0: expected at least 1".into());
        }
        Ok(())
    }
}

/// The memory of either implementation.
enum Workspace {
    Dp(dp::Workspace),
    Tp(tp::Workspace),
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The sum of the magnitudes of the last iteration's result.
    pub checksum: f64,
    /// Wall-clock seconds of the iterations (the teams' threads already started; planning the
    /// FFT, starting the session and writing the rest of the log left out).
    pub seconds: f64,
    /// The log written, if recorded.
    pub log: Option<PathBuf>,
    /// Events in the log.
    pub events: u64,
    /// What went wrong with the log without stopping the run.
    pub warnings: Vec<String>,
}

/// Runs `config` (which must [validate](Config::validate)); after iteration `k`,
/// `result(k, Y_k)` on one of the `p` threads, recording nothing: its time is idle time of the
/// threads that wait for it (with `dp` all of them, with `tp` stage 2's group).
///
/// # Errors
/// Invalid settings (`InvalidInput`), or the error of starting the session or the threads or
/// of writing the log.
pub fn run(
    config: &Config,
    result: &mut (dyn FnMut(usize, MatrixRef<'_>) + Send),
) -> io::Result<Outcome> {
    config
        .validate()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // Set-up outside the run window: the FFT plan and the matrices.
    let fft: Arc<dyn Fft<f64>> = FftPlanner::new().plan_fft_forward(config.n);
    let workspace = match config.implementation {
        Impl::Dp => Workspace::Dp(dp::Workspace::new(config.n)),
        Impl::Tp => Workspace::Tp(tp::Workspace::new(config.n)),
    };
    let session = if config.record {
        let mut b = Session::builder(config.p as u32)
            .param("impl", config.implementation)
            .param("n", config.n)
            .param("iters", config.iters);
        if let Some(path) = &config.log {
            b = b.path(path);
        }
        Some(b.start()?)
    } else {
        None
    };
    let (last, seconds) = match workspace {
        Workspace::Dp(workspace) => {
            let team = Team::new(config.p)?;
            let start = Instant::now();
            let last = dp::run(&team, &fft, config.iters, workspace, result);
            (Some(last), start.elapsed().as_secs_f64())
        }
        Workspace::Tp(workspace) => {
            let groups = tp::Groups::new(config.p)?;
            let start = Instant::now();
            let last = tp::run(&groups, &fft, config.iters, workspace, result);
            (last, start.elapsed().as_secs_f64())
        }
    };
    // The teams are gone (their threads recorded `stop`): the run window is closed.
    let mut outcome = Outcome {
        checksum: last
            .as_ref()
            .map_or(f64::NAN, |y| y.as_ref().magnitude_sum()),
        seconds,
        log: None,
        events: 0,
        warnings: Vec::new(),
    };
    if let Some(session) = session {
        let report = session.finish()?;
        if !report.unstopped.is_empty() {
            outcome.warnings.push(format!(
                "threads {:?} did not stop in time: their last events are missing from the log",
                report.unstopped
            ));
        }
        if let Some(why) = report.first_refusal {
            outcome.warnings.push(format!(
                "{} blocks of events left out of the log: {why}",
                report.refused_blocks
            ));
        }
        outcome.log = Some(report.path);
        outcome.events = report.events;
    }
    Ok(outcome)
}
