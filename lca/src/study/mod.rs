//! A whole lost cycles analysis end to end, as `lca study` runs it: every point of the study
//! (the design's, then the validation points) for every implementation, each with a fresh log
//! profiled into one datafile row, resuming where an earlier start stopped; then each
//! implementation's model, checked on the validation points, and the verdict on the first two.
//! Without a file, `lca study` runs the bundled fft2d study ([`DEFAULT`]).
//!
//! The study goes in phases, each a module:
//! * [`file`](mod@file): the study file, read and checked ([`Study`]);
//! * `plan`: the runs it asks for (`Point`s, each with the `Key` of its datafile row);
//! * `measure`: making them (locally, `--jobs` at a time, or as Slurm jobs), appending each
//!   row, resuming; `precision` adds replicates where `T_p` is not known well enough;
//! * `models`: each implementation's model, built (with simpler shapes where the runs cannot
//!   estimate the defaults: `fallback`), saved and validated (kept in memory);
//! * `decide`: runs where they would most narrow what the crossover leaves undecided;
//! * `report`: the summary, the verdicts, `crossover.txt` and the HTML report.

mod child;
mod datafile;
mod decide;
mod fallback;
pub mod file;
mod jobs;
mod lock;
mod measure;
mod models;
mod options;
mod plan;
mod precision;
mod progress;
mod report;
mod runner;
mod signals;
mod slurm;
mod watchdog;
mod whatif;

use std::time::Instant;

use anyhow::{Result, anyhow};

use file::Study;

pub use options::Options;
pub use progress::Stopped;
pub use report::Report;

/// The bundled study: fft2d, dp against tp, run by the `lca` binary (`lca workload fft2d`).
pub const DEFAULT: &str = include_str!("default.toml");

/// What the bundled study is called in messages.
pub const DEFAULT_NAME: &str = "the bundled study (lca study --print-default)";

/// The plan phase: every run of the study file ([`plan::points`]), then the runs an earlier
/// start of the study added for `[precision]` and chose for `[decide]` (its datafile's rows).
fn plan(study: &Study) -> Result<Vec<plan::Point>> {
    let mut points = plan::points(study)?;
    if study.precision.is_some() || study.decide.is_some() {
        let times = precision::times(study).map_err(|e| anyhow!(e))?;
        let more = precision::earlier(study, &points, &times);
        points.extend(more);
        if study.decide.is_some() {
            points.extend(decide::earlier(study, &times));
        }
    }
    Ok(points)
}

/// Carries out the study: measures every point that has no row yet (progress on standard
/// error), builds and validates each implementation's model, writes the study's files; returns
/// the summary. The runs are made by this program's own executable (`{lca}`) and the `pp`
/// beside it (`{pp}`). A stopping signal ends the study between rows with [`Stopped`].
pub fn run(options: &Options) -> Result<Report> {
    let study = &options.study;
    let started = Instant::now();
    let mut points = plan(study)?;
    let _lock = measure::claim(study)?;
    let todo = measure::todo(study, &points)?;
    let mut session = measure::Session::start(options, &points, &todo)?;
    session.make(&todo)?;
    precision::rounds(&mut session, study, &mut points)?;
    let decided = decide::rounds(&mut session, study, &mut points)?;
    let made = session.finish()?;
    let rows = datafile::Rows::read(study)?;
    let fitted = models::fit(study, &points, &rows);
    report::report(
        study,
        &points,
        &made,
        decided,
        &fitted,
        &rows,
        started.elapsed(),
    )
}
