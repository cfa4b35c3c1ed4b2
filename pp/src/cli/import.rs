//! `pp import TRACE -o LOG`: an OTF2 trace into a pp event log ([`pp::trace::otf2`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use pp::log::{Encoding, LogReader};
use pp::trace::otf2::ImportStats;

use super::values::To;

/// `pp import`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The trace's anchor file (Score-P: DIR/traces.otf2).
    trace: PathBuf,
    /// The log to write (`-`: standard output, text only).
    #[arg(short = 'o', long = "out", value_name = "LOG")]
    out: PathBuf,
    /// Encoding of the log: text or binary.
    #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
    to: To,
    /// Replace an existing LOG.
    #[arg(long)]
    force: bool,
}

/// Imports the trace; says on standard error what it did not map.
pub fn import(args: &ImportArgs) -> Result<()> {
    let stats = pp::trace::otf2::import(&args.trace, &args.out, args.to.into(), args.force)
        .map_err(anyhow::Error::msg)?;
    report(&stats);
    Ok(())
}

/// `pp TRACE.otf2 ...`: a log read from an OTF2 anchor file (its name ends in `.otf2`),
/// imported through a temporary binary log that is gone once the log is open; `None` for any
/// other file.
pub fn open(path: &Path) -> Result<Option<LogReader>> {
    if path.extension().is_none_or(|e| e != "otf2") {
        return Ok(None);
    }
    let tmp = std::env::temp_dir().join(format!(".pp-import-{}.log", std::process::id()));
    let imported =
        pp::trace::otf2::import(path, &tmp, Encoding::Binary, true).map_err(anyhow::Error::msg);
    let opened = imported.and_then(|stats| {
        report(&stats);
        let file = std::fs::File::open(&tmp).context("the imported log")?;
        Ok(LogReader::from_stream(&path.display().to_string(), file)?)
    });
    let _ = std::fs::remove_file(&tmp);
    opened.map(Some)
}

/// What the import did not map, one line per kind, and what it read.
fn report(stats: &ImportStats) {
    for (kind, n) in &stats.ignored {
        let records = if kind.contains(' ') { "" } else { " records" };
        eprintln!("pp import: ignored {n} {kind}{records}");
    }
    eprintln!(
        "pp import: {} records into {} events (p={})",
        stats.records, stats.events, stats.threads
    );
}
