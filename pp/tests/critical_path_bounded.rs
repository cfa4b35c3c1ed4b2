//! `pp critical-path` in bounded memory: the compact graph walked back over its spilled
//! records, and the make-up read back from the spilled stretches, give the answers of the
//! whole graph held in memory (`CriticalPath::of`, `Makeup::of` over `Stretches`) on random
//! logs; and the command runs under an address-space limit that the whole graph exceeds.

use pp::graph::report::Report;
use pp::graph::{CriticalPath, Makeup, PathSink};
use pp::log::LogReader;
use pp::profile::profile_log;
use proptest::prelude::*;
use test_support::{pp, scratch};

mod log_support;
use log_support::activity::random_log;
use log_support::generated::gen_log;
use log_support::realistic_log;

/// The path, its make-up, the arc counts, the unknown causes and the events.
type Answer = (CriticalPath, Makeup, [u64; 5], u64, u64);

/// The whole graph and every stretch in memory (`None`: nothing to analyse).
fn in_memory(log: &[u8]) -> Option<Answer> {
    let mut reader = LogReader::from_bytes("test.log", log.to_vec()).ok()?;
    let mut sink = PathSink::new(reader.header());
    let profiled = profile_log(&mut reader, None, Some(&mut sink));
    profiled.profile.ok()?;
    let graph = sink.builder.finish();
    let path = CriticalPath::of(&graph);
    let makeup = Makeup::of(&path, &sink.stretches);
    Some((
        path,
        makeup,
        graph.arc_counts(),
        graph.unknown_causes,
        graph.events(),
    ))
}

/// `pp critical-path`'s report.
fn bounded(log: &[u8]) -> Option<Answer> {
    let reader = LogReader::from_bytes("test.log", log.to_vec()).ok()?;
    let r = Report::from_log(reader, "test.log").ok()?;
    Some((
        r.path,
        r.makeup,
        r.graph.arc_counts(),
        r.graph.unknown_causes,
        r.graph.events(),
    ))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn bounded_equals_in_memory_on_random_logs_of_every_kind(log in gen_log()) {
        let text = log.text();
        prop_assert_eq!(bounded(&text), in_memory(&text));
        let binary = log.binary();
        prop_assert_eq!(bounded(&binary), in_memory(&binary));
    }

    #[test]
    fn bounded_equals_in_memory_on_realistic_logs(
        seed in any::<u64>(), p in 1u32..7, events in 20u64..4000, block in 1usize..300
    ) {
        let log = realistic_log(p, events, block, seed);
        let answer = in_memory(&log);
        prop_assert!(answer.is_some());
        prop_assert_eq!(bounded(&log), answer);
    }

    #[test]
    fn bounded_equals_in_memory_on_logs_with_messages_and_locks(
        seed in any::<u64>(), p in 1u32..6, rounds in 1usize..20,
        messages in any::<bool>(), locks in any::<bool>()
    ) {
        let (log, _) = random_log(seed, p, rounds, messages, locks);
        let answer = in_memory(log.as_bytes());
        prop_assert!(answer.is_some());
        prop_assert_eq!(bounded(log.as_bytes()), answer);
    }
}

#[test]
fn the_records_spill_to_a_file_and_still_give_the_same_answer() {
    // Enough events that the records pass the spill's memory (8 MB) and go to the file.
    let log = realistic_log(8, 2_000_000, 4096, 11);
    let answer = in_memory(&log).unwrap();
    assert!(answer.4 >= 2_000_000);
    assert_eq!(bounded(&log), Some(answer));
}

#[test]
fn pp_critical_path_runs_under_an_address_space_limit_the_whole_graph_exceeds() {
    // The whole graph and every stretch of 3 M events take about 41 bytes an event (123 MB,
    // more while vectors grow); the bounded pass needs its spills' buffers (8 MB) and, as it
    // runs on up to six threads, their stacks and glibc's per-thread malloc arenas (each
    // reserves 64 MiB of address space, none of it resident). Under 96 MiB the debug binary
    // failed 3 runs in 6 (an arena had taken the room) and under 104 MiB none in 20, so the
    // limit is 112 MiB: still below what the whole graph needs.
    const LIMIT: u64 = 112 << 20;
    let dir = scratch("bounded-critical-path");
    let log = dir.join("big.log");
    std::fs::write(&log, realistic_log(8, 3_000_000, 4096, 7)).unwrap();
    let mut cmd = pp!();
    cmd.args(["critical-path", log.to_str().unwrap()])
        .env("TMPDIR", &dir);
    let out = test_support::limit(&mut cmd, libc::RLIMIT_AS, LIMIT)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("critical path: "), "{text}");
    assert!(text.contains(" events, remote arcs: "), "{text}");
}

#[test]
fn a_temporary_folder_that_cannot_be_written_is_a_one_line_error() {
    // Enough records to pass the spill's memory, so that the file is needed.
    let dir = scratch("bounded-no-tmp");
    let log = dir.join("run.log");
    std::fs::write(&log, realistic_log(8, 2_000_000, 4096, 3)).unwrap();
    let missing = dir.join("missing");
    let err = test_support::error_of(
        pp!()
            .args(["critical-path", log.to_str().unwrap()])
            .env("TMPDIR", &missing),
    );
    assert!(err.contains("run.log"), "{err}");
    assert!(err.contains("a temporary file in"), "{err}");
    assert!(err.contains("missing"), "{err}");
}

#[test]
fn one_thread_and_four_give_the_same_report() {
    // The pass on one thread (`PP_THREADS=1`) and on four (reading, attribution, graph,
    // records: docs/critical-path.md#cost), over several blocks of each thread.
    let dir = scratch("critical-path-threads");
    let log = dir.join("run.log");
    std::fs::write(&log, realistic_log(8, 300_000, 4096, 5)).unwrap();
    for format in ["text", "json"] {
        let run = |threads: &str| {
            let out = pp!()
                .args(["critical-path", log.to_str().unwrap(), "--format", format])
                .env("PP_THREADS", threads)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            out.stdout
        };
        let one = run("1");
        assert!(one.len() > 100, "{}", String::from_utf8_lossy(&one));
        assert_eq!(one, run("2"), "--format {format}");
    }
}
