//! [`BinaryWriter`]: writes the binary encoding block by block.

use std::collections::HashMap;
use std::io::{self, Write};

use super::binary::{
    BlockState, DEF_NAME, DEF_TEAM, ITEM_BLOCK, ITEM_DEFS, ITEM_END, MAGIC, MAX_CHUNK, MAX_RECORD,
    VERSION, encode_record, references,
};
use super::varint;
use super::{check_header, is_name};
use crate::event::{Event, EventKind, Header, Symbols, TeamRef, ThreadId};

/// Writes a binary log (layout in [`super::binary`]): the header on [`BinaryWriter::new`], one
/// or more blocks per [`BinaryWriter::write_block`], the end marker on
/// [`BinaryWriter::finish`]. Each call issues a single `write_all` of an internal buffer, so
/// `out` needs no extra buffering. A log whose writer is dropped without `finish` reads as
/// unfinished (truncated) — which is what a crash leaves.
#[derive(Debug)]
pub struct BinaryWriter<W: Write> {
    out: W,
    p: u32,
    names_written: u32,
    teams_written: u32,
    last_t: HashMap<ThreadId, u64>,
    events: u64,
    blocks: u64,
    buf: Vec<u8>,
    payload: Vec<u8>,
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

impl<W: Write> BinaryWriter<W> {
    /// Writes the header. Fails with [`io::ErrorKind::InvalidInput`] on a header that the text
    /// encoding could not carry (`p == 0`, a key or value that is not a token, a repeated key).
    pub fn new(mut out: W, header: &Header) -> io::Result<Self> {
        check_header(header).map_err(invalid)?;
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(MAGIC);
        buf.push(VERSION);
        varint::put(&mut buf, u64::from(header.p));
        varint::put(&mut buf, header.params.len() as u64);
        for (key, value) in &header.params {
            for s in [key, value] {
                varint::put(&mut buf, s.len() as u64);
                buf.extend_from_slice(s.as_bytes());
            }
        }
        out.write_all(&buf)?;
        Ok(BinaryWriter {
            out,
            p: header.p,
            names_written: 0,
            teams_written: 0,
            last_t: HashMap::new(),
            events: 0,
            blocks: 0,
            buf,
            payload: Vec::new(),
        })
    }

