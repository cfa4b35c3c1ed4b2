//! Reading a log to its end in the log tests: every event and the error that ended it, the
//! events described, and what any reader must guarantee of what it returned.

use std::collections::BTreeMap;

use pp::event::{Event, Symbols, ThreadId};
use pp::log::{LogError, LogReader};

use super::describe;

/// Every event of a log and the error that ended it, if any.
pub fn drain(r: &mut LogReader) -> (Vec<Event>, Option<LogError>) {
    let mut events = Vec::new();
    let mut error = None;
    while let Some(x) = r.next_event() {
        match x {
            Ok(e) => {
                assert!(error.is_none(), "an event after an error");
                events.push(e);
            }
            Err(e) => {
                assert!(error.is_none(), "two errors");
                error = Some(e);
            }
        }
    }
    assert!(r.next_event().is_none());
    (events, error)
}

pub fn read(name: &str, bytes: &[u8]) -> (LogReader, Vec<Event>, Option<LogError>) {
    let mut r = LogReader::from_bytes(name, bytes.to_vec()).expect("header");
    let (events, error) = drain(&mut r);
    (r, events, error)
}

pub fn described(events: &[Event], s: &Symbols) -> Vec<String> {
    events.iter().map(|e| describe(e, s)).collect()
}

/// Checks what any reader must guarantee of what it returned.
pub fn check_invariants(r: &LogReader, events: &[Event], error: &Option<LogError>, name: &str) {
    let p = r.header().p;
    let mut last: BTreeMap<ThreadId, u64> = BTreeMap::new();
    let mut prev = (0u64, 0u32);
    for e in events {
        assert!(e.thread < p);
        assert!(
            (e.t, e.thread) >= prev,
            "global order: {:?} after {prev:?}",
            (e.t, e.thread)
        );
        prev = (e.t, e.thread);
        let l = last.entry(e.thread).or_insert(0);
        assert!(e.t >= *l);
        *l = e.t;
        let _ = describe(e, r.symbols()); // every reference resolves
    }
    if let Some(e) = error {
        let m = e.to_string();
        assert!(m.starts_with(name), "{m}");
        assert!(!m.contains('\n'), "{m}");
    }
}
