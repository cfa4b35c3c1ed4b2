//! [`Spill`]: an append-only store of records that keeps a bounded tail in memory and the rest
//! in an unnamed temporary file, so that what the critical path keeps of a run is bounded in
//! memory whatever the log's length (docs/critical-path.md#cost). It is read forward
//! a window at a time ([`Spill::windows`]) or, for fixed-size records, backward
//! ([`Spill::backward`]).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes kept in memory before they go to the file (a power of two), unless
/// [`Spill::with_memory`] says otherwise. Small: each page of a tail is touched, and a fresh
/// page costs more than the write that empties the tail (8 MiB tails took `pp critical-path`
/// of 10^7 events 9,000 page faults and 3-8% more CPU than 1 MiB; 256 KiB gained nothing more:
/// docs/critical-path.md#throughput).
pub(crate) const MEMORY: usize = 1 << 20;

/// Records appended in order; the first I/O error is kept and reported by [`Spill::error`].
#[derive(Debug)]
pub struct Spill {
    /// Bytes kept in memory before they go to the file (a power of two).
    memory: usize,
    /// The records written so far, whole buffers at a time.
    file: Option<File>,
    /// Bytes in the file.
    on_disk: u64,
    /// The records after those in the file.
    tail: Vec<u8>,
    error: Option<String>,
    /// Bytes that left the tail (to the file, or lost after an error).
    flushed: u64,
}

impl Default for Spill {
    fn default() -> Self {
        Spill::with_memory(MEMORY)
    }
}

impl Spill {
    /// A spill that keeps up to `bytes` in memory (rounded down to a power of two, at least
    /// 64 kB), the rest in its file.
    pub fn with_memory(bytes: usize) -> Self {
        let bytes = bytes.max(64 << 10);
        Spill {
            memory: 1 << bytes.ilog2(),
            file: None,
            on_disk: 0,
            tail: Vec::new(),
            error: None,
            flushed: 0,
        }
    }

    /// Appends one record.
    pub fn push(&mut self, record: &[u8]) {
        // Before the tail would outgrow its memory (a power of two: its capacity stays at
        // most that).
        if self.tail.len() + record.len() > self.memory {
            self.flush();
        }
        self.tail.extend_from_slice(record);
    }

    /// Appends the first `len` bytes of `record`, a buffer of fixed size that an encoder
    /// filled: it is copied whole and cut back, since a copy of known size costs a few moves
    /// and one of `len` bytes a call to `memcpy`, which took longer than the encoding.
    #[inline]
    pub fn push_prefix<const N: usize>(&mut self, record: &[u8; N], len: usize) {
        if self.tail.len() + N > self.memory {
            self.flush();
        }
        let at = self.tail.len();
        self.tail.extend_from_slice(record);
        self.tail.truncate(at + len.min(N));
    }

    /// Bytes appended.
    pub fn len(&self) -> u64 {
        self.flushed + self.tail.len() as u64
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first error writing the file, if any (records after it were lost).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn flush(&mut self) {
        self.flushed += self.tail.len() as u64;
        if self.error.is_some() {
            self.tail.clear();
            return;
        }
        let written = match &mut self.file {
            Some(f) => f.write_all(&self.tail),
            None => temporary().and_then(|mut f| {
                f.write_all(&self.tail)?;
                self.file = Some(f);
                Ok(())
            }),
        };
        match written {
            Ok(()) => self.on_disk += self.tail.len() as u64,
            Err(e) => {
                self.error = Some(format!(
                    "a temporary file in {}: {e}",
                    std::env::temp_dir().display()
                ))
            }
        }
        self.tail.clear();
    }

    /// Every byte appended, from the first, a window at a time ([`Forward::window`]), for a
    /// decoder that reads records straight from memory; the error writing them, if there was
    /// one.
    pub fn windows(&mut self) -> io::Result<Forward<'_>> {
        if let Some(e) = &self.error {
            return Err(io::Error::other(e.clone()));
        }
        if let Some(f) = &mut self.file {
            f.seek(SeekFrom::Start(0))?;
        }
        Ok(Forward {
            disk_left: self.on_disk,
            file: self.file.as_mut(),
            tail: &self.tail,
            buf: Vec::new(),
            at: 0,
        })
    }

    /// Every byte appended, read through [`Spill::windows`] (for tests).
    #[cfg(test)]
    pub(crate) fn read_all(&mut self) -> Vec<u8> {
        let mut all = Vec::new();
        let mut forward = self.windows().expect("no error writing");
        loop {
            let w = forward.window(1000).expect("read back");
            if w.is_empty() {
                return all;
            }
            // Odd sizes, so that windows straddle the file's end.
            let n = w.len().min(777);
            all.extend_from_slice(&w[..n]);
            forward.consume(n);
        }
    }

