//! `lca study [STUDY.toml]`: a whole lost cycles analysis end to end. Runs every point of the
//! study (the design's, then the validation points) for every implementation, each with a fresh
//! log profiled into one datafile row, resuming where an earlier start stopped; then builds
//! each implementation's model and checks it on the validation points. Without a file it runs
//! the bundled fft2d study ([`DEFAULT`]).

mod child;
mod decide;
pub mod file;
mod jobs;
mod lock;
mod precision;
pub mod runner;
mod signals;
mod slurm;
mod watchdog;
mod whatif;

use std::collections::HashSet;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use fit::crossover::Winner;
use fit::performance::{BuildOptions, PerformanceModel};
use fit::{Condition, Datafile};
use indicatif::{ProgressBar, ProgressStyle};
use reports::Format;

use file::{Dispatch, Study};
use runner::{Key, Point, Ran, Role, Runner};

/// The bundled study: fft2d, dp against tp, run by this very binary (`lca workload fft2d`).
pub const DEFAULT: &str = include_str!("default.toml");

/// What the bundled study is called in messages.
const DEFAULT_NAME: &str = "the bundled study (lca study --print-default)";

/// Run a study: measure every point (resuming), build and validate each implementation's model.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "A study file names the factors, the design, the validation points and each \
implementation's command;\n`lca study --print-default` prints the bundled one as an example. \
Stopping a study (Ctrl-C) loses\nno finished run: the same command resumes it. With --dispatch slurm each run is a Slurm job\n\
(docs/slurm.md).\n\n\
Examples:\n  lca study                  # the bundled fft2d study (dp against tp)\n  \
lca study --print-default > my.toml\n  lca study my.toml"
)]
pub struct Args {
    /// The study file (TOML) [default: the bundled fft2d study].
    study: Option<PathBuf>,
    /// Print the bundled study file and exit.
    #[arg(long, conflicts_with = "study")]
    print_default: bool,
    /// Where the runs are made: on this machine, or as Slurm jobs (docs/slurm.md)
    /// [default: the study file's `dispatch`, else local].
    #[arg(long, value_enum)]
    dispatch: Option<Dispatch>,
    /// Local runs made at the same time (they disturb each other's measurements).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    jobs: u16,
}

/// Runs the hidden `lca workload NAME ARGS..` (the workloads the bundled study runs), when the
/// command line asks for it.
pub fn workload() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != "workload" {
        return None;
    }
    let name = args.next().unwrap_or_default();
    let rest: Vec<OsString> = args.collect();
    Some(match name.to_str() {
        Some("fft2d") => fft2d::cli::main(std::iter::once(OsString::from("fft2d")).chain(rest)),
        _ => {
            eprintln!(
                "Error: lca workload '{}': expected fft2d",
                name.to_string_lossy()
            );
            ExitCode::FAILURE
        }
    })
}

/// One implementation's line of the summary.
struct Outcome {
    name: String,
    model_runs: usize,
    validation_runs: usize,
    model_file: Option<PathBuf>,
    errors: Option<(f64, f64)>,
    baseline: Option<(f64, f64)>,
    problem: Option<String>,
    /// What not to trust in the model: `category: warning` lines.
    warnings: Vec<String>,
    /// Its error on the validation points' means, for the verdict.
    model_error: Option<fit::crossover::ValidatedError>,
}

