//! Crash-safe thread buffers (docs/event-log.md, "Crash-safe buffers").
//!
//! Each registered thread's buffer is a slot of `<log>.tmp.buffers`, a file mapped shared into
//! the process: an event is stored there and the slot's count of events is then updated with a
//! release store, so a program killed by any signal, `SIGKILL` included, leaves its last events
//! in the file (the kernel's page cache keeps what a dead process wrote into a shared mapping).
//! Names and teams, which a raw event holds as an address and an index, are written to
//! `<log>.tmp.names` (one `write` each, the first time each is used) before any event that
//! uses them is counted. `pp` reads both files beside a `.tmp` log ([`read`]) and completes
//! the log with the events that never reached it.
//!
//! `<log>.tmp.buffers`: a first page holding [`MAGIC`], the layout (bytes per event, events
//! per slot, bytes per slot) and the clock (its reading at time 0 and nanoseconds per tick,
//! 32.32 fixed point); then slots of `slot_bytes` each, page aligned: a 64-byte [`SlotHead`]
//! (in use, thread id, `base`: how many of the thread's events the log held before the
//! buffer's first, `committed`: events in the buffer) followed by the [`Raw`] events.
//!
//! `<log>.tmp.names`: records `N` (address u64, length u32, the bytes) and `T` (team index
//! u32, count u32, thread ids u32 each), native byte order.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::clock::Clock;
use crate::event::{Event, EventKind, Symbols, ThreadId};
use crate::raw::{ALL_THREADS, RAW_BYTES, Raw};

/// The first bytes of `<log>.tmp.buffers`.
pub const MAGIC: &[u8; 8] = b"ppbuf01\n";
/// Bytes of a slot's head.
const HEAD_BYTES: usize = 64;
/// Bytes of the file's first page (its header), and the alignment of slots.
const PAGE: usize = 4096;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The head of a slot, shared with whoever reads the file after a crash.
#[repr(C)]
struct SlotHead {
    /// 1 while a thread records into the slot, 0 when free.
    in_use: AtomicU32,
    thread: AtomicU32,
    /// How many events of the thread the log held before the buffer's first.
    base: AtomicU64,
    /// Events in the buffer, stored (release) after each event.
    committed: AtomicU64,
    pad: [u64; 5],
}

/// `<log>.tmp.buffers` and `<log>.tmp.names` beside a `.tmp` log.
pub fn paths(tmp: &Path) -> [PathBuf; 2] {
    let with = |suffix: &str| {
        let mut s = tmp.as_os_str().to_owned();
        s.push(suffix);
        PathBuf::from(s)
    };
    [with(".buffers"), with(".names")]
}

/// The buffers of a session: the mapped file when it could be made, else memory of the
/// process (the buffers then do not survive a crash).
pub(crate) struct Spill {
    file: Option<File>,
    names: Mutex<Names>,
    /// Free slots, and the number of slots the file has.
    slots: Mutex<(Vec<u32>, u32)>,
    cap: usize,
    slot_bytes: usize,
    paths: [PathBuf; 2],
}

struct Names {
    file: Option<File>,
    seen: HashSet<(usize, usize)>,
}

impl Spill {
    /// The buffers beside `tmp` for threads of `cap` events on `clock`; with `crash_safe`
    /// false, or when the files cannot be made, buffers in memory.
    pub(crate) fn create(tmp: &Path, cap: usize, clock: &Clock, crash_safe: bool) -> Spill {
        let slot_bytes = (HEAD_BYTES + cap * RAW_BYTES).div_ceil(PAGE) * PAGE;
        let paths = paths(tmp);
        let files = crash_safe
            .then(|| open_files(&paths, cap, slot_bytes, clock).ok())
            .flatten();
        let (file, names) = match files {
            Some((b, n)) => (Some(b), Some(n)),
            None => (None, None),
        };
        Spill {
            file,
            names: Mutex::new(Names {
                file: names,
                seen: HashSet::new(),
            }),
            slots: Mutex::new((Vec::new(), 0)),
            cap,
            slot_bytes,
            paths,
        }
    }

