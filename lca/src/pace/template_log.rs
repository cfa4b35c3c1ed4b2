//! The template's log at a point (docs/pace.md#evaluation): the events that
//! [`super::schedule`] generates, each thread on its own processor, kept in memory and handed
//! to `pp`'s reader as a binary log. (Until 2026-11-30 they were written as a text log and
//! parsed again: formatting and parsing the lines took more than half of an evaluation.)

use pp::event::{Event, EventKind, Header, Sym, Symbols, TeamRef, ThreadId};
use pp::log::{BinaryWriter, LogReader};

/// A point's log of the template being generated: its header, names and events.
#[derive(Debug)]
pub struct TemplateLog {
    header: Header,
    symbols: Symbols,
    /// Each thread's events in the order generated; [`TemplateLog::reader`] puts them in
    /// time order.
    threads: Vec<Vec<Event>>,
}

impl TemplateLog {
    /// An empty log of `header`'s threads.
    pub fn new(header: Header) -> TemplateLog {
        TemplateLog {
            threads: vec![Vec::new(); header.p as usize],
            header,
            symbols: Symbols::default(),
        }
    }

    /// The name `name` (a region's), interned.
    pub fn name(&mut self, name: &str) -> Sym {
        self.symbols.intern(name)
    }

    /// The team of `threads` (sorted, distinct), interned.
    pub fn team(&mut self, threads: &[ThreadId]) -> TeamRef {
        self.symbols.intern_team(threads)
    }

    /// Thread `thread`'s event `kind` at `t` ns (`thread` below the header's `p`).
    pub fn push(&mut self, t: u64, thread: ThreadId, kind: EventKind) {
        if let Some(own) = self.threads.get_mut(thread as usize) {
            own.push(Event { t, thread, kind });
        }
    }

    /// A reader of the log, its events in time order, ties by thread, each thread's in the
    /// order generated: the order `pp` reads a log in.
    pub fn reader(mut self) -> Result<LogReader, String> {
        let fail = |e: std::io::Error| format!("the template's log: {e}");
        let mut writer = BinaryWriter::new(Vec::new(), &self.header).map_err(fail)?;
        for (thread, events) in (0..).zip(&mut self.threads) {
            // Stable: a thread's events at one time stay in the order generated.
            events.sort_by_key(|e| e.t);
            writer
                .write_block(thread, events, &self.symbols)
                .map_err(fail)?;
        }
        let bytes = writer.finish().map_err(fail)?;
        LogReader::from_bytes("template", bytes).map_err(|e| format!("the template's log: {e}"))
    }
}
