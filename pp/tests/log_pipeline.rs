//! A binary log read on two threads (decoding on a second one, docs/event-log.md#reading-on-several-cores)
//! gives what it gives on one: the same events in the same order, the same places, the same
//! damage, the same place and end marker after it, and the same profile, on whole, cut and
//! corrupted logs.

mod log_support;

use log_support::{describe, header, realistic};
use pp::event::Symbols;
use pp::log::{BinaryWriter, LogReader};
use pp::profile::profile_log;

/// A realistic log of about `events` events in blocks of 256 (many blocks, so cuts and
/// corruption land inside them).
fn log(events: u64) -> Vec<u8> {
    let mut writer = BinaryWriter::new(Vec::new(), &header(4)).expect("header");
    let mut symbols = Symbols::default();
    realistic(4, events, 256, 7, &mut symbols, |th, evs, s| {
        writer.write_block(th, evs, s).expect("write a block");
    });
    writer.finish().expect("finish")
}

/// Everything `for_each_placed` says of `bytes` read with `threads`.
fn read(bytes: &[u8], threads: usize) -> (Vec<String>, Option<String>, String, bool) {
    let mut reader = LogReader::from_bytes("pipe.log", bytes.to_vec()).expect("a header");
    reader.set_threads(threads);
    let mut seen = Vec::new();
    let damage = reader
        .for_each_placed(|e, symbols, place| {
            seen.push(format!("{} @ {place}", describe(e, symbols)))
        })
        .err()
        .map(|e| e.to_string());
    (seen, damage, reader.place().to_string(), reader.finished())
}

fn same_on_one_and_two_threads(bytes: &[u8], what: &str) {
    let one = read(bytes, 1);
    let two = read(bytes, 2);
    assert!(
        one.0.len() > 10_000,
        "{what}: too few events to use the pipeline"
    );
    assert_eq!(one.0.len(), two.0.len(), "{what}: event counts");
    if let Some(i) = (0..one.0.len()).find(|&i| one.0[i] != two.0[i]) {
        panic!(
            "{what}: event {i}: {} on one thread, {} on two",
            one.0[i], two.0[i]
        );
    }
    assert_eq!((&one.1, &one.2, one.3), (&two.1, &two.2, two.3), "{what}");
}

#[test]
fn a_whole_log_reads_the_same_on_two_threads() {
    let bytes = log(60_000);
    same_on_one_and_two_threads(&bytes, "whole");
    let profile = |threads| {
        let mut reader = LogReader::from_bytes("pipe.log", bytes.clone()).expect("a header");
        reader.set_threads(threads);
        let p = profile_log(&mut reader, None, None)
            .whole("pipe.log")
            .expect("a whole log");
        format!(
            "{:?} {:?} {:?} {:?} {:?}",
            p.totals, p.by_thread, p.by_region, p.window, p.warnings
        )
    };
    assert_eq!(profile(1), profile(2));
}

/// The events a tap sees ([`LogReader::for_each_placed_tapped`], on a third thread when the
/// log is decoded on a second) are those `f` sees, in the same order, and the damage is the
/// same as without a tap.
fn tapped_as_read(bytes: &[u8], threads: usize, what: &str) {
    let mut reader = LogReader::from_bytes("pipe.log", bytes.to_vec()).expect("a header");
    reader.set_threads(threads);
    let (mut seen, mut tapped) = (Vec::new(), Vec::new());
    let damage = reader
        .for_each_placed_tapped(
            |e, _, _| seen.push(*e),
            Some(|e: &pp::event::Event| tapped.push(*e)),
        )
        .err()
        .map(|e| e.to_string());
    assert!(seen.len() > 10_000, "{what}: too few events");
    assert!(
        seen == tapped,
        "{what}, {threads} threads: the tap saw other events"
    );
    assert_eq!(
        damage,
        read(bytes, threads).1,
        "{what}, {threads} threads: the damage"
    );
}

#[test]
fn a_tap_sees_every_event_in_order_on_whole_cut_and_corrupted_logs() {
    let bytes = log(60_000);
    let n = bytes.len();
    for threads in [1, 2] {
        tapped_as_read(&bytes, threads, "whole");
        for k in [1, 7] {
            let cut = n / 2 + k * (n / 2) / 12 + 3 * k;
            tapped_as_read(&bytes[..cut], threads, &format!("cut at {cut}"));
            let mut corrupt = bytes.clone();
            corrupt[cut] ^= 0xA5;
            tapped_as_read(&corrupt, threads, &format!("byte {cut} flipped"));
        }
    }
}

#[test]
fn cut_and_corrupted_logs_read_the_same_on_two_threads() {
    let bytes = log(60_000);
    let n = bytes.len();
    for k in 0..12 {
        let cut = n / 2 + k * (n / 2) / 12 + 3 * k;
        same_on_one_and_two_threads(&bytes[..cut], &format!("cut at {cut}"));
        let mut corrupt = bytes.clone();
        // A byte inside the second half: a bad record tag, a varint or a length.
        corrupt[cut] ^= 0xA5;
        same_on_one_and_two_threads(&corrupt, &format!("byte {cut} flipped"));
    }
}

#[test]
fn pp_prints_the_same_on_one_and_two_threads_and_refuses_a_bad_pp_threads() {
    let dir = test_support::scratch("log-pipeline-pp");
    let path = dir.join("run.log");
    std::fs::write(&path, log(30_000)).unwrap();
    let run = |threads: &str, args: &[&str]| {
        test_support::pp!()
            .args(args)
            .arg(&path)
            .env("PP_THREADS", threads)
            .env("HOME", &dir)
            .output()
            .unwrap()
    };
    for args in [&["-l"][..], &["--by", "region", "--format", "json"]] {
        let (one, two) = (run("1", args), run("2", args));
        assert!(
            one.status.success(),
            "{}",
            String::from_utf8_lossy(&one.stderr)
        );
        assert_eq!(
            (&one.stdout, &one.stderr),
            (&two.stdout, &two.stderr),
            "{args:?}"
        );
    }
    for bad in ["0", "two", "-1", ""] {
        let err = test_support::error_of(
            test_support::pp!()
                .arg("-l")
                .arg(&path)
                .env("PP_THREADS", bad)
                .env("HOME", &dir),
        );
        assert!(err.contains("PP_THREADS"), "{bad}: {err}");
    }
}
