//! `pp import TRACE -o LOG`: an OTF2 trace into a pp event log ([`pp::otf2`]).

use std::path::PathBuf;

use anyhow::{Result, bail};
use pp::log::Encoding;

/// `pp import`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The trace's anchor file (Score-P: DIR/traces.otf2).
    trace: PathBuf,
    /// The log to write (`-`: standard output, text only).
    #[arg(short = 'o', long = "out", value_name = "LOG")]
    out: PathBuf,
    /// Encoding of the log: text or binary.
    #[arg(long, default_value = "text")]
    to: String,
}

/// Imports the trace; says on standard error what it did not map.
pub fn import(args: &ImportArgs) -> Result<()> {
    let encoding = match args.to.as_str() {
        "text" => Encoding::Text,
        "binary" => Encoding::Binary,
        other => bail!("--to '{other}': expected text or binary"),
    };
    let stats = pp::otf2::import(&args.trace, &args.out, encoding).map_err(anyhow::Error::msg)?;
    for (kind, n) in &stats.ignored {
        let records = if kind.contains(' ') { "" } else { " records" };
        eprintln!("pp import: ignored {n} {kind}{records}");
    }
    eprintln!(
        "pp import: {} records of {} threads into {} events",
        stats.records, stats.threads, stats.events
    );
    Ok(())
}
