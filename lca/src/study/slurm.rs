//! `lca study --dispatch slurm`: each run a Slurm job, a round's runs submitted as job arrays
//! (one per distinct resource request: an array's tasks all ask for the same), and the rows
//! profiled and appended by `lca` as jobs end, exactly as local runs' are.
//!
//! Files, under the study's output folder (which every node must see):
//! * `slurm/<study>-<ms>-<k>.sh`: an array's job script. Task `i` runs one point's command
//!   with `PP_LOG=<out>/logs/<stem>.log` and its standard output and error in
//!   `<out>/logs/<stem>.out` and `.err` (as a local run), under `timeout` at the
//!   implementation's `timeout_s`, then writes its **completion file**
//!   `slurm/done/<stem>`: `job=<array>_<task> status=<exit status> begun=<s> ended=<s>`,
//!   whole (written aside, then renamed).
//! * `slurm/<array>_<task>.out` and `.err`: what Slurm itself says of a job (a time limit, a
//!   cancellation).
//! * `slurm/jobs`: one line `<array>_<task> <stem>` per submitted job, appended as soon as
//!   `sbatch` answers.
//!
//! A job has ended when its completion file names it. A job that leaves `squeue` without one
//! (cancelled, killed at Slurm's time limit, its node lost) is reported failed after
//! [`GRACE`]: `sacct` needs accounting storage, which many small clusters lack.
//!
//! Resuming: a point with a row is never submitted (as locally). A point without one whose
//! recorded job is still in `squeue` is waited for, not submitted again; whose recorded job
//! wrote a completion file while no `lca` watched is profiled then; any other is submitted.
//! Ctrl-C (SIGINT, SIGTERM, SIGHUP) cancels the study's jobs (`scancel`) and says so.
//!
//! A job Slurm accepted but will never start as the cluster is configured (pending with a
//! reason of [`never_starts`]: a request beyond what the partition's nodes have, say) is
//! reported once; when only such jobs are left, the study cancels them and stops, naming
//! the runs, their resources and Slurm's reason.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use indicatif::ProgressBar;

use super::file::{Study, format_value};
use super::plan::Point;
use super::progress::say;
use super::runner::{self, Ran, Runner};
use super::signals;

/// How long a job may be gone from `squeue` without a completion file before it is reported
/// lost: a shared file system may show a file written on a node some seconds late.
const GRACE: Duration = Duration::from_secs(30);

/// How often `squeue` is asked which jobs are still there.
const POLL: Duration = Duration::from_secs(2);

/// How often the completion files are looked for.
const LOOK: Duration = Duration::from_millis(100);

/// The most tasks of one job array (Slurm's default `MaxArraySize` is 1001).
const MAX_ARRAY: usize = 1000;

/// How long every job left must have pended with a reason of [`never_starts`] before the
/// study gives up on them (a reason seen once may be the scheduler's first look).
const HOPELESS: Duration = Duration::from_secs(10);

/// A submitted run being waited for.
struct Waiting<'p> {
    point: &'p Point,
    stem: String,
    /// `<array>_<task>`.
    job: String,
    /// When `squeue` first did not list it.
    gone: Option<Instant>,
    /// Slurm's reason for not starting it, when it is one of [`never_starts`], and since
    /// when `squeue` has given it.
    blocked: Option<(String, Instant)>,
}

/// The completion file of a run.
struct Done {
    job: String,
    status: i32,
    seconds: f64,
}

/// The study's Slurm files.
struct Folder {
    /// `<out>/slurm`, absolute.
    dir: PathBuf,
    /// `<out>/logs`, absolute.
    logs: PathBuf,
}

impl Folder {
    /// The study's Slurm folder, with its `done` folder, created.
    fn create(study: &Study, runner: &Runner) -> Result<Folder> {
        let absolute = |p: &Path| {
            std::path::absolute(p).with_context(|| format!("{}: no absolute path", p.display()))
        };
        let folder = Folder {
            dir: absolute(&study.out.join("slurm"))?,
            logs: absolute(runner.logs())?,
        };
        std::fs::create_dir_all(folder.dir.join("done"))
            .with_context(|| format!("{}: cannot create", folder.dir.display()))?;
        Ok(folder)
    }

    fn done_path(&self, stem: &str) -> PathBuf {
        self.dir.join("done").join(stem)
    }

