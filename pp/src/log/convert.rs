//! [`convert`]: `pp convert IN OUT`, one encoding into the other, losslessly.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use super::{BinaryWriter, Encoding, LogError, LogReader, TextWriter};
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
    /// Size of the input in bytes.
    pub bytes_in: u64,
    /// Size of the output in bytes.
    pub bytes_out: u64,
}

/// Events per block when converting to binary.
const BLOCK_EVENTS: usize = 4096;

/// Converts the log `input` into `output`: into the other encoding (text → binary, binary →
/// text), or into `to` when given (converting into the same encoding rewrites the log in
/// canonical form). The output is written to a temporary file beside `output` and renamed over
/// it only when complete, so a failure leaves `output` as it was. Refuses to write onto
/// `input`. A damaged input (malformed line, corrupt or truncated binary log) fails the
/// conversion with the reader's error; nothing is written then.
pub fn convert(
    input: &Path,
    output: &Path,
    to: Option<Encoding>,
) -> Result<ConvertStats, LogError> {
    let in_name = input.display().to_string();
    let out_name = output.display().to_string();
    if same_file(input, output) {
        return Err(LogError::Refused {
            file: out_name,
            message: format!("is the input log {in_name}; refusing to overwrite it"),
        });
    }
    let Some(file_name) = output.file_name() else {
        return Err(LogError::Refused {
            file: out_name,
            message: "not a file name".to_string(),
        });
    };
    let bytes_in = fs::metadata(input)
        .map_err(|e| LogError::io(&in_name, "read", e))?
        .len();
    let mut reader = LogReader::open(input)?;
    let from = reader.encoding();
    let to = to.unwrap_or(from.other());
    let dir = match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| LogError::io(&out_name, "create a temporary file for", e))?;
    let written = write(&mut reader, file, to, &out_name).and_then(|events| {
        let bytes_out = fs::metadata(&tmp)
            .map_err(|e| LogError::io(&out_name, "write", e))?
            .len();
        fs::rename(&tmp, output).map_err(|e| LogError::io(&out_name, "rename into place", e))?;
        Ok((events, bytes_out))
    });
    match written {
        Ok((events, bytes_out)) => Ok(ConvertStats {
            from,
            to,
            events,
            bytes_in,
            bytes_out,
        }),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Writes every event of `reader` into `file` in encoding `to`; returns the number of events.
fn write(
    reader: &mut LogReader,
    file: File,
    to: Encoding,
    out_name: &str,
) -> Result<u64, LogError> {
    let werr = |e: io::Error| LogError::io(out_name, "write", e);
    let header = reader.header().clone();
    let mut events = 0u64;
    let file = match to {
        Encoding::Text => {
            let mut w = TextWriter::new(io::BufWriter::new(file), &header).map_err(werr)?;
            while let Some(e) = reader.next_event() {
                w.write_event(&e?, reader.symbols()).map_err(werr)?;
                events += 1;
            }
            w.finish()
                .map_err(werr)?
                .into_inner()
                .map_err(|e| werr(e.into_error()))?
        }
        Encoding::Binary => {
            let mut w = BinaryWriter::new(file, &header).map_err(werr)?;
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
            w.finish().map_err(werr)?
        }
    };
    file.sync_all().map_err(werr)?;
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
