//! The activity graph and its critical path on hand-written logs with answers worked out by
//! hand, a property over random logs, and `pp critical-path` end to end.

use pp::graph::report::Report;
use pp::graph::{ArcKind, Segment};
use pp::log::LogReader;
use pp::profile::Category;
use proptest::prelude::*;
use test_support::{one_line_error, pp, scratch};

mod log_support;
use log_support::activity::random_log;

fn report(text: &str) -> Report {
    let reader = LogReader::from_bytes("test.log", text.as_bytes().to_vec()).unwrap();
    Report::from_log(reader, "test.log").unwrap()
}

fn seg(thread: u32, start: u64, end: u64, arc: Option<ArcKind>) -> Segment {
    Segment {
        thread,
        start,
        end,
        arc,
    }
}

/// The path's time in one category.
fn cat(r: &Report, c: Category) -> u64 {
    r.makeup
        .by_category
        .iter()
        .find(|(k, _)| *k == c)
        .map_or(0, |&(_, ns)| ns)
}

use log_support::activity::FIGURE_1;

#[test]
fn figure_1_runs_through_the_late_sender() {
    let r = report(FIGURE_1);
    // Back from thread 0's stop (81): its work since the receive (71), the message in flight
    // since thread 1 sent it (70), then thread 1's work from the start. Thread 2 received a
    // message sent before it waited, so it is not on the path.
    assert_eq!(
        r.path.segments,
        [
            seg(1, 0, 70, None),
            seg(0, 70, 71, Some(ArcKind::Message)),
            seg(0, 71, 81, None)
        ]
    );
    assert_eq!(r.path.length(), 81);
    assert_eq!(r.window, (0, 81));
    assert_eq!(r.path.hops, 1);
    assert_eq!(r.makeup.by_thread, [(0, 11), (1, 70)]);
    assert_eq!(cat(&r, Category::Pc), 80);
    assert_eq!(cat(&r, Category::Cl), 1);
    assert_eq!(r.graph.arc_counts(), [2, 0, 0, 0, 0]);
    assert_eq!(r.graph.unknown_causes, 0);
    assert_eq!(r.graph.events(), 24);
}

#[test]
fn a_barrier_path_runs_through_the_late_arrival() {
    let r = report(
        "pplog 1 p=3
0 0 start
0 0 region_begin 1 loop
0 1 start
0 2 start
0 0 work_begin
0 1 work_begin
0 2 work_begin
10 0 work_end
10 0 wait_begin barrier b
20 1 work_end
20 1 wait_begin barrier b
45 2 work_end
45 2 wait_begin barrier b
50 0 wait_end barrier b
50 0 region_end 1
50 0 work_begin
51 1 wait_end barrier b
51 1 stop
52 2 wait_end barrier b
52 2 stop
70 0 work_end
70 0 stop
",
    );
    // Thread 0 (last to stop) left the barrier at 50, released by thread 2's arrival at 45.
    assert_eq!(
        r.path.segments,
        [
            seg(2, 0, 45, None),
            seg(0, 45, 50, Some(ArcKind::Barrier)),
            seg(0, 50, 70, None)
        ]
    );
    assert_eq!(r.path.length(), 70);
    assert_eq!(r.makeup.by_thread, [(0, 25), (2, 45)]);
    // Thread 2's work in the region (45), thread 0's wait once nobody works (5), its work
    // after the region (20).
    assert_eq!(cat(&r, Category::Pc), 65);
    assert_eq!(cat(&r, Category::Sl), 5);
    let loop_ = r
        .makeup
        .by_region
        .iter()
        .find(|(k, _)| k.is_some())
        .unwrap();
    assert_eq!(loop_.1, 50);
    // Threads 0 and 1 left on thread 2's arrival; thread 2 arrived last itself.
    assert_eq!(r.graph.arc_counts()[ArcKind::Barrier as usize], 2);
}

/// Thread 0 holds the lock from before 0 to 20 (inside its work, so no event there); thread 1
/// waits for it from 5 and gets it at 21.
const LOCK: &str = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
5 1 work_end
5 1 wait_begin lock L
21 1 wait_end lock L by=0
21 1 work_begin
30 0 work_end
30 0 stop
40 1 work_end
40 1 stop
";

