//! Round trips of the event log: random valid logs go text -> binary -> text byte for byte
//! and binary -> text -> binary to the same events (property tests), and `convert` goes both
//! ways through files and refuses to overwrite its input.

mod log_support;

use log_support::generated::{gen_log, write_blocks};
use log_support::reading::{check_invariants, described, read};
use pp::log::{Encoding, LogError, LogReader, TextWriter, convert};
use proptest::prelude::*;
use test_support::scratch;

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// text -> binary -> text is byte-identical; the reader returns the generated events in
    /// global time order.
    #[test]
    fn text_to_binary_to_text_is_identity(log in gen_log()) {
        let text = log.text();
        let (r, events, error) = read("a.log", &text);
        prop_assert!(error.is_none(), "{:?}", error);
        check_invariants(&r, &events, &error, "a.log");
        prop_assert_eq!(described(&events, r.symbols()), described(&log.merged(), &log.symbols));
        // Into binary, blocked by thread, the reader's own symbols.
        let mut threads = vec![Vec::new(); r.header().p as usize];
        for e in &events {
            threads[e.thread as usize].push(*e);
        }
        let bin = write_blocks(r.header(), r.symbols(), &threads, log.blocking ^ 0x55);
        let (rb, events_b, error) = read("b.log", &bin);
        prop_assert!(error.is_none(), "{:?}", error);
        prop_assert!(rb.finished());
        prop_assert_eq!(rb.encoding(), Encoding::Binary);
        check_invariants(&rb, &events_b, &error, "b.log");
        let mut w = TextWriter::new(Vec::new(), rb.header()).unwrap();
        for e in &events_b {
            w.write_event(e, rb.symbols()).unwrap();
        }
        let again = w.finish().unwrap();
        prop_assert_eq!(String::from_utf8(again).unwrap(), String::from_utf8(text).unwrap());
    }

    /// binary -> text -> binary decodes to the same global event sequence.
    #[test]
    fn binary_to_text_to_binary_keeps_the_events(log in gen_log()) {
        let bin = log.binary();
        let (r, events, error) = read("a.log", &bin);
        prop_assert!(error.is_none(), "{:?}", error);
        prop_assert!(r.finished());
        check_invariants(&r, &events, &error, "a.log");
        let want = described(&log.merged(), &log.symbols);
        prop_assert_eq!(&described(&events, r.symbols()), &want);
        prop_assert_eq!(r.header(), &log.header);
        let mut w = TextWriter::new(Vec::new(), r.header()).unwrap();
        for e in &events {
            w.write_event(e, r.symbols()).unwrap();
        }
        let text = w.finish().unwrap();
        let (rt, events_t, error) = read("t.log", &text);
        prop_assert!(error.is_none(), "{:?}", error);
        let mut threads = vec![Vec::new(); rt.header().p as usize];
        for e in &events_t {
            threads[e.thread as usize].push(*e);
        }
        let bin2 = write_blocks(rt.header(), rt.symbols(), &threads, !log.blocking);
        let (r2, events2, error) = read("c.log", &bin2);
        prop_assert!(error.is_none(), "{:?}", error);
        prop_assert_eq!(described(&events2, r2.symbols()), want);
    }
}

#[test]
fn convert_goes_both_ways_through_files_and_refuses_to_overwrite_its_input() {
    let dir = scratch("convert");
    let text = "pplog 1 p=2 impl=dp\n1 0 start\n1 1 start\n5 0 region_begin 1 fft team=0,1\n\
                9 1 phase serial\n12 0 stop\n12 1 stop\n";
    let t = dir.join("a.log");
    let b = dir.join("a.bin");
    let t2 = dir.join("b.log");
    std::fs::write(&t, text).unwrap();
    let stats = convert(&t, &b, None, false).unwrap();
    assert_eq!(
        (stats.from, stats.to, stats.events),
        (Encoding::Text, Encoding::Binary, 6)
    );
    assert_eq!(stats.bytes_in, text.len() as u64);
    assert!(std::fs::read(&b).unwrap().starts_with(b"PPLOG\0"));
    let stats = convert(&b, &t2, None, false).unwrap();
    assert_eq!((stats.from, stats.to), (Encoding::Binary, Encoding::Text));
    assert_eq!(std::fs::read_to_string(&t2).unwrap(), text);
    // Same encoding on request: canonical rewrite.
    let messy = dir.join("messy.log");
    std::fs::write(&messy, "# c\npplog 1  p=2\n3 1 start # x\n2 0 start\n").unwrap();
    // An existing file is replaced only with force (the CLI's --force).
    let e = convert(&messy, &t2, Some(Encoding::Text), false).unwrap_err();
    assert!(e.to_string().contains("exists; not replaced"), "{e}");
    assert_eq!(std::fs::read_to_string(&t2).unwrap(), text);
    convert(&messy, &t2, Some(Encoding::Text), true).unwrap();
    assert_eq!(
        std::fs::read_to_string(&t2).unwrap(),
        "pplog 1 p=2\n2 0 start\n3 1 start\n"
    );
    // Refusals and failures leave files alone.
    let e = convert(&t, &t, None, true).unwrap_err();
    assert!(e.to_string().contains("refusing to overwrite it"), "{e}");
    let e = convert(
        &t,
        &dir.join(".").join("a.log"),
        Some(Encoding::Binary),
        true,
    )
    .unwrap_err();
    assert!(matches!(e, LogError::Refused { .. }), "{e}");
    assert_eq!(std::fs::read_to_string(&t).unwrap(), text);
    let broken = dir.join("broken.log");
    std::fs::write(&broken, "pplog 1 p=1\n1 0 start\n2 0 nonsense\n").unwrap();
    let before = std::fs::read(&b).unwrap();
    let e = convert(&broken, &b, None, true).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3: unknown event 'nonsense' (expected one of start, stop, region_begin, region_end, work_begin, work_end, wait_begin, wait_end, comm_begin, comm_end, cpu, phase, send, recv, coll)",
            broken.display()
        )
    );
    assert_eq!(std::fs::read(&b).unwrap(), before);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
    let e = LogReader::open(&dir.join("missing.log")).unwrap_err();
    assert!(e.to_string().starts_with(&format!(
        "{}: cannot open: ",
        dir.join("missing.log").display()
    )));
    let _ = std::fs::remove_dir_all(&dir);
}
