//! The event log's text encoding (docs/event-log.md): a known log parses to its events, the
//! writer's output is canonical, every header and event error names its line and field, valid lines
//! before a bad one come first, a byte order mark and CRLF line ends are accepted, and what the
//! text encoding cannot carry is refused by both writers.

mod log_support;

use log_support::header;
use log_support::reading::{described, read};
use pp::event::{Event, EventKind, Header, Symbols, ThreadId, WaitKind};
use pp::log::{BinaryWriter, Encoding, LogReader, TextWriter};

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
