//! The log file of a session: raw events become [`Event`]s with interned names and go to
//! `<path>.tmp` one block per `write` ([`BinaryWriter`] issues one `write_all` per block), so
//! that a crash leaves a readable prefix; closing writes the end marker and renames the file
//! to its final path, so that a finished run never leaves a half-written log there.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::clock::Clock;
use crate::event::{Event, EventKind, Header, Sym, Symbols, TeamRef, ThreadId};
use crate::log::{BinaryWriter, is_name};
use crate::raw::{ALL_THREADS, Raw, RawKind};
use crate::team_table::TeamTable;

/// Events converted and written at a time: a block of the log holds at most this many.
const CONVERT_CHUNK: usize = 4096;

/// The open log of a session.
pub(crate) struct LogFile {
    out: Option<BinaryWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    symbols: Symbols,
    /// Names already interned, by address and length of the `&'static str`.
    names: HashMap<(usize, usize), Sym>,
    teams: HashMap<u32, TeamRef>,
    /// Each thread's last time written: a block never goes back in time, even if a thread id
    /// is (wrongly) registered by two threads at once.
    last_t: HashMap<ThreadId, u64>,
    /// Each thread's events written.
    logged: HashMap<ThreadId, u64>,
    scratch: Vec<Event>,
    /// The first write error: the log stops there and is not renamed.
    error: Option<io::Error>,
    /// Blocks the writer refused (the log stays valid without them), with the first reason.
    refused: (u64, Option<String>),
    events: u64,
}

impl LogFile {
    /// Checks the header, creates `<path>.tmp` (replacing a stale one) and writes the header.
    /// `<path>` and `<path>.tmp` must be absent or regular files (`PP_LOG=/dev/null` is
    /// refused rather than replaced by the log).
    pub(crate) fn create(path: &Path, header: &Header) -> io::Result<LogFile> {
        BinaryWriter::new(io::sink(), header)?;
        regular(path)?;
        let tmp = tmp_path(path);
        regular(&tmp)?;
        let out = BinaryWriter::new(File::create(&tmp)?, header)?;
        Ok(LogFile {
            out: Some(out),
            tmp,
            path: path.to_path_buf(),
            symbols: Symbols::default(),
            names: HashMap::new(),
            teams: HashMap::new(),
            last_t: HashMap::new(),
            logged: HashMap::new(),
            scratch: Vec::new(),
            error: None,
            refused: (0, None),
            events: 0,
        })
    }

    /// The final path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The path written during the run.
    pub(crate) fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// How many of `thread`'s events the log holds.
    pub(crate) fn logged(&self, thread: ThreadId) -> u64 {
        self.logged.get(&thread).copied().unwrap_or(0)
    }

    /// Blocks refused by the writer, and the first reason.
    pub(crate) fn refused(&self) -> (u64, Option<String>) {
        self.refused.clone()
    }

    /// Appends one block of `thread`'s events. After an I/O error or [`LogFile::close`] the
    /// events are dropped.
    pub(crate) fn write_block(
        &mut self,
        thread: ThreadId,
        raw: &[Raw],
        clock: &Clock,
        teams: &Mutex<TeamTable>,
    ) {
        // Converted a slice at a time, so that the converted events stay in cache.
        for raw in raw.chunks(CONVERT_CHUNK) {
            if self.out.is_none() {
                return;
            }
            self.write_chunk(thread, raw, clock, teams);
        }
    }

