//! `pp`: the predicate profiler's command line. Reads an event log (text or binary), attributes
//! every thread-instant to a lost-cycles category and prints the result.

use std::io::{BufWriter, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};
use pp::log::{Encoding, LogReader};
use pp::machine::Machine;
use pp::profile::{By, Category, ChromeTrace, Profile, RowError, Sink, Sweep};

mod import;
mod run;

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
    profile: ProfileArgs,
}

#[derive(Debug, clap::Args)]
struct ProfileArgs {
    /// The event log (text or binary; detected); `-` reads standard input.
    log: Option<PathBuf>,
    /// Print one datafile row (`key=value ...`) instead of the table.
    #[arg(short = 'l', long = "line")]
    line: bool,
    /// Break the categories down by thread, region or phase.
    #[arg(long, value_name = "thread|region|phase")]
    by: Option<String>,
    /// Output format: text or json.
    #[arg(long, default_value = "text")]
    format: String,
    /// Also write the per-thread timeline as Chrome Trace Event JSON to FILE (`-`: standard
    /// output, and the profile goes to standard error).
    #[arg(long, value_name = "FILE")]
    chrome: Option<PathBuf>,
    /// Machine file from `pp calibrate`: communication beyond its ideal time becomes rc.comm.
    /// Default: $PP_MACHINE, else ~/.config/pp/machine.toml when it exists.
    #[arg(long, value_name = "FILE")]
    machine: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert a log between the binary and the text encoding (losslessly).
    Convert {
        /// The log to read.
        input: PathBuf,
        /// The log to write (never the input; `-`: standard output, text only).
        output: PathBuf,
        /// Output encoding: text or binary (default: the other one).
        #[arg(long)]
        to: Option<String>,
    },
    /// Measure this machine (copy time by size, thread hand-off latency) into a machine file.
    Calibrate {
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
    },
    /// Run an OpenMP program (clang -fopenmp) with the OMPT tool, then print its profile.
    Run(run::RunArgs),
    /// Turn an OTF2 trace (Score-P's DIR/traces.otf2) into a pp log (docs/otf2.md).
    Import(import::ImportArgs),
    /// The critical path of a run: its length and the threads, regions and categories on it.
    CriticalPath {
        /// The event log (text or binary; `-`: standard input); default $PP_LOG, else ./pp.log.
        log: Option<PathBuf>,
        /// Output format: text or json.
        #[arg(long, default_value = "text")]
        format: String,
    },
    /// Replay a run on another configuration (shared processors, another network, faster regions).
    Whatif(pp::whatif::WhatifArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    let result = match cli.command {
        Some(Command::Convert { input, output, to }) => convert(&input, &output, to.as_deref()),
        Some(Command::Calibrate {
            out,
            quick,
            force,
            mpi,
            mpicc,
            mpirun,
        }) => calibrate(out, quick, force, mpi.then_some((mpicc, mpirun))),
        Some(Command::Run(args)) => return run_program(&args),
        Some(Command::Import(args)) => import::import(&args),
        Some(Command::CriticalPath { log, format }) => {
            pp::graph::report::run(&log_path(log.as_ref()), &format).and_then(|t| write_stdout(&t))
        }
        Some(Command::Whatif(args)) => {
            pp::whatif::run(&args, log_path(None)).and_then(|t| write_stdout(&t))
        }
        None => profile(&cli.profile),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Exits on a command line clap refuses: `pp run`'s errors are one line (`pp run: ...`),
/// status 2; the others as clap prints them.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let is_run = std::env::args_os().nth(1).is_some_and(|a| a == "run");
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

/// `pp run`: the program, then its profile as `pp LOG` (or `pp -l LOG`) prints it; the
/// program's status.
fn run_program(args: &run::RunArgs) -> ExitCode {
    // A machine file that does not load is an argument error, found before the run.
    if let Err(e) = machine(args.machine.as_ref()) {
        eprintln!("pp run: {e:#}");
        return ExitCode::from(2);
    }
    let ran = match run::run(args) {
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
        format: "text".into(),
        chrome: None,
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

fn convert(input: &Path, output: &Path, to: Option<&str>) -> Result<()> {
    let to = match to {
        None => None,
        Some("text") => Some(Encoding::Text),
        Some("binary") => Some(Encoding::Binary),
        Some(other) => bail!("--to '{other}': expected text or binary"),
    };
    pp::log::convert(input, output, to)?;
    Ok(())
}

fn calibrate(
    out: Option<PathBuf>,
    quick: bool,
    force: bool,
    mpi: Option<(String, String)>,
) -> Result<()> {
    let path = out.or_else(pp::machine::default_path).ok_or_else(|| {
        anyhow!("no place for the machine file: give --out FILE (HOME is not set)")
    })?;
    files::output::check(&path).context("--out")?;
    if path.exists() && !force {
        bail!(
            "{}: a machine file is already there; --force replaces it",
            path.display()
        );
    }
    let settings = if quick {
        pp::calibrate::Settings::quick()
    } else {
        pp::calibrate::Settings::standard()
    };
    // One progress line, rewritten in place on a terminal.
    let terminal = std::io::stderr().is_terminal();
    let mut progress = |status: &str| {
        if terminal {
            eprint!("\r\x1b[2Kpp calibrate: {status}");
        }
    };
    let mut machine = pp::calibrate::calibrate(&settings, &mut progress);
    if let Some((mpicc, mpirun)) = mpi {
        let mut settings = if quick {
            pp::calibrate::mpi::MpiSettings::quick()
        } else {
            pp::calibrate::mpi::MpiSettings::standard()
        };
        settings.mpicc = mpicc;
        settings.mpirun = mpirun.split_whitespace().map(String::from).collect();
        let measured = pp::calibrate::mpi::measure(&settings, &mut progress);
        if terminal {
            eprintln!();
        }
        machine.mpi = Some(measured.map_err(|e| anyhow!("--mpi: {e}; nothing written"))?);
    } else if terminal {
        eprintln!();
    }
    machine.save(&path)?;
    write_stdout(&format!(
        "{}wrote {}\n",
        pp::calibrate::table(&machine),
        path.display()
    ))
}

fn log_path(given: Option<&PathBuf>) -> PathBuf {
    given
        .cloned()
        .or_else(|| std::env::var_os("PP_LOG").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("pp.log"))
}

fn profile(args: &ProfileArgs) -> Result<()> {
    let by = args
        .by
        .as_deref()
        .map(|b| b.parse::<By>().map_err(|e| anyhow!("--by: {e}")))
        .transpose()?;
    let json = match args.format.as_str() {
        "text" => false,
        "json" => true,
        other => bail!("--format '{other}': expected text or json"),
    };
    let path = log_path(args.log.as_ref());
    let mut reader = import::open(&path)?.map_or_else(|| LogReader::open(&path), Ok)?;
    // Messages name standard input as the reader does.
    let path = if path.as_os_str() == "-" {
        PathBuf::from("stdin")
    } else {
        path
    };
    let header = reader.header().clone();
    let header_line = reader.header_line();

    let mut chrome = match &args.chrome {
        Some(file) => Some(ChromeOutput::create(file, header.p)?),
        None => None,
    };
    let machine = machine(args.machine.as_ref())?;
    let calibrated = machine.is_some();
    let (attribution, damage) = {
        let sink = chrome.as_mut().map(|c| &mut c.trace as &mut dyn Sink);
        let mut sweep = Sweep::new(&header, sink);
        if let Some(machine) = machine {
            sweep = sweep.with_machine(machine);
        }
        let damage = sweep.read(&mut reader).err();
        (sweep.finish(reader.symbols()), damage)
    };
    if let Some(c) = chrome {
        c.finish()?;
    }
    let attribution = match (attribution, &damage) {
        (Ok(a), _) => a,
        (Err(e), Some(d)) => bail!("{d}; nothing to attribute before it ({e})"),
        (Err(e), None) => bail!("{}: {e}", path.display()),
    };
    let profile = Profile::new(header, attribution, reader.symbols());
    if let Some(d) = &damage {
        eprintln!("pp: warning: {d} (the profile covers the events before it)");
    } else if !reader.finished() {
        eprintln!(
            "pp: warning: {}: the log has no end marker (the run did not finish); the profile covers what was written",
            path.display()
        );
    }
    let name = if path.as_os_str() == "-" {
        "stdin".into()
    } else {
        path.display().to_string()
    };
    for w in &profile.warnings {
        eprintln!("pp: warning: {name}: {w}");
    }
    if !calibrated && profile.totals.get(Category::Cl) > 0 {
        eprintln!(
            "pp: warning: no machine calibration (pp calibrate): all communication time counts as cl, none as rc.comm"
        );
    }
    let text = match (json, args.line, by) {
        (true, _, _) => profile.json(),
        (false, true, _) => match profile.checked_datafile_row() {
            Ok(row) => format!("{row}\n"),
            Err(e) => match (&e, header_line) {
                (RowError::ComputedKey(_), Some(line)) => bail!("{}:{line}: {e}", path.display()),
                _ => bail!("{}: {e}", path.display()),
            },
        },
        (false, false, Some(by)) => profile.breakdown(by),
        (false, false, None) => profile.figure1(),
    };
    if args.chrome.as_deref() == Some(Path::new("-")) {
        // The trace has standard output.
        eprint!("{text}");
        return Ok(());
    }
    write_stdout(&text)
}

/// The machine file: the one given (which must load), else the default one if it exists.
fn machine(given: Option<&PathBuf>) -> Result<Option<Machine>> {
    match given {
        Some(path) => Ok(Some(Machine::load(path).context("--machine")?)),
        None => match pp::machine::default_path().filter(|p| p.exists()) {
            Some(path) => Ok(Some(Machine::load(&path)?)),
            None => Ok(None),
        },
    }
}

/// The Chrome trace goes to a temporary file renamed over FILE when complete (FILE absent or
/// a regular file), or to standard output for `-`.
struct ChromeOutput {
    trace: ChromeTrace<BufWriter<files::Target>>,
    path: PathBuf,
}

impl ChromeOutput {
    fn create(path: &Path, p: u32) -> Result<Self> {
        let out = files::Target::open(path).context("--chrome")?;
        Ok(ChromeOutput {
            trace: ChromeTrace::new(BufWriter::new(out), p)
                .with_context(|| format!("--chrome {}: cannot write", path.display()))?,
            path: path.to_path_buf(),
        })
    }

    fn finish(self) -> Result<()> {
        let out = self
            .trace
            .finish()
            .and_then(|w| w.into_inner().map_err(|e| e.into_error()));
        match out {
            // Dropping the output on an error removes its temporary file.
            Err(e) => Err(e).context(format!("--chrome {}: cannot write", self.path.display())),
            Ok(out) => out.commit().context("--chrome"),
        }
    }
}

/// One write for the whole output: a datafile row appended with `>>` is written whole, or on a
/// failure (a full disk) cut off again so that the file is as it was; a closed pipe is not an
/// error.
fn write_stdout(text: &str) -> Result<()> {
    match files::append::stdout(text.as_bytes()) {
        Err(e) if e.io_error().kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => Ok(written?),
    }
}