    /// The completion file of `stem`, when there is a whole one.
    fn done(&self, stem: &str) -> Option<Done> {
        let text = std::fs::read_to_string(self.done_path(stem)).ok()?;
        let fields: HashMap<&str, &str> = text
            .split_whitespace()
            .filter_map(|t| t.split_once('='))
            .collect();
        let number = |k: &str| fields.get(k).and_then(|v| v.parse::<f64>().ok());
        Some(Done {
            job: fields.get("job")?.to_string(),
            status: fields.get("status")?.parse().ok()?,
            seconds: (number("ended")? - number("begun")?).max(0.0),
        })
    }

    /// Each stem's last recorded job.
    fn recorded(&self) -> Result<HashMap<String, String>> {
        let path = self.dir.join("jobs");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => bail!("{}: cannot read: {e}", path.display()),
        };
        Ok(text
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(job, stem)| (stem.to_string(), job.to_string()))
            .collect())
    }

    /// Records submitted jobs, one line each.
    fn record(&self, jobs: &[(String, String)]) -> Result<()> {
        let path = self.dir.join("jobs");
        let text: String = jobs
            .iter()
            .map(|(job, stem)| format!("{job} {stem}\n"))
            .collect();
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .with_context(|| format!("{}: cannot record the submitted jobs", path.display()))
    }
}

/// Handed each run's end: its row, its failure, or the study stopped.
type Record<'r> = dyn FnMut(&Point, Ran, f64) -> Result<()> + 'r;

/// Makes the runs of `round` as Slurm jobs, handing each end to `record`.
pub fn make(
    runner: &Runner,
    study: &Study,
    round: &[Point],
    bar: &ProgressBar,
    record: &mut Record,
) -> Result<()> {
    if round.is_empty() {
        return Ok(());
    }
    let folder = Folder::create(study, runner)?;
    let (mut waiting, submit) = resume(runner, study, &folder, round, bar, record)?;
    let adopted = waiting.len();
    let arrays = submit_all(study, runner, &folder, &submit, &mut waiting)?;
    let mut line = format!(
        "lca study {}: {} jobs submitted to Slurm",
        study.name,
        waiting.len() - adopted
    );
    if !arrays.is_empty() {
        let _ = write!(line, " (job arrays {})", arrays.join(", "));
    }
    if adopted > 0 {
        let _ = write!(
            line,
            "; {adopted} from an earlier start still queued or running, not submitted again"
        );
    }
    say(bar, line);
    wait(runner, study, &folder, waiting, bar, record)
}

/// Sorts the points of `round` by what an earlier start left of them: a job that finished
/// while no `lca` watched gives its row now (`record`); one still queued or running is waited
/// for (the first list); any other point is to submit (the second).
fn resume<'p>(
    runner: &Runner,
    study: &Study,
    folder: &Folder,
    round: &'p [Point],
    bar: &ProgressBar,
    record: &mut Record,
) -> Result<(Vec<Waiting<'p>>, Vec<&'p Point>)> {
    let recorded = folder.recorded()?;
    let queued = squeue()?;
    let mut waiting: Vec<Waiting> = Vec::new();
    let mut submit: Vec<&Point> = Vec::new();
    for point in round {
        let stem = point.stem(study);
        let job = recorded.get(&stem);
        if let Some(done) = folder.done(&stem).filter(|d| Some(&d.job) == job) {
            let _ = std::fs::remove_file(folder.done_path(&stem));
            match finish(runner, folder, point, &stem, &done) {
                Ran::Measured(m) => record(point, Ran::Measured(m), done.seconds)?,
                ran => {
                    if let Ran::Failed(f) = ran {
                        say(
                            bar,
                            format!(
                                "lca study: {}: its job {} from an earlier start gave no row \
                                 ({}); submitting it again",
                                point.label(study),
                                done.job,
                                f.reason
                            ),
                        );
                    }
                    submit.push(point);
                }
            }
        } else if let Some(job) = job.filter(|j| queued.contains_key(*j)) {
            waiting.push(Waiting {
                point,
                stem,
                job: job.clone(),
                gone: None,
                blocked: None,
            });
        } else {
            submit.push(point);
        }
    }
    Ok((waiting, submit))
}

