//! [`Times`]: each thread's predicted times, the latest in memory and the rest in a temporary
//! file in compressed chunks (docs/whatif.md#cost), read at any index ([`Times::get`]: a
//! dependency's source).
//!
//! A thread's times never decrease, and the bit patterns of non-negative doubles are ordered
//! as their values: a chunk is its first time's bits, then each next time's bits less the
//! previous', as a varint (a few bytes where times are close, against 8 a double).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

use pp_recorder::log::varint;

/// Times of all threads' buffers together (at most 32 Ki a thread), before they go to the file.
const BUDGET: usize = 2 << 20;

/// Each thread's times.
#[derive(Debug)]
pub(crate) struct Times {
    file: Option<File>,
    /// Bytes in the file.
    end: u64,
    /// Times in a chunk: `1 << shift` (a dependency's time is found without a division).
    shift: u32,
    threads: Vec<Thread>,
    error: Option<String>,
}

#[derive(Debug, Default)]
struct Thread {
    /// Where each chunk is in the file, and its length in bytes.
    chunks: Vec<(u64, u32)>,
    /// The times after those in the file.
    tail: Vec<f64>,
    /// The chunk read last by [`Times::get`], decoded.
    cache: Mutex<Option<(usize, Vec<f64>)>>,
}

impl Times {
    /// No times yet for `p` threads (`PP_SPILL_CHUNK`, in bytes, sets a chunk's size at 8
    /// bytes a time instead of the budget: tests use it to send the times to the file), in
    /// chunks of a power of two of times.
    pub fn new(p: usize) -> Times {
        let per_chunk = std::env::var("PP_SPILL_CHUNK")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .map_or(BUDGET / p.max(1), |b| b / 8)
            .clamp(1, 1 << 15);
        let shift = usize::BITS - 1 - per_chunk.leading_zeros();
        Times {
            file: None,
            end: 0,
            shift,
            threads: (0..p).map(|_| Thread::default()).collect(),
            error: None,
        }
    }

    /// Thread `i`'s next time.
    pub fn push(&mut self, i: usize, t: f64) {
        let th = &mut self.threads[i];
        th.tail.push(t);
        if th.tail.len() == 1 << self.shift {
            self.flush(i);
        }
    }

    /// The first error writing the file, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn flush(&mut self, i: usize) {
        let th = &mut self.threads[i];
        if self.error.is_none() {
            let mut buf = Vec::with_capacity(th.tail.len() * 4);
            let mut last = 0u64;
            for (k, t) in th.tail.iter().enumerate() {
                let bits = t.to_bits();
                if k == 0 {
                    buf.extend_from_slice(&bits.to_le_bytes());
                } else {
                    varint::put(&mut buf, bits.wrapping_sub(last));
                }
                last = bits;
            }
            let written = match &self.file {
                Some(f) => f.write_all_at(&buf, self.end),
                None => crate::graph::temporary().and_then(|f| {
                    f.write_all_at(&buf, self.end)?;
                    self.file = Some(f);
                    Ok(())
                }),
            };
            match written {
                Ok(()) => {
                    th.chunks.push((self.end, buf.len() as u32));
                    self.end += buf.len() as u64;
                }
                Err(e) => {
                    self.error = Some(format!(
                        "a temporary file in {}: {e}",
                        std::env::temp_dir().display()
                    ))
                }
            }
        }
        th.tail.clear();
    }

    /// Chunk `c` of thread `i`, decoded into `out`.
    fn read_chunk(&self, i: usize, c: usize, out: &mut Vec<f64>) -> io::Result<()> {
        let (at, len) = self.threads[i].chunks[c];
        let file = self
            .file
            .as_ref()
            .ok_or_else(|| io::Error::other("no temporary file"))?;
        let mut buf = vec![0u8; len as usize];
        file.read_exact_at(&mut buf, at)?;
        let damaged = || io::Error::other("the predicted times in the temporary file are damaged");
        let mut bits = u64::from_le_bytes(
            buf.get(..8)
                .ok_or_else(damaged)?
                .try_into()
                .unwrap_or([0; 8]),
        );
        out.clear();
        out.push(f64::from_bits(bits));
        let mut pos = 8;
        while pos < buf.len() {
            bits = bits.wrapping_add(varint::get(&buf, &mut pos).map_err(|_| damaged())?);
            out.push(f64::from_bits(bits));
        }
        Ok(())
    }

    /// Thread `i`'s time `k` (it must have been pushed).
    pub fn get(&self, i: usize, k: u64) -> io::Result<f64> {
        let th = &self.threads[i];
        let c = (k >> self.shift) as usize;
        let at = (k & ((1 << self.shift) - 1)) as usize;
        if c >= th.chunks.len() {
            return th
                .tail
                .get(at)
                .copied()
                .ok_or_else(|| io::Error::other("a predicted time not yet known"));
        }
        let mut cache = th.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.as_ref().is_none_or(|(cached, _)| *cached != c) {
            let mut times = cache.take().map(|(_, v)| v).unwrap_or_default();
            self.read_chunk(i, c, &mut times)?;
            *cache = Some((c, times));
        }
        cache
            .as_ref()
            .and_then(|(_, v)| v.get(at).copied())
            .ok_or_else(|| io::Error::other("the predicted times in the temporary file end early"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_come_back_exactly_from_the_file_and_the_tail() {
        let mut times = Times::new(2);
        times.shift = 2;
        let value = |i: usize, k: u64| (k as f64 * 1.37 + i as f64).sqrt() * 1e6 + 0.1;
        for k in 0..100u64 {
            for i in 0..2 {
                times.push(i, value(i, k));
            }
        }
        assert!(times.file.is_some());
        for i in 0..2 {
            for k in [99, 0, 50, 6, 7, 98] {
                assert_eq!(times.get(i, k).unwrap(), value(i, k));
            }
            for k in 0..100 {
                assert_eq!(times.get(i, k).unwrap(), value(i, k));
            }
        }
    }
}
