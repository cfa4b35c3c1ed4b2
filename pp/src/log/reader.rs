//! [`LogReader`]: reads either encoding and returns the events in global time order.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use super::binary_reader::BinaryLog;
use super::text::{self, TextLog};
use pp_recorder::log::Encoding;

use super::error::LogError;
use super::limits::MAX_PIPED;
use super::pipeline::{self, MIN_ITEMS};
use super::place::Place;
use super::sorted::RUN_EVENTS;
use super::temporary;
use crate::event::{Event, Header, Symbols};

/// Reads a log of either encoding, detected from its first bytes (see [`Encoding::detect`]),
/// and returns its events in global time order: by time, ties by thread id, then by order in
/// the file.
///
/// A text log is read as a stream of lines (at most [`super::MAX_LINE`] bytes each) on open,
/// and its events are sorted in runs of bounded size; runs beyond the first are written to an
/// unlinked temporary file and merged while the events are returned, so memory is bounded
/// whatever the log's length (about 28 MiB). A binary log is streamed: open indexes its blocks
/// (reading only block headers and symbol definitions) and the events are decoded while they
/// are returned, so memory is bounded by the number of threads and the block size (plus 32
/// bytes of index per block), not by the number of events.
///
/// The log may be a regular file, a pipe, a FIFO, a character device or standard input (`-`).
/// A binary log that is not a regular file is first copied to an unlinked temporary file
/// (at most [`MAX_PIPED`] bytes), because its blocks are read out of order.
///
/// Damage does not fail `open` unless the header itself is unreadable: every valid event is
/// returned first, then one `Some(Err(_))` says what is wrong and where, then `None`.
/// * A malformed text line ends the log there: the events of the lines before it are returned
///   (sorted), then the error for that line.
/// * Corrupt binary data inside a block is reported when the merge reaches it (after the last
///   valid event of that thread) and ends the log.
/// * A binary log that ends early (crash, cut file) or whose item structure is damaged yields
///   every complete record of every thread, then an error that names the byte where the data
///   ends and says that the end marker is missing.
#[derive(Debug)]
pub struct LogReader {
    inner: Inner,
    /// Threads [`LogReader::for_each_event`] may use (see [`LogReader::set_threads`]).
    threads: usize,
}

#[derive(Debug)]
enum Inner {
    Text {
        log: Box<TextLog>,
        /// The line of the event last returned.
        line: Option<u64>,
    },
    Binary(Box<BinaryLog>),
}

/// The name of standard input, as a log path and in messages.
const STDIN: &str = "-";