    /// A buffer for `thread`, whose log already holds `base` of its events.
    pub(crate) fn buffer(&self, thread: ThreadId, base: u64) -> Buffer {
        let buffer = self
            .mapped_slot()
            .unwrap_or_else(|| Buffer::heap(self.cap, self.slot_bytes));
        buffer.head().thread.store(thread, Ordering::Relaxed);
        buffer.set_base(base);
        buffer.commit(0);
        buffer.head().in_use.store(1, Ordering::Release);
        buffer
    }

    fn mapped_slot(&self) -> Option<Buffer> {
        let file = self.file.as_ref()?;
        let mut slots = lock(&self.slots);
        let (index, fresh) = match slots.0.pop() {
            Some(i) => (i, false),
            None => (slots.1, true),
        };
        let offset = PAGE + index as usize * self.slot_bytes;
        if fresh {
            use std::os::fd::AsRawFd;
            // Blocks reserved now, so that a full disk refuses the slot here rather than
            // raising SIGBUS when an event is stored.
            // SAFETY: posix_fallocate only extends the open file.
            let rc = unsafe {
                libc::posix_fallocate(
                    file.as_raw_fd(),
                    offset as libc::off_t,
                    self.slot_bytes as libc::off_t,
                )
            };
            if rc != 0 {
                return None;
            }
            slots.1 += 1;
        }
        match Buffer::map(file, offset, self.slot_bytes, self.cap, index) {
            Some(b) => Some(b),
            None => {
                slots.0.push(index);
                None
            }
        }
    }

    /// Gives a stopped thread's slot back (its events are in the log).
    pub(crate) fn release(&self, buffer: Buffer) {
        buffer.commit(0);
        buffer.head().in_use.store(0, Ordering::Release);
        if let Some(index) = buffer.slot {
            lock(&self.slots).0.push(index);
        }
    }

    /// Writes `name` to the names file unless it is there already. Cold: a thread calls it the
    /// first time it records an event with this name.
    #[cold]
    #[inline(never)]
    pub(crate) fn note_name(&self, name: &'static str) {
        let key = (name.as_ptr() as usize, name.len());
        let mut names = lock(&self.names);
        if names.file.is_none() || !names.seen.insert(key) {
            return;
        }
        let mut rec = Vec::with_capacity(13 + name.len());
        rec.push(b'N');
        rec.extend_from_slice(&(key.0 as u64).to_ne_bytes());
        rec.extend_from_slice(&(name.len() as u32).to_ne_bytes());
        rec.extend_from_slice(name.as_bytes());
        names.write(&rec);
    }

    /// Writes a team of the session's team table to the names file.
    pub(crate) fn note_team(&self, index: u32, threads: &[ThreadId]) {
        let mut names = lock(&self.names);
        if names.file.is_none() {
            return;
        }
        let mut rec = Vec::with_capacity(9 + 4 * threads.len());
        rec.push(b'T');
        rec.extend_from_slice(&index.to_ne_bytes());
        rec.extend_from_slice(&(threads.len() as u32).to_ne_bytes());
        for t in threads {
            rec.extend_from_slice(&t.to_ne_bytes());
        }
        names.write(&rec);
    }

