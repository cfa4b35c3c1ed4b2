//! Completing the log of a run that died (docs/event-log.md, "Crash-safe buffers"): the
//! `<log>.tmp` prefix the recorder wrote, plus the events its threads' buffers held in
//! `<log>.tmp.buffers` (names in `<log>.tmp.names`), become one finished log. `pp run` does it
//! when the program dies before finishing its log; `pp recover` does it by hand.
//!
//! Per thread, the buffer's events follow the thread's events in the `.tmp` (its `base` says
//! how many of them the log held when the buffer started, so an event is never taken twice),
//! in their recorded order, each at least at the time of the one before. Nothing is invented:
//! a thread without its `stop` ends at its last event, and the profile's window ends at the
//! run's last event.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use pp_recorder::spill::{self, Spilled};

use crate::event::{Event, EventKind, Symbols, ThreadId};
use crate::log::{BinaryWriter, LogReader};

/// What [`recover`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The finished log.
    pub log: PathBuf,
    /// Events taken from the `.tmp` log.
    pub from_log: u64,
    /// Events taken from the threads' buffers.
    pub from_buffers: u64,
    /// Threads that never recorded their `stop`: they end at their last event.
    pub unstopped: Vec<ThreadId>,
    /// Threads whose events were left out (the log's header does not allow them), with why.
    pub left_out: Vec<(ThreadId, String)>,
}

/// Why a log could not be recovered (one line, naming the file).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RecoverError(String);

/// Writes `out` from the `.tmp` log `tmp` and the buffers beside it, then removes `tmp` and
/// the buffers' files. `Ok(None)` when there are no buffers beside `tmp` (nothing was written
/// and nothing removed: the `.tmp` is all there is), or when neither holds an event (the
/// buffers' files are removed, the `.tmp` is left).
pub fn recover(tmp: &Path, out: &Path) -> Result<Option<Recovered>, RecoverError> {
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if same(tmp, out) || spill::paths(tmp).iter().any(|p| same(p, out)) {
        return Err(RecoverError(format!(
            "{}: the recovered log would replace what it is recovered from",
            out.display()
        )));
    }
    let spilled = spill::read(tmp).map_err(|e| RecoverError(e.to_string()))?;
    let Some(spilled) = spilled else {
        return Ok(None);
    };
    let mut reader = LogReader::open(tmp).map_err(|e| RecoverError(e.to_string()))?;
    let header = reader.header().clone();
    let mut symbols = Symbols::default();
    let mut threads: BTreeMap<ThreadId, Vec<Event>> = BTreeMap::new();
    // A .tmp ends without its end marker, or in the middle of a block: every complete event
    // before that is kept, and the buffers hold the rest.
    let _ = reader.for_each_event(|e, from| {
        let kind = remap(e.kind, from, &mut symbols);
        threads
            .entry(e.thread)
            .or_default()
            .push(Event { kind, ..*e });
    });
    let from_log = threads.values().map(|v| v.len() as u64).sum();
    let from_buffers = append_buffers(&spilled, &mut threads, &mut symbols);
    if from_log + from_buffers == 0 {
        remove_buffers(tmp);
        return Ok(None);
    }
    let mut unstopped = Vec::new();
    for (&thread, events) in &threads {
        if !events.iter().any(|e| e.kind == EventKind::Stop) {
            unstopped.push(thread);
        }
    }
    let left_out = write(out, &header, &threads, &symbols)?;
    let _ = std::fs::remove_file(tmp);
    remove_buffers(tmp);
    Ok(Some(Recovered {
        log: out.to_path_buf(),
        from_log,
        from_buffers,
        unstopped,
        left_out,
    }))
}

fn remove_buffers(tmp: &Path) {
    for path in spill::paths(tmp) {
        let _ = std::fs::remove_file(path);
    }
}

