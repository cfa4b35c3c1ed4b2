//! The run phase: making the runs of the plan that the datafile has no row for yet (so a start
//! resumes where an earlier one stopped), one at a time, `--jobs` at a time or as Slurm jobs,
//! each measured row appended as its run ends; the progress on standard error. A stopping
//! signal (Ctrl-C) ends the study between rows with [`super::Stopped`].

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};

use super::file::{Dispatch, Study};
use super::options::Options;
use super::plan::{Key, Point};
use super::progress::{Progress, say};
use super::runner::{Ran, Runner};
use super::{datafile, jobs, lock, signals, slurm};

/// The study's output folder, created, and held by this start ([`lock`]) for as long as the
/// lock lives.
pub fn claim(study: &Study) -> Result<lock::Lock> {
    std::fs::create_dir_all(&study.out)
        .with_context(|| format!("{}: cannot create the output folder", study.out.display()))?;
    lock::take(&study.out)
}

/// The runs of `points` that the datafile has no row for.
pub fn todo(study: &Study, points: &[Point]) -> Result<Vec<Point>> {
    let measured = datafile::measured(study).map_err(|e| anyhow!(e))?;
    Ok(points
        .iter()
        .filter(|p| !measured.contains(&p.key(study)))
        .cloned()
        .collect())
}

/// What the runs of this start came to.
#[derive(Debug, Clone, Copy)]
pub struct Made {
    /// Runs made (measured or failed).
    pub made: usize,
    /// Runs that gave no row.
    pub failures: usize,
    /// Whether a run moved data.
    pub communicated: bool,
    /// Whether the runs were profiled with a machine calibration.
    pub calibrated: bool,
}

/// Making runs: the runner, the progress shown, and what the runs came to so far. While it
/// lives, a stopping signal is noted instead of ending the process.
pub struct Session<'a> {
    runner: Runner<'a>,
    progress: Progress<'a>,
    jobs: usize,
    calibrated: bool,
    stopping: signals::Guard,
}

impl<'a> Session<'a> {
    /// Starts making the runs of `todo` (of the plan's `points`): finds the programs and the
    /// machine calibration, says how many runs there are to make, shows the progress.
    pub fn start(options: &'a Options, points: &[Point], todo: &[Point]) -> Result<Session<'a>> {
        let study = &options.study;
        let machine = machine(study)?;
        let calibrated = machine.is_some();
        let exe = std::env::current_exe()
            .map_err(|e| anyhow!("cannot find this program ({{lca}}): {e}"))?;
        let pp = pp_beside(&exe, study, &options.named, !todo.is_empty())?;
        let lca = exe.display().to_string();
        let runner = Runner::new(study, lca, pp, machine)
            .with_context(|| format!("{}: cannot create the logs folder", study.out.display()))?;
        let bar = ProgressBar::new(todo.len() as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} ETA {eta} {msg}",
            )
            .expect("a valid template"),
        );
        let jobs = options.jobs;
        if !todo.is_empty() {
            if jobs > 1 {
                say(
                    &bar,
                    format!(
                        "lca study: warning: --jobs {jobs}: runs made at the same time compete \
                         for the machine's cores, caches and memory bandwidth, which disturbs \
                         the times they measure (the models fit that contention as if it were \
                         the program's)"
                    ),
                );
            }
            let resumed = points.len() - todo.len();
            let note = if resumed > 0 {
                format!(
                    ", resuming: {resumed} already in {}",
                    study.datafile.display()
                )
            } else {
                String::new()
            };
            say(
                &bar,
                format!(
                    "lca study {}: {} runs to make{note}",
                    study.name,
                    todo.len()
                ),
            );
        }
        if !bar.is_hidden() {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        let progress = Progress {
            study,
            bar,
            resume: &options.resume,
            failures: 0,
            communicated: false,
            failed: HashSet::new(),
            made: 0,
            planned: todo.len(),
            in_a_row: vec![0; study.implementations.len()],
            exhausted: None,
        };
        let stopping = signals::Guard::install().context("cannot handle signals")?;
        Ok(Session {
            runner,
            progress,
            jobs,
            calibrated,
            stopping,
        })
    }

