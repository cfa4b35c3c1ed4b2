//! `pp import`: an OTF2 trace (Score-P's `traces.otf2`) into a pp event log. The OTF2 library
//! is loaded at run time ([`ffi`]); the trace's definitions ([`definitions`]) say which
//! location is which thread, and [`events`] maps its records (docs/otf2.md has the table).

mod anchor;
mod definitions;
mod events;
mod ffi;
mod order;
mod reading;

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::event::{Event, Header, Sym, Symbols, TeamRef, ThreadId};
use crate::log::{
    BinaryWriter, Encoding, MIN_ITEMS, RUN_EVENTS, TextWriter, default_threads, pipelined,
};
use definitions::Layout;
use order::Order;
use reading::{Imported, Trace};

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
/// (`-`: standard output, text only) in `encoding`; an existing `out` is replaced only with
/// `force`. Errors are one line, naming the file.
///
/// The events are written as they are read, once their place in the log is known
/// (docs/otf2.md#memory-and-speed); a trace whose records do not come in time order is read
/// a second time, its events sorted before any is written. Standard output gets them all
/// sorted first, so that nothing is written unless the whole trace reads.
pub fn import(
    trace: &Path,
    out: &Path,
    encoding: Encoding,
    force: bool,
) -> Result<ImportStats, String> {
    let shown = trace.display();
    match std::fs::metadata(trace) {
        Err(e) => return Err(format!("{shown}: {}", files_error(&e))),
        Ok(m) if m.is_dir() => {
            return Err(format!(
                "{shown}: a directory, not an OTF2 anchor file (give DIR/traces.otf2)"
            ));
        }
        // A FIFO would block the reading (docs/otf2.md#errors): an anchor is a file beside
        // its trace's folder, read more than once.
        Ok(m) if !m.is_file() => {
            return Err(format!(
                "{shown}: not a regular file (a FIFO, socket or device), not an OTF2 anchor file"
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
    if out != Path::new("-") {
        files::output::check_new(out, force).map_err(|e| e.to_string())?;
    }
    let lib = ffi::lib()?;
    let streaming = out != Path::new("-");
    if let Some(stats) = attempt(lib, trace, out, encoding, streaming)? {
        return Ok(stats);
    }
    attempt(lib, trace, out, encoding, false)?
        .ok_or_else(|| format!("{shown}: its events could not be put in order"))
}

/// The log's header: `p`, no run parameters (a trace carries none).
fn header(layout: &Layout) -> Header {
    Header {
        p: layout.p().max(1) as u32,
        params: Vec::new(),
    }
}

/// One reading of the trace into the log `out`: `None` when the events came out of order
/// while `streaming` (what was written is then dropped).
fn attempt(
    lib: &ffi::Lib,
    trace: &Path,
    out: &Path,
    encoding: Encoding,
    streaming: bool,
) -> Result<Option<ImportStats>, String> {
    let shown = trace.display();
    let opened = reading::open(lib, trace).map_err(|e| format!("{shown}: {e}"))?;
    let header = header(&opened.layout);
    let out_name = out.display().to_string();
    let werr = |e: io::Error| format!("{out_name}: {e}");
    let mut target = files::Target::open(out).map_err(|e| e.reason())?;
    let mut log = match encoding {
        Encoding::Text => {
            Log::Text(TextWriter::new(BufWriter::new(&mut target), &header).map_err(werr)?)
        }
        Encoding::Binary => Log::Binary {
            writer: BinaryWriter::new(BufWriter::new(&mut target), &header).map_err(werr)?,
            blocks: vec![Vec::new(); header.p as usize],
        },
    };
    let declared = opened
        .defs
        .locations
        .iter()
        .map(|l| l.events)
        .fold(0u64, u64::saturating_add);
    let mut failed: Option<io::Error> = None;
    let imported = if default_threads() > 1 && declared >= MIN_ITEMS {
        read_on_a_second_thread(opened, streaming, &mut log, &mut failed)
    } else {
        let mut sink = |events: &[Event], symbols: &Symbols| {
            for e in events {
                log.write(e, symbols, &mut failed);
            }
        };
        opened.read(Order::new(streaming, RUN_EVENTS, &mut sink))
    }
    .map_err(|e| format!("{shown}: {e}"))?;
    if imported.disordered {
        return Ok(None);
    }
    if let Some(e) = failed {
        return Err(werr(e));
    }
    log.finish(&imported.symbols).map_err(werr)?;
    target.commit().map_err(|e| e.reason())?;
    Ok(Some(ImportStats {
        threads: header.p,
        records: imported.records,
        events: imported.events,
        ignored: imported.ignored,
    }))
}

/// What crosses from the reading thread to the writing one: the events, each after the
/// names and teams it uses.
enum Piece {
    Event(Event),
    Name(Box<str>),
    Team(Box<[ThreadId]>),
}

/// [`Trace::read`] on a second thread while this one writes the events to `log` (the first
/// error writing goes to `failed`).
fn read_on_a_second_thread<W: Write>(
    trace: Trace,
    streaming: bool,
    log: &mut Log<W>,
    failed: &mut Option<io::Error>,
) -> Result<Imported, String> {
    let mut symbols = Symbols::default();
    pipelined(
        move |pieces| {
            let (mut names, mut teams) = (0usize, 0u32);
            let mut sink = |events: &[Event], defined: &Symbols| {
                while names < defined.len() {
                    pieces.push(Piece::Name(defined.name(Sym(names as u32)).into()));
                    names += 1;
                }
                while let Some(team) = defined.get_team(TeamRef(teams)) {
                    pieces.push(Piece::Team(team.into()));
                    teams += 1;
                }
                for &e in events {
                    pieces.push(Piece::Event(e));
                }
            };
            trace.read(Order::new(streaming, RUN_EVENTS, &mut sink))
        },
        |piece| match piece {
            Piece::Event(e) => log.write(&e, &symbols, failed),
            Piece::Name(name) => {
                symbols.intern(&name);
            }
            Piece::Team(team) => {
                symbols.intern_team(&team);
            }
        },
    )
}

/// The log being written.
enum Log<W: Write> {
    Text(TextWriter<W>),
    Binary {
        writer: BinaryWriter<W>,
        /// Each thread's events not written yet.
        blocks: Vec<Vec<Event>>,
    },
}

impl<W: Write> Log<W> {
    /// Writes (or adds to its thread's block) the next event; after an error, nothing.
    #[inline]
    fn write(&mut self, e: &Event, symbols: &Symbols, failed: &mut Option<io::Error>) {
        if failed.is_some() {
            return;
        }
        let result = match self {
            Log::Text(w) => w.write_event(e, symbols),
            Log::Binary { writer, blocks } => match blocks.get_mut(e.thread as usize) {
                Some(block) => {
                    block.push(*e);
                    if block.len() >= BLOCK_EVENTS {
                        let r = writer.write_block(e.thread, block, symbols);
                        block.clear();
                        r
                    } else {
                        Ok(())
                    }
                }
                None => Err(io::Error::other(format!(
                    "an event of thread {} beyond p={}",
                    e.thread,
                    blocks.len()
                ))),
            },
        };
        if let Err(e) = result {
            *failed = Some(e);
        }
    }

    /// Writes what is left and the end of the log.
    fn finish(self, symbols: &Symbols) -> io::Result<()> {
        match self {
            Log::Text(w) => w.finish()?.flush(),
            Log::Binary { mut writer, blocks } => {
                for (thread, block) in blocks.iter().enumerate() {
                    if !block.is_empty() {
                        writer.write_block(thread as ThreadId, block, symbols)?;
                    }
                }
                writer.finish()?.flush()
            }
        }
    }
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
