//! One small text log per rule of docs/event-log.md ("Rules a log must keep"): each gives
//! exactly one warning line of its kind, with its count and the place of its first violation;
//! a rule broken 1000 times is still one line; valid logs give none.

use pp::event::{Event, EventKind, Header, Symbols, TeamRef};
use pp::log::LogReader;
use pp::profile::{Sweep, profile_log};

/// The warnings of a text log.
fn warnings(log: &str) -> Vec<String> {
    let mut reader = LogReader::from_bytes("rules.log", log.as_bytes().to_vec()).unwrap();
    profile_log(&mut reader, None, None)
        .whole("rules.log")
        .unwrap()
        .warnings
}

/// How the reader names line `line` of a test log.
fn at(line: usize) -> String {
    format!("line {line}")
}

/// `log` breaks the rule of `kind` (the start of its warning, `rule N: what`) `count` times
/// (`once`, `2 times`), first on line `line`; `also` are the other warnings it must give.
fn breaks(log: &str, kind: &str, count: &str, line: usize, also: &[&str]) -> String {
    let w = warnings(log);
    let mine: Vec<&String> = w.iter().filter(|l| l.starts_with(kind)).collect();
    assert_eq!(mine.len(), 1, "{kind}: {w:#?}");
    let expected = format!("{kind}: {count}, first at {} (", at(line));
    assert!(mine[0].starts_with(&expected), "{expected}\n{w:#?}");
    let others: Vec<&String> = w.iter().filter(|l| !l.starts_with(kind)).collect();
    assert_eq!(others.len(), also.len(), "{kind}: {w:#?}");
    for (o, a) in others.iter().zip(also) {
        assert!(o.starts_with(a), "{a}: {w:#?}");
    }
    mine[0].clone()
}

#[test]
fn a_thread_started_twice() {
    let line = breaks(
        "pplog 1 p=1\n0 0 start\n5 0 start\n10 0 stop\n",
        "rule 3: start of a thread that already started",
        "once",
        3,
        &[],
    );
    assert!(line.ends_with("(thread 0 at 5 ns); ignored"), "{line}");
}

#[test]
fn a_thread_stopped_twice() {
    breaks(
        "pplog 1 p=1\n0 0 start\n5 0 stop\n10 0 stop\n",
        "rule 4: stop of a thread that already stopped",
        "once",
        4,
        &[],
    );
}

#[test]
fn events_before_the_start_of_their_thread() {
    // Thread 0 works before its start; thread 1 never starts but names a phase.
    breaks(
        "pplog 1 p=2\n0 0 work_begin\n1 0 work_end\n2 0 start\n3 1 phase x\n10 0 stop\n",
        "rule 5: event of a thread before its start",
        "3 times",
        2,
        &[],
    );
}

#[test]
fn events_after_the_stop_of_their_thread() {
    breaks(
        "pplog 1 p=2\n0 0 start\n0 1 start\n5 0 stop\n6 0 work_begin\n7 0 work_end\n10 1 stop\n",
        "rule 5: event of a thread after its stop",
        "2 times",
        5,
        &[],
    );
}

#[test]
fn events_after_the_last_stop_also_move_the_window() {
    let w = warnings("pplog 1 p=1\n0 0 start\n5 0 stop\n8 0 phase late\n");
    assert_eq!(w.len(), 2, "{w:#?}");
    assert!(w[0].starts_with(&format!(
        "rule 5: event of a thread after its stop: once, first at {} (thread 0 phase at 8 ns)",
        at(4)
    )));
    assert_eq!(
        w[1],
        "rule 18: events after the last stop (the last stop is at 5 ns, the last event at 8 \
         ns); the window ends at the last event"
    );
}

/// A log of one thread with `body` (lines from line 3) between its start and its stop.
fn one_thread(body: &str) -> String {
    format!("pplog 1 p=1\n0 0 start\n{body}100 0 stop\n")
}

