//! The index of a binary log, built on open: the header, every symbol definition, and where
//! each thread's blocks are, found by reading only item headers (block payloads are skipped).
//! Damage to the item structure ends the index there and is kept to be reported after the
//! events of the indexed blocks.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use pp_recorder::log::binary::{
    DEF_NAME, DEF_TEAM, ITEM_BLOCK, ITEM_DEFS, ITEM_END, MAGIC, MAX_CHUNK, VERSION,
};
use pp_recorder::log::varint::{self, VarintError};
use pp_recorder::log::{check_header, excerpt, is_name};

use super::decode::Defined;
use super::error::LogError;
use super::limits::SymbolBudget;
use crate::event::{Header, Symbols, ThreadId};

/// Where the log's bytes are.
#[derive(Debug)]
pub(crate) enum Source {
    Memory(Vec<u8>),
    File(File),
}

/// One block of the index.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BlockRef {
    /// Offset of the payload in the log.
    pub offset: u64,
    /// Payload length declared by the block header.
    pub len: u32,
    /// Payload bytes present (less than `len` only for a block cut by the end of the file).
    pub avail: u32,
    /// Records declared.
    pub count: u32,
    /// Time of the first record.
    pub first_t: u64,
}

/// The blocks of each thread, in file order, as the scan finds them.
#[derive(Debug, Default)]
struct BlockIndex {
    threads: Vec<(ThreadId, Vec<BlockRef>)>,
    slot: HashMap<ThreadId, usize>,
}

impl BlockIndex {
    fn push(&mut self, thread: ThreadId, block: BlockRef) {
        let threads = &mut self.threads;
        let i = *self.slot.entry(thread).or_insert_with(|| {
            threads.push((thread, Vec::new()));
            threads.len() - 1
        });
        if let Some((_, blocks)) = threads.get_mut(i) {
            blocks.push(block);
        }
    }
}

/// What [`Index::build`] found.
#[derive(Debug)]
pub(crate) struct Index {
    pub header: Header,
    pub symbols: Symbols,
    pub defined: Defined,
    /// Each thread's blocks in file order (threads in order of first block).
    pub threads: Vec<(ThreadId, Vec<BlockRef>)>,
    /// Damage where the scan stopped (`None` when it reached a valid end marker).
    pub tail: Option<LogError>,
    /// The log ends with a valid end marker.
    pub finished: bool,
}

impl Index {
    /// Scans a log of `len` bytes. Fails only when the header is unreadable.
    pub(crate) fn build(file: &str, source: &Source, len: u64) -> Result<Index, LogError> {
        let mut index = Index {
            header: Header::default(),
            symbols: Symbols::default(),
            defined: Defined::default(),
            threads: Vec::new(),
            tail: None,
            finished: false,
        };
        let mut scan = Scanner {
            source,
            len,
            buf: Vec::new(),
            buf_off: 0,
            valid: 0,
        };
        let pos = index.read_header(file, &mut scan)?;
        let mut blocks = BlockIndex::default();
        index.scan_items(
            file,
            &mut scan,
            pos,
            &mut blocks,
            &mut SymbolBudget::default(),
        )?;
        index.threads = blocks.threads;
        Ok(index)
    }