    /// Makes the runs of `round` (one at a time, `jobs` at a time, or as Slurm jobs), appending
    /// each measured row to the datafile as its run ends. Once the retry budget is spent
    /// (`max_failures` runs of one implementation failed in a row) no more run is started (with
    /// `--jobs` or Slurm, those of the round already under way end first), and the study ends
    /// with that error.
    pub fn make(&mut self, round: &[Point]) -> Result<()> {
        self.make_round(round)?;
        match &self.progress.exhausted {
            Some(why) => {
                self.progress.bar.finish_and_clear();
                Err(anyhow!("{why}"))
            }
            None => Ok(()),
        }
    }

    fn make_round(&mut self, round: &[Point]) -> Result<()> {
        let Session {
            runner,
            progress,
            jobs,
            ..
        } = self;
        let study = progress.study;
        let bar = progress.bar.clone();
        if study.dispatch == Dispatch::Slurm {
            let mut record =
                |point: &Point, ran: Ran, seconds: f64| progress.record(point, ran, seconds);
            return slurm::make(runner, study, round, &bar, &mut record);
        }
        if *jobs > 1 {
            let mut record =
                |point: &Point, ran: Ran, seconds: f64| progress.record(point, ran, seconds);
            return jobs::make(runner, round, *jobs, &mut record);
        }
        for point in round {
            if let Some(signal) = signals::caught() {
                progress.record(point, Ran::Stopped(signal), 0.0)?;
            }
            if progress.exhausted.is_some() {
                break;
            }
            bar.set_message(point.label(study));
            let begun = Instant::now();
            let ran = runner.run(point);
            progress.record(point, ran, begun.elapsed().as_secs_f64())?;
        }
        Ok(())
    }

    /// Says that the runs of `round` come next and why, and counts them in (and in `points`).
    pub fn announce(&mut self, round: &[Point], why: &str, points: &mut Vec<Point>) {
        let progress = &mut self.progress;
        say(
            &progress.bar,
            format!("lca study {}: {} {why}", progress.study.name, round.len()),
        );
        progress.planned += round.len();
        progress.bar.inc_length(round.len() as u64);
        points.extend(round.iter().cloned());
    }

    /// The runs that failed in this start (not tried again in it).
    pub fn failed(&self) -> &HashSet<Key> {
        &self.progress.failed
    }

    /// Ends the making of runs: stopping signals end the process again, and one received
    /// meanwhile ends the study ([`Stopped`]).
    pub fn finish(self) -> Result<Made> {
        drop(self.stopping);
        if let Some(signal) = signals::caught() {
            return Err(self.progress.stop(signal));
        }
        let progress = self.progress;
        progress.bar.finish_and_clear();
        Ok(Made {
            made: progress.made,
            failures: progress.failures,
            communicated: progress.communicated,
            calibrated: self.calibrated,
        })
    }
}

/// The machine calibration: the study's `machine`, else `pp`'s default one when it exists.
fn machine(study: &Study) -> Result<Option<pp::machine::Machine>> {
    Ok(pp::machine::given_or_default(study.machine.as_deref())?)
}

/// `{pp}`: the `pp` program in the folder of `lca` (`exe`), as `cargo build` and an install
/// put them. An error only when there are runs to make (`runs`), a command of the study uses
/// `{pp}` and it is not there.
fn pp_beside(exe: &Path, study: &Study, named: &str, runs: bool) -> Result<String> {
    let pp = exe.with_file_name(format!("pp{}", std::env::consts::EXE_SUFFIX));
    let used = study
        .implementations
        .iter()
        .flat_map(|i| &i.command)
        .any(|t| t.placeholders().any(|p| p == "pp"));
    if runs && used && !pp.is_file() {
        return Err(anyhow!(
            "{named}: the commands use {{pp}}, but there is no pp beside lca ({}); build both (cargo build --release -p pp -p lca)",
            pp.display()
        ));
    }
    Ok(pp.display().to_string())
}