#[test]
fn every_nesting_but_comm_or_wait_inside_work_is_reported() {
    let cases = [
        (
            "work_begin",
            "work_begin",
            "work_end",
            "work_end",
            "work_begin inside an open work",
        ),
        (
            "wait_begin lock",
            "work_begin",
            "work_end",
            "wait_end lock",
            "work_begin inside an open wait",
        ),
        (
            "comm_begin 8",
            "work_begin",
            "work_end",
            "comm_end 8",
            "work_begin inside an open comm",
        ),
        (
            "wait_begin lock",
            "wait_begin cond",
            "wait_end cond",
            "wait_end lock",
            "wait_begin inside an open wait",
        ),
        (
            "comm_begin 8",
            "wait_begin recv",
            "wait_end recv",
            "comm_end 8",
            "wait_begin inside an open comm",
        ),
        (
            "wait_begin barrier",
            "comm_begin 8",
            "comm_end 8",
            "wait_end barrier",
            "comm_begin inside an open wait",
        ),
        (
            "comm_begin 8",
            "comm_begin 4",
            "comm_end 4",
            "comm_end 8",
            "comm_begin inside an open comm",
        ),
    ];
    for (outer, inner, inner_end, outer_end, what) in cases {
        let log = one_thread(&format!(
            "10 0 {outer}\n20 0 {inner}\n30 0 {inner_end}\n40 0 {outer_end}\n"
        ));
        let line = breaks(&log, &format!("rule 6: {what}"), "once", 4, &[]);
        assert!(
            line.ends_with("(thread 0 at 20 ns); the innermost interval counts"),
            "{line}"
        );
    }
    // What the rule allows: comm and wait inside work.
    let allowed = one_thread(
        "10 0 work_begin\n20 0 comm_begin 8\n30 0 comm_end 8\n40 0 wait_begin lock\n\
         50 0 wait_end lock\n60 0 work_end\n",
    );
    assert_eq!(warnings(&allowed), Vec::<String>::new());
}

#[test]
fn an_end_that_crosses_the_intervals_inside_it() {
    breaks(
        &one_thread("10 0 work_begin\n20 0 comm_begin 8\n30 0 work_end\n"),
        "rule 7: end of an interval that is not the innermost open one",
        "once",
        5,
        &[],
    );
}

#[test]
fn an_end_without_a_begin() {
    breaks(
        &one_thread("10 0 wait_end lock\n20 0 comm_end 8\n"),
        "rule 8: end without an open interval of its type",
        "2 times",
        3,
        &[],
    );
}

#[test]
fn ends_that_do_not_repeat_their_begins() {
    let cases = [
        (
            "work_begin a",
            "work_end b",
            "work_end whose label differs from its work_begin's",
        ),
        (
            "work_begin a",
            "work_end",
            "work_end whose label differs from its work_begin's",
        ),
        (
            "wait_begin lock",
            "wait_end barrier",
            "wait_end whose kind differs from its wait_begin's",
        ),
        (
            "wait_begin lock m1",
            "wait_end lock m2",
            "wait_end whose object differs from its wait_begin's",
        ),
        (
            "comm_begin 8",
            "comm_end 16",
            "comm_end whose bytes differ from its comm_begin's",
        ),
    ];
    for (begin, end, what) in cases {
        let log = one_thread(&format!("10 0 {begin}\n20 0 {end}\n"));
        breaks(&log, &format!("rule 9: {what}"), "once", 4, &[]);
    }
    // The kind of a wait is its begin's: a lock wait ended as a barrier is sl, not li.
    let line = breaks(
        "pplog 1 p=2\n0 0 start\n0 1 start\n0 0 region_begin 1 r\n0 0 work_begin\n\
         0 1 wait_begin lock\n10 1 wait_end barrier\n20 0 work_end\n20 0 region_end 1\n\
         30 0 stop\n30 1 stop\n",
        "rule 9: wait_end whose kind differs from its wait_begin's",
        "once",
        7,
        &[],
    );
    assert!(
        line.contains("(thread 1 at 10 ns, lock then barrier)"),
        "{line}"
    );
}

#[test]
fn a_stop_with_intervals_open() {
    breaks(
        "pplog 1 p=1\n0 0 start\n10 0 work_begin\n20 0 comm_begin 8\n30 0 stop\n",
        "rule 10: stop with intervals still open",
        "once",
        5,
        &[],
    );
}

#[test]
fn a_region_end_of_a_region_that_is_not_open() {
    breaks(
        &one_thread("10 0 region_end 7\n"),
        "rule 11: region_end of a region that is not open",
        "once",
        3,
        &[],
    );
}

