//! Decoding the records of a binary log (the layout in [`binary`](super::binary)): the inverse
//! of the recorder's `encode_record`, with every way a record can be damaged named.

use pp_recorder::log::binary::*;
use pp_recorder::log::varint::{self, VarintError};

use crate::event::{EventKind, Sym, TeamRef, WaitKind};

/// How many names and teams are defined: references beyond are corrupt.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Defined {
    pub names: u32,
    pub teams: u32,
    /// The header's `p`: a message's peer and a collective's root must be below it.
    pub p: u32,
}

/// Why a record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Damage {
    /// The data ends inside the record.
    Eof,
    /// The record is invalid: what is wrong.
    Bad(String),
}

/// The keyword of a record tag, for messages.
fn tag_name(tag: u8) -> &'static str {
    match tag {
        T_START => "start",
        T_STOP => "stop",
        T_REGION_BEGIN | T_REGION_BEGIN_TEAM => "region_begin",
        T_REGION_END => "region_end",
        T_WORK_BEGIN | T_WORK_BEGIN_LABEL => "work_begin",
        T_WORK_END | T_WORK_END_LABEL => "work_end",
        T_COMM_BEGIN => "comm_begin",
        T_COMM_END => "comm_end",
        T_CPU | T_CPU_DELAY => "cpu",
        T_PHASE => "phase",
        T_SEND | 0x34 => "send",
        T_RECV | 0x35 => "recv",
        T_COLL | 0x36 => "coll",
        0x10..=0x15 | 0x18..=0x1D => "wait_begin",
        0x20..=0x25 | 0x28..=0x2D | 0x38..=0x3D | 0x40..=0x45 => "wait_end",
        0x48..=0x4D | 0x50..=0x55 => "release",
        _ => "record",
    }
}

#[cold]
#[inline(never)]
fn bad_varint(e: VarintError, tag: u8, field: &str) -> Damage {
    match e {
        VarintError::Eof => Damage::Eof,
        VarintError::Overflow => Damage::Bad(format!(
            "{}: {field}: varint does not fit in 64 bits",
            tag_name(tag)
        )),
    }
}

#[cold]
#[inline(never)]
fn undefined(tag: u8, field: &str, what: &str, id: u64, defined: u32) -> Damage {
    Damage::Bad(format!(
        "{}: {field}: {what} {id} is not defined ({defined} defined)",
        tag_name(tag)
    ))
}

#[inline(always)]
fn field(data: &[u8], pos: &mut usize, tag: u8, name: &str) -> Result<u64, Damage> {
    varint::get(data, pos).map_err(|e| bad_varint(e, tag, name))
}

#[inline(always)]
fn sym(data: &[u8], pos: &mut usize, tag: u8, name: &str, d: &Defined) -> Result<Sym, Damage> {
    let v = field(data, pos, tag, name)?;
    if v < u64::from(d.names) {
        Ok(Sym(v as u32))
    } else {
        Err(undefined(tag, name, "name", v, d.names))
    }
}

/// A thread id field: below the header's `p`.
fn thread_field(
    data: &[u8],
    pos: &mut usize,
    tag: u8,
    name: &str,
    d: &Defined,
) -> Result<u32, Damage> {
    let v = field(data, pos, tag, name)?;
    if v < u64::from(d.p) {
        Ok(v as u32)
    } else {
        Err(Damage::Bad(format!(
            "{}: {name} {v} is not below p={}",
            tag_name(tag),
            d.p
        )))
    }
}

