//! Helpers of the log tests and the benchmarks: a realistic event generator, random valid
//! logs, and comparing events across symbol tables; the activity graph's logs ([`activity`]),
//! logs made for the log tests ([`generated`]) and a log read to its end ([`reading`]).
#![allow(dead_code)]

pub mod activity;
pub mod generated;
pub mod reading;

use pp::event::{Event, EventKind, Header, Symbols, ThreadId, WaitKind};

/// An event with its names resolved, comparable across symbol tables.
pub fn describe(e: &Event, s: &Symbols) -> String {
    let name = |x: Option<pp::event::Sym>| x.map(|x| format!(" {}", s.name(x))).unwrap_or_default();
    let what = match e.kind {
        EventKind::Start => "start".to_string(),
        EventKind::Stop => "stop".to_string(),
        EventKind::RegionBegin { id, name: n, team } => {
            let team = team
                .map(|t| format!(" team={:?}", s.team(t)))
                .unwrap_or_default();
            format!("region_begin {id} {}{team}", s.name(n))
        }
        EventKind::RegionEnd { id } => format!("region_end {id}"),
        EventKind::WorkBegin { label } => format!("work_begin{}", name(label)),
        EventKind::WorkEnd { label } => format!("work_end{}", name(label)),
        EventKind::WaitBegin { kind, object } => format!("wait_begin {kind}{}", name(object)),
        EventKind::WaitEnd { kind, object, by } => format!(
            "wait_end {kind}{}{}",
            name(object),
            by.map_or(String::new(), |b| format!(" by={b}"))
        ),
        EventKind::Release { kind, object } => format!("release {kind}{}", name(object)),
        EventKind::CommBegin { bytes } => format!("comm_begin {bytes}"),
        EventKind::CommEnd { bytes } => format!("comm_end {bytes}"),
        EventKind::Cpu {
            thread_cpu_ns,
            run_delay_ns: None,
        } => format!("cpu {thread_cpu_ns}"),
        EventKind::Cpu {
            thread_cpu_ns,
            run_delay_ns: Some(delay),
        } => format!("cpu {thread_cpu_ns} {delay}"),
        EventKind::Phase { name: n } => format!("phase {}", s.name(n)),
        EventKind::Send {
            peer,
            tag,
            bytes,
            comm,
        } => format!("send {peer} {tag} {bytes}{}", name(comm)),
        EventKind::Recv {
            peer,
            tag,
            bytes,
            comm,
        } => format!("recv {peer} {tag} {bytes}{}", name(comm)),
        EventKind::Coll {
            op,
            bytes,
            root,
            comm,
        } => format!("coll {} {bytes} {root:?}{}", s.name(op), name(comm)),
    };
    format!("{} {} {what}", e.t, e.thread)
}

/// A small deterministic random generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo).max(1)
    }
    /// True with probability `1 / one_in`.
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.range(0, one_in) == 0
    }
}

