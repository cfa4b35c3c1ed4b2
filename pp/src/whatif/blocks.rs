//! [`Blocks`]: the predicted log's events, encoded by the replay as it goes into the blocks of a
//! binary log (docs/whatif.md#cost), thread by thread in a temporary file past a bounded buffer:
//! writing the predicted log is then copying them, and its events are read back from them.
//!
//! A binary predicted log written to a file skips the temporary file: each block goes to the
//! log as it closes ([`Direct`]).
//!
//! Thread `i`'s stream `i` holds its records as [`encode_record`] writes them, a block's from
//! `BlockState::new(first_t)`; stream `p + i` holds, at each block's end, what its header
//! needs (varints: records, bytes, first time, last time less the first, and the names and
//! teams it references, as a count of ids from 0).

use std::io::{self, BufWriter};
use std::sync::Mutex;

use pp_recorder::log::binary::{BlockState, encode_record, references};
use pp_recorder::log::varint;

use super::streams::{Cursor, Streams, Writer};
use crate::event::{Event, EventKind, Symbols, ThreadId};
use crate::log::{BinaryWriter, Defined, decode_record};

/// Events per block of the predicted log (as a binary log's writer cuts them: the predicted
/// log is byte for byte what writing its events a block of this many at a time gives).
pub(super) const BLOCK_EVENTS: u32 = 4096;

/// The predicted log's blocks, thread by thread.
#[derive(Debug)]
pub(crate) struct Blocks {
    p: usize,
    streams: Streams,
}

/// A block of one thread, as its header needs it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Header {
    pub count: u32,
    pub len: u32,
    pub first_t: u64,
    pub last_t: u64,
    /// Names (ids below this) and teams its records reference.
    pub names: u32,
    pub teams: u32,
}

/// Appends events to [`Blocks`], or to a [`Direct`] log, each thread's in order.
#[derive(Debug)]
pub(crate) struct Encoder<'a> {
    writer: Writer<'a>,
    direct: Option<Direct<'a>>,
    p: usize,
    /// Each thread's block being encoded, and its encoding state.
    open: Vec<(Header, BlockState)>,
    buf: Vec<u8>,
}

impl Blocks {
    /// No block yet, for `p` threads.
    pub fn new(p: usize) -> Blocks {
        Blocks {
            p,
            streams: Streams::new(2 * p),
        }
    }

    /// The encoder of these blocks, or of `direct`'s log when given (the blocks then stay
    /// empty).
    pub fn encoder<'a>(&'a self, direct: Option<Direct<'a>>) -> Encoder<'a> {
        Encoder {
            writer: self.streams.writer(),
            direct,
            p: self.p,
            open: vec![Default::default(); self.p],
            buf: Vec::with_capacity(64),
        }
    }

    /// The first error writing or reading the temporary file, if any.
    pub fn error(&self) -> Option<String> {
        self.streams.error()
    }

    /// Thread `i`'s blocks, from the first.
    pub fn reader(&self, i: usize) -> BlockReader<'_> {
        BlockReader {
            blocks: self,
            payload: self.streams.cursor(i),
            headers: self.streams.cursor(self.p + i),
            buf: Vec::new(),
        }
    }
}

impl<'a> Encoder<'a> {
    /// Appends thread `i`'s event of `kind` at `t` to its blocks (`t` not before the thread's
    /// previous event).
    pub fn push(&mut self, i: usize, t: u64, kind: &EventKind) {
        let (h, st) = &mut self.open[i];
        if h.count == 0 {
            *h = Header {
                first_t: t,
                ..Header::default()
            };
            *st = BlockState::new(t);
        }
        let mut encode = |buf: &mut Vec<u8>| {
            let start = buf.len();
            encode_record(buf, st, t, kind);
            h.len += (buf.len() - start) as u32;
        };
        match &mut self.direct {
            Some(d) => encode(&mut d.payloads[i]),
            None => self.writer.push_with(i, encode),
        }
        let (names, team) = references(kind);
        for s in names.into_iter().flatten() {
            h.names = h.names.max(s + 1);
        }
        if let Some(t) = team {
            h.teams = h.teams.max(t + 1);
        }
        h.count += 1;
        h.last_t = t;
        if h.count == BLOCK_EVENTS {
            self.close(i);
        }
    }

    /// Ends thread `i`'s open block.
    fn close(&mut self, i: usize) {
        let h = std::mem::take(&mut self.open[i].0);
        if h.count == 0 {
            return;
        }
        if let Some(d) = &mut self.direct {
            d.write(i, &h);
            return;
        }
        self.buf.clear();
        for v in [
            u64::from(h.count),
            u64::from(h.len),
            h.first_t,
            h.last_t - h.first_t,
            u64::from(h.names),
            u64::from(h.teams),
        ] {
            varint::put(&mut self.buf, v);
        }
        self.writer.push(self.p + i, &self.buf);
    }

