//! The machine file (docs/machine-file.md): what `pp calibrate` measured, and the ideal times the
//! profiler derives from it — a `comm` interval moving `bytes` ideally takes the calibrated
//! single-thread copy time; what it takes beyond that is resource contention (`rc.comm`).
//!
//! TOML, written by `pp calibrate`, read by `pp --machine FILE` (default
//! `$PP_MACHINE`, else `$XDG_CONFIG_HOME/pp/machine.toml`, else `~/.config/pp/machine.toml`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Coefficient of variation above which a measured figure is flagged as unreliable.
pub const CV_LIMIT: f64 = 0.05;

/// A repeated measurement: the minimum is the figure used, the rest says how much to trust it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Repetitions.
    pub reps: u32,
    /// Minimum, ns.
    pub min_ns: f64,
    /// Median, ns.
    pub median_ns: f64,
    /// Coefficient of variation (standard deviation / mean).
    pub cv: f64,
    /// `cv > CV_LIMIT`: the figure varied too much to be trusted.
    pub flagged: bool,
}

/// Single-thread copy time of one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyPoint {
    /// Bytes copied.
    pub bytes: u64,
    /// Time per copy.
    #[serde(flatten)]
    pub time: Measurement,
}

/// `t = alpha_ns + bytes / beta_bytes_per_ns` for `from_bytes <= bytes < to_bytes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// First size of the interval.
    pub from_bytes: u64,
    /// End of the interval (exclusive; the last segment extends beyond it).
    pub to_bytes: u64,
    /// Fixed cost, ns.
    pub alpha_ns: f64,
    /// Bandwidth, bytes per ns (= GB/s).
    pub beta_bytes_per_ns: f64,
}

/// The calibrated copy model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Copy {
    /// The piecewise-linear fit, by increasing size.
    pub segments: Vec<Segment>,
    /// The measurements it was fitted to.
    pub points: Vec<CopyPoint>,
}

/// Where and when the calibration ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct About {
    /// Host name.
    pub host: String,
    /// Logical CPUs available.
    pub cores: u32,
    /// Seconds since the Unix epoch when it was measured.
    pub measured_at: u64,
    /// `pp` version that measured it.
    pub pp_version: String,
}

/// A calibrated machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Provenance.
    pub about: About,
    /// Single-thread copy time by size.
    pub copy: Copy,
    /// Thread-to-thread hand-off latency (half a round trip through a channel).
    pub handoff: Measurement,
    /// The MPI point-to-point message time (`pp calibrate --mpi`), if measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<Mpi>,
}

/// The MPI half round trip by message size between two ranks: `t = alpha_ns + bytes /
/// beta_bytes_per_ns` per size interval, as for copies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mpi {
    /// The MPI library, as its `mpirun --version` names itself.
    pub library: String,
    /// Where the two ranks were: `node` (the same node).
    pub locality: String,
    /// The piecewise-linear fit, by increasing size.
    pub segments: Vec<Segment>,
    /// The measurements it was fitted to (half round trips).
    pub points: Vec<CopyPoint>,
}

/// A machine file that cannot be read or used.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// Reading or writing failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// Not a machine file.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong (TOML line and column when the syntax is wrong).
        message: String,
    },
}

impl Machine {
    /// Ideal time to move `bytes` with one thread: the calibrated copy time, in ns.
    pub fn ideal_copy_ns(&self, bytes: u64) -> u64 {
        piecewise_ns(&self.copy.segments, bytes)
    }

    /// Parses a machine file's text; `path` names it in errors.
    pub fn parse(path: &str, text: &str) -> Result<Machine, MachineError> {
        let machine: Machine = toml::from_str(text).map_err(|e| MachineError::Invalid {
            path: path.into(),
            message: one_line(&e.to_string()),
        })?;
        machine.check().map_err(|message| MachineError::Invalid {
            path: path.into(),
            message,
        })?;
        Ok(machine)
    }

