//! `pp [LOG]`: the profile of a log — the Figure 1 table, a datafile row (`-l`), a breakdown
//! (`--by`) or JSON — and the timeline (`--chrome`).

use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use pp::chrome::ChromeTrace;
use pp::log::LogReader;
use pp::machine::Machine;
use pp::profile::{By, Category, RowError, Sink, profile_log};

use super::values::Format;

#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    /// The event log (text or binary; detected); `-` reads standard input.
    pub log: Option<PathBuf>,
    /// Print one datafile row (`key=value ...`) instead of the table.
    #[arg(short = 'l', long = "line")]
    pub line: bool,
    /// Break the categories down by thread, region or phase.
    #[arg(
        long,
        value_enum,
        value_name = "thread|region|phase",
        hide_possible_values = true
    )]
    pub by: Option<By>,
    /// Output format: text or json.
    #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
    pub format: Format,
    /// Also write the per-thread timeline as Chrome Trace Event JSON to FILE (`-`: standard
    /// output, and the profile goes to standard error).
    #[arg(long, value_name = "FILE")]
    pub chrome: Option<PathBuf>,
    /// Replace an existing --chrome FILE.
    #[arg(long, requires = "chrome")]
    pub force: bool,
    /// Machine file from `pp calibrate`: communication beyond its ideal time becomes rc.comm.
    /// Default: $PP_MACHINE, else ~/.config/pp/machine.toml when it exists.
    #[arg(long, value_name = "FILE")]
    pub machine: Option<PathBuf>,
}

pub fn profile(args: &ProfileArgs) -> Result<()> {
    if let Some(file) = args.chrome.as_ref().filter(|f| f.as_os_str() != "-") {
        files::output::check_new(file, args.force).context("--chrome")?;
    }
    let path = crate::log_path(args.log.as_ref());
    let mut reader = super::import::open(&path)?.map_or_else(|| LogReader::open(&path), Ok)?;
    // Messages name standard input as the reader does.
    let name = if path.as_os_str() == "-" {
        "stdin".to_string()
    } else {
        path.display().to_string()
    };
    let mut chrome = match &args.chrome {
        Some(file) => Some(ChromeOutput::create(file, reader.header().p)?),
        None => None,
    };
    let machine = machine(args.machine.as_ref())?;
    let calibrated = machine.is_some();
    let profiled = {
        let sink = chrome.as_mut().map(|c| &mut c.trace as &mut dyn Sink);
        profile_log(&mut reader, machine, sink)
    };
    let warning = profiled.warning(&name);
    let profile = profiled.into_profile(&name).map_err(anyhow::Error::msg)?;
    if let Some(w) = warning {
        eprintln!("pp: warning: {w}");
    }
    for w in &profile.warnings {
        eprintln!("pp: warning: {name}: {w}");
    }
    if !calibrated && profile.totals.get(Category::Cl) > 0 {
        eprintln!(
            "pp: warning: no machine calibration (pp calibrate): all communication time counts as cl, none as rc.comm"
        );
    }
    // An empty run window measured nothing: every report refuses it as `-l` does, rather
    // than print a table of zeros (docs/event-log.md).
    if profile.wall_ns() == 0 && !args.line {
        bail!(
            "{name}: the run window is empty (it starts and ends at {} ns, wall = 0): nothing \
             was measured",
            profile.window.0
        );
    }
    let text = match (args.format, args.line, args.by) {
        (Format::Json, _, _) => profile.json(),
        (Format::Text, true, _) => match profile.checked_datafile_row() {
            Ok(row) => format!("{row}\n"),
            Err(e) => match (&e, reader.header_line()) {
                (RowError::ComputedKey(_), Some(line)) => bail!("{name}:{line}: {e}"),
                _ => bail!("{name}: {e}"),
            },
        },
        (Format::Text, false, Some(by)) => profile.breakdown(by),
        (Format::Text, false, None) => profile.figure1(),
    };
    // The trace is kept only once the run is known to have a report: a refused log (an empty
    // window, a row that cannot be written) leaves no file behind.
    if let Some(c) = chrome {
        c.finish()?;
    }
    if args.chrome.as_deref() == Some(Path::new("-")) {
        // The trace has standard output.
        eprint!("{text}");
        return Ok(());
    }
    crate::write_stdout(&text)
}

/// The machine file: the one given (which must load), else the default one if it exists.
pub fn machine(given: Option<&PathBuf>) -> Result<Option<Machine>> {
    let machine = pp::machine::given_or_default(given.map(PathBuf::as_path));
    match given {
        Some(_) => machine.context("--machine"),
        None => Ok(machine?),
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