/// A realistic run of `p` threads: parallel regions (sometimes with a smaller team) whose
/// threads take a CPU sample (CPU clock and run-queue delay, as the recorder does on Linux), work (sometimes moving data), take a CPU sample and wait at a
/// barrier; serial phases between steps; nanosecond timestamps with microsecond-scale gaps.
/// Events are handed to `flush` a block of `block` events of one thread at a time, as a
/// recorder's flushing thread would, until at least `target` events were produced.
pub fn realistic(
    p: u32,
    target: u64,
    block: usize,
    seed: u64,
    symbols: &mut Symbols,
    mut flush: impl FnMut(ThreadId, &[Event], &Symbols),
) -> u64 {
    let mut rng = Rng::new(seed);
    let names: Vec<_> = ["fft_rows", "fft_cols", "transpose", "init", "reduce"]
        .iter()
        .map(|n| symbols.intern(n))
        .collect();
    let lock = symbols.intern("queue_lock");
    let all: Vec<ThreadId> = (0..p).collect();
    let half = symbols.intern_team(&all[..(p as usize).div_ceil(2)]);
    let mut bufs: Vec<Vec<Event>> = vec![Vec::with_capacity(block); p as usize];
    let mut cpu = vec![0u64; p as usize];
    let mut delay = vec![0u64; p as usize];
    let mut produced = 0u64;
    let mut now: u64 = 3_600_000_000_000 + rng.range(0, 1_000_000);
    let mut push = |bufs: &mut Vec<Vec<Event>>, symbols: &Symbols, thread: u32, t: u64, kind| {
        let b = &mut bufs[thread as usize];
        b.push(Event { t, thread, kind });
        if b.len() >= block {
            flush(thread, b, symbols);
            b.clear();
        }
    };
    for th in 0..p {
        push(
            &mut bufs,
            symbols,
            th,
            now + u64::from(th) * 150,
            EventKind::Start,
        );
    }
    produced += u64::from(p);
    now += 20_000;
    let mut region = 0u64;
    let mut step = 0u64;
    while produced < target {
        // A serial phase on thread 0 every 16 steps.
        if step & 15 == 0 {
            let name = names[(step / 16 % names.len() as u64) as usize];
            push(&mut bufs, symbols, 0, now, EventKind::Phase { name });
            push(
                &mut bufs,
                symbols,
                0,
                now + 200,
                EventKind::WorkBegin { label: None },
            );
            now += rng.range(10_000, 100_000);
            push(
                &mut bufs,
                symbols,
                0,
                now,
                EventKind::WorkEnd { label: None },
            );
            produced += 3;
        }
        step += 1;
        region += 1;
        let name = names[rng.range(0, names.len() as u64) as usize];
        let team = rng.chance(8).then_some(half);
        let members = team.map_or(p, |_| (p).div_ceil(2));
        let mut ends = Vec::with_capacity(members as usize);
        for th in 0..members {
            let mut t = now + rng.range(100, 2_000);
            let mut ev = |t: u64, kind| push(&mut bufs, symbols, th, t, kind);
            ev(
                t,
                EventKind::RegionBegin {
                    id: region,
                    name,
                    team,
                },
            );
            t += rng.range(50, 300);
            ev(
                t,
                EventKind::Cpu {
                    thread_cpu_ns: cpu[th as usize],
                    run_delay_ns: Some(delay[th as usize]),
                },
            );
            t += rng.range(50, 300);
            ev(t, EventKind::WorkBegin { label: None });
            let work = rng.range(5_000, 200_000);
            let start = t;
            produced += 3;
            if rng.chance(3) {
                t += rng.range(1_000, 20_000);
                let bytes = 4096 << rng.range(0, 8);
                ev(t, EventKind::CommBegin { bytes });
                t += rng.range(1_000, 20_000);
                ev(t, EventKind::CommEnd { bytes });
                produced += 2;
            }
            if rng.chance(10) {
                t += rng.range(100, 1_000);
                ev(
                    t,
                    EventKind::WaitBegin {
                        kind: WaitKind::Lock,
                        object: Some(lock),
                    },
                );
                t += rng.range(100, 5_000);
                ev(
                    t,
                    EventKind::WaitEnd {
                        kind: WaitKind::Lock,
                        object: Some(lock),
                        by: None,
                    },
                );
                produced += 2;
            }
            t = t.max(start + work);
            ev(t, EventKind::WorkEnd { label: None });
            cpu[th as usize] += (t - start) * 19 / 20;
            delay[th as usize] += rng.range(0, 4_000);
            t += rng.range(50, 300);
            ev(
                t,
                EventKind::Cpu {
                    thread_cpu_ns: cpu[th as usize],
                    run_delay_ns: Some(delay[th as usize]),
                },
            );
            t += rng.range(50, 300);
            ev(
                t,
                EventKind::WaitBegin {
                    kind: WaitKind::Barrier,
                    object: None,
                },
            );
            ends.push(t);
            produced += 3;
        }
        let release = ends.iter().copied().max().unwrap_or(now) + rng.range(300, 3_000);
        for th in 0..members {
            let t = release + rng.range(0, 500);
            push(
                &mut bufs,
                symbols,
                th,
                t,
                EventKind::WaitEnd {
                    kind: WaitKind::Barrier,
                    object: None,
                    by: None,
                },
            );
            push(
                &mut bufs,
                symbols,
                th,
                t + rng.range(50, 500),
                EventKind::RegionEnd { id: region },
            );
            produced += 2;
        }
        now = release + 2_000;
    }
    for th in 0..p {
        push(
            &mut bufs,
            symbols,
            th,
            now + u64::from(th) * 100,
            EventKind::Stop,
        );
    }
    produced += u64::from(p);
    for (th, b) in bufs.iter().enumerate() {
        if !b.is_empty() {
            flush(th as u32, b, symbols);
        }
    }
    produced
}

/// A header with typical parameters.
pub fn header(p: u32) -> Header {
    Header {
        p,
        params: vec![
            ("impl".to_string(), "dp".to_string()),
            ("n".to_string(), "256".to_string()),
        ],
    }
}

/// A [`realistic`] binary log in memory (regions, barriers, locks, `cpu` samples with
/// run-queue delays), of `p` threads and about `events` events in blocks of `block`.
pub fn realistic_log(p: u32, events: u64, block: usize, seed: u64) -> Vec<u8> {
    let mut symbols = Symbols::default();
    let mut w = pp::log::BinaryWriter::new(Vec::new(), &header(p)).unwrap();
    realistic(p, events, block, seed, &mut symbols, |th, evs, s| {
        w.write_block(th, evs, s).unwrap();
    });
    w.finish().unwrap()
}

/// The benchmarks' log: a [`realistic`] binary log of 8 threads in a file. `PP_<NAME>_BENCH_EVENTS`
/// (default 10⁷) sets its size; with `PP_<NAME>_BENCH_KEEP=FILE` it is written there and kept,
/// else into the temporary folder. Returns its path, its header and whether it is to be kept.
pub fn bench_log(name: &str) -> (std::path::PathBuf, Header, bool) {
    let target: u64 = test_support::setting(&format!("PP_{name}_BENCH_EVENTS"), 10_000_000);
    let threads = 8;
    let header = header(threads);
    let keep = std::env::var_os(format!("PP_{name}_BENCH_KEEP"));
    let kept = keep.is_some();
    let path = match keep {
        Some(p) => std::path::PathBuf::from(p),
        None => std::env::temp_dir().join(format!(
            "pp-{}-bench-{}.log",
            name.to_lowercase(),
            std::process::id()
        )),
    };
    // Straight to the file: a log of 10^9 events is a few GB.
    let file = std::fs::File::create(&path).expect("create the log");
    let out = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut writer = pp::log::BinaryWriter::new(out, &header).expect("header");
    let mut symbols = Symbols::default();
    realistic(threads, target, 16384, 1, &mut symbols, |th, evs, s| {
        writer.write_block(th, evs, s).expect("write a block");
    });
    let mut out = writer.finish().expect("finish");
    std::io::Write::flush(&mut out).expect("write the log");
    (path, header, kept)
}
