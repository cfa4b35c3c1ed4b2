//! [`Streams`]: one append-only byte stream per thread in a single unnamed temporary file (the
//! critical path's [spill](crate::graph)), so that a replay keeps a bounded part of each
//! thread's stream in memory whatever the log's length (docs/whatif.md#cost). A [`Writer`]
//! appends to the streams in chunks of whole records; a [`Cursor`] reads a stream forward,
//! from another thread while the writer still writes (the replay follows the reading of the
//! log: docs/whatif.md#cost), waiting for the next chunk until the writer has finished.
//!
//! Streams [read once](Streams::read_once) hand a chunk to their reader in memory instead,
//! while the chunks written and not yet read stay within [`HANDOVER`] bytes. Past that the
//! writer waits for the reader to take one, as long as the reader takes them: it goes on into
//! the file once a reader waits for a chunk (it needs another stream's records before those in
//! memory), the reading has ended, or [`PATIENCE`] passes without a chunk taken (the reader
//! may wait for something else the writer's thread has yet to give), and waits again only once
//! a chunk has been taken since. So a reader that keeps up costs no file at all, and neither
//! side waits for the other forever.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

/// Bytes of all the streams' buffers together, before they go to the file.
const BUDGET: usize = 16 << 20;

/// At most this many bytes a stream's buffer (a reader following the writer waits for
/// whole chunks: small ones keep it close behind).
const MAX_CHUNK: usize = 64 << 10;

/// Bytes of the chunks handed over in memory and not yet read, all streams together; past it
/// chunks go to the file.
const HANDOVER: usize = 16 << 20;

/// How long a writer waits for its reader to take a chunk in memory before it writes to the
/// file instead: longer than a busy machine keeps the replay's thread off a core. Measured on
/// the bench's 10⁸-event log regrouped beside two CPU hogs: with 2 ms, 466 MB of records went
/// to the file, all for want of patience; with 20 ms, none (docs/whatif.md#cost).
const PATIENCE: std::time::Duration = std::time::Duration::from_millis(20);

/// One append-only stream per thread, as far as its [`Writer`] has published it; the first
/// I/O error is kept ([`Streams::error`]).
#[derive(Debug)]
pub(crate) struct Streams {
    file: OnceLock<File>,
    /// Bytes of chunks that may wait in memory for their reader: 0 unless read once.
    handover: usize,
    /// What has been published.
    state: Mutex<Published>,
    /// Signalled at each chunk published and at the end.
    grown: Condvar,
    /// Signalled when a chunk in memory is taken, a reader waits, or the reading ends.
    freed: Condvar,
}

#[derive(Debug, Default)]
struct Published {
    /// Each stream's chunks, in order.
    chunks: Vec<Vec<Chunk>>,
    /// Bytes of the chunks in memory.
    in_memory: usize,
    /// Readers waiting for a chunk.
    waiting: usize,
    /// Chunks taken from memory so far.
    taken: u64,
    /// The reading has ended ([`Streams::reading`]): nothing more is taken.
    closed: bool,
    /// The reading has stopped for good ([`Streams::abandon`]).
    abandoned: bool,
    /// Each stream's bytes after those in the file, once the writer has finished.
    tails: Vec<Vec<u8>>,
    finished: bool,
    error: Option<String>,
}

/// A published chunk.
#[derive(Debug)]
enum Chunk {
    /// Where in the file, and its length.
    File(u64, u32),
    /// Handed over in memory, to be taken by the stream's one reader.
    Memory(Vec<u8>),
    /// Taken.
    Taken,
}

/// Appends to [`Streams`]; finishing it (or dropping it: an error or a panic of the reading)
/// publishes what is left and ends the streams for their readers.
#[derive(Debug)]
pub(crate) struct Writer<'a> {
    streams: &'a Streams,
    /// Bytes in the file.
    end: u64,
    /// A stream's buffer goes to the file before it would outgrow this.
    chunk: usize,
    tails: Vec<Vec<u8>>,
    failed: bool,
    /// The chunks taken when the writer last waited for its reader in vain: it waits again
    /// only once more have been taken.
    in_vain: Option<u64>,
}

impl Streams {
    /// `n` empty streams, which any number of [`Cursor`]s may read.
    pub fn new(n: usize) -> Streams {
        Streams::with_handover(n, 0)
    }

