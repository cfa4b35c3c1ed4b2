//! Running a study's points: the plan, one run with a fresh log and a timeout, its profile as a
//! datafile row, appending it, and resuming from what the datafile already holds.
//!
//! A row is appended whole or not at all (see [`append`]), only after its run finished and its
//! log was profiled: a study stopped at any instant (Ctrl-C, a crash, a kill, a full disk)
//! leaves only whole rows of finished runs, and the next start runs exactly the points that
//! have no row yet. Each run's command is a child `lca` owns ([`super::child`]).

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use pp::log::LogReader;
use pp::machine::Machine;
use pp::profile::{Category, Profile, profile_log};

use super::child::{self, Ended};
use super::file::{Study, format_value};
use super::watchdog::Watchdog;

/// Why a point is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// A point of the design the models are built from.
    Model,
    /// An extra point, measured only to check the models.
    Validate,
    /// A run `[decide]` chose to settle the crossover: a model run too.
    Decide,
}

impl Role {
    /// The datafile's `role` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Model => "model",
            Role::Validate => "validate",
            Role::Decide => "decide",
        }
    }
}

/// One run to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Index into the study's implementations.
    pub implementation: usize,
    /// Model or validation point.
    pub role: Role,
    /// One value per factor, in the study's factor order.
    pub values: Vec<f64>,
    /// 1-based replicate.
    pub replicate: usize,
}

/// What identifies a run in the datafile: `impl`, `role`, the factor values and `replicate`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    implementation: String,
    role: Role,
    values: Vec<String>,
    replicate: usize,
}

impl Key {
    /// The run this key names, when its implementation is one of the study's and its values
    /// are numbers.
    pub fn point(&self, study: &Study) -> Option<Point> {
        Some(Point {
            implementation: study
                .implementations
                .iter()
                .position(|i| i.name == self.implementation)?,
            role: self.role,
            values: self
                .values
                .iter()
                .map(|v| v.parse().ok())
                .collect::<Option<Vec<f64>>>()?,
            replicate: self.replicate,
        })
    }
}

impl Point {
    /// The point's key.
    pub fn key(&self, study: &Study) -> Key {
        Key {
            implementation: study.implementations[self.implementation].name.clone(),
            role: self.role,
            values: self.values.iter().map(|&v| format_value(v)).collect(),
            replicate: self.replicate,
        }
    }

    /// `dp n=256 p=4` (with `validate` or `decide`), the same for every replicate.
    pub fn place(&self, study: &Study) -> String {
        let mut label = study.implementations[self.implementation].name.clone();
        for (f, v) in study.factors.iter().zip(&self.values) {
            label += &format!(" {}={}", f.name, format_value(*v));
        }
        match self.role {
            Role::Validate => label += " (validate)",
            Role::Decide => label += " (decide)",
            Role::Model => {}
        }
        label
    }

    /// `dp n=256 p=4` (with `validate` and the replicate when they matter).
    pub fn label(&self, study: &Study) -> String {
        let mut label = self.place(study);
        if study.replicates > 1 || self.replicate > 1 {
            label += &format!(" #{}", self.replicate);
        }
        label
    }

    /// The file name stem of the run's log and output: `dp-model-n256-p4-r1`.
    pub fn stem(&self, study: &Study) -> String {
        let mut stem = format!(
            "{}-{}",
            study.implementations[self.implementation].name,
            self.role.as_str()
        );
        for (f, v) in study.factors.iter().zip(&self.values) {
            stem += &format!("-{}{}", f.name, format_value(*v));
        }
        stem + &format!("-r{}", self.replicate)
    }
}

/// Every run of the study: the design's points, then the validation points, each for every
/// implementation in turn (so a partial study has comparable runs of each); then all of them
/// again for each further replicate.
pub fn points(study: &Study) -> Result<Vec<Point>, design::PlanError> {
    let plan = design::plan(&study.factors, study.design, study.replicates, None)?;
    let mut points = Vec::new();
    for run in &plan.runs {
        for implementation in 0..study.implementations.len() {
            points.push(Point {
                implementation,
                role: Role::Model,
                values: run.values.clone(),
                replicate: run.replicate,
            });
        }
    }
    for values in &study.validate {
        for replicate in 1..=study.replicates {
            for implementation in 0..study.implementations.len() {
                points.push(Point {
                    implementation,
                    role: Role::Validate,
                    values: values.clone(),
                    replicate,
                });
            }
        }
    }
    // Replicate by replicate: every point once, then every point again, so that the spread
    // between a point's runs spans the whole study (the machine's drift over it too), not
    // only back-to-back repeats, and a study stopped early has every point once.
    points.sort_by_key(|p| p.replicate);
    Ok(points)
}