    /// The first error writing the [`Direct`] log, if any: the replay stops there.
    pub fn failure(&self) -> Option<String> {
        self.direct.as_ref().and_then(Direct::failure)
    }

    /// Ends every thread's last block and publishes them; gives back the [`Direct`] log,
    /// if any.
    pub fn finish(mut self) -> Option<Direct<'a>> {
        for i in 0..self.p {
            self.close(i);
        }
        self.direct.take()
    }
}

/// A [`Direct`] log's writer.
pub(crate) type Written = BinaryWriter<BufWriter<files::Target>>;

/// The predicted log, binary, written as the replay encodes it: a thread's block goes to the
/// file when it closes, after the definitions of the names and teams it references (no
/// temporary file, and no copy once the replay ends: docs/whatif.md#cost). The reading
/// publishes the log's symbols in `symbols` before it hands over the events that use them.
#[derive(Debug)]
pub(crate) struct Direct<'a> {
    writer: Written,
    /// The log as the user named it (`--out FILE`), for errors.
    name: String,
    symbols: &'a Mutex<Symbols>,
    /// Each thread's open block's records.
    payloads: Vec<Vec<u8>>,
    /// The first error writing the log.
    error: Option<io::Error>,
}

impl<'a> Direct<'a> {
    /// The log `writer` writes (its header written; `name` as the user named it), for `p`
    /// threads, whose symbols the reading publishes in `symbols`.
    pub fn new(writer: Written, name: String, symbols: &'a Mutex<Symbols>, p: usize) -> Direct<'a> {
        Direct {
            writer,
            name,
            symbols,
            payloads: vec![Vec::new(); p],
            error: None,
        }
    }

    /// Writes thread `i`'s block `h` (its records in `payloads[i]`).
    fn write(&mut self, i: usize, h: &Header) {
        if self.error.is_none() {
            let symbols = self.symbols.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = self.writer.write_encoded_block(
                i as u32,
                h.count,
                (h.first_t, h.last_t),
                &self.payloads[i],
                (h.names, h.teams),
                &symbols,
            ) {
                self.error = Some(e);
            }
        }
        self.payloads[i].clear();
    }

    /// The log's writer once every block is written, or the first error writing it.
    pub fn finish(self) -> io::Result<Written> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.writer),
        }
    }

    /// The first error writing the log, in one line that names it.
    fn failure(&self) -> Option<String> {
        let e = self.error.as_ref()?;
        Some(format!("{}: cannot write: {e}", self.name))
    }
}

/// One thread's blocks read back in order.
#[derive(Debug)]
pub(crate) struct BlockReader<'a> {
    blocks: &'a Blocks,
    payload: Cursor,
    headers: Cursor,
    /// The current block's records.
    buf: Vec<u8>,
}

impl BlockReader<'_> {
    /// The next block's header, its records in [`BlockReader::payload`]; `None` past the last.
    pub fn next_block(&mut self) -> io::Result<Option<Header>> {
        let streams = &self.blocks.streams;
        let data = self.headers.bytes(streams)?;
        if data.is_empty() {
            return Ok(None);
        }
        let mut pos = 0;
        let mut field = || {
            varint::get(data, &mut pos)
                .map_err(|_| io::Error::other("the predicted log's blocks are damaged"))
        };
        let (count, len, first_t, span, names, teams) =
            (field()?, field()?, field()?, field()?, field()?, field()?);
        self.headers.consume(pos);
        let h = Header {
            count: count as u32,
            len: len as u32,
            first_t,
            last_t: first_t + span,
            names: names as u32,
            teams: teams as u32,
        };
        self.buf.clear();
        while self.buf.len() < h.len as usize {
            let data = self.payload.bytes(streams)?;
            if data.is_empty() {
                return Err(io::Error::other("the predicted log's blocks end early"));
            }
            let n = data.len().min(h.len as usize - self.buf.len());
            self.buf.extend_from_slice(&data[..n]);
            self.payload.consume(n);
        }
        Ok(Some(h))
    }

    /// The current block's records.
    pub fn payload(&self) -> &[u8] {
        &self.buf
    }

    /// The current block's events (of thread `thread`), decoded into `out`.
    pub fn events(&self, h: &Header, thread: ThreadId, out: &mut Vec<Event>) -> io::Result<()> {
        let defined = Defined {
            names: u32::MAX,
            teams: u32::MAX,
            p: u32::MAX,
        };
        let mut st = BlockState::new(h.first_t);
        let mut pos = 0;
        out.clear();
        for _ in 0..h.count {
            let kind = decode_record(&self.buf, &mut pos, &mut st, &defined)
                .map_err(|_| io::Error::other("the predicted log's blocks are damaged"))?;
            out.push(Event {
                t: st.t,
                thread,
                kind,
            });
        }
        Ok(())
    }
}