    /// `n` empty streams, each read by one [`Cursor`] only (a second one gets an error), whose
    /// chunks are handed over in memory while they fit in [`HANDOVER`] (none where
    /// `PP_SPILL_CHUNK` is set: the tests that set it compare the file with memory).
    pub fn read_once(n: usize) -> Streams {
        let handover = match std::env::var_os("PP_SPILL_CHUNK") {
            Some(_) => 0,
            None => HANDOVER,
        };
        Streams::with_handover(n, handover)
    }

    fn with_handover(n: usize, handover: usize) -> Streams {
        Streams {
            file: OnceLock::new(),
            handover,
            state: Mutex::new(Published {
                chunks: (0..n).map(|_| Vec::new()).collect(),
                tails: vec![Vec::new(); n],
                ..Published::default()
            }),
            grown: Condvar::new(),
            freed: Condvar::new(),
        }
    }

    /// The writer of these streams, their buffers together about [`BUDGET`] bytes, at most
    /// [`MAX_CHUNK`] each (`PP_SPILL_CHUNK` sets a stream's buffer instead: tests use it to
    /// make the streams go to the file).
    pub fn writer(&self) -> Writer<'_> {
        let n = self.lock().chunks.len();
        let chunk = std::env::var("PP_SPILL_CHUNK")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or((BUDGET / n.max(1)).min(MAX_CHUNK))
            .clamp(8, 1 << 20)
            / 8
            * 8;
        Writer {
            streams: self,
            end: 0,
            chunk,
            tails: vec![Vec::new(); n],
            failed: false,
            in_vain: None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Published> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many streams.
    pub fn len(&self) -> usize {
        self.lock().chunks.len()
    }

    /// The first error writing or reading the file, if any.
    pub fn error(&self) -> Option<String> {
        self.lock().error.clone()
    }

    /// Says that the reading of these streams has stopped for good (the replay failed): their
    /// writer need not go on ([`Streams::abandoned`]).
    pub fn abandon(&self) {
        self.lock().abandoned = true;
    }

    /// Whether the reading was [abandoned](Streams::abandon).
    pub fn abandoned(&self) -> bool {
        self.lock().abandoned
    }

    /// Held while the streams are read: dropped (the reading ended, with an error or a panic
    /// too), the writer no longer waits for chunks in memory to be taken.
    pub fn reading(&self) -> Reading<'_> {
        Reading(self)
    }

    /// A cursor at the start of stream `s`.
    pub fn cursor(&self, s: usize) -> Cursor {
        Cursor {
            stream: s,
            chunk: 0,
            buf: Vec::new(),
            pos: 0,
            ended: false,
        }
    }
}

impl Writer<'_> {
    /// Appends one record to stream `s` (records are never split between chunks).
    pub fn push(&mut self, s: usize, record: &[u8]) {
        self.push_with(s, |tail| tail.extend_from_slice(record));
    }

    /// Appends to stream `s` the record `encode` appends to the buffer it is given (encoded in
    /// place, not copied).
    pub fn push_with(&mut self, s: usize, encode: impl FnOnce(&mut Vec<u8>)) {
        let start = self.tails[s].len();
        encode(&mut self.tails[s]);
        if start > 0 && self.tails[s].len() > self.chunk {
            self.flush(s, start);
        }
    }

    /// Publishes stream `s`'s buffer up to `end` as a chunk: handed over in memory where it
    /// fits, else written to the file.
    fn flush(&mut self, s: usize, end: usize) {
        if self.streams.handover > 0 && !self.failed {
            let mut state = self.streams.lock();
            // Wait while the reader takes chunks and so frees memory; else, on to the file.
            while state.in_memory + end > self.streams.handover
                && state.in_memory > 0
                && state.waiting == 0
                && !state.closed
                && self.in_vain != Some(state.taken)
            {
                let (next, waited) = (self.streams.freed.wait_timeout(state, PATIENCE))
                    .unwrap_or_else(|e| e.into_inner());
                state = next;
                if waited.timed_out() {
                    self.in_vain = Some(state.taken);
                }
            }
            if state.in_memory + end <= self.streams.handover {
                state.in_memory += end;
                // The chunk's bytes move; the rest starts the next buffer.
                let mut next = Vec::with_capacity(self.chunk + 64);
                next.extend_from_slice(&self.tails[s][end..]);
                self.tails[s].truncate(end);
                let chunk = std::mem::replace(&mut self.tails[s], next);
                state.chunks[s].push(Chunk::Memory(chunk));
                drop(state);
                self.streams.grown.notify_all();
                return;
            }
        }
        let chunk = &self.tails[s][..end];
        if !self.failed {
            let file = match self.streams.file.get() {
                Some(f) => Ok(f),
                None => crate::graph::temporary().map(|f| self.streams.file.get_or_init(|| f)),
            };
            match file.and_then(|f| f.write_all_at(chunk, self.end)) {
                Ok(()) => {
                    self.streams.lock().chunks[s].push(Chunk::File(self.end, end as u32));
                    self.streams.grown.notify_all();
                    self.end += end as u64;
                }
                Err(e) => {
                    self.failed = true;
                    self.streams.lock().error = Some(temporary_error(e));
                }
            }
        }
        self.tails[s].drain(..end);
    }

    /// Publishes what is left: the readers then read every stream to its end.
    pub fn finish(self) {}
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        let mut state = self.streams.lock();
        if !state.finished {
            state.finished = true;
            if !self.failed {
                state.tails = std::mem::take(&mut self.tails);
            }
        }
        drop(state);
        self.streams.grown.notify_all();
    }
}

