//! [`convert`]: `pp convert IN OUT`, one encoding into the other, losslessly.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::path::Path;

use files::Target;

use pp_recorder::log::{BinaryWriter, Encoding, TextWriter};

use super::error::LogError;
use super::reader::LogReader;
use crate::event::{Event, ThreadId};

/// What [`convert`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertStats {
    /// Encoding of the input.
    pub from: Encoding,
    /// Encoding of the output.
    pub to: Encoding,
    /// Events converted.
    pub events: u64,
    /// Size of the input in bytes (0 when it is a stream: `-`, a pipe).
    pub bytes_in: u64,
    /// Size of the output in bytes.
    pub bytes_out: u64,
}

/// Events per block when converting to binary.
const BLOCK_EVENTS: usize = 4096;

/// Converts the log `input` into `output`: into the other encoding (text → binary, binary →
/// text), or into `to` when given (converting into the same encoding rewrites the log in
/// canonical form). The output is written to a temporary file beside `output` and renamed over
/// it only when complete, so a failure leaves `output` as it was; `output` must be absent or a
/// regular file (a device, FIFO, socket or directory is refused), and an existing one is
/// replaced only with `force`. `-` is standard output, for text only. Refuses to write onto
/// `input`. A damaged input (malformed line, corrupt or
/// truncated binary log) fails the conversion with the reader's error; nothing is written then.
pub fn convert(
    input: &Path,
    output: &Path,
    to: Option<Encoding>,
    force: bool,
) -> Result<ConvertStats, LogError> {
    let in_name = input.display().to_string();
    let out_name = output.display().to_string();
    let refused = |message: String| LogError::Refused {
        file: out_name.clone(),
        message,
    };
    if same_file(input, output) {
        return Err(refused(format!(
            "is the input log {in_name}; refusing to overwrite it"
        )));
    }
    if output != Path::new("-") {
        files::output::check_new(output, force).map_err(|e| refused(e.reason()))?;
    }
    let bytes_in = match fs::metadata(input) {
        Ok(m) if m.is_file() => m.len(),
        _ => 0,
    };
    let mut reader = LogReader::open(input)?;
    let from = reader.encoding();
    let to = to.unwrap_or(from.other());
    if output == Path::new("-") && to == Encoding::Binary {
        return Err(refused(
            "standard output takes the text encoding only (--to text, or name a file)".into(),
        ));
    }
    let mut out = Target::open(output).map_err(|e| refused(e.reason()))?;
    let events = write(&mut reader, &mut out, to, &out_name)?;
    let bytes_out = match &out {
        Target::File(file) => file
            .written_bytes()
            .map_err(|e| LogError::io(&out_name, "write", e))?,
        Target::Stdout(_) => 0,
    };
    out.commit().map_err(|e| refused(e.reason()))?;
    Ok(ConvertStats {
        from,
        to,
        events,
        bytes_in,
        bytes_out,
    })
}

/// Writes every event of `reader` into `out` in encoding `to`; returns the number of events.
fn write(
    reader: &mut LogReader,
    out: &mut Target,
    to: Encoding,
    out_name: &str,
) -> Result<u64, LogError> {
    let werr = |e: io::Error| LogError::io(out_name, "write", e);
    let header = reader.header().clone();
    let mut events = 0u64;
    match to {
        Encoding::Text => {
            let mut w = TextWriter::new(io::BufWriter::new(out), &header).map_err(werr)?;
            while let Some(e) = reader.next_event() {
                w.write_event(&e?, reader.symbols()).map_err(werr)?;
                events += 1;
            }
            w.finish()
                .map_err(werr)?
                .into_inner()
                .map_err(|e| werr(e.into_error()))?;
        }
        Encoding::Binary => {
            let mut w = BinaryWriter::new(io::BufWriter::new(out), &header).map_err(werr)?;
            let mut pending: HashMap<ThreadId, Vec<Event>> = HashMap::new();
            while let Some(e) = reader.next_event() {
                let e = e?;
                let block = pending.entry(e.thread).or_default();
                block.push(e);
                if block.len() >= BLOCK_EVENTS {
                    w.write_block(e.thread, block, reader.symbols())
                        .map_err(werr)?;
                    block.clear();
                }
                events += 1;
            }
            let rest: BTreeMap<ThreadId, Vec<Event>> = pending.into_iter().collect();
            for (thread, block) in rest {
                w.write_block(thread, &block, reader.symbols())
                    .map_err(werr)?;
            }
            w.finish()
                .map_err(werr)?
                .into_inner()
                .map_err(|e| werr(e.into_error()))?;
        }
    }
    Ok(events)
}

/// True when `output` exists and is the same file as `input`.
fn same_file(input: &Path, output: &Path) -> bool {
    let (Ok(a), Ok(b)) = (fs::metadata(input), fs::metadata(output)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if (a.dev(), a.ino()) == (b.dev(), b.ino()) {
            return true;
        }
    }
    let _ = (a, b);
    match (fs::canonicalize(input), fs::canonicalize(output)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
