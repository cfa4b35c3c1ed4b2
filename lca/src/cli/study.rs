//! `lca study [STUDY.toml]`: the command line of a whole study ([`lca::study`] carries it out),
//! and the hidden `lca workload NAME ARGS..` that runs the bundled study's workload.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use lca::study::file::{self, Dispatch};
use lca::study::{DEFAULT, DEFAULT_NAME, Options};

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
    dispatch: Option<DispatchArg>,
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

/// Where the runs are made (`--dispatch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DispatchArg {
    /// On this machine, as child processes of `lca`.
    Local,
    /// As Slurm jobs (`sbatch` job arrays), one per run.
    Slurm,
}

/// Runs the command; prints progress on standard error and returns the summary to print.
/// When runs failed, the summary is printed here and the failure is the error.
pub fn run(args: &Args) -> Result<String> {
    if args.print_default {
        return Ok(DEFAULT.to_string());
    }
    let options = options(args)?;
    let report = lca::study::run(&options)?;
    if report.failures > 0 {
        crate::write_stdout(&report.text)?;
        bail!(
            "{} of {} runs failed (reported above, with their standard error); run \
             the study again to retry them",
            report.failures,
            report.made
        );
    }
    Ok(report.text)
}

/// The study to carry out: its file read and checked (the bundled one without a file), the
/// command line's `--dispatch` and `--jobs` applied, and the command that resumes it.
fn options(args: &Args) -> Result<Options> {
    let (mut study, mut resume) = match &args.study {
        Some(path) => {
            let text = files::input::read_text(path, "study file", files::input::MAX_SMALL_FILE)
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            let resume = format!("lca study {}", path.display());
            (file::parse(&path.display().to_string(), &text)?, resume)
        }
        None => (file::parse(DEFAULT_NAME, DEFAULT)?, "lca study".to_string()),
    };
    if let Some(dispatch) = args.dispatch {
        (study.dispatch, resume) = match dispatch {
            DispatchArg::Local => (Dispatch::Local, resume + " --dispatch local"),
            DispatchArg::Slurm => (Dispatch::Slurm, resume + " --dispatch slurm"),
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
        resume += &format!(" --jobs {jobs}");
    }
    let named = args
        .study
        .as_ref()
        .map_or(DEFAULT_NAME.to_string(), |p| p.display().to_string());
    Ok(Options {
        study,
        named,
        resume,
        jobs,
    })
}