/// Appends each buffer's events that the log lacks to its thread; returns how many.
fn append_buffers(
    spilled: &Spilled,
    threads: &mut BTreeMap<ThreadId, Vec<Event>>,
    symbols: &mut Symbols,
) -> u64 {
    let mut added = 0;
    for buffer in &spilled.threads {
        let events = threads.entry(buffer.thread).or_default();
        // The log held `base` of the thread's events when the buffer started; those it holds
        // beyond that came from this buffer (a crash during its flush).
        let taken = (events.len() as u64).saturating_sub(buffer.base);
        let mut last = events.last().map_or(0, |e| e.t);
        for e in buffer.events.iter().skip(taken as usize) {
            last = last.max(e.t);
            events.push(Event {
                t: last,
                thread: buffer.thread,
                kind: remap(e.kind, &spilled.symbols, symbols),
            });
            added += 1;
        }
    }
    added
}

/// Writes the log; returns the threads it had to leave out.
fn write(
    out: &Path,
    header: &crate::event::Header,
    threads: &BTreeMap<ThreadId, Vec<Event>>,
    symbols: &Symbols,
) -> Result<Vec<(ThreadId, String)>, RecoverError> {
    let shown = out.display();
    let mut target = files::output::Output::create(out).map_err(|e| RecoverError(e.to_string()))?;
    let werr = |e: io::Error| RecoverError(format!("writing {shown}: {e}"));
    let mut left_out = Vec::new();
    {
        let mut w = BinaryWriter::new(BufWriter::new(&mut target), header).map_err(werr)?;
        for (&thread, events) in threads {
            // One block per chunk, as the recorder writes them.
            for chunk in events.chunks(pp_recorder::DEFAULT_BUFFER_EVENTS) {
                match w.write_block(thread, chunk, symbols) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                        left_out.push((thread, e.to_string()));
                        break;
                    }
                    Err(e) => return Err(werr(e)),
                }
            }
        }
        w.finish().map_err(werr)?.flush().map_err(werr)?;
    }
    target.commit().map_err(|e| RecoverError(e.to_string()))?;
    Ok(left_out)
}

/// `kind` with its names and team interned from `from` into `to`.
fn remap(kind: EventKind, from: &Symbols, to: &mut Symbols) -> EventKind {
    if let EventKind::RegionBegin { id, name, team } = kind {
        return EventKind::RegionBegin {
            id,
            name: to.intern(from.get_name(name).unwrap_or("_")),
            team: team.map(|t| to.intern_team(from.get_team(t).unwrap_or(&[]))),
        };
    }
    let mut name = |s: crate::event::Sym| to.intern(from.get_name(s).unwrap_or("_"));
    match kind {
        EventKind::WorkBegin { label } => EventKind::WorkBegin {
            label: label.map(name),
        },
        EventKind::WorkEnd { label } => EventKind::WorkEnd {
            label: label.map(name),
        },
        EventKind::WaitBegin { kind, object } => EventKind::WaitBegin {
            kind,
            object: object.map(name),
        },
        EventKind::WaitEnd { kind, object, by } => EventKind::WaitEnd {
            kind,
            object: object.map(name),
            by,
        },
        EventKind::Release { kind, object } => EventKind::Release {
            kind,
            object: object.map(name),
        },
        EventKind::Phase { name: n } => EventKind::Phase { name: name(n) },
        EventKind::Send {
            peer,
            tag,
            bytes,
            comm,
        } => EventKind::Send {
            peer,
            tag,
            bytes,
            comm: comm.map(name),
        },
        EventKind::Recv {
            peer,
            tag,
            bytes,
            comm,
        } => EventKind::Recv {
            peer,
            tag,
            bytes,
            comm: comm.map(name),
        },
        EventKind::Coll {
            op,
            bytes,
            root,
            comm,
        } => EventKind::Coll {
            op: name(op),
            bytes,
            root,
            comm: comm.map(name),
        },
        EventKind::Start
        | EventKind::RegionBegin { .. }
        | EventKind::Stop
        | EventKind::RegionEnd { .. }
        | EventKind::CommBegin { .. }
        | EventKind::CommEnd { .. }
        | EventKind::Cpu { .. } => kind,
    }
}