#[test]
fn a_region_begun_twice_by_one_thread_is_one_region() {
    // It used to say "region 1 never ended": the second begin counted as another opening.
    let line = breaks(
        &one_thread("10 0 region_begin 1 r\n20 0 region_begin 1 r\n30 0 region_end 1\n"),
        "rule 12: region_begin of a region the thread already began",
        "once",
        4,
        &[],
    );
    assert!(
        line.ends_with("(thread 0 at 20 ns, region 1); ignored"),
        "{line}"
    );
}

#[test]
fn a_region_ended_by_a_thread_that_did_not_begin_it() {
    breaks(
        "pplog 1 p=2\n0 0 start\n0 1 start\n10 0 region_begin 1 r\n20 1 region_end 1\n\
         30 0 stop\n30 1 stop\n",
        "rule 13: region_end by a thread that did not begin the region",
        "once",
        5,
        &[],
    );
}

#[test]
fn regions_of_a_thread_that_cross() {
    breaks(
        &one_thread(
            "10 0 region_begin 1 a\n20 0 region_begin 2 b\n30 0 region_end 1\n\
             40 0 region_end 2\n",
        ),
        "rule 14: region_end of a region that is not the thread's innermost one",
        "once",
        5,
        &[],
    );
}

#[test]
fn a_cpu_clock_going_back() {
    breaks(
        &one_thread("10 0 cpu 100\n20 0 cpu 50\n30 0 cpu 60\n"),
        "rule 16: cpu sample whose CPU clock is below the thread's previous one",
        "2 times",
        4,
        &[],
    );
    breaks(
        &one_thread("10 0 cpu 100 10\n20 0 cpu 200 5\n"),
        "rule 17: cpu sample whose run-queue delay is below the thread's previous one",
        "once",
        4,
        &[],
    );
}

#[test]
fn a_cut_log_reports_what_is_missing_at_its_end() {
    let w = warnings(
        "pplog 1 p=2\n0 0 start\n0 1 start\n5 0 region_begin 1 r\n6 0 work_begin\n\
         7 1 work_begin\n8 1 comm_begin 8\n",
    );
    assert_eq!(
        w,
        [
            "rule 18: threads that started and never stopped (2 of them, first thread 0; the \
             last event is at 8 ns); the log is cut: the window ends at the last event",
            "rule 19: intervals still open at the end of the log (3 of them, first thread 0's \
             work; the log ends at 8 ns); they count up to the end of the window",
            "rule 19: regions still open at the end of the log (1 of them, first region 1); \
             they count up to the end of the window",
        ]
    );
}

#[test]
fn rules_that_the_readers_keep_are_checked_too() {
    // A reader never gives these (it rejects them), but the sweep takes events from anyone.
    let header = Header {
        p: 2,
        params: vec![],
    };
    let symbols = {
        let mut s = Symbols::default();
        s.intern("r");
        s
    };
    let mut sweep = Sweep::new(&header, None);
    let e = |t, thread, kind| Event { t, thread, kind };
    for event in [
        e(0, 0, EventKind::Start),
        e(0, 1, EventKind::Start),
        e(5, 2, EventKind::Start),
        e(
            10,
            0,
            EventKind::Phase {
                name: pp::event::Sym(0),
            },
        ),
        e(
            8,
            1,
            EventKind::Phase {
                name: pp::event::Sym(0),
            },
        ),
        e(
            12,
            0,
            EventKind::RegionBegin {
                id: 1,
                name: pp::event::Sym(0),
                team: Some(TeamRef(9)),
            },
        ),
        e(13, 0, EventKind::RegionEnd { id: 1 }),
        e(20, 0, EventKind::Stop),
        e(20, 1, EventKind::Stop),
    ] {
        sweep.event(&event, &symbols);
    }
    let w = sweep.finish(&symbols).unwrap().warnings;
    assert_eq!(
        w,
        [
            "rule 1: event of a thread not below p: once, first at event 3 (thread 2 at 5 ns, \
             p = 2); ignored",
            "rule 2: event earlier than the event before it: once, first at event 5 (thread 1 \
             at 8 ns, after 10 ns); taken at the time of the event before it",
            "rule 15: region_begin with a team that is not defined: once, first at event 6 \
             (region 1 at 12 ns); the region has no members",
        ]
    );
}