    /// The records of `N` bytes, last first (every record appended must have `N` bytes).
    pub fn backward<const N: usize>(&mut self) -> Backward<'_, N> {
        let on_disk = self.on_disk;
        Backward {
            spill: self,
            in_tail: true,
            at: 0,
            chunk: Vec::new(),
            disk_left: on_disk,
            tail_left: 0,
            error: None,
        }
        .start()
    }
}

/// [`Spill::backward`]: the records, last first; an I/O error ends them and is kept in
/// [`Backward::error`].
pub struct Backward<'a, const N: usize> {
    spill: &'a mut Spill,
    in_tail: bool,
    /// Bytes of `chunk` (or of the tail) not yet returned.
    at: usize,
    chunk: Vec<u8>,
    disk_left: u64,
    tail_left: usize,
    /// Why the records ended early, if they did.
    pub error: Option<io::Error>,
}

impl<const N: usize> Backward<'_, N> {
    fn start(mut self) -> Self {
        self.tail_left = self.spill.tail.len();
        self
    }

    fn refill(&mut self) -> io::Result<bool> {
        const CHUNK: u64 = 1 << 20;
        if self.disk_left == 0 {
            return Ok(false);
        }
        let Some(file) = &mut self.spill.file else {
            return Ok(false);
        };
        let n = CHUNK.min(self.disk_left) / N as u64 * N as u64;
        let n = if n == 0 { self.disk_left } else { n };
        self.disk_left -= n;
        file.seek(SeekFrom::Start(self.disk_left))?;
        self.chunk.resize(n as usize, 0);
        file.read_exact(&mut self.chunk)?;
        self.at = self.chunk.len();
        Ok(true)
    }
}

impl<const N: usize> Iterator for Backward<'_, N> {
    type Item = [u8; N];

    fn next(&mut self) -> Option<[u8; N]> {
        if self.in_tail {
            if self.tail_left >= N {
                self.tail_left -= N;
                let k = self.tail_left;
                return self.spill.tail[k..k + N].try_into().ok();
            }
            self.in_tail = false;
        }
        if self.at < N {
            match self.refill() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    self.error = Some(e);
                    return None;
                }
            }
        }
        if self.at < N {
            return None;
        }
        self.at -= N;
        self.chunk[self.at..self.at + N].try_into().ok()
    }
}

/// [`Spill::windows`]: the bytes appended, in order, a window at a time.
pub struct Forward<'a> {
    file: Option<&'a mut File>,
    disk_left: u64,
    /// What is left of the spill's tail (read after the file).
    tail: &'a [u8],
    buf: Vec<u8>,
    /// Bytes of `buf` consumed.
    at: usize,
}

impl Forward<'_> {
    /// The bytes not consumed yet: at least `want` of them (up to about a MiB more), unless
    /// fewer are left, in which case every byte left (empty at the end).
    pub fn window(&mut self, want: usize) -> io::Result<&[u8]> {
        const CHUNK: usize = 1 << 20;
        if self.buf.len() - self.at < want {
            self.buf.drain(..self.at);
            self.at = 0;
            while self.buf.len() < want {
                let had = self.buf.len();
                if self.disk_left > 0
                    && let Some(file) = &mut self.file
                {
                    let n = (CHUNK as u64).min(self.disk_left) as usize;
                    self.buf.resize(had + n, 0);
                    file.read_exact(&mut self.buf[had..])?;
                    self.disk_left -= n as u64;
                } else if !self.tail.is_empty() {
                    let n = CHUNK.min(self.tail.len());
                    self.buf.extend_from_slice(&self.tail[..n]);
                    self.tail = &self.tail[n..];
                } else {
                    break;
                }
            }
        }
        Ok(&self.buf[self.at..])
    }

    /// Marks `n` bytes of the window consumed.
    pub fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.buf.len());
    }
}

/// A new temporary file, removed from its folder at once (it goes when closed).
pub(crate) fn temporary() -> io::Result<File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("pp-spill-{}-{n}", std::process::id()));
        match File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_forward_and_backward_across_the_file_and_the_tail() {
        let mut s = Spill::default();
        // More than MEMORY bytes, so that some go to the file.
        let n = (MEMORY / 16 * 3 + 5) as u64;
        for k in 0..n {
            let mut r = [0u8; 16];
            r[..8].copy_from_slice(&k.to_le_bytes());
            r[8..].copy_from_slice(&(k * 3).to_le_bytes());
            s.push(&r);
        }
        assert!(s.file.is_some());
        assert_eq!(s.len(), n * 16);
        let all = s.read_all();
        assert_eq!(all.len() as u64, n * 16);
        for (k, r) in all.chunks(16).enumerate() {
            assert_eq!(u64::from_le_bytes(r[..8].try_into().unwrap()), k as u64);
        }
        let back: Vec<u64> = s
            .backward::<16>()
            .map(|r| u64::from_le_bytes(r[8..].try_into().unwrap()))
            .collect();
        assert_eq!(back.len() as u64, n);
        assert!(
            back.iter()
                .rev()
                .enumerate()
                .all(|(k, &v)| v == k as u64 * 3)
        );
    }
}
