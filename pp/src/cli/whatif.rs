//! `pp whatif [LOG] --out PREDICTED.log [target options]`: the run replayed on another
//! configuration ([`pp::whatif`]).

use std::path::PathBuf;

use anyhow::Result;
use pp::whatif::{Demand, WhatifOptions};

#[derive(Debug, clap::Args)]
pub struct WhatifArgs {
    /// The event log (text or binary); default $PP_LOG, else ./pp.log.
    log: Option<PathBuf>,
    /// Threads that share a processor: `0,1/2,3` puts 0 and 1 on one, 2 and 3 on another;
    /// threads in no group keep a processor of their own.
    #[arg(long, value_name = "GROUPS")]
    group: Option<String>,
    /// A machine file with an `[mpi]` table (pp calibrate --mpi): the target network.
    #[arg(long, value_name = "FILE")]
    machine: Option<PathBuf>,
    /// Computation in this region or phase goes FACTOR times as fast (repeatable).
    #[arg(long, value_name = "NAME=FACTOR")]
    speed: Vec<String>,
    /// What a computation demands of its processor: `elapsed`, its measured time (a source
    /// run with a processor per thread), or `cpu`, the CPU time its thread received (a source
    /// run that shared processors: more threads than cores, `taskset`): waits lose the
    /// run-queue delay around their end too [default: elapsed].
    #[arg(
        long,
        value_enum,
        value_name = "elapsed|cpu",
        hide_possible_values = true
    )]
    demand: Option<Demand>,
    /// A target file (TOML: group, machine, demand, [speed]); the options above override it.
    #[arg(long, value_name = "FILE.toml")]
    target: Option<PathBuf>,
    /// The predicted log to write (text or binary as the input; `-`: standard output, text
    /// only, and the walls go to standard error).
    #[arg(long, value_name = "PREDICTED.log")]
    out: PathBuf,
    /// Replace an existing --out.
    #[arg(long)]
    force: bool,
}

pub fn whatif(args: WhatifArgs) -> Result<()> {
    let to_stdout = args.out.as_os_str() == "-";
    let outcome = pp::whatif::run(&WhatifOptions {
        log: crate::log_path(args.log.as_ref()),
        group: args.group,
        machine: args.machine,
        speed: args.speed,
        demand: args.demand,
        target: args.target,
        out: args.out,
        force: args.force,
    })?;
    for w in &outcome.warnings {
        eprintln!("pp: warning: {w}");
    }
    let report = outcome.report;
    if to_stdout {
        // The predicted log has standard output.
        eprint!("{report}");
        return Ok(());
    }
    crate::write_stdout(&report)
}
