//! [`LogReader`]: reads either encoding and returns the events in global time order.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::binary_reader::BinaryLog;
use super::text::{self, TextLog};
use super::{Encoding, LogError};
use crate::event::{Event, Header, Symbols};

/// Reads a log of either encoding, detected from its first bytes (see [`Encoding::detect`]),
/// and returns its events in global time order: by time, ties by thread id, then by order in
/// the file.
///
/// A text log is parsed whole on open and sorted. A binary log is streamed: open indexes its
/// blocks (reading only block headers and symbol definitions) and the events are decoded while
/// they are returned, so memory is bounded by the number of threads and the block size (plus
/// 32 bytes of index per block), not by the number of events.
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
    /// Events returned so far.
    returned: u64,
}

#[derive(Debug)]
enum Inner {
    Text { log: Box<TextLog>, next: usize },
    Binary(Box<BinaryLog>),
}

impl LogReader {
    /// Opens a log file, detecting its encoding. Messages name the file as `path` is written.
    pub fn open(path: &Path) -> Result<LogReader, LogError> {
        let name = path.display().to_string();
        let mut file = File::open(path).map_err(|e| LogError::io(&name, "open", e))?;
        let len = file
            .metadata()
            .map_err(|e| LogError::io(&name, "read", e))?
            .len();
        let mut first = [0u8; 6];
        let mut n = 0;
        while n < first.len() {
            match file.read(&mut first[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(LogError::io(&name, "read", e)),
            }
        }
        match Encoding::detect(&first[..n]) {
            Encoding::Binary => Ok(LogReader {
                inner: Inner::Binary(Box::new(BinaryLog::from_file(&name, file, len)?)),
                returned: 0,
            }),
            Encoding::Text => {
                let mut bytes = Vec::new();
                file.seek(SeekFrom::Start(0))
                    .and_then(|_| file.read_to_end(&mut bytes))
                    .map_err(|e| LogError::io(&name, "read", e))?;
                LogReader::text(&name, &bytes)
            }
        }
    }

    /// Reads a log held in memory; `name` stands for the file in messages.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<LogReader, LogError> {
        match Encoding::detect(&bytes) {
            Encoding::Binary => Ok(LogReader {
                inner: Inner::Binary(Box::new(BinaryLog::from_memory(name, bytes)?)),
                returned: 0,
            }),
            Encoding::Text => LogReader::text(name, &bytes),
        }
    }

    fn text(name: &str, bytes: &[u8]) -> Result<LogReader, LogError> {
        Ok(LogReader {
            inner: Inner::Text {
                log: Box::new(text::parse(name, bytes)?),
                next: 0,
            },
            returned: 0,
        })
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
        self.returned += 1;
        match &mut self.inner {
            Inner::Binary(log) => log.next_event(),
            Inner::Text { log, next } => match log.events.get(*next) {
                Some(&e) => {
                    *next += 1;
                    Some(Ok(e))
                }
                None => log.error.take().map(Err),
            },
        }
    }

    /// Calls `f` with every remaining event in global time order (the order of
    /// [`LogReader::next_event`], without returning each one through a `Result`) and the
    /// log's symbols; `Err` is the damage that ends the log, after every valid event before it.
    pub fn for_each_event(&mut self, mut f: impl FnMut(&Event, &Symbols)) -> Result<(), LogError> {
        let damage = match &mut self.inner {
            Inner::Binary(log) => log.for_each_event(f),
            Inner::Text { log, next } => {
                for e in log.events.get(*next..).unwrap_or(&[]) {
                    f(e, &log.symbols);
                }
                *next = log.events.len();
                log.error.take()
            }
        };
        damage.map_or(Ok(()), Err)
    }

    /// Where the event most recently returned by [`LogReader::next_event`] is: `event N`, its
    /// number (from 1) in the order returned.
    pub fn place(&self) -> impl std::fmt::Display {
        format!("event {}", self.returned)
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