/// Decodes the record at `*pos`. On success advances `*pos` past it and updates the state; on
/// damage leaves both as they were.
#[inline(always)]
pub(crate) fn decode_record(
    data: &[u8],
    pos: &mut usize,
    st: &mut BlockState,
    d: &Defined,
) -> Result<EventKind, Damage> {
    let mut at = *pos;
    let Some(&tag) = data.get(at) else {
        return Err(Damage::Eof);
    };
    at += 1;
    let dt = varint::get_wide(data, &mut at).map_err(|e| bad_varint(e, tag, "time delta"))?;
    let Some(t) = st.t.checked_add(dt) else {
        return Err(time_overflow(tag, st.t, dt));
    };
    let mut region = st.region;
    let mut cpu = st.cpu;
    let mut delay = st.delay;
    let kind = match tag {
        T_START => EventKind::Start,
        T_STOP => EventKind::Stop,
        T_REGION_BEGIN | T_REGION_BEGIN_TEAM => {
            let id = region.wrapping_add(varint::unzigzag(field(data, &mut at, tag, "id")?) as u64);
            region = id;
            let name = sym(data, &mut at, tag, "name", d)?;
            let team = if tag == T_REGION_BEGIN_TEAM {
                let v = field(data, &mut at, tag, "team")?;
                if v >= u64::from(d.teams) {
                    return Err(undefined(tag, "team", "team", v, d.teams));
                }
                Some(TeamRef(v as u32))
            } else {
                None
            };
            EventKind::RegionBegin { id, name, team }
        }
        T_REGION_END => {
            let id = region.wrapping_add(varint::unzigzag(field(data, &mut at, tag, "id")?) as u64);
            region = id;
            EventKind::RegionEnd { id }
        }
        T_WORK_BEGIN => EventKind::WorkBegin { label: None },
        T_WORK_BEGIN_LABEL => EventKind::WorkBegin {
            label: Some(sym(data, &mut at, tag, "label", d)?),
        },
        T_WORK_END => EventKind::WorkEnd { label: None },
        T_WORK_END_LABEL => EventKind::WorkEnd {
            label: Some(sym(data, &mut at, tag, "label", d)?),
        },
        T_COMM_BEGIN => EventKind::CommBegin {
            bytes: field(data, &mut at, tag, "bytes")?,
        },
        T_COMM_END => EventKind::CommEnd {
            bytes: field(data, &mut at, tag, "bytes")?,
        },
        T_CPU | T_CPU_DELAY => {
            let diff = varint::unzigzag(field(data, &mut at, tag, "thread_cpu_ns")?);
            cpu = cpu.wrapping_add(diff as u64);
            let run_delay_ns = if tag == T_CPU_DELAY {
                let diff = varint::unzigzag(field(data, &mut at, tag, "run_delay_ns")?);
                delay = delay.wrapping_add(diff as u64);
                Some(delay)
            } else {
                None
            };
            EventKind::Cpu {
                thread_cpu_ns: cpu,
                run_delay_ns,
            }
        }
        T_PHASE => EventKind::Phase {
            name: sym(data, &mut at, tag, "name", d)?,
        },
        0x30 | 0x31 | 0x34 | 0x35 => {
            let peer = thread_field(data, &mut at, tag, "peer", d)?;
            let msg_tag = field(data, &mut at, tag, "tag")?;
            let msg_tag = u32::try_from(msg_tag).map_err(|_| {
                Damage::Bad(format!(
                    "{}: tag {msg_tag} does not fit in 32 bits",
                    tag_name(tag)
                ))
            })?;
            let bytes = field(data, &mut at, tag, "bytes")?;
            let comm = if tag & WITH_COMM != 0 {
                Some(sym(data, &mut at, tag, "comm", d)?)
            } else {
                None
            };
            if tag & !WITH_COMM == T_SEND {
                EventKind::Send {
                    peer,
                    tag: msg_tag,
                    bytes,
                    comm,
                }
            } else {
                EventKind::Recv {
                    peer,
                    tag: msg_tag,
                    bytes,
                    comm,
                }
            }
        }
        0x32 | 0x36 => {
            let op = sym(data, &mut at, tag, "op", d)?;
            let bytes = field(data, &mut at, tag, "bytes")?;
            let root = match field(data, &mut at, tag, "root")? {
                0 => None,
                r if r <= u64::from(d.p) => Some((r - 1) as u32),
                r => {
                    return Err(Damage::Bad(format!(
                        "coll: root {} is not below p={}",
                        r - 1,
                        d.p
                    )));
                }
            };
            let comm = if tag & WITH_COMM != 0 {
                Some(sym(data, &mut at, tag, "comm", d)?)
            } else {
                None
            };
            EventKind::Coll {
                op,
                bytes,
                root,
                comm,
            }
        }
        0x10..=0x15 => EventKind::WaitBegin {
            kind: WaitKind::ALL[usize::from(tag - T_WAIT_BEGIN)],
            object: None,
        },
        0x18..=0x1D => EventKind::WaitBegin {
            kind: WaitKind::ALL[usize::from(tag - T_WAIT_BEGIN_OBJECT)],
            object: Some(sym(data, &mut at, tag, "object", d)?),
        },
        0x20..=0x25 => EventKind::WaitEnd {
            kind: WaitKind::ALL[usize::from(tag - T_WAIT_END)],
            object: None,
            by: None,
        },
        0x28..=0x2D => EventKind::WaitEnd {
            kind: WaitKind::ALL[usize::from(tag - T_WAIT_END_OBJECT)],
            object: Some(sym(data, &mut at, tag, "object", d)?),
            by: None,
        },
        0x38..=0x3D => EventKind::WaitEnd {
            kind: WaitKind::ALL[usize::from(tag - T_WAIT_END_BY)],
            object: None,
            by: Some(thread_field(data, &mut at, tag, "by", d)?),
        },
        0x40..=0x45 => EventKind::WaitEnd {
            kind: WaitKind::ALL[usize::from(tag - T_WAIT_END_OBJECT_BY)],
            object: Some(sym(data, &mut at, tag, "object", d)?),
            by: Some(thread_field(data, &mut at, tag, "by", d)?),
        },
        0x48..=0x4D => EventKind::Release {
            kind: WaitKind::ALL[usize::from(tag - T_RELEASE)],
            object: None,
        },
        0x50..=0x55 => EventKind::Release {
            kind: WaitKind::ALL[usize::from(tag - T_RELEASE_OBJECT)],
            object: Some(sym(data, &mut at, tag, "object", d)?),
        },
        _ => return Err(unknown_tag(tag)),
    };
    *pos = at;
    *st = BlockState {
        t,
        region,
        cpu,
        delay,
    };
    Ok(kind)
}

