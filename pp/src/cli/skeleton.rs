//! `pp skeleton LOG (--scale K | --time T) --out DIR`, `pp skeleton run DIR` and
//! `pp skeleton predict`: performance skeletons (docs/skeletons.md#pp-skeleton).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use pp::log::LogReader;
use pp::profile::{Profile, profile_log};
use pp::skeleton::{self, Size, file, predict, run};

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
    /// Run a threaded skeleton, recording its log ($PP_LOG, else ./pp.log).
    Run {
        /// The skeleton's directory (or its skeleton.txt).
        dir: PathBuf,
    },
    /// Predict the application's time and lost cycles under a condition from the skeleton's.
    Predict {
        /// The application's log, dedicated machine.
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
        Some(SkeletonCommand::Run { dir }) => {
            let s = file::read(dir)?;
            let r = run::run(&s)?;
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
            let app = whole(app)?;
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
            let p = predict::predict(&app, &skel, &under_p, app_under.as_ref())
                .map_err(|e| anyhow!("{}: {e}", skeleton.display()))?;
            crate::write_stdout(&p.text())
        }
        None => {
            let (Some(log), Some(out)) = (&args.log, &args.out) else {
                bail!("pp skeleton: LOG and --out DIR are required");
            };
            let size = match (args.scale, args.time) {
                (Some(k), _) if !(k.is_finite() && k >= 1.0) => {
                    bail!("--scale: {k} is not a number at least 1")
                }
                (Some(k), _) => Size::Scale(k),
                (None, Some(t)) if !(t.is_finite() && t > 0.0) => {
                    bail!("--time: {t} is not a positive number of seconds")
                }
                (None, Some(t)) => Size::Time(t),
                (None, None) => bail!("pp skeleton: --scale K or --time T is required"),
            };
            let (s, warnings) = skeleton::from_log(log, size)?;
            file::write(out, &s, args.force)?;
            for w in &warnings {
                eprintln!("pp: warning: {w}");
            }
            eprintln!(
                "pp skeleton: wrote {}: K = {:.2}, threshold {}, compression {:.1}, about {:.3} s",
                out.join(file::NAME).display(),
                s.k,
                s.threshold,
                s.compression,
                s.source_wall_ns as f64 / s.k / 1e9
            );
            Ok(())
        }
    }
}

/// The profile of a whole log, or its one-line error.
fn whole(path: &Path) -> Result<Profile> {
    let name = path.display().to_string();
    let mut reader = LogReader::open(path)?;
    profile_log(&mut reader, None, None)
        .whole(&name)
        .map_err(|e| anyhow!(e))
}
