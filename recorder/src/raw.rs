//! The raw events of the hot path: what a thread's buffer holds until it is written, with
//! names as `&'static str` and teams as an index into the session's team table.
//!
//! A [`Raw`] has a fixed `repr(C)` layout of plain integers, because the buffers live in a
//! file that `pp` reads back after a crash ([`crate::spill`], docs/event-log.md, "Crash-safe
//! buffers"): the layout is part of that file's format.

use crate::event::{ThreadId, WaitKind};

/// Region team index meaning "all `p` threads".
pub(crate) const ALL_THREADS: u32 = u32::MAX;

/// What happened, as recorded on the hot path: names are `&'static str` (interned into the
/// log's symbol table only at flush), teams an index into the session's team table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawKind {
    Start,
    Stop,
    RegionBegin {
        id: u64,
        name: &'static str,
        /// [`ALL_THREADS`] or an index into the session's team table.
        team: u32,
    },
    RegionEnd {
        id: u64,
    },
    WorkBegin(Option<&'static str>),
    WorkEnd(Option<&'static str>),
    WaitBegin(WaitKind, Option<&'static str>),
    /// Kind, object and the thread that ended the wait, where known.
    WaitEnd(WaitKind, Option<&'static str>, Option<ThreadId>),
    /// Kind and object released (an unlock, a notify).
    Release(WaitKind, Option<&'static str>),
    CommBegin(u64),
    CommEnd(u64),
    /// Thread CPU time and run-queue delay.
    Cpu(u64, Option<u64>),
    Phase(&'static str),
}

impl RawKind {
    /// The name the event carries, if any.
    #[inline(always)]
    pub(crate) fn name(self) -> Option<&'static str> {
        match self {
            RawKind::RegionBegin { name, .. } | RawKind::Phase(name) => Some(name),
            RawKind::WorkBegin(label) | RawKind::WorkEnd(label) => label,
            RawKind::WaitBegin(_, object)
            | RawKind::WaitEnd(_, object, _)
            | RawKind::Release(_, object) => object,
            _ => None,
        }
    }
}

/// The tags of [`Raw::tag`] (0 is no event).
pub(crate) mod tag {
    pub(crate) const START: u8 = 1;
    pub(crate) const STOP: u8 = 2;
    pub(crate) const REGION_BEGIN: u8 = 3;
    pub(crate) const REGION_END: u8 = 4;
    pub(crate) const WORK_BEGIN: u8 = 5;
    pub(crate) const WORK_END: u8 = 6;
    pub(crate) const WAIT_BEGIN: u8 = 7;
    pub(crate) const WAIT_END: u8 = 8;
    pub(crate) const COMM_BEGIN: u8 = 9;
    pub(crate) const COMM_END: u8 = 10;
    pub(crate) const CPU: u8 = 11;
    pub(crate) const PHASE: u8 = 12;
    pub(crate) const RELEASE: u8 = 13;
}

/// [`Raw::flags`]: the name is present.
pub(crate) const HAS_NAME: u8 = 1;
/// [`Raw::flags`]: `d` (the `by=` thread) is present.
pub(crate) const HAS_BY: u8 = 2;
/// [`Raw::flags`]: `b` (the run-queue delay) is present.
pub(crate) const HAS_DELAY: u8 = 4;

/// A raw event (40 bytes, native byte order): clock ticks and what happened.
///
/// | field | bytes | holds |
/// |---|---|---|
/// | `ticks` | 0..8 | the timestamp clock's reading |
/// | `a` | 8..16 | region id, byte count, thread CPU time |
/// | `b` | 16..24 | the name's address, or the run-queue delay |
/// | `len` | 24..28 | the name's length in bytes |
/// | `d` | 28..32 | region team index, `by=` thread |
/// | `tag` | 32 | which event ([`tag`]) |
/// | `wait` | 33 | wait kind, its index in [`WaitKind::ALL`] |
/// | `flags` | 34 | [`HAS_NAME`], [`HAS_BY`], [`HAS_DELAY`] |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Raw {
    pub(crate) ticks: u64,
    pub(crate) a: u64,
    pub(crate) b: u64,
    pub(crate) len: u32,
    pub(crate) d: u32,
    pub(crate) tag: u8,
    pub(crate) wait: u8,
    pub(crate) flags: u8,
    pub(crate) pad: [u8; 5],
}

/// Bytes of a [`Raw`].
pub(crate) const RAW_BYTES: usize = 40;

fn wait_code(kind: WaitKind) -> u8 {
    WaitKind::ALL.iter().position(|&k| k == kind).unwrap_or(5) as u8
}

impl Raw {
    /// Encodes `kind` at `ticks`.
    #[inline(always)]
    pub(crate) fn new(ticks: u64, kind: RawKind) -> Raw {
        let mut r = Raw {
            ticks,
            a: 0,
            b: 0,
            len: 0,
            d: 0,
            tag: 0,
            wait: 0,
            flags: 0,
            pad: [0; 5],
        };
        let name = |r: &mut Raw, s: Option<&'static str>| {
            if let Some(s) = s {
                r.b = s.as_ptr() as u64;
                r.len = s.len() as u32;
                r.flags |= HAS_NAME;
            }
        };
        match kind {
            RawKind::Start => r.tag = tag::START,
            RawKind::Stop => r.tag = tag::STOP,
            RawKind::RegionBegin { id, name: n, team } => {
                r.tag = tag::REGION_BEGIN;
                r.a = id;
                r.d = team;
                name(&mut r, Some(n));
            }
            RawKind::RegionEnd { id } => {
                r.tag = tag::REGION_END;
                r.a = id;
            }
            RawKind::WorkBegin(label) => {
                r.tag = tag::WORK_BEGIN;
                name(&mut r, label);
            }
            RawKind::WorkEnd(label) => {
                r.tag = tag::WORK_END;
                name(&mut r, label);
            }
            RawKind::WaitBegin(kind, object) => {
                r.tag = tag::WAIT_BEGIN;
                r.wait = wait_code(kind);
                name(&mut r, object);
            }
            RawKind::WaitEnd(kind, object, by) => {
                r.tag = tag::WAIT_END;
                r.wait = wait_code(kind);
                name(&mut r, object);
                if let Some(by) = by {
                    r.d = by;
                    r.flags |= HAS_BY;
                }
            }
            RawKind::Release(kind, object) => {
                r.tag = tag::RELEASE;
                r.wait = wait_code(kind);
                name(&mut r, object);
            }
            RawKind::CommBegin(bytes) => {
                r.tag = tag::COMM_BEGIN;
                r.a = bytes;
            }
            RawKind::CommEnd(bytes) => {
                r.tag = tag::COMM_END;
                r.a = bytes;
            }
            RawKind::Cpu(cpu, delay) => {
                r.tag = tag::CPU;
                r.a = cpu;
                if let Some(delay) = delay {
                    r.b = delay;
                    r.flags |= HAS_DELAY;
                }
            }
            RawKind::Phase(n) => {
                r.tag = tag::PHASE;
                name(&mut r, Some(n));
            }
        }
        r
    }

    /// The wait kind of a wait event.
    pub(crate) fn wait_kind(&self) -> WaitKind {
        WaitKind::ALL
            .get(self.wait as usize)
            .copied()
            .unwrap_or(WaitKind::Other)
    }

    /// Decodes an event this process encoded with [`Raw::new`] (`None` for tag 0).
    pub(crate) fn kind(&self) -> Option<RawKind> {
        let name = || {
            // SAFETY: `b` and `len` were taken from a `&'static str` by `Raw::new` in this
            // process (names are never longer than u32::MAX bytes in practice; a longer one
            // would be cut at a byte boundary, which `from_utf8` below refuses).
            (self.flags & HAS_NAME != 0).then(|| {
                let bytes: &'static [u8] = unsafe {
                    std::slice::from_raw_parts(self.b as usize as *const u8, self.len as usize)
                };
                std::str::from_utf8(bytes).unwrap_or("_")
            })
        };
        Some(match self.tag {
            tag::START => RawKind::Start,
            tag::STOP => RawKind::Stop,
            tag::REGION_BEGIN => RawKind::RegionBegin {
                id: self.a,
                name: name().unwrap_or("_"),
                team: self.d,
            },
            tag::REGION_END => RawKind::RegionEnd { id: self.a },
            tag::WORK_BEGIN => RawKind::WorkBegin(name()),
            tag::WORK_END => RawKind::WorkEnd(name()),
            tag::WAIT_BEGIN => RawKind::WaitBegin(self.wait_kind(), name()),
            tag::WAIT_END => RawKind::WaitEnd(
                self.wait_kind(),
                name(),
                (self.flags & HAS_BY != 0).then_some(self.d),
            ),
            tag::RELEASE => RawKind::Release(self.wait_kind(), name()),
            tag::COMM_BEGIN => RawKind::CommBegin(self.a),
            tag::COMM_END => RawKind::CommEnd(self.a),
            tag::CPU => RawKind::Cpu(self.a, (self.flags & HAS_DELAY != 0).then_some(self.b)),
            tag::PHASE => RawKind::Phase(name().unwrap_or("_")),
            _ => return None,
        })
    }

    /// Reads a raw event from its bytes (native order), as `pp` does from a crashed run's
    /// buffers.
    pub(crate) fn from_bytes(b: &[u8; RAW_BYTES]) -> Raw {
        let u64_at = |i: usize| u64::from_ne_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        let u32_at = |i: usize| u32::from_ne_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]));
        Raw {
            ticks: u64_at(0),
            a: u64_at(8),
            b: u64_at(16),
            len: u32_at(24),
            d: u32_at(28),
            tag: b[32],
            wait: b[33],
            flags: b[34],
            pad: [0; 5],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_events_have_the_documented_layout() {
        assert_eq!(std::mem::size_of::<Raw>(), RAW_BYTES);
        assert_eq!(std::mem::offset_of!(Raw, len), 24);
        assert_eq!(std::mem::offset_of!(Raw, d), 28);
        assert_eq!(std::mem::offset_of!(Raw, tag), 32);
        assert_eq!(std::mem::offset_of!(Raw, flags), 34);
    }

    #[test]
    fn every_kind_round_trips_through_memory_and_bytes() {
        let kinds = [
            RawKind::Start,
            RawKind::Stop,
            RawKind::RegionBegin {
                id: 7,
                name: "loop",
                team: 3,
            },
            RawKind::RegionEnd { id: 7 },
            RawKind::WorkBegin(None),
            RawKind::WorkEnd(Some("fft")),
            RawKind::WaitBegin(WaitKind::Barrier, None),
            RawKind::WaitEnd(WaitKind::Lock, Some("m"), Some(2)),
            RawKind::WaitEnd(WaitKind::Other, None, None),
            RawKind::Release(WaitKind::Lock, Some("critical")),
            RawKind::Release(WaitKind::Cond, None),
            RawKind::CommBegin(1 << 40),
            RawKind::CommEnd(5),
            RawKind::Cpu(123, Some(45)),
            RawKind::Cpu(9, None),
            RawKind::Phase("p"),
        ];
        for (i, kind) in kinds.into_iter().enumerate() {
            let raw = Raw::new(i as u64 * 1000, kind);
            assert_eq!(raw.kind(), Some(kind));
            // SAFETY: Raw is repr(C) of integers, RAW_BYTES long.
            let bytes: [u8; RAW_BYTES] = unsafe { std::mem::transmute(raw) };
            assert_eq!(Raw::from_bytes(&bytes).kind(), Some(kind));
            assert_eq!(Raw::from_bytes(&bytes).ticks, i as u64 * 1000);
        }
    }
}
