//! `pp run [OPTIONS] -- PROGRAM...`: runs the program under a tracer ([`pp::trace::run`]), then
//! prints its profile as `pp LOG` (or `pp -l LOG`) does.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use pp::trace::run::RunOptions;

use super::profile::{ProfileArgs, machine, profile};
use super::values::Format;

/// Run an OpenMP program with the OMPT tool, then print its profile (or its datafile row).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The program must use LLVM's OpenMP runtime (clang -fopenmp); GCC's libgomp has no tools interface.\n\
The tool is $PP_OMPT_LIBRARY, else libpp_ompt.so beside pp, else deps/libpp_ompt.so beside it.\n\
The program gets OMP_TOOL_LIBRARIES=<tool>, LD_PRELOAD=<tool>[:...], OMP_TOOL=enabled, PP_LOG=<log> and PP_PARAMS=<params>.\n\
The program runs in its own process group: SIGTERM and SIGHUP to pp run go to it, and pp run waits for it and for what it started.\n\
pp run exits with the program's status (128+s if killed by signal s).\n\n\
Examples:\n  pp run -- ./fft 512\n  pp run -l --param impl=dp --param n=512 -- ./fft 512 >> fft.dat"
)]
pub struct RunArgs {
    /// Print one datafile row instead of the table; the program's standard output goes to
    /// standard error.
    #[arg(short = 'l', long = "line")]
    line: bool,
    /// Where the program's log goes (default: $PP_LOG, else ./pp.log).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Machine file from `pp calibrate` (as for `pp`).
    #[arg(long, value_name = "FILE")]
    machine: Option<PathBuf>,
    /// A run parameter for the log header and the datafile row (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// The program and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, value_name = "PROGRAM")]
    command: Vec<OsString>,
}

/// `pp run`: the program, then its profile as `pp LOG` (or `pp -l LOG`) prints it; the
/// program's status.
pub fn run(args: &RunArgs) -> ExitCode {
    // A machine file that does not load is an argument error, found before the run.
    if let Err(e) = machine(args.machine.as_ref()) {
        eprintln!("pp run: {e:#}");
        return ExitCode::from(2);
    }
    let options = RunOptions {
        command: args.command.clone(),
        log: args.log.clone(),
        params: args.params.clone(),
        stdout_to_stderr: args.line,
    };
    let mut warn = |w: String| eprintln!("pp run: warning: {w}");
    let ran = match pp::trace::run::run(&options, &mut warn) {
        Ok(ran) => ran,
        Err(f) => {
            eprintln!("pp run: {}", f.message);
            return ExitCode::from(f.status);
        }
    };
    let profiled = profile(&ProfileArgs {
        log: Some(ran.log),
        line: args.line,
        by: None,
        format: Format::Text,
        chrome: None,
        force: false,
        machine: args.machine.clone(),
    });
    match (profiled, ran.status) {
        (Ok(()), status) => ExitCode::from(status),
        (Err(e), status) => {
            eprintln!("pp run: {e:#}");
            ExitCode::from(if status == 0 { 1 } else { status })
        }
    }
}