impl LogReader {
    /// Opens a log, detecting its encoding: a file, a pipe or FIFO, a device, or standard input
    /// when `path` is `-`. Messages name the file as `path` is written (`stdin` for `-`).
    pub fn open(path: &Path) -> Result<LogReader, LogError> {
        if path.as_os_str() == STDIN {
            return LogReader::from_stream("stdin", io::stdin().lock());
        }
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| match super::unfinished::missing(path) {
            Some(hint) if e.kind() == io::ErrorKind::NotFound => LogError::Refused {
                file: name.clone(),
                message: format!("cannot open: {e}; {hint}"),
            },
            _ => LogError::io(&name, "open", e),
        })?;
        let meta = file
            .metadata()
            .map_err(|e| LogError::io(&name, "read", e))?;
        if !meta.is_file() {
            return LogReader::from_stream(&name, file);
        }
        let (first, n, file) = first_bytes(&name, file)?;
        match Encoding::detect(&first[..n]) {
            Encoding::Binary => Ok(LogReader::new(Inner::Binary(Box::new(
                BinaryLog::from_file(&name, file, meta.len())?,
            )))),
            Encoding::Text => LogReader::text(&name, &first[..n], file, RUN_EVENTS),
        }
    }

    /// Reads a log from a stream that cannot seek (a pipe, standard input); `name` stands for
    /// it in messages. A text log is read line by line; a binary log is copied to an unlinked
    /// temporary file first (at most [`MAX_PIPED`] bytes).
    pub fn from_stream(name: &str, input: impl Read) -> Result<LogReader, LogError> {
        let (first, n, input) = first_bytes(name, input)?;
        match Encoding::detect(&first[..n]) {
            Encoding::Binary => {
                let (file, len) = spool(name, &first[..n], input)?;
                Ok(LogReader::new(Inner::Binary(Box::new(
                    BinaryLog::from_file(name, file, len)?,
                ))))
            }
            Encoding::Text => LogReader::text(name, &first[..n], input, RUN_EVENTS),
        }
    }

    /// Reads a log held in memory; `name` stands for the file in messages.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<LogReader, LogError> {
        match Encoding::detect(&bytes) {
            Encoding::Binary => Ok(LogReader::new(Inner::Binary(Box::new(
                BinaryLog::from_memory(name, bytes)?,
            )))),
            Encoding::Text => LogReader::text(name, &[], &bytes[..], RUN_EVENTS),
        }
    }

    /// Reads a text log held in memory, sorting its events in runs of `run_events` (so that
    /// tests can make the runs spill on a small log); the same events come out whatever it is.
    #[doc(hidden)]
    pub fn from_text_in_runs(
        name: &str,
        bytes: &[u8],
        run_events: usize,
    ) -> Result<LogReader, LogError> {
        LogReader::text(name, &[], bytes, run_events)
    }

    /// A text log whose first bytes, already read, are `first`, and the rest is `rest`.
    fn text(
        name: &str,
        first: &[u8],
        rest: impl Read,
        run_events: usize,
    ) -> Result<LogReader, LogError> {
        let input = BufReader::with_capacity(64 * 1024, first.chain(rest));
        Ok(LogReader::new(Inner::Text {
            log: Box::new(text::parse(name, input, run_events)?),
            line: None,
        }))
    }

    fn new(inner: Inner) -> LogReader {
        LogReader {
            inner,
            threads: pipeline::default_threads(),
        }
    }

    /// Sets how many threads [`LogReader::for_each_event`] and
    /// [`LogReader::for_each_placed`] may use (at least 1; the default is
    /// [`super::set_threads`]'s, else the machine's parallelism). With more than one, a binary
    /// log is decoded on a second thread while the caller's handles its events; the events,
    /// their places and the damage are the same whatever it is.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The line of a text log's header (counted from 1); `None` for a binary log.
    pub fn header_line(&self) -> Option<usize> {
        match &self.inner {
            Inner::Text { log, .. } => Some(log.header_line),
            Inner::Binary(_) => None,
        }
    }

    /// The encoding of the log.
    pub fn encoding(&self) -> Encoding {
        match self.inner {
            Inner::Text { .. } => Encoding::Text,
            Inner::Binary(_) => Encoding::Binary,
        }
    }

    /// The header.
    pub fn header(&self) -> &Header {
        match &self.inner {
            Inner::Text { log, .. } => &log.header,
            Inner::Binary(log) => log.header(),
        }
    }

    /// The names and teams of the log, which the events' [`crate::event::Sym`] and
    /// [`crate::event::TeamRef`] refer to. (Both readers know every definition after open.)
    pub fn symbols(&self) -> &Symbols {
        match &self.inner {
            Inner::Text { log, .. } => &log.symbols,
            Inner::Binary(log) => log.symbols(),
        }
    }

    /// The next event in global time order (ties broken by thread id, then file order).
    /// `Some(Err(_))` reports damage (truncated or corrupt data) at that point; every event
    /// returned before it is valid, and after an error the reader returns `None`.
    #[inline]
    pub fn next_event(&mut self) -> Option<Result<Event, LogError>> {
        match &mut self.inner {
            Inner::Binary(log) => log.next_event(),
            Inner::Text { log, line } => match log.events.next() {
                Some(Ok((e, l))) => {
                    *line = Some(l);
                    Some(Ok(e))
                }
                Some(Err(e)) => {
                    log.error = None;
                    Some(Err(LogError::io(
                        &log.name,
                        "read back its sorted events",
                        e,
                    )))
                }
                None => log.error.take().map(Err),
            },
        }
    }

    /// Calls `f` with every remaining event in global time order (the order of
    /// [`LogReader::next_event`], without returning each one through a `Result`) and the
    /// log's symbols; `Err` is the damage that ends the log, after every valid event before it.
    #[inline]
    pub fn for_each_event(&mut self, mut f: impl FnMut(&Event, &Symbols)) -> Result<(), LogError> {
        self.for_each_placed(|e, symbols, _| f(e, symbols))
    }

    /// [`LogReader::for_each_event`], and `f` is also told each event's [`Place`] in the file
    /// (what [`LogReader::place`] would say after returning it).
    #[inline]
    pub fn for_each_placed(
        &mut self,
        f: impl FnMut(&Event, &Symbols, Place),
    ) -> Result<(), LogError> {
        self.for_each_placed_tapped(f, None::<fn(&Event)>)
    }

    /// [`LogReader::for_each_placed`], and every event also goes to `tap`, in the same order:
    /// on a thread of its own when a binary log is decoded on a second one (see
    /// [`LogReader::set_threads`]), else on this one before `f` has it.
    pub fn for_each_placed_tapped(
        &mut self,
        mut f: impl FnMut(&Event, &Symbols, Place),
        mut tap: Option<impl FnMut(&Event) + Send>,
    ) -> Result<(), LogError> {
        let damage = match &mut self.inner {
            Inner::Binary(log) => {
                if self.threads > 1 && log.declared_events() >= MIN_ITEMS {
                    log.for_each_event_in_pipeline(f, tap)
                } else {
                    log.for_each_event(|e, symbols, place| {
                        if let Some(tap) = &mut tap {
                            tap(e);
                        }
                        f(e, symbols, place)
                    })
                }
            }
            Inner::Text { log, line } => loop {
                match log.events.next() {
                    Some(Ok((e, l))) => {
                        *line = Some(l);
                        if let Some(tap) = &mut tap {
                            tap(&e);
                        }
                        f(&e, &log.symbols, Place::Line(l));
                    }
                    Some(Err(e)) => {
                        log.error = None;
                        break Some(LogError::io(&log.name, "read back its sorted events", e));
                    }
                    None => break log.error.take(),
                }
            },
        };
        damage.map_or(Ok(()), Err)
    }

    /// Where the event most recently returned (by [`LogReader::next_event`] or
    /// [`LogReader::for_each_event`]) is in the file: `line N` of a text log, `byte N` (where
    /// its record starts) of a binary log; [`Place::Start`] before the first event.
    pub fn place(&self) -> Place {
        match &self.inner {
            Inner::Text { line, .. } => line.map_or(Place::Start, Place::Line),
            Inner::Binary(log) => log.place(),
        }
    }

    /// True when the log ended with its end marker (binary); always true for text, which has
    /// no end marker (a malformed line is still reported by [`LogReader::next_event`]).
    pub fn finished(&self) -> bool {
        match &self.inner {
            Inner::Text { .. } => true,
            Inner::Binary(log) => log.finished(),
        }
    }
}