fn temporary_error(e: io::Error) -> String {
    format!(
        "a temporary file in {}: {e}",
        std::env::temp_dir().display()
    )
}

/// [`Streams::reading`].
#[derive(Debug)]
pub(crate) struct Reading<'a>(&'a Streams);

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.0.lock().closed = true;
        self.0.freed.notify_all();
    }
}

/// A place in one of [`Streams`]' streams, read forward.
#[derive(Debug)]
pub(crate) struct Cursor {
    stream: usize,
    /// The next chunk to read from the file.
    chunk: usize,
    buf: Vec<u8>,
    pos: usize,
    /// The stream's tail has been read into `buf`.
    ended: bool,
}

impl Cursor {
    /// The unread bytes of the current chunk: whole records, empty at the stream's end. Waits
    /// for the writer while it has published nothing further.
    pub fn bytes<'a>(&'a mut self, streams: &'a Streams) -> io::Result<&'a [u8]> {
        while !self.ended && self.pos >= self.buf.len() {
            let mut state = streams.lock();
            loop {
                match state.chunks[self.stream].get_mut(self.chunk) {
                    Some(&mut Chunk::File(at, len)) => {
                        drop(state);
                        let file = streams
                            .file
                            .get()
                            .ok_or_else(|| io::Error::other("no file"))?;
                        self.buf.resize(len as usize, 0);
                        file.read_exact_at(&mut self.buf, at)
                            .map_err(|e| io::Error::other(temporary_error(e)))?;
                        self.chunk += 1;
                        break;
                    }
                    Some(chunk @ Chunk::Memory(_)) => {
                        if let Chunk::Memory(bytes) = std::mem::replace(chunk, Chunk::Taken) {
                            state.in_memory -= bytes.len();
                            state.taken += 1;
                            self.buf = bytes;
                            streams.freed.notify_all();
                        }
                        self.chunk += 1;
                        break;
                    }
                    Some(Chunk::Taken) => {
                        return Err(io::Error::other("a stream read once was read again"));
                    }
                    None => {}
                }
                if state.finished {
                    self.buf.clear();
                    self.buf.extend_from_slice(&state.tails[self.stream]);
                    self.ended = true;
                    break;
                }
                // A writer waiting for memory to be freed goes on into the file instead.
                state.waiting += 1;
                streams.freed.notify_all();
                state = streams.grown.wait(state).unwrap_or_else(|e| e.into_inner());
                state.waiting -= 1;
            }
            self.pos = 0;
        }
        Ok(self.buf.get(self.pos..).unwrap_or(&[]))
    }

    /// Marks `n` bytes read.
    pub fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_in_order_from_the_file_and_the_tail() {
        let s = Streams::new(3);
        let mut w = s.writer();
        w.chunk = 64;
        for k in 0u64..1000 {
            w.push((k % 3) as usize, &k.to_le_bytes());
        }
        w.finish();
        assert!(s.file.get().is_some());
        for i in 0..3 {
            let want: Vec<u64> = (0u64..1000).filter(|k| k % 3 == i as u64).collect();
            assert_eq!(read_all(&s, i).unwrap(), want);
        }
    }

    /// Every record of stream `i`, read to its end by a new cursor.
    fn read_all(s: &Streams, i: usize) -> io::Result<Vec<u64>> {
        let mut c = s.cursor(i);
        let mut got = Vec::new();
        loop {
            let b = c.bytes(s)?;
            if b.is_empty() {
                return Ok(got);
            }
            let n = b.len();
            got.extend(
                b.chunks(8)
                    .map(|r| u64::from_le_bytes(r.try_into().unwrap())),
            );
            c.consume(n);
        }
    }

