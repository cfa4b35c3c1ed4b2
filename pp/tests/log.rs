//! The event log (DESIGN §3): text parsing and its errors, round trips between the encodings,
//! truncated and corrupt binary logs, size per event, conversion of files.

mod log_support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use log_support::{Rng, describe, header, realistic};
use pp::event::{Event, EventKind, Header, Symbols, ThreadId, WaitKind};
use pp::log::{BinaryWriter, Encoding, LogError, LogReader, TextWriter, convert};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use test_support::scratch;

/// Every event of a log and the error that ended it, if any.
fn drain(r: &mut LogReader) -> (Vec<Event>, Option<LogError>) {
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

fn read(name: &str, bytes: &[u8]) -> (LogReader, Vec<Event>, Option<LogError>) {
    let mut r = LogReader::from_bytes(name, bytes.to_vec()).expect("header");
    let (events, error) = drain(&mut r);
    (r, events, error)
}

fn described(events: &[Event], s: &Symbols) -> Vec<String> {
    events.iter().map(|e| describe(e, s)).collect()
}

/// The text log of these lines after the header `pplog 1 p=2`.
fn text_error(lines: &str) -> String {
    let log = format!("pplog 1 p=2 impl=dp\n{lines}\n");
    let (_, _, error) = read("pp.log", log.as_bytes());
    error.expect("an error").to_string()
}

fn header_error(log: &str) -> String {
    LogReader::from_bytes("pp.log", log.as_bytes().to_vec())
        .expect_err("a header error")
        .to_string()
}

// ---------------------------------------------------------------------------------------
// Text encoding

#[test]
fn a_known_text_log_parses_to_its_events() {
    let log = "# fft on 2 threads\n\
               pplog 1 p=2 impl=dp n=256   # run parameters\n\
               \n\
               1000 0 start\n\
               1000 1 start\n\
               1100 0 region_begin 7 fft_rows\n\
               1100 1 region_begin 7 fft_rows team=1,0\n\
               1200 1 cpu 500\n\
               1200 0 work_begin\n\
               1300 1 work_begin row\n\
               1400 1 comm_begin 4096 # a copy\n\
               1450 1 comm_end 4096\n\
               1400 0 wait_begin lock q\n\
               1500 0 wait_end lock q\n\
               1600 0 work_end\n\
               1700 1 work_end row\n\
               1800 0 wait_begin barrier\n\
               1900 1 wait_begin barrier\n\
               2000 0 wait_end barrier\n\
               2000 1 wait_end barrier\n\
               2100 0 region_end 7\n\
               2100 1 region_end 7\n\
               2200 0 phase serial\n\
               3000 1 stop\n\
               3000 0 stop\n";
    let (r, events, error) = read("pp.log", log.as_bytes());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(r.encoding(), Encoding::Text);
    assert!(r.finished());
    assert_eq!(
        r.header(),
        &Header {
            p: 2,
            params: vec![("impl".into(), "dp".into()), ("n".into(), "256".into())]
        }
    );
    let s = r.symbols();
    let got = described(&events, s);
    let want = [
        "1000 0 start",
        "1000 1 start",
        "1100 0 region_begin 7 fft_rows",
        "1100 1 region_begin 7 fft_rows team=[0, 1]",
        "1200 0 work_begin",
        "1200 1 cpu 500",
        "1300 1 work_begin row",
        "1400 0 wait_begin lock q",
        "1400 1 comm_begin 4096",
        "1450 1 comm_end 4096",
        "1500 0 wait_end lock q",
        "1600 0 work_end",
        "1700 1 work_end row",
        "1800 0 wait_begin barrier",
        "1900 1 wait_begin barrier",
        "2000 0 wait_end barrier",
        "2000 1 wait_end barrier",
        "2100 0 region_end 7",
        "2100 1 region_end 7",
        "2200 0 phase serial",
        "3000 0 stop",
        "3000 1 stop",
    ];
    assert_eq!(got, want);
    // The typed events, for one line of each shape.
    assert_eq!(
        events[3].kind,
        EventKind::RegionBegin {
            id: 7,
            name: events[2].kind_name(),
            team: Some(team_of(s, &[0, 1]))
        }
    );
    assert_eq!(
        events[7].kind,
        EventKind::WaitBegin {
            kind: WaitKind::Lock,
            object: Some(sym_of(s, "q"))
        }
    );
}

trait KindName {
    fn kind_name(&self) -> pp::event::Sym;
}
impl KindName for Event {
    fn kind_name(&self) -> pp::event::Sym {
        match self.kind {
            EventKind::RegionBegin { name, .. } => name,
            _ => panic!("not a region"),
        }
    }
}

fn sym_of(s: &Symbols, name: &str) -> pp::event::Sym {
    s.clone().intern(name)
}

fn team_of(s: &Symbols, team: &[ThreadId]) -> pp::event::TeamRef {
    s.clone().intern_team(team)
}

#[test]
fn the_text_writer_output_is_canonical_and_reads_back() {
    let log = "pplog 1   impl=dp p=2 # x\n5 1 start\n  5   0  start  \n9 0 stop\n9 1 stop\n";
    let (r, events, _) = read("pp.log", log.as_bytes());
    let mut w = TextWriter::new(Vec::new(), r.header()).unwrap();
    for e in &events {
        w.write_event(e, r.symbols()).unwrap();
    }
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(
        out,
        "pplog 1 p=2 impl=dp\n5 0 start\n5 1 start\n9 0 stop\n9 1 stop\n"
    );
}

#[test]
fn header_errors_name_the_line_and_the_field() {
    let cases = [
        (
            "",
            "pp.log:1: empty log (expected `pplog 1 p=<threads> [key=value ..]`)",
        ),
        (
            "# only a comment\n\n",
            "pp.log:1: no header: the log has only comments and blank lines (expected `pplog 1 p=<threads> [key=value ..]`)",
        ),
        (
            "hello p=2\n",
            "pp.log:1: header: expected `pplog 1 p=<threads> [key=value ..]`, found 'hello'",
        ),
        (
            "\n# c\npplog\n",
            "pp.log:3: header: missing the version after 'pplog'",
        ),
        (
            "pplog 2 p=1\n",
            "pp.log:1: header: unsupported version '2' (this reader knows version 1)",
        ),
        ("pplog 1 n=5\n", "pp.log:1: header: missing p=<threads>"),
        (
            "pplog 1 p=0\n",
            "pp.log:1: header: p: expected a positive integer, found '0'",
        ),
        (
            "pplog 1 p=x\n",
            "pp.log:1: header: p: expected a non-negative integer, found 'x'",
        ),
        (
            "pplog 1 p=4000000000\n",
            "pp.log:1: header: p: 4000000000 threads is more than pp profiles (at most 1048576)",
        ),
        (
            "pplog 1 p=99999999999\n",
            "pp.log:1: header: p: '99999999999' does not fit in 32 bits",
        ),
        ("pplog 1 p=2 p=3\n", "pp.log:1: header: p given twice"),
        (
            "pplog 1 p=2 n\n",
            "pp.log:1: header: expected key=value, found 'n'",
        ),
        ("pplog 1 p=2 n=1 n=2\n", "pp.log:1: header: n given twice"),
        (
            "pplog 1 p=2 =5\n",
            "pp.log:1: header: parameter key '' is not a token",
        ),
        (
            "pplog 1 p=2 n=\n",
            "pp.log:1: header: n: value '' is not a token",
        ),
        (
            "pplog 1 p=2 \u{1}=1\n",
            "pp.log:1: header: parameter key '\\u{1}' is not a token",
        ),
    ];
    for (log, want) in cases {
        let got = header_error(log);
        assert!(got.starts_with(want), "{log:?}:\n got {got}\nwant {want}");
        assert!(!got.contains('\n'));
    }
}

#[test]
fn event_errors_name_the_line_and_the_field() {
    let cases = [
        ("5 2 start", "pp.log:2: thread 2 is not below p=2"),
        (
            "5 0 begin",
            "pp.log:2: unknown event 'begin' (expected one of start, stop, region_begin",
        ),
        ("5 0", "pp.log:2: missing the event after the thread"),
        ("5", "pp.log:2: missing the thread after the time"),
        (
            "x 0 start",
            "pp.log:2: time: expected a non-negative integer, found 'x'",
        ),
        (
            "-5 0 start",
            "pp.log:2: time: expected a non-negative integer, found '-5'",
        ),
        (
            "+5 0 start",
            "pp.log:2: time: expected a non-negative integer, found '+5'",
        ),
        (
            "5 x start",
            "pp.log:2: thread: expected a non-negative integer, found 'x'",
        ),
        (
            "5 0 start extra",
            "pp.log:2: start: unexpected argument 'extra' (expected `start`)",
        ),
        ("5 0 stop now", "pp.log:2: stop: unexpected argument 'now'"),
        (
            "5 0 region_begin",
            "pp.log:2: region_begin: missing <id> (expected `region_begin <id> <name> [team=<thread>,..]`)",
        ),
        (
            "5 0 region_begin 1",
            "pp.log:2: region_begin: missing <name>",
        ),
        (
            "5 0 region_begin x fft",
            "pp.log:2: region_begin: <id>: expected a non-negative integer, found 'x'",
        ),
        (
            "5 0 region_begin 1 fft team=0 more",
            "pp.log:2: region_begin: unexpected argument 'more'",
        ),
        (
            "5 0 region_begin 1 fft crew=0",
            "pp.log:2: region_begin: expected team=<thread>,<thread>,.. after the name, found 'crew=0'",
        ),
        (
            "5 0 region_begin 1 fft team=0,2",
            "pp.log:2: region_begin: team: thread 2 is not below p=2",
        ),
        (
            "5 0 region_begin 1 fft team=0,,1",
            "pp.log:2: region_begin: team: empty thread in 'team=0,,1'",
        ),
        (
            "5 0 region_begin 1 fft team=",
            "pp.log:2: region_begin: team: empty thread in 'team='",
        ),
        (
            "5 0 region_begin 1 fft team=1,1",
            "pp.log:2: region_begin: team: thread 1 listed twice",
        ),
        (
            "5 0 region_begin 1 fft team=a",
            "pp.log:2: region_begin: team: expected a non-negative integer, found 'a'",
        ),
        ("5 0 region_end", "pp.log:2: region_end: missing <id>"),
        (
            "5 0 region_end 1 2",
            "pp.log:2: region_end: unexpected argument '2'",
        ),
        (
            "5 0 work_begin a b",
            "pp.log:2: work_begin: unexpected argument 'b'",
        ),
        (
            "5 0 work_end a b",
            "pp.log:2: work_end: unexpected argument 'b'",
        ),
        ("5 0 wait_begin", "pp.log:2: wait_begin: missing <kind>"),
        (
            "5 0 wait_begin spin",
            "pp.log:2: wait_begin: <kind>: expected one of lock, barrier, cond, recv, send, other, found 'spin'",
        ),
        (
            "5 0 wait_end lock q r",
            "pp.log:2: wait_end: unexpected argument 'r'",
        ),
        ("5 0 comm_begin", "pp.log:2: comm_begin: missing <bytes>"),
        (
            "5 0 comm_end 1.5",
            "pp.log:2: comm_end: <bytes>: expected a non-negative integer, found '1.5'",
        ),
        (
            "5 0 cpu 99999999999999999999999",
            "pp.log:2: cpu: <thread_cpu_ns>: '99999999999999999999999' does not fit in 64 bits",
        ),
        ("5 0 phase", "pp.log:2: phase: missing <name>"),
        (
            "5 0 phase a\u{7}b",
            "pp.log:2: phase: <name>: 'a\\u{7}b' contains a control character",
        ),
        (
            "5 0 start\n6 1 start\n4 0 stop",
            "pp.log:4: time 4 of thread 0 is before its previous event at 5 (line 2)",
        ),
    ];
    for (lines, want) in cases {
        let got = text_error(lines);
        assert!(got.starts_with(want), "{lines:?}:\n got {got}\nwant {want}");
        assert!(!got.contains('\n'));
    }
    let mut bad = b"pplog 1 p=1\n1 0 start\n2 0 phase \xff\n".to_vec();
    let (_, events, error) = read("pp.log", &bad);
    assert_eq!(events.len(), 1);
    assert!(
        error
            .unwrap()
            .to_string()
            .starts_with("pp.log:3: not valid UTF-8")
    );
    bad.clear();
}

#[test]
fn valid_lines_before_a_bad_one_are_returned_first() {
    let (_, events, error) = read(
        "x.log",
        b"pplog 1 p=2\n9 0 start\n3 1 start\n5 1 nonsense\n1 0 stop\n",
    );
    let times: Vec<u64> = events.iter().map(|e| e.t).collect();
    assert_eq!(times, [3, 9]);
    assert!(
        error
            .unwrap()
            .to_string()
            .starts_with("x.log:4: unknown event 'nonsense'")
    );
}

// ---------------------------------------------------------------------------------------
// Random valid logs

/// A generated log: header, names and teams, the events of each thread in time order.
#[derive(Debug, Clone)]
struct GenLog {
    header: Header,
    symbols: Symbols,
    threads: Vec<Vec<Event>>,
    /// Drives how the threads are cut into blocks and in which order they are flushed.
    blocking: u64,
}

impl GenLog {
    /// Every event in global time order (ties: thread, then order within the thread).
    fn merged(&self) -> Vec<Event> {
        let mut all: Vec<Event> = self.threads.iter().flatten().copied().collect();
        all.sort_by_key(|e| (e.t, e.thread));
        all
    }

    fn text(&self) -> Vec<u8> {
        let mut w = TextWriter::new(Vec::new(), &self.header).unwrap();
        for e in self.merged() {
            w.write_event(&e, &self.symbols).unwrap();
        }
        w.finish().unwrap()
    }

    fn binary(&self) -> Vec<u8> {
        write_blocks(&self.header, &self.symbols, &self.threads, self.blocking)
    }
}

/// Writes the threads' events as blocks of pseudo-random sizes in a pseudo-random flush order.
fn write_blocks(header: &Header, symbols: &Symbols, threads: &[Vec<Event>], seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut w = BinaryWriter::new(Vec::new(), header).unwrap();
    let mut at = vec![0usize; threads.len()];
    loop {
        let open: Vec<usize> = (0..threads.len())
            .filter(|&i| at[i] < threads[i].len())
            .collect();
        if open.is_empty() {
            break;
        }
        let i = open[rng.range(0, open.len() as u64) as usize];
        let n = rng.range(1, 12) as usize;
        let end = (at[i] + n).min(threads[i].len());
        w.write_block(i as ThreadId, &threads[i][at[i]..end], symbols)
            .unwrap();
        at[i] = end;
    }
    w.finish().unwrap()
}

#[derive(Debug, Clone)]
enum GenKind {
    Start,
    Stop,
    RegionBegin(u64, usize, Option<Vec<u32>>),
    RegionEnd(u64),
    WorkBegin(Option<usize>),
    WorkEnd(Option<usize>),
    WaitBegin(usize, Option<usize>),
    WaitEnd(usize, Option<usize>, Option<u32>),
    CommBegin(u64),
    CommEnd(u64),
    Cpu(u64, Option<u64>),
    Phase(usize),
    /// Send or receive: (receive?, peer, tag, bytes, comm).
    Message(bool, u32, u32, u64, Option<usize>),
    /// Collective: (op, bytes, root, comm).
    Coll(usize, u64, Option<u32>, Option<usize>),
}

const POOL: [&str; 6] = ["fft", "rows", "x_1", "über", "a=b", "q"];

fn big() -> impl Strategy<Value = u64> {
    prop_oneof![0..100u64, 0..1_000_000u64, any::<u64>()]
}

fn gen_kind() -> impl Strategy<Value = GenKind> {
    let name = 0..POOL.len();
    let opt = proptest::option::of(0..POOL.len());
    prop_oneof![
        Just(GenKind::Start),
        Just(GenKind::Stop),
        (
            big(),
            name.clone(),
            proptest::option::of(proptest::collection::vec(0..8u32, 1..4))
        )
            .prop_map(|(i, n, t)| GenKind::RegionBegin(i, n, t)),
        big().prop_map(GenKind::RegionEnd),
        opt.clone().prop_map(GenKind::WorkBegin),
        opt.clone().prop_map(GenKind::WorkEnd),
        (0..6usize, opt.clone()).prop_map(|(k, o)| GenKind::WaitBegin(k, o)),
        (0..6usize, opt.clone(), proptest::option::of(0..8u32))
            .prop_map(|(k, o, by)| GenKind::WaitEnd(k, o, by)),
        big().prop_map(GenKind::CommBegin),
        big().prop_map(GenKind::CommEnd),
        (big(), proptest::option::of(big())).prop_map(|(c, d)| GenKind::Cpu(c, d)),
        name.clone().prop_map(GenKind::Phase),
        (any::<bool>(), 0..8u32, any::<u32>(), big(), opt.clone())
            .prop_map(|(r, peer, tag, b, c)| GenKind::Message(r, peer, tag, b, c)),
        (name, big(), proptest::option::of(0..8u32), opt)
            .prop_map(|(op, b, root, c)| GenKind::Coll(op, b, root, c)),
    ]
}

fn thread_events() -> impl Strategy<Value = Vec<(u64, GenKind)>> {
    let gap = prop_oneof![Just(0u64), Just(1u64), 0..5_000u64, 0..(1u64 << 40)];
    proptest::collection::vec((gap, gen_kind()), 0..20)
}

fn gen_log() -> impl Strategy<Value = GenLog> {
    let params = proptest::collection::vec((0..4usize, "[a-z0-9.]{1,6}"), 0..3);
    (
        1..8u32,
        params,
        any::<u64>(),
        prop_oneof![Just(0u64), 0..(1u64 << 62)],
    )
        .prop_flat_map(|(p, params, blocking, base)| {
            (
                Just(p),
                Just(params),
                Just(blocking),
                Just(base),
                proptest::collection::vec(thread_events(), p as usize),
            )
        })
        .prop_map(|(p, params, blocking, base, raw)| {
            let keys = ["impl", "n", "machine", "rep"];
            let mut header = Header {
                p,
                params: Vec::new(),
            };
            for (k, v) in params {
                if !header.params.iter().any(|(key, _)| key == keys[k]) {
                    header.params.push((keys[k].to_string(), v));
                }
            }
            let mut symbols = Symbols::default();
            let mut threads = Vec::new();
            for (th, evs) in raw.into_iter().enumerate() {
                let mut t = base;
                let mut out = Vec::new();
                for (gap, k) in evs {
                    t += gap;
                    let mut name = |i: usize| symbols.intern(POOL[i]);
                    let kind = match k {
                        GenKind::Start => EventKind::Start,
                        GenKind::Stop => EventKind::Stop,
                        GenKind::RegionBegin(id, n, team) => {
                            let name = name(n);
                            let team = team.map(|t| {
                                let t: Vec<u32> = t.into_iter().map(|x| x % p).collect();
                                symbols.intern_team(&t)
                            });
                            EventKind::RegionBegin { id, name, team }
                        }
                        GenKind::RegionEnd(id) => EventKind::RegionEnd { id },
                        GenKind::WorkBegin(l) => EventKind::WorkBegin { label: l.map(name) },
                        GenKind::WorkEnd(l) => EventKind::WorkEnd { label: l.map(name) },
                        GenKind::WaitBegin(k, o) => EventKind::WaitBegin {
                            kind: WaitKind::ALL[k],
                            object: o.map(name),
                        },
                        GenKind::WaitEnd(k, o, by) => EventKind::WaitEnd {
                            kind: WaitKind::ALL[k],
                            object: o.map(name),
                            by: by.map(|b| b % p),
                        },
                        GenKind::CommBegin(b) => EventKind::CommBegin { bytes: b },
                        GenKind::CommEnd(b) => EventKind::CommEnd { bytes: b },
                        GenKind::Cpu(c, d) => EventKind::Cpu {
                            thread_cpu_ns: c,
                            run_delay_ns: d,
                        },
                        GenKind::Phase(n) => EventKind::Phase { name: name(n) },
                        GenKind::Message(false, peer, tag, bytes, c) => EventKind::Send {
                            peer: peer % p,
                            tag,
                            bytes,
                            comm: c.map(name),
                        },
                        GenKind::Message(true, peer, tag, bytes, c) => EventKind::Recv {
                            peer: peer % p,
                            tag,
                            bytes,
                            comm: c.map(name),
                        },
                        GenKind::Coll(op, bytes, root, c) => EventKind::Coll {
                            op: name(op),
                            bytes,
                            root: root.map(|r| r % p),
                            comm: c.map(name),
                        },
                    };
                    out.push(Event {
                        t,
                        thread: th as u32,
                        kind,
                    });
                }
                threads.push(out);
            }
            GenLog {
                header,
                symbols,
                threads,
                blocking,
            }
        })
}

/// Checks what any reader must guarantee of what it returned.
fn check_invariants(r: &LogReader, events: &[Event], error: &Option<LogError>, name: &str) {
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

// ---------------------------------------------------------------------------------------
// Truncated and corrupt binary logs

/// A small binary log with every kind of item: several threads, names, teams, blocks out of
/// time order.
fn small_log() -> (Vec<u8>, Vec<Vec<String>>) {
    let mut symbols = Symbols::default();
    let mut threads: Vec<Vec<Event>> = vec![Vec::new(); 3];
    let mut blocks: Vec<(ThreadId, Vec<Event>)> = Vec::new();
    let h = header(3);
    let produced = realistic(3, 40, 7, 11, &mut symbols, |th, evs, _| {
        threads[th as usize].extend_from_slice(evs);
        blocks.push((th, evs.to_vec()));
    });
    assert!(produced >= 40);
    let mut w = BinaryWriter::new(Vec::new(), &h).unwrap();
    for (th, evs) in &blocks {
        w.write_block(*th, evs, &symbols).unwrap();
    }
    let bytes = w.finish().unwrap();
    let per_thread = threads.iter().map(|evs| described(evs, &symbols)).collect();
    (bytes, per_thread)
}

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

/// Valid logs whose mutations the fuzz tests read.
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

// ---------------------------------------------------------------------------------------
// Size and files

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
fn convert_goes_both_ways_through_files_and_refuses_to_overwrite_its_input() {
    let dir = scratch("convert");
    let text = "pplog 1 p=2 impl=dp\n1 0 start\n1 1 start\n5 0 region_begin 1 fft team=0,1\n\
                9 1 phase serial\n12 0 stop\n12 1 stop\n";
    let t = dir.join("a.log");
    let b = dir.join("a.bin");
    let t2 = dir.join("b.log");
    std::fs::write(&t, text).unwrap();
    let stats = convert(&t, &b, None).unwrap();
    assert_eq!(
        (stats.from, stats.to, stats.events),
        (Encoding::Text, Encoding::Binary, 6)
    );
    assert_eq!(stats.bytes_in, text.len() as u64);
    assert!(std::fs::read(&b).unwrap().starts_with(b"PPLOG\0"));
    let stats = convert(&b, &t2, None).unwrap();
    assert_eq!((stats.from, stats.to), (Encoding::Binary, Encoding::Text));
    assert_eq!(std::fs::read_to_string(&t2).unwrap(), text);
    // Same encoding on request: canonical rewrite.
    let messy = dir.join("messy.log");
    std::fs::write(&messy, "# c\npplog 1  p=2\n3 1 start # x\n2 0 start\n").unwrap();
    convert(&messy, &t2, Some(Encoding::Text)).unwrap();
    assert_eq!(
        std::fs::read_to_string(&t2).unwrap(),
        "pplog 1 p=2\n2 0 start\n3 1 start\n"
    );
    // Refusals and failures leave files alone.
    let e = convert(&t, &t, None).unwrap_err();
    assert!(e.to_string().contains("refusing to overwrite it"), "{e}");
    let e = convert(&t, &dir.join(".").join("a.log"), Some(Encoding::Binary)).unwrap_err();
    assert!(matches!(e, LogError::Refused { .. }), "{e}");
    assert_eq!(std::fs::read_to_string(&t).unwrap(), text);
    let broken = dir.join("broken.log");
    std::fs::write(&broken, "pplog 1 p=1\n1 0 start\n2 0 nonsense\n").unwrap();
    let before = std::fs::read(&b).unwrap();
    let e = convert(&broken, &b, None).unwrap_err();
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

#[test]
fn writers_refuse_what_the_text_encoding_cannot_carry() {
    let mut s = Symbols::default();
    let spaced = s.intern("two words");
    let hashed = s.intern("a#b");
    for name in [spaced, hashed] {
        let e = Event {
            t: 1,
            thread: 0,
            kind: EventKind::Phase { name },
        };
        let mut tw = TextWriter::new(Vec::new(), &header(1)).unwrap();
        assert!(tw.write_event(&e, &s).is_err());
        assert_eq!(tw.finish().unwrap(), b"pplog 1 p=1 impl=dp n=256\n");
        let mut bw = BinaryWriter::new(Vec::new(), &header(1)).unwrap();
        let err = bw.write_block(0, &[e], &s).unwrap_err();
        assert!(err.to_string().contains("is not a token"), "{err}");
    }
    for bad in [
        Header {
            p: 0,
            params: vec![],
        },
        Header {
            p: 1,
            params: vec![("n".into(), "1".into()), ("n".into(), "2".into())],
        },
        Header {
            p: 1,
            params: vec![("k=v".into(), "1".into())],
        },
        Header {
            p: 1,
            params: vec![("k".into(), "a b".into())],
        },
    ] {
        assert!(TextWriter::new(Vec::new(), &bad).is_err(), "{bad:?}");
        assert!(BinaryWriter::new(Vec::new(), &bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_byte_order_mark_and_crlf_line_ends_are_accepted() {
    let (r, events, error) = read(
        "w.log",
        b"\xEF\xBB\xBFpplog 1 p=1\r\n5 0 start\r\n9 0 stop\r\n",
    );
    assert!(error.is_none(), "{error:?}");
    assert_eq!(r.header().p, 1);
    assert_eq!(events.len(), 2);
}
