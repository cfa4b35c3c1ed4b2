//! Logs made for the log tests: random valid logs of every event kind (a proptest strategy),
//! written as text or as binary blocks in a pseudo-random order, and a small binary log with
//! every kind of item.

use pp::event::{Event, EventKind, Header, Symbols, ThreadId, WaitKind};
use pp::log::{BinaryWriter, TextWriter};
use proptest::prelude::*;

use super::reading::described;
use super::{Rng, header, realistic};

/// A generated log: header, names and teams, the events of each thread in time order.
#[derive(Debug, Clone)]
pub struct GenLog {
    pub header: Header,
    pub symbols: Symbols,
    pub threads: Vec<Vec<Event>>,
    /// Drives how the threads are cut into blocks and in which order they are flushed.
    pub blocking: u64,
}

impl GenLog {
    /// Every event in global time order (ties: thread, then order within the thread).
    pub fn merged(&self) -> Vec<Event> {
        let mut all: Vec<Event> = self.threads.iter().flatten().copied().collect();
        all.sort_by_key(|e| (e.t, e.thread));
        all
    }

    pub fn text(&self) -> Vec<u8> {
        let mut w = TextWriter::new(Vec::new(), &self.header).unwrap();
        for e in self.merged() {
            w.write_event(&e, &self.symbols).unwrap();
        }
        w.finish().unwrap()
    }

    pub fn binary(&self) -> Vec<u8> {
        write_blocks(&self.header, &self.symbols, &self.threads, self.blocking)
    }
}

/// Writes the threads' events as blocks of pseudo-random sizes in a pseudo-random flush order.
pub fn write_blocks(
    header: &Header,
    symbols: &Symbols,
    threads: &[Vec<Event>],
    seed: u64,
) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut w = BinaryWriter::new(Vec::new(), header).unwrap();
    let mut at = vec![0usize; threads.len()];
    loop {
        let open: Vec<usize> = (0..threads.len())
            .filter(|&i| at[i] < threads[i].len())
            .collect();
        if open.is_empty() {
            break;
        }
        let i = open[rng.range(0, open.len() as u64) as usize];
        let n = rng.range(1, 12) as usize;
        let end = (at[i] + n).min(threads[i].len());
        w.write_block(i as ThreadId, &threads[i][at[i]..end], symbols)
            .unwrap();
        at[i] = end;
    }
    w.finish().unwrap()
}

#[derive(Debug, Clone)]
enum GenKind {
    Start,
    Stop,
    RegionBegin(u64, usize, Option<Vec<u32>>),
    RegionEnd(u64),
    WorkBegin(Option<usize>),
    WorkEnd(Option<usize>),
    WaitBegin(usize, Option<usize>),
    WaitEnd(usize, Option<usize>, Option<u32>),
    Release(usize, Option<usize>),
    CommBegin(u64),
    CommEnd(u64),
    Cpu(u64, Option<u64>),
    Phase(usize),
    /// Send or receive: (receive?, peer, tag, bytes, comm).
    Message(bool, u32, u32, u64, Option<usize>),
    /// Collective: (op, bytes, root, comm).
    Coll(usize, u64, Option<u32>, Option<usize>),
}

const POOL: [&str; 6] = ["fft", "rows", "x_1", "über", "a=b", "q"];

fn big() -> impl Strategy<Value = u64> {
    prop_oneof![0..100u64, 0..1_000_000u64, any::<u64>()]
}

fn gen_kind() -> impl Strategy<Value = GenKind> {
    let name = 0..POOL.len();
    let opt = proptest::option::of(0..POOL.len());
    prop_oneof![
        Just(GenKind::Start),
        Just(GenKind::Stop),
        (
            big(),
            name.clone(),
            proptest::option::of(proptest::collection::vec(0..8u32, 1..4))
        )
            .prop_map(|(i, n, t)| GenKind::RegionBegin(i, n, t)),
        big().prop_map(GenKind::RegionEnd),
        opt.clone().prop_map(GenKind::WorkBegin),
        opt.clone().prop_map(GenKind::WorkEnd),
        (0..6usize, opt.clone()).prop_map(|(k, o)| GenKind::WaitBegin(k, o)),
        (0..6usize, opt.clone(), proptest::option::of(0..8u32))
            .prop_map(|(k, o, by)| GenKind::WaitEnd(k, o, by)),
        (0..6usize, opt.clone()).prop_map(|(k, o)| GenKind::Release(k, o)),
        big().prop_map(GenKind::CommBegin),
        big().prop_map(GenKind::CommEnd),
        (big(), proptest::option::of(big())).prop_map(|(c, d)| GenKind::Cpu(c, d)),
        name.clone().prop_map(GenKind::Phase),
        (any::<bool>(), 0..8u32, any::<u32>(), big(), opt.clone())
            .prop_map(|(r, peer, tag, b, c)| GenKind::Message(r, peer, tag, b, c)),
        (name, big(), proptest::option::of(0..8u32), opt)
            .prop_map(|(op, b, root, c)| GenKind::Coll(op, b, root, c)),
    ]
}

