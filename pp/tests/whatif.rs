//! `pp whatif` on hand-written logs with answers worked out by hand (seed 000's Figure 1,
//! processor sharing, a barrier, a late sender, speed factors, a two-segment network), the
//! identity replay over random logs, and its errors.

use pp::log::{LogReader, TextWriter};
use pp::whatif::{Demand, MeasuredRun, Target, parse_groups, predict};
use proptest::prelude::*;
use test_support::{one_line_error, scratch};

mod log_support;
use log_support::activity::{FIGURE_1, attribution, random_log, replay, time_of};

fn grouped(spec: &str) -> Target {
    Target {
        groups: parse_groups(spec).unwrap(),
        ..Target::default()
    }
}

#[test]
fn figure_1_regrouped_by_hand() {
    // Threads 0 and 1 (the paper's processes 1 and 2) share a processor, thread 2 keeps its
    // own. Both run at half speed until thread 0 has done its 10 ns of work (at 20: the
    // paper's startRecv at 2 units); thread 1 has done 10 of its 70 and does the other 60
    // alone, sending at 80 (the endRecv's EPT of 8 units). The receive keeps its measured
    // 1 ns in flight (81), then 10 ns of work: 91. Thread 2's message was sent at 0, before it
    // waited: it goes on as measured (stop at 40).
    let (log, measured, predicted) = replay(FIGURE_1, &grouped("0,1"));
    assert_eq!((measured, predicted), (81, 91));
    assert_eq!(time_of(&log, 0, "wait_begin recv"), 20);
    assert_eq!(time_of(&log, 1, "send 0 0 8"), 80);
    assert_eq!(time_of(&log, 0, "recv 1 0 8"), 81);
    assert_eq!(time_of(&log, 0, "stop"), 91);
    assert_eq!(time_of(&log, 2, "stop"), 40);
    assert!(
        log.starts_with("pplog 1 p=3 predicted=group:0,1\n"),
        "{log}"
    );
    // The sharing shows as rc.cpu: threads 0 and 1 each lost 10 ns to the other.
    let a = attribution(&log);
    assert_eq!(a.window, (0, 91));
    assert_eq!(a.totals.sub("rc.cpu"), Some(20));
    // Every thread in one group: the same, thread 2 also slowed while all three compute.
    let (_, _, all) = replay(FIGURE_1, &grouped("0,1,2"));
    assert!(all > 91, "{all}");
}

const TWO_THREADS: &str = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
100000000 0 work_end
100000000 1 work_end
100000000 0 stop
100000000 1 stop
";

#[test]
fn two_threads_of_100_ms_on_one_processor_take_200_ms() {
    let (log, measured, predicted) = replay(TWO_THREADS, &grouped("0,1"));
    assert_eq!((measured, predicted), (100_000_000, 200_000_000));
    // Each got half the processor: 100 ms of rc.cpu each, and as much run-queue delay.
    assert!(
        log.contains("200000000 0 cpu 100000000 100000000\n"),
        "{log}"
    );
    let a = attribution(&log);
    assert_eq!(a.totals.sub("rc.cpu"), Some(200_000_000));
    // Apart, as measured.
    assert_eq!(replay(TWO_THREADS, &grouped("0/1")).2, 100_000_000);
    // A thread in no interval (idle: a worker waiting for work) does not compete.
    let idle = "pplog 1 p=2\n0 0 start\n0 1 start\n0 0 work_begin\n100 0 work_end\n100 0 stop\n100 1 stop\n";
    assert_eq!(replay(idle, &grouped("0,1")).2, 100);
}

#[test]
fn a_region_ends_after_every_members_last_event_not_only_the_measured_latest() {
    // Four members of one region (no barrier: an end as a task runtime or `pp-recorder`'s
    // team writes it): thread 0 works 100 ns and closes it, thread 1 works 95 (the latest of
    // the others as measured, the join's arc), threads 2 and 3 work 80 each. On one processor
    // together, 2 and 3 take 160: the region ends after them (161, 1 ns after, the order
    // kept), not at thread 0's own end, 100, as when only the measured latest was waited for
    // (thread 2's work then ended 60 ns after the region it belongs to).
    let log = "pplog 1 p=4
0 0 start
0 1 start
0 2 start
0 3 start
0 0 region_begin 1 r
0 0 work_begin
0 1 work_begin
0 2 work_begin
0 3 work_begin
80 2 work_end
80 3 work_end
95 1 work_end
100 0 work_end
100 0 region_end 1
100 0 stop
100 1 stop
100 2 stop
100 3 stop
";
    let (out, measured, _) = replay(log, &grouped("2,3"));
    assert_eq!(measured, 100);
    assert_eq!(time_of(&out, 2, "work_end"), 160);
    assert_eq!(time_of(&out, 3, "work_end"), 160);
    assert_eq!(time_of(&out, 0, "region_end 1"), 161, "{out}");
    // Unshared, the identity: exactly as measured.
    let (same, _, predicted) = replay(log, &Target::default());
    assert_eq!(predicted, 100);
    assert_eq!(time_of(&same, 0, "region_end 1"), 100);
}

