//! [`Record`]: what a replay needs of one event, as [`super::MeasuredRun::read`] writes it to
//! its thread's stream: the event (at its time in the graph, encoded as in a binary log), what
//! its thread does after it, and its dependencies with what was measured of them
//! (docs/whatif.md#what-is-replayed).

use pp_recorder::log::binary::{BlockState, encode_record};
use pp_recorder::log::varint;

use crate::event::{Event, EventKind, ThreadId};
use crate::log::decode_record;

/// How a group of dependencies turns its measured latency into the replay's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Latency {
    /// A remote arc of the graph, `binding` when it is what ended the event's wait; a
    /// `message` goes over the target's network where it has one.
    Arc { binding: bool, message: bool },
    /// A barrier's departure after the arrivals of its round: the release as measured.
    Barrier,
    /// A worker's `start` after the fork that created it.
    Fork,
}

impl Latency {
    fn code(self) -> u8 {
        match self {
            Latency::Arc { binding, message } => u8::from(binding) | u8::from(message) << 1,
            Latency::Barrier => 4,
            Latency::Fork => 5,
        }
    }

    fn of(code: u8) -> Option<Latency> {
        Some(match code {
            0..=3 => Latency::Arc {
                binding: code & 1 != 0,
                message: code & 2 != 0,
            },
            4 => Latency::Barrier,
            5 => Latency::Fork,
            _ => return None,
        })
    }
}

/// Dependencies that share a latency: the event happens no earlier than each source (thread,
/// node) plus it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub how: Latency,
    /// The measured latency, ns.
    pub ns: u64,
    pub sources: Vec<(ThreadId, u32)>,
}

/// One event of a thread, as the replay reads it.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// The event, at its time in the graph (a thread's time never goes back there).
    pub event: Event,
    /// Whether the thread computes until its next event (a `work` or `comm` interval is
    /// innermost).
    pub busy: bool,
    /// Whether something else ended the wait before this event: a remote arc the longest path
    /// takes, or the fork a worker's `start` follows.
    pub released: bool,
    /// The speed factor of the stretch after it.
    pub factor: f64,
    pub deps: Vec<Group>,
    /// Groups no longer used, kept for their vectors ([`Record::group`]): a record reused
    /// event after event allocates nothing.
    spare: Vec<Group>,
}

impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        (self.event, self.busy, self.released, self.factor)
            == (other.event, other.busy, other.released, other.factor)
            && self.deps == other.deps
    }
}

const BUSY: u8 = 1;
const RELEASED: u8 = 2;
const FACTOR: u8 = 4;
const DEPS: u8 = 8;

impl Record {
    /// Dependency group `k` (at most the number of groups so far), set to `how` and `ns`
    /// with no source yet, its vector reused.
    pub fn group(&mut self, k: usize, how: Latency, ns: u64) -> &mut Group {
        if k == self.deps.len() {
            let g = self.spare.pop().unwrap_or(Group {
                how,
                ns,
                sources: Vec::new(),
            });
            self.deps.push(g);
        }
        let g = &mut self.deps[k];
        g.how = how;
        g.ns = ns;
        g.sources.clear();
        g
    }

    /// Keeps the first `n` dependency groups (the others are kept for their vectors).
    pub fn keep(&mut self, n: usize) {
        while self.deps.len() > n {
            if let Some(g) = self.deps.pop() {
                self.spare.push(g);
            }
        }
    }

    /// Appends the record of its thread's event `node` to `buf`; `st` is its thread's
    /// encoding state. A source node is written as its difference from `node` (threads
    /// advance at similar rates: a byte or two).
    pub fn encode(&self, buf: &mut Vec<u8>, node: u32, st: &mut BlockState) {
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        let flags = flag(self.busy, BUSY)
            | flag(self.released, RELEASED)
            | flag(self.factor != 1.0, FACTOR)
            | flag(!self.deps.is_empty(), DEPS);
        buf.push(flags);
        encode_record(buf, st, self.event.t, &self.event.kind);
        if self.factor != 1.0 {
            buf.extend_from_slice(&self.factor.to_le_bytes());
        }
        if !self.deps.is_empty() {
            varint::put(buf, self.deps.len() as u64);
            for g in &self.deps {
                buf.push(g.how.code());
                varint::put(buf, g.ns);
                varint::put(buf, g.sources.len() as u64);
                for &(th, from) in &g.sources {
                    varint::put(buf, u64::from(th));
                    varint::put(buf, varint::zigzag(i64::from(from) - i64::from(node)));
                }
            }
        }
    }

