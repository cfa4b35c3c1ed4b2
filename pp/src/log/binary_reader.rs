//! Reading the binary encoding: an index of the blocks built on open, one cursor per thread
//! that decodes that thread's blocks in order (a batch of events at a time), and a loser tree
//! that merges the threads by time.
//!
//! Memory: the symbol table, 32 bytes per block for the index, and per thread a batch of
//! decoded events (64 × 40 bytes) plus, when reading a file, the payload of its current block
//! (at most [`super::binary::MAX_CHUNK`] bytes; as written by the recorder, tens of KiB). A log given as bytes
//! is decoded in place.

use std::fs::File;

use pp_recorder::log::binary::BlockState;

use super::binary_index::{BlockRef, Index, Source, read_at};
use super::decode::{Damage, Defined, decode_record};
use super::error::LogError;
use super::merge::{EXHAUSTED, LoserTree};
use super::place::Place;
use crate::event::{Event, EventKind, Header, Symbols, ThreadId};

/// How a thread's data ends, once its last event is decoded.
#[derive(Debug)]
enum End {
    /// No more events (or the file ends inside the block: the scan reports that).
    Done,
    /// Damage after the last decoded event.
    Error(Box<LogError>),
}

/// Events decoded ahead per thread.
const BATCH: usize = 64;

/// Fills the batches before decoding.
const NO_EVENT: Event = Event {
    t: 0,
    thread: 0,
    kind: EventKind::Start,
};

/// Decodes the blocks of one thread in order.
#[derive(Debug)]
struct Cursor {
    thread: ThreadId,
    blocks: Vec<BlockRef>,
    next_block: usize,
    /// The current payload (file source only).
    buf: Vec<u8>,
    /// Log offset of `data[0]`, where `data` is the whole log (memory) or `buf` (file).
    base: u64,
    /// Next record in `data`.
    pos: usize,
    /// End of the current payload's present bytes in `data`.
    end: usize,
    /// Records of the current block not decoded yet.
    left: u32,
    /// The current block is cut by the end of the file.
    truncated: bool,
    /// The current block (for messages).
    block: BlockRef,
    st: BlockState,
    /// Decoded events: `batch[at..len]` are not returned yet. A fixed array rather than a `Vec`
    /// so that the decoding loop stores each event without a capacity check.
    batch: Box<[Event; BATCH]>,
    /// The log offset where each event of the batch's record starts (for [`Place`]).
    offsets: Box<[u64; BATCH]>,
    len: usize,
    at: usize,
    /// Set when the thread has nothing more to decode.
    end_state: Option<End>,
}

/// A binary log being read.
#[derive(Debug)]
pub(crate) struct BinaryLog {
    file: String,
    header: Header,
    symbols: Symbols,
    defined: Defined,
    source: Source,
    cursors: Vec<Cursor>,
    merge: LoserTree,
    /// Damage found by the scan, reported after every indexed event.
    tail: Option<LogError>,
    finished: bool,
    /// Where the event most recently returned is.
    place: Place,
}

impl BinaryLog {
    /// Reads a log held in memory.
    pub(crate) fn from_memory(file: &str, bytes: Vec<u8>) -> Result<BinaryLog, LogError> {
        let len = bytes.len() as u64;
        BinaryLog::open(file, Source::Memory(bytes), len)
    }

    /// Reads a log file of `len` bytes.
    pub(crate) fn from_file(file: &str, f: File, len: u64) -> Result<BinaryLog, LogError> {
        BinaryLog::open(file, Source::File(f), len)
    }

    fn open(file: &str, source: Source, len: u64) -> Result<BinaryLog, LogError> {
        let index = Index::build(file, &source, len)?;
        let mut log = BinaryLog {
            file: file.to_string(),
            header: index.header,
            symbols: index.symbols,
            defined: index.defined,
            source,
            cursors: Vec::new(),
            merge: LoserTree::new(Vec::new()),
            tail: index.tail,
            finished: index.finished,
            place: Place::Start,
        };
        // One cursor per thread, in thread order, with its blocks in file order.
        let mut threads = index.threads;
        threads.sort_unstable_by_key(|(thread, _)| *thread);
        for (thread, blocks) in threads {
            let mut cursor = Cursor {
                thread,
                blocks,
                next_block: 0,
                buf: Vec::new(),
                base: 0,
                pos: 0,
                end: 0,
                left: 0,
                truncated: false,
                block: BlockRef::default(),
                st: BlockState::new(0),
                batch: Box::new([NO_EVENT; BATCH]),
                offsets: Box::new([0; BATCH]),
                len: 0,
                at: 0,
                end_state: None,
            };
            cursor.refill(&log.source, &log.defined, &log.file);
            log.cursors.push(cursor);
        }
        let keys = log
            .cursors
            .iter()
            .enumerate()
            .map(|(i, c)| c.key(i))
            .collect();
        log.merge = LoserTree::new(keys);
        Ok(log)
    }