/// Waits for the `waiting` jobs, handing each end to `record` as its completion file appears
/// (or as it is found lost); a stopping signal cancels those left, and so does finding that
/// Slurm will start none of them ([`hopeless`]).
fn wait(
    runner: &Runner,
    study: &Study,
    folder: &Folder,
    mut waiting: Vec<Waiting>,
    bar: &ProgressBar,
    record: &mut Record,
) -> Result<()> {
    let mut polled = Instant::now();
    let mut squeue_failed = false;
    let mut warned: HashSet<String> = HashSet::new();
    while !waiting.is_empty() {
        if let Some(signal) = signals::caught() {
            cancel(&waiting, bar);
            record(waiting[0].point, Ran::Stopped(signal), 0.0)?;
            unreachable!("a stopping signal ends the study");
        }
        bar.set_message(format!("{} Slurm jobs queued or running", waiting.len()));
        let mut i = 0;
        while i < waiting.len() {
            match ended(runner, folder, &waiting[i]) {
                Some((ran, seconds)) => {
                    // `remove`, not `swap_remove`: the jobs left stay in submission order, so
                    // what the study says about them names the same first run every time.
                    let w = waiting.remove(i);
                    record(w.point, ran, seconds)?;
                    let _ = std::fs::remove_file(folder.done_path(&w.stem));
                }
                None => i += 1,
            }
        }
        if polled.elapsed() >= POLL {
            polled = Instant::now();
            match squeue() {
                Ok(queued) => {
                    squeue_failed = false;
                    for w in &mut waiting {
                        let reason = queued.get(&w.job);
                        if reason.is_some() {
                            w.gone = None;
                        } else {
                            w.gone.get_or_insert_with(Instant::now);
                        }
                        match reason
                            .and_then(|r| r.as_deref())
                            .filter(|r| never_starts(r))
                        {
                            Some(r) if w.blocked.as_ref().is_some_and(|(b, _)| b == r) => {}
                            Some(r) => w.blocked = Some((r.to_string(), Instant::now())),
                            None => w.blocked = None,
                        }
                    }
                    for line in blocked_news(study, &waiting, &mut warned) {
                        say(bar, line);
                    }
                    if let Some(why) = hopeless(study, &waiting) {
                        cancel(&waiting, bar);
                        bail!("{why}");
                    }
                }
                Err(e) if !squeue_failed => {
                    squeue_failed = true;
                    say(bar, format!("lca study: warning: {e:#}; asking again"));
                }
                Err(_) => {}
            }
        }
        std::thread::sleep(LOOK);
    }
    Ok(())
}

/// How a waited-for job ended, with its seconds, if it has: its completion file, or gone from
/// `squeue` for longer than [`GRACE`] without one.
fn ended(runner: &Runner, folder: &Folder, w: &Waiting) -> Option<(Ran, f64)> {
    match folder.done(&w.stem) {
        Some(done) if done.job == w.job => Some((
            finish(runner, folder, w.point, &w.stem, &done),
            done.seconds,
        )),
        _ if w.gone.is_some_and(|t| t.elapsed() >= GRACE) => {
            let err = folder.dir.join(format!("{}.err", w.job));
            let reason = format!(
                "job {} left Slurm's queue without writing its completion file \
                 (cancelled, past its time limit, or its node failed)",
                w.job
            );
            Some((runner::failed(reason, &err), 0.0))
        }
        _ => None,
    }
}

/// What a run whose completion file is `done` gave: its row, or why none.
fn finish(runner: &Runner, folder: &Folder, point: &Point, stem: &str, done: &Done) -> Ran {
    let log = folder.logs.join(format!("{stem}.log"));
    let mut stderr = folder.logs.join(format!("{stem}.err"));
    if runner::tail(&stderr, 1).is_empty() {
        // Nothing from the command: what Slurm or the job script said, if anything.
        stderr = folder.dir.join(format!("{}.err", done.job));
    }
    let reason = match done.status {
        0 => {
            return match runner.measure(point, &log, &stderr) {
                Ok(measured) => Ran::Measured(measured),
                Err(ran) => ran,
            };
        }
        124 => format!(
            "timed out after {} s and was killed",
            format_value(runner_timeout(runner, point))
        ),
        s if s > 128 => format!("killed by signal {}", s - 128),
        s => format!("exited with status {s}"),
    };
    runner::failed(format!("job {}: {reason}", done.job), &stderr)
}

fn runner_timeout(runner: &Runner, point: &Point) -> f64 {
    runner.study().implementations[point.implementation].timeout_s
}

