//! A text log's events are sorted in bounded memory (docs/event-log.md#limits): with runs
//! forced small, so that they spill to the temporary file and are merged, the reader returns
//! the events, lines, symbols and error of a stable sort of the whole log in memory, on random
//! logs whose threads are interleaved at random in the file; and `pp -l` and `pp convert` read
//! a text log under an address-space limit that the whole log in memory exceeds (the reader of
//! before, which kept every event, aborted there).

use pp::event::{Event, Symbols};
use pp::log::{LogReader, Place, TextWriter};
use proptest::prelude::*;
use test_support::{pp, scratch};

mod log_support;
use log_support::generated::gen_log;
use log_support::{Rng, describe};

/// What a reader returns: each event described with its place, then the error, if any.
fn read_all(mut r: LogReader) -> (Vec<(String, Place)>, Option<String>, Symbols) {
    let mut out = Vec::new();
    let error = r
        .for_each_placed(|e, s, place| out.push((describe(e, s), place)))
        .err()
        .map(|e| e.to_string());
    let symbols = r.symbols().clone();
    (out, error, symbols)
}

/// The threads' events interleaved at random (each thread's in its order), with blank and
/// comment lines between them and, if `bad`, a malformed line somewhere; the text and every
/// event with its line, in the file's order, up to the malformed line.
fn shuffled(
    header: &pp::event::Header,
    symbols: &Symbols,
    threads: &[Vec<Event>],
    seed: u64,
    bad: bool,
) -> (Vec<u8>, Vec<(Event, u64)>) {
    let mut rng = Rng::new(seed);
    let mut text = TextWriter::new(Vec::new(), header)
        .unwrap()
        .finish()
        .unwrap();
    let header_end = text.len();
    let mut line = 1u64;
    let mut order = Vec::new();
    let total: usize = threads.iter().map(Vec::len).sum();
    let bad_at = if bad {
        Some(rng.range(0, total as u64 + 1) as usize)
    } else {
        None
    };
    let mut at = vec![0usize; threads.len()];
    let mut written = 0usize;
    loop {
        if rng.chance(5) {
            text.extend_from_slice(if rng.chance(2) { b"\n" } else { b"  # c\n" });
            line += 1;
        }
        if bad_at == Some(written) {
            text.extend_from_slice(b"5 0 no_such_event\n");
            break;
        }
        let open: Vec<usize> = (0..threads.len())
            .filter(|&i| at[i] < threads[i].len())
            .collect();
        if open.is_empty() {
            break;
        }
        let i = open[rng.range(0, open.len() as u64) as usize];
        let e = threads[i][at[i]];
        at[i] += 1;
        let mut w = TextWriter::new(Vec::new(), header).unwrap();
        w.write_event(&e, symbols).unwrap();
        let one = w.finish().unwrap();
        text.extend_from_slice(&one[header_end..]);
        line += 1;
        order.push((e, line));
        written += 1;
    }
    (text, order)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn spilled_runs_give_the_events_of_the_sort_in_memory(
        log in gen_log(), seed in any::<u64>(), run in 1usize..12, bad in any::<bool>()
    ) {
        let (text, order) = shuffled(&log.header, &log.symbols, &log.threads, seed, bad);
        // The specification: a stable sort of the file's events by (time, thread).
        let mut sorted = order.clone();
        sorted.sort_by_key(|(e, _)| (e.t, e.thread));
        let want: Vec<(String, Place)> = sorted
            .iter()
            .map(|(e, line)| (describe(e, &log.symbols), Place::Line(*line)))
            .collect();

        let whole = read_all(LogReader::from_bytes("r.log", text.clone()).unwrap());
        let runs = read_all(LogReader::from_text_in_runs("r.log", &text, run).unwrap());
        prop_assert_eq!(&whole.0, &want);
        prop_assert_eq!(&runs.0, &want);
        prop_assert_eq!(&runs.1, &whole.1);
        prop_assert_eq!(runs.1.is_some(), bad);
        prop_assert_eq!(&runs.2, &whole.2);

        // One event at a time, with the place after each.
        let mut r = LogReader::from_text_in_runs("r.log", &text, run).unwrap();
        let mut one = Vec::new();
        while let Some(Ok(e)) = r.next_event() {
            one.push((describe(&e, r.symbols()), r.place()));
        }
        prop_assert_eq!(one, want);
        prop_assert!(r.next_event().is_none());
    }
}

/// A realistic text log (8 threads: regions, barriers, locks, `cpu` samples) of `events`.
fn realistic_text(events: u64) -> Vec<u8> {
    let header = log_support::header(8);
    let mut threads: Vec<Vec<Event>> = vec![Vec::new(); 8];
    let mut symbols = Symbols::default();
    log_support::realistic(8, events, 4096, 5, &mut symbols, |th, evs, _| {
        threads[th as usize].extend_from_slice(evs)
    });
    let mut all: Vec<Event> = threads.into_iter().flatten().collect();
    all.sort_by_key(|e| (e.t, e.thread));
    let mut w = TextWriter::new(Vec::new(), &header).unwrap();
    for e in &all {
        w.write_event(e, &symbols).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn pp_reads_a_text_log_under_an_address_space_limit_the_whole_log_exceeds() {
    // 2.5 M events kept whole take 56 bytes each (140 MB, 224 MB while the vector grows); the
    // runs take 28 MB and the merge's buffers a few more.
    const LIMIT: u64 = 128 << 20;
    let dir = scratch("text-log-bounded");
    let log = dir.join("big.log");
    std::fs::write(&log, realistic_text(2_500_000)).unwrap();
    let log = log.to_str().unwrap();
    let out_log = dir.join("big.bin");
    let runs: [&[&str]; 2] = [&["-l", log], &["convert", log, out_log.to_str().unwrap()]];
    for args in runs {
        let mut cmd = pp!();
        cmd.args(args).env("TMPDIR", &dir);
        let out = test_support::limit(&mut cmd, libc::RLIMIT_AS, LIMIT)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pp {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The binary log converted under the limit profiles as the text log does.
    let text = pp!().args(["-l", log]).output().unwrap();
    let binary = pp!()
        .args(["-l", out_log.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(text.status.success() && binary.status.success());
    assert_eq!(text.stdout, binary.stdout);
}

#[test]
fn a_temporary_folder_that_cannot_be_written_is_a_one_line_error_for_a_long_text_log() {
    // More events than one run holds, so that a run goes to the temporary file.
    let dir = scratch("text-log-no-tmp");
    let log = dir.join("run.log");
    std::fs::write(&log, realistic_text(600_000)).unwrap();
    let err = test_support::error_of(
        pp!()
            .args(["-l", log.to_str().unwrap()])
            .env("TMPDIR", dir.join("missing")),
    );
    assert!(err.contains("run.log"), "{err}");
    assert!(err.contains("temporary file"), "{err}");
}