/// The key of a datafile line written by a study over `factors`, if it is one.
pub(crate) fn key_of_line(line: &str, factors: &[&str]) -> Option<Key> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let fields: BTreeMap<&str, &str> = line
        .split_whitespace()
        .filter_map(|t| t.split_once('='))
        .collect();
    let role = match *fields.get("role")? {
        "model" => Role::Model,
        "validate" => Role::Validate,
        "decide" => Role::Decide,
        _ => return None,
    };
    let values = factors
        .iter()
        .map(|f| fields.get(f)?.parse::<f64>().ok().map(format_value))
        .collect::<Option<Vec<String>>>()?;
    Some(Key {
        implementation: fields.get("impl")?.to_string(),
        role,
        values,
        replicate: fields.get("replicate")?.parse().ok()?,
    })
}

/// The longest line `lca study` reads in its datafile: its rows are a few hundred bytes.
const MAX_LINE: u64 = 1 << 16;

/// The keys of the runs the datafile already holds (none when it does not exist yet), read
/// line by line; a last line without its newline is not taken for a run made. The datafile must be a regular file: rows appended to a device or a FIFO
/// would be lost, and reading one might never end.
pub fn measured(study: &Study) -> Result<HashSet<Key>, String> {
    let path = &study.datafile;
    let cannot = |e: std::io::Error| format!("{}: cannot read: {e}", path.display());
    // Not blocking on a FIFO, so as to refuse it.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(cannot(e)),
    };
    regular(&file, path)?;
    let names: Vec<&str> = study.factors.iter().map(|f| f.name.as_str()).collect();
    let mut keys = HashSet::new();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(cannot)?;
        if n == 0 {
            break;
        }
        if line.len() as u64 > MAX_LINE {
            return Err(format!(
                "{}:{number}: a line longer than {MAX_LINE} bytes: not a datafile",
                path.display()
            ));
        }
        // A last line without its newline may be a row cut short: its run is made again.
        if line.ends_with(b"\n") {
            keys.extend(key_of_line(&String::from_utf8_lossy(&line), &names));
        }
    }
    Ok(keys)
}

/// An error unless the open file is a regular file.
fn regular(file: &File, path: &Path) -> Result<(), String> {
    let kind = file
        .metadata()
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?
        .file_type();
    if kind.is_file() {
        return Ok(());
    }
    Err(format!(
        "{}: the datafile is not a regular file (a {}): name a file in the study file's \
         `datafile`",
        path.display(),
        file_kind(kind)
    ))
}

/// What a file type is, in words.
fn file_kind(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "directory"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// The datafile's text with only the rows of `keys` kept (the others blanked, so line numbers
/// stay those of the file): what the models are built from and checked against. Also the
/// number of rows kept. (`role` is then one value and `replicate` never a factor.)
pub fn select(text: &str, study: &Study, keys: &HashSet<Key>) -> (String, usize) {
    let names: Vec<&str> = study.factors.iter().map(|f| f.name.as_str()).collect();
    let mut kept = 0;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if key_of_line(line, &names).is_some_and(|k| keys.contains(&k)) {
            kept += 1;
            out += line;
        }
        out.push('\n');
    }
    (out, kept)
}

/// Why a run gave no row.
#[derive(Debug, Clone)]
pub struct Failure {
    /// One line: the exit status, the timeout, or what is wrong with the log.
    pub reason: String,
    /// The last lines of the command's standard error.
    pub stderr: String,
    /// Where its whole standard error is.
    pub stderr_path: PathBuf,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)?;
        if self.stderr.trim().is_empty() {
            write!(f, " (no standard error)")
        } else {
            write!(f, "; standard error ({}) ends:", self.stderr_path.display())?;
            for line in self.stderr.lines() {
                write!(f, "\n    {line}")?;
            }
            Ok(())
        }
    }
}

/// How a run ended.
#[derive(Debug)]
pub enum Ran {
    /// It gave a row.
    Measured(Measured),
    /// It gave none.
    Failed(Failure),
    /// `lca` received this stopping signal (SIGINT, SIGTERM, SIGHUP) and killed it.
    Stopped(i32),
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct Measured {
    /// The datafile row (without its newline).
    pub row: String,
    /// What the profiler had to say about the log.
    pub warnings: Vec<String>,
    /// Whether the run moved data (so a machine calibration would have mattered).
    pub communicated: bool,
}

/// Runs points: the study, the programs behind `{lca}` and `{pp}`, the machine calibration.
#[derive(Debug)]
pub struct Runner<'a> {
    study: &'a Study,
    lca: String,
    pp: String,
    machine: Option<Machine>,
    logs: PathBuf,
    watchdog: Watchdog,
}

