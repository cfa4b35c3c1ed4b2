//! A run's steps as compact records in a temporary file (docs/skeletons.md#memory): the log is
//! read once, in time order; each thread's operations and `cpu` samples go to its streams
//! ([`crate::whatif::streams`], one file, a bounded buffer per stream); then each thread's
//! steps are finished (parts merged in, computation and CPU time worked out) into one stream of
//! records per thread, which every threshold the signature tries reads again. A record is its
//! operation's number and four numbers, each in 1 to 10 bytes (7 bits a byte).

use std::collections::BTreeMap;
use std::io;

use anyhow::{Result, anyhow};
use pp_recorder::event::ThreadId;

use super::parts::{Part, Regions};
use super::steps::{Builder, Op, Ops, Samples, Span, Step};
use crate::log::LogReader;
use crate::whatif::streams::{Cursor, Streams};

/// One record being written: numbers of 7 bits a byte.
pub struct Writer {
    buf: [u8; 64],
    len: usize,
}

impl Default for Writer {
    fn default() -> Self {
        Writer {
            buf: [0; 64],
            len: 0,
        }
    }
}

impl Writer {
    /// Appends `v`.
    pub fn number(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf[self.len] = (v as u8) | 0x80;
            self.len += 1;
            v >>= 7;
        }
        self.buf[self.len] = v as u8;
        self.len += 1;
    }

    /// Appends `v - previous`, small whichever is larger.
    pub fn signed(&mut self, v: u64, previous: u64) {
        let d = v.wrapping_sub(previous) as i64;
        self.number(((d << 1) ^ (d >> 63)) as u64);
    }

    /// The record.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Records being read from bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    /// The next number.
    pub fn number(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = *self.bytes.get(self.pos)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
            shift += 7;
            if shift >= 64 {
                return None;
            }
        }
    }

    /// The next number written by [`Writer::signed`] after `previous`.
    pub fn signed(&mut self, previous: u64) -> Option<u64> {
        let z = self.number()?;
        let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
        Some(previous.wrapping_add(d as u64))
    }
}

/// One stream read forward, a chunk at a time; an error reading it ends it and is kept.
struct StreamReader {
    cursor: Cursor,
    buf: Vec<u8>,
    pos: usize,
    error: Option<io::Error>,
}

impl StreamReader {
    fn new(streams: &Streams, s: usize) -> Self {
        StreamReader {
            cursor: streams.cursor(s),
            buf: Vec::new(),
            pos: 0,
            error: None,
        }
    }

    /// Decodes the next record with `f`, or `None` at the stream's end.
    fn next<T>(
        &mut self,
        streams: &Streams,
        f: impl FnOnce(&mut Reader) -> Option<T>,
    ) -> Option<T> {
        if self.pos >= self.buf.len() {
            match self.cursor.bytes(streams) {
                Ok(b) => {
                    self.buf.clear();
                    self.buf.extend_from_slice(b);
                    let n = b.len();
                    self.cursor.consume(n);
                    self.pos = 0;
                }
                Err(e) => {
                    self.error = Some(e);
                    return None;
                }
            }
            if self.buf.is_empty() {
                return None;
            }
        }
        let mut r = Reader {
            bytes: &self.buf,
            pos: self.pos,
        };
        let v = f(&mut r);
        self.pos = r.pos;
        if v.is_none() {
            self.pos = self.buf.len();
        }
        v
    }
}

/// A finished step: its operation's number in [`Recorded::ops`] and its figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rec {
    pub op: u32,
    pub compute_ns: u64,
    pub bytes: u64,
    pub op_ns: u64,
    pub cpu_ns: u64,
    pub op_cpu_ns: u64,
}

impl Rec {
    fn write(&self) -> Writer {
        let mut w = Writer::default();
        w.number(u64::from(self.op));
        w.number(self.compute_ns);
        w.number(self.bytes);
        w.number(self.op_ns);
        w.number(self.cpu_ns);
        w.number(self.op_cpu_ns);
        w
    }

    fn read(r: &mut Reader) -> Option<Rec> {
        Some(Rec {
            op: r.number()? as u32,
            compute_ns: r.number()?,
            bytes: r.number()?,
            op_ns: r.number()?,
            cpu_ns: r.number()?,
            op_cpu_ns: r.number()?,
        })
    }
}