    /// Writes the events of one thread, in time order, as one block (or several when the
    /// payload would exceed [`super::binary::MAX_CHUNK`]). Names and teams that the events
    /// reference are looked up in `symbols`; those not written yet (every id up to the highest
    /// referenced) are defined first. Fails with [`io::ErrorKind::InvalidInput`], writing
    /// nothing, when `thread >= p`, an event belongs to another thread, times decrease (also
    /// with respect to this thread's previous block), a name is not a token (see
    /// [`super::is_name`]), a team is empty or names a thread `>= p`, or a name or team is not
    /// in `symbols`.
    pub fn write_block(
        &mut self,
        thread: ThreadId,
        events: &[Event],
        symbols: &Symbols,
    ) -> io::Result<()> {
        let Some(first) = events.first() else {
            return Ok(());
        };
        if thread >= self.p {
            return Err(invalid(format!(
                "block of thread {thread}: thread is not below p={}",
                self.p
            )));
        }
        let mut prev = self.last_t.get(&thread).copied().unwrap_or(0);
        let mut names_needed = self.names_written;
        let mut teams_needed = self.teams_written;
        for e in events {
            if e.thread != thread {
                return Err(invalid(format!(
                    "block of thread {thread}: event at {} belongs to thread {}",
                    e.t, e.thread
                )));
            }
            if e.t < prev {
                return Err(invalid(format!(
                    "block of thread {thread}: time {} is before the thread's previous event at {prev}",
                    e.t
                )));
            }
            prev = e.t;
            let (names, team) = references(&e.kind);
            for s in names.into_iter().flatten() {
                if s as usize >= symbols.len() {
                    return Err(invalid(format!(
                        "block of thread {thread}: event at {} references name {s}, but the table has {}",
                        e.t,
                        symbols.len()
                    )));
                }
                names_needed = names_needed.max(s + 1);
            }
            if let EventKind::Send { peer, .. }
            | EventKind::Recv { peer, .. }
            | EventKind::Coll {
                root: Some(peer), ..
            } = e.kind
                && peer >= self.p
            {
                return Err(invalid(format!(
                    "block of thread {thread}: event at {}: peer {peer} is not below p={}",
                    e.t, self.p
                )));
            }
            if let Some(t) = team {
                teams_needed = teams_needed.max(t + 1);
            }
        }
        self.buf.clear();
        self.write_defs(symbols, names_needed, teams_needed)?;
        let mut blocks = 0;
        let mut start = 0;
        while start < events.len() {
            let first_t = events[start].t;
            let mut st = BlockState::new(first_t);
            self.payload.clear();
            let mut end = start;
            while end < events.len() && self.payload.len() + MAX_RECORD <= MAX_CHUNK {
                encode_record(&mut self.payload, &mut st, events[end].t, &events[end].kind);
                end += 1;
            }
            self.buf.push(ITEM_BLOCK);
            varint::put(&mut self.buf, u64::from(thread));
            varint::put(&mut self.buf, (end - start) as u64);
            varint::put(&mut self.buf, self.payload.len() as u64);
            varint::put(&mut self.buf, first_t);
            self.buf.extend_from_slice(&self.payload);
            blocks += 1;
            start = end;
        }
        debug_assert!(first.t <= prev);
        self.out.write_all(&self.buf)?;
        self.names_written = names_needed;
        self.teams_written = teams_needed;
        self.last_t.insert(thread, prev);
        self.events += events.len() as u64;
        self.blocks += blocks;
        Ok(())
    }

    /// Writes one block of `count` records of `thread` already encoded: `payload` holds them as
    /// [`encode_record`] writes them from `BlockState::new(first_t)`, the last at `last_t`;
    /// names below `names` and teams below `teams` are defined first (those not written yet),
    /// as [`BinaryWriter::write_block`] would for the same events. For a writer that encodes
    /// blocks elsewhere (`pp whatif` encodes its predicted log's blocks as it replays). Fails
    /// with [`io::ErrorKind::InvalidInput`], writing nothing, when `thread >= p`, the block is
    /// empty or too long, or `first_t` is before the thread's previous block's last time; the
    /// records themselves are not checked.
    #[allow(clippy::too_many_arguments)]
    pub fn write_encoded_block(
        &mut self,
        thread: ThreadId,
        count: u32,
        (first_t, last_t): (u64, u64),
        payload: &[u8],
        (names, teams): (u32, u32),
        symbols: &Symbols,
    ) -> io::Result<()> {
        if thread >= self.p {
            return Err(invalid(format!(
                "block of thread {thread}: thread is not below p={}",
                self.p
            )));
        }
        let prev = self.last_t.get(&thread).copied().unwrap_or(0);
        if count == 0 || payload.len() > MAX_CHUNK || payload.len() < 2 * count as usize {
            return Err(invalid(format!(
                "block of thread {thread}: {count} records in {} bytes",
                payload.len()
            )));
        }
        if first_t < prev || last_t < first_t {
            return Err(invalid(format!(
                "block of thread {thread}: times {first_t}..{last_t} after the thread's previous event at {prev}"
            )));
        }
        if names as usize > symbols.len() {
            return Err(invalid(format!(
                "block of thread {thread}: references name {}, but the table has {}",
                names - 1,
                symbols.len()
            )));
        }
        self.buf.clear();
        self.write_defs(
            symbols,
            names.max(self.names_written),
            teams.max(self.teams_written),
        )?;
        self.buf.push(ITEM_BLOCK);
        varint::put(&mut self.buf, u64::from(thread));
        varint::put(&mut self.buf, u64::from(count));
        varint::put(&mut self.buf, payload.len() as u64);
        varint::put(&mut self.buf, first_t);
        self.buf.extend_from_slice(payload);
        self.out.write_all(&self.buf)?;
        self.names_written = self.names_written.max(names);
        self.teams_written = self.teams_written.max(teams);
        self.last_t.insert(thread, last_t);
        self.events += u64::from(count);
        self.blocks += 1;
        Ok(())
    }