impl<'a> Runner<'a> {
    /// A runner writing logs and outputs under `<out>/logs`.
    pub fn new(
        study: &'a Study,
        lca: String,
        pp: String,
        machine: Option<Machine>,
    ) -> std::io::Result<Self> {
        let logs = study.out.join("logs");
        std::fs::create_dir_all(&logs)?;
        Ok(Runner {
            study,
            lca,
            pp,
            machine,
            logs,
            watchdog: Watchdog::start()?,
        })
    }

    /// Another runner like this one, with a watchdog of its own: for runs made at the same
    /// time (`--jobs`), each a child of its own runner.
    pub fn another(&self) -> std::io::Result<Runner<'a>> {
        Ok(Runner {
            study: self.study,
            lca: self.lca.clone(),
            pp: self.pp.clone(),
            machine: self.machine.clone(),
            logs: self.logs.clone(),
            watchdog: Watchdog::start()?,
        })
    }

    /// The study it runs.
    pub fn study(&self) -> &'a Study {
        self.study
    }

    /// The folder of the runs' logs, standard outputs and errors.
    pub fn logs(&self) -> &Path {
        &self.logs
    }

    /// The argument vector of a point.
    pub fn argv(&self, point: &Point) -> Vec<String> {
        let study = self.study;
        let implementation = &study.implementations[point.implementation];
        let mut values: BTreeMap<&str, String> = BTreeMap::new();
        values.insert("lca", self.lca.clone());
        values.insert("pp", self.pp.clone());
        values.insert("impl", implementation.name.clone());
        values.insert("replicate", point.replicate.to_string());
        for (f, v) in study.factors.iter().zip(&point.values) {
            values.insert(f.name.as_str(), format_value(*v));
        }
        implementation
            .command
            .iter()
            .map(|t| t.expand(&values))
            .collect()
    }

    /// Runs a point with a fresh log: its datafile row, why it gave none, or the stopping
    /// signal that ended it. The recorder's temporary log (`<stem>.log.tmp`, left by a run
    /// that did not finish) is removed on every way out.
    pub fn run(&self, point: &Point) -> Ran {
        let stem = point.stem(self.study);
        let log = self.logs.join(format!("{stem}.log"));
        let mut tmp = log.clone().into_os_string();
        tmp.push(".tmp");
        let _ = std::fs::remove_file(&tmp);
        let ran = match self.attempt(point, &stem, &log) {
            Ok(measured) => Ran::Measured(measured),
            Err(ran) => ran,
        };
        let _ = std::fs::remove_file(&tmp);
        ran
    }

    fn attempt(&self, point: &Point, stem: &str, log: &Path) -> Result<Measured, Ran> {
        let study = self.study;
        let implementation = &study.implementations[point.implementation];
        let stdout_path = self.logs.join(format!("{stem}.out"));
        let stderr_path = self.logs.join(format!("{stem}.err"));
        let fail = |reason: String| failed(reason, &stderr_path);
        let _ = std::fs::remove_file(log);
        let argv = self.argv(point);
        let create = |path: &Path| {
            files::output::check(path)
                .map_err(|e| e.to_string())
                .and_then(|path| {
                    File::create(&path)
                        .map_err(|e| format!("{}: cannot write: {e}", path.display()))
                })
                .map_err(fail)
        };
        let (stdout, stderr) = (create(&stdout_path)?, create(&stderr_path)?);
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .env("PP_LOG", log)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr);
        let mut child = child::spawn(&mut command, &self.watchdog)
            .map_err(|e| fail(format!("cannot start '{}': {e}", argv[0])))?;
        // The timeout was checked when the study file was read; the cap is for the type.
        let timeout =
            Duration::try_from_secs_f64(implementation.timeout_s).unwrap_or(Duration::MAX);
        let status = match child::wait(&mut child, timeout, &self.watchdog) {
            Ok(Ended::Exited(status)) => status,
            Ok(Ended::TimedOut) => {
                return Err(fail(format!(
                    "timed out after {} s and was killed",
                    implementation.timeout_s
                )));
            }
            Ok(Ended::Stopped(signal)) => return Err(Ran::Stopped(signal)),
            Err(e) => return Err(fail(format!("waiting for the command: {e}"))),
        };
        if !status.success() {
            return Err(fail(exit_reason(status)));
        }
        self.measure(point, log, &stderr_path)
    }

    /// The row of a run whose command exited with status 0: its log (`log`) profiled. What is
    /// wrong with the log is a failure reported with the end of the command's standard error
    /// (`stderr_path`).
    pub fn measure(&self, point: &Point, log: &Path, stderr_path: &Path) -> Result<Measured, Ran> {
        let fail = |reason: String| failed(reason, stderr_path);
        if !log.exists() {
            return Err(fail(format!(
                "the command wrote no log to $PP_LOG ({})",
                log.display()
            )));
        }
        // [whatif]: the row is the predicted run's, from this run's log.
        let names: Vec<&str> = self.study.factors.iter().map(|f| f.name.as_str()).collect();
        let predicted = match &self.study.whatif {
            Some(w) if w.applies(&names, &point.values) => {
                let predicted = log.with_extension("predicted.log");
                super::whatif::predict(w, log, &predicted).map_err(&fail)?;
                Some(predicted)
            }
            _ => None,
        };
        let (profile, mut warnings) = self
            .profile(predicted.as_deref().unwrap_or(log))
            .map_err(fail)?;
        let communicated = profile.totals.get(Category::Cl) > 0;
        let row = self.row(point, &profile).map_err(fail)?;
        warnings.extend(profile.warnings.iter().cloned());
        Ok(Measured {
            row,
            warnings,
            communicated,
        })
    }

    /// What `pp -l` does with the log.
    fn profile(&self, log: &Path) -> Result<(Profile, Vec<String>), String> {
        let mut reader = LogReader::open(log).map_err(|e| e.to_string())?;
        let profile = profile_log(&mut reader, self.machine.clone(), None)
            .whole(&log.display().to_string())?;
        Ok((profile, Vec::new()))
    }

    /// The profile's datafile row with the study's fields: `impl` (the study's name wins),
    /// the factors (a log that says otherwise is an error), `role` and `replicate`.
    fn row(&self, point: &Point, profile: &Profile) -> Result<String, String> {
        let study = self.study;
        let implementation = &study.implementations[point.implementation];
        // The same refusals as `pp -l`: an empty run window, a run parameter named like a
        // computed field.
        let row = profile.checked_datafile_row().map_err(|e| e.to_string())?;
        let mut fields = vec![format!("impl={}", implementation.name)];
        let mut present: HashSet<String> = HashSet::new();
        for token in row.split_whitespace() {
            let (key, value) = token.split_once('=').unwrap_or((token, ""));
            if matches!(key, "impl" | "role" | "replicate") {
                continue;
            }
            if let Some(i) = study.factors.iter().position(|f| f.name == key) {
                let wanted = point.values[i];
                let same = value
                    .parse::<f64>()
                    .is_ok_and(|v| (v - wanted).abs() <= 1e-9 * wanted.abs().max(1.0));
                if !same {
                    return Err(format!(
                        "the log says {key}={value} but the run was for {key}={}",
                        format_value(wanted)
                    ));
                }
            }
            present.insert(key.to_string());
            fields.push(token.to_string());
        }
        for (f, v) in study.factors.iter().zip(&point.values) {
            if !present.contains(&f.name) {
                fields.push(format!("{}={}", f.name, format_value(*v)));
            }
        }
        fields.push(format!("role={}", point.role.as_str()));
        fields.push(format!("replicate={}", point.replicate));
        Ok(fields.join(" "))
    }
}