#[test]
fn three_threads_share_one_processor_fairly() {
    // Demands 10, 20 and 30 ns: all three at 1/3 until the first is done (30), the other two
    // at 1/2 until the second is (50), the last alone (60).
    let log = "pplog 1 p=3
0 0 start
0 1 start
0 2 start
0 0 work_begin
0 1 work_begin
0 2 work_begin
10 0 work_end
10 0 stop
20 1 work_end
20 1 stop
30 2 work_end
30 2 stop
";
    let (out, _, predicted) = replay(log, &grouped("0,1,2"));
    assert_eq!(predicted, 60);
    assert_eq!(time_of(&out, 0, "stop"), 30);
    assert_eq!(time_of(&out, 1, "stop"), 50);
    assert_eq!(time_of(&out, 2, "stop"), 60);
}

#[test]
fn a_barrier_waits_for_its_last_arrival_on_the_shared_processor() {
    // Thread 0 works 100, thread 1 works 60 and waits at the barrier until 100 (released at
    // once); then both work 40: 140 measured. On one processor: both at 1/2 until thread 1's
    // 60 are done (120), thread 0 alone for its last 40 (160), the release, then both 40s at
    // 1/2: 240, the sum of the demands.
    let log = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
60 1 work_end
60 1 wait_begin barrier b
100 0 work_end
100 0 wait_begin barrier b
100 0 wait_end barrier b
100 1 wait_end barrier b
100 0 work_begin
100 1 work_begin
140 0 work_end
140 1 work_end
140 0 stop
140 1 stop
";
    let (out, measured, predicted) = replay(log, &grouped("0,1"));
    assert_eq!((measured, predicted), (140, 240));
    assert_eq!(time_of(&out, 1, "wait_begin barrier b"), 120);
    assert_eq!(time_of(&out, 1, "wait_end barrier b"), 160);
    // The other way round: thread 1 is slowed down so much that it arrives last. Thread 0
    // (the measured last arrival) must still wait for it.
    let mut slow = Target::default();
    slow.speeds.insert("slow".into(), 0.25);
    let log1 = log.replace("0 1 work_begin\n60", "0 1 phase slow\n0 1 work_begin\n60");
    let (out, _, predicted) = replay(&log1, &slow);
    // Thread 1's 60 ns take 240; thread 0 leaves the barrier then, and both work 40 (thread
    // 1's 40 are still slow: 160).
    assert_eq!(time_of(&out, 1, "wait_begin barrier b"), 240);
    assert_eq!(time_of(&out, 0, "wait_end barrier b"), 240);
    assert_eq!(predicted, 400);
}