    /// Removes both files: the log they belong to is complete.
    pub(crate) fn remove(&self) {
        if self.file.is_some() {
            for p in &self.paths {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

impl Names {
    fn write(&mut self, rec: &[u8]) {
        if let Some(f) = self.file.as_mut()
            && f.write_all(rec).is_err()
        {
            // A name that cannot be kept: the files no longer describe the buffers.
            self.file = None;
        }
    }
}

fn open_files(
    paths: &[PathBuf; 2],
    cap: usize,
    slot_bytes: usize,
    clock: &Clock,
) -> io::Result<(File, File)> {
    for p in paths {
        files::output::check(p).map_err(|e| io::Error::other(e.reason()))?;
    }
    let buffers = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&paths[0])?;
    let mut header = vec![0u8; PAGE];
    let fields: [u64; 5] = [
        RAW_BYTES as u64,
        cap as u64,
        slot_bytes as u64,
        clock.base(),
        clock.mult(),
    ];
    header[..8].copy_from_slice(MAGIC);
    for (i, v) in fields.iter().enumerate() {
        header[8 + 8 * i..16 + 8 * i].copy_from_slice(&v.to_ne_bytes());
    }
    buffers.write_all_at(&header, 0)?;
    let names = File::create(&paths[1])?;
    Ok((buffers, names))
}

/// One thread's buffer: a head and `cap` events, in a mapped slot or in memory.
pub(crate) struct Buffer {
    base: NonNull<u8>,
    bytes: usize,
    cap: usize,
    /// The slot index when mapped; `None` in memory.
    slot: Option<u32>,
    heap: Option<Box<[u64]>>,
}

impl Buffer {
    fn heap(cap: usize, slot_bytes: usize) -> Buffer {
        let mut heap = vec![0u64; slot_bytes / 8].into_boxed_slice();
        let base = NonNull::new(heap.as_mut_ptr().cast::<u8>()).unwrap_or(NonNull::dangling());
        Buffer {
            base,
            bytes: slot_bytes,
            cap,
            slot: None,
            heap: Some(heap),
        }
    }

    fn map(file: &File, offset: usize, bytes: usize, cap: usize, slot: u32) -> Option<Buffer> {
        use std::os::fd::AsRawFd;
        // SAFETY: maps `bytes` of the open file at a page-aligned offset that posix_fallocate
        // made part of the file; the mapping is unmapped on drop.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        Some(Buffer {
            base: NonNull::new(p.cast::<u8>())?,
            bytes,
            cap,
            slot: Some(slot),
            heap: None,
        })
    }

    fn head(&self) -> &SlotHead {
        // SAFETY: the first 64 bytes of the slot, 8-aligned, are a SlotHead of atomics.
        unsafe { &*self.base.as_ptr().cast::<SlotHead>() }
    }

    #[inline(always)]
    fn raws(&self) -> *mut Raw {
        // SAFETY: the events follow the head inside the slot.
        unsafe { self.base.as_ptr().add(HEAD_BYTES).cast::<Raw>() }
    }

    /// Events the buffer holds.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Stores event `i` (below `cap`), not yet counted.
    #[inline(always)]
    pub(crate) fn put(&mut self, i: usize, raw: Raw) {
        debug_assert!(i < self.cap);
        // SAFETY: i < cap, and the slot holds cap events after its head.
        unsafe { self.raws().add(i).write(raw) }
    }

    /// Counts the first `n` events as recorded (release: they are stored before the count).
    #[inline(always)]
    pub(crate) fn commit(&self, n: usize) {
        self.head().committed.store(n as u64, Ordering::Release);
    }

    /// Records that the log holds `base` of the thread's events before the buffer's first.
    pub(crate) fn set_base(&self, base: u64) {
        self.head().base.store(base, Ordering::Release);
    }

    /// The first `n` events (`n` at most `cap`).
    pub(crate) fn events(&self, n: usize) -> &[Raw] {
        // SAFETY: the first n ≤ cap events were stored by `put`.
        unsafe { std::slice::from_raw_parts(self.raws(), n.min(self.cap)) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.heap.is_none() {
            // SAFETY: unmaps the mapping `map` made; nothing refers to it after drop.
            unsafe { libc::munmap(self.base.as_ptr().cast(), self.bytes) };
        }
    }
}

/// What a crashed run's buffers held that its log may lack.
#[derive(Debug, Default)]
pub struct Spilled {
    /// The names and teams the events refer to.
    pub symbols: Symbols,
    /// Each buffer in use, in slot order.
    pub threads: Vec<SpilledThread>,
}

/// One thread's buffer.
#[derive(Debug)]
pub struct SpilledThread {
    /// The thread.
    pub thread: ThreadId,
    /// How many of the thread's events the log held before the buffer's first.
    pub base: u64,
    /// The buffer's events, in order, in nanoseconds since the run's start. An event whose
    /// name is missing from the names file, or that cannot be decoded, ends the list.
    pub events: Vec<Event>,
}

/// Reads the buffers a run left beside its `.tmp` log: `Ok(None)` when there are none.
/// Errors name the file and what is wrong with it.
pub fn read(tmp: &Path) -> io::Result<Option<Spilled>> {
    let [buffers, names] = paths(tmp);
    match std::fs::metadata(&buffers) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(named(&buffers, "not a regular file".into())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(named(&buffers, e.to_string())),
    }
    let file = File::open(&buffers).map_err(|e| named(&buffers, e.to_string()))?;
    let len = file.metadata()?.len();
    let mut header = [0u8; 48];
    file.read_exact_at(&mut header, 0)
        .map_err(|_| named(&buffers, "shorter than its header".into()))?;
    if &header[..8] != MAGIC {
        return Err(named(&buffers, "not a pp buffers file".into()));
    }
    let field = |i: usize| u64::from_ne_bytes(header[8 + 8 * i..16 + 8 * i].try_into().unwrap());
    let (raw_bytes, cap, slot_bytes, clock_base, mult) =
        (field(0), field(1), field(2), field(3), field(4));
    if raw_bytes != RAW_BYTES as u64
        || slot_bytes < HEAD_BYTES as u64
        || cap > (slot_bytes - HEAD_BYTES as u64) / RAW_BYTES as u64
    {
        return Err(named(&buffers, "its layout is not this pp's".into()));
    }
    let clock = Clock::from_parts(clock_base, mult);
    let (mut symbols, names, teams) = read_names(&names)?;
    let mut threads = Vec::new();
    let slots = len.saturating_sub(PAGE as u64) / slot_bytes;
    for i in 0..slots {
        let offset = PAGE as u64 + i * slot_bytes;
        let mut head = [0u8; 32];
        file.read_exact_at(&mut head, offset)?;
        let word = |i: usize| u64::from_ne_bytes(head[i..i + 8].try_into().unwrap());
        let in_use = u32::from_ne_bytes(head[..4].try_into().unwrap());
        if in_use != 1 {
            continue;
        }
        let thread = u32::from_ne_bytes(head[4..8].try_into().unwrap());
        let (base, committed) = (word(8), word(16).min(cap));
        let mut bytes = vec![0u8; committed as usize * RAW_BYTES];
        file.read_exact_at(&mut bytes, offset + HEAD_BYTES as u64)?;
        let mut events = Vec::with_capacity(committed as usize);
        for chunk in bytes.chunks_exact(RAW_BYTES) {
            let raw = Raw::from_bytes(chunk.try_into().unwrap_or(&[0; RAW_BYTES]));
            let Some(kind) = decode(&raw, &names, &teams, &mut symbols) else {
                break;
            };
            events.push(Event {
                t: clock.to_ns(raw.ticks),
                thread,
                kind,
            });
        }
        threads.push(SpilledThread {
            thread,
            base,
            events,
        });
    }
    Ok(Some(Spilled { symbols, threads }))
}

fn named(path: &Path, why: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {why}", path.display()),
    )
}

/// The longest names file read: the log's own bounds on names and teams (4 MiB in all,
/// docs/event-log.md, "Limits") with room for the records' own bytes.
const MAX_NAMES_BYTES: u64 = 64 << 20;

type NameTable = HashMap<(u64, u32), String>;
type TeamTable = HashMap<u32, Vec<ThreadId>>;

/// The names and teams of the names file (a record cut short at its end is left out).
fn read_names(path: &Path) -> io::Result<(Symbols, NameTable, TeamTable)> {
    let bytes = match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => return Err(named(path, "not a regular file".into())),
        Ok(m) if m.len() > MAX_NAMES_BYTES => {
            return Err(named(
                path,
                format!("longer than {MAX_NAMES_BYTES} bytes: not a pp names file"),
            ));
        }
        Ok(_) => std::fs::read(path).map_err(|e| named(path, e.to_string()))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(named(path, e.to_string())),
    };
    let (mut names, mut teams) = (HashMap::new(), HashMap::new());
    let mut at = 0;
    let u32_at = |i: usize| {
        bytes
            .get(i..i + 4)
            .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
    };
    while at < bytes.len() {
        match bytes[at] {
            b'N' => {
                let (Some(addr), Some(len)) = (
                    bytes
                        .get(at + 1..at + 9)
                        .map(|b| u64::from_ne_bytes(b.try_into().unwrap())),
                    u32_at(at + 9),
                ) else {
                    break;
                };
                let Some(text) = bytes.get(at + 13..at + 13 + len as usize) else {
                    break;
                };
                names.insert(
                    (addr, len),
                    crate::log_file::sanitize(&String::from_utf8_lossy(text)),
                );
                at += 13 + len as usize;
            }
            b'T' => {
                let (Some(index), Some(n)) = (u32_at(at + 1), u32_at(at + 5)) else {
                    break;
                };
                let end = at + 9 + 4 * n as usize;
                if end > bytes.len() {
                    break;
                }
                let threads = (0..n as usize)
                    .filter_map(|k| u32_at(at + 9 + 4 * k))
                    .collect();
                teams.insert(index, threads);
                at = end;
            }
            _ => return Err(named(path, format!("unknown record at byte {at}"))),
        }
    }
    Ok((Symbols::default(), names, teams))
}

