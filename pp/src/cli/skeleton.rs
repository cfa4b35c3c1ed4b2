//! `pp skeleton LOG (--scale K | --time T) --out DIR`, `pp skeleton run DIR` and
//! `pp skeleton predict`: performance skeletons (docs/skeletons.md#pp-skeleton).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use pp::log::LogReader;
use pp::profile::{Profile, profile_log};
use pp::skeleton::{self, Size, file, mpi, predict, run};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SkeletonArgs {
    #[command(subcommand)]
    command: Option<SkeletonCommand>,
    /// The application's event log (text or binary).
    #[arg(required = true)]
    log: Option<PathBuf>,
    /// Make the skeleton K times shorter than the run (K ≥ 1).
    #[arg(long, conflicts_with = "time", required_unless_present = "time")]
    scale: Option<f64>,
    /// Make the skeleton last about T seconds (K = the run's wall / T, at least 1).
    #[arg(long)]
    time: Option<f64>,
    /// The directory to write the skeleton into (DIR/skeleton.txt).
    #[arg(long, required = true)]
    out: Option<PathBuf>,
    /// Write into DIR even if it is not empty.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, clap::Subcommand)]
enum SkeletonCommand {
    /// Run a skeleton, recording its log ($PP_LOG, else ./pp.log): a threaded one with threads,
    /// an MPI one built with make and run under pp run -- mpirun -np P.
    Run {
        /// The skeleton's directory (or its skeleton.txt).
        dir: PathBuf,
        /// Where the skeleton's log goes (default: $PP_LOG, else ./pp.log). A log there that
        /// is not a skeleton's is kept: the command stops unless --force.
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
        /// Replace a log there that is not a skeleton's (an application's run).
        #[arg(long)]
        force: bool,
        /// Options for mpirun (an MPI skeleton), given after `--`: `-- --mca btl tcp,self`.
        #[arg(last = true)]
        mpirun: Vec<String>,
    },
    /// Predict the application's time and lost cycles under a condition from the skeleton's.
    Predict {
        /// The application's log, dedicated machine (best the run the skeleton was made from:
        /// its K came from that run's wall).
        #[arg(long)]
        app: PathBuf,
        /// The skeleton's log, dedicated machine.
        #[arg(long)]
        skeleton: PathBuf,
        /// The skeleton's log under the condition.
        #[arg(long)]
        under: PathBuf,
        /// The application's log under the condition, to show the error beside the prediction.
        #[arg(long)]
        app_under: Option<PathBuf>,
    },
}

pub fn skeleton(args: &SkeletonArgs) -> Result<()> {
    match &args.command {
        Some(SkeletonCommand::Run {
            dir,
            log,
            force,
            mpirun,
        }) => {
            let s = file::read(dir)?;
            let log = run_log(log.clone(), *force)?;
            if mpi::is_mpi(&s) {
                let dir = if dir.is_dir() {
                    dir.clone()
                } else {
                    dir.parent().map(Path::to_path_buf).unwrap_or_default()
                };
                let status = mpi::run(&dir, &s, &log, mpirun)
                    .map_err(|e| anyhow!("{}: {e}", dir.display()))?;
                if !status.success() {
                    bail!("pp skeleton run: pp run -- mpirun exited with {status}");
                }
                return Ok(());
            }
            if !mpirun.is_empty() {
                bail!(
                    "pp skeleton run: options after `--` are for mpirun, and this skeleton is threaded"
                );
            }
            let r = run::run(&s, &log)?;
            for w in &r.warnings {
                eprintln!("pp: warning: {w}");
            }
            eprintln!(
                "pp skeleton run: {} threads, K = {}: {} events in {}",
                s.threads.len(),
                s.k,
                r.events,
                r.log.display()
            );
            Ok(())
        }
        Some(SkeletonCommand::Predict {
            app,
            skeleton,
            under,
            app_under,
        }) => {
            let app_p = whole(app)?;
            let skel = whole(skeleton)?;
            let under_p = whole(under)?;
            if skel.header.p != under_p.header.p {
                bail!(
                    "{}: p = {} but the skeleton's dedicated run has p = {}",
                    under.display(),
                    under_p.header.p,
                    skel.header.p
                );
            }
            let app_under = app_under.as_deref().map(whole).transpose()?;
            let p = predict::predict(&app_p, &skel, &under_p, app_under.as_ref()).map_err(
                |(run, e)| {
                    let path = match run {
                        predict::Run::App => app,
                        predict::Run::Skeleton => skeleton,
                        predict::Run::Under => under,
                    };
                    anyhow!("{}: {e}", path.display())
                },
            )?;
            if let Some(w) = p.warning() {
                eprintln!("pp: warning: {}: {w}", skeleton.display());
            }
            crate::write_stdout(&p.text())
        }
        None => {
            let (Some(log), Some(out)) = (&args.log, &args.out) else {
                bail!("pp skeleton: LOG and --out DIR are required");
            };
            let size = match (args.scale, args.time) {
                (Some(k), _) if !(k.is_finite() && k >= 1.0) => {
                    bail!(
                        "--scale: {} is not a number at least 1",
                        files::quote::number(k)
                    )
                }
                (Some(k), _) => Size::Scale(k),
                (None, Some(t)) if !(t.is_finite() && t > 0.0) => {
                    bail!(
                        "--time: {} is not a positive number of seconds",
                        files::quote::number(t)
                    )
                }
                (None, Some(t)) => Size::Time(t),
                (None, None) => bail!("pp skeleton: --scale K or --time T is required"),
            };
            file::check(out, args.force)?;
            // Written a top-level item at a time from the signature's folded threads
            // (docs/skeletons.md#memory).
            let (s, warnings) = skeleton::plan(log, size)?;
            let mpi = mpi::is_mpi(&s);
            let mut warnings = warnings;
            if mpi {
                warnings.extend(mpi::check(&s).map_err(|e| anyhow!("{}: {e}", log.display()))?);
            }
            file::write(out, &s, args.force)?;
            if mpi {
                mpi::write(out, &s)?;
            }
            for w in &warnings {
                eprintln!("pp: warning: {w}");
            }
            eprintln!(
                "pp skeleton: wrote {}{}: K = {:.2}, threshold {}, compression {:.1}, about {:.3} s",
                out.join(file::NAME).display(),
                if mpi {
                    let regions = if skeleton::hybrid::layout(&s)?.is_some() {
                        format!(", {}", skeleton::hybrid::REGIONS)
                    } else {
                        String::new()
                    };
                    format!(", {}{regions} and Makefile (make -C DIR)", mpi::SOURCE)
                } else {
                    String::new()
                },
                s.k,
                s.threshold,
                s.compression(),
                s.source_wall_ns as f64 / s.k / 1e9
            );
            Ok(())
        }
    }
}

/// The log `pp skeleton run` records into: `log`, else `$PP_LOG` (if not empty), else
/// `./pp.log`, as a recorded program's (docs/guarantees.md). A run's log is written anew by
/// each run, but a log there that is not a skeleton's (no `skeleton=1` in its header), or a
/// file that is no log, is kept unless `force`: in the folder where the application was run,
/// `./pp.log` is likely the application's log, the one the skeleton's prediction needs.
fn run_log(log: Option<PathBuf>, force: bool) -> Result<PathBuf> {
    let path = pp_recorder::log_path(log);
    // Only a regular file is read here; the recorder refuses devices, FIFOs and folders.
    if force || !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
        return Ok(path);
    }
    let what = match LogReader::open(&path) {
        Ok(r)
            if r.header()
                .params
                .iter()
                .any(|(k, v)| k == "skeleton" && v == "1") =>
        {
            return Ok(path);
        }
        Ok(r) => format!(
            "the log of a run that is not a skeleton's (p={})",
            r.header().p
        ),
        Err(_) => "a file that is not a pp log".to_string(),
    };
    bail!(
        "pp skeleton run: {} holds {what}, and the skeleton's log would replace it: \
         give --log FILE (or PP_LOG=FILE), or --force to replace it",
        path.display()
    )
}

/// The profile of a whole log, or its one-line error.
fn whole(path: &Path) -> Result<Profile> {
    let name = path.display().to_string();
    let mut reader = LogReader::open(path)?;
    profile_log(&mut reader, None, None)
        .whole(&name)
        .map_err(|e| anyhow!(e))
}