#[test]
fn an_oversubscribed_run_unshared_by_its_cpu_samples() {
    // Two threads measured on one core: thread 0 worked 0..200 and got 100 of CPU, thread 1
    // worked 0..300 and got 200 (alone for its last 100). Thread 0 left the barrier 20 after
    // thread 1's arrival, 15 of them in the run queue (its delay grew 100 -> 115); thread 1
    // 10 after, none queued. With the demand from CPU time, each on a processor of its own:
    // thread 0 computes 100, thread 1 200 (the last arrival, at 200); thread 0 leaves
    // 20 - 15 = 5 after (205), thread 1 10 after (210); the measured delays are gone.
    let log = "pplog 1 p=2
0 0 start
0 1 start
0 0 cpu 0 0
0 1 cpu 0 0
0 0 work_begin
0 1 work_begin
200 0 work_end
200 0 cpu 100 100
200 0 wait_begin barrier b
300 1 work_end
300 1 cpu 200 100
300 1 wait_begin barrier b
310 1 wait_end barrier b
310 1 cpu 200 100
310 1 stop
320 0 wait_end barrier b
320 0 cpu 100 115
320 0 stop
";
    let unshared = Target {
        demand: Demand::Cpu,
        ..Target::default()
    };
    let (out, measured, predicted) = replay(log, &unshared);
    assert_eq!((measured, predicted), (320, 210));
    assert_eq!(time_of(&out, 0, "wait_begin barrier b"), 100);
    assert_eq!(time_of(&out, 1, "wait_begin barrier b"), 200);
    assert_eq!(time_of(&out, 0, "wait_end barrier b"), 205);
    assert_eq!(time_of(&out, 1, "wait_end barrier b"), 210);
    assert!(
        out.starts_with("pplog 1 p=2 predicted=demand:cpu\n"),
        "{out}"
    );
    // Its profile: the measured run's contention is gone.
    let a = attribution(&out);
    assert_eq!(a.totals.sub("rc.cpu"), Some(0));
    let measured_profile = attribution(log);
    assert!(measured_profile.totals.sub("rc.cpu").unwrap() > 0);
    // The same demands shared again by both on one processor: 300 of work in all, as measured.
    let both = Target {
        groups: parse_groups("0,1").unwrap(),
        demand: Demand::Cpu,
        ..Target::default()
    };
    let (out, _, predicted) = replay(log, &both);
    assert_eq!(time_of(&out, 1, "wait_begin barrier b"), 300);
    assert_eq!(predicted, 310);
    // Without CPU samples the demand is the measured time: nothing changes.
    let bare: String = log
        .lines()
        .filter(|l| !l.contains(" cpu "))
        .map(|l| format!("{l}\n"))
        .collect();
    let (_, measured, predicted) = replay(&bare, &unshared);
    assert_eq!((measured, predicted), (320, 320));
}

#[test]
fn an_openmp_worker_leaves_its_barrier_at_the_next_fork() {
    // As the OMPT tool writes two regions: the worker reports leaving region 1's barrier
    // when region 2 releases it (41, 1 ns after the fork at 40). Thread 0's serial work
    // between the regions (9 ns, phase serial) 9 times as fast: region 2 forks at 32 and the
    // worker leaves at 33, not 11 ns after the barrier's last arrival as measured. Its 19 ns
    // of work: 52; thread 0's 10: 42; the barrier's release 1 ns after: 53; the stops 1 ns
    // after their last events, as measured: 54.
    let log = "pplog 1 p=2
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
31 0 phase serial
31 0 work_begin
40 0 work_end
40 0 phase main
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
";
    let mut t = Target::default();
    t.add_speed("serial=9").unwrap();
    let (out, measured, predicted) = replay(log, &t);
    assert_eq!((measured, predicted), (62, 54));
    assert_eq!(time_of(&out, 0, "region_begin 2 r"), 32);
    assert_eq!(time_of(&out, 1, "wait_end barrier implicit"), 33);
    assert_eq!(time_of(&out, 1, "wait_begin barrier implicit"), 30);
    assert_eq!(time_of(&out, 0, "region_end 2"), 53);
}

#[test]
fn a_late_sender_delays_the_receive_on_the_shared_processor() {
    // Thread 0 works 10 and waits for thread 1's message, sent after 50 of work and received
    // 2 ns later; 10 more of work: 62. Sharing: thread 0's 10 take 20, thread 1's other 40
    // alone (send at 60), the receive 2 ns later (62), 10 ns of work: 72.
    let log = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
10 0 work_end
10 0 wait_begin recv
50 1 send 0 7 64
50 1 work_end
50 1 stop
52 0 recv 1 7 64
52 0 wait_end recv
52 0 work_begin
62 0 work_end
62 0 stop
";
    let (out, measured, predicted) = replay(log, &grouped("0,1"));
    assert_eq!((measured, predicted), (62, 72));
    assert_eq!(time_of(&out, 1, "send 0 7 64"), 60);
    assert_eq!(time_of(&out, 0, "recv 1 7 64"), 62);
}

#[test]
fn a_speed_factor_divides_exactly_its_regions_and_phases_computation() {
    // 100 ns of work in region fft, 40 outside it in phase copy, 20 in phase other.
    let log = "pplog 1 p=1
0 0 start
0 0 region_begin 1 fft
0 0 work_begin
100 0 work_end
100 0 region_end 1
100 0 phase copy
100 0 work_begin
140 0 work_end
140 0 phase other
140 0 work_begin
160 0 work_end
160 0 cpu 150
160 0 stop
";
    let mut t = Target::default();
    t.add_speed("fft=2").unwrap();
    let (out, _, predicted) = replay(log, &t);
    assert_eq!(predicted, 110);
    assert_eq!(time_of(&out, 0, "region_end 1"), 50);
    // The CPU clock loses the 50 ns saved.
    assert_eq!(time_of(&out, 0, "cpu 100"), 110);
    t.add_speed("copy=4").unwrap();
    assert_eq!(replay(log, &t).2, 50 + 10 + 20);
}

