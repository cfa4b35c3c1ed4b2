//! A text log's events in time order, in bounded memory (docs/event-log.md#limits): an external
//! merge sort. The events are gathered in runs of at most `run_events`; a full run is sorted
//! and written to a temporary file (unlinked at once), compactly encoded; at the end the last
//! run stays in memory and every run is merged with a loser tree. A log whose events fit in
//! one run is sorted in memory and never touches the disk.
//!
//! The order is by time, then thread, then place in the file (an event's line): the same order
//! as a stable sort by (time, thread) of the whole log.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

use pp_recorder::log::binary::{BlockState, encode_record};
use pp_recorder::log::varint;

use super::decode::{Damage, Defined, decode_record};
use super::merge::{EXHAUSTED, LoserTree};
use super::temporary;
use crate::event::Event;

/// Events in a run by default: about 28 MiB of memory (56 bytes an event with its line).
pub(crate) const RUN_EVENTS: usize = 1 << 19;

/// Bytes each spilled run reads ahead while merging, at most ...
const CHUNK: usize = 64 << 10;

/// ... so that all of them take at most this much (more runs read less ahead each) ...
const READ_AHEAD: usize = 16 << 20;

/// ... but at least this much each (a 10^10-event log: 19,073 runs, 75 MiB).
const MIN_CHUNK: usize = 4 << 10;

/// The longest encoded event (thread, line difference and the record, each field a varint
/// of at most 10 bytes): a run's buffer holds at least this much unread data before a record
/// is decoded, unless its run ends first.
const MAX_RECORD: usize = 128;

/// An event and its line.
type Lined = (Event, u64);

/// The head of a run that is empty from the start (never returned).
const PLACEHOLDER: Event = Event {
    t: 0,
    thread: 0,
    kind: crate::event::EventKind::Start,
};

/// Gathers a log's events, spilling sorted runs to a temporary file.
#[derive(Debug)]
pub(crate) struct Sorter {
    run: Vec<Lined>,
    run_events: usize,
    /// The file of spilled runs, once one is spilled.
    file: Option<BufWriter<File>>,
    /// Each spilled run's bytes in the file: (start, end).
    spilled: Vec<(u64, u64)>,
    /// Bytes written to the file.
    written: u64,
    encoded: Vec<u8>,
}

impl Sorter {
    /// A sorter whose runs hold at most `run_events` events (at least 1).
    pub(crate) fn new(run_events: usize) -> Sorter {
        Sorter {
            run: Vec::new(),
            run_events: run_events.max(1),
            file: None,
            spilled: Vec::new(),
            written: 0,
            encoded: Vec::new(),
        }
    }

    /// Adds the event of `line` (lines increase from one call to the next).
    pub(crate) fn push(&mut self, event: Event, line: u64) -> io::Result<()> {
        if self.run.len() >= self.run_events {
            self.spill()?;
        }
        self.run.push((event, line));
        Ok(())
    }

    /// Sorts the current run and appends it to the file.
    fn spill(&mut self) -> io::Result<()> {
        sort(&mut self.run);
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(BufWriter::with_capacity(
                CHUNK,
                temporary::unlinked("pp-sort")?,
            )),
        };
        let start = self.written;
        let mut st = BlockState::new(0);
        let mut line = 0u64;
        for (e, l) in self.run.drain(..) {
            self.encoded.clear();
            varint::put(&mut self.encoded, u64::from(e.thread));
            varint::put(
                &mut self.encoded,
                varint::zigzag(l.wrapping_sub(line) as i64),
            );
            line = l;
            encode_record(&mut self.encoded, &mut st, e.t, &e.kind);
            file.write_all(&self.encoded)?;
            self.written += self.encoded.len() as u64;
        }
        self.spilled.push((start, self.written));
        Ok(())
    }

    /// The events in order.
    pub(crate) fn finish(mut self) -> io::Result<Sorted> {
        sort(&mut self.run);
        let Some(file) = self.file.take() else {
            return Ok(Sorted::Memory {
                events: self.run,
                next: 0,
            });
        };
        let file = file.into_inner().map_err(|e| e.into_error())?;
        let chunk = (READ_AHEAD / self.spilled.len().max(1)).clamp(MIN_CHUNK, CHUNK);
        let mut runs: Vec<Run> = self
            .spilled
            .iter()
            .map(|&(start, end)| Run::Disk {
                chunk,
                buf: Vec::new(),
                pos: 0,
                at: start,
                end,
                st: BlockState::new(0),
                line: 0,
            })
            .collect();
        runs.push(Run::Memory {
            events: std::mem::take(&mut self.run),
            next: 0,
        });
        let mut heads = Vec::with_capacity(runs.len());
        let mut keys = Vec::with_capacity(runs.len());
        for (i, run) in runs.iter_mut().enumerate() {
            let head = run.next(&file)?;
            keys.push(head.map_or(EXHAUSTED, |h| key(&h, i)));
            heads.push(head.unwrap_or((PLACEHOLDER, 0)));
        }
        Ok(Sorted::Merge(Box::new(Merge {
            file,
            runs,
            heads,
            tree: LoserTree::new(keys),
        })))
    }
}

/// Sorts a run by time, thread and line.
fn sort(run: &mut [Lined]) {
    run.sort_unstable_by_key(|&(e, line)| (e.t, e.thread, line));
}

/// The merge key of a run's head: time, then thread (below 2^20), then the run (runs are in
/// the file's order, so that ties keep it).
fn key(head: &Lined, run: usize) -> u128 {
    (u128::from(head.0.t) << 64) | (u128::from(head.0.thread) << 44) | run as u128
}

