//! `pp import`: an OTF2 trace (Score-P's `traces.otf2`) into a pp event log. The OTF2 library
//! is loaded at run time ([`ffi`]); the trace's definitions ([`definitions`]) say which
//! location is which thread, and [`events`] maps its records (docs/otf2.md has the table).

mod definitions;
mod events;
mod ffi;
mod reading;

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::event::{Event, ThreadId};
use crate::log::{
    BinaryWriter, Encoding, MIN_ITEMS, Sorted, TextWriter, default_threads, pipelined,
};

/// What [`import()`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportStats {
    /// Threads (`p`).
    pub threads: u32,
    /// OTF2 records read.
    pub records: u64,
    /// pp events written.
    pub events: u64,
    /// Records not mapped, by kind.
    pub ignored: BTreeMap<&'static str, u64>,
}

/// Events per block of a binary log.
const BLOCK_EVENTS: usize = 4096;

/// Reads the OTF2 trace whose anchor file is `trace` and writes it as a pp log to `out`
/// (`-`: standard output, text only) in `encoding`. Errors are one line, naming the file.
pub fn import(trace: &Path, out: &Path, encoding: Encoding) -> Result<ImportStats, String> {
    let shown = trace.display();
    match std::fs::metadata(trace) {
        Err(e) => return Err(format!("{shown}: {}", files_error(&e))),
        Ok(m) if m.is_dir() => {
            return Err(format!(
                "{shown}: a directory, not an OTF2 anchor file (give DIR/traces.otf2)"
            ));
        }
        Ok(_) => {}
    }
    if std::fs::canonicalize(out).ok() == std::fs::canonicalize(trace).ok() {
        return Err(format!(
            "{}: is the trace's anchor file; refusing to overwrite it",
            out.display()
        ));
    }
    if out == Path::new("-") && encoding == Encoding::Binary {
        return Err(
            "standard output takes the text encoding only (--to text, or name a file)".into(),
        );
    }
    let lib = ffi::lib()?;
    let (header, symbols, mut events, count, records, ignored) =
        reading::read(lib, trace).map_err(|e| format!("{shown}: {e}"))?;
    let sorted = |e: io::Error| format!("{shown}: reading back its sorted events: {e}");
    let out_name = out.display().to_string();
    let mut target = files::Target::open(out).map_err(|e| e.reason())?;
    let werr = |e: io::Error| format!("{out_name}: {e}");
    // The sorted events are read back (merged from the temporary file) on a second thread
    // while this one writes them (docs/otf2.md).
    let mut failed: Option<String> = None;
    match encoding {
        Encoding::Text => {
            let mut w = TextWriter::new(BufWriter::new(&mut target), &header).map_err(werr)?;
            read_back(&mut events, count, |e| {
                if failed.is_none()
                    && let Err(e) = w.write_event(&e, &symbols)
                {
                    failed = Some(werr(e));
                }
            })
            .map_err(sorted)?;
            if let Some(e) = failed {
                return Err(e);
            }
            w.finish().map_err(werr)?.flush().map_err(werr)?;
        }
        Encoding::Binary => {
            let mut w = BinaryWriter::new(BufWriter::new(&mut target), &header).map_err(werr)?;
            let mut pending: BTreeMap<ThreadId, Vec<Event>> = BTreeMap::new();
            read_back(&mut events, count, |e| {
                if failed.is_some() {
                    return;
                }
                let block = pending.entry(e.thread).or_default();
                block.push(e);
                if block.len() >= BLOCK_EVENTS {
                    if let Err(err) = w.write_block(e.thread, block, &symbols) {
                        failed = Some(werr(err));
                    }
                    block.clear();
                }
            })
            .map_err(sorted)?;
            if let Some(e) = failed {
                return Err(e);
            }
            for (thread, block) in pending {
                if !block.is_empty() {
                    w.write_block(thread, &block, &symbols).map_err(werr)?;
                }
            }
            w.finish().map_err(werr)?.flush().map_err(werr)?;
        }
    }
    target.commit().map_err(|e| e.reason())?;
    Ok(ImportStats {
        threads: header.p,
        records,
        events: count,
        ignored,
    })
}

/// Every sorted event of `count` to `write`, in order: read back on a second thread when
/// there are threads to spare and enough events; `Err` is the temporary file failing.
fn read_back(events: &mut Sorted, count: u64, write: impl FnMut(Event)) -> io::Result<()> {
    if default_threads() > 1 && count >= MIN_ITEMS {
        pipelined(|batches| drain(events, |e| batches.push(e)), write)
    } else {
        drain(events, write)
    }
}

fn drain(events: &mut Sorted, mut push: impl FnMut(Event)) -> io::Result<()> {
    while let Some(next) = events.next() {
        push(next?.0);
    }
    Ok(())
}

/// Whether the OTF2 library can be loaded: `Err` says why not, in one line.
pub fn library() -> Result<(), String> {
    ffi::lib().map(|_| ())
}

fn files_error(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".into(),
        _ => e.to_string(),
    }
}