/// Runs the command; prints progress on standard error and returns the summary to print.
pub fn run(args: &Args) -> Result<String> {
    if args.print_default {
        return Ok(DEFAULT.to_string());
    }
    let (mut study, mut how) = match &args.study {
        Some(path) => {
            let text = files::input::read_text(path, "study file", files::input::MAX_SMALL_FILE)
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            let how = format!("lca study {}", path.display());
            (file::parse(&path.display().to_string(), &text)?, how)
        }
        None => (file::parse(DEFAULT_NAME, DEFAULT)?, "lca study".to_string()),
    };
    if let Some(dispatch) = args.dispatch {
        study.dispatch = dispatch;
        how += match dispatch {
            Dispatch::Local => " --dispatch local",
            Dispatch::Slurm => " --dispatch slurm",
        };
    }
    let jobs = usize::from(args.jobs);
    if jobs > 1 {
        if study.dispatch == Dispatch::Slurm {
            bail!(
                "--jobs is for local runs; Slurm runs as many at once as the cluster gives \
                 (limit them with max_running in the study file's [slurm])"
            );
        }
        how += &format!(" --jobs {jobs}");
    }
    let started = Instant::now();
    let mut points = runner::points(&study)?;
    if study.precision.is_some() || study.decide.is_some() {
        let times = precision::times(&study).map_err(|e| anyhow!(e))?;
        let more = precision::earlier(&study, &points, &times);
        points.extend(more);
        if study.decide.is_some() {
            let chosen = decide::earlier(&study, &times);
            points.extend(chosen);
        }
    }
    std::fs::create_dir_all(&study.out)
        .with_context(|| format!("{}: cannot create the output folder", study.out.display()))?;
    let _lock = lock::take(&study.out)?;
    let measured = runner::measured(&study).map_err(|e| anyhow!(e))?;
    let todo: Vec<Point> = points
        .iter()
        .filter(|p| !measured.contains(&p.key(&study)))
        .cloned()
        .collect();
    let machine = match &study.machine {
        Some(path) => Some(pp::machine::Machine::load(path)?),
        None => match pp::machine::default_path().filter(|p| p.exists()) {
            Some(path) => Some(pp::machine::Machine::load(&path)?),
            None => None,
        },
    };
    let calibrated = machine.is_some();
    let exe =
        std::env::current_exe().map_err(|e| anyhow!("cannot find this program ({{lca}}): {e}"))?;
    let named = args
        .study
        .as_ref()
        .map_or(DEFAULT_NAME.to_string(), |p| p.display().to_string());
    let pp = pp_beside(&exe, &study, &named, !todo.is_empty())?;
    let lca = exe.display().to_string();
    let runner = Runner::new(&study, lca, pp, machine)
        .with_context(|| format!("{}: cannot create the logs folder", study.out.display()))?;

    let bar = ProgressBar::new(todo.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} ETA {eta} {msg}",
        )
        .expect("a valid template"),
    );
    if jobs > 1 && !todo.is_empty() {
        bar.suspend(|| {
            eprintln!(
                "lca study: warning: --jobs {jobs}: runs made at the same time compete for the \
                 machine's cores, caches and memory bandwidth, which disturbs the times they \
                 measure (the models fit that contention as if it were the program's)"
            )
        });
    }
    if !todo.is_empty() {
        let resumed = points.len() - todo.len();
        let note = if resumed > 0 {
            format!(
                ", resuming: {resumed} already in {}",
                study.datafile.display()
            )
        } else {
            String::new()
        };
        bar.suspend(|| {
            eprintln!(
                "lca study {}: {} runs to make{note}",
                study.name,
                todo.len()
            )
        });
    }
    let hidden = bar.is_hidden();
    if !hidden {
        bar.enable_steady_tick(Duration::from_millis(200));
    }
    let mut progress = Progress {
        failures: 0,
        communicated: false,
        failed: HashSet::new(),
        made: 0,
        planned: todo.len(),
    };
    let stopping = signals::Guard::install().context("cannot handle signals")?;
    let mut round: Vec<Point> = todo.clone();
    loop {
        make(&runner, &study, &round, &bar, &how, &mut progress, jobs)?;
        // [precision]: another round of replicates where T_p is not yet known well enough.
        let Some(target) = study.precision else {
            break;
        };
        let times = precision::times(&study).map_err(|e| anyhow!(e))?;
        let known: HashSet<Key> = points.iter().map(|p| p.key(&study)).collect();
        round = precision::next_round(&study, &points, &times, target, &progress.failed)
            .into_iter()
            .filter(|p| !known.contains(&p.key(&study)))
            .collect();
        if round.is_empty() {
            break;
        }
        let why = format!(
            "more runs: their T_p is not yet within ±{}% (90%)",
            100.0 * target.target
        );
        announce(&bar, &study, &round, &why, &mut progress, &mut points);
    }
    // [decide]: runs where they would most shrink the region the crossover leaves undecided.
    let mut decided = None;
    if let Some(decide) = study.decide {
        let mut spent = decide::spent(&points);
        let (mut before, mut rounds) = (None, 0);
        while spent < decide.budget {
            let k = decide.per_round.min(decide.budget - spent);
            let Some((share, round)) =
                decide::round(&study, &points, k, &|| models(&study, &points).map(|_| ()))?
            else {
                break;
            };
            before.get_or_insert(share);
            if round.is_empty() {
                break;
            }
            let why = format!(
                "runs to decide the crossover ({}% of the map undecided)",
                reports::verdict::human(100.0 * share)
            );
            announce(&bar, &study, &round, &why, &mut progress, &mut points);
            make(&runner, &study, &round, &bar, &how, &mut progress, jobs)?;
            spent += round.len();
            rounds += 1;
        }
        let how = match (before, rounds) {
            (_, 0) if spent >= decide.budget => "(spent by an earlier start of the study)".into(),
            (Some(share), _) if share > 0.0 => format!(
                "({}% of it undecided before this start's; the verdict below is after them)",
                reports::verdict::human(100.0 * share)
            ),
            (Some(_), _) => "(nothing is left undecided)".into(),
            (None, _) => "(no crossover of two models to decide)".into(),
        };
        decided = Some(format!(
            "decide:   {spent} of {} runs chosen where they would most narrow the undecided \
             region of {} against {} {how}\n",
            decide.budget, study.implementations[0].name, study.implementations[1].name
        ));
    }
    drop(stopping);
    if let Some(signal) = signals::caught() {
        stop(&bar, signal, progress.made, &how);
    }
    let Progress {
        failures,
        communicated,
        made,
        ..
    } = progress;
    bar.finish_and_clear();

    let outcomes = models(&study, &points)?;
    let mut text = summary(&study, &points, made, failures, started.elapsed());
    let times = precision::times(&study).map_err(|e| anyhow!(e))?;
    text += &precision::report(&study, &points, &times);
    if let Some(line) = decided {
        text += &line;
    }
    if !calibrated && communicated {
        text += "note: no machine calibration (pp calibrate): all communication time counts as cl, none as rc.comm\n";
    }
    text += &table(&outcomes);
    text += &compare(&study, &outcomes)?;
    if failures > 0 {
        crate::write_stdout(&text)?;
        bail!(
            "{failures} of {made} runs failed (reported above, with their standard error); run \
             the study again to retry them"
        );
    }
    Ok(text)
}