#[test]
fn a_lock_hand_off_with_its_cause_runs_through_the_holder() {
    let r = report(LOCK);
    assert_eq!(r.path.segments, [seg(0, 0, 21, None), seg(1, 21, 40, None)]);
    assert_eq!(r.path.hops, 1);
    assert_eq!(r.makeup.by_thread, [(0, 21), (1, 19)]);
    assert_eq!(cat(&r, Category::Pc), 40);
    assert_eq!(r.graph.arc_counts()[ArcKind::Cause as usize], 1);
    assert_eq!(r.graph.unknown_causes, 0);
}

#[test]
fn a_lock_wait_without_its_cause_stays_on_the_waiting_thread() {
    let r = report(&LOCK.replace(" by=0", ""));
    assert_eq!(r.path.segments, [seg(1, 0, 40, None)]);
    assert_eq!(r.path.hops, 0);
    // Its wait for the lock is sl (16 ns), its work pc.
    assert_eq!(cat(&r, Category::Sl), 16);
    assert_eq!(cat(&r, Category::Pc), 24);
    assert_eq!(r.graph.unknown_causes, 1);
    assert!(
        r.text().contains("\n1 wait with unknown cause"),
        "{}",
        r.text()
    );
}

#[test]
fn contention_on_the_path_is_rc_and_off_it_is_not() {
    // The lock hand-off, thread 1 sampled at 5 and at 40: between them it worked 19 ns
    // (21..40, all on the path) and its CPU clock grew 9, so 10 ns of that work is rc.cpu;
    // its run-queue delay grew 15, but the other 5 fell in its lock wait (5..21), whose
    // release time the log does not hold, so they stay sl there (docs/attribution.md,
    // "Contention during waits"); that wait is off the path (thread 0 holds the lock).
    let log = LOCK
        .replace("5 1 wait_begin", "5 1 cpu 5 0\n5 1 wait_begin")
        .replace("40 1 stop", "40 1 cpu 14 15\n40 1 stop");
    let r = report(&log);
    assert_eq!(r.path.segments, [seg(0, 0, 21, None), seg(1, 21, 40, None)]);
    assert_eq!(cat(&r, Category::Rc), 10);
    assert_eq!(cat(&r, Category::Pc), 30);
    assert_eq!(cat(&r, Category::Sl), 0);
    // The attribution has the 10 of the work as rc.cpu, no more.
    let mut reader = LogReader::from_bytes("l.log", log.into_bytes()).unwrap();
    let profile = pp::profile::profile_log(&mut reader, None, None)
        .whole("l.log")
        .unwrap();
    assert_eq!(profile.totals.sub("rc.cpu"), Some(10));
    // Part of a span's work on the path: that share of its rc.cpu on the path. Thread 0
    // works 0..30 sampled at 0 and 30 with 10 of CPU: 20 of rc.cpu, 14 of it in 0..21.
    let log = LOCK
        .replace("0 0 work_begin", "0 0 cpu 0\n0 0 work_begin")
        .replace("30 0 stop", "30 0 cpu 10\n30 0 stop");
    let r = report(&log);
    assert_eq!(cat(&r, Category::Rc), 14);
    assert_eq!(cat(&r, Category::Pc), 26);
    assert_eq!(
        r.makeup.by_category.iter().map(|c| c.1).sum::<u64>(),
        r.path.length()
    );
}