    /// Parses the header; returns the offset of the first item.
    fn read_header(&mut self, file: &str, scan: &mut Scanner<'_>) -> Result<u64, LogError> {
        let total = scan.len;
        let data = scan
            .get(0, MAX_CHUNK)
            .map_err(|e| LogError::io(file, "read", e))?;
        let whole = data.len() as u64 == total;
        let fail = |at: usize, m: String| LogError::binary(file, at as u64, m);
        let eof = |at: usize| {
            if whole {
                fail(
                    data.len(),
                    format!("the log ends inside its header (byte {at}); {NO_END}"),
                )
            } else {
                fail(
                    at,
                    format!("header: longer than the limit of {MAX_CHUNK} bytes"),
                )
            }
        };
        if data.len() < MAGIC.len() + 1 || !data.starts_with(MAGIC) {
            let n = data.len().min(MAGIC.len());
            if data[..n] == MAGIC[..n] {
                return Err(eof(data.len()));
            }
            return Err(fail(
                0,
                "header: expected the magic PPLOG\\0 of a binary log".to_string(),
            ));
        }
        let version = data[MAGIC.len()];
        if version != VERSION {
            return Err(fail(
                MAGIC.len(),
                format!(
                    "header: unsupported version {version} (this reader knows version {VERSION})"
                ),
            ));
        }
        let mut at = MAGIC.len() + 1;
        let field = |at: &mut usize, what: &str| -> Result<u64, LogError> {
            let start = *at;
            get(data, at, what).map_err(|d| match d {
                ScanDamage::Eof => eof(start),
                ScanDamage::Bad(_, m) => fail(start, format!("header: {m}")),
            })
        };
        let p_at = at;
        let p = field(&mut at, "p")?;
        if p == 0 || p > u64::from(u32::MAX) {
            return Err(fail(
                p_at,
                format!("header: p: expected a positive integer below 2^32, found {p}"),
            ));
        }
        let n_at = at;
        let n = field(&mut at, "number of parameters")?;
        if n > (data.len() - at) as u64 {
            return Err(if whole {
                fail(
                    n_at,
                    format!(
                        "the log ends inside its header ({n} parameters declared, {} bytes \
                         follow); {NO_END}",
                        data.len() - at
                    ),
                )
            } else {
                eof(n_at)
            });
        }
        let mut params = Vec::with_capacity(n as usize);
        for i in 0..n {
            let mut pair = [String::new(), String::new()];
            for (slot, what) in pair.iter_mut().zip(["key", "value"]) {
                let what = format!("parameter {}: {what}", i + 1);
                let len_at = at;
                let len = field(&mut at, &what)?;
                if len > (data.len() - at) as u64 {
                    return Err(eof(len_at));
                }
                let bytes = &data[at..at + len as usize];
                *slot = String::from_utf8(bytes.to_vec())
                    .map_err(|_| fail(at, format!("header: {what}: not valid UTF-8")))?;
                at += len as usize;
            }
            let [key, value] = pair;
            params.push((key, value));
        }
        let header = Header {
            p: p as u32,
            params,
        };
        check_header(&header).map_err(|m| fail(n_at, m))?;
        self.defined.p = header.p;
        self.header = header;
        Ok(at as u64)
    }

