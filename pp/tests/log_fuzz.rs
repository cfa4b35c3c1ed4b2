//! Mutated binary logs never panic: random flips, sets, inserts, deletes and cuts of valid
//! logs (a realistic corpus and random logs of every event kind) read to an end, in memory
//! and through files, and the file reader agrees with the in-memory one (property tests).

mod log_support;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use log_support::generated::{gen_log, small_log};
use log_support::reading::{check_invariants, drain};
use log_support::{header, realistic};
use pp::event::Symbols;
use pp::log::{BinaryWriter, LogReader};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use test_support::scratch;

/// Valid logs whose mutations the fuzz tests read.
fn corpus() -> &'static Vec<Vec<u8>> {
    static CORPUS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut logs = vec![small_log().0];
        for (p, n, block, seed) in [
            (1, 30, 5, 1),
            (2, 60, 9, 2),
            (5, 80, 13, 3),
            (8, 120, 50, 4),
        ] {
            let mut symbols = Symbols::default();
            let mut w = BinaryWriter::new(Vec::new(), &header(p)).unwrap();
            realistic(p, n, block, seed, &mut symbols, |th, evs, s| {
                w.write_block(th, evs, s).unwrap();
            });
            logs.push(w.finish().unwrap());
        }
        // Random logs with every event kind, big values and teams.
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strategy = gen_log();
        while logs.len() < 16 {
            let log = strategy.new_tree(&mut runner).unwrap().current();
            if log.threads.iter().map(Vec::len).sum::<usize>() >= 10 {
                logs.push(log.binary());
            }
        }
        logs
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(prop::sample::Index, u8),
    Set(prop::sample::Index, u8),
    Insert(prop::sample::Index, u8),
    Delete(prop::sample::Index),
    Truncate(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<prop::sample::Index>(), 0..8u8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        2 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        2 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        2 => any::<prop::sample::Index>().prop_map(Mutation::Delete),
        1 => any::<prop::sample::Index>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(bytes: &mut Vec<u8>, mutations: &[Mutation]) {
    for m in mutations {
        if bytes.is_empty() {
            return;
        }
        match m {
            Mutation::Flip(i, bit) => {
                let i = i.index(bytes.len());
                bytes[i] ^= 1 << bit;
            }
            Mutation::Set(i, b) => {
                let i = i.index(bytes.len());
                bytes[i] = *b;
            }
            Mutation::Insert(i, b) => {
                let i = i.index(bytes.len() + 1);
                bytes.insert(i, *b);
            }
            Mutation::Delete(i) => {
                let i = i.index(bytes.len());
                bytes.remove(i);
            }
            Mutation::Truncate(i) => {
                let i = i.index(bytes.len());
                bytes.truncate(i);
            }
        }
    }
}

/// Reads a mutated log to its end: nothing panics, every returned event is valid, the
/// reader stops.
fn read_mutated(bytes: Vec<u8>) {
    let len = bytes.len();
    let Ok(mut r) = LogReader::from_bytes("m.log", bytes) else {
        return;
    };
    let (events, error) = drain(&mut r);
    assert!(events.len() <= len, "more events than bytes");
    check_invariants(&r, &events, &error, "m.log");
}

/// Cases the in-memory fuzz test runs (the file variant runs `FILE_CASES`).
const MEMORY_CASES: u32 = 200_000;
const FILE_CASES: u32 = 5_000;
static MEMORY_RAN: AtomicU32 = AtomicU32::new(0);
static FILE_RAN: AtomicU32 = AtomicU32::new(0);

/// Counts the cases a fuzz test ran and says so when it ran them all (`--nocapture`).
fn count_case(counter: &AtomicU32, cases: u32, test: &str) {
    let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
    if n == cases {
        println!("{test}: {n} mutated logs read");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: MEMORY_CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Corrupt input never panics: random flips, sets, inserts, deletes and cuts of valid logs.
    #[test]
    fn mutated_binary_logs_never_panic(
        which in 0..16usize,
        mutations in proptest::collection::vec(mutation(), 1..5),
    ) {
        let mut bytes = corpus()[which].clone();
        mutate(&mut bytes, &mutations);
        read_mutated(bytes);
        count_case(&MEMORY_RAN, MEMORY_CASES, "mutated_binary_logs_never_panic");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: FILE_CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The same through files (the streaming reader with its own buffers); the file reader
    /// agrees with the in-memory reader.
    #[test]
    fn mutated_binary_log_files_never_panic(
        which in 0..16usize,
        mutations in proptest::collection::vec(mutation(), 1..5),
    ) {
        let mut bytes = corpus()[which].clone();
        mutate(&mut bytes, &mutations);
        count_case(&FILE_RAN, FILE_CASES, "mutated_binary_log_files_never_panic");
        let path = fuzz_file();
        std::fs::write(&path, &bytes).unwrap();
        let file = LogReader::open(&path);
        let mem = LogReader::from_bytes(&path.display().to_string(), bytes);
        match (file, mem) {
            (Ok(mut f), Ok(mut m)) => {
                let (fe, ferr) = drain(&mut f);
                let (me, merr) = drain(&mut m);
                prop_assert_eq!(&fe, &me);
                prop_assert_eq!(ferr.map(|e| e.to_string()), merr.map(|e| e.to_string()));
                check_invariants(&f, &fe, &None, "");
            }
            (Err(f), Err(m)) => prop_assert_eq!(f.to_string(), m.to_string()),
            (f, m) => prop_assert!(false, "file {:?} vs memory {:?}", f.is_ok(), m.is_ok()),
        }
    }
}

fn fuzz_file() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| scratch("fuzz")).join("m.log")
}
