//! Damaged binary logs: every cut of a log, in memory and as a file, reads to a prefix of its
//! events and an error naming where it ends; a log larger than the index scan's windows reads
//! the same from a file; specific damage gets specific messages.

mod log_support;

use log_support::generated::small_log;
use log_support::reading::{check_invariants, drain, read};
use log_support::{describe, header, realistic};
use pp::event::{Event, EventKind, Symbols};
use pp::log::{BinaryWriter, LogError, LogReader};
use test_support::scratch;

fn per_thread(events: &[Event], s: &Symbols, p: usize) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); p];
    for e in events {
        out[e.thread as usize].push(describe(e, s));
    }
    out
}

fn check_cut(
    bytes: &[u8],
    full: &[Vec<String>],
    cut: usize,
    r: Result<LogReader, LogError>,
) -> usize {
    let mut r = match r {
        Ok(r) => r,
        Err(e) => {
            // Only a cut inside the header fails open.
            assert!(cut < 24, "cut {cut}: {e}");
            assert!(
                cut == 0 || e.to_string().contains("ends inside its header"),
                "{e}"
            );
            return 0;
        }
    };
    let (events, error) = drain(&mut r);
    check_invariants(&r, &events, &error, "cut.log");
    let got = per_thread(&events, r.symbols(), full.len());
    for (g, f) in got.iter().zip(full) {
        assert!(f.starts_with(g), "cut {cut}: not a prefix");
    }
    if cut == bytes.len() {
        assert!(error.is_none(), "{error:?}");
        assert!(r.finished());
        assert_eq!(&got, full);
    } else {
        let m = error
            .unwrap_or_else(|| panic!("cut {cut}: no error"))
            .to_string();
        assert!(!r.finished());
        assert!(
            m.contains("no end marker") || m.contains("end marker"),
            "cut {cut}: {m}"
        );
        assert!(
            m.starts_with(&format!("cut.log: byte {cut}:")) || m.contains("end marker"),
            "{m}"
        );
    }
    events.len()
}

#[test]
fn every_cut_of_a_binary_log_yields_a_prefix_and_an_error() {
    let (bytes, full) = small_log();
    let mut before = 0;
    for cut in 0..=bytes.len() {
        let r = LogReader::from_bytes("cut.log", bytes[..cut].to_vec());
        let n = check_cut(&bytes, &full, cut, r);
        assert!(n >= before, "cut {cut}: fewer events than a shorter cut");
        before = n;
    }
    // A cut inside the last block names its thread and where the data ends.
    let cut = bytes.len() - 6;
    let (_, _, error) = read("cut.log", &bytes[..cut]);
    let m = error.unwrap().to_string();
    assert!(
        m.starts_with(&format!(
            "cut.log: byte {cut}: the log ends inside a block of thread "
        )),
        "{m}"
    );
    assert!(m.contains("no end marker"), "{m}");
    // Exactly the end marker missing.
    let (_, events, error) = read("cut.log", &bytes[..bytes.len() - 3]);
    assert_eq!(events.len(), full.iter().map(Vec::len).sum::<usize>());
    let m = error.unwrap().to_string();
    assert!(m.contains("the log has no end marker"), "{m}");
}