/// Submits the points as job arrays, one per distinct resource request (at most
/// [`MAX_ARRAY`] tasks each), recording each job; returns the arrays' ids. On an error no
/// job of this call is left queued.
fn submit_all<'p>(
    study: &Study,
    runner: &Runner,
    folder: &Folder,
    points: &[&'p Point],
    waiting: &mut Vec<Waiting<'p>>,
) -> Result<Vec<String>> {
    // Every point's resources first: a mistake stops the study before anything is submitted.
    let mut groups: BTreeMap<Vec<String>, Vec<&Point>> = BTreeMap::new();
    for &point in points {
        groups
            .entry(resources(study, point)?)
            .or_default()
            .push(point);
    }
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut arrays = Vec::new();
    let mut submitted: Vec<String> = Vec::new();
    let chunks = groups
        .iter()
        .flat_map(|(r, ps)| ps.chunks(MAX_ARRAY).map(move |c| (r, c)));
    for (k, (resources, chunk)) in chunks.enumerate() {
        let script = folder.dir.join(format!("{}-{stamp}-{k}.sh", study.name));
        let result = write_script(study, runner, folder, chunk, &script)
            .and_then(|()| sbatch(study, folder, &cwd, resources, chunk, &script));
        let array = match result {
            Ok(array) => array,
            Err(e) => {
                if !submitted.is_empty() {
                    let _ = scancel(&submitted);
                }
                return Err(e);
            }
        };
        let jobs: Vec<(String, String)> = chunk
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("{array}_{i}"), p.stem(study)))
            .collect();
        submitted.extend(jobs.iter().map(|(j, _)| j.clone()));
        if let Err(e) = folder.record(&jobs) {
            let _ = scancel(&submitted);
            return Err(e);
        }
        for ((job, stem), &point) in jobs.into_iter().zip(chunk) {
            // A completion file left by an earlier job of this point is not this job's.
            let _ = std::fs::remove_file(folder.done_path(&stem));
            waiting.push(Waiting {
                point,
                stem,
                job,
                gone: None,
                blocked: None,
            });
        }
        arrays.push(array);
    }
    Ok(arrays)
}

/// The `sbatch` options of a point's implementation's resources, expanded.
fn resources(study: &Study, point: &Point) -> Result<Vec<String>> {
    let implementation = &study.implementations[point.implementation];
    let mut values: BTreeMap<&str, String> = BTreeMap::new();
    values.insert("impl", implementation.name.clone());
    values.insert("replicate", point.replicate.to_string());
    for (f, v) in study.factors.iter().zip(&point.values) {
        values.insert(f.name.as_str(), format_value(*v));
    }
    implementation
        .resources
        .iter()
        .map(|(option, template)| {
            let value = template.expand(&values);
            let count = *option != "--mem";
            if count && !value.parse::<u64>().is_ok_and(|n| n > 0) {
                bail!(
                    "implementation '{}': {option} is \"{}\" for {}: expected a positive integer",
                    implementation.name,
                    files::quote::excerpt(&value, 40),
                    point.label(study)
                );
            }
            Ok(format!("{option}={value}"))
        })
        .collect()
}

/// A word as `sh` reads it back unchanged.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Writes the job script of an array whose task `i` runs `points[i]`.
fn write_script(
    study: &Study,
    runner: &Runner,
    folder: &Folder,
    points: &[&Point],
    script: &Path,
) -> Result<()> {
    let mut text = format!(
        "#!/bin/sh\n# lca study {}: {} runs, array task i runs the i-th (written by lca study; \
         docs/slurm.md)\nlogs={}\ndone_dir={}\ncase \"$SLURM_ARRAY_TASK_ID\" in\n",
        study.name,
        points.len(),
        quote(&folder.logs.display().to_string()),
        quote(&folder.dir.join("done").display().to_string()),
    );
    for (i, point) in points.iter().enumerate() {
        let argv = runner.argv(point);
        if argv.iter().any(|a| a.contains('\0')) {
            bail!(
                "{}: the command has a NUL character, which no program can be given",
                point.label(study)
            );
        }
        let words: Vec<String> = argv.iter().map(|a| quote(a)).collect();
        let _ = writeln!(
            text,
            "{i}) stem={}; limit={}; set -- {} ;;",
            quote(&point.stem(study)),
            format_value(study.implementations[point.implementation].timeout_s),
            words.join(" ")
        );
    }
    text += r#"*) echo "lca study: no run for array task $SLURM_ARRAY_TASK_ID" >&2; exit 2 ;;
esac
rm -f "$logs/$stem.log" "$logs/$stem.log.tmp"
begun=$(date +%s.%N)
PP_LOG="$logs/$stem.log" timeout -k 5 "$limit" "$@" </dev/null >"$logs/$stem.out" 2>"$logs/$stem.err"
status=$?
ended=$(date +%s.%N)
rm -f "$logs/$stem.log.tmp"
printf 'job=%s_%s status=%s begun=%s ended=%s\n' "$SLURM_ARRAY_JOB_ID" "$SLURM_ARRAY_TASK_ID" \
  "$status" "$begun" "$ended" >"$done_dir/.$stem.$SLURM_JOB_ID" &&
  mv -f "$done_dir/.$stem.$SLURM_JOB_ID" "$done_dir/$stem"
"#;
    files::output::write(script, text.as_bytes()).map_err(|e| anyhow!("{e}"))
}

