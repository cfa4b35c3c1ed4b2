//! The `fft2d` command line: runs the 2D FFT workload once, recorded by default, and prints its
//! timing and checksum. The `fft2d` binary is [`main`]; so is `lca workload fft2d`, which lets
//! the bundled study run the workload without a separately built binary.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use crate::check::Checker;
use crate::matrix::MatrixRef;
use crate::{Config, Impl};
use clap::Parser;
use clap::error::ErrorKind;

/// 2D FFT of an n×n complex matrix, repeated for --iters matrices, data parallel (dp) or
/// task + data parallel (tp), recorded for lost cycles analysis.
#[derive(Debug, Parser)]
#[command(
    name = "fft2d",
    version,
    after_help = "The event log goes to $PP_LOG, else ./pp.log (see it with `pp`; `pp -l` gives its datafile row).\n\nExamples:\n  fft2d -p 4 -n 256 --impl dp\n  fft2d -p 4 -n 256 --impl tp --check\n  fft2d -p 2 -n 512 --no-record     # the same run without recording"
)]
struct Cli {
    /// Threads, all of them (tp: two groups of p/2 and p - p/2; at least 2).
    #[arg(short = 'p', default_value_t = 2)]
    p: usize,
    /// Side of the matrix (any size; powers of two are fastest).
    #[arg(short = 'n', default_value_t = 256)]
    n: usize,
    /// Implementation: dp (data parallel) or tp (task + data parallel pipeline).
    #[arg(long = "impl", default_value = "dp", value_parser = parse_impl)]
    implementation: Impl,
    /// Matrices transformed, one after the other (the default keeps a run at n = 512 under a
    /// second on 2 cores, and one at n = 64 long enough to measure).
    #[arg(long, default_value_t = 100)]
    iters: usize,
    /// Compare every iteration with a single-threaded reference 2D FFT; exit 1 on a mismatch.
    /// The reference runs inside the run: the timing and the log are then not representative.
    #[arg(long)]
    check: bool,
    /// Do not record (no log): measures the instrumentation's overhead by comparison.
    #[arg(long)]
    no_record: bool,
}

fn parse_impl(s: &str) -> Result<Impl, String> {
    s.parse()
}

/// Runs the command line `args` (the first is the program's name) and returns the exit status.
/// Prints the report on standard output and errors, one line each, on standard error.
pub fn main<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // clap's message without its usage lines, as one line.
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("Error: {first} (try --help)");
            return ExitCode::FAILURE;
        }
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let config = Config {
        implementation: cli.implementation,
        n: cli.n,
        p: cli.p,
        iters: cli.iters,
        record: !cli.no_record,
        log: None,
    };
    config.validate()?;
    let mut checker = Checker::default();
    let mut observe = |k: usize, y: MatrixRef<'_>| {
        if cli.check {
            checker.observe(k, y);
        }
    };
    let outcome = crate::run::run(&config, &mut observe).map_err(|e| e.to_string())?;
    for w in &outcome.warnings {
        eprintln!("fft2d: warning: {w}");
    }
    let recorded = match &outcome.log {
        Some(path) => format!("log {} ({} events)", path.display(), outcome.events),
        None => "not recorded".to_string(),
    };
    let mut text = format!(
        "impl={} n={} p={} iters={}: {:.6} s, {:.3} ms per iteration, {recorded}\nchecksum {:.9e}\n",
        config.implementation,
        config.n,
        config.p,
        config.iters,
        outcome.seconds,
        1e3 * outcome.seconds / config.iters as f64,
        outcome.checksum,
    );
    let verdict = if cli.check {
        let verdict = checker.verdict(config.iters);
        if verdict.is_ok() {
            text += &format!(
                "check: {} iterations match the reference (largest relative error {:.2e})\n",
                checker.checked, checker.worst
            );
        }
        verdict
    } else {
        Ok(())
    };
    write_stdout(&text)?;
    verdict
}

/// Writes `text` to standard output; a closed pipe (`fft2d | head -1`) is not an error.
fn write_stdout(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("writing to standard output: {e}"))
        }
        _ => Ok(()),
    }
}
