//! The event log's binary encoding at size: a realistic log takes a few bytes per event, and
//! blocks larger than the limit are split and read back.

mod log_support;

use log_support::reading::{drain, read};
use log_support::{header, realistic};
use pp::event::{Event, EventKind, Symbols};
use pp::log::{BinaryWriter, LogReader};

#[test]
fn a_realistic_log_takes_few_bytes_per_event() {
    let mut symbols = Symbols::default();
    let mut w = BinaryWriter::new(Vec::new(), &header(8)).unwrap();
    let n = realistic(8, 1_000_000, 4096, 42, &mut symbols, |th, evs, s| {
        w.write_block(th, evs, s).unwrap();
    });
    let bytes = w.finish().unwrap();
    let per_event = bytes.len() as f64 / n as f64;
    println!(
        "realistic log: {n} events, {} bytes, {per_event:.2} bytes/event",
        bytes.len()
    );
    assert!(per_event <= 6.0, "{per_event} bytes per event");
    let mut r = LogReader::from_bytes("r.log", bytes).unwrap();
    let (events, error) = drain(&mut r);
    assert!(error.is_none());
    assert_eq!(events.len() as u64, n);
    assert!(r.finished());
}

#[test]
fn blocks_larger_than_the_limit_are_split_and_read_back() {
    let symbols = Symbols::default();
    let ev = |i: u64, thread| Event {
        t: i * 1_000_003,
        thread,
        kind: if i & 1 == 0 {
            EventKind::CommBegin { bytes: i << 30 }
        } else {
            EventKind::Cpu {
                thread_cpu_ns: i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                run_delay_ns: (!i.is_multiple_of(3)).then_some(i * 977),
            }
        },
    };
    let one: Vec<Event> = (0..300_000).map(|i| ev(i, 1)).collect();
    let zero: Vec<Event> = (0..10).map(|i| ev(i * 7, 0)).collect();
    let mut w = BinaryWriter::new(Vec::new(), &header(2)).unwrap();
    w.write_block(1, &one, &symbols).unwrap();
    w.write_block(0, &zero, &symbols).unwrap();
    let bytes = w.finish().unwrap();
    assert!(bytes.len() > pp::log::binary::MAX_CHUNK);
    let (r, events, error) = read("big.log", &bytes);
    assert!(error.is_none(), "{error:?}");
    assert!(r.finished());
    let mut want: Vec<Event> = one.iter().chain(&zero).copied().collect();
    want.sort_by_key(|e| (e.t, e.thread));
    assert_eq!(events, want);
}
