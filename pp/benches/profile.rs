//! Benchmark: `pp` attribution throughput and peak memory on a large binary log.
//!
//! Writes a binary log of `PP_BENCH_EVENTS` events (default 10⁸; 8 threads, a realistic mix:
//! regions, work chunks with waits and comm inside, cpu samples at region boundaries) to a
//! temporary file, then reads and attributes it as `pp` does and prints events/s, bytes per
//! event and the peak resident memory of the attribution (VmHWM, reset through
//! `/proc/self/clear_refs` after writing). Run: `cargo bench -p pp --bench profile`.

use std::fs::File;
use std::io::BufWriter;
use std::time::Instant;

use pp::event::{Event, EventKind, Header, Symbols, WaitKind};
use pp::log::{BinaryWriter, LogReader};
use pp::profile::Sweep;

const THREADS: u32 = 8;
const BLOCK: usize = 1 << 16;

struct Gen {
    t: u64,
    seed: u64,
}

impl Gen {
    fn jitter(&mut self, n: u64) -> u64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed % n
    }
}

fn write_log(path: &std::path::Path, target: u64) -> u64 {
    let header = Header {
        p: THREADS,
        params: vec![("impl".into(), "bench".into())],
    };
    let mut symbols = Symbols::default();
    let names = [symbols.intern("fft"), symbols.intern("transpose")];
    let lock = symbols.intern("queue");
    let mut writer =
        BinaryWriter::new(BufWriter::new(File::create(path).unwrap()), &header).unwrap();
    let mut buffers: Vec<Vec<Event>> = vec![Vec::with_capacity(BLOCK); THREADS as usize];
    let mut g = Gen {
        t: 0,
        seed: 0x9e3779b97f4a7c15,
    };
    let mut cpu = [0u64; THREADS as usize];
    let mut count = 0u64;
    let push = |buffers: &mut Vec<Vec<Event>>,
                writer: &mut BinaryWriter<BufWriter<File>>,
                symbols: &Symbols,
                thread: u32,
                t: u64,
                kind: EventKind| {
        let buffer = &mut buffers[thread as usize];
        buffer.push(Event { t, thread, kind });
        if buffer.len() == BLOCK {
            writer.write_block(thread, buffer, symbols).unwrap();
            buffer.clear();
        }
    };
    for thread in 0..THREADS {
        push(
            &mut buffers,
            &mut writer,
            &symbols,
            thread,
            0,
            EventKind::Start,
        );
    }
    let mut region = 0u64;
    while count < target {
        region += 1;
        let begin = g.t;
        let name = names[(region % 2) as usize];
        push(
            &mut buffers,
            &mut writer,
            &symbols,
            0,
            begin,
            EventKind::RegionBegin {
                id: region,
                name,
                team: None,
            },
        );
        let mut end = begin;
        for thread in 0..THREADS {
            let mut t = begin + g.jitter(500);
            cpu[thread as usize] += 100;
            push(
                &mut buffers,
                &mut writer,
                &symbols,
                thread,
                t,
                EventKind::Cpu {
                    thread_cpu_ns: cpu[thread as usize],
                },
            );
            count += 1;
            for _ in 0..10 {
                push(
                    &mut buffers,
                    &mut writer,
                    &symbols,
                    thread,
                    t,
                    EventKind::WorkBegin { label: None },
                );
                let work = 2_000 + g.jitter(20_000);
                if g.jitter(4) == 0 {
                    let (b, e) = if g.jitter(2) == 0 {
                        (
                            EventKind::WaitBegin {
                                kind: WaitKind::Lock,
                                object: Some(lock),
                            },
                            EventKind::WaitEnd {
                                kind: WaitKind::Lock,
                                object: Some(lock),
                            },
                        )
                    } else {
                        (
                            EventKind::CommBegin { bytes: 65536 },
                            EventKind::CommEnd { bytes: 65536 },
                        )
                    };
                    push(&mut buffers, &mut writer, &symbols, thread, t + work / 3, b);
                    push(&mut buffers, &mut writer, &symbols, thread, t + work / 2, e);
                    count += 2;
                }
                t += work;
                push(
                    &mut buffers,
                    &mut writer,
                    &symbols,
                    thread,
                    t,
                    EventKind::WorkEnd { label: None },
                );
                count += 2;
                t += g.jitter(300);
            }
            cpu[thread as usize] += t - begin - g.jitter(1000);
            push(
                &mut buffers,
                &mut writer,
                &symbols,
                thread,
                t,
                EventKind::Cpu {
                    thread_cpu_ns: cpu[thread as usize],
                },
            );
            count += 1;
            end = end.max(t);
        }
        push(
            &mut buffers,
            &mut writer,
            &symbols,
            0,
            end,
            EventKind::RegionEnd { id: region },
        );
        count += 2;
        g.t = end + g.jitter(2_000);
    }
    for thread in 0..THREADS {
        push(
            &mut buffers,
            &mut writer,
            &symbols,
            thread,
            g.t,
            EventKind::Stop,
        );
        count += 1;
    }
    for (thread, buffer) in buffers.iter().enumerate() {
        if !buffer.is_empty() {
            writer.write_block(thread as u32, buffer, &symbols).unwrap();
        }
    }
    writer.finish().unwrap();
    count + THREADS as u64
}

/// Peak resident set size so far, kB (VmHWM of /proc/self/status).
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let target: u64 = std::env::var("PP_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000_000);
    let path = std::env::temp_dir().join(format!("pp-bench-{}.log", std::process::id()));
    let start = Instant::now();
    let events = write_log(&path, target);
    let bytes = std::fs::metadata(&path).unwrap().len();
    println!(
        "wrote {events} events ({:.2} bytes/event, {:.0} MB) in {:.1} s",
        bytes as f64 / events as f64,
        bytes as f64 / 1e6,
        start.elapsed().as_secs_f64()
    );
    // Reset the peak-RSS counter so that it measures the attribution alone.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = peak_rss_kb();

    // The reader alone, for reference: the attribution cannot be faster than it.
    let start = Instant::now();
    let decoded = LogReader::open(&path)
        .unwrap()
        .filter(|e| e.is_ok())
        .count();
    println!(
        "read alone: {decoded} events in {:.2} s: {:.1} M events/s",
        start.elapsed().as_secs_f64(),
        decoded as f64 / start.elapsed().as_secs_f64() / 1e6
    );

    let start = Instant::now();
    let mut reader = LogReader::open(&path).unwrap();
    let header = reader.header().clone();
    let mut sweep = Sweep::new(&header, None);
    let mut read = 0u64;
    while let Some(event) = reader.next_event() {
        sweep.event(&event.unwrap(), reader.symbols());
        read += 1;
    }
    let a = sweep.finish(reader.symbols()).unwrap();
    let seconds = start.elapsed().as_secs_f64();
    let peak = peak_rss_kb();
    assert_eq!(read, events);
    assert_eq!(a.totals.sum(), THREADS as u64 * (a.window.1 - a.window.0));
    println!(
        "read + attributed {read} events in {seconds:.2} s: {:.1} M events/s on one core",
        read as f64 / seconds / 1e6
    );
    match (reset, before, peak) {
        (true, Some(b), Some(p)) => {
            println!("peak resident memory during attribution: {p} kB (before: {b} kB)")
        }
        _ => println!("peak resident memory: {peak:?} kB (could not reset the counter)"),
    }
    let _ = std::fs::remove_file(&path);
}