#[test]
fn a_rule_broken_a_thousand_times_is_one_line() {
    let mut log = String::from("pplog 1 p=1\n0 0 start\n");
    for k in 0..1000u64 {
        let t = 10 + 10 * k;
        log.push_str(&format!(
            "{t} 0 work_begin\n{} 0 work_begin\n{} 0 work_end\n{} 0 work_end\n",
            t + 1,
            t + 2,
            t + 3
        ));
    }
    log.push_str("20000 0 stop\n");
    let line = breaks(
        &log,
        "rule 6: work_begin inside an open work",
        "1000 times",
        4,
        &[],
    );
    assert!(line.contains("(thread 0 at 11 ns)"), "{line}");
}

#[test]
fn valid_logs_give_no_warning() {
    let docs = include_str!("../../docs/event-log.md");
    let example = docs
        .split("```\n")
        .find(|block| block.starts_with("# hand-written: p=2"))
        .expect("the example of docs/event-log.md");
    assert_eq!(warnings(example), Vec::<String>::new());
    let recorded = include_str!("data/categories-p2.log");
    assert_eq!(warnings(recorded), Vec::<String>::new());
    // OpenMP style: every member records its own begin and end of the region.
    let members = "pplog 1 p=2\n0 0 start\n0 1 start\n10 0 region_begin 3 par\n\
                   10 0 work_begin\n20 1 region_begin 3 par\n20 1 work_begin\n30 1 work_end\n\
                   30 1 region_end 3\n60 0 work_end\n60 0 region_end 3\n80 0 stop\n80 1 stop\n";
    assert_eq!(warnings(members), Vec::<String>::new());
}

mod any_events {
    use super::*;
    use pp::event::{Sym, WaitKind};
    use pp::profile::Category;
    use proptest::prelude::*;

    /// An event from a small alphabet, so that every rule gets broken often.
    fn event(step: u64, back: bool, thread: u32, code: u8, arg: u64) -> (u64, bool, Event) {
        let name = Sym((arg % 2) as u32);
        let kind = WaitKind::ALL[(arg % 6) as usize];
        let object = (!arg.is_multiple_of(3)).then_some(name);
        let kind = match code % 14 {
            0 => EventKind::Start,
            1 => EventKind::Stop,
            2 => EventKind::RegionBegin {
                id: arg % 3,
                name,
                team: arg
                    .is_multiple_of(4)
                    .then_some(TeamRef((arg % 5) as u32 % 2)),
            },
            3 => EventKind::RegionEnd { id: arg % 3 },
            4 => EventKind::WorkBegin { label: object },
            5 => EventKind::WorkEnd { label: object },
            6 => EventKind::WaitBegin { kind, object },
            7 => EventKind::WaitEnd {
                kind,
                object,
                by: None,
            },
            8 => EventKind::CommBegin { bytes: arg % 3 },
            9 => EventKind::CommEnd { bytes: arg % 3 },
            10 => EventKind::Cpu {
                thread_cpu_ns: arg,
                run_delay_ns: arg.is_multiple_of(2).then_some(arg / 3),
            },
            11 => EventKind::Phase { name },
            12 => EventKind::Start,
            _ => EventKind::Stop,
        };
        (step, back, Event { t: 0, thread, kind })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Whatever the events, the sweep does not panic, every warning is one line of a
        /// kind of its own, and the row's arithmetic holds.
        #[test]
        fn any_events_give_an_exact_row_and_one_line_per_kind(
            p in 1u32..4,
            raw in prop::collection::vec(
                (0u64..20, any::<bool>(), 0u32..5, any::<u8>(), 0u64..1000), 0..80),
        ) {
            let mut symbols = Symbols::default();
            symbols.intern("a");
            symbols.intern("b");
            symbols.intern_team(&[0]);
            let header = Header { p, params: vec![] };
            let mut sweep = Sweep::new(&header, None);
            let mut t = 0u64;
            for (step, back, thread, code, arg) in raw {
                let (step, back, mut e) = event(step, back, thread % (p + 1), code, arg);
                // Mostly forward in time; now and then back (rule 2).
                t = if back && step < 3 { t.saturating_sub(step) } else { t + step };
                e.t = t;
                sweep.event(&e, &symbols);
            }
            if let Ok(a) = sweep.finish(&symbols) {
                let wall = u128::from(a.window.1 - a.window.0);
                prop_assert_eq!(a.totals.sum(), u128::from(p) * wall);
                for th in &a.by_thread {
                    prop_assert_eq!(th.sum(), wall);
                    prop_assert_eq!(th.sub.iter().sum::<u128>(), th.get(Category::Rc));
                }
                let mut kinds: Vec<&str> = Vec::new();
                for w in &a.warnings {
                    prop_assert!(!w.contains('\n'), "{}", w);
                    prop_assert!(w.starts_with("rule "), "{}", w);
                    let what = w.split([':', '(']).nth(1).unwrap_or("").trim();
                    prop_assert!(!kinds.contains(&what), "{:?}", a.warnings);
                    kinds.push(what);
                }
            }
        }
    }
}