const TWO_MESSAGES: &str = "pplog 1 p=2
0 0 start
0 1 start
0 0 wait_begin recv
0 1 work_begin
10 1 send 0 0 512
12 0 recv 1 0 512
12 0 wait_end recv
12 0 wait_begin recv
20 1 send 0 1 4096
20 1 work_end
20 1 stop
25 0 recv 1 1 4096
25 0 wait_end recv
25 0 stop
";

/// A machine file whose `[mpi]` model has two segments: below 1 KiB 100 ns + 1 ns a byte,
/// from 1 KiB 1000 ns + 2 ns a byte.
const TWO_SEGMENTS: &str = r#"
[about]
host = "target"
cores = 2
measured_at = 0
pp_version = "0.1.0"
[[copy.segments]]
from_bytes = 0
to_bytes = 1024
alpha_ns = 1.0
beta_bytes_per_ns = 10.0
[copy]
points = []
[handoff]
reps = 1
min_ns = 100.0
median_ns = 100.0
cv = 0.0
flagged = false
[mpi]
library = "test"
locality = "node"
points = []
[[mpi.segments]]
from_bytes = 0
to_bytes = 1024
alpha_ns = 100.0
beta_bytes_per_ns = 1.0
[[mpi.segments]]
from_bytes = 1024
to_bytes = 1048576
alpha_ns = 1000.0
beta_bytes_per_ns = 0.5
"#;

#[test]
fn the_target_network_times_every_message_by_its_size() {
    let dir = scratch("network");
    let machine = dir.join("target.toml");
    std::fs::write(&machine, TWO_SEGMENTS).unwrap();
    let t = Target {
        machine: Some(pp::whatif::load_machine(&machine).unwrap()),
        ..Target::default()
    };
    // 512 B sent at 10: 100 + 512 = 612 later, received at 622; 4096 B sent at 20:
    // 1000 + 4096 / 0.5 = 9192 later, at 9212.
    let (out, measured, predicted) = replay(TWO_MESSAGES, &t);
    assert_eq!((measured, predicted), (25, 9212));
    assert_eq!(time_of(&out, 0, "recv 1 0 512"), 622);
    assert_eq!(time_of(&out, 0, "wait_begin recv"), 0);
    let _ = std::fs::remove_dir_all(dir);
}

/// A log text with its `predicted=` header parameter left out.
fn unpredicted(log: &str) -> String {
    log.replacen(" predicted=identity", "", 1)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_identity_replay_reproduces_every_event_and_category(
        seed in any::<u64>(), p in 1u32..5, rounds in 1usize..12
    ) {
        let (log, _) = random_log(seed, p, rounds, true, true);
        let (out, measured, predicted) = replay(&log, &Target::default());
        prop_assert_eq!(measured, predicted);
        // Every event at its measured time: the canonical text of both logs is the same.
        let mut reader = LogReader::from_bytes("m.log", log.into_bytes()).unwrap();
        let mut events = Vec::new();
        while let Some(e) = reader.next_event() {
            events.push(e.unwrap());
        }
        let mut w = TextWriter::new(Vec::new(), reader.header()).unwrap();
        for e in &events {
            w.write_event(e, reader.symbols()).unwrap();
        }
        let measured_text = String::from_utf8(w.finish().unwrap()).unwrap();
        prop_assert_eq!(&unpredicted(&out), &measured_text);
        let (a, b) = (attribution(&measured_text), attribution(&out));
        prop_assert_eq!(a.window, b.window);
        prop_assert_eq!(a.totals, b.totals);
        prop_assert_eq!(a.by_thread, b.by_thread);
    }

    #[test]
    fn sharing_one_processor_takes_at_least_the_work_and_at_most_the_wall_plus_it(
        seed in any::<u64>(), p in 2u32..5, rounds in 1usize..8
    ) {
        // All on one processor: never faster than the total demand (computation does not
        // shrink), never slower than measured plus all of it (each second of demand delays
        // the others by at most a second).
        let (log, _) = random_log(seed, p, rounds, true, true);
        let all = (0..p).map(|t| t.to_string()).collect::<Vec<_>>().join(",");
        let (out, measured, predicted) = replay(&log, &grouped(&all));
        let a = attribution(&log);
        let work = a.totals.get(pp::profile::Category::Pc) as u64;
        prop_assert!(predicted >= work, "{} < {}", predicted, work);
        prop_assert!(predicted <= measured + work, "{} > {} + {}", predicted, measured, work);
        // The predicted log is a valid log: no rule broken.
        prop_assert!(attribution(&out).warnings.is_empty(), "{:?}", attribution(&out).warnings);
    }
}

