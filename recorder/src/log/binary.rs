//! The binary encoding: its layout, constants and the encoding of records, shared by
//! [`super::BinaryWriter`] and the reader (`pp::log`, which decodes).
//!
//! # Layout (version 1)
//!
//! All integers are unsigned LEB128 varints (7 bits per byte, least significant group first,
//! high bit set on every byte but the last; at most 10 bytes for 64 bits) unless said otherwise.
//! "zigzag" marks a signed difference `d` stored as the varint `(d << 1) ^ (d >> 63)`; such
//! differences wrap modulo 2⁶⁴, so every `u64` value round-trips.
//!
//! ```text
//! log      = header item* end
//! header   = "PPLOG" 0x00  version:u8(=1)  p:varint(1..=2^32-1)  nparams:varint
//!            nparams * ( keylen:varint key:utf8  vallen:varint value:utf8 )
//! item     = block | defs
//! block    = 'B'(0x42) thread:varint count:varint len:varint first_t:varint  payload[len]
//!            payload = count records; 1 <= count; 2*count <= len <= 1 MiB; thread < p
//! defs     = 'D'(0x44) len:varint  payload[len] (len <= 1 MiB), payload = def*
//! def      = 0x01 id:varint n:varint name[n]          (a name, UTF-8, a token)
//!          | 0x02 id:varint n:varint thread[n]:varint (a team: 1 <= n, strictly increasing, < p)
//! end      = 'E'(0x45) events:varint blocks:varint, and then the end of the file
//! record   = tag:u8 dt:varint args
//! ```
//!
//! Names and teams are numbered from 0 in order of definition, separately: a definition's `id`
//! must equal the number of names (teams) defined before it, and a name or team is defined
//! once. The writer emits a `defs` item before the first block that references an undefined id.
//! `events` and `blocks` of the end marker count every record and block of the log; a log
//! without its end marker (crash, cut) is read up to the damage and reported as unfinished.
//!
//! Blocks of different threads appear in flush order, not in global time order; blocks of one
//! thread appear in time order. Each block is self-contained: decoding starts with the state
//! `t = first_t`, `region = 0`, `cpu = 0`. A record's time is `t += dt` (so `dt` of the first
//! record is 0 when `first_t` is its time); times never decrease within a thread, also across
//! its blocks. (`delay` also starts at 0 in each block.) The record tags and their arguments:
//!
//! | tag | event | args |
//! |---|---|---|
//! | `0x01` | `start` | |
//! | `0x02` | `stop` | |
//! | `0x03` | `region_begin` | `id:zigzag(id - region)` `name:varint` — then `region = id` |
//! | `0x04` | `region_begin` with team | as `0x03`, then `team:varint` |
//! | `0x05` | `region_end` | `id:zigzag(id - region)` — then `region = id` |
//! | `0x06` / `0x07` | `work_begin` / with label | — / `label:varint` |
//! | `0x08` / `0x09` | `work_end` / with label | — / `label:varint` |
//! | `0x0A` | `comm_begin` | `bytes:varint` |
//! | `0x0B` | `comm_end` | `bytes:varint` |
//! | `0x0C` | `cpu` | `zigzag(thread_cpu_ns - cpu)` — then `cpu = thread_cpu_ns` |
//! | `0x0E` | `cpu` with run delay | as `0x0C`, then `zigzag(run_delay_ns - delay)` — then `delay = run_delay_ns` |
//! | `0x0D` | `phase` | `name:varint` |
//! | `0x10 + k` / `0x18 + k` | `wait_begin` kind `k` / with object | — / `object:varint` |
//! | `0x20 + k` / `0x28 + k` | `wait_end` kind `k` / with object | — / `object:varint` |
//! | `0x38 + k` / `0x40 + k` | `wait_end` kind `k` with its cause / and object | `by:varint` / `object:varint` `by:varint` |
//! | `0x48 + k` / `0x50 + k` | `release` kind `k` / with object | — / `object:varint` |
//!
//! Wait kinds `k`: 0 `lock`, 1 `barrier`, 2 `cond`, 3 `recv`, 4 `send`, 5 `other`
//! ([`WaitKind::ALL`] order). Every other tag is invalid (in particular `0x00`).

use super::varint;
use crate::event::{EventKind, Sym, WaitKind};

/// The first bytes of every binary log.
pub const MAGIC: &[u8; 6] = b"PPLOG\0";
/// The version of the layout written after [`MAGIC`].
pub const VERSION: u8 = 1;
/// The largest payload of a block or definitions item, in bytes.
pub const MAX_CHUNK: usize = 1 << 20;

/// Item tag of a block.
pub const ITEM_BLOCK: u8 = b'B';
/// Item tag of symbol definitions.
pub const ITEM_DEFS: u8 = b'D';
/// Item tag of the end marker.
pub const ITEM_END: u8 = b'E';
/// Definition tag of a name.
pub const DEF_NAME: u8 = 0x01;
/// Definition tag of a team.
pub const DEF_TEAM: u8 = 0x02;