    /// Walks the items from `pos`, reading definitions and indexing blocks, up to the end
    /// marker or the first damage (kept in `self.tail`).
    fn scan_items(
        &mut self,
        file: &str,
        scan: &mut Scanner<'_>,
        mut pos: u64,
        index: &mut BlockIndex,
        budget: &mut SymbolBudget,
    ) -> Result<(), LogError> {
        let len = scan.len;
        let io = |e| LogError::io(file, "read", e);
        let (mut events, mut nblocks) = (0u64, 0u64);
        let tail = loop {
            if pos == len {
                break Some(LogError::binary(file, pos, NO_END));
            }
            let w = scan.get(pos, 41).map_err(io)?;
            let Some(&tag) = w.first() else {
                break Some(LogError::binary(file, pos, NO_END));
            };
            let mut at = 1;
            let cut = |what: &str| {
                LogError::binary(
                    file,
                    len,
                    format!("the log ends inside {what} at byte {pos}; {NO_END}"),
                )
            };
            let bad = |at: usize, m: String| LogError::binary(file, pos + at as u64, m);
            match tag {
                ITEM_BLOCK => {
                    let fields = (|| {
                        Ok((
                            get(w, &mut at, "block: thread")?,
                            get(w, &mut at, "block: event count")?,
                            get(w, &mut at, "block: byte length")?,
                            get(w, &mut at, "block: first time")?,
                        ))
                    })();
                    let (thread, count, blen, first_t) = match fields {
                        Ok(f) => f,
                        Err(ScanDamage::Eof) => break Some(cut("the header of a block")),
                        Err(ScanDamage::Bad(a, m)) => break Some(bad(a, m)),
                    };
                    let p = self.header.p;
                    let problem = if thread >= u64::from(p) {
                        Some(format!("block: thread {thread} is not below p={p}"))
                    } else if blen > MAX_CHUNK as u64 {
                        Some(format!(
                            "block of thread {thread}: byte length {blen} exceeds the limit of {MAX_CHUNK}"
                        ))
                    } else if count == 0 || count > blen / 2 {
                        Some(format!(
                            "block of thread {thread}: {count} events cannot fill {blen} bytes \
                             (expected 1 to {} events, at least 2 bytes each)",
                            blen / 2
                        ))
                    } else {
                        None
                    };
                    if let Some(m) = problem {
                        break Some(bad(0, m));
                    }
                    let offset = pos + at as u64;
                    let avail = blen.min(len - offset.min(len));
                    index.push(
                        thread as u32,
                        BlockRef {
                            offset,
                            len: blen as u32,
                            avail: avail as u32,
                            count: count as u32,
                            first_t,
                        },
                    );
                    if avail < blen {
                        break Some(LogError::binary(
                            file,
                            len,
                            format!(
                                "the log ends inside a block of thread {thread} (block at byte \
                                 {pos}, {avail} of its {blen} bytes present); {NO_END}"
                            ),
                        ));
                    }
                    events += count;
                    nblocks += 1;
                    pos = offset + blen;
                }
                ITEM_DEFS => {
                    let dlen = match get(w, &mut at, "symbol definitions: byte length") {
                        Ok(l) => l,
                        Err(ScanDamage::Eof) => break Some(cut("symbol definitions")),
                        Err(ScanDamage::Bad(a, m)) => break Some(bad(a, m)),
                    };
                    if dlen > MAX_CHUNK as u64 {
                        break Some(bad(
                            1,
                            format!(
                                "symbol definitions: byte length {dlen} exceeds the limit of {MAX_CHUNK}"
                            ),
                        ));
                    }
                    let start = pos + at as u64;
                    if dlen > len - start.min(len) {
                        break Some(cut("symbol definitions"));
                    }
                    let data = scan.get(start, dlen as usize).map_err(io)?;
                    let symbols = (&mut self.symbols, &mut self.defined, &mut *budget);
                    if let Err((a, m)) = parse_defs(data, self.header.p, symbols) {
                        break Some(LogError::binary(file, start + a as u64, m));
                    }
                    pos = start + dlen;
                }
                ITEM_END => {
                    let fields = (|| {
                        Ok((
                            get(w, &mut at, "end marker: event count")?,
                            get(w, &mut at, "end marker: block count")?,
                        ))
                    })();
                    let (e, b) = match fields {
                        Ok(f) => f,
                        Err(ScanDamage::Eof) => break Some(cut("the end marker")),
                        Err(ScanDamage::Bad(a, m)) => break Some(bad(a, m)),
                    };
                    if (e, b) != (events, nblocks) {
                        break Some(bad(
                            0,
                            format!(
                                "end marker: counts {e} events in {b} blocks, but the log holds \
                                 {events} events in {nblocks} blocks"
                            ),
                        ));
                    }
                    let end = pos + at as u64;
                    if end != len {
                        break Some(LogError::binary(
                            file,
                            end,
                            format!("{} bytes follow the end marker", len - end),
                        ));
                    }
                    self.finished = true;
                    break None;
                }
                _ => {
                    break Some(bad(
                        0,
                        format!(
                            "unknown item tag 0x{tag:02x} (expected 'B' block, 'D' symbol \
                             definitions or 'E' end marker)"
                        ),
                    ));
                }
            }
        };
        self.tail = tail;
        Ok(())
    }
}

/// Reads windows of the log during the scan.
struct Scanner<'a> {
    source: &'a Source,
    len: u64,
    buf: Vec<u8>,
    /// Log offset of `buf[0]`; `buf[..valid]` holds the log's bytes from there.
    buf_off: u64,
    valid: usize,
}

/// The scan needs the headers of items and the payloads of definitions, not the payloads of
/// blocks (tens of KiB as the recorder writes them): a small window reads little else.
const SCAN_WINDOW: usize = 4 * 1024;

impl Scanner<'_> {
    /// Up to `want` bytes at `off` (fewer only at the end of the log).
    fn get(&mut self, off: u64, want: usize) -> io::Result<&[u8]> {
        let off = off.min(self.len);
        let n = (want as u64).min(self.len - off) as usize;
        match self.source {
            Source::Memory(bytes) => {
                let start = off as usize;
                Ok(bytes.get(start..start + n).unwrap_or(&[]))
            }
            Source::File(file) => {
                let have =
                    off >= self.buf_off && off + n as u64 <= self.buf_off + self.valid as u64;
                if !have {
                    let fill = (n.max(SCAN_WINDOW) as u64).min(self.len - off) as usize;
                    // Grown, never zeroed again: only `buf[..valid]` is read.
                    if self.buf.len() < fill {
                        self.buf.resize(fill, 0);
                    }
                    self.valid = 0;
                    read_at(file, off, self.buf.get_mut(..fill).unwrap_or(&mut []))?;
                    self.buf_off = off;
                    self.valid = fill;
                }
                let start = (off - self.buf_off) as usize;
                Ok(self.buf.get(start..start + n).unwrap_or(&[]))
            }
        }
    }
}