fn thread_events() -> impl Strategy<Value = Vec<(u64, GenKind)>> {
    let gap = prop_oneof![Just(0u64), Just(1u64), 0..5_000u64, 0..(1u64 << 40)];
    proptest::collection::vec((gap, gen_kind()), 0..20)
}

pub fn gen_log() -> impl Strategy<Value = GenLog> {
    // A value that reads as a number must be a finite one ("3e5781", "inf" and "nan" are refused
    // by the writer, as they are by the reader of a header).
    let value = "[a-z0-9.]{1,6}".prop_filter("a word or a finite number", |v: &String| {
        v.parse::<f64>().map_or(true, f64::is_finite)
    });
    let params = proptest::collection::vec((0..4usize, value), 0..3);
    (
        1..8u32,
        params,
        any::<u64>(),
        prop_oneof![Just(0u64), 0..(1u64 << 62)],
    )
        .prop_flat_map(|(p, params, blocking, base)| {
            (
                Just(p),
                Just(params),
                Just(blocking),
                Just(base),
                proptest::collection::vec(thread_events(), p as usize),
            )
        })
        .prop_map(|(p, params, blocking, base, raw)| {
            let keys = ["impl", "n", "machine", "rep"];
            let mut header = Header {
                p,
                params: Vec::new(),
            };
            for (k, v) in params {
                if !header.params.iter().any(|(key, _)| key == keys[k]) {
                    header.params.push((keys[k].to_string(), v));
                }
            }
            let mut symbols = Symbols::default();
            let mut threads = Vec::new();
            for (th, evs) in raw.into_iter().enumerate() {
                let mut t = base;
                let mut out = Vec::new();
                for (gap, k) in evs {
                    t += gap;
                    let mut name = |i: usize| symbols.intern(POOL[i]);
                    let kind = match k {
                        GenKind::Start => EventKind::Start,
                        GenKind::Stop => EventKind::Stop,
                        GenKind::RegionBegin(id, n, team) => {
                            let name = name(n);
                            let team = team.map(|t| {
                                let t: Vec<u32> = t.into_iter().map(|x| x % p).collect();
                                symbols.intern_team(&t)
                            });
                            EventKind::RegionBegin { id, name, team }
                        }
                        GenKind::RegionEnd(id) => EventKind::RegionEnd { id },
                        GenKind::WorkBegin(l) => EventKind::WorkBegin { label: l.map(name) },
                        GenKind::WorkEnd(l) => EventKind::WorkEnd { label: l.map(name) },
                        GenKind::WaitBegin(k, o) => EventKind::WaitBegin {
                            kind: WaitKind::ALL[k],
                            object: o.map(name),
                        },
                        GenKind::WaitEnd(k, o, by) => EventKind::WaitEnd {
                            kind: WaitKind::ALL[k],
                            object: o.map(name),
                            by: by.map(|b| b % p),
                        },
                        GenKind::Release(k, o) => EventKind::Release {
                            kind: WaitKind::ALL[k],
                            object: o.map(name),
                        },
                        GenKind::CommBegin(b) => EventKind::CommBegin { bytes: b },
                        GenKind::CommEnd(b) => EventKind::CommEnd { bytes: b },
                        GenKind::Cpu(c, d) => EventKind::Cpu {
                            thread_cpu_ns: c,
                            run_delay_ns: d,
                        },
                        GenKind::Phase(n) => EventKind::Phase { name: name(n) },
                        GenKind::Message(false, peer, tag, bytes, c) => EventKind::Send {
                            peer: peer % p,
                            tag,
                            bytes,
                            comm: c.map(name),
                        },
                        GenKind::Message(true, peer, tag, bytes, c) => EventKind::Recv {
                            peer: peer % p,
                            tag,
                            bytes,
                            comm: c.map(name),
                        },
                        GenKind::Coll(op, bytes, root, c) => EventKind::Coll {
                            op: name(op),
                            bytes,
                            root: root.map(|r| r % p),
                            comm: c.map(name),
                        },
                    };
                    out.push(Event {
                        t,
                        thread: th as u32,
                        kind,
                    });
                }
                threads.push(out);
            }
            GenLog {
                header,
                symbols,
                threads,
                blocking,
            }
        })
}

/// A small binary log with every kind of item: several threads, names, teams, blocks out of
/// time order.
pub fn small_log() -> (Vec<u8>, Vec<Vec<String>>) {
    let mut symbols = Symbols::default();
    let mut threads: Vec<Vec<Event>> = vec![Vec::new(); 3];
    let mut blocks: Vec<(ThreadId, Vec<Event>)> = Vec::new();
    let h = header(3);
    let produced = realistic(3, 40, 7, 11, &mut symbols, |th, evs, _| {
        threads[th as usize].extend_from_slice(evs);
        blocks.push((th, evs.to_vec()));
    });
    assert!(produced >= 40);
    let mut w = BinaryWriter::new(Vec::new(), &h).unwrap();
    for (th, evs) in &blocks {
        w.write_block(*th, evs, &symbols).unwrap();
    }
    let bytes = w.finish().unwrap();
    let per_thread = threads.iter().map(|evs| described(evs, &symbols)).collect();
    (bytes, per_thread)
}