    /// Appends to `self.buf` the definitions of names `names_written..names` and teams
    /// `teams_written..teams`, in items of at most `MAX_CHUNK` bytes.
    fn write_defs(&mut self, symbols: &Symbols, names: u32, teams: u32) -> io::Result<()> {
        if names == self.names_written && teams == self.teams_written {
            return Ok(());
        }
        let mut chunk = Vec::new();
        let mut def = Vec::new();
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        for id in self.names_written..names {
            let name = symbols.name(crate::event::Sym(id));
            if !is_name(name) {
                return Err(invalid(format!(
                    "name {id} {name:?} is not a token (non-empty, no whitespace, control characters or '#')"
                )));
            }
            def.clear();
            def.push(DEF_NAME);
            varint::put(&mut def, u64::from(id));
            varint::put(&mut def, name.len() as u64);
            def.extend_from_slice(name.as_bytes());
            push_def(&mut chunks, &mut chunk, &def)?;
        }
        for id in self.teams_written..teams {
            let team = symbols
                .get_team(TeamRef(id))
                .ok_or_else(|| invalid(format!("team {id} is not in the symbol table")))?;
            if team.is_empty() {
                return Err(invalid(format!("team {id} is empty")));
            }
            if let Some(&t) = team.iter().find(|&&t| t >= self.p) {
                return Err(invalid(format!(
                    "team {id}: thread {t} is not below p={}",
                    self.p
                )));
            }
            def.clear();
            def.push(DEF_TEAM);
            varint::put(&mut def, u64::from(id));
            varint::put(&mut def, team.len() as u64);
            for &t in team {
                varint::put(&mut def, u64::from(t));
            }
            push_def(&mut chunks, &mut chunk, &def)?;
        }
        if !chunk.is_empty() {
            chunks.push(chunk);
        }
        for chunk in chunks {
            self.buf.push(ITEM_DEFS);
            varint::put(&mut self.buf, chunk.len() as u64);
            self.buf.extend_from_slice(&chunk);
        }
        Ok(())
    }

    /// Writes the end marker, flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.buf.clear();
        self.buf.push(ITEM_END);
        varint::put(&mut self.buf, self.events);
        varint::put(&mut self.buf, self.blocks);
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }

    /// Events written so far.
    pub fn events_written(&self) -> u64 {
        self.events
    }
}