/// The longest record: tag, dt, region id, name, team.
pub const MAX_RECORD: usize = 1 + 10 + 5 + 5 + 10 + 5;

/// Record tag of `start`.
pub const T_START: u8 = 0x01;
/// Record tag of `stop`.
pub const T_STOP: u8 = 0x02;
/// Record tag of `region_begin`.
pub const T_REGION_BEGIN: u8 = 0x03;
/// Record tag of `region_begin` with a team.
pub const T_REGION_BEGIN_TEAM: u8 = 0x04;
/// Record tag of `region_end`.
pub const T_REGION_END: u8 = 0x05;
/// Record tag of `work_begin`.
pub const T_WORK_BEGIN: u8 = 0x06;
/// Record tag of `work_begin` with a label.
pub const T_WORK_BEGIN_LABEL: u8 = 0x07;
/// Record tag of `work_end`.
pub const T_WORK_END: u8 = 0x08;
/// Record tag of `work_end` with a label.
pub const T_WORK_END_LABEL: u8 = 0x09;
/// Record tag of `comm_begin`.
pub const T_COMM_BEGIN: u8 = 0x0A;
/// Record tag of `comm_end`.
pub const T_COMM_END: u8 = 0x0B;
/// Record tag of `cpu`.
pub const T_CPU: u8 = 0x0C;
/// Record tag of `phase`.
pub const T_PHASE: u8 = 0x0D;
/// Record tag of `cpu` with a run-queue delay.
pub const T_CPU_DELAY: u8 = 0x0E;
/// Record tag of `send`.
pub const T_SEND: u8 = 0x30;
/// Record tag of `recv`.
pub const T_RECV: u8 = 0x31;
/// Record tag of `coll`.
pub const T_COLL: u8 = 0x32;
/// Added to the tags of `send`, `recv` and `coll` when a communicator follows.
pub const WITH_COMM: u8 = 0x04;
/// Record tag of `wait_begin` of kind `k`: this plus `k`.
pub const T_WAIT_BEGIN: u8 = 0x10;
/// Record tag of `wait_begin` of kind `k` with an object: this plus `k`.
pub const T_WAIT_BEGIN_OBJECT: u8 = 0x18;
/// Record tag of `wait_end` of kind `k`: this plus `k`.
pub const T_WAIT_END: u8 = 0x20;
/// Record tag of `wait_end` of kind `k` with an object: this plus `k`.
pub const T_WAIT_END_OBJECT: u8 = 0x28;
/// `wait_end` with its cause (`by=<thread>`): `0x38 + k`, and with an object `0x40 + k`.
pub const T_WAIT_END_BY: u8 = 0x38;
/// Record tag base of `wait_end` with its cause and an object (see [`T_WAIT_END_BY`]).
pub const T_WAIT_END_OBJECT_BY: u8 = 0x40;
/// Record tag of `release` of kind `k`: this plus `k`.
pub const T_RELEASE: u8 = 0x48;
/// Record tag of `release` of kind `k` with an object: this plus `k`.
pub const T_RELEASE_OBJECT: u8 = 0x50;

/// The decoding (and encoding) state of one block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockState {
    /// Time of the previous record (the block's first time before any).
    pub t: u64,
    /// Id of the previous region record.
    pub region: u64,
    /// Thread CPU time of the previous `cpu` record.
    pub cpu: u64,
    /// Run-queue delay of the previous `cpu` record that had one.
    pub delay: u64,
}

impl BlockState {
    /// The state at the start of a block whose first record is at `first_t`.
    pub fn new(first_t: u64) -> BlockState {
        BlockState {
            t: first_t,
            region: 0,
            cpu: 0,
            delay: 0,
        }
    }
}

fn wait_code(kind: WaitKind) -> u8 {
    match kind {
        WaitKind::Lock => 0,
        WaitKind::Barrier => 1,
        WaitKind::Cond => 2,
        WaitKind::Recv => 3,
        WaitKind::Send => 4,
        WaitKind::Other => 5,
    }
}

