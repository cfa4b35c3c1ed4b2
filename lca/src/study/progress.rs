//! The progress of a study's runs on standard error: the bar, the lines above it, what the runs
//! of this start came to, the error that ends a study stopped by a signal ([`Stopped`]), and
//! the retry budget: `max_failures` runs of one implementation failing in a row end the study
//! (`Progress::exhausted`; docs/study-file.md).

use std::collections::HashSet;
use std::fmt;

use anyhow::{Result, anyhow};
use indicatif::ProgressBar;

use super::datafile;
use super::file::Study;
use super::plan::{Key, Point};
use super::runner::Ran;
use super::signals;

/// A study ended by a stopping signal (SIGINT, SIGTERM, SIGHUP): the running command's process
/// group was killed and reaped, and no row was half written. Its message says how to resume;
/// the process should end with status `128 + signal`.
#[derive(Debug)]
pub struct Stopped {
    /// The signal.
    pub signal: i32,
    /// Runs made in this start.
    made: usize,
    /// Runs this start planned, as known when it stopped.
    planned: u64,
    /// The command that resumes the study.
    resume: String,
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lca study: stopped by {} after {} of {} runs; no finished run is lost: `{}` resumes",
            signals::name(self.signal),
            self.made,
            self.planned,
            self.resume
        )
    }
}

impl std::error::Error for Stopped {}

/// What the runs made so far came to, and the progress bar that shows it.
pub(super) struct Progress<'a> {
    pub(super) study: &'a Study,
    pub(super) bar: ProgressBar,
    /// The command that resumes the study.
    pub(super) resume: &'a str,
    pub(super) failures: usize,
    pub(super) communicated: bool,
    /// Runs that failed in this start of the study (not tried again in it).
    pub(super) failed: HashSet<Key>,
    pub(super) made: usize,
    /// Runs to make in this start, as known so far.
    pub(super) planned: usize,
    /// Per implementation, its runs that failed since its last measured one.
    pub(super) in_a_row: Vec<usize>,
    /// Why the retry budget is spent (one line), once it is.
    pub(super) exhausted: Option<String>,
}

impl Progress<'_> {
    /// One run's end: its row appended (and its warnings said), or its failure reported, or
    /// the study stopped ([`Stopped`], the error returned).
    pub(super) fn record(&mut self, point: &Point, ran: Ran, seconds: f64) -> Result<()> {
        let study = self.study;
        let label = point.label(study);
        let hidden = self.bar.is_hidden();
        match ran {
            Ran::Measured(m) => {
                datafile::append(&study.datafile, &m.row).map_err(|e| anyhow!(e))?;
                self.in_a_row[point.implementation] = 0;
                self.communicated |= m.communicated;
                self.bar.suspend(|| {
                    if hidden {
                        eprintln!(
                            "[{}/{}] {label}: {seconds:.2} s",
                            self.made + 1,
                            self.planned
                        );
                    }
                    for w in &m.warnings {
                        eprintln!("lca study: warning: {label}: {w}");
                    }
                });
            }
            Ran::Failed(failure) => {
                self.failures += 1;
                self.failed.insert(point.key(study));
                self.bar
                    .suspend(|| eprintln!("lca study: {label}: {failure}"));
                let in_a_row = &mut self.in_a_row[point.implementation];
                *in_a_row += 1;
                if *in_a_row >= study.max_failures && self.exhausted.is_none() {
                    self.exhausted = Some(exhausted(study, point, *in_a_row, &failure.reason));
                }
            }
            Ran::Stopped(signal) => return Err(self.stop(signal)),
        }
        self.made += 1;
        self.bar.inc(1);
        Ok(())
    }

    /// The error that ends the study after a stopping signal, the progress bar cleared.
    pub(super) fn stop(&self, signal: i32) -> anyhow::Error {
        self.bar.finish_and_clear();
        Stopped {
            signal,
            made: self.made,
            planned: self.bar.length().unwrap_or(0),
            resume: self.resume.to_string(),
        }
        .into()
    }
}

/// The error that ends a study whose implementation failed `runs` runs in a row, the last at
/// `point` for `reason`: one line, naming the command.
fn exhausted(study: &Study, point: &Point, runs: usize, reason: &str) -> String {
    let implementation = &study.implementations[point.implementation];
    let command: Vec<String> = implementation.command.iter().map(|t| t.written()).collect();
    files::quote::excerpt(
        &format!(
            "{}: {runs} runs in a row failed, the last ({}) {reason}; the study stops there \
             (max_failures = {}): is its command right? {}",
            implementation.name,
            point.label(study),
            study.max_failures,
            files::quote::excerpt(&command.join(" "), 100)
        ),
        400,
    )
}

/// A line on standard error, above the progress bar.
pub(super) fn say(bar: &ProgressBar, line: String) {
    bar.suspend(|| eprintln!("{line}"));
}