fn push_def(chunks: &mut Vec<Vec<u8>>, chunk: &mut Vec<u8>, def: &[u8]) -> io::Result<()> {
    if def.len() > MAX_CHUNK {
        return Err(invalid(format!(
            "a name or team definition of {} bytes exceeds the limit of {MAX_CHUNK} bytes",
            def.len()
        )));
    }
    if chunk.len() + def.len() > MAX_CHUNK {
        chunks.push(std::mem::take(chunk));
    }
    chunk.extend_from_slice(def);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(p: u32) -> Header {
        Header {
            p,
            params: vec![("impl".into(), "dp".into())],
        }
    }

    #[test]
    fn refuses_bad_input_and_writes_nothing_then() {
        let mut sym = Symbols::default();
        let bad = sym.intern("two words");
        let mut w = BinaryWriter::new(Vec::new(), &header(2)).unwrap();
        let len = w.out.len();
        let ev = |t, thread, kind| Event { t, thread, kind };
        let cases = [
            (2, vec![ev(1, 2, EventKind::Start)]),
            (0, vec![ev(1, 1, EventKind::Start)]),
            (
                0,
                vec![ev(5, 0, EventKind::Start), ev(4, 0, EventKind::Stop)],
            ),
            (0, vec![ev(5, 0, EventKind::Phase { name: bad })]),
            (
                0,
                vec![ev(
                    5,
                    0,
                    EventKind::Phase {
                        name: crate::event::Sym(9),
                    },
                )],
            ),
        ];
        for (thread, events) in cases {
            let e = w.write_block(thread, &events, &sym).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        }
        assert_eq!(w.out.len(), len);
        w.write_block(0, &[ev(7, 0, EventKind::Start)], &sym)
            .unwrap();
        let e = w
            .write_block(0, &[ev(6, 0, EventKind::Stop)], &sym)
            .unwrap_err();
        assert!(e.to_string().contains("before the thread's previous event"));
        assert!(BinaryWriter::new(Vec::new(), &header(0)).is_err());
    }

    #[test]
    fn large_blocks_are_split() {
        let sym = Symbols::default();
        let events: Vec<Event> = (0..400_000u64)
            .map(|i| Event {
                t: i * 1_000_003,
                thread: 1,
                kind: EventKind::CommBegin { bytes: i << 20 },
            })
            .collect();
        let mut w = BinaryWriter::new(Vec::new(), &header(2)).unwrap();
        w.write_block(1, &events, &sym).unwrap();
        assert!(w.blocks >= 2);
        assert_eq!(w.events_written(), 400_000);
    }

    #[test]
    fn an_encoded_block_is_written_as_its_events_would_be() {
        let mut sym = Symbols::default();
        let (work, lock) = (sym.intern("work"), sym.intern("lock"));
        let team = sym.intern_team(&[0, 1]);
        let ev = |t, thread, kind| Event { t, thread, kind };
        let blocks = [
            (
                1,
                vec![
                    ev(10, 1, EventKind::Start),
                    ev(
                        12,
                        1,
                        EventKind::RegionBegin {
                            id: 3,
                            name: work,
                            team: Some(team),
                        },
                    ),
                    ev(
                        20,
                        1,
                        EventKind::Cpu {
                            thread_cpu_ns: 7,
                            run_delay_ns: Some(2),
                        },
                    ),
                ],
            ),
            (
                0,
                vec![
                    ev(5, 0, EventKind::Start),
                    ev(
                        9,
                        0,
                        EventKind::WaitBegin {
                            kind: crate::event::WaitKind::Lock,
                            object: Some(lock),
                        },
                    ),
                ],
            ),
            (1, vec![ev(30, 1, EventKind::RegionEnd { id: 3 })]),
        ];
        let mut whole = BinaryWriter::new(Vec::new(), &header(2)).unwrap();
        let mut encoded = BinaryWriter::new(Vec::new(), &header(2)).unwrap();
        for (thread, events) in &blocks {
            whole.write_block(*thread, events, &sym).unwrap();
            let mut st = BlockState::new(events[0].t);
            let mut payload = Vec::new();
            let (mut names, mut teams) = (0, 0);
            for e in events {
                encode_record(&mut payload, &mut st, e.t, &e.kind);
                let (n, t) = references(&e.kind);
                names = n.into_iter().flatten().fold(names, |a, s| a.max(s + 1));
                teams = t.map_or(teams, |t| teams.max(t + 1));
            }
            let times = (events[0].t, events[events.len() - 1].t);
            let count = events.len() as u32;
            encoded
                .write_encoded_block(*thread, count, times, &payload, (names, teams), &sym)
                .unwrap();
        }
        assert_eq!(whole.finish().unwrap(), encoded.finish().unwrap());
        let mut w = BinaryWriter::new(Vec::new(), &header(2)).unwrap();
        let len = w.out.len();
        for (thread, count, times) in [(2, 1, (0, 0)), (0, 0, (0, 0)), (0, 1, (5, 4))] {
            let e = w
                .write_encoded_block(thread, count, times, &[1, 0], (0, 0), &sym)
                .unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        }
        assert_eq!(w.out.len(), len);
    }
}