/// What the runs made so far came to.
struct Progress {
    failures: usize,
    communicated: bool,
    /// Runs that failed in this start of the study (not tried again in it).
    failed: HashSet<Key>,
    made: usize,
    /// Runs to make in this start, as known so far.
    planned: usize,
}

/// Says that the runs of `round` come next and why, and counts them in.
fn announce(
    bar: &ProgressBar,
    study: &Study,
    round: &[Point],
    why: &str,
    progress: &mut Progress,
    points: &mut Vec<Point>,
) {
    bar.suspend(|| eprintln!("lca study {}: {} {why}", study.name, round.len()));
    progress.planned += round.len();
    bar.inc_length(round.len() as u64);
    points.extend(round.iter().cloned());
}

/// Makes the runs of `round` (one at a time, `jobs` at a time, or as Slurm jobs), appending
/// each measured row to the datafile as its run ends.
fn make(
    runner: &Runner,
    study: &Study,
    round: &[Point],
    bar: &ProgressBar,
    how: &str,
    progress: &mut Progress,
    jobs: usize,
) -> Result<()> {
    let mut record = |point: &Point, ran: Ran, seconds: f64| {
        record(study, point, ran, seconds, bar, how, progress)
    };
    if study.dispatch == Dispatch::Slurm {
        return slurm::make(runner, study, round, bar, &mut record);
    }
    if jobs > 1 {
        return jobs::make(runner, round, jobs, &mut record);
    }
    for point in round {
        if let Some(signal) = signals::caught() {
            record(point, Ran::Stopped(signal), 0.0)?;
        }
        bar.set_message(point.label(study));
        let begun = Instant::now();
        let ran = runner.run(point);
        record(point, ran, begun.elapsed().as_secs_f64())?;
    }
    Ok(())
}