    pub(crate) fn header(&self) -> &Header {
        &self.header
    }

    pub(crate) fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    pub(crate) fn symbols_mut(&mut self) -> &mut Symbols {
        &mut self.symbols
    }

    /// The events the indexed blocks declare (those of a damaged log may not all be read).
    pub(crate) fn declared_events(&self) -> u64 {
        self.cursors
            .iter()
            .flat_map(|c| &c.blocks)
            .map(|b| u64::from(b.count))
            .sum()
    }

    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    /// Where the event most recently returned is (see [`super::LogReader::place`]).
    pub(crate) fn place(&self) -> Place {
        self.place
    }

    /// The next event in global time order; see [`super::LogReader::next_event`].
    #[inline]
    pub(crate) fn next_event(&mut self) -> Option<Result<Event, LogError>> {
        loop {
            let Some(w) = self.merge.winner() else {
                return self.tail.take().map(Err);
            };
            let Some(cur) = self.cursors.get_mut(w) else {
                self.merge.replace_winner(EXHAUSTED);
                continue;
            };
            if let Some(&e) = cur.head() {
                self.place = Place::Byte(cur.offset());
                cur.at += 1;
                if cur.at == cur.len {
                    cur.refill(&self.source, &self.defined, &self.file);
                }
                self.merge.replace_winner(cur.key(w));
                return Some(Ok(e));
            }
            if let Some(e) = self.thread_ended(w) {
                return Some(Err(e));
            }
        }
    }

    /// Calls `f` with every remaining event in global time order; then the damage that ends
    /// the log, if any (see [`super::LogReader::for_each_event`]). The loop of
    /// [`BinaryLog::next_event`] written out again on purpose: looping over `next_event` (or a
    /// shared helper) made `pp` 10-20% slower on the log benchmark.
    #[inline]
    pub(crate) fn for_each_event(
        &mut self,
        mut f: impl FnMut(&Event, &Symbols, Place),
    ) -> Option<LogError> {
        // Where the last event is, kept here and stored once at the end.
        let mut last = self.place;
        let damage = loop {
            let Some(w) = self.merge.winner() else {
                break self.tail.take();
            };
            let Some(cur) = self.cursors.get_mut(w) else {
                self.merge.replace_winner(EXHAUSTED);
                continue;
            };
            if let Some(&e) = cur.head() {
                // The merge moves on before `f` runs, so that finding the next event does not
                // wait for what `f` does with this one.
                last = Place::Byte(cur.offset());
                cur.at += 1;
                if cur.at == cur.len {
                    cur.refill(&self.source, &self.defined, &self.file);
                }
                self.merge.replace_winner(cur.key(w));
                f(&e, &self.symbols, last);
            } else if let Some(e) = self.thread_ended(w) {
                break Some(e);
            }
        };
        self.place = last;
        damage
    }

    /// Thread `w` has no more events: its damage (which ends the log), or `None` after taking
    /// it out of the merge.
    #[cold]
    #[inline(never)]
    fn thread_ended(&mut self, w: usize) -> Option<LogError> {
        let end = self.cursors.get_mut(w).and_then(|c| c.end_state.take());
        match end {
            Some(End::Error(err)) => {
                // Nothing follows damage: empty the merge and forget the tail.
                self.merge = LoserTree::new(Vec::new());
                self.tail = None;
                Some(*err)
            }
            _ => {
                self.merge.replace_winner(EXHAUSTED);
                None
            }
        }
    }
}

impl Cursor {
    /// The merge key of this cursor (stream `i`): its next event's time, then its index (the
    /// cursors are in thread order); damage sorts at the time of the thread's last event.
    #[inline(always)]
    fn key(&self, i: usize) -> u128 {
        let t = match self.head() {
            Some(e) => e.t,
            None => match self.end_state {
                Some(End::Error(_)) => self.st.t,
                _ => return EXHAUSTED,
            },
        };
        u128::from(t) << 32 | i as u128
    }

    /// The log offset of the record of [`Cursor::head`].
    #[inline(always)]
    fn offset(&self) -> u64 {
        self.offsets.get(self.at).copied().unwrap_or(0)
    }

    /// The next decoded event not returned yet.
    #[inline(always)]
    fn head(&self) -> Option<&Event> {
        if self.at < self.len {
            self.batch.get(self.at)
        } else {
            None
        }
    }