    fn write_chunk(
        &mut self,
        thread: ThreadId,
        raw: &[Raw],
        clock: &Clock,
        teams: &Mutex<TeamTable>,
    ) {
        let mut events = std::mem::take(&mut self.scratch);
        events.clear();
        let mut last = self.last_t.get(&thread).copied().unwrap_or(0);
        for r in raw {
            let Some(kind) = r.kind() else { continue };
            last = last.max(clock.to_ns(r.ticks));
            let kind = self.convert(kind, teams);
            events.push(Event {
                t: last,
                thread,
                kind,
            });
        }
        let result = match self.out.as_mut() {
            Some(out) => out.write_block(thread, &events, &self.symbols),
            None => Ok(()),
        };
        match result {
            Ok(()) => {
                self.events += events.len() as u64;
                *self.logged.entry(thread).or_insert(0) += events.len() as u64;
                self.last_t.insert(thread, last);
            }
            // Refused before anything was written: the log is still valid.
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                self.refused.0 += 1;
                self.refused.1.get_or_insert_with(|| e.to_string());
            }
            Err(e) => self.fail(e),
        }
        self.scratch = events;
    }

    /// Writes the end marker and renames the log to its final path. Returns the number of
    /// events written, or the first I/O error of the session (the `.tmp` prefix then stays).
    pub(crate) fn close(&mut self) -> io::Result<u64> {
        if let Some(out) = self.out.take() {
            let result = out
                .finish()
                .and_then(|file| file.sync_all())
                .and_then(|()| regular(&self.path))
                .and_then(|target| std::fs::rename(&self.tmp, target));
            if let Err(e) = result {
                self.fail(e);
            }
        }
        match &self.error {
            None => Ok(self.events),
            Some(e) => Err(io::Error::new(
                e.kind(),
                format!("writing the log {}: {e}", self.tmp.display()),
            )),
        }
    }

    fn fail(&mut self, e: io::Error) {
        self.out = None;
        self.error.get_or_insert(e);
    }

    fn name(&mut self, s: &'static str) -> Sym {
        let key = (s.as_ptr() as usize, s.len());
        if let Some(&sym) = self.names.get(&key) {
            return sym;
        }
        let sym = if is_name(s) {
            self.symbols.intern(s)
        } else {
            self.symbols.intern(&sanitize(s))
        };
        self.names.insert(key, sym);
        sym
    }

    fn label(&mut self, s: Option<&'static str>) -> Option<Sym> {
        s.map(|s| self.name(s))
    }

    fn team(&mut self, index: u32, teams: &Mutex<TeamTable>) -> Option<TeamRef> {
        if index == ALL_THREADS {
            return None;
        }
        if let Some(&t) = self.teams.get(&index) {
            return Some(t);
        }
        let table = teams.lock().unwrap_or_else(PoisonError::into_inner);
        let t = self.symbols.intern_team(table.threads(index));
        self.teams.insert(index, t);
        Some(t)
    }

    fn convert(&mut self, kind: RawKind, teams: &Mutex<TeamTable>) -> EventKind {
        match kind {
            RawKind::Start => EventKind::Start,
            RawKind::Stop => EventKind::Stop,
            RawKind::RegionBegin { id, name, team } => EventKind::RegionBegin {
                id,
                name: self.name(name),
                team: self.team(team, teams),
            },
            RawKind::RegionEnd { id } => EventKind::RegionEnd { id },
            RawKind::WorkBegin(label) => EventKind::WorkBegin {
                label: self.label(label),
            },
            RawKind::WorkEnd(label) => EventKind::WorkEnd {
                label: self.label(label),
            },
            RawKind::WaitBegin(kind, object) => EventKind::WaitBegin {
                kind,
                object: self.label(object),
            },
            RawKind::WaitEnd(kind, object, by) => EventKind::WaitEnd {
                kind,
                object: self.label(object),
                by,
            },
            RawKind::Release(kind, object) => EventKind::Release {
                kind,
                object: self.label(object),
            },
            RawKind::CommBegin(bytes) => EventKind::CommBegin { bytes },
            RawKind::CommEnd(bytes) => EventKind::CommEnd { bytes },
            RawKind::Cpu(thread_cpu_ns, run_delay_ns) => EventKind::Cpu {
                thread_cpu_ns,
                run_delay_ns,
            },
            RawKind::Phase(name) => EventKind::Phase {
                name: self.name(name),
            },
        }
    }
}

/// A name the log can carry (see [`is_name`]): whitespace, control characters and `#`
/// become `_`; the empty name becomes `_`.
pub(crate) fn sanitize(s: &str) -> String {
    if s.is_empty() {
        return "_".to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_whitespace() || c.is_control() || c == '#' {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The file a log may replace: `path` when it is absent or a regular file (a link to one
/// resolved); anything else is refused with `InvalidInput`.
fn regular(path: &Path) -> io::Result<PathBuf> {
    files::output::check(path).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.reason()))
}

/// `<path>.tmp`: where the log is written until the session finishes.
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmp_path_appends_suffix() {
        assert_eq!(tmp_path(Path::new("a/pp.log")), Path::new("a/pp.log.tmp"));
    }

    #[test]
    fn names_are_made_tokens() {
        assert_eq!(sanitize("fft rows#2"), "fft_rows_2");
        assert_eq!(sanitize(""), "_");
        assert!(is_name(&sanitize("a\tb\n")));
        assert_eq!(sanitize("über"), "über");
    }
}