/// A Slurm command, in a process group of its own (a Ctrl-C at the terminal reaches `lca`,
/// which then cancels what was submitted, and not `sbatch` halfway through).
fn slurm(program: &str, args: &[String]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .map_err(|e| {
            anyhow!(
                "cannot run {program}: {e} (is Slurm installed here? tools/slurm-local.sh start \
                 runs a single-node one)"
            )
        })?;
    if !out.status.success() {
        let said: Vec<String> = String::from_utf8_lossy(&out.stderr)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        bail!(
            "{program} failed ({}): {}",
            out.status,
            files::quote::excerpt(&said.join("; "), 300)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Submits an array; its job id.
fn sbatch(
    study: &Study,
    folder: &Folder,
    cwd: &Path,
    resources: &[String],
    points: &[&Point],
    script: &Path,
) -> Result<String> {
    let options = &study.slurm;
    let mut array = format!("--array=0-{}", points.len() - 1);
    if let Some(n) = options.max_running {
        let _ = write!(array, "%{n}");
    }
    // Slurm's own limit, a backstop: the script's `timeout` ends a run first.
    let longest = points
        .iter()
        .map(|p| study.implementations[p.implementation].timeout_s)
        .fold(0.0, f64::max);
    let minutes = ((longest + 60.0) / 60.0).ceil() as u64;
    let mut args = vec![
        "--parsable".to_string(),
        array,
        format!("--job-name=lca-{}", study.name),
        format!("--chdir={}", cwd.display()),
        format!("--output={}", folder.dir.join("%A_%a.out").display()),
        format!("--error={}", folder.dir.join("%A_%a.err").display()),
        format!(
            "--time={}",
            options.time.clone().unwrap_or(minutes.to_string())
        ),
    ];
    if let Some(p) = &options.partition {
        args.push(format!("--partition={p}"));
    }
    if let Some(a) = &options.account {
        args.push(format!("--account={a}"));
    }
    args.extend(resources.iter().cloned());
    args.extend(options.options.iter().cloned());
    args.push(script.display().to_string());
    let out = slurm("sbatch", &args)?;
    // `--parsable`: `<id>` or `<id>;<cluster>`.
    let id = out.trim().split(';').next().unwrap_or("");
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        bail!(
            "sbatch answered '{}', not a job id",
            files::quote::excerpt(out.trim(), 80)
        );
    }
    Ok(id.to_string())
}

/// This user's jobs in Slurm's queue, each array task as `<array>_<task>`, with the reason
/// a pending one has not started (none for a job that runs).
fn squeue() -> Result<HashMap<String, Option<String>>> {
    let args = ["-h", "-r", "--me", "-o", "%i %T %r"].map(String::from);
    Ok(slurm("squeue", &args)?
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let job = words.next()?.to_string();
            let pending = words.next() == Some("PENDING");
            let reason = words.next().filter(|_| pending).map(str::to_string);
            Some((job, reason))
        })
        .collect())
}

/// What a pending job's reason means, when it is one Slurm will not clear while the cluster's
/// configuration and the job's request stay as they are
/// ([Slurm's reason codes](https://slurm.schedmd.com/job_reason_codes.html)); the reasons of a
/// busy queue (`Resources`, `Priority`, the aggregate `Grp` limits, nodes down) are not.
fn never_starts(reason: &str) -> bool {
    meaning(reason).is_some()
}