    /// Decodes the next events of this thread into the batch, loading blocks as needed, until
    /// the batch is full or the thread's data ends (then `end_state` says how).
    fn refill(&mut self, source: &Source, defined: &Defined, file: &str) {
        self.len = 0;
        self.at = 0;
        if self.end_state.is_some() {
            return;
        }
        while self.len < BATCH {
            if self.left == 0 {
                match self.next_block(source, file) {
                    None => continue,
                    Some(end) => {
                        self.end_state = Some(end);
                        return;
                    }
                }
            }
            let data = match source {
                Source::Memory(bytes) => bytes.get(..self.end).unwrap_or(&[]),
                Source::File(_) => self.buf.get(..self.end).unwrap_or(&[]),
            };
            let n = (self.left as usize).min(BATCH - self.len);
            let mut pos = self.pos;
            let mut st = self.st;
            let mut damage = None;
            let mut decoded = 0;
            let slots = self
                .batch
                .get_mut(self.len..self.len + n)
                .unwrap_or(&mut []);
            let offsets = self
                .offsets
                .get_mut(self.len..self.len + n)
                .unwrap_or(&mut []);
            let base = self.base;
            for (slot, offset) in slots.iter_mut().zip(offsets) {
                *offset = base + pos as u64;
                match decode_record(data, &mut pos, &mut st, defined) {
                    Ok(kind) => {
                        *slot = Event {
                            t: st.t,
                            thread: self.thread,
                            kind,
                        };
                        decoded += 1;
                    }
                    Err(d) => {
                        damage = Some(d);
                        break;
                    }
                }
            }
            self.len += decoded;
            self.left -= (decoded as u32).min(self.left);
            self.pos = pos;
            self.st = st;
            if let Some(d) = damage {
                self.end_state = Some(self.damaged(d, file));
                return;
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn damaged(&mut self, damage: Damage, file: &str) -> End {
        let at = self.base + self.pos as u64;
        let decoded = self.block.count - self.left;
        match damage {
            Damage::Eof if self.truncated => End::Done,
            Damage::Eof => self.error(
                file,
                at,
                format!(
                    "block of thread {} (payload at byte {}) ends after {decoded} of its {} events",
                    self.thread, self.block.offset, self.block.count
                ),
            ),
            Damage::Bad(m) => self.error(file, at, format!("thread {}: {m}", self.thread)),
        }
    }

    fn error(&mut self, file: &str, at: u64, message: String) -> End {
        self.left = 0;
        self.next_block = self.blocks.len();
        End::Error(Box::new(LogError::binary(file, at, message)))
    }

    /// Moves to the next block of the thread after checking that the current one was used up.
    /// `None` when there is a block to decode, else how the thread ends.
    #[cold]
    #[inline(never)]
    fn next_block(&mut self, source: &Source, file: &str) -> Option<End> {
        if self.block.count > 0 && !self.truncated && self.pos != self.end {
            let at = self.base + self.pos as u64;
            return Some(self.error(
                file,
                at,
                format!(
                    "block of thread {} (payload at byte {}): {} bytes follow its last event \
                     (it declares {} events)",
                    self.thread,
                    self.block.offset,
                    self.end - self.pos,
                    self.block.count
                ),
            ));
        }
        if self.truncated {
            return Some(End::Done);
        }
        let Some(&block) = self.blocks.get(self.next_block) else {
            return Some(End::Done);
        };
        self.next_block += 1;
        if block.first_t < self.st.t {
            return Some(self.error(
                file,
                block.offset,
                format!(
                    "block of thread {} starts at time {}, before the thread's previous event at \
                     time {}",
                    self.thread, block.first_t, self.st.t
                ),
            ));
        }
        self.block = block;
        self.st = BlockState::new(block.first_t);
        self.left = block.count;
        self.truncated = block.avail < block.len;
        match source {
            Source::Memory(_) => {
                self.base = 0;
                self.pos = block.offset as usize;
                self.end = self.pos + block.avail as usize;
            }
            Source::File(f) => {
                self.base = block.offset;
                self.pos = 0;
                self.end = block.avail as usize;
                // Grown, never cleared (zeroing each block was 1.8% of `pp`'s instructions):
                // `data` ends at `end`, so older bytes past it are never decoded.
                if self.buf.len() < self.end {
                    self.buf.resize(self.end, 0);
                }
                let buf = self.buf.get_mut(..self.end).unwrap_or(&mut []);
                if let Err(e) = read_at(f, block.offset, buf) {
                    self.left = 0;
                    self.next_block = self.blocks.len();
                    return Some(End::Error(Box::new(LogError::io(file, "read", e))));
                }
            }
        }
        None
    }
}