#[cold]
#[inline(never)]
fn time_overflow(tag: u8, t: u64, dt: u64) -> Damage {
    Damage::Bad(format!(
        "{}: time delta {dt} after time {t} overflows 64 bits",
        tag_name(tag)
    ))
}

#[cold]
#[inline(never)]
fn unknown_tag(tag: u8) -> Damage {
    Damage::Bad(format!(
        "unknown record tag 0x{tag:02x} (expected an event record 0x01-0x0e, 0x10-0x15, 0x18-0x1d, 0x20-0x25 or 0x28-0x2d)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_kinds() -> Vec<EventKind> {
        let mut kinds = vec![
            EventKind::Start,
            EventKind::RegionBegin {
                id: 7,
                name: Sym(1),
                team: None,
            },
            EventKind::RegionBegin {
                id: 3,
                name: Sym(0),
                team: Some(TeamRef(1)),
            },
            EventKind::RegionEnd { id: 3 },
            EventKind::RegionEnd { id: u64::MAX },
            EventKind::WorkBegin { label: None },
            EventKind::WorkBegin {
                label: Some(Sym(2)),
            },
            EventKind::WorkEnd { label: None },
            EventKind::WorkEnd {
                label: Some(Sym(2)),
            },
            EventKind::CommBegin { bytes: 65536 },
            EventKind::CommEnd { bytes: u64::MAX },
            EventKind::Send {
                peer: 3,
                tag: u32::MAX,
                bytes: u64::MAX,
                comm: Some(Sym(2)),
            },
            EventKind::Send {
                peer: 0,
                tag: 0,
                bytes: 0,
                comm: None,
            },
            EventKind::Recv {
                peer: 3,
                tag: 7,
                bytes: 1 << 20,
                comm: None,
            },
            EventKind::Recv {
                peer: 1,
                tag: 7,
                bytes: 8,
                comm: Some(Sym(0)),
            },
            EventKind::Coll {
                op: Sym(1),
                bytes: 4096,
                root: Some(3),
                comm: Some(Sym(2)),
            },
            EventKind::Coll {
                op: Sym(1),
                bytes: 0,
                root: None,
                comm: None,
            },
            EventKind::Cpu {
                thread_cpu_ns: 5,
                run_delay_ns: None,
            },
            EventKind::Cpu {
                thread_cpu_ns: u64::MAX,
                run_delay_ns: Some(7),
            },
            EventKind::Cpu {
                thread_cpu_ns: 3,
                run_delay_ns: Some(u64::MAX),
            },
            EventKind::Cpu {
                thread_cpu_ns: 4,
                run_delay_ns: Some(2),
            },
            EventKind::Phase { name: Sym(0) },
            EventKind::Stop,
        ];
        for kind in WaitKind::ALL {
            for object in [None, Some(Sym(1))] {
                kinds.push(EventKind::WaitBegin { kind, object });
                kinds.push(EventKind::Release { kind, object });
                for by in [None, Some(1)] {
                    kinds.push(EventKind::WaitEnd { kind, object, by });
                }
            }
        }
        kinds
    }

    #[test]
    fn every_record_round_trips_and_every_cut_is_eof() {
        let kinds = all_kinds();
        let mut buf = Vec::new();
        let mut st = BlockState::new(100);
        let times: Vec<u64> = (0..kinds.len() as u64)
            .map(|i| 100 + i * i * 1000)
            .collect();
        for (k, &t) in kinds.iter().zip(&times) {
            encode_record(&mut buf, &mut st, t, k);
        }
        let d = Defined {
            names: 3,
            teams: 2,
            p: 4,
        };
        let mut st = BlockState::new(100);
        let mut pos = 0;
        for (k, &t) in kinds.iter().zip(&times) {
            let start = pos;
            let got = decode_record(&buf, &mut pos, &mut st, &d).unwrap();
            assert_eq!((got, st.t), (*k, t));
            assert!(pos - start <= MAX_RECORD);
            for cut in start..pos {
                let mut p = start;
                let mut s = st;
                assert_eq!(
                    decode_record(&buf[..cut], &mut p, &mut s, &d),
                    Err(Damage::Eof)
                );
                assert_eq!((p, s), (start, st));
            }
        }
        assert_eq!(pos, buf.len());
    }

    #[test]
    fn a_peer_or_root_beyond_p_is_damage() {
        let d = Defined {
            names: 1,
            teams: 0,
            p: 2,
        };
        for (kind, message) in [
            (
                EventKind::Send {
                    peer: 2,
                    tag: 0,
                    bytes: 1,
                    comm: None,
                },
                "send: peer 2 is not below p=2",
            ),
            (
                EventKind::Coll {
                    op: Sym(0),
                    bytes: 1,
                    root: Some(5),
                    comm: None,
                },
                "coll: root 5 is not below p=2",
            ),
        ] {
            let mut buf = Vec::new();
            encode_record(&mut buf, &mut BlockState::new(0), 0, &kind);
            let mut pos = 0;
            let err = decode_record(&buf, &mut pos, &mut BlockState::new(0), &d).unwrap_err();
            assert_eq!(err, Damage::Bad(message.into()));
            assert_eq!(pos, 0);
        }
    }

    #[test]
    fn undefined_symbols_and_bad_tags_are_damage() {
        let mut buf = Vec::new();
        let mut st = BlockState::new(0);
        encode_record(&mut buf, &mut st, 5, &EventKind::Phase { name: Sym(4) });
        let d = Defined {
            names: 4,
            teams: 0,
            p: 1,
        };
        let mut pos = 0;
        let err = decode_record(&buf, &mut pos, &mut BlockState::new(0), &d).unwrap_err();
        assert_eq!(
            err,
            Damage::Bad("phase: name: name 4 is not defined (4 defined)".into())
        );
        for tag in [0x00, 0x0F, 0x16, 0x2E, 0xFF] {
            let mut pos = 0;
            let r = decode_record(&[tag, 0], &mut pos, &mut BlockState::new(0), &d);
            assert!(matches!(r, Err(Damage::Bad(_))), "{tag:#x}");
        }
        let mut pos = 0;
        let mut bytes = vec![T_START];
        varint::put(&mut bytes, u64::MAX);
        let r = decode_record(&bytes, &mut pos, &mut BlockState::new(1), &d);
        assert!(matches!(r, Err(Damage::Bad(m)) if m.contains("overflows")));
    }
}