impl Iterator for LogReader {
    type Item = Result<Event, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_event()
    }
}

/// The first bytes of `input` (up to the length of the binary magic, fewer only at its end),
/// how many, and the input to read on from there.
fn first_bytes<R: Read>(name: &str, mut input: R) -> Result<([u8; 6], usize, R), LogError> {
    let mut first = [0u8; 6];
    let mut n = 0;
    while n < first.len() {
        match input.read(&mut first[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(LogError::io(name, "read", e)),
        }
    }
    Ok((first, n, input))
}

/// Copies a binary log that cannot seek (`first`, then the rest of `input`) into a temporary
/// file that is unlinked at once (nothing is left behind, whatever happens); returns it and its
/// length. Refuses past [`MAX_PIPED`] bytes.
fn spool(name: &str, first: &[u8], input: impl Read) -> Result<(File, u64), LogError> {
    let fail = |e: io::Error| LogError::io(name, "copy to a temporary file", e);
    let mut file = temporary::unlinked("pp-spool").map_err(fail)?;
    file.write_all(first).map_err(fail)?;
    let copied = io::copy(&mut input.take(MAX_PIPED + 1), &mut file).map_err(fail)?;
    let len = first.len() as u64 + copied;
    if len > MAX_PIPED {
        return Err(LogError::Refused {
            file: name.to_string(),
            message: format!(
                "a binary log read from a pipe may be at most {MAX_PIPED} bytes; give it as a file"
            ),
        });
    }
    Ok((file, len))
}
