//! `pp`: the predicate profiler's command line. Reads an event log (text or binary), attributes
//! every thread-instant to a lost-cycles category and prints the result. This file and
//! `cli/` only parse the options (clap) and wire the `pp` library's modules.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

mod cli {
    pub mod calibrate;
    pub mod convert;
    pub mod critical_path;
    pub mod import;
    pub mod profile;
    pub mod recover;
    pub mod run;
    pub mod signature;
    pub mod skeleton;
    pub mod values;
    pub mod whatif;
}

/// Predicate profiler: where did the processor time of a parallel run go?
#[derive(Debug, Parser)]
#[command(
    name = "pp",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "The log is LOG (a file, a pipe or FIFO, or - for standard input), else $PP_LOG, else ./pp.log.\n\nExamples:\n  pp                      Figure-1 table of ./pp.log\n  pp -l >> datafile       append one datafile row\n  pp --by phase run.log   categories per phase\n  pp --chrome trace.json  timeline for Perfetto / chrome://tracing\n  pp convert run.log run.txt\n  pp calibrate            measure this machine (rc.comm needs it)\n  pp run -- ./omp_prog    run an OpenMP program (clang -fopenmp) and profile it"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    profile: cli::profile::ProfileArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert a log between the binary and the text encoding (losslessly).
    Convert(cli::convert::ConvertArgs),
    /// Measure this machine (copy time by size, thread hand-off latency) into a machine file.
    Calibrate(cli::calibrate::CalibrateArgs),
    /// Run an OpenMP program (clang -fopenmp) with the OMPT tool, then print its profile.
    Run(cli::run::RunArgs),
    /// Finish the log of a recorded run that died, from LOG.tmp and its threads' buffers.
    Recover(cli::recover::RecoverArgs),
    /// Turn an OTF2 trace (Score-P's DIR/traces.otf2) into a pp log (docs/otf2.md).
    Import(cli::import::ImportArgs),
    /// The critical path of a run: its length and the threads, regions and categories on it.
    CriticalPath(cli::critical_path::CriticalPathArgs),
    /// Replay a run on another configuration (shared processors, another network, faster regions).
    Whatif(cli::whatif::WhatifArgs),
    /// The execution signature of a run: per thread, its steps clustered and folded into loops.
    Signature(cli::signature::SignatureArgs),
    /// A performance skeleton of a run: make one (K times shorter), run it, predict from it.
    Skeleton(cli::skeleton::SkeletonArgs),
}

fn main() -> ExitCode {
    one_malloc_arena();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    if let Err(e) = threads_from_env() {
        eprintln!("Error: {e}");
        return ExitCode::FAILURE;
    }
    let result = match cli.command {
        Some(Command::Convert(args)) => cli::convert::convert(&args),
        Some(Command::Calibrate(args)) => cli::calibrate::calibrate(args),
        Some(Command::Run(args)) => return cli::run::run(&args),
        Some(Command::Import(args)) => cli::import::import(&args),
        Some(Command::Recover(args)) => cli::recover::recover(&args),
        Some(Command::CriticalPath(args)) => cli::critical_path::critical_path(&args),
        Some(Command::Whatif(args)) => cli::whatif::whatif(args),
        Some(Command::Signature(args)) => cli::signature::signature(&args),
        Some(Command::Skeleton(args)) => cli::skeleton::skeleton(&args),
        None => cli::profile::profile(&cli.profile),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Keeps every thread of `pp` on glibc's main heap. By default glibc gives a thread that finds
/// the heap busy an arena of its own, and each arena reserves 64 MiB of address space; under an
/// address-space limit (`ulimit -v`, docs/critical-path.md#cost) that reservation fails and is
/// retried, which made `pp critical-path` on 10⁷ events take 20.8 s (19.6 s of it in the
/// kernel) instead of 1.1 s under 112 MiB, and sometimes ended it with a failed allocation.
/// `pp`'s threads allocate batches, not events, so sharing one heap costs nothing measurable.
fn one_malloc_arena() {
    // SAFETY: mallopt only changes the allocator's parameters; no allocation is live in
    // another thread yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Exits on a command line clap refuses: `pp run`'s errors are one line (`pp run: ...`),
/// status 2; a value outside an option's choices one line (`Error: --by: ...`), status 1; the
/// others as clap prints them.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let is_run = std::env::args_os().nth(1).is_some_and(|a| a == "run");
    if !is_run && let Some(line) = cli_support::value_error(&e) {
        eprintln!("Error: {line}");
        std::process::exit(1)
    }
    if !is_run || matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit()
    }
    let text = e.to_string();
    let text = text.split("\n\nUsage:").next().unwrap_or_default();
    let text = text.strip_prefix("error: ").unwrap_or(text);
    let line: Vec<&str> = text.split_whitespace().collect();
    eprintln!("pp run: {} (pp run --help)", line.join(" "));
    std::process::exit(2)
}

/// `$PP_THREADS`, when set: how many threads reading a log may use (docs/event-log.md).
fn threads_from_env() -> Result<(), String> {
    let Some(value) = std::env::var_os("PP_THREADS") else {
        return Ok(());
    };
    match value.to_str().and_then(|v| v.trim().parse::<usize>().ok()) {
        Some(n) if n > 0 => {
            pp::log::set_threads(n);
            Ok(())
        }
        _ => Err(format!(
            "PP_THREADS: expected a positive whole number of threads, found '{}'",
            pp::log::excerpt(&value.to_string_lossy())
        )),
    }
}

/// The log to read: the one given, else the one a recorded program writes by the recorder's
/// own rule (`$PP_LOG` if not empty, else `./pp.log`).
fn log_path(given: Option<&PathBuf>) -> PathBuf {
    pp_recorder::log_path(given.cloned())
}

/// One write for the whole output: a datafile row appended with `>>` is written whole, or on a
/// failure (a full disk) cut off again so that the file is as it was; a closed pipe is not an
/// error.
fn write_stdout(text: &str) -> Result<()> {
    Ok(files::append::report(text.as_bytes())?)
}
