//! [`Streams`]: one append-only byte stream per thread in a single unnamed temporary file (the
//! critical path's [spill](crate::graph)), so that a replay keeps a bounded part of each
//! thread's stream in memory whatever the log's length (docs/whatif.md#cost). A stream is
//! written in chunks of whole records and read forward by a [`Cursor`].

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Bytes of all the streams' buffers together, before they go to the file.
const BUDGET: usize = 16 << 20;

/// One append-only stream per thread; the first I/O error is kept ([`Streams::error`]).
#[derive(Debug)]
pub(crate) struct Streams {
    file: Option<File>,
    /// Bytes in the file.
    end: u64,
    /// A stream's buffer goes to the file before it would outgrow this.
    chunk: usize,
    streams: Vec<Stream>,
    error: Option<String>,
}

#[derive(Debug, Default)]
struct Stream {
    /// Where in the file each chunk written is, and its length.
    chunks: Vec<(u64, u32)>,
    /// The bytes after those in the file.
    tail: Vec<u8>,
}

impl Streams {
    /// `n` empty streams, their buffers together about [`BUDGET`] bytes (`PP_SPILL_CHUNK`
    /// sets a stream's buffer instead: tests use it to make the streams go to the file).
    pub fn new(n: usize) -> Streams {
        let chunk = std::env::var("PP_SPILL_CHUNK")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(BUDGET / n.max(1))
            .clamp(8, 1 << 20)
            / 8
            * 8;
        Streams {
            file: None,
            end: 0,
            chunk,
            streams: (0..n).map(|_| Stream::default()).collect(),
            error: None,
        }
    }

    /// Appends one record to stream `s` (records are never split between chunks).
    pub fn push(&mut self, s: usize, record: &[u8]) {
        let st = &mut self.streams[s];
        if !st.tail.is_empty() && st.tail.len() + record.len() > self.chunk {
            self.flush(s);
        }
        self.streams[s].tail.extend_from_slice(record);
    }

    /// The first error writing or reading the file, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn flush(&mut self, s: usize) {
        let st = &mut self.streams[s];
        if self.error.is_none() {
            let written = match &self.file {
                Some(f) => f.write_all_at(&st.tail, self.end),
                None => crate::graph::temporary().and_then(|f| {
                    f.write_all_at(&st.tail, self.end)?;
                    self.file = Some(f);
                    Ok(())
                }),
            };
            match written {
                Ok(()) => {
                    st.chunks.push((self.end, st.tail.len() as u32));
                    self.end += st.tail.len() as u64;
                }
                Err(e) => self.error = Some(temporary_error(e)),
            }
        }
        st.tail.clear();
    }

    /// A cursor at the start of stream `s`.
    pub fn cursor(&self, s: usize) -> Cursor {
        Cursor {
            stream: s,
            chunk: 0,
            buf: Vec::new(),
            pos: 0,
            in_tail: false,
        }
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
    /// Reading the stream's tail (at `pos`) rather than `buf`.
    in_tail: bool,
}

impl Cursor {
    /// The unread bytes of the current chunk: whole records, empty at the stream's end.
    pub fn bytes<'a>(&'a mut self, streams: &'a Streams) -> io::Result<&'a [u8]> {
        let st = &streams.streams[self.stream];
        if !self.in_tail && self.pos >= self.buf.len() {
            if let Some(&(at, len)) = st.chunks.get(self.chunk) {
                let file = streams
                    .file
                    .as_ref()
                    .ok_or_else(|| io::Error::other("no file"))?;
                self.buf.resize(len as usize, 0);
                file.read_exact_at(&mut self.buf, at)
                    .map_err(|e| io::Error::other(temporary_error(e)))?;
                self.chunk += 1;
            } else {
                self.in_tail = true;
                self.buf = Vec::new();
            }
            self.pos = 0;
        }
        Ok(if self.in_tail {
            st.tail.get(self.pos..).unwrap_or(&[])
        } else {
            &self.buf[self.pos..]
        })
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
        let mut s = Streams::new(3);
        s.chunk = 64;
        for k in 0u64..1000 {
            s.push((k % 3) as usize, &k.to_le_bytes());
        }
        assert!(s.file.is_some());
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
}