/// A run that gave no row, with the end of its standard error.
pub fn failed(reason: String, stderr_path: &Path) -> Ran {
    Ran::Failed(Failure {
        stderr: tail(stderr_path, 10),
        reason,
        stderr_path: stderr_path.to_path_buf(),
    })
}

fn exit_reason(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("failed ({status})"),
    }
}

/// The last `lines` lines of a file (at most 4 KiB of it).
pub fn tail(path: &Path, lines: usize) -> String {
    // Not waiting on a FIFO, and only a regular file's end.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    let Ok(mut file) = file.and_then(|f| {
        if f.metadata()?.is_file() {
            Ok(f)
        } else {
            Err(std::io::ErrorKind::InvalidInput.into())
        }
    }) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(4096)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.trim_end().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Appends a row to the datafile, all or nothing: with one write on a file opened for
/// appending (after a newline when the file does not end with one), cut back to its length
/// before when that fails (a full disk, a file size limit: [`files::append::write_whole`]), so
/// neither a stopped study nor a failed write leaves part of a row.
pub fn append(datafile: &Path, row: &str) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("{}: cannot append: {e}", datafile.display());
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(datafile)
        .map_err(cannot)?;
    regular(&file, datafile)?;
    let len = file.metadata().map_err(cannot)?.len();
    let mut line = String::with_capacity(row.len() + 2);
    if len > 0 {
        let mut last = [0u8];
        file.seek(SeekFrom::Start(len - 1))
            .and_then(|_| file.read_exact(&mut last))
            .map_err(cannot)?;
        if last[0] != b'\n' {
            line.push('\n');
        }
    }
    line += row;
    line.push('\n');
    files::append::write_whole(&file, &datafile.display().to_string(), line.as_bytes())
        .map_err(|e| e.to_string())
}