fn pp(args: &[&str]) -> (bool, String, String) {
    let out = test_support::pp!().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn pp_whatif_prints_both_walls_and_writes_the_predicted_log() {
    let dir = scratch("cli");
    let log = dir.join("fig1.log");
    let out = dir.join("pred.log");
    std::fs::write(&log, FIGURE_1).unwrap();
    let (l, o) = (log.to_str().unwrap(), out.to_str().unwrap());
    let (ok, stdout, stderr) = pp(&["whatif", l, "--group", "0,1", "--out", o]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout,
        format!(
            "measured wall:  0.000000081 s\npredicted wall: 0.000000091 s (+12.3%)\nwrote {o} (predicted: group:0,1)\n"
        )
    );
    // Not again without --force; the same from a target file with --force, into a binary
    // log from a binary input.
    let (ok, _, stderr) = pp(&["whatif", l, "--group", "0,1", "--out", o]);
    assert!(!ok);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    // Refused before the log is read: a long log is not replayed for nothing.
    let missing = dir.join("no-such.log");
    let (ok, _, stderr) = pp(&["whatif", missing.to_str().unwrap(), "--out", o]);
    assert!(!ok && stderr.contains("exists; not replaced"), "{stderr}");
    let nowhere = dir.join("no-such-folder").join("pred.log");
    let (ok, _, stderr) = pp(&[
        "whatif",
        missing.to_str().unwrap(),
        "--out",
        nowhere.to_str().unwrap(),
    ]);
    assert!(
        !ok && stderr.contains("no-such-folder does not exist"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let bin = dir.join("fig1.bin");
    assert!(pp(&["convert", l, bin.to_str().unwrap()]).0);
    // What the header decides is said before the events are read: a binary log cut short
    // in its last block fails only once read.
    let cut = dir.join("cut.bin");
    let bytes = std::fs::read(&bin).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let c = cut.to_str().unwrap();
    let (ok, _, stderr) = pp(&["whatif", c, "--out", o, "--force"]);
    assert!(!ok && !stderr.contains("--out"), "{stderr}");
    let (ok, _, stderr) = pp(&["whatif", c, "--group", "0,9", "--out", o, "--force"]);
    assert!(
        !ok && stderr.contains("thread 9 is not in the log"),
        "{stderr}"
    );
    let (ok, _, stderr) = pp(&["whatif", c, "--out", "-"]);
    assert!(
        !ok && stderr.contains("standard output takes a text log"),
        "{stderr}"
    );
    let target = dir.join("target.toml");
    std::fs::write(&target, "group = \"0,1\"\n").unwrap();
    let (ok, stdout, stderr) = pp(&[
        "whatif",
        bin.to_str().unwrap(),
        "--target",
        target.to_str().unwrap(),
        "--out",
        o,
        "--force",
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("predicted wall: 0.000000091 s"), "{stdout}");
    assert!(std::fs::read(&out).unwrap().starts_with(b"PPLOG\0"));
    let (ok, stdout, _) = pp(&["-l", o]);
    assert!(ok);
    assert!(
        stdout.contains("predicted=group:0,1 predicted_from=fig1.bin"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_input_is_a_one_line_error_naming_what_is_wrong() {
    let dir = scratch("bad");
    let log = dir.join("fig1.log");
    std::fs::write(&log, FIGURE_1).unwrap();
    let out = dir.join("pred.log");
    let (l, o) = (log.to_str().unwrap(), out.to_str().unwrap());
    let target = dir.join("target.toml");
    std::fs::write(&target, "group = \"0,1\"\n[speed]\nfft = \"fast\"\n").unwrap();
    let bad = dir.join("bad.log");
    std::fs::write(&bad, "pplog 1 p=2\n0 0 start\n5 7 stop\n").unwrap();
    let t = target.to_str().unwrap();
    let demand = dir.join("demand.toml");
    std::fs::write(&demand, "demand = \"cpus\"\n").unwrap();
    let d = demand.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (
            &["--group", "0,3"],
            "thread 3 is not in the log (its threads are 0..3)",
        ),
        (
            &["--group", "0,1/1,2"],
            "thread 1 is in two groups (1 and 2)",
        ),
        (&["--group", "0,x"], "'x' is not a thread number"),
        (&["--speed", "fft=2"], "--speed fft: "),
        (&["--speed", "fft=0"], "positive number"),
        (&["--target", t], "target.toml:3: "),
        (&["--target", d], "demand.toml:1: "),
        (&["--demand", "wall"], "'wall'"),
        (&["--machine", l], "--machine "),
    ];
    for (args, expected) in cases {
        let mut all = vec!["whatif", l, "--out", o];
        all.extend_from_slice(args);
        let (ok, _, stderr) = pp(&all);
        assert!(!ok, "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    let (ok, _, stderr) = pp(&["whatif", bad.to_str().unwrap(), "--out", o]);
    assert!(!ok);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("bad.log:3"), "{stderr}");
    for missing in [vec!["none.log"], vec![l, "--target", "none.toml"]] {
        let mut all = vec!["whatif", "--out", o];
        all.extend(missing);
        let (ok, _, stderr) = pp(&all);
        assert!(!ok);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("none."), "{stderr}");
    }
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(dir);
}

/// Two threads on one core: thread 1 waits for a lock thread 0 holds (no `by=`: the OMPT
/// tool's critical sections) from 10 to 60, spinning, so its run-queue delay grew by 50 over
/// the wait.
const SPUN_LOCK: &str = "pplog 1 p=2
0 0 start
0 1 start
0 0 cpu 0 0
0 1 cpu 0 0
0 0 work_begin
0 1 work_begin
10 1 work_end
10 1 wait_begin lock critical
60 1 wait_end lock critical
60 1 work_begin
100 0 work_end
100 0 cpu 100 0
100 0 stop
100 1 work_end
100 1 cpu 50 50
100 1 stop
";

#[test]
fn demand_cpu_keeps_a_lock_wait_whose_partner_is_unknown() {
    // Nothing says who held the lock, so its timing is taken as unchanged: the wait keeps its
    // measured 50 ns (it used to lose the run-queue delay of the whole span around it: 0).
    let unshared = Target {
        demand: Demand::Cpu,
        ..Target::default()
    };
    let (out, _, predicted) = replay(SPUN_LOCK, &unshared);
    assert_eq!(time_of(&out, 1, "wait_begin lock critical"), 10);
    assert_eq!(time_of(&out, 1, "wait_end lock critical"), 60);
    assert_eq!(time_of(&out, 1, "stop"), 100);
    assert_eq!(predicted, 100);
    assert_eq!(attribution(&out).totals.get(pp::profile::Category::Sl), 50);
}

#[test]
fn demand_cpu_moves_a_workers_start_with_the_fork_that_created_it() {
    // As the OMPT tool writes a worker: it starts 1 ns after the first fork. The master's
    // serial part (0..100) had half a core (50 ns of CPU): with the demand from CPU time it
    // takes 50, the region forks at 50, the worker starts at 51 and works its 50 to 101;
    // the master works 50..100 and leaves the barrier 1 ns after the worker arrives, as
    // measured: 102. A start left at its measured 101 would make the master wait 100..152.
    let log = "pplog 1 p=2
0 0 start
0 0 cpu 0 0
0 0 work_begin
100 0 work_end
100 0 cpu 50 50
100 0 region_begin 1 r
100 0 work_begin
101 1 start
101 1 work_begin
150 0 work_end
150 0 wait_begin barrier implicit
151 1 work_end
151 1 wait_begin barrier implicit
152 0 wait_end barrier implicit
152 0 region_end 1
152 0 stop
152 1 wait_end barrier implicit
152 1 stop
";
    let unshared = Target {
        demand: Demand::Cpu,
        ..Target::default()
    };
    let (out, measured, predicted) = replay(log, &unshared);
    assert_eq!((measured, predicted), (152, 102));
    assert_eq!(time_of(&out, 0, "region_begin 1 r"), 50);
    assert_eq!(time_of(&out, 1, "start"), 51);
    assert_eq!(time_of(&out, 1, "wait_begin barrier implicit"), 101);
    assert_eq!(time_of(&out, 0, "wait_end barrier implicit"), 102);
    // The identity keeps the start where it was.
    let (out, _, _) = replay(log, &Target::default());
    assert_eq!(time_of(&out, 1, "start"), 101);
}

#[test]
fn regrouping_a_run_that_waited_for_cores_warns_and_suggests_demand_cpu() {
    let dir = scratch("contended");
    let log = dir.join("spun.log");
    // Thread 1 got 20 ns of CPU in its 50 ns of work: 30 ns of rc.cpu in 2 × 100 ns, 15%. (Its
    // lock wait has no release time in the log, so none of its delay comes from the wait:
    // docs/attribution.md, "Contention during waits".)
    std::fs::write(
        &log,
        SPUN_LOCK.replace("100 1 cpu 50 50", "100 1 cpu 20 50"),
    )
    .unwrap();
    let out = dir.join("pred.log");
    let (l, o) = (log.to_str().unwrap(), out.to_str().unwrap());
    let (ok, _, stderr) = pp(&["whatif", l, "--group", "0,1", "--out", o]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stderr,
        "pp: warning: ".to_string()
            + l
            + " has 15.0% rc.cpu: its threads waited for a core, and that time counts as demand in the regrouped run; --demand cpu takes the demand from the CPU time they received\n"
    );
    for quiet in [
        &["--group", "0,1", "--demand", "cpu"][..],
        &["--group", "0/1"][..],
        &[][..],
    ] {
        let mut args = vec!["whatif", l, "--out", o, "--force"];
        args.extend_from_slice(quiet);
        let (ok, _, stderr) = pp(&args);
        assert!(ok, "{stderr}");
        assert_eq!(stderr, "", "{quiet:?}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_readings_bound_on_rc_cpu_holds_the_attributions_share() {
    // `pp whatif --group` attributes the log for its warning only where the reading's bound
    // says rc.cpu may pass it. Realistic logs (samples with run-queue delays) with every CPU
    // clock at a fraction of its value (work not backed by CPU time), and the contended log
    // above, and a thread queued after a fork: the attribution's share never exceeds the bound
    // (over the margin for its window).
    use pp::event::{Event, EventKind};
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for seed in 0..8 {
        for (p, keep) in [(2u32, 1.0), (3, 0.7), (4, 0.5), (8, 0.2)] {
            let mut symbols = pp::event::Symbols::default();
            let mut w = pp::log::BinaryWriter::new(Vec::new(), &log_support::header(p)).unwrap();
            log_support::realistic(p, 6_000, 64, seed, &mut symbols, |th, evs, s| {
                let scaled: Vec<Event> = evs
                    .iter()
                    .map(|e| match e.kind {
                        EventKind::Cpu {
                            thread_cpu_ns,
                            run_delay_ns,
                        } => Event {
                            kind: EventKind::Cpu {
                                thread_cpu_ns: (thread_cpu_ns as f64 * keep) as u64,
                                run_delay_ns,
                            },
                            ..*e
                        },
                        _ => *e,
                    })
                    .collect();
                w.write_block(th, &scaled, s).unwrap();
            });
            cases.push((
                format!("seed {seed}, p={p}, cpu x{keep}"),
                w.finish().unwrap(),
            ));
        }
    }
    cases.push((
        "contended".into(),
        SPUN_LOCK
            .replace("100 1 cpu 50 50", "100 1 cpu 20 50")
            .into_bytes(),
    ));
    // Thread 1, forked at 10, records nothing until 100, with 80 ns more run-queue delay: 80
    // ns of its idle time after the fork's release are rc.cpu (25%), none of it work.
    cases.push((
        "queued after a fork".into(),
        b"pplog 1 p=2
0 0 start
0 1 start
0 0 cpu 0 0
0 1 cpu 0 0
10 0 region_begin 1 par
10 0 work_begin
100 1 cpu 0 80
100 1 work_begin
150 1 work_end
150 0 work_end
150 0 region_end 1
160 0 cpu 140 0
160 1 cpu 50 80
160 0 stop
160 1 stop
"
        .to_vec(),
    ));
    let mut over = 0;
    for (what, bytes) in cases {
        let reader = LogReader::from_bytes("t.log", bytes).unwrap();
        let run = MeasuredRun::read_attributed(reader, "t.log", &Default::default()).unwrap();
        let rc = run.rc_cpu.unwrap();
        assert!(
            rc <= run.rc_cpu_bound / 0.9 + 1e-12,
            "{what}: rc.cpu {rc} over its bound {}",
            run.rc_cpu_bound
        );
        over += usize::from(rc > pp::whatif::CONTENTION_WARNING);
    }
    // Both sides of the warning's share are covered.
    assert!((3..33).contains(&over), "{over}");
}

/// The 32-line barrier log of `a_barrier_waits_for_its_last_arrival_on_the_shared_processor`
/// in a region `par`.
fn in_region(log: &str) -> String {
    log.replace("0 1 start\n", "0 1 start\n0 0 region_begin 1 par\n")
        .replace("140 0 stop", "140 0 region_end 1\n140 0 stop")
}

const BARRIER: &str = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
60 1 work_end
60 1 wait_begin barrier b
100 0 work_end
100 0 wait_begin barrier b
100 0 wait_end barrier b
100 1 wait_end barrier b
100 0 work_begin
100 1 work_begin
140 0 work_end
140 1 work_end
140 0 stop
140 1 stop
";

/// `pp whatif --speed` of `log` on a thread, so that a replay that never ends fails the test
/// (after two minutes) instead of stalling it: the predicted wall and the warnings, or the
/// error.
fn replay_in_time(log: Vec<u8>, speed: &str) -> Result<(u64, Vec<String>), String> {
    let (send, receive) = std::sync::mpsc::channel();
    let speed = speed.to_string();
    std::thread::spawn(move || {
        let mut t = Target::default();
        t.add_speed(&speed).unwrap();
        let reader = LogReader::from_bytes("t.log", log).unwrap();
        let run = MeasuredRun::read(reader, "t.log", &t.speeds).unwrap();
        let predicted = predict(&run, &t).map(|p| (p.walls.predicted, p.warnings));
        let _ = send.send(predicted.map_err(|e| e.to_string()));
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the replay ends")
}

#[test]
fn extreme_speeds_are_computed_or_refused_never_saturated() {
    // The categories example's log (2 threads, 1.1 s): its serial phase 1e9 times as slow
    // lasts about 10 years, past a double's exact ns, where the replay used to spin forever
    // on a remainder below a double's step; 1e15 times as slow is past the clock (2^64 ns).
    let recorded =
        std::fs::read(test_support::repository().join("pp/tests/data/categories-p2.log")).unwrap();
    let (wall, warnings) = replay_in_time(recorded.clone(), "serial=1e-9").unwrap();
    assert!(wall > 1u64 << 53 && wall < u64::MAX / 2, "{wall}");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("2^53 ns"), "{warnings:?}");
    let e = replay_in_time(recorded, "serial=1e-15").unwrap_err();
    assert!(e.contains("past the log's clock"), "{e}");
    // The barrier log in a region par: 1e-15 gives 140e15 ns, computed; 1e-20 is refused in
    // one line (it used to print u64::MAX ns and exit 0), and nothing is written.
    let log = in_region(BARRIER);
    let (wall, _) = replay_in_time(log.clone().into_bytes(), "par=1e-15").unwrap();
    let expected = 140e15;
    assert!(
        (wall as f64 - expected).abs() < expected * 1e-9,
        "{wall} ns"
    );
    let dir = scratch("extreme");
    let path = dir.join("b.log");
    std::fs::write(&path, &log).unwrap();
    let out = dir.join("pred.log");
    let output = test_support::pp!()
        .args(["whatif", path.to_str().unwrap(), "--speed", "par=1e-20"])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let e = one_line_error(&output, Some(1), &["past the log's clock", "--speed"]);
    assert!(e.contains("1.400e13 s"), "{e}");
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_identity_replay_keeps_a_backwards_cpu_sample_and_its_warning() {
    // Thread 0's CPU clock goes back at 60 (rule 16: the attribution ignores that sample);
    // the predicted log must keep it, so that its profile and warnings are the measured ones.
    let log = "pplog 1 p=2
0 0 start
0 1 start
0 0 cpu 0 0
0 1 cpu 0 0
0 0 work_begin
0 1 work_begin
40 0 cpu 30 5
60 0 cpu 20 7
100 0 work_end
100 0 cpu 70 12
100 0 stop
100 1 work_end
100 1 cpu 100 0
100 1 stop
";
    let (out, measured, predicted) = replay(log, &Target::default());
    assert_eq!(measured, predicted);
    assert!(out.contains("\n60 0 cpu 20 7\n"), "{out}");
    let (a, b) = (attribution(log), attribution(&out));
    assert_eq!(a.totals, b.totals);
    assert_eq!(a.by_thread, b.by_thread);
    assert!(!a.warnings.is_empty());
    assert_eq!(a.warnings, b.warnings);
}