    /// Reads a machine file.
    pub fn load(path: &Path) -> Result<Machine, MachineError> {
        let text = files::input::read_text(path, "machine file", files::input::MAX_SMALL_FILE)
            .map_err(|e| MachineError::Io {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        Machine::parse(&path.display().to_string(), &text)
    }

    /// The TOML text of the machine file.
    pub fn to_toml(&self) -> String {
        let mut text = String::from(
            "# pp machine calibration (docs/machine-file.md): written by `pp calibrate`, read by `pp --machine`.\n\
             # copy.segments: single-thread copy time t = alpha_ns + bytes / beta_bytes_per_ns.\n\
             # Every figure is the minimum of `reps` runs; `flagged` marks a coefficient of\n\
             # variation above 5% (the figure is not trustworthy).\n",
        );
        text.push_str(&toml::to_string(self).expect("a machine serializes"));
        text
    }

    /// Writes the file through a temporary file and a rename (never half-written), and only
    /// where `path` is absent or a regular file.
    pub fn save(&self, path: &Path) -> Result<(), MachineError> {
        let error = |message: String| MachineError::Io {
            path: path.display().to_string(),
            message,
        };
        files::output::check(path).map_err(|e| error(e.reason()))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| error(format!("cannot create the folder: {e}")))?;
        }
        files::output::write(path, self.to_toml().as_bytes()).map_err(|e| error(e.reason()))
    }

    fn check(&self) -> Result<(), String> {
        check_segments("copy", &self.copy.segments)?;
        if let Some(mpi) = &self.mpi {
            check_segments("mpi", &mpi.segments)?;
        }
        Ok(())
    }
}

impl Mpi {
    /// Ideal time of an MPI message of `bytes` between two ranks: the calibrated half round
    /// trip, in ns.
    pub fn ideal_message_ns(&self, bytes: u64) -> u64 {
        piecewise_ns(&self.segments, bytes)
    }
}

/// `alpha_ns + bytes / beta_bytes_per_ns` of the first segment with `bytes < to_bytes` (the
/// last segment beyond them all), rounded; 0 where that is not a positive number.
fn piecewise_ns(segments: &[Segment], bytes: u64) -> u64 {
    let Some(segment) = segments
        .iter()
        .find(|s| bytes < s.to_bytes)
        .or(segments.last())
    else {
        return 0;
    };
    let t = segment.alpha_ns + bytes as f64 / segment.beta_bytes_per_ns;
    if t.is_finite() && t > 0.0 {
        t.round() as u64
    } else {
        0
    }
}

/// The segments of `table` are usable: at least one, each with a number for `alpha_ns`, a
/// positive `beta_bytes_per_ns` and `to_bytes` beyond `from_bytes`.
fn check_segments(table: &str, segments: &[Segment]) -> Result<(), String> {
    if segments.is_empty() {
        return Err(format!("{table}.segments is empty"));
    }
    for (k, s) in segments.iter().enumerate() {
        if !(s.beta_bytes_per_ns.is_finite() && s.beta_bytes_per_ns > 0.0) {
            return Err(format!(
                "{table}.segments[{k}].beta_bytes_per_ns must be a positive number"
            ));
        }
        if !s.alpha_ns.is_finite() {
            return Err(format!("{table}.segments[{k}].alpha_ns must be a number"));
        }
        if s.to_bytes <= s.from_bytes {
            return Err(format!(
                "{table}.segments[{k}]: to_bytes must exceed from_bytes"
            ));
        }
    }
    Ok(())
}

/// The machine file to use: the one `given` (which must load), else the [`default_path`] one
/// when it exists, else none (the profile then has no calibration).
pub fn given_or_default(given: Option<&Path>) -> Result<Option<Machine>, MachineError> {
    match given {
        Some(path) => Machine::load(path).map(Some),
        None => default_path()
            .filter(|p| p.exists())
            .map(|p| Machine::load(&p))
            .transpose(),
    }
}

/// The default machine file: `$PP_MACHINE`, else `$XDG_CONFIG_HOME/pp/machine.toml`, else
/// `$HOME/.config/pp/machine.toml`.
pub fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PP_MACHINE") {
        return Some(PathBuf::from(p));
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("pp").join("machine.toml"))
}

fn one_line(message: &str) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|') && !l.chars().all(|c| c == '^'))
        .collect::<Vec<_>>()
        .join(" ");
    // TOML's message may quote a value whole (`1e300` as 301 digits): cut short.
    files::quote::excerpt(&line, MAX_MESSAGE)
}