/// Two ranks exchanging messages: rank 0 sends tags 5, 5, 6 and, on another communicator, 5;
/// rank 1 receives them in another order across channels but in order within each.
const MESSAGES: &str = "pplog 1 p=2
0 0 start
0 1 start
10 0 send 1 5 100
11 0 send 1 5 200
12 0 send 1 6 300
13 0 send 1 5 400 comm=sub
14 0 coll allreduce 8 comm=sub
14 1 coll allreduce 8 comm=sub
20 1 recv 0 6 300
21 1 recv 0 5 100
22 1 recv 0 5 400 comm=sub
23 1 recv 0 5 200
30 0 stop
30 1 stop
";

#[test]
fn messages_match_per_communicator_sender_and_tag_in_order() {
    assert_eq!(warnings(MESSAGES), Vec::<String>::new());
}

#[test]
fn rule_20_a_receive_needs_an_earlier_send_of_its_channel_and_bytes() {
    // Rank 1's third receive of tag 5 finds no send left; its receive of 100 bytes meets the
    // send of 100 but says 101.
    let log = MESSAGES
        .replace("21 1 recv 0 5 100", "21 1 recv 0 5 101")
        .replace("23 1 recv 0 5 200", "23 1 recv 0 5 200\n24 1 recv 0 5 200");
    let w = breaks(
        &log,
        "rule 20: recv without an earlier send to match (same communicator, from its peer, with its tag)",
        "once",
        14,
        &["rule 20: recv whose bytes differ from its send's"],
    );
    assert!(
        w.contains("(thread 1 at 24 ns, from thread 0, tag 5)"),
        "{w}"
    );
    // A receive before its send (the clocks disagree) matches nothing either.
    let early =
        "pplog 1 p=2\n0 0 start\n0 1 start\n5 1 recv 0 1 8\n6 0 send 1 1 8\n9 0 stop\n9 1 stop\n";
    let w = warnings(early);
    assert_eq!(w.len(), 2, "{w:#?}");
    assert!(
        w[0].starts_with("rule 20: recv without an earlier send"),
        "{w:#?}"
    );
    assert!(w[1].starts_with("rule 21: sends never received"), "{w:#?}");
}

#[test]
fn rule_21_every_send_is_received_by_the_end_of_the_log() {
    let log = MESSAGES
        .replace("20 1 recv 0 6 300\n", "")
        .replace("23 1 recv 0 5 200\n", "");
    assert_eq!(
        warnings(&log),
        [
            "rule 21: sends never received by the end of the log (2 of them, the first from \
          thread 0 to thread 1, tag 5, at 11 ns); they match nothing"
        ]
    );
}

#[test]
fn message_events_with_bad_fields_are_one_line_errors() {
    for (line, error) in [
        ("5 0 send 2 1 8", "send: <peer>: thread 2 is not below p=2"),
        (
            "5 0 recv 1 -1 8",
            "recv: <tag>: expected a non-negative integer, found '-1'",
        ),
        (
            "5 0 send 1 4294967296 8",
            "send: <tag>: '4294967296' does not fit in 32 bits",
        ),
        (
            "5 0 send 1 1 8 sub",
            "send: expected comm=<name>, found 'sub'",
        ),
        ("5 0 recv 1 1", "recv: missing <bytes>"),
        (
            "5 0 coll bcast 8 root=2",
            "coll: root: thread 2 is not below p=2",
        ),
        ("5 0 coll bcast 8 root=1 root=0", "coll: root= given twice"),
        (
            "5 0 coll bcast 8 comm=a comm=b",
            "coll: unexpected argument 'comm=b'",
        ),
    ] {
        let log = format!("pplog 1 p=2\n0 0 start\n{line}\n");
        let e = LogReader::from_bytes("m.log", log.into_bytes())
            .and_then(|mut r| r.for_each_event(|_, _| {}))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.log:3: "), "{line}: {e}");
        assert!(e.contains(error), "{line}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}