/// One run's end: its row appended (and its warnings said), or its failure reported, or the
/// study stopped (a stopping signal, which never returns).
fn record(
    study: &Study,
    point: &Point,
    ran: Ran,
    seconds: f64,
    bar: &ProgressBar,
    how: &str,
    progress: &mut Progress,
) -> Result<()> {
    let label = point.label(study);
    let hidden = bar.is_hidden();
    match ran {
        Ran::Measured(m) => {
            runner::append(&study.datafile, &m.row).map_err(|e| anyhow!(e))?;
            progress.communicated |= m.communicated;
            bar.suspend(|| {
                if hidden {
                    eprintln!(
                        "[{}/{}] {label}: {seconds:.2} s",
                        progress.made + 1,
                        progress.planned,
                    );
                }
                for w in &m.warnings {
                    eprintln!("lca study: warning: {label}: {w}");
                }
            });
        }
        Ran::Failed(failure) => {
            progress.failures += 1;
            progress.failed.insert(point.key(study));
            bar.suspend(|| eprintln!("lca study: {label}: {failure}"));
        }
        Ran::Stopped(signal) => stop(bar, signal, progress.made, how),
    }
    progress.made += 1;
    bar.inc(1);
    Ok(())
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

/// Ends `lca` after a stopping signal, the running command's process group killed and reaped
/// and no row half written: with one line saying how to resume, and status 128 + the signal.
fn stop(bar: &ProgressBar, signal: i32, made: usize, how: &str) -> ! {
    bar.finish_and_clear();
    eprintln!(
        "lca study: stopped by {} after {made} of {} runs; no finished run is lost: `{how}` \
         resumes",
        signals::name(signal),
        bar.length().unwrap_or(0)
    );
    std::process::exit(128 + signal)
}

/// The crossover of the first two implementations' models (both factors: a winner map) and
/// the HTML report of every model with the study's runs, in the study's folder.
fn compare(study: &Study, outcomes: &[Outcome]) -> Result<String> {
    let built: Vec<&Outcome> = outcomes.iter().filter(|o| o.model_file.is_some()).collect();
    let models = built
        .iter()
        .filter_map(|o| o.model_file.as_deref())
        .map(fit::model_file::read)
        .collect::<Result<Vec<_>, _>>()?;
    if models.is_empty() {
        return Ok(String::new());
    }
    let mut text = String::new();
    let mut errors = [None, None];
    if let ([a, b, ..], [oa, ob, ..]) = (&models[..], &built[..]) {
        errors = [oa.model_error, ob.model_error];
        // The coefficients' uncertainty only (what `lca crossover` says from the model files),
        // then with each model's error on the validation points, which the study measured.
        let plain = crate::report::winner_map(a, b, [None, None]);
        let validated = errors
            .iter()
            .any(Option::is_some)
            .then(|| crate::report::winner_map(a, b, errors));
        match &plain {
            Ok(map) => {
                text += &format!("\nverdict: {}\n", reports::verdict::map(map));
                if let Some(note) = reports::verdict::predictions(&[a, b]) {
                    text += &format!("predicted: {note}\n");
                }
                if map.intervals && map.cells.iter().flatten().any(|&w| w == Winner::Tie) {
                    text += &format!(
                        "next runs: lca crossover {} {} --suggest 6   (the runs that would decide \
                         most)\n",
                        oa.model_file.as_deref().unwrap_or(Path::new("")).display(),
                        ob.model_file.as_deref().unwrap_or(Path::new("")).display()
                    );
                }
            }
            Err(e) => text += &format!("\ncrossover: none ({e})\n"),
        }
        if let Some(Ok(map)) = &validated {
            let sd = |name: &str, e: Option<fit::crossover::ValidatedError>| {
                e.map_or(format!("{name} unknown"), |e| {
                    format!("{name} ±{:.1}%", 100.0 * e.relative_sd)
                })
            };
            text += &format!(
                "model error: {}, {} (RMS relative error of each model's T_p on the validation \
                 points' means)\nverdict: {}\n",
                sd(&oa.name, errors[0]),
                sd(&ob.name, errors[1]),
                reports::verdict::map(map)
            );
        }
        // crossover.txt holds the validated map where there is one.
        if let Ok(map) = validated.as_ref().unwrap_or(&plain) {
            let path = study.out.join("crossover.txt");
            let written = reports::verdict::with_predictions(
                reports::crossover::winner_map(map, reports::Format::Text),
                reports::Format::Text,
                &[a, b],
            )?;
            files::output::write(&path, written.as_bytes()).map_err(|e| anyhow!("{e}"))?;
            text += &format!("crossover: {}\n", path.display());
        }
    }
    let data = fit::Datafile::read(&study.datafile)?;
    let title = format!("Lost cycles analysis: study {}", study.name);
    text += &crate::report::write(
        &models,
        Some(&data),
        &title,
        &study.out.join("report"),
        true,
        errors,
    )?;
    Ok(text)
}

/// Builds, saves and validates each implementation's model.
fn models(study: &Study, points: &[Point]) -> Result<Vec<Outcome>> {
    let text = match std::fs::read_to_string(&study.datafile) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(anyhow!("{}: cannot read: {e}", study.datafile.display())),
    };
    let source = study.datafile.display().to_string();
    let mut outcomes = Vec::new();
    for (i, implementation) in study.implementations.iter().enumerate() {
        let keys = |roles: &[Role]| -> HashSet<Key> {
            points
                .iter()
                .filter(|p| p.implementation == i && roles.contains(&p.role))
                .map(|p| p.key(study))
                .collect()
        };
        // The runs `[decide]` chose are fitted as the design's are.
        let model_keys = keys(&[Role::Model, Role::Decide]);
        let (model_text, model_runs) = runner::select(&text, study, &model_keys);
        // One role for the fit (a column of two values would be a factor of text).
        let model_text: String = model_text
            .split_inclusive('\n')
            .map(|l| l.replacen(" role=decide ", " role=model ", 1))
            .collect();
        let (validate_text, validation_runs) =
            runner::select(&text, study, &keys(&[Role::Validate]));
        let mut outcome = Outcome {
            name: implementation.name.clone(),
            model_runs,
            validation_runs,
            model_file: None,
            errors: None,
            baseline: None,
            problem: None,
            warnings: Vec::new(),
            model_error: None,
        };
        let result = (|| -> Result<()> {
            if model_runs == 0 {
                bail!("no runs of the design were measured");
            }
            let data = Datafile::parse(&source, &model_text)?;
            let conditions: Vec<Condition> = [
                format!("impl={}", implementation.name),
                "role=model".to_string(),
            ]
            .iter()
            .map(|c| c.parse())
            .collect::<Result<_, _>>()?;
            let options = BuildOptions {
                name: implementation.name.clone(),
                categories: Vec::new(),
                choices: Default::default(),
                conditions,
                created_by: format!("lca {} study {}", env!("CARGO_PKG_VERSION"), study.name),
            };
            let model = PerformanceModel::build(&data, &options)?;
            let path = study.out.join(format!("{}.toml", implementation.name));
            // The study owns its output folder: its model files are replaced on every run.
            fit::model_file::save(&model, &path, true)?;
            write(
                &study.out.join(format!("{}-model.txt", implementation.name)),
                &reports::model::summary(&model),
            )?;
            outcome.model_file = Some(path);
            outcome.warnings = model
                .categories
                .iter()
                .flat_map(|c| {
                    reports::model::warnings(c)
                        .into_iter()
                        .map(move |w| format!("{}: {w}", c.category))
                })
                .collect();
            if let Some(p) = &model.provenance.predicted {
                outcome.warnings.insert(
                    0,
                    format!(
                        "predicted, not measured: {}",
                        p.describe(&model.factors, &model.ranges)
                    ),
                );
            }
            if validation_runs > 0 {
                let data = Datafile::parse(&source, &validate_text)?;
                let validation = fit::validation::validate(&model, &data)?;
                let e = validation.model_errors();
                outcome.errors = Some((e.mean, e.max));
                outcome.model_error = validation.validated_error();
                outcome.baseline = validation.baseline_errors().map(|b| (b.mean, b.max));
                let where_ = format!("{source} where impl={}, role=validate", implementation.name);
                write(
                    &study
                        .out
                        .join(format!("{}-validation.txt", implementation.name)),
                    &reports::validation::validation(&model, &validation, &where_, Format::Text),
                )?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            outcome.problem = Some(format!("{e:#}"));
        }
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

fn write(path: &Path, text: &str) -> Result<()> {
    files::output::write(path, text.as_bytes()).map_err(|e| anyhow!("{e}"))
}

/// Where the study stands and where its files are.
fn summary(
    study: &Study,
    points: &[Point],
    made: usize,
    failures: usize,
    elapsed: Duration,
) -> String {
    let mut text = format!(
        "study {}: {} runs, {} made now in {:.1} s",
        study.name,
        points.len(),
        made - failures,
        elapsed.as_secs_f64()
    );
    if failures > 0 {
        text += &format!(", {failures} failed");
    }
    let earlier = points.len() - made;
    if earlier > 0 {
        text += &format!(", {earlier} measured earlier");
    }
    text += "\n";
    let _ = writeln!(text, "datafile: {}", study.datafile.display());
    let _ = writeln!(
        text,
        "logs:     {} (each run's log, standard output and error)",
        study.out.join("logs").display()
    );
    // Runs with more processors than the machine has: real contention, kept and counted.
    // (Slurm's runs are on its nodes, not this machine.)
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    if let Some(f) = study.factors.iter().position(|f| f.name == "p")
        && study.dispatch == Dispatch::Local
    {
        let over = points
            .iter()
            .filter(|pt| pt.values[f] > cores as f64)
            .count();
        if over > 0 && cores > 0 {
            let _ = writeln!(
                text,
                "note:     {over} runs have p above this machine's {cores} cores: oversubscribed, \
                 their contention is real and counted (rc.cpu), kept in the models"
            );
        }
    }
    text
}

/// Per implementation: the runs, the model file and the validation errors of `T_p`.
fn table(outcomes: &[Outcome]) -> String {
    let percent = |e: Option<(f64, f64)>| match e {
        Some((mean, max)) => format!("{:>6.1}% {:>6.1}%", 100.0 * mean, 100.0 * max),
        None => format!("{:>7} {:>7}", "-", "-"),
    };
    let width = outcomes
        .iter()
        .map(|o| o.name.len())
        .max()
        .unwrap_or(0)
        .max(4);
    let mut text = format!(
        "\n{:<width$}  {:>5}  {:>8}  {:^15}  {:^15}  model\n",
        "impl", "model", "validate", "T_p error", "baseline error"
    );
    let _ = writeln!(
        text,
        "{:<width$}  {:>5}  {:>8}  {:>7} {:>7}  {:>7} {:>7}",
        "", "runs", "runs", "mean", "max", "mean", "max"
    );
    for o in outcomes {
        let model = match (&o.model_file, &o.problem) {
            (_, Some(problem)) => format!("not built: {problem}"),
            (Some(path), None) => path.display().to_string(),
            (None, None) => "-".to_string(),
        };
        let _ = writeln!(
            text,
            "{:<width$}  {:>5}  {:>8}  {}  {}  {model}",
            o.name,
            o.model_runs,
            o.validation_runs,
            percent(o.errors),
            percent(o.baseline)
        );
    }
    for o in outcomes {
        for w in &o.warnings {
            let _ = writeln!(text, "{}: {w}", o.name);
        }
    }
    text += "\nT_p error: |predicted - measured| / measured on the validation runs; baseline: the \
             paper's corner plane\n(1 + every factor, fitted to the corners) on the same runs. \
             Beside each model file: <impl>-model.txt\n(its summary) and \
             <impl>-validation.txt (every validation run).\n";
    text
}