pub(crate) fn read_at(mut file: &File, off: u64, buf: &mut [u8]) -> io::Result<()> {
    file.seek(SeekFrom::Start(off))?;
    file.read_exact(buf)
}

/// Reads a varint of a structure (header, item header, definition).
fn get(data: &[u8], at: &mut usize, what: &str) -> Result<u64, ScanDamage> {
    varint::get(data, at).map_err(|e| match e {
        VarintError::Eof => ScanDamage::Eof,
        VarintError::Overflow => {
            ScanDamage::Bad(*at, format!("{what}: varint does not fit in 64 bits"))
        }
    })
}

/// Damage found while reading a structure: the data ends, or is wrong at a position of the
/// window.
enum ScanDamage {
    Eof,
    Bad(usize, String),
}

const NO_END: &str = "the log has no end marker: the run did not finish or the file was cut; what follows is missing";

/// Reads the definitions of one item into `symbols`; on damage, the position in `data` and
/// what is wrong.
fn parse_defs(
    data: &[u8],
    p: u32,
    (symbols, defined, budget): (&mut Symbols, &mut Defined, &mut SymbolBudget),
) -> Result<(), (usize, String)> {
    let mut at = 0;
    while at < data.len() {
        let start = at;
        let tag = data[at];
        at += 1;
        let field = |at: &mut usize, what: &str| {
            get(data, at, what).map_err(|d| match d {
                ScanDamage::Eof => (
                    start,
                    format!("{what}: the definition runs past the end of its item"),
                ),
                ScanDamage::Bad(_, m) => (start, m),
            })
        };
        match tag {
            DEF_NAME => {
                let id = field(&mut at, "name definition: id")?;
                if id != u64::from(defined.names) || defined.names == u32::MAX {
                    return Err((
                        start,
                        format!(
                            "name definition: id {id}, expected {} (ids are sequential)",
                            defined.names
                        ),
                    ));
                }
                let n = field(&mut at, "name definition: length")?;
                if n > (data.len() - at) as u64 {
                    return Err((
                        start,
                        format!("name definition {id}: {n} bytes run past the end of its item"),
                    ));
                }
                let bytes = &data[at..at + n as usize];
                at += n as usize;
                let name = std::str::from_utf8(bytes)
                    .map_err(|_| (start, format!("name definition {id}: not valid UTF-8")))?;
                if !is_name(name) {
                    return Err((
                        start,
                        format!("name definition {id}: '{}' is not a token", excerpt(name)),
                    ));
                }
                let sym = budget
                    .name(symbols, name)
                    .map_err(|m| (start, format!("name definition {id}: {m}")))?;
                if sym.0 != defined.names {
                    return Err((
                        start,
                        format!(
                            "name definition {id}: '{}' is already defined",
                            excerpt(name)
                        ),
                    ));
                }
                defined.names += 1;
            }
            DEF_TEAM => {
                let id = field(&mut at, "team definition: id")?;
                if id != u64::from(defined.teams) || defined.teams == u32::MAX {
                    return Err((
                        start,
                        format!(
                            "team definition: id {id}, expected {} (ids are sequential)",
                            defined.teams
                        ),
                    ));
                }
                let n = field(&mut at, "team definition: size")?;
                if n == 0 || n > u64::from(p) || n > (data.len() - at) as u64 {
                    return Err((
                        start,
                        format!("team definition {id}: size {n}, expected 1 to p={p} threads"),
                    ));
                }
                let mut team = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    let t = field(&mut at, "team definition: thread")?;
                    if t >= u64::from(p) || team.last().is_some_and(|&l| u64::from(l) >= t) {
                        return Err((
                            start,
                            format!(
                                "team definition {id}: thread {t} is not below p={p} or not in \
                                 increasing order"
                            ),
                        ));
                    }
                    team.push(t as u32);
                }
                let t = budget
                    .team(symbols, &team)
                    .map_err(|m| (start, format!("team definition {id}: {m}")))?;
                if t.0 != defined.teams {
                    return Err((
                        start,
                        format!("team definition {id}: the same team as team {}", t.0),
                    ));
                }
                defined.teams += 1;
            }
            _ => {
                return Err((
                    start,
                    format!("unknown definition tag 0x{tag:02x} (expected 0x01 name or 0x02 team)"),
                ));
            }
        }
    }
    Ok(())
}
