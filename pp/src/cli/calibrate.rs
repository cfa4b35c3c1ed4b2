//! `pp calibrate`: measures this machine into a machine file.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use pp::calibrate::Settings;
use pp::calibrate::mpi::MpiSettings;

#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// Where to write it (default: $PP_MACHINE, else ~/.config/pp/machine.toml).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// A few seconds instead of up to a minute (fewer sizes and repetitions).
    #[arg(long)]
    quick: bool,
    /// Replace an existing machine file.
    #[arg(long)]
    force: bool,
    /// Also measure MPI messages between two ranks of this node (needs mpicc and mpirun).
    #[arg(long)]
    mpi: bool,
    /// The MPI compiler wrapper for --mpi.
    #[arg(long, value_name = "CC", default_value = "mpicc", requires = "mpi")]
    mpicc: String,
    /// The MPI launcher with its options for --mpi (split at spaces), e.g. "mpirun --mca btl self,vader".
    #[arg(long, value_name = "CMD", default_value = "mpirun", requires = "mpi")]
    mpirun: String,
}

pub fn calibrate(args: CalibrateArgs) -> Result<()> {
    let path = args.out.or_else(pp::machine::default_path).ok_or_else(|| {
        anyhow!("no place for the machine file: give --out FILE (HOME is not set)")
    })?;
    files::output::check_new(&path, args.force).context("--out")?;
    let settings = if args.quick {
        Settings::quick()
    } else {
        Settings::standard()
    };
    // One progress line, rewritten in place on a terminal.
    let terminal = std::io::stderr().is_terminal();
    let mut progress = |status: &str| {
        if terminal {
            eprint!("\r\x1b[2Kpp calibrate: {status}");
        }
    };
    let mut machine = pp::calibrate::calibrate(&settings, &mut progress);
    if args.mpi {
        let mut settings = if args.quick {
            MpiSettings::quick()
        } else {
            MpiSettings::standard()
        };
        settings.mpicc = args.mpicc;
        settings.mpirun = args.mpirun.split_whitespace().map(String::from).collect();
        let measured = pp::calibrate::mpi::measure(&settings, &mut progress);
        if terminal {
            eprintln!();
        }
        machine.mpi = Some(measured.map_err(|e| anyhow!("--mpi: {e}; nothing written"))?);
    } else if terminal {
        eprintln!();
    }
    machine.save(&path)?;
    crate::write_stdout(&format!(
        "{}wrote {}\n",
        pp::calibrate::table(&machine),
        path.display()
    ))
}
