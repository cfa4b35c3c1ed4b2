//! Making one run of a study: its command with a fresh log and a timeout, and its log profiled
//! into a datafile row (or why it gave none).
//!
//! A row is appended only after its run finished and its log was profiled, whole or not at all
//! ([`super::datafile::append`]): a study stopped at any instant (Ctrl-C, a crash, a kill, a
//! full disk) leaves only whole rows of finished runs, and the next start runs exactly the
//! points that have no row yet. Each run's command is a child `lca` owns ([`super::child`]).

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use pp::log::LogReader;
use pp::machine::Machine;
use pp::profile::{Category, Profile, profile_log};

use super::child::{self, Ended};
use super::file::{Study, format_value};
use super::plan::Point;
use super::watchdog::Watchdog;

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
        let profile = self
            .profile(predicted.as_deref().unwrap_or(log))
            .map_err(fail)?;
        let communicated = profile.totals.get(Category::Cl) > 0;
        let row = self.row(point, &profile).map_err(fail)?;
        Ok(Measured {
            row,
            warnings: profile.warnings,
            communicated,
        })
    }

    /// What `pp -l` does with the log: its profile, when the log is whole.
    fn profile(&self, log: &Path) -> Result<Profile, String> {
        let mut reader = LogReader::open(log).map_err(|e| e.to_string())?;
        profile_log(&mut reader, self.machine.clone(), None).whole(&log.display().to_string())
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