/// A log's events in order: [`Sorted::next`] returns them, then `None`; `Some(Err(_))` is an
/// error reading the temporary file back (then `None`).
#[derive(Debug)]
pub(crate) enum Sorted {
    /// Every event sorted in memory.
    Memory { events: Vec<Lined>, next: usize },
    /// Runs merged.
    Merge(Box<Merge>),
}

impl Sorted {
    #[inline]
    pub(crate) fn next(&mut self) -> Option<io::Result<Lined>> {
        match self {
            Sorted::Memory { events, next } => {
                let e = events.get(*next).copied()?;
                *next += 1;
                Some(Ok(e))
            }
            Sorted::Merge(m) => {
                let r = m.next();
                if let Some(Err(_)) = r {
                    *self = Sorted::Memory {
                        events: Vec::new(),
                        next: 0,
                    };
                }
                r
            }
        }
    }
}

/// The merge of the runs.
#[derive(Debug)]
pub(crate) struct Merge {
    file: File,
    runs: Vec<Run>,
    /// Each run's first event not yet returned (any event once the run is exhausted).
    heads: Vec<Lined>,
    tree: LoserTree,
}

impl Merge {
    #[inline]
    fn next(&mut self) -> Option<io::Result<Lined>> {
        let w = self.tree.winner()?;
        let head = self.heads[w];
        match self.runs[w].next(&self.file) {
            Ok(Some(h)) => {
                self.heads[w] = h;
                self.tree.replace_winner(key(&h, w));
            }
            Ok(None) => self.tree.replace_winner(EXHAUSTED),
            Err(e) => return Some(Err(e)),
        }
        Some(Ok(head))
    }
}

/// One sorted run.
#[derive(Debug)]
enum Run {
    /// The last run, kept in memory.
    Memory { events: Vec<Lined>, next: usize },
    /// A run in the file.
    Disk {
        /// Bytes to read at a time.
        chunk: usize,
        /// Bytes read ahead, from `pos` on not yet decoded.
        buf: Vec<u8>,
        pos: usize,
        /// The file's offset of the first byte not yet read, and the run's end.
        at: u64,
        end: u64,
        /// The decoding state: the previous record's time and the previous line.
        st: BlockState,
        line: u64,
    },
}

impl Run {
    #[inline]
    fn next(&mut self, file: &File) -> io::Result<Option<Lined>> {
        match self {
            Run::Memory { events, next } => {
                let e = events.get(*next).copied();
                *next += 1;
                if e.is_none() {
                    *events = Vec::new();
                }
                Ok(e)
            }
            Run::Disk {
                chunk,
                buf,
                pos,
                at,
                end,
                st,
                line,
            } => {
                if buf.len() - *pos < MAX_RECORD && *at < *end {
                    buf.drain(..*pos);
                    *pos = 0;
                    let have = buf.len();
                    let take = (*chunk as u64).min(*end - *at) as usize;
                    buf.resize(have + take, 0);
                    file.read_exact_at(&mut buf[have..], *at)?;
                    *at += take as u64;
                }
                if *pos == buf.len() {
                    *buf = Vec::new();
                    return Ok(None);
                }
                let corrupt = || io::Error::other("the sorted events read back damaged");
                let data = &buf[..];
                let thread = varint::get(data, pos).map_err(|_| corrupt())?;
                let dline = varint::get_wide(data, pos).map_err(|_| corrupt())?;
                *line = line.wrapping_add(varint::unzigzag(dline) as u64);
                let any = Defined {
                    names: u32::MAX,
                    teams: u32::MAX,
                    p: u32::MAX,
                };
                let kind = decode_record(data, pos, st, &any).map_err(|d| match d {
                    Damage::Eof | Damage::Bad(_) => corrupt(),
                })?;
                let event = Event {
                    t: st.t,
                    thread: u32::try_from(thread).map_err(|_| corrupt())?,
                    kind,
                };
                Ok(Some((event, *line)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventKind, Sym, WaitKind};

    fn drain(mut s: Sorted) -> Vec<Lined> {
        let mut out = Vec::new();
        while let Some(e) = s.next() {
            out.push(e.unwrap());
        }
        out
    }

    #[test]
    fn runs_merge_into_the_order_of_a_stable_sort() {
        let kinds = [
            EventKind::Start,
            EventKind::WaitBegin {
                kind: WaitKind::Lock,
                object: Some(Sym(3)),
            },
            EventKind::Cpu {
                thread_cpu_ns: 5,
                run_delay_ns: Some(2),
            },
            EventKind::RegionBegin {
                id: u64::MAX,
                name: Sym(0),
                team: None,
            },
            EventKind::Stop,
        ];
        let mut seed = 7u64;
        let mut events = Vec::new();
        for line in 1..2000u64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let e = Event {
                t: seed % 50,
                thread: (seed >> 20) as u32 % 3,
                kind: kinds[(seed >> 40) as usize % kinds.len()],
            };
            events.push((e, line * 2));
        }
        let mut want = events.clone();
        want.sort_by_key(|(e, _)| (e.t, e.thread));
        for run in [1, 2, 7, 100, 1999, 5000] {
            let mut s = Sorter::new(run);
            for &(e, l) in &events {
                s.push(e, l).unwrap();
            }
            let sorted = s.finish().unwrap();
            assert_eq!(matches!(sorted, Sorted::Memory { .. }), run >= 1999);
            assert_eq!(drain(sorted), want, "runs of {run}");
        }
        assert!(drain(Sorter::new(3).finish().unwrap()).is_empty());
    }
}