/// A run's steps, per thread, as records in a temporary file.
pub struct Recorded {
    /// Threads in the log's header.
    pub p: u32,
    /// Every operation, by number.
    pub ops: Vec<Op>,
    /// The threads with steps, in order, and how many steps each has.
    pub threads: Vec<(ThreadId, u64)>,
    /// Why the steps may be incomplete (the log was damaged or cut), if they may.
    pub warning: Option<String>,
    /// libomp's blocktime, from the header's `omp_blocktime_ms` (the OpenMP tool writes it,
    /// docs/openmp.md#the-runtimes-waits), if it has a whole number there.
    pub omp_blocktime_ms: Option<u64>,
    /// Records: `threads[i]`'s are in stream `stream[i]`.
    streams: Streams,
    stream: Vec<usize>,
}

/// The header key of libomp's blocktime, which the OpenMP tool writes
/// (docs/openmp.md#the-runtimes-waits); a skeleton file's field of the same name carries it.
pub const OMP_BLOCKTIME: &str = "omp_blocktime_ms";

impl Recorded {
    /// Reads the log `reader` reads into its steps.
    pub fn read(mut reader: LogReader) -> Result<Recorded> {
        let p = reader.header().p;
        let omp_blocktime_ms = reader
            .header()
            .params
            .iter()
            .find(|(k, _)| k == OMP_BLOCKTIME)
            .and_then(|(_, v)| v.parse().ok());
        let n = p as usize;
        let raw = Streams::new(2 * n);
        let mut raw_writer = raw.writer();
        let mut builders: Vec<Option<Builder>> = (0..n).map(|_| None).collect();
        let mut regions = Regions::new(p);
        let mut ops = Ops::default();
        // A damaged or cut log: its signature is that of every event before the damage.
        let damage = reader
            .for_each_event(|e, symbols| {
                let th = e.thread as usize;
                if th >= n {
                    return;
                }
                regions.event(e, symbols, &builders);
                let b = builders[th].get_or_insert_default();
                b.event(e, symbols, &mut ops, &mut raw_writer);
                regions.after(e.thread, b);
            })
            .err();
        // The raw streams are complete: what `finish` reads of them follows to their ends.
        raw_writer.finish();
        let (parts, names) = regions.parts(&builders);
        let warning = damage.map(|e| format!("{e}; the signature is of the events before it"));
        let streams = Streams::new(n);
        let mut threads = Vec::new();
        let mut stream = Vec::new();
        {
            let mut writer = streams.writer();
            for (th, (builder, parts)) in builders.into_iter().zip(parts).enumerate() {
                let Some(builder) = builder else {
                    continue;
                };
                let steps = finish(th, &builder, &parts, &names, &raw, &mut ops, |rec| {
                    writer.push(th, rec.write().bytes())
                })?;
                if steps > 0 {
                    threads.push((th as ThreadId, steps));
                    stream.push(th);
                }
            }
            writer.finish();
        }
        if let Some(e) = raw.error().or(streams.error()) {
            return Err(anyhow!("pp signature: {e}"));
        }
        Ok(Recorded {
            p,
            ops: ops.list,
            threads,
            warning,
            omp_blocktime_ms,
            streams,
            stream,
        })
    }

    /// The run of these steps.
    pub fn of_steps(p: u32, steps: &BTreeMap<ThreadId, Vec<Step>>) -> Recorded {
        let mut ops = Ops::default();
        let streams = Streams::new(steps.len());
        let mut threads = Vec::new();
        {
            let mut writer = streams.writer();
            for (i, (&t, s)) in steps.iter().enumerate() {
                for s in s {
                    let rec = Rec {
                        op: ops.intern(s.op.clone()),
                        compute_ns: s.compute_ns,
                        bytes: s.bytes,
                        op_ns: s.op_ns,
                        cpu_ns: s.cpu_ns,
                        op_cpu_ns: s.op_cpu_ns,
                    };
                    writer.push(i, rec.write().bytes());
                }
                threads.push((t, s.len() as u64));
            }
            writer.finish();
        }
        Recorded {
            p,
            ops: ops.list,
            threads,
            warning: None,
            omp_blocktime_ms: None,
            streams,
            stream: (0..steps.len()).collect(),
        }
    }

    /// Calls `f` with every record of `self.threads[i]`, in order.
    pub fn each(&self, i: usize, mut f: impl FnMut(Rec)) -> Result<()> {
        let s = self.stream_of(i);
        let mut r = StreamReader::new(&self.streams, s);
        while let Some(rec) = r.next(&self.streams, Rec::read) {
            f(rec);
        }
        match r.error {
            Some(e) => Err(anyhow!("pp signature: {e}")),
            None => Ok(()),
        }
    }

