//! `pp critical-path [LOG] [--format text|json]`.

use std::path::PathBuf;

use anyhow::Result;
use pp::graph::report::Report;

use super::values::Format;

#[derive(Debug, clap::Args)]
pub struct CriticalPathArgs {
    /// The event log (text or binary; `-`: standard input); default $PP_LOG, else ./pp.log.
    log: Option<PathBuf>,
    /// Output format: text or json.
    #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
    format: Format,
}

pub fn critical_path(args: &CriticalPathArgs) -> Result<()> {
    let report = Report::read(&crate::log_path(args.log.as_ref()))?;
    if let Some(w) = &report.warning {
        eprintln!("pp: warning: {w}");
    }
    crate::write_stdout(&match args.format {
        Format::Text => report.text(),
        Format::Json => report.json(),
    })
}
