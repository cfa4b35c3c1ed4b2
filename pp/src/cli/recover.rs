//! `pp recover LOG.tmp [OUTPUT]`: the finished log of a recorded run that died, from its `.tmp`
//! and its threads' buffers (docs/event-log.md, "Crash-safe buffers").

use std::io::ErrorKind;
use std::path::PathBuf;

use anyhow::{Result, bail};

#[derive(Debug, clap::Args)]
pub struct RecoverArgs {
    /// The unfinished log the run left (`<log>.tmp`, with `<log>.tmp.buffers` beside it).
    tmp: PathBuf,
    /// The log to write (default: the input without `.tmp`).
    output: Option<PathBuf>,
}

pub fn recover(args: &RecoverArgs) -> Result<()> {
    let output = match &args.output {
        Some(o) => o.clone(),
        None => match args.tmp.to_str().and_then(|s| s.strip_suffix(".tmp")) {
            Some(stem) if !stem.is_empty() => PathBuf::from(stem),
            _ => bail!(
                "{}: name the log to write (the input's name does not end in .tmp)",
                args.tmp.display()
            ),
        },
    };
    if std::fs::symlink_metadata(&args.tmp).is_err_and(|e| e.kind() == ErrorKind::NotFound) {
        let done = if output.is_file() {
            format!(
                " ({} is there: the run finished, or its log was recovered already)",
                output.display()
            )
        } else {
            String::new()
        };
        bail!(
            "{}: no such file: nothing to recover{done}",
            args.tmp.display()
        );
    }
    let Some(r) = pp::trace::recover::recover(&args.tmp, &output)? else {
        bail!(
            "{}: no buffers with events beside it ({}.buffers): nothing to recover (pp profiles the .tmp as it is)",
            args.tmp.display(),
            args.tmp.display()
        );
    };
    let unstopped = if r.unstopped.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = r.unstopped.iter().map(u32::to_string).collect();
        format!(
            "; threads that did not stop end at their last event: {}",
            list.join(", ")
        )
    };
    eprintln!(
        "recovered {} events into {} ({} from {}, {} from its threads' buffers){unstopped}",
        r.from_log + r.from_buffers,
        r.log.display(),
        r.from_log,
        args.tmp.display(),
        r.from_buffers
    );
    for (thread, why) in &r.left_out {
        eprintln!("warning: thread {thread} left out: {why}");
    }
    Ok(())
}