    fn stream_of(&self, i: usize) -> usize {
        self.stream[i]
    }
}

/// A thread's `cpu` samples (wall ns, thread CPU ns), read back from its stream.
struct SampleStream<'a> {
    reader: StreamReader,
    streams: &'a Streams,
    previous: (u64, u64),
}

impl Iterator for SampleStream<'_> {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        let (t0, c0) = self.previous;
        let s = self
            .reader
            .next(self.streams, |r| Some((r.signed(t0)?, r.signed(c0)?)))?;
        self.previous = s;
        Some(s)
    }
}

/// Thread `th`'s steps, with its `parts` as `PartBegin`/`PartEnd` steps among them (by begin;
/// a step before a part's point at the same time, except the thread's `stop`, which is always
/// last: a hybrid run's worker whose last barrier the tracer placed at `MPI_Finalize` ends its
/// part there), each step's computation the wall time
/// since the previous operation ended and its CPU time the thread's CPU rate between two samples
/// integrated over that computation (docs/skeletons.md#steps), given to `emit`; returns how many.
fn finish(
    th: usize,
    builder: &Builder,
    parts: &[Part],
    names: &[String],
    raw: &Streams,
    ops: &mut Ops,
    mut emit: impl FnMut(Rec),
) -> Result<u64> {
    let mut points: Vec<(u64, usize, Span)> = Vec::new();
    let stop = ops.intern(Op::Stop);
    if !parts.is_empty() {
        let end = ops.intern(Op::PartEnd);
        let mut begins: Vec<Option<u32>> = vec![None; names.len()];
        for (k, part) in parts.iter().enumerate() {
            let name = part.name as usize;
            let begin = *begins[name].get_or_insert_with(|| {
                ops.intern(Op::PartBegin {
                    name: names[name].clone(),
                })
            });
            let point = |t, op| Span {
                begin: t,
                end: t,
                op,
                bytes: 0,
            };
            points.push((part.begin, 2 * k, point(part.begin, begin)));
            points.push((part.end, 2 * k + 1, point(part.end, end)));
        }
        points.sort_unstable_by_key(|&(t, k, _)| (t, k));
    }
    let mut spans = StreamReader::new(raw, 2 * th);
    let mut previous = 0;
    let mut next_span = |spans: &mut StreamReader| {
        let s = spans.next(raw, |r| Span::read(r, previous))?;
        previous = s.begin;
        Some(s)
    };
    let mut samples = Samples::new(SampleStream {
        reader: StreamReader::new(raw, 2 * th + 1),
        streams: raw,
        previous: (0, 0),
    });
    let mut last = builder.first;
    let mut count = 0u64;
    let mut step = |s: Span| {
        let l = *last.get_or_insert(s.begin);
        let (a, b) = (s.begin.max(l), s.end.max(s.begin.max(l)));
        emit(Rec {
            op: s.op,
            compute_ns: s.begin.saturating_sub(l),
            bytes: s.bytes,
            op_ns: s.end - s.begin,
            cpu_ns: samples.cpu_in(l, a),
            op_cpu_ns: if b > a { samples.cpu_in(a, b) } else { 0 },
        });
        last = Some(l.max(s.end));
        count += 1;
    };
    if !points.is_empty() && !builder.sorted {
        // Steps written out of the order of their begins (a region's begin or end inside an
        // open wait): sorted in memory with the parts, as the first version did.
        let mut all = Vec::new();
        while let Some(s) = next_span(&mut spans) {
            all.push(s);
        }
        all.extend(points.iter().map(|&(_, _, s)| s));
        all.sort_by_key(|s| (s.begin, s.op == stop));
        all.into_iter().for_each(&mut step);
    } else {
        let mut points = points.into_iter().map(|(_, _, s)| s).peekable();
        let mut span = next_span(&mut spans);
        loop {
            match (span, points.peek()) {
                (Some(s), Some(p)) if s.begin < p.begin || (s.begin == p.begin && s.op != stop) => {
                    step(s);
                    span = next_span(&mut spans);
                }
                (_, Some(_)) => step(points.next().expect("a point")),
                (Some(s), None) => {
                    step(s);
                    span = next_span(&mut spans);
                }
                (None, None) => break,
            }
        }
    }
    let error = spans.error.or(samples.into_inner().reader.error);
    match error {
        Some(e) => Err(anyhow!("pp signature: {e}")),
        None => Ok(count),
    }
}