    #[test]
    fn streams_read_once_hand_over_what_fits_and_spill_the_rest_in_order() {
        // 8-byte records in chunks of 64 bytes; at most 3 chunks (192 bytes) wait in memory.
        let s = Streams::with_handover(2, 192);
        let mut w = s.writer();
        w.chunk = 64;
        for k in 0u64..1000 {
            w.push((k % 2) as usize, &k.to_le_bytes());
        }
        w.finish();
        {
            let state = s.lock();
            let memory = |c: &&Chunk| matches!(c, Chunk::Memory(_));
            let in_memory = state.chunks.iter().flatten().filter(memory).count();
            assert_eq!(in_memory, 3, "{:?}", state.chunks);
            assert_eq!(state.in_memory, 3 * 64);
        }
        assert!(s.file.get().is_some());
        for i in 0..2 {
            let want: Vec<u64> = (0u64..1000).filter(|k| k % 2 == i as u64).collect();
            assert_eq!(read_all(&s, i).unwrap(), want);
        }
        assert_eq!(s.lock().in_memory, 0);
        // A second reader would find the chunks gone: an error, not other records.
        let again = read_all(&s, 0).unwrap_err();
        assert!(again.to_string().contains("read once"), "{again}");
    }

    /// 5,000 records written in turn to `s`'s two streams, each read meanwhile by a reader on
    /// a thread of its own: each stream's records come back in order.
    fn follow(s: &Streams) {
        let (first, second) = std::thread::scope(|scope| {
            let first = scope.spawn(|| read_all(s, 0).unwrap());
            let second = scope.spawn(|| read_all(s, 1).unwrap());
            let mut w = s.writer();
            w.chunk = 24;
            for k in 0u64..5000 {
                w.push((k % 2) as usize, &k.to_le_bytes());
            }
            drop(w);
            (first.join().unwrap(), second.join().unwrap())
        });
        assert_eq!(first, (0..5000).step_by(2).collect::<Vec<u64>>());
        assert_eq!(second, (1..5000).step_by(2).collect::<Vec<u64>>());
    }

    #[test]
    fn a_reader_close_behind_its_writer_needs_no_file() {
        let s = Streams::with_handover(2, HANDOVER);
        follow(&s);
        // 40 KB written, far below the hand-over's budget.
        assert!(s.file.get().is_none());
    }

    #[test]
    fn a_writer_goes_on_into_the_file_when_its_reader_waits_for_another_stream() {
        // The reader wants stream 1 first, which comes last: the writer must not wait for
        // stream 0's chunks in memory to be taken.
        let s = Streams::with_handover(2, 192);
        let (second, first) = std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let _reading = s.reading();
                (read_all(&s, 1).unwrap(), read_all(&s, 0).unwrap())
            });
            let mut w = s.writer();
            w.chunk = 64;
            for k in 0u64..1000 {
                w.push(0, &k.to_le_bytes());
            }
            w.push(1, &7u64.to_le_bytes());
            drop(w);
            reader.join().unwrap()
        });
        assert_eq!(second, vec![7]);
        assert_eq!(first, (0..1000).collect::<Vec<u64>>());
    }

    #[test]
    fn a_writer_goes_on_into_the_file_when_its_reader_waits_for_something_else() {
        // The reader waits for a message the writer's thread sends once it has written
        // everything: the writer may wait for it only so long.
        let s = Streams::with_handover(1, 192);
        let (done, wait) = std::sync::mpsc::channel();
        let s = &s;
        let got = std::thread::scope(|scope| {
            let reader = scope.spawn(move || {
                let _reading = s.reading();
                wait.recv_timeout(std::time::Duration::from_secs(60))
                    .expect("the writer waited for a reader that waited for it");
                read_all(s, 0).unwrap()
            });
            let mut w = s.writer();
            w.chunk = 64;
            for k in 0u64..1000 {
                w.push(0, &k.to_le_bytes());
            }
            drop(w);
            done.send(()).unwrap();
            reader.join().unwrap()
        });
        assert_eq!(got, (0..1000).collect::<Vec<u64>>());
        assert!(s.file.get().is_some());
    }

    #[test]
    fn a_reader_on_another_thread_follows_the_writer_to_the_end() {
        let s = Streams::new(2);
        follow(&s);
        assert!(s.file.get().is_some());
    }
}
