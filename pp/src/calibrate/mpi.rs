//! `pp calibrate --mpi`: the MPI point-to-point half round trip by message size between two
//! ranks of this node, fitted piecewise as `t = alpha + bytes / beta` (the machine analyser of
//! Schumann's predictor, seed 001: micro-benchmarks, the minimum of repeats, a CV check).
//!
//! `pp` does not link MPI: it compiles the ping-pong in `pingpong.c` with the MPI compiler
//! wrapper (`mpicc`), runs it with `mpirun -np 2`, reads its samples and fits them with the
//! copy model's fitter.

use std::path::Path;
use std::process::Command;

use crate::machine::{CopyPoint, Mpi};
use crate::trace::mpicc;

use super::segments::fit_segments;
use super::summary::summarize;

/// The ping-pong program (C, MPI).
pub const PINGPONG_C: &str = include_str!("pingpong.c");

/// What needs MPI, for the message when a tool is missing.
const PURPOSE: &str = "pp calibrate --mpi";

/// What to measure and with which tools.
#[derive(Debug, Clone)]
pub struct MpiSettings {
    /// The MPI C compiler wrapper.
    pub mpicc: String,
    /// The launcher and its options (`-np 2` and the program are added).
    pub mpirun: Vec<String>,
    /// Samples per size.
    pub reps: u32,
    /// Message sizes, bytes.
    pub sizes: Vec<u64>,
}

impl MpiSettings {
    /// 31 samples of each power of two from 8 B to 4 MiB.
    pub fn standard() -> MpiSettings {
        MpiSettings::with(31, 22)
    }

    /// 7 samples of every fourth power of two from 8 B to 128 KiB (for tests).
    pub fn quick() -> MpiSettings {
        let mut s = MpiSettings::with(7, 17);
        s.sizes.retain(|b| b.trailing_zeros() % 2 == 1);
        s
    }

    fn with(reps: u32, largest_log2: u32) -> MpiSettings {
        MpiSettings {
            mpicc: "mpicc".into(),
            mpirun: vec!["mpirun".into()],
            reps,
            sizes: (3..=largest_log2).map(|k| 1u64 << k).collect(),
        }
    }
}

/// Measures the half round trip (one line of error on failure: the tool that failed, and the
/// first line it printed).
pub fn measure(settings: &MpiSettings, progress: &mut dyn FnMut(&str)) -> Result<Mpi, String> {
    let dir = mpicc::scratch(&std::env::temp_dir(), "pp-calibrate-mpi")?;
    let result = measure_in(&dir, settings, progress);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn measure_in(
    dir: &Path,
    settings: &MpiSettings,
    progress: &mut dyn FnMut(&str),
) -> Result<Mpi, String> {
    progress(&format!(
        "mpi: compiling the ping-pong with {}",
        settings.mpicc
    ));
    let program = mpicc::build(
        &settings.mpicc,
        &["-O2"],
        PINGPONG_C,
        dir,
        "pingpong",
        "the ping-pong",
        PURPOSE,
    )?;
    let (launcher, options) = settings.mpirun.split_first().ok_or("--mpirun is empty")?;
    let library = Command::new(launcher)
        .arg("--version")
        .output()
        .map(|o| mpicc::first_line(&o.stdout))
        .unwrap_or_default();
    progress(&format!(
        "mpi: {} sizes x {} samples with {launcher} -np 2",
        settings.sizes.len(),
        settings.reps
    ));
    let ran = mpicc::allow_root(&mut Command::new(launcher))
        .args(options)
        .args(["-np", "2"])
        .arg(&program)
        .arg(settings.reps.to_string())
        .args(settings.sizes.iter().map(u64::to_string))
        .output()
        .map_err(|e| mpicc::missing(launcher, &e, PURPOSE))?;
    if !ran.status.success() {
        return Err(format!(
            "{launcher} -np 2 pingpong failed ({}): {}",
            ran.status,
            mpicc::first_line(&ran.stderr)
        ));
    }
    let samples = parse_samples(&String::from_utf8_lossy(&ran.stdout))?;
    let points: Vec<CopyPoint> = samples
        .into_iter()
        .map(|(bytes, ns)| CopyPoint {
            bytes,
            time: summarize(&ns),
        })
        .collect();
    if points.is_empty() {
        return Err(format!("{launcher} -np 2 pingpong printed no samples"));
    }
    let fit: Vec<(u64, f64)> = points.iter().map(|p| (p.bytes, p.time.min_ns)).collect();
    Ok(Mpi {
        library: if library.is_empty() {
            launcher.clone()
        } else {
            library
        },
        locality: "node".into(),
        segments: fit_segments(&fit),
        points,
    })
}

/// The samples of the ping-pong's output: each line `sample <bytes> <ns> <ns> ...`; other
/// lines are ignored. An error names the line.
pub fn parse_samples(output: &str) -> Result<Vec<(u64, Vec<f64>)>, String> {
    let mut out = Vec::new();
    for (k, line) in output.lines().enumerate() {
        let mut words = line.split_whitespace();
        if words.next() != Some("sample") {
            continue;
        }
        let bad = |what: &str| {
            format!(
                "the ping-pong's output, line {}: {what}: {}",
                k + 1,
                crate::log::excerpt(line)
            )
        };
        let bytes = words
            .next()
            .and_then(|b| b.parse::<u64>().ok())
            .ok_or_else(|| bad("no message size"))?;
        let ns = words
            .map(|w| w.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| bad("a sample is not a non-negative number"))?;
        if ns.is_empty() {
            return Err(bad("no samples"));
        }
        out.push((bytes, ns));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_read_and_other_lines_ignored() {
        let out = "Open MPI says hello\nsample 8 300.5 290.0 310.25\nsample 4096 1000 1100\n";
        assert_eq!(
            parse_samples(out).unwrap(),
            vec![
                (8, vec![300.5, 290.0, 310.25]),
                (4096, vec![1000.0, 1100.0])
            ]
        );
    }

    #[test]
    fn a_bad_sample_line_is_named() {
        assert_eq!(
            parse_samples("x\nsample 8 12 nan\n").unwrap_err(),
            "the ping-pong's output, line 2: a sample is not a non-negative number: sample 8 12 nan"
        );
        assert_eq!(
            parse_samples("sample eight 1\n").unwrap_err(),
            "the ping-pong's output, line 1: no message size: sample eight 1"
        );
        assert!(
            parse_samples("sample 8\n")
                .unwrap_err()
                .contains("no samples")
        );
    }

    #[test]
    fn quick_sizes_are_every_fourth_power_of_two() {
        assert_eq!(
            MpiSettings::quick().sizes,
            [8, 32, 128, 512, 2048, 8192, 32768, 131072]
        );
        let s = MpiSettings::standard().sizes;
        assert_eq!((s[0], *s.last().unwrap(), s.len()), (8, 4 << 20, 20));
    }

    #[test]
    fn a_missing_compiler_says_what_installs_it() {
        let settings = MpiSettings {
            mpicc: "/nonexistent/mpicc".into(),
            ..MpiSettings::quick()
        };
        let e = measure(&settings, &mut |_| {}).unwrap_err();
        assert!(e.starts_with("/nonexistent/mpicc not found"), "{e}");
        assert!(e.contains("tools/system-packages.sh"), "{e}");
    }
}
