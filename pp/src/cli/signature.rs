//! `pp signature [LOG] [--threshold T | --scale K] [--format text|json]`: the execution
//! signature of a run (docs/skeletons.md).

use std::path::PathBuf;

use anyhow::{Result, bail};
use std::io::Write;

use pp::signature::{self, Form, Threshold};

use super::values::Format;

#[derive(Debug, clap::Args)]
pub struct SignatureArgs {
    /// The event log (text or binary; `-`: standard input); default $PP_LOG, else ./pp.log.
    log: Option<PathBuf>,
    /// Similarity threshold: steps whose computation times and bytes differ by at most this
    /// fraction of the larger are one cluster (default 0.05; 1: by their operations alone; 2:
    /// as 1, and runs of one step alike whatever their lengths).
    #[arg(long, conflicts_with = "scale")]
    threshold: Option<f64>,
    /// Raise the threshold until the signature compresses the run by Q = K/2, at least
    /// min(K, 2) (a skeleton K times shorter, after Sodhi & Subhlok).
    #[arg(long)]
    scale: Option<f64>,
    /// Output format: text or json.
    #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
    format: Format,
}

pub fn signature(args: &SignatureArgs) -> Result<()> {
    let threshold = match (args.threshold, args.scale) {
        (Some(t), _) if !((0.0..=1.0).contains(&t) || t == signature::RUNS) => {
            bail!(
                "--threshold: {} is not in [0, 1] or {}",
                files::quote::number(t),
                signature::RUNS
            )
        }
        (Some(t), _) => Threshold::Fixed(t),
        (None, Some(k)) if !(k.is_finite() && k >= 1.0) => {
            bail!(
                "--scale: {} is not a number at least 1",
                files::quote::number(k)
            )
        }
        (None, Some(k)) => Threshold::Target(pp::signature::target(k)),
        (None, None) => Threshold::Fixed(0.05),
    };
    let form = match args.format {
        Format::Text => Form::Text,
        Format::Json => Form::Json,
    };
    // Written as it is made, a thread at a time (docs/skeletons.md#memory); a closed pipe
    // (`pp signature | head`) ends the command quietly.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = signature::write(
        &crate::log_path(args.log.as_ref()),
        threshold,
        form,
        &mut out,
    )
    .and_then(|_| Ok(out.flush()?));
    match written {
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        other => other,
    }
}