#[test]
fn times_are_from_the_runs_start_and_counts_read_as_english() {
    // Figure 1 at a real clock's time: the path's ends are printed from the run's start.
    let shifted: String = FIGURE_1
        .lines()
        .map(|l| match l.split_once(' ') {
            Some((t, rest)) if t.parse::<u64>().is_ok() => {
                format!("{} {rest}\n", t.parse::<u64>().unwrap() + 2_253_444_845_421)
            }
            _ => format!("{l}\n"),
        })
        .collect();
    let r = report(&shifted);
    let text = r.text();
    assert!(
        text.contains("\nfrom thread 1 at 0 ns to thread 0 at 81 ns (from the run's start)\n"),
        "{text}"
    );
    assert!(text.contains("\n24 events, remote arcs: "), "{text}");
    assert!(text.contains("\n0 waits with unknown cause"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
    assert_eq!(doc["segments"][0]["start_ns"], 0);
    assert_eq!(doc["segments"][2]["end_ns"], 81);
    assert_eq!(doc["window_ns"][0], 2_253_444_845_421u64);
}

#[test]
fn a_late_sender_is_on_the_path_and_an_early_one_is_not() {
    let late = report(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 wait_begin recv
0 1 work_begin
48 1 send 0 3 64
48 1 work_end
48 1 stop
50 0 recv 1 3 64
50 0 wait_end recv
50 0 work_begin
60 0 work_end
60 0 stop
",
    );
    assert_eq!(
        late.path.segments,
        [
            seg(1, 0, 48, None),
            seg(0, 48, 50, Some(ArcKind::Message)),
            seg(0, 50, 60, None)
        ]
    );
    assert_eq!(cat(&late, Category::Cl), 2);
    assert_eq!(cat(&late, Category::Pc), 58);
    // Sent at 5, before thread 0 waits (10): the receive waited for the transfer only, and
    // the path stays on thread 0.
    let early = report(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
5 1 send 0 3 64
5 1 work_end
5 1 stop
10 0 work_end
10 0 wait_begin recv
12 0 recv 1 3 64
12 0 wait_end recv
12 0 work_begin
60 0 work_end
60 0 stop
",
    );
    assert_eq!(early.path.segments, [seg(0, 0, 60, None)]);
    assert_eq!(early.path.hops, 0);
    assert_eq!(early.graph.arc_counts()[ArcKind::Message as usize], 1);
}

#[test]
fn a_region_forks_to_its_members_and_joins_from_the_last() {
    // Thread 0 opens the region at 10, works its part to 20 and idles until thread 1, which
    // the fork woke at 12, finishes at 33; it closes the region at 35.
    let r = report(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
10 0 work_end
10 0 region_begin 1 loop
10 0 work_begin
12 1 work_begin
20 0 work_end
33 1 work_end
33 1 stop
35 0 region_end 1
35 0 work_begin
40 0 work_end
40 0 stop
",
    );
    assert_eq!(
        r.path.segments,
        [
            seg(0, 0, 10, None),
            seg(1, 10, 12, Some(ArcKind::Fork)),
            seg(1, 12, 33, None),
            seg(0, 33, 35, Some(ArcKind::Join)),
            seg(0, 35, 40, None)
        ]
    );
    assert_eq!(r.path.hops, 2);
    assert_eq!(r.makeup.by_thread, [(0, 17), (1, 23)]);
    // Thread 1 idle while thread 0 works in the region (li 2), thread 0 idle in the region
    // once nobody works (sl 2), the rest work.
    assert_eq!(cat(&r, Category::Li), 2);
    assert_eq!(cat(&r, Category::Sl), 2);
    assert_eq!(cat(&r, Category::Pc), 36);
    assert_eq!(r.graph.arc_counts()[ArcKind::Fork as usize], 1);
    assert_eq!(r.graph.arc_counts()[ArcKind::Join as usize], 1);
}

#[test]
fn openmp_workers_are_forked_and_leave_a_barrier_at_the_next_region() {
    // As the OMPT tool writes two regions: the worker starts at the first fork, and reports
    // leaving each region's closing barrier only when the next region releases it.
    let r = report(
        "pplog 1 p=2
0 0 start
0 0 work_begin
10 0 work_end
10 0 region_begin 1 r
10 0 work_begin
11 1 start
11 1 work_begin
20 0 wait_begin barrier implicit
30 1 wait_begin barrier implicit
31 0 wait_end barrier implicit
31 0 work_end
31 0 region_end 1
31 0 work_begin
40 0 work_end
40 0 region_begin 2 r
40 0 work_begin
41 1 wait_end barrier implicit
41 1 work_end
41 1 work_begin
50 0 wait_begin barrier implicit
60 1 wait_begin barrier implicit
61 0 wait_end barrier implicit
61 0 work_end
61 0 region_end 2
61 1 stop
62 0 stop
",
    );
    assert_eq!(
        r.path.segments,
        [
            seg(0, 0, 10, None),
            seg(1, 10, 11, Some(ArcKind::Fork)),
            seg(1, 11, 30, None),
            seg(0, 30, 31, Some(ArcKind::Barrier)),
            seg(0, 31, 40, None),
            seg(1, 40, 41, Some(ArcKind::Fork)),
            seg(1, 41, 60, None),
            seg(0, 60, 61, Some(ArcKind::Barrier)),
            seg(0, 61, 62, None)
        ]
    );
    assert_eq!(r.path.length(), 62);
    assert_eq!(r.path.hops, 4);
    assert_eq!(r.graph.unknown_causes, 0);
}

#[test]
fn ranks_that_record_their_own_region_begin_are_not_forked() {
    // As the MPI tracer writes MPI_Init and MPI_Finalize: every rank opens region 0 itself.
    let r = report(
        "pplog 1 p=2
0 0 start
0 0 region_begin 0 mpi
0 0 work_begin
5 1 start
5 1 region_begin 0 mpi
5 1 work_begin
20 0 work_end
20 0 region_end 0
20 0 stop
30 1 work_end
30 1 region_end 0
30 1 stop
",
    );
    assert_eq!(r.graph.arc_counts()[ArcKind::Fork as usize], 0);
    assert_eq!(r.graph.arc_counts()[ArcKind::Join as usize], 1);
    // Rank 1 started late with no cause recorded: the path starts there, short of the run.
    assert_eq!(r.path.segments, [seg(1, 5, 30, None)]);
    assert_eq!(r.window, (0, 30));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_path_spans_the_run_and_its_makeup_sums_to_it(
        seed in any::<u64>(), p in 1u32..5, rounds in 1usize..12
    ) {
        let r = report(&random_log(seed, p, rounds, true, false).0);
        prop_assert_eq!(r.graph.unknown_causes, 0);
        let wall = r.window.1 - r.window.0;
        prop_assert_eq!(r.path.length(), wall);
        prop_assert_eq!(r.path.span(), Some(r.window));
        for w in r.path.segments.windows(2) {
            prop_assert_eq!(w[0].end, w[1].start);
        }
        let sum = |v: &[(u64, u64)]| v.iter().map(|x| x.1).sum::<u64>();
        let threads: Vec<(u64, u64)> =
            r.makeup.by_thread.iter().map(|&(t, ns)| (u64::from(t), ns)).collect();
        prop_assert_eq!(sum(&threads), wall);
        prop_assert_eq!(r.makeup.by_region.iter().map(|x| x.1).sum::<u64>(), wall);
        prop_assert_eq!(r.makeup.by_category.iter().map(|x| x.1).sum::<u64>(), wall);
        prop_assert_eq!(r.makeup.unattributed, 0);
    }

    #[test]
    fn through_barriers_the_path_works_each_rounds_longest_work(
        seed in any::<u64>(), p in 1u32..5, rounds in 1usize..12
    ) {
        let (log, work) = random_log(seed, p, rounds, false, false);
        let r = report(&log);
        prop_assert_eq!(r.path.length(), r.window.1 - r.window.0);
        // The rest is the barriers' releases (outside a region: ip).
        prop_assert_eq!(cat(&r, Category::Pc), work);
        prop_assert_eq!(cat(&r, Category::Pc) + cat(&r, Category::Ip), r.path.length());
        prop_assert!(r.path.hops <= rounds as u64);
    }
}

#[test]
fn pp_critical_path_prints_text_and_json() {
    let dir = scratch("cli");
    let log = dir.join("fig1.log");
    std::fs::write(&log, FIGURE_1).unwrap();
    let out = pp!()
        .args(["critical-path", log.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("critical path: 81 ns of 81 ns wall (100.0%), 1 hop between threads\n"),
        "{text}"
    );
    let out = pp!()
        .args(["critical-path", "--format", "json"])
        .env("PP_LOG", &log)
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["length_ns"], 81);
    assert_eq!(doc["by_thread"][1]["ns"], 70);
    assert_eq!(doc["segments"][1]["thread"], 0);
    // The timeline has the path as its own track, after the three threads.
    let trace = dir.join("trace.json");
    let out = pp!()
        .args([log.to_str().unwrap(), "--chrome", trace.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let track: Vec<&serde_json::Value> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["tid"] == 3)
        .collect();
    assert_eq!(track.len(), 4);
    assert_eq!(track[0]["args"]["name"], "critical path");
    assert_eq!(track[1]["name"], "thread 1");
    assert_eq!(track[1]["dur"], 0.07);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_unreadable_log_is_a_one_line_error() {
    let dir = scratch("bad");
    let log = dir.join("bad.log");
    std::fs::write(&log, "pplog 1\n0 0 start\n").unwrap();
    let out = pp!()
        .args(["critical-path", log.to_str().unwrap()])
        .output()
        .unwrap();
    one_line_error(&out, Some(1), &["bad.log:1"]);
    // A bad cause ends the log at its line, with a warning naming it.
    std::fs::write(
        &log,
        "pplog 1 p=2\n0 0 start\n0 0 wait_begin lock\n1 0 wait_end lock by=2\n",
    )
    .unwrap();
    let out = pp!()
        .args(["critical-path", log.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.log:4") && err.contains("by: thread 2 is not below p=2"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
