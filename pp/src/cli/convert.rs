//! `pp convert INPUT OUTPUT [--to text|binary]`.

use std::path::PathBuf;

use anyhow::Result;

use super::values::To;

#[derive(Debug, clap::Args)]
pub struct ConvertArgs {
    /// The log to read.
    input: PathBuf,
    /// The log to write (never the input; `-`: standard output, text only).
    output: PathBuf,
    /// Output encoding: text or binary (default: the other one).
    #[arg(long, value_enum, hide_possible_values = true)]
    to: Option<To>,
    /// Replace an existing OUTPUT.
    #[arg(long)]
    force: bool,
}

pub fn convert(args: &ConvertArgs) -> Result<()> {
    pp::log::convert(
        &args.input,
        &args.output,
        args.to.map(Into::into),
        args.force,
    )?;
    Ok(())
}