/// The most bytes of a TOML error's message.
const MAX_MESSAGE: usize = 200;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_value_toml_quotes_whole_is_cut_short() {
        // TOML's type error prints 1e300 as 301 digits (found by the whatif-options fuzz target).
        let text = example().to_toml().replacen("reps = 10", "reps = 1e300", 1);
        assert!(text.contains("reps = 1e300"));
        let e = Machine::parse("m.toml", &text).unwrap_err().to_string();
        assert!(!e.contains('\n') && e.len() < 300, "{} bytes: {e}", e.len());
        assert!(e.starts_with("m.toml"), "{e}");
    }

    /// A machine that copies at 10 bytes/ns with 100 ns fixed cost below 64 KiB, 2 bytes/ns
    /// with 1000 ns above.
    pub(crate) fn example() -> Machine {
        let m = |min| Measurement {
            reps: 10,
            min_ns: min,
            median_ns: min * 1.01,
            cv: 0.01,
            flagged: false,
        };
        Machine {
            about: About {
                host: "test".into(),
                cores: 2,
                measured_at: 0,
                pp_version: "0".into(),
            },
            copy: Copy {
                segments: vec![
                    Segment {
                        from_bytes: 0,
                        to_bytes: 65536,
                        alpha_ns: 100.0,
                        beta_bytes_per_ns: 10.0,
                    },
                    Segment {
                        from_bytes: 65536,
                        to_bytes: 1 << 30,
                        alpha_ns: 1000.0,
                        beta_bytes_per_ns: 2.0,
                    },
                ],
                points: vec![CopyPoint {
                    bytes: 4096,
                    time: m(509.6),
                }],
            },
            handoff: m(800.0),
            mpi: None,
        }
    }

    #[test]
    fn an_mpi_table_is_optional_checked_and_piecewise_linear() {
        let mut m = example();
        let text = m.to_toml();
        assert!(!text.contains("[mpi]"), "no MPI table unless measured");
        let time = m.handoff.clone();
        assert_eq!(Machine::parse("old", &text).unwrap(), m);
        m.mpi = Some(Mpi {
            library: "mpirun (Open MPI) 4.1.4".into(),
            locality: "node".into(),
            segments: vec![
                Segment {
                    from_bytes: 0,
                    to_bytes: 4096,
                    alpha_ns: 300.0,
                    beta_bytes_per_ns: 2.0,
                },
                Segment {
                    from_bytes: 4096,
                    to_bytes: 1 << 40,
                    alpha_ns: 1000.0,
                    beta_bytes_per_ns: 8.0,
                },
            ],
            points: vec![CopyPoint { bytes: 8, time }],
        });
        let text = m.to_toml();
        let back = Machine::parse("new", &text).unwrap();
        assert_eq!(back, m);
        let mpi = back.mpi.unwrap();
        assert_eq!(mpi.ideal_message_ns(0), 300);
        assert_eq!(mpi.ideal_message_ns(1000), 800);
        assert_eq!(mpi.ideal_message_ns(8192), 1000 + 1024);
        let bad = text.replace("beta_bytes_per_ns = 8.0", "beta_bytes_per_ns = 0.0");
        let e = Machine::parse("bad", &bad).unwrap_err().to_string();
        assert_eq!(
            e,
            "bad: mpi.segments[1].beta_bytes_per_ns must be a positive number"
        );
    }

    #[test]
    fn ideal_copy_time_is_piecewise_linear() {
        let m = example();
        assert_eq!(m.ideal_copy_ns(0), 100);
        assert_eq!(m.ideal_copy_ns(1000), 200);
        assert_eq!(m.ideal_copy_ns(65536), 1000 + 32768);
        // Beyond the last interval the last segment extends.
        assert_eq!(m.ideal_copy_ns(1 << 31), 1000 + (1 << 30));
    }

    #[test]
    fn round_trips_through_toml() {
        let m = example();
        let text = m.to_toml();
        assert_eq!(Machine::parse("m.toml", &text).unwrap(), m);
    }

    #[test]
    fn bad_files_get_one_line_errors() {
        let err = Machine::parse("m.toml", "[about\nhost=1")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("m.toml: "), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        let mut m = example();
        m.copy.segments[1].beta_bytes_per_ns = 0.0;
        let err = Machine::parse("m.toml", &m.to_toml())
            .unwrap_err()
            .to_string();
        assert!(err.contains("copy.segments[1].beta_bytes_per_ns"), "{err}");
    }
}
