//! `pp whatif [LOG] --out PREDICTED.log [target options]`: the run replayed on another
//! configuration ([`pp::whatif`]).

use std::path::PathBuf;

use anyhow::Result;
use pp::whatif::{Demand, Sharing, Waits, WhatifOptions};

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
    /// How a shared processor serves its threads: `processor`, all at once at 1/k each, or
    /// `run-to-block`, one at a time until it blocks or its slice ends, a woken thread on an
    /// idle processor of the shared ones, else queued on its own [default: processor].
    #[arg(long, value_name = "processor|run-to-block", value_parser = parse_sharing)]
    sharing: Option<Sharing>,
    /// With --sharing run-to-block: the longest a thread runs while others wait for its
    /// processor, microseconds [default: 3000].
    #[arg(long, value_name = "US")]
    slice_us: Option<f64>,
    /// With --sharing run-to-block: what a shared processor spends each time it goes from one
    /// thread to the next queued one, and, without --wake-us, each time it starts another
    /// thread than the last, woken onto it while idle, microseconds [default: 0].
    #[arg(long, value_name = "US")]
    switch_us: Option<f64>,
    /// With --sharing run-to-block: what a shared processor spends starting another thread
    /// than the last, woken onto it while idle (a wake-up onto an idle core), microseconds
    /// [default: --switch-us].
    #[arg(long, value_name = "US")]
    wake_us: Option<f64>,
    /// With --sharing run-to-block: what a waiting thread does with its processor: `block`,
    /// gives it up, or `spin`, keeps it until its wait ends or its slice does while others
    /// queue, and sees its wait end only while it holds one (an MPI library polling on a
    /// shared core) [default: block].
    #[arg(long, value_name = "block|spin", value_parser = parse_waits)]
    waits: Option<Waits>,
    /// With --waits spin: messages of at least BYTES go by rendezvous, their sender's next
    /// receive ending only once the receiver has held a processor since the send (Open MPI's
    /// eager limit: `ompi_info --param btl vader --level 9`, 4096 for shared memory)
    /// [default: none].
    #[arg(long, value_name = "BYTES")]
    rendezvous_bytes: Option<u64>,
    /// A target file (TOML: group, machine, demand, sharing, slice_us, switch_us, wake_us,
    /// waits, rendezvous_bytes, [speed]);
    /// the options above override it.
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
        sharing: args.sharing,
        slice_us: args.slice_us,
        switch_us: args.switch_us,
        wake_us: args.wake_us,
        waits: args.waits,
        rendezvous_bytes: args.rendezvous_bytes,
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

fn parse_sharing(s: &str) -> Result<Sharing, String> {
    s.parse()
}

fn parse_waits(s: &str) -> Result<Waits, String> {
    s.parse()
}