fn meaning(reason: &str) -> Option<&'static str> {
    Some(match reason {
        "PartitionConfig" => "the request is beyond what the partition or its nodes have",
        "BadConstraints" => "no node meets the request's constraints",
        "PartitionTimeLimit" => "the time limit is beyond the partition's",
        "AccountNotAllowed" => "the account may not use the partition",
        "QOSNotAllowed" => "the QOS may not use the partition",
        "InvalidAccount" => "the account is not valid",
        "InvalidQOS" => "the QOS is not valid",
        "DependencyNeverSatisfied" => "its dependency can never be met",
        r if (r.starts_with("QOSMax") || r.starts_with("AssocMax"))
            && (r.contains("PerJob") || r.contains("PerNode")) =>
        {
            "the request is beyond a per-job or per-node limit"
        }
        _ => return None,
    })
}

/// The jobs pending for a reason of [`never_starts`], by reason: a few of their runs' labels,
/// with the resources they ask for, and how many there are.
fn blocked_by_reason(study: &Study, waiting: &[Waiting]) -> BTreeMap<String, (String, usize)> {
    let mut by: BTreeMap<String, Vec<&Waiting>> = BTreeMap::new();
    for w in waiting {
        if let Some((reason, _)) = &w.blocked {
            by.entry(reason.clone()).or_default().push(w);
        }
    }
    by.into_iter()
        .map(|(reason, ws)| {
            let mut asks: Vec<String> = Vec::new();
            for w in &ws {
                let r = resources(study, w.point).unwrap_or_default().join(" ");
                let r = if r.is_empty() {
                    "no resource options".to_string()
                } else {
                    r
                };
                if !asks.contains(&r) {
                    asks.push(r);
                }
            }
            let first = ws[0].point.label(study);
            let runs = match ws.len() {
                1 => first,
                n => format!("{first} and {} more", n - 1),
            };
            let asks = if asks.len() > 3 {
                format!("{}, ...", asks[..3].join(", "))
            } else {
                asks.join(", ")
            };
            let said = format!(
                "{runs} ({asks}) pend with reason {reason}: {}",
                meaning(&reason).unwrap_or("")
            );
            (reason, (said, ws.len()))
        })
        .collect()
}

/// A warning for each reason of [`never_starts`] first seen among the waited-for jobs.
fn blocked_news(study: &Study, waiting: &[Waiting], warned: &mut HashSet<String>) -> Vec<String> {
    blocked_by_reason(study, waiting)
        .into_iter()
        .filter(|(reason, _)| warned.insert(reason.clone()))
        .map(|(_, (said, n))| {
            format!(
                "lca study: warning: Slurm will not start {n} of the study's jobs as the cluster \
                 is configured: {said}; the other runs go on, and the study stops if only these \
                 are left"
            )
        })
        .collect()
}

/// Why the study stops, when every job left has pended for [`HOPELESS`] with a reason of
/// [`never_starts`].
fn hopeless(study: &Study, waiting: &[Waiting]) -> Option<String> {
    let all = waiting.iter().all(|w| {
        w.blocked
            .as_ref()
            .is_some_and(|(_, t)| t.elapsed() >= HOPELESS)
    });
    if !all || waiting.is_empty() {
        return None;
    }
    let said: Vec<String> = blocked_by_reason(study, waiting)
        .into_values()
        .map(|(said, _)| said)
        .collect();
    Some(format!(
        "Slurm will not start the study's last {} jobs as the cluster is configured: {}. They \
         are cancelled; change the implementations' resources, [slurm] or the factors' levels, \
         and the same command resumes without losing a finished run",
        waiting.len(),
        said.join("; ")
    ))
}

fn scancel(jobs: &[String]) -> Result<String> {
    slurm("scancel", jobs)
}

/// Cancels the jobs still waited for, saying so.
fn cancel(waiting: &[Waiting], bar: &ProgressBar) {
    let jobs: Vec<String> = waiting.iter().map(|w| w.job.clone()).collect();
    let mut arrays: Vec<&str> = jobs.iter().filter_map(|j| j.split('_').next()).collect();
    arrays.dedup();
    let line = match scancel(&jobs) {
        Ok(_) => format!(
            "lca study: cancelled the study's {} Slurm jobs still queued or running (scancel, \
             arrays {})",
            jobs.len(),
            arrays.join(", ")
        ),
        Err(e) => format!(
            "lca study: could not cancel the study's {} Slurm jobs (arrays {}): {e:#}",
            jobs.len(),
            arrays.join(", ")
        ),
    };
    say(bar, line);
}