/// An event of the buffers with its names and team interned into `symbols`; `None` when it
/// cannot be decoded or names something the names file lacks.
fn decode(
    raw: &Raw,
    names: &NameTable,
    teams: &TeamTable,
    symbols: &mut Symbols,
) -> Option<EventKind> {
    use crate::raw::{HAS_BY, HAS_DELAY, HAS_NAME, tag};
    let mut name = || -> Option<Option<crate::event::Sym>> {
        if raw.flags & HAS_NAME == 0 {
            return Some(None);
        }
        names
            .get(&(raw.b, raw.len))
            .map(|n| Some(symbols.intern(n)))
    };
    Some(match raw.tag {
        tag::START => EventKind::Start,
        tag::STOP => EventKind::Stop,
        tag::REGION_BEGIN => {
            let n = name()??;
            let team = match raw.d {
                ALL_THREADS => None,
                i => Some(symbols.intern_team(teams.get(&i)?)),
            };
            EventKind::RegionBegin {
                id: raw.a,
                name: n,
                team,
            }
        }
        tag::REGION_END => EventKind::RegionEnd { id: raw.a },
        tag::WORK_BEGIN => EventKind::WorkBegin { label: name()? },
        tag::WORK_END => EventKind::WorkEnd { label: name()? },
        tag::WAIT_BEGIN => EventKind::WaitBegin {
            kind: raw.wait_kind(),
            object: name()?,
        },
        tag::WAIT_END => EventKind::WaitEnd {
            kind: raw.wait_kind(),
            object: name()?,
            by: (raw.flags & HAS_BY != 0).then_some(raw.d),
        },
        tag::RELEASE => EventKind::Release {
            kind: raw.wait_kind(),
            object: name()?,
        },
        tag::COMM_BEGIN => EventKind::CommBegin { bytes: raw.a },
        tag::COMM_END => EventKind::CommEnd { bytes: raw.a },
        tag::CPU => EventKind::Cpu {
            thread_cpu_ns: raw.a,
            run_delay_ns: (raw.flags & HAS_DELAY != 0).then_some(raw.b),
        },
        tag::PHASE => EventKind::Phase { name: name()?? },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::WaitKind;
    use crate::{Session, thread_start, thread_stop};

    /// One session at a time in a process: the tests that start one take this first.
    static ONE_SESSION: Mutex<()> = Mutex::new(());

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pp-spill-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The buffers of a live session, read as `pp` reads a dead one's: what the log lacks.
    #[test]
    fn the_buffers_hold_every_event_not_yet_in_the_log() {
        let _one = lock(&ONE_SESSION);
        let d = dir("live");
        let session = Session::builder(2)
            .path(d.join("pp.log"))
            .buffer_events(4)
            .start()
            .unwrap();
        let tmp = session.tmp_path().to_path_buf();
        std::thread::scope(|s| {
            s.spawn(|| {
                thread_start(1);
                for _ in 0..3 {
                    let _w = crate::work("step");
                }
                {
                    let _r = crate::region_with_team("pair", &[0, 1]);
                    let _w = crate::wait(WaitKind::Lock, Some("m"));
                }
                // 2 (start, cpu) + 6 + 2 (region begin, cpu) + 2 (wait) = 12 events so far:
                // three blocks of 4 written, then the region's cpu sample and region_end.
                crate::phase("tail");
                let spilled = read(&tmp).unwrap().expect("the buffers file");
                let mine: Vec<_> = spilled.threads.iter().filter(|t| t.thread == 1).collect();
                assert_eq!(mine.len(), 1);
                let t = mine[0];
                assert_eq!(t.base, 12);
                let sym = |e: &Event| match e.kind {
                    EventKind::Phase { name } => spilled.symbols.name(name).to_string(),
                    EventKind::Cpu { .. } => "cpu".into(),
                    EventKind::RegionEnd { .. } => "region_end".into(),
                    k => format!("{k:?}"),
                };
                let names: Vec<String> = t.events.iter().map(sym).collect();
                assert_eq!(names, ["cpu", "region_end", "tail"]);
                assert!(t.events.windows(2).all(|w| w[0].t <= w[1].t));
                thread_stop();
            });
        });
        let spilled = read(&tmp).unwrap().unwrap();
        assert!(
            spilled.threads.is_empty(),
            "a stopped thread's slot is free"
        );
        session.finish().unwrap();
        assert!(
            read(&tmp).unwrap().is_none(),
            "finishing removes the buffers"
        );
        assert!(!paths(&tmp)[1].exists());
    }

    #[test]
    fn teams_and_names_reach_the_names_file_before_their_events() {
        let _one = lock(&ONE_SESSION);
        let d = dir("names");
        let session = Session::builder(3).path(d.join("pp.log")).start().unwrap();
        let tmp = session.tmp_path().to_path_buf();
        thread_start(0);
        let label = crate::name(&format!("dyn{}", 7));
        let _r = crate::region_with_team("team", &[2, 0]);
        let _w = crate::work(label);
        let spilled = read(&tmp).unwrap().unwrap();
        let t = &spilled.threads[0];
        let region = t
            .events
            .iter()
            .find_map(|e| match e.kind {
                EventKind::RegionBegin { name, team, .. } => Some((name, team)),
                _ => None,
            })
            .unwrap();
        assert_eq!(spilled.symbols.name(region.0), "team");
        assert_eq!(spilled.symbols.team(region.1.unwrap()), [0, 2]);
        assert!(matches!(
            t.events.last().unwrap().kind,
            EventKind::WorkBegin { label: Some(l) } if spilled.symbols.name(l) == "dyn7"
        ));
        drop(_w);
        drop(_r);
        thread_stop();
        session.finish().unwrap();
    }

    #[test]
    fn without_crash_safety_no_files_are_made() {
        let _one = lock(&ONE_SESSION);
        let d = dir("off");
        let session = Session::builder(1)
            .path(d.join("pp.log"))
            .crash_safe(false)
            .start()
            .unwrap();
        thread_start(0);
        let _w = crate::work("x");
        assert!(read(session.tmp_path()).unwrap().is_none());
        drop(_w);
        thread_stop();
        assert!(session.finish().unwrap().events >= 4);
    }

    #[test]
    fn a_file_that_is_not_a_buffers_file_is_refused_by_name() {
        let d = dir("bad");
        let tmp = d.join("pp.log.tmp");
        std::fs::write(
            &paths(&tmp)[0],
            b"garbage, not buffers: long enough for the header....",
        )
        .unwrap();
        let e = read(&tmp).unwrap_err().to_string();
        assert!(
            e.ends_with("pp.log.tmp.buffers: not a pp buffers file"),
            "{e}"
        );
        std::fs::write(&paths(&tmp)[0], b"short").unwrap();
        let e = read(&tmp).unwrap_err().to_string();
        assert!(e.ends_with("shorter than its header"), "{e}");
        std::fs::remove_file(&paths(&tmp)[0]).unwrap();
        std::fs::create_dir(&paths(&tmp)[0]).unwrap();
        let e = read(&tmp).unwrap_err().to_string();
        assert!(e.ends_with("pp.log.tmp.buffers: not a regular file"), "{e}");
    }
}
