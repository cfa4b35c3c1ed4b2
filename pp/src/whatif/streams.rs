//! [`Streams`]: one append-only byte stream per thread in a single unnamed temporary file (the
//! critical path's [spill](crate::graph)), so that a replay keeps a bounded part of each
//! thread's stream in memory whatever the log's length (docs/whatif.md#cost). A [`Writer`]
//! appends to the streams in chunks of whole records; a [`Cursor`] reads a stream forward,
//! from another thread while the writer still writes (the replay follows the reading of the
//! log: docs/whatif.md#cost), waiting for the next chunk until the writer has finished.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

/// Bytes of all the streams' buffers together, before they go to the file.
const BUDGET: usize = 16 << 20;

/// At most this many bytes a stream's buffer (a reader following the writer waits for
/// whole chunks: small ones keep it close behind).
const MAX_CHUNK: usize = 64 << 10;

/// One append-only stream per thread, as far as its [`Writer`] has published it; the first
/// I/O error is kept ([`Streams::error`]).
#[derive(Debug)]
pub(crate) struct Streams {
    file: OnceLock<File>,
    /// What has been published.
    state: Mutex<Published>,
    /// Signalled at each chunk published and at the end.
    grown: Condvar,
}

#[derive(Debug, Default)]
struct Published {
    /// Where in the file each stream's chunks are, and their lengths.
    chunks: Vec<Vec<(u64, u32)>>,
    /// Each stream's bytes after those in the file, once the writer has finished.
    tails: Vec<Vec<u8>>,
    finished: bool,
    error: Option<String>,
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
}

impl Streams {
    /// `n` empty streams.
    pub fn new(n: usize) -> Streams {
        Streams {
            file: OnceLock::new(),
            state: Mutex::new(Published {
                chunks: vec![Vec::new(); n],
                tails: vec![Vec::new(); n],
                ..Published::default()
            }),
            grown: Condvar::new(),
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

    /// Writes stream `s`'s buffer up to `end` to the file as a chunk, and publishes it.
    fn flush(&mut self, s: usize, end: usize) {
        let chunk = &self.tails[s][..end];
        if !self.failed {
            let file = match self.streams.file.get() {
                Some(f) => Ok(f),
                None => crate::graph::temporary().map(|f| self.streams.file.get_or_init(|| f)),
            };
            match file.and_then(|f| f.write_all_at(chunk, self.end)) {
                Ok(()) => {
                    self.streams.lock().chunks[s].push((self.end, end as u32));
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
                if let Some(&(at, len)) = state.chunks[self.stream].get(self.chunk) {
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
                if state.finished {
                    self.buf.clear();
                    self.buf.extend_from_slice(&state.tails[self.stream]);
                    self.ended = true;
                    break;
                }
                state = streams.grown.wait(state).unwrap_or_else(|e| e.into_inner());
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
            let mut c = s.cursor(i);
            let mut got = Vec::new();
            loop {
                let b = c.bytes(&s).unwrap();
                if b.is_empty() {
                    break;
                }
                let n = b.len();
                got.extend(
                    b.chunks(8)
                        .map(|r| u64::from_le_bytes(r.try_into().unwrap())),
                );
                c.consume(n);
            }
            let want: Vec<u64> = (0u64..1000).filter(|k| k % 3 == i as u64).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn a_reader_on_another_thread_follows_the_writer_to_the_end() {
        let s = Streams::new(2);
        let read = |i: usize| {
            let mut c = s.cursor(i);
            let mut got = Vec::new();
            loop {
                let b = c.bytes(&s).unwrap();
                if b.is_empty() {
                    return got;
                }
                let n = b.len();
                got.extend(
                    b.chunks(8)
                        .map(|r| u64::from_le_bytes(r.try_into().unwrap())),
                );
                c.consume(n);
            }
        };
        let (first, second) = std::thread::scope(|scope| {
            let first = scope.spawn(|| read(0));
            let second = scope.spawn(|| read(1));
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
}