    /// The event, flags and factor of the record at the start of `data` (its dependencies left
    /// empty: [`Record::decode_deps`] reads them); where its dependencies begin.
    pub fn decode_head(
        &mut self,
        data: &[u8],
        thread: ThreadId,
        st: &mut BlockState,
    ) -> Option<usize> {
        let flags = *data.first()?;
        let mut pos = 1;
        let defined = crate::log::Defined {
            names: u32::MAX,
            teams: u32::MAX,
            p: u32::MAX,
        };
        let kind = decode_record(data, &mut pos, st, &defined).ok()?;
        self.event = Event {
            t: st.t,
            thread,
            kind,
        };
        self.busy = flags & BUSY != 0;
        self.released = flags & RELEASED != 0;
        self.factor = if flags & FACTOR != 0 {
            let f = f64::from_le_bytes(data.get(pos..pos + 8)?.try_into().ok()?);
            pos += 8;
            f
        } else {
            1.0
        };
        self.keep(0);
        Some(pos)
    }

    /// The dependencies of the record at the start of `data` (of event `node` of its thread),
    /// which begin at `pos` ([`Record::decode_head`]), onto `out` as (thread, node, `latency`
    /// of their group's [`Latency`] and measured ns), without the record's vectors: where the
    /// record ends.
    pub fn decode_deps(
        data: &[u8],
        mut pos: usize,
        node: u32,
        mut latency: impl FnMut(Latency, u64) -> f64,
        out: &mut Vec<(ThreadId, u32, f64)>,
    ) -> Option<usize> {
        if data[0] & DEPS == 0 {
            return Some(pos);
        }
        let n = varint::get(data, &mut pos).ok()?;
        for _ in 0..n {
            let how = Latency::of(*data.get(pos)?)?;
            pos += 1;
            let ns = varint::get(data, &mut pos).ok()?;
            let count = varint::get(data, &mut pos).ok()?;
            let latency = latency(how, ns);
            for _ in 0..count {
                let th = varint::get(data, &mut pos).ok()? as ThreadId;
                let delta = varint::unzigzag(varint::get(data, &mut pos).ok()?);
                let from = u32::try_from(i64::from(node) + delta).ok()?;
                out.push((th, from, latency));
            }
        }
        Some(pos)
    }
}

impl Default for Record {
    fn default() -> Self {
        Record {
            event: Event {
                t: 0,
                thread: 0,
                kind: EventKind::Start,
            },
            busy: false,
            released: false,
            factor: 1.0,
            deps: Vec::new(),
            spare: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Sym, WaitKind};

    /// The record at the start of `data` into `r`, its dependencies grouped as written.
    fn decode(r: &mut Record, data: &[u8], node: u32, st: &mut BlockState) -> Option<usize> {
        let head = r.decode_head(data, 2, st)?;
        let mut groups = Vec::new();
        let mut sources = Vec::new();
        let latency = |how, ns| {
            groups.push((how, ns));
            (groups.len() - 1) as f64
        };
        let end = Record::decode_deps(data, head, node, latency, &mut sources)?;
        for (k, &(how, ns)) in groups.iter().enumerate() {
            r.group(k, how, ns).sources.extend(
                sources
                    .iter()
                    .filter(|s| s.2 == k as f64)
                    .map(|&(th, from, _)| (th, from)),
            );
        }
        Some(end)
    }

    #[test]
    fn a_record_comes_back_as_written() {
        let records = [
            Record {
                event: Event {
                    t: 5,
                    thread: 2,
                    kind: EventKind::WaitEnd {
                        kind: WaitKind::Barrier,
                        object: Some(Sym(3)),
                        by: Some(1),
                    },
                },
                busy: false,
                released: true,
                factor: 2.5,
                deps: vec![
                    Group {
                        how: Latency::Arc {
                            binding: true,
                            message: false,
                        },
                        ns: 7,
                        sources: vec![(1, 9)],
                    },
                    Group {
                        how: Latency::Barrier,
                        ns: 1,
                        sources: vec![(0, 4), (1, 8), (2, 3)],
                    },
                ],
                spare: Vec::new(),
            },
            Record {
                event: Event {
                    t: 1 << 40,
                    thread: 2,
                    kind: EventKind::Cpu {
                        thread_cpu_ns: 77,
                        run_delay_ns: Some(3),
                    },
                },
                busy: true,
                ..Record::default()
            },
        ];
        let mut buf = Vec::new();
        let mut st = BlockState::new(0);
        for (k, r) in records.iter().enumerate() {
            r.encode(&mut buf, 3 + k as u32, &mut st);
        }
        let mut st = BlockState::new(0);
        let mut pos = 0;
        let mut got = Record::default();
        for (k, r) in records.iter().enumerate() {
            pos += decode(&mut got, &buf[pos..], 3 + k as u32, &mut st).unwrap();
            assert_eq!(&got, r);
        }
        assert_eq!(pos, buf.len());
    }
}