/// Appends the record of an event at time `t >= st.t` and updates the state.
#[inline]
pub fn encode_record(buf: &mut Vec<u8>, st: &mut BlockState, t: u64, kind: &EventKind) {
    debug_assert!(t >= st.t);
    let dt = t - st.t;
    st.t = t;
    let opt = |base: u8, with: u8, s: Option<Sym>| match s {
        None => (base, None),
        Some(s) => (with, Some(s.0)),
    };
    let (tag, sym) = match *kind {
        EventKind::Start => (T_START, None),
        EventKind::Stop => (T_STOP, None),
        EventKind::RegionBegin { team: None, .. } => (T_REGION_BEGIN, None),
        EventKind::RegionBegin { team: Some(_), .. } => (T_REGION_BEGIN_TEAM, None),
        EventKind::RegionEnd { .. } => (T_REGION_END, None),
        EventKind::WorkBegin { label } => opt(T_WORK_BEGIN, T_WORK_BEGIN_LABEL, label),
        EventKind::WorkEnd { label } => opt(T_WORK_END, T_WORK_END_LABEL, label),
        EventKind::WaitBegin { kind, object } => {
            let k = wait_code(kind);
            opt(T_WAIT_BEGIN + k, T_WAIT_BEGIN_OBJECT + k, object)
        }
        EventKind::WaitEnd {
            kind,
            object,
            by: None,
        } => {
            let k = wait_code(kind);
            opt(T_WAIT_END + k, T_WAIT_END_OBJECT + k, object)
        }
        EventKind::WaitEnd {
            kind,
            object,
            by: Some(_),
        } => {
            let k = wait_code(kind);
            opt(T_WAIT_END_BY + k, T_WAIT_END_OBJECT_BY + k, object)
        }
        EventKind::Release { kind, object } => {
            let k = wait_code(kind);
            opt(T_RELEASE + k, T_RELEASE_OBJECT + k, object)
        }
        EventKind::CommBegin { .. } => (T_COMM_BEGIN, None),
        EventKind::CommEnd { .. } => (T_COMM_END, None),
        EventKind::Cpu {
            run_delay_ns: None, ..
        } => (T_CPU, None),
        EventKind::Cpu {
            run_delay_ns: Some(_),
            ..
        } => (T_CPU_DELAY, None),
        EventKind::Phase { name } => (T_PHASE, Some(name.0)),
        EventKind::Send { comm, .. } => opt(T_SEND, T_SEND + WITH_COMM, comm),
        EventKind::Recv { comm, .. } => opt(T_RECV, T_RECV + WITH_COMM, comm),
        EventKind::Coll { comm, .. } => opt(T_COLL, T_COLL + WITH_COMM, comm),
    };
    buf.push(tag);
    varint::put(buf, dt);
    match *kind {
        EventKind::RegionBegin { id, name, team } => {
            varint::put(buf, varint::zigzag(id.wrapping_sub(st.region) as i64));
            st.region = id;
            varint::put(buf, u64::from(name.0));
            if let Some(team) = team {
                varint::put(buf, u64::from(team.0));
            }
        }
        EventKind::RegionEnd { id } => {
            varint::put(buf, varint::zigzag(id.wrapping_sub(st.region) as i64));
            st.region = id;
        }
        EventKind::CommBegin { bytes } | EventKind::CommEnd { bytes } => varint::put(buf, bytes),
        EventKind::Cpu {
            thread_cpu_ns,
            run_delay_ns,
        } => {
            varint::put(
                buf,
                varint::zigzag(thread_cpu_ns.wrapping_sub(st.cpu) as i64),
            );
            st.cpu = thread_cpu_ns;
            if let Some(delay) = run_delay_ns {
                varint::put(buf, varint::zigzag(delay.wrapping_sub(st.delay) as i64));
                st.delay = delay;
            }
        }
        EventKind::Send {
            peer, tag, bytes, ..
        }
        | EventKind::Recv {
            peer, tag, bytes, ..
        } => {
            varint::put(buf, u64::from(peer));
            varint::put(buf, u64::from(tag));
            varint::put(buf, bytes);
            if let Some(s) = sym {
                varint::put(buf, u64::from(s));
            }
        }
        EventKind::Coll {
            op, bytes, root, ..
        } => {
            varint::put(buf, u64::from(op.0));
            varint::put(buf, bytes);
            varint::put(buf, root.map_or(0, |r| u64::from(r) + 1));
            if let Some(s) = sym {
                varint::put(buf, u64::from(s));
            }
        }
        _ => {
            if let Some(s) = sym {
                varint::put(buf, u64::from(s));
            }
            if let EventKind::WaitEnd { by: Some(by), .. } = *kind {
                varint::put(buf, u64::from(by));
            }
        }
    }
}

/// The name ids (up to two) and the team id an event references (a block that holds it needs
/// them defined before it).
pub fn references(kind: &EventKind) -> ([Option<u32>; 2], Option<u32>) {
    let one = |s: Option<crate::event::Sym>| [s.map(|s| s.0), None];
    match *kind {
        EventKind::RegionBegin { name, team, .. } => (one(Some(name)), team.map(|t| t.0)),
        EventKind::WorkBegin { label } | EventKind::WorkEnd { label } => (one(label), None),
        EventKind::WaitBegin { object, .. }
        | EventKind::WaitEnd { object, .. }
        | EventKind::Release { object, .. } => (one(object), None),
        EventKind::Phase { name } => (one(Some(name)), None),
        EventKind::Send { comm, .. } | EventKind::Recv { comm, .. } => (one(comm), None),
        EventKind::Coll { op, comm, .. } => ([Some(op.0), comm.map(|s| s.0)], None),
        _ => ([None, None], None),
    }
}