#[test]
fn every_cut_of_a_binary_log_file_yields_a_prefix_and_an_error() {
    let (bytes, _) = small_log();
    let dir = scratch("cuts");
    let path = dir.join("cut.log");
    for cut in 0..=bytes.len() {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let r = LogReader::open(&path);
        // Re-read from memory under the short name for the message checks; the file reader
        // must return the same events and error text (modulo the name).
        let mem = LogReader::from_bytes("cut.log", bytes[..cut].to_vec());
        match (r, mem) {
            (Ok(mut f), Ok(mut m)) => {
                let (fe, ferr) = drain(&mut f);
                let (me, merr) = drain(&mut m);
                assert_eq!(fe, me, "cut {cut}");
                let name = path.display().to_string();
                assert_eq!(
                    ferr.map(|e| e.to_string().replacen(&name, "cut.log", 1)),
                    merr.map(|e| e.to_string()),
                    "cut {cut}"
                );
                assert_eq!(f.finished(), m.finished());
            }
            (Err(_), Err(_)) => {}
            (f, m) => panic!("cut {cut}: file {:?} vs memory {:?}", f.is_ok(), m.is_ok()),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A log far larger than the index scan's windows (the header's 1 MiB, then 4 KiB) with
/// definitions items larger than a window: the file reader returns what the in-memory reader
/// does, whole and cut.
#[test]
fn a_log_larger_than_the_scan_window_reads_the_same_from_a_file() {
    let mut symbols = Symbols::default();
    // 6,000 names of 200 bytes, all used by the first block: 1.2 MB of definitions.
    let long: Vec<_> = (0..6000)
        .map(|k| symbols.intern(&format!("{k:04}{}", "x".repeat(196))))
        .collect();
    let mut w = BinaryWriter::new(Vec::new(), &header(4)).unwrap();
    let phases: Vec<Event> = long
        .iter()
        .enumerate()
        .map(|(k, &name)| Event {
            t: k as u64,
            thread: 0,
            kind: EventKind::Phase { name },
        })
        .collect();
    w.write_block(0, &phases, &symbols).unwrap();
    // Where the blocks after the definitions start (about: the same log without them).
    let events_at = {
        let mut alone = BinaryWriter::new(Vec::new(), &header(4)).unwrap();
        alone.write_block(0, &phases, &symbols).unwrap();
        alone.finish().unwrap().len()
    };
    realistic(4, 20_000, 97, 5, &mut symbols, |th, evs, s| {
        w.write_block(th, evs, s).unwrap();
    });
    let bytes = w.finish().unwrap();
    assert!(bytes.len() > events_at + 20 * 4096, "{}", bytes.len());
    let dir = scratch("window");
    let path = dir.join("big.log");
    let name = path.display().to_string();
    let step = (bytes.len() - events_at) / 12;
    let cuts = (0..12).map(|k| events_at + k * step + k % 7).chain([
        4096,
        1 << 20,
        (1 << 20) + 4097,
        bytes.len(),
    ]);
    for cut in cuts {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let file = LogReader::open(&path);
        let mem = LogReader::from_bytes(&name, bytes[..cut].to_vec());
        match (file, mem) {
            (Ok(mut f), Ok(mut m)) => {
                let (fe, ferr) = drain(&mut f);
                let (me, merr) = drain(&mut m);
                assert_eq!(fe.len(), me.len(), "cut {cut}");
                assert!(fe == me, "cut {cut}: the events differ");
                assert_eq!(
                    ferr.map(|e| e.to_string()),
                    merr.map(|e| e.to_string()),
                    "cut {cut}"
                );
                assert_eq!(f.finished(), m.finished(), "cut {cut}");
                if cut == bytes.len() {
                    assert!(f.finished());
                    assert!(fe.len() > 26_000);
                }
            }
            (Err(f), Err(m)) => assert_eq!(f.to_string(), m.to_string(), "cut {cut}"),
            (f, m) => panic!("cut {cut}: file {:?} vs memory {:?}", f.is_ok(), m.is_ok()),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Specific damage gets specific messages.
#[test]
fn corrupt_binary_logs_get_precise_messages() {
    let h = header(2);
    let mut s = Symbols::default();
    let fft = s.intern("fft");
    let ev = |t, thread, kind| Event { t, thread, kind };
    let mut w = BinaryWriter::new(Vec::new(), &h).unwrap();
    w.write_block(
        0,
        &[
            ev(10, 0, EventKind::Start),
            ev(20, 0, EventKind::Phase { name: fft }),
        ],
        &s,
    )
    .unwrap();
    w.write_block(1, &[ev(15, 1, EventKind::Start)], &s)
        .unwrap();
    let good = w.finish().unwrap();
    let (_, events, error) = read("c.log", &good);
    assert_eq!((events.len(), error.is_none()), (3, true));
    let find = |pat: &[u8]| good.windows(pat.len()).position(|w| w == pat).unwrap();
    let header_len = find(b"\x44"); // first item: the definitions of "fft"
    let block0 = find(b"\x42\x00\x02");

    // Unknown record tag in the first block: thread 0's first event is fine, the second is not;
    // the damage is reported at the time of the thread's last valid event (10, before thread
    // 1's start at 15).
    let mut bad = good.clone();
    let rec = block0 + 5 + 2; // block header (5 bytes), then record 1 (tag + dt)
    bad[rec] = 0x7f;
    let (_, events, error) = read("c.log", &bad);
    let m = error.unwrap().to_string();
    assert_eq!(events.len(), 1, "{m}");
    assert_eq!(
        m,
        format!(
            "c.log: byte {rec}: thread 0: unknown record tag 0x7f (expected an event record 0x01-0x0e, 0x10-0x15, 0x18-0x1d, 0x20-0x25 or 0x28-0x2d)"
        )
    );

    // A reference to an undefined name.
    let mut bad = good.clone();
    bad[rec + 2] = 5;
    let m = read("c.log", &bad).2.unwrap().to_string();
    assert_eq!(
        m,
        format!("c.log: byte {rec}: thread 0: phase: name: name 5 is not defined (1 defined)")
    );

    // Unknown item tag.
    let mut bad = good.clone();
    bad[header_len] = b'Z';
    let m = read("c.log", &bad).2.unwrap().to_string();
    assert!(
        m.starts_with(&format!("c.log: byte {header_len}: unknown item tag 0x5a")),
        "{m}"
    );

    // End marker that does not match, and data after it.
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 2] = 9;
    let m = read("c.log", &bad).2.unwrap().to_string();
    assert!(
        m.contains(
            "end marker: counts 9 events in 2 blocks, but the log holds 3 events in 2 blocks"
        ),
        "{m}"
    );
    let mut bad = good.clone();
    bad.extend_from_slice(b"xy");
    let m = read("c.log", &bad).2.unwrap().to_string();
    assert_eq!(m, format!("c.log: byte {n}: 2 bytes follow the end marker"));

    // A thread beyond p, a bad version, a bad magic.
    let mut bad = good.clone();
    bad[block0 + 1] = 2;
    let m = read("c.log", &bad).2.unwrap().to_string();
    assert_eq!(
        m,
        format!("c.log: byte {block0}: block: thread 2 is not below p=2")
    );
    let mut bad = good.clone();
    bad[6] = 2;
    let m = LogReader::from_bytes("c.log", bad).unwrap_err().to_string();
    assert_eq!(
        m,
        "c.log: byte 6: header: unsupported version 2 (this reader knows version 1)"
    );
}
