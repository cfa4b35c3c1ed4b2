//! PACE models (docs/pace.md): evaluation against closed forms on tiny hand-written templates,
//! the builder on synthetic logs of known structure, the file's round trip and errors, and
//! `lca crossover` of two PACE models end to end.

use std::fmt::Write as _;
use std::path::Path;

use fit::Condition;
use lca::pace::file::{parse, write};
use lca::pace::{BuildRequest, PaceModel, build};
use test_support::{lca, one_line_error, scratch};

/// A PACE file with one step and a subtask `pc.<region> = coefficient * n` over the run.
fn one_step(members: &str, split: &str, cores: u32, coefficient: f64) -> String {
    format!(
        r#"format = 1
kind = "pace"
name = "one"
factors = ["n", "p"]

[held]
iters = 10.0

[application]
iterations = "iters"
startup_s = 0.0
teardown_s = 0.0
replayed = 10

[[template]]
region = "work"
{members}
activity = "work"
{split}

[hardware]
cores = {cores}
speed = 1.0
fork_join_s = 0.0
handoff_s = 0.0
switch_s = 0.0
handoff_shared_s = 0.0
load = 0.0

[subtask]
format = 1
factors = ["n", "p"]

[[subtask.category]]
name = "pc.work"
formula = "n"

[[subtask.category.coefficient]]
name = "n"
value = {coefficient}
std_error = 0.0
half_width = 0.0
"#
    )
}

fn close(a: f64, b: f64) -> bool {
    // A few ns of ordering per step (10 steps) on a run of tenths of a second.
    (a - b).abs() <= 1e-6 * b.abs().max(1e-3)
}

fn t_p(model: &PaceModel, n: f64, p: f64) -> f64 {
    let e = model.evaluate(&[n, p]).unwrap();
    let sum: f64 = e.categories.iter().map(|c| c.1).sum();
    assert!(
        (sum - p * e.t_p).abs() <= 1e-9 * sum.max(1.0),
        "categories sum to p * T_p: {sum} vs {}",
        p * e.t_p
    );
    e.t_p
}

#[test]
fn equal_chunks_with_a_join_take_the_work_over_p() {
    // pc = 1e-3 * n processor-seconds over the run; every thread takes 1/p of it.
    let m = parse(
        "t.toml",
        &one_step("threads = \"all\"", "split = \"equal\"", 64, 1e-3),
    )
    .unwrap();
    for p in [1.0, 2.0, 3.0, 4.0, 7.0] {
        let t = t_p(&m, 1000.0, p);
        assert!(close(t, 1.0 / p), "p={p}: {t} vs {}", 1.0 / p);
    }
}

#[test]
fn chunks_give_the_largest_member_ceil_units_over_m() {
    // 10 rows over m threads: the slowest member has ceil(10/m) of them.
    let m = parse(
        "t.toml",
        &one_step(
            "threads = \"all\"",
            "split = \"chunks\"\nunits = \"10\"",
            64,
            1e-3,
        ),
    )
    .unwrap();
    for p in [2u32, 3, 4, 6] {
        let expected = f64::from(10u32.div_ceil(p)) / 10.0;
        let t = t_p(&m, 1000.0, f64::from(p));
        assert!(close(t, expected), "p={p}: {t} vs {expected}");
    }
}

#[test]
fn two_groups_make_odd_p_pay_for_the_smaller_group() {
    // The step runs on group 0 of 2, the smaller one for odd p: floor(p/2) threads.
    let members = "threads = \"group\"\ngroup = 0\ngroups = 2\nsmaller = \"first\"";
    let m = parse(
        "t.toml",
        &one_step(members, "split = \"chunks\"\nunits = \"12\"", 64, 1e-3),
    )
    .unwrap();
    for p in [4u32, 5, 6, 7] {
        let group = p / 2;
        let expected = f64::from(12u32.div_ceil(group)) / 12.0;
        let t = t_p(&m, 1000.0, f64::from(p));
        assert!(close(t, expected), "p={p}: {t} vs {expected}");
    }
    // p = 5 is as slow as p = 4 (2 threads), p = 6 faster (3).
    assert!(close(t_p(&m, 1000.0, 5.0), t_p(&m, 1000.0, 4.0)));
    assert!(t_p(&m, 1000.0, 6.0) < t_p(&m, 1000.0, 5.0));
    // With the larger group first, group 0 has ceil(p/2): p = 5 gets 3 threads.
    let larger = members.replace("\"first\"", "\"last\"");
    let m = parse(
        "t.toml",
        &one_step(&larger, "split = \"chunks\"\nunits = \"12\"", 64, 1e-3),
    )
    .unwrap();
    assert!(close(t_p(&m, 1000.0, 5.0), 4.0 / 12.0));
}

#[test]
fn past_the_cores_threads_share_them_in_rounds() {
    // 2 cores: p threads dealt round robin, ceil(p/2) on the busiest core, each 1/p of the work.
    let m = parse(
        "t.toml",
        &one_step("threads = \"all\"", "split = \"equal\"", 2, 1e-3),
    )
    .unwrap();
    for p in [1u32, 2, 3, 4, 5, 8] {
        let expected = f64::from(p.div_ceil(2)) / f64::from(p);
        let t = t_p(&m, 1000.0, f64::from(p));
        assert!(close(t, expected), "p={p}: {t} vs {expected}");
    }
    // The sharing is resource contention: rc at p = 3 is (3 * T_p) - 1 s of work, less the
    // time the lone thread waits at the join (li).
    let e = m.evaluate(&[1000.0, 3.0]).unwrap();
    let pc = e.categories.iter().find(|c| c.0 == "pc").unwrap().1;
    assert!(close(pc, 1.0), "pc {pc}");
}

#[test]
fn the_hand_off_latency_grows_with_sharing_until_two_threads_a_core() {
    let text = one_step("threads = \"all\"", "split = \"equal\"", 2, 1e-3)
        .replacen("handoff_s = 0.0", "handoff_s = 1e-5", 1)
        .replacen("handoff_shared_s = 0.0", "handoff_shared_s = 2e-4", 1);
    let h = parse("t.toml", &text).unwrap().hardware;
    // (p - cores) / cores: 0 at p = 2, 0.5 at p = 3, 1 at p = 4 and beyond.
    for (p, share) in [(1, 0.0), (2, 0.0), (3, 0.5), (4, 1.0), (5, 1.0), (9, 1.0)] {
        let handoff = h.handoff(p);
        assert!(close(handoff, 1e-5 + share * 2e-4), "p={p}: {handoff}");
    }
}

#[test]
fn a_step_pays_a_switch_per_round_of_its_members_on_the_busiest_core() {
    use lca::pace::model::Members;
    // All threads on 2 cores: ceil(p/2) rounds past the cores; two groups run at once, each
    // on one core: a group's m members run one after another.
    let all = Members::All;
    let rounds: Vec<u32> = (1..=7).map(|p| all.rounds(p, 2)).collect();
    assert_eq!(rounds, [1, 1, 2, 2, 3, 3, 4]);
    let second = Members::Group {
        group: 1,
        groups: 2,
        smaller_first: true,
    };
    let rounds: Vec<u32> = (2..=7).map(|p| second.rounds(p, 2)).collect();
    assert_eq!(rounds, [1, 2, 2, 3, 3, 4]);
    // On 16 cores nothing up to p = 16 shares a core.
    assert!((1..=16).all(|p| second.rounds(p, 16) == 1 && all.rounds(p, 16) == 1));

    // One step of 1 s of work over the run (10 iterations), all threads, 2 cores, a fork and
    // join of 10 µs and a switch of 50 µs: per iteration ceil(p/2)/p of 0.1 s of work on the
    // busiest core, the fork and join, and a switch per round after the first.
    let text = one_step("threads = \"all\"", "split = \"equal\"", 2, 1e-3)
        .replacen("fork_join_s = 0.0", "fork_join_s = 1e-5", 1)
        .replacen("switch_s = 0.0", "switch_s = 5e-5", 1);
    let m = parse("t.toml", &text).unwrap();
    for p in [1u32, 2, 3, 4, 5, 6] {
        let rounds = f64::from(p.div_ceil(2).max(1));
        let work = if p <= 2 {
            1.0 / f64::from(p)
        } else {
            rounds / f64::from(p)
        };
        let expected = work + 10.0 * (1e-5 + (rounds - 1.0) * 5e-5);
        let t = t_p(&m, 1000.0, f64::from(p));
        // Each step's region_end and next begin add a few ns.
        assert!((t - expected).abs() < 1e-6, "p={p}: {t} vs {expected}");
    }
    // With a busy core's switch of 2 µs: on 2 cores the rounds still cost the fitted 50 µs;
    // swapped to one core, where every round after the first starts on a busy core, 2 µs.
    let busy = parse(
        "t.toml",
        &text.replacen("load = 0.0", "load = 0.0\ncore_switch_s = 2e-6", 1),
    )
    .unwrap();
    assert!((t_p(&busy, 1000.0, 4.0) - t_p(&m, 1000.0, 4.0)).abs() < 1e-9);
    let mut one = busy.clone();
    one.hardware.cores = 1;
    for p in [2u32, 3] {
        let work = 1.0;
        let expected = work + 10.0 * (1e-5 + f64::from(p - 1) * 2e-6);
        let t = t_p(&one, 1000.0, f64::from(p));
        assert!(
            (t - expected).abs() < 1e-6,
            "one core, p={p}: {t} vs {expected}"
        );
    }
}

#[test]
fn run_to_block_one_core_serves_one_member_then_switches_to_the_other() {
    // One step of 1 s of work over the run (10 iterations of 0.1 s), both threads, one core,
    // a switch of 50 us. Processor sharing: both members run at half speed to the end of the
    // step, each waiting for the core half of it (rc 0.1 s an iteration), and the step pays
    // one switch (2 rounds) as a latency: 0.1 s + 50 us an iteration. Run to block: the core
    // switches to member 0 (50 us), which runs its 0.05 s alone and blocks, then to member 1
    // (50 us), which runs its 0.05 s: 0.1 s + 100 us an iteration; member 0 waits for the core
    // during its switch, member 1 during both switches and member 0's work: rc 0.05 s + 150 us.
    // (A slice of 1 s: no member is preempted.)
    let text = one_step("threads = \"all\"", "split = \"equal\"", 1, 1e-3).replacen(
        "switch_s = 0.0",
        "switch_s = 5e-5",
        1,
    );
    let shared = parse("t.toml", &text).unwrap();
    let blocking = text.replacen(
        "load = 0.0",
        "load = 0.0\nsharing = \"run-to-block\"\nslice_s = 1.0",
        1,
    );
    let blocked = parse("t.toml", &blocking).unwrap();
    assert_eq!(
        blocked.hardware.sharing,
        lca::pace::model::CoreSharing::RunToBlock
    );
    let rc = |m: &PaceModel| {
        let e = m.evaluate(&[1000.0, 2.0]).unwrap();
        (e.t_p, e.categories.iter().find(|c| c.0 == "rc").unwrap().1)
    };
    let (t_shared, rc_shared) = rc(&shared);
    let (t_blocked, rc_blocked) = rc(&blocked);
    assert!((t_shared - 10.0 * (0.1 + 5e-5)).abs() < 1e-6, "{t_shared}");
    assert!(
        (t_blocked - 10.0 * (0.1 + 1e-4)).abs() < 1e-6,
        "{t_blocked}"
    );
    assert!((rc_shared - 10.0 * 0.1).abs() < 1e-5, "{rc_shared}");
    assert!(
        (rc_blocked - 10.0 * (0.05 + 1.5e-4)).abs() < 1e-5,
        "{rc_blocked}"
    );
    // With slices of 3 ms the members take turns: 16 slices each (96 ms), then member 0's
    // last 2 ms and member 1's, each after a switch: 34 switches an iteration.
    let sliced = parse(
        "t.toml",
        &blocking.replacen("slice_s = 1.0", "slice_s = 0.003", 1),
    )
    .unwrap();
    let (t_sliced, _) = rc(&sliced);
    assert!(
        (t_sliced - 10.0 * (0.1 + 34.0 * 5e-5)).abs() < 1e-6,
        "{t_sliced}"
    );
}

#[test]
fn the_file_round_trips() {
    let text = one_step(
        "threads = \"group\"\ngroup = 1\ngroups = 2\nsmaller = \"last\"",
        "split = \"chunks\"\nunits = \"n\"",
        3,
        2e-3,
    );
    let m = parse("t.toml", &text).unwrap();
    let written = write(&m);
    let again = parse("w.toml", &written).unwrap();
    assert_eq!(write(&again), written);
    assert_eq!(again.template, m.template);
    assert_eq!(again.application, m.application);
    assert_eq!(again.hardware, m.hardware);
    assert_eq!(again.evaluate(&[64.0, 5.0]), m.evaluate(&[64.0, 5.0]));
    // A file without sharing and slice_s has processor sharing and a 3 ms slice; run to block
    // and another slice are written back as read.
    assert!(
        written.contains("sharing = \"processor\"\nslice_s = 0.003\n"),
        "{written}"
    );
    let other = text.replacen(
        "load = 0.0",
        "load = 0.0\nsharing = \"run-to-block\"\nslice_s = 0.0015",
        1,
    );
    let m = parse("t.toml", &other).unwrap();
    assert_eq!(m.hardware.slice_s, 0.0015);
    let written = write(&m);
    assert!(
        written.contains("sharing = \"run-to-block\"\nslice_s = 0.0015\n"),
        "{written}"
    );
    assert_eq!(parse("w.toml", &written).unwrap().hardware, m.hardware);
    // Without core_switch_s run to block takes switch_s for a hand-over from the queue and a
    // wake-up onto an idle core alike; with it, core_switch_s for the first.
    let sharing = |m: &lca::pace::model::PaceModel| m.hardware.whatif_sharing();
    let switch = m.hardware.switch_s * 1e9;
    assert_eq!(
        sharing(&m),
        pp::whatif::Sharing::RunToBlock {
            slice_ns: 1.5e6,
            switch_ns: switch,
            wake_ns: Some(switch),
            waits: pp::whatif::Waits::Block,
            rendezvous_bytes: None,
        }
    );
    let own = parse(
        "t.toml",
        &other.replacen("load = 0.0", "load = 0.0\ncore_switch_s = 1.5e-6", 1),
    )
    .unwrap();
    assert_eq!(own.hardware.core_switch_s, Some(1.5e-6));
    assert_eq!(
        sharing(&own),
        pp::whatif::Sharing::RunToBlock {
            slice_ns: 1.5e6,
            switch_ns: 1.5e-6 * 1e9,
            wake_ns: Some(switch),
            waits: pp::whatif::Waits::Block,
            rendezvous_bytes: None,
        }
    );
    let written = write(&own);
    assert!(written.contains("core_switch_s = 0.0000015\n"), "{written}");
    assert_eq!(parse("w.toml", &written).unwrap().hardware, own.hardware);
    let bad = parse(
        "t.toml",
        &other.replacen("load = 0.0", "load = 0.0\ncore_switch_s = -1e-6", 1),
    )
    .unwrap_err()
    .to_string();
    assert!(
        bad.contains("hardware.core_switch_s = -0.000001: not a number >= 0"),
        "{bad}"
    );
}

#[test]
fn lca_pace_build_measures_a_busy_cores_switch_or_takes_it_from_the_option() {
    // Measured here: two threads on one CPU, a number of µs (its size is the machine's).
    let s = lca::pace::core_switch::core_switch_s().expect("this thread may run on some CPU");
    assert!(s.is_finite() && s > 0.0, "{s}");
    let dir = scratch("pace-core-switch");
    pipeline_study(&dir);
    let model = dir.join("pipe.toml");
    let build = |extra: &[&str]| {
        lca!()
            .args(["pace", "build"])
            .arg(&dir)
            .args(["--impl", "pipe", "--cores", "2", "--force", "-o"])
            .arg(&model)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = build(&["--core-switch-us", "1.5"]);
    test_support::succeeded("lca pace build", &out);
    let m = lca::pace::file::read(&model).unwrap();
    assert_eq!(m.hardware.core_switch_s, Some(1.5e-6));
    assert!(
        m.notes
            .iter()
            .any(|n| n.starts_with("hardware.core_switch_s: 1.50 µs")),
        "{:?}",
        m.notes
    );
    let out = build(&[]);
    test_support::succeeded("lca pace build", &out);
    let m = lca::pace::file::read(&model).unwrap();
    assert!(
        m.hardware.core_switch_s.is_some_and(|c| c > 0.0),
        "{:?}",
        m.hardware
    );
    let e = one_line_error(&build(&["--core-switch-us=-1"]), Some(1), &[]);
    assert!(
        e.contains("--core-switch-us -1: a number of µs >= 0"),
        "{e}"
    );
}

#[test]
fn bad_files_are_one_line_errors_naming_file_line_and_field() {
    let good = one_step(
        "threads = \"group\"\ngroup = 0\ngroups = 2",
        "split = \"equal\"",
        2,
        1e-3,
    );
    let cases = [
        (
            "group = 0\n",
            "group = 2\n",
            "t.toml:15: template 'work': group: 2 is not below groups = 2",
        ),
        (
            "split = \"equal\"",
            "split = \"chunks\"\nunits = \"rows\"",
            "units: \"rows\" is neither",
        ),
        ("activity = \"work\"", "activity = \"idle\"", "t.toml:20:"),
        ("speed = 1.0", "speed = 1.0\nspeeed = 2.0", "t.toml:"),
        ("cores = 2", "cores = 0", "hardware.cores = 0"),
        (
            "load = 0.0",
            "load = 0.0\nwait_cpu = 1.5",
            "hardware.wait_cpu = 1.5: not a share from 0 to 1",
        ),
        (
            "name = \"pc.work\"",
            "name = \"pc.other\"",
            "subtask: category 'pc.other'",
        ),
        (
            "name = \"pc.work\"",
            "name = \"pc.a\\nb\"",
            "subtask: category 'pc.a\\nb'",
        ),
        (
            "region = \"work\"",
            "region = \"wo rk\"",
            "template 'wo rk': region: not a name a log can hold",
        ),
        (
            "load = 0.0",
            "load = 0.0\nfork_join_shared_s = 1e-6",
            "t.toml:31: hardware.fork_join_shared_s: a model built by an older lca (the field is now switch_s): rebuild it with `lca pace build`",
        ),
        (
            "load = 0.0",
            "load = 0.0\nsharing = \"fair\"",
            "hardware.sharing = 'fair': expected processor or run-to-block",
        ),
        (
            "load = 0.0",
            "load = 0.0\nslice_s = 0.0",
            "hardware.slice_s = 0: not a number of seconds from 1e-9 to 1000",
        ),
    ];
    for (from, to, expected) in cases {
        let text = good.replacen(from, to, 1);
        assert_ne!(text, good, "{from}");
        let e = parse("t.toml", &text).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains(expected), "{e}\nexpected: {expected}");
        assert!(e.starts_with("t.toml"), "{e}");
    }
}

#[test]
fn a_hardware_too_slow_for_the_clock_is_a_one_line_error_not_a_hang() {
    // The bundled tp model, edited to run to block at a speed of 1e-300: every computation
    // outlasts the log's clock. The replay took it one 3 ms slice at a time, for ever; it now
    // skips whole rounds of slices and refuses the run in one line.
    let bundled = test_support::repository().join("lca/tests/data/pace/fft2d-tp.toml");
    let text = std::fs::read_to_string(bundled).unwrap().replacen(
        "speed = 1.0",
        "speed = 1e-300\nsharing = \"run-to-block\"",
        1,
    );
    let dir = scratch("pace-too-slow");
    let model = dir.join("slow.toml");
    std::fs::write(&model, text).unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    let mut command = lca!();
    command
        .args(["pace", "predict"])
        .arg(&model)
        .args(["--at", "n=64,p=6"]);
    std::thread::spawn(move || {
        let _ = send.send(command.output().unwrap());
    });
    let out = receive
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("lca pace predict ends");
    one_line_error(
        &out,
        Some(1),
        &["n=64,p=6", "past the log's clock", "hardware.speed"],
    );
    // Through the other commands the reason is the same, not "category li is NaN".
    let bundled = test_support::repository().join("lca/tests/data/pace/fft2d-tp.toml");
    let out = lca!()
        .arg("predict")
        .arg(bundled)
        .args(["--at", "n=1e12,p=6"])
        .output()
        .unwrap();
    one_line_error(&out, Some(1), &["n=1000000000000", "past the log's clock"]);
}

/// Two threads, each sampled around one 10 ms wait and one 4 ms computation: thread 0's CPU
/// clock grows by `blocked` ns over its wait, thread 1's by `spun` ns; over the computations
/// both grow by the whole 4 ms, and a stretch mixing work and waiting counts for neither.
fn sampled_log(blocked: u64, spun: u64) -> String {
    let mut log = String::from("pplog 1 p=2\n");
    for (t, grew) in [(0u32, blocked), (1, spun)] {
        let _ = write!(
            log,
            "0 {t} start\n\
             1000 {t} cpu 0 0\n\
             2000 {t} wait_begin barrier\n\
             12000000 {t} wait_end barrier\n\
             12001000 {t} cpu {grew} 0\n\
             12002000 {t} work_begin\n\
             16002000 {t} work_end\n\
             16003000 {t} cpu {} 0\n\
             16004000 {t} wait_begin barrier\n\
             17004000 {t} wait_end barrier\n\
             17005000 {t} work_begin\n\
             18005000 {t} work_end\n\
             18006000 {t} cpu {} 0\n\
             18007000 {t} stop\n",
            grew + 4_001_000,
            grew + 9_000_000,
        );
    }
    // Time order, each thread's lines in order.
    let mut lines: Vec<&str> = log.lines().skip(1).collect();
    lines.sort_by_key(|l| l.split(' ').next().unwrap().parse::<u64>().unwrap());
    format!("pplog 1 p=2\n{}\n", lines.join("\n"))
}

#[test]
fn a_regions_fork_and_join_is_the_time_none_of_its_members_worked() {
    use lca::pace::detect::detect;
    use pp::log::LogReader;
    // Region 0 (both threads) from 1000 to 2000: thread 0 works 1010..1400, thread 1 only
    // once it is done, 1405..1800 (one core for both, as on a loaded machine): nobody works
    // for 10 + 5 + 200 ns. Region 1 from 3000 to 4000, both at once 3100..3500 and 3050..3600:
    // nobody for 50 + 400 ns. A region with a wait is not counted.
    let text = "pplog 1 p=2\n\
                0 0 start\n0 1 start\n\
                1000 0 region_begin 0 a\n\
                1010 0 work_begin a\n1400 0 work_end a\n\
                1405 1 work_begin a\n1800 1 work_end a\n\
                2000 0 region_end 0\n\
                3000 0 region_begin 1 b\n\
                3050 1 comm_begin 64\n3100 0 work_begin b\n\
                3500 0 work_end b\n3600 1 comm_end 64\n\
                4000 0 region_end 1\n\
                5000 0 region_begin 2 c\n5010 1 wait_begin recv q\n5500 1 wait_end recv q\n\
                5600 0 region_end 2\n\
                6000 0 stop\n6000 1 stop\n";
    let seen = detect(LogReader::from_bytes("t", text.as_bytes().to_vec()).unwrap()).unwrap();
    let fork_join = |r: &str| seen.regions[r].fork_join_ns.clone();
    assert_eq!(fork_join("a"), [215]);
    assert_eq!(fork_join("b"), [450]);
    assert!(fork_join("c").is_empty());
}

#[test]
fn spin_is_the_cpu_time_a_waiting_thread_used() {
    use lca::pace::spin::spin;
    use pp::log::LogReader;
    // Waiting stretches: 1000 -> 12001000 on each thread (12 ms, 99.98% waiting); the
    // computation stretch is busy and the last one mixes 1 ms of waiting with 1 ms of work.
    let s = |blocked, spun| {
        let text = sampled_log(blocked, spun);
        spin(LogReader::from_bytes("t", text.into_bytes()).unwrap()).unwrap()
    };
    let blocking = s(100_000, 200_000);
    assert_eq!(blocking.waiting_ns, 2 * 12_000_000);
    assert_eq!(blocking.cpu_ns, 300_000);
    assert!(close(blocking.share().unwrap(), 300_000.0 / 24e6));
    let spinning = s(12_000_000, 12_000_000);
    assert!(close(spinning.share().unwrap(), 1.0));
    // The busy stretches (12001000 -> 16003000 on each thread: 4 ms of work in 4.002 ms) got
    // 4.001 ms of CPU each; the last stretch mixes waiting and work and counts for neither.
    assert_eq!(blocking.busy_ns, 2 * 4_002_000);
    assert_eq!(blocking.busy_cpu_ns, 2 * 4_001_000);
    assert!(close(
        blocking.busy_share().unwrap(),
        4_001_000.0 / 4_002_000.0
    ));
}

#[test]
fn past_the_cores_computation_grows_by_compute_shared_per_unit_of_sharing() {
    // 2 cores, 1 s of work split equally; computation takes 1 + g * min(1, (p - 2) / 2) times
    // as long once the threads outnumber the cores: at p = 3, core 0 serves 2 threads of
    // 1/3 s each, stretched by 1 + g/2; from p = 4 on by 1 + g.
    let g = 0.5;
    let text = one_step("threads = \"all\"", "split = \"equal\"", 2, 1e-3).replacen(
        "load = 0.0",
        &format!("load = 0.0\ncompute_shared = {g}"),
        1,
    );
    let m = parse("t.toml", &text).unwrap();
    assert_eq!(m.hardware.compute_shared, g);
    for (p, sharing) in [
        (1u32, 0.0),
        (2, 0.0),
        (3, 0.5),
        (4, 1.0),
        (5, 1.0),
        (8, 1.0),
    ] {
        let expected = f64::from(p.div_ceil(2)) / f64::from(p) * (1.0 + g * sharing);
        let t = t_p(&m, 1000.0, f64::from(p));
        assert!(close(t, expected), "p={p}: {t} vs {expected}");
    }
    // It round-trips, and a negative value is a one-line error.
    assert_eq!(write(&parse("t.toml", &write(&m)).unwrap()), write(&m));
    let bad = text.replacen("compute_shared = 0.5", "compute_shared = -1", 1);
    let e = parse("t.toml", &bad).unwrap_err().to_string();
    assert!(e.contains("hardware.compute_shared = -1"), "{e}");
}

/// A log of `p` threads that split `1000 * n` ns of computation equally in each of `iters`
/// iterations (one region of every thread), on 2 cores beside `load` other runnable threads:
/// thread `i` shares core `i mod 2`, so its computation lasts its demand times the threads on
/// its core, times `max(1, (p + load)/2) / max(1, p/2)`, times `1 + g * sharing` past the
/// cores; its `cpu` samples show the demand alone (the rest is run-queue delay).
fn shared_log(n: u32, p: u32, iters: u32, load: f64, g: f64) -> String {
    let mut out = format!("pplog 1 p={p} impl=eq n={n} iters={iters}\n");
    let demand = 1000.0 * f64::from(n) / f64::from(p);
    let sharing = ((f64::from(p) - 2.0).max(0.0) / 2.0).min(1.0);
    let others = ((f64::from(p) + load) / 2.0).max(1.0) / (f64::from(p) / 2.0).max(1.0);
    let mut events: Vec<(u64, u32, String)> = (0..p).map(|t| (0, t, "start".to_string())).collect();
    let mut cpu = vec![0u64; p as usize];
    let mut delay = vec![0u64; p as usize];
    let mut t = 1000u64;
    for id in 0..u64::from(iters) {
        events.push((t, 0, format!("region_begin {id} step")));
        let mut end = t;
        for th in 0..p {
            let on_core = (th % 2..p).step_by(2).count() as f64;
            let length = (demand * on_core * others * (1.0 + g * sharing)).round() as u64;
            let used = demand.round() as u64;
            events.push((
                t + 1,
                th,
                format!("cpu {} {}", cpu[th as usize], delay[th as usize]),
            ));
            events.push((t + 2, th, "work_begin step".into()));
            events.push((t + 2 + length, th, "work_end step".into()));
            cpu[th as usize] += used;
            delay[th as usize] += length - used;
            events.push((
                t + 3 + length,
                th,
                format!("cpu {} {}", cpu[th as usize], delay[th as usize]),
            ));
            end = end.max(t + 4 + length);
        }
        events.push((end, 0, format!("region_end {id}")));
        t = end + 1;
    }
    for th in 0..p {
        events.push((t + 1000, th, "stop".into()));
    }
    events.sort_by_key(|e| (e.0, e.1));
    for (t, th, what) in events {
        let _ = writeln!(out, "{t} {th} {what}");
    }
    out
}

/// A log of `p` threads on 2 cores that run one region an iteration in rounds: 2 µs after the
/// fork the first round (one member a core) works `10 * n` ns, each later round starts 7 µs
/// (the switch) after the one before it ended, and the join is 3 µs after the last.
fn rounds_log(n: u32, p: u32, iters: u32) -> String {
    forked_log("rr", n, p, iters, 2_000, 3_000)
}

/// [`rounds_log`] with its fork and join, ns, and its implementation's name.
fn forked_log(name: &str, n: u32, p: u32, iters: u32, fork: u64, join: u64) -> String {
    let mut out = format!("pplog 1 p={p} impl={name} n={n} iters={iters}\n");
    let work = 10 * u64::from(n);
    let switch = 7_000u64;
    let mut events: Vec<(u64, u32, String)> = (0..p).map(|t| (0, t, "start".to_string())).collect();
    let mut t = 1000u64;
    for id in 0..u64::from(iters) {
        events.push((t, 0, format!("region_begin {id} step")));
        let mut end = t;
        for th in 0..p {
            let round = u64::from(th / 2);
            let from = t + fork + round * (work + switch);
            events.push((from, th, "work_begin step".into()));
            events.push((from + work, th, "work_end step".into()));
            end = end.max(from + work + join);
        }
        events.push((end, 0, format!("region_end {id}")));
        t = end + 1;
    }
    for th in 0..p {
        events.push((t + 1000, th, "stop".into()));
    }
    events.sort_by_key(|e| (e.0, e.1));
    for (t, th, what) in events {
        let _ = writeln!(out, "{t} {th} {what}");
    }
    out
}

/// A study folder of [`rounds_log`]s: n = 1000, 3000, p = 2..4 on 2 cores, one run each.
fn rounds_study(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for n in [1000u32, 3000] {
        for p in 2u32..=4 {
            std::fs::write(
                logs.join(format!("rr-model-n{n}-p{p}-r1.log")),
                rounds_log(n, p, 6),
            )
            .unwrap();
        }
    }
    dir
}

#[test]
fn the_builder_fits_a_switch_per_round_from_the_runs_past_the_cores() {
    let dir = rounds_study("pace-rounds");
    let request = BuildRequest {
        study: dir.clone(),
        implementation: "rr".into(),
        conditions: Vec::new(),
        cores: 2,
        replayed: 6,
        core_switch_s: None,
    };
    let m = build(&request).unwrap();
    // No member works for 2 + 3 µs at p = 2, and 7 µs more at p = 3 and 4 (2 rounds).
    let h = &m.hardware;
    assert!((h.fork_join_s - 5e-6).abs() < 1e-12, "{}", h.fork_join_s);
    assert!((h.switch_s - 7e-6).abs() < 1e-12, "{}", h.switch_s);
    // The model's region at p = 6 (3 rounds): 3 * 10 n ns of work on the busiest core, the
    // fork and join, 2 switches; T_p per iteration within the sharing the replay does.
    let e = m.evaluate(&[1000.0, 6.0]).unwrap();
    let region = e.replayed_wall_s / f64::from(e.replayed);
    let expected = 3.0 * 10e-6 + 5e-6 + 2.0 * 7e-6;
    assert!(
        (region - expected).abs() < 0.15 * expected,
        "{region} vs {expected}"
    );
    // Both sharings were fitted to the runs past the cores; the one kept is the closer, and
    // the file's [error] is its own.
    let note = m
        .notes
        .iter()
        .find(|n| n.starts_with("hardware.sharing: "))
        .unwrap_or_else(|| panic!("{:?}", m.notes));
    let percents: Vec<f64> = note
        .split_whitespace()
        .filter_map(|w| w.trim_end_matches([',', ':']).strip_suffix('%'))
        .map(|v| v.parse().unwrap())
        .collect();
    let (blocked, shared) = (percents[0], percents[1]);
    let kept = if blocked < shared {
        lca::pace::model::CoreSharing::RunToBlock
    } else {
        lca::pace::model::CoreSharing::Processor
    };
    assert_eq!(m.hardware.sharing, kept, "{note}");
    let sd = 100.0 * m.error.unwrap().relative_sd;
    assert!((sd - blocked.min(shared)).abs() < 0.06, "{sd} vs {note}");
    let mut other = m.clone();
    other.hardware.sharing = match kept {
        lca::pace::model::CoreSharing::RunToBlock => lca::pace::model::CoreSharing::Processor,
        lca::pace::model::CoreSharing::Processor => lca::pace::model::CoreSharing::RunToBlock,
    };
    assert_ne!(
        other.evaluate(&[1000.0, 4.0]).unwrap().t_p,
        m.evaluate(&[1000.0, 4.0]).unwrap().t_p,
        "the two sharings differ"
    );
}

#[test]
fn the_builder_takes_the_fork_and_join_that_fits_the_runs_not_the_median_log() {
    // 2 cores, p = 2..4 (past the cores, rounds with a switch of 7 µs). The small regions (10 µs of work a member) fork and join in 2 + 3 µs; the
    // large ones (1 ms) in 20 + 10 µs, as when their members slept between regions and were
    // woken. Half the logs at p = 2 each: the median of their medians is 30 µs, which makes a small
    // region 40 µs where it took 15. The runs themselves say 5 µs: it costs the large ones
    // 2.5% and spares the small ones a factor of 2.7.
    let dir = scratch("pace-fork-join-modes");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for r in 1..=3 {
        for (n, fork, join) in [(1000u32, 2_000u64, 3_000u64), (100_000, 20_000, 10_000)] {
            for p in 2..=4 {
                std::fs::write(
                    logs.join(format!("fj-model-n{n}-p{p}-r{r}.log")),
                    forked_log("fj", n, p, 6, fork, join),
                )
                .unwrap();
            }
        }
    }
    let request = BuildRequest {
        study: dir.clone(),
        implementation: "fj".into(),
        conditions: Vec::new(),
        cores: 2,
        replayed: 6,
        core_switch_s: None,
    };
    let m = build(&request).unwrap();
    assert!(
        (m.hardware.fork_join_s - 5e-6).abs() < 1e-12,
        "{}",
        m.hardware.fork_join_s
    );
    assert!(
        m.notes
            .iter()
            .any(|n| n.starts_with("hardware.fork_join_s: ")
                && n.contains("5.0 µs fits their T_p best")
                && n.contains("30.0 µs")),
        "{:?}",
        m.notes
    );
    let per_iteration = |n: f64| {
        let e = m.evaluate(&[n, 2.0]).unwrap();
        e.replayed_wall_s / f64::from(e.replayed)
    };
    let small = per_iteration(1000.0);
    assert!((small / 15e-6 - 1.0).abs() < 0.1, "{small}");
    let large = per_iteration(100_000.0);
    assert!((large / 1.03e-3 - 1.0).abs() < 0.05, "{large}");
}

#[test]
fn lca_pace_predict_swaps_the_switch_with_the_cores() {
    // Built on 2 cores, where a switch per round past the cores is 7 µs, with a busy core's
    // switch of 1.5 µs; predicted on one core, where every round starts on a busy core, and
    // with --switch-us 1, which sets every switch (on the 2-core VM a one-core switch is
    // about 1.05 µs, a wake-up onto the other, idle core about 19 µs:
    // docs/pace.md#swapping-a-layer).
    let dir = rounds_study("pace-switch-swap");
    let model = dir.join("rr.toml");
    let out = lca!()
        .args(["pace", "build"])
        .arg(&dir)
        .args([
            "--impl",
            "rr",
            "--cores",
            "2",
            "--core-switch-us",
            "1.5",
            "-o",
        ])
        .arg(&model)
        .output()
        .unwrap();
    test_support::succeeded("lca pace build", &out);
    let m = lca::pace::file::read(&model).unwrap();
    let predicted = |extra: &[&str]| -> f64 {
        let out = lca!()
            .args(["pace", "predict"])
            .arg(&model)
            .args(["--at", "n=1000,p=4", "--cores", "1"])
            .args(extra)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let row = stdout
            .lines()
            .find(|l| l.starts_with("n=1000,p=4"))
            .unwrap_or_else(|| panic!("{stdout}{}", String::from_utf8_lossy(&out.stderr)));
        row.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let mut one = m.clone();
    one.hardware.cores = 1;
    let busy = one.evaluate(&[1000.0, 4.0]).unwrap().t_p;
    one.hardware.core_switch_s = None;
    let fitted = one.evaluate(&[1000.0, 4.0]).unwrap().t_p;
    one.hardware.switch_s = 1e-6;
    let swapped = one.evaluate(&[1000.0, 4.0]).unwrap().t_p;
    assert!((predicted(&[]) - busy).abs() < 1e-6, "{busy}");
    assert!(
        (predicted(&["--switch-us", "1"]) - swapped).abs() < 1e-6,
        "{swapped}"
    );
    // Four members a step on one core, six iterations: three switches a step of the busy
    // core's 1.5 µs, not the fitted 7 µs; --switch-us 1 takes half a µs less again.
    assert!(fitted - busy > 3.0 * 5e-6 * 6.0, "{fitted} {busy}");
    assert!(busy - swapped > 3.0 * 0.4e-6 * 6.0, "{busy} {swapped}");
    let out = lca!()
        .args(["pace", "predict"])
        .arg(&model)
        .args(["--at", "n=1000,p=4", "--switch-us=-1"])
        .output()
        .unwrap();
    let e = one_line_error(&out, Some(1), &[]);
    assert!(e.contains("--switch-us -1: a number of µs >= 0"), "{e}");
}

/// `shared_log` with every time `k` times as long but the CPU clocks as they were: a run the
/// machine slowed `k` times (the rest of its computation is run-queue delay).
fn slowed(text: &str, k: u64) -> String {
    let mut lines = text.lines();
    let mut out = lines.next().unwrap().to_string() + "\n";
    for l in lines {
        let (t, rest) = l.split_once(' ').unwrap();
        let _ = writeln!(out, "{} {rest}", t.parse::<u64>().unwrap() * k);
    }
    out
}

#[test]
fn one_training_run_three_times_off_hardly_moves_the_fitted_load() {
    // Ten runs with a core per thread beside 2 other runnable threads, one of them (n = 3000,
    // p = 2) 3 times as long. Huber's loss of ln(measured / predicted), linear past 25% off,
    // keeps `load` where the nine say (within 10%); least squares, searched here over the
    // same model, moves it further (ln 3 / 10 on the mean: about 20%).
    let load = 2.0;
    let study = |outlier: bool| {
        let dir = scratch(if outlier {
            "pace-outlier"
        } else {
            "pace-clean"
        });
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        let mut walls = Vec::new();
        for n in [1000u32, 2000, 3000, 4000, 5000] {
            for p in [1u32, 2] {
                let mut text = shared_log(n, p, 6, load, 0.0);
                if outlier && n == 3000 && p == 2 {
                    text = slowed(&text, 3);
                }
                let last = text.lines().last().unwrap();
                let wall: u64 = last.split(' ').next().unwrap().parse().unwrap();
                walls.push(([f64::from(n), f64::from(p)], wall as f64 * 1e-9));
                std::fs::write(logs.join(format!("eq-model-n{n}-p{p}-r1.log")), text).unwrap();
            }
        }
        let request = BuildRequest {
            study: dir.clone(),
            implementation: "eq".into(),
            conditions: Vec::new(),
            cores: 2,
            replayed: 6,
            core_switch_s: None,
        };
        (build(&request).unwrap(), walls)
    };
    let (clean, _) = study(false);
    let (m, walls) = study(true);
    let robust = m.hardware.load;
    assert!(
        (clean.hardware.load - load).abs() <= 0.05,
        "{}",
        clean.hardware.load
    );
    assert!(
        (robust - clean.hardware.load).abs() < 0.1 * clean.hardware.load,
        "{robust} vs {}",
        clean.hardware.load
    );
    // Least squares on the same model and runs, over loads of 1 to 4 in steps of 0.05.
    let mut trial = m.clone();
    let mut best = (f64::INFINITY, 0.0);
    for k in 0..=60 {
        trial.hardware.load = 1.0 + 0.05 * f64::from(k);
        let sum: f64 = walls
            .iter()
            .map(|(point, wall)| (wall / trial.evaluate(point).unwrap().t_p).ln().powi(2))
            .sum();
        if sum < best.0 {
            best = (sum, trial.hardware.load);
        }
    }
    let squares = best.1;
    assert!(
        (squares - clean.hardware.load).abs() > 0.1 * clean.hardware.load,
        "least squares {squares} vs {}",
        clean.hardware.load
    );
    assert!((squares - clean.hardware.load).abs() > (robust - clean.hardware.load).abs());
}

#[test]
fn the_builder_fits_load_and_compute_shared_to_the_runs() {
    fits_load_and_compute_shared(1.0, 0.5, "pace-shared");
}

#[test]
fn the_builder_fits_a_compute_shared_below_zero_where_the_load_overstates_past_the_cores() {
    // Past the cores the runs took 20% less per unit of sharing than the load of 1 fitted at
    // p = 2 says (on the 2-core VM, dp: -0.11 to -0.24 in ten quiet studies).
    fits_load_and_compute_shared(1.0, -0.2, "pace-shared-below");
}

fn fits_load_and_compute_shared(load: f64, g: f64, name: &str) {
    let dir = scratch(name);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for n in [1000u32, 3000] {
        for p in 2u32..=6 {
            std::fs::write(
                logs.join(format!("eq-model-n{n}-p{p}-r1.log")),
                shared_log(n, p, 6, load, g),
            )
            .unwrap();
        }
    }
    let request = BuildRequest {
        study: dir.clone(),
        implementation: "eq".into(),
        conditions: Condition::parse_all(&["p<=4".to_string()]).unwrap(),
        cores: 2,
        replayed: 6,
        core_switch_s: None,
    };
    let m = build(&request).unwrap();
    // The runs at p = 2 say (2 + load)/2; the grid's step there is 0.04.
    assert!(
        (m.hardware.load - load).abs() <= 0.03,
        "{}",
        m.hardware.load
    );
    // The runs at p = 3, 4 say 1 + g/2 and 1 + g beyond that; the grid's step is 0.005, and
    // a few ns of ordering per step are not in the logs' computation.
    assert!(
        (m.hardware.compute_shared - g).abs() <= 0.01,
        "{}",
        m.hardware.compute_shared
    );
    let says = if g < 0.0 {
        "% less per unit"
    } else {
        "% longer per unit"
    };
    assert!(
        m.notes
            .iter()
            .any(|n| n.starts_with("hardware.compute_shared") && n.contains(says)),
        "{:?}",
        m.notes
    );
    assert!(
        m.notes.iter().any(|n| n.contains("hardware.load")),
        "{:?}",
        m.notes
    );
    // p = 5 and 6, beyond the runs it was built from: the busiest core's ceil(p/2) threads.
    for p in [5u32, 6] {
        let text = shared_log(3000, p, 6, load, g);
        let last: u64 = text
            .lines()
            .last()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let truth = last as f64 * 1e-9;
        let predicted = m.evaluate(&[3000.0, f64::from(p)]).unwrap().t_p;
        assert!(
            (predicted / truth - 1.0).abs() < 0.02,
            "p={p}: {predicted} vs {truth}"
        );
    }
}

/// A synthetic `tp`-like log: two groups of floor(p/2) and ceil(p/2) threads in a pipeline of
/// `iters` iterations; group 0 computes `make` (no sizes), group 1 copies `n` rows of 64 bytes
/// in chunks (`move`) after a hand-off from `make` (`take`, `by=` group 0's last thread).
fn pipeline_log(n: u32, p: u32, iters: u32) -> String {
    let mut out = format!("pplog 1 p={p} impl=pipe n={n} iters={iters}\n");
    let g0: Vec<u32> = (0..p / 2).collect();
    let g1: Vec<u32> = (p / 2..p).collect();
    let team = |g: &[u32]| g.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let mut events: Vec<(u64, u32, String)> = (0..p).map(|t| (0, t, "start".to_string())).collect();
    let (mut t0, mut t1, mut id) = (1000u64, 1000u64, 0u64);
    let work = 1000 * u64::from(n);
    for _ in 0..iters {
        // Group 0: make.
        let lead0 = *g0.last().unwrap();
        events.push((
            t0,
            lead0,
            format!("region_begin {id} make team={}", team(&g0)),
        ));
        for &t in &g0 {
            events.push((t0 + 10, t, "work_begin make".into()));
            events.push((t0 + 10 + work / g0.len() as u64, t, "work_end make".into()));
        }
        let made = t0 + 20 + work / g0.len() as u64;
        events.push((made, lead0, format!("region_end {id}")));
        id += 1;
        t0 = made + 10;
        // Group 1: take (waits for make), then move.
        let lead1 = *g1.last().unwrap();
        let first1 = g1[0];
        events.push((
            t1,
            lead1,
            format!("region_begin {id} take team={}", team(&g1)),
        ));
        let taken = if made + 5 > t1 {
            events.push((t1 + 1, first1, "wait_begin recv full".into()));
            events.push((made + 5, first1, format!("wait_end recv full by={lead0}")));
            made + 6
        } else {
            t1 + 2
        };
        events.push((taken, lead1, format!("region_end {id}")));
        id += 1;
        let begin = taken + 10;
        events.push((
            begin,
            lead1,
            format!("region_begin {id} move team={}", team(&g1)),
        ));
        let m = g1.len() as u32;
        let mut end = begin;
        for (j, &t) in g1.iter().enumerate() {
            let rows = n / m + u32::from((j as u32) < n % m);
            let d = 500 * u64::from(rows);
            events.push((begin + 5, t, format!("comm_begin {}", 64 * rows)));
            events.push((begin + 5 + d, t, format!("comm_end {}", 64 * rows)));
            end = end.max(begin + 10 + d);
        }
        events.push((end, lead1, format!("region_end {id}")));
        id += 1;
        t1 = end + 10;
    }
    let stop = t0.max(t1) + 1000;
    for t in 0..p {
        events.push((stop, t, "stop".into()));
    }
    events.sort_by_key(|e| (e.0, e.1));
    for (t, th, what) in events {
        let _ = writeln!(out, "{t} {th} {what}");
    }
    out
}

fn pipeline_study(dir: &Path) {
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for n in [13u32, 25] {
        for p in [2u32, 3, 4, 5] {
            let text = pipeline_log(n, p, 8);
            std::fs::write(logs.join(format!("pipe-model-n{n}-p{p}-r1.log")), text).unwrap();
        }
    }
    // Another implementation's log is not read.
    std::fs::write(
        logs.join("other-model-n12-p2-r1.log"),
        pipeline_log(13, 2, 8).replace("impl=pipe", "impl=other"),
    )
    .unwrap();
}

#[test]
fn the_builder_derives_groups_chunks_and_hand_offs_from_the_logs() {
    let dir = scratch("pace-build");
    pipeline_study(&dir);
    let request = BuildRequest {
        study: dir.clone(),
        implementation: "pipe".into(),
        conditions: Condition::parse_all(&["p<=4".to_string()]).unwrap(),
        cores: 64,
        replayed: 4,
        core_switch_s: None,
    };
    let m = build(&request).unwrap();
    assert_eq!(m.factors, ["n", "p"]);
    assert_eq!(m.held.get("iters"), Some(&8.0));
    assert_eq!(m.application.iterations, "iters");
    let regions: Vec<&str> = m.template.iter().map(|s| s.region.as_str()).collect();
    assert_eq!(regions, ["make", "take", "move"]);
    use lca::pace::model::{Activity, Handoff, Members, Split};
    let group = |g| Members::Group {
        group: g,
        groups: 2,
        smaller_first: true,
    };
    assert_eq!(m.template[0].members, group(0));
    assert_eq!(m.template[0].activity, Activity::Work);
    assert_eq!(m.template[1].members, group(1));
    assert_eq!(m.template[1].activity, Activity::Wait);
    assert_eq!(
        m.template[1].waits_for,
        Some(Handoff {
            after: "make".into(),
            lag: 0
        })
    );
    assert_eq!(m.template[2].activity, Activity::Comm);
    assert_eq!(m.template[2].split, Split::Chunks { units: "n".into() });
    assert!(
        m.notes.iter().any(|n| n.contains("2 groups")),
        "{:?}",
        m.notes
    );
    // Its own runs are predicted closely (the logs have no noise), and p = 5 beyond them.
    let error = m.error.unwrap();
    assert_eq!(error.runs, 6);
    // Not exact: the subtask is fitted over two levels of n, the latencies are medians, and
    // the replayed iterations are scaled to the loop.
    assert!(error.relative_sd < 0.1, "{error:?}");
    let measured = |n: u32, p: u32| {
        let text = pipeline_log(n, p, 8);
        let first: u64 = 0;
        let last: u64 = text
            .lines()
            .last()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        (last - first) as f64 * 1e-9
    };
    let predicted = m.evaluate(&[25.0, 5.0]).unwrap().t_p;
    let truth = measured(25, 5);
    assert!(
        (predicted / truth - 1.0).abs() < 0.1,
        "{predicted} vs {truth}"
    );
    // The file it writes reads back the same.
    let text = write(&m);
    assert_eq!(write(&parse("m.toml", &text).unwrap()), text);
}

#[test]
fn copies_are_dealt_in_the_finest_units_the_sizes_allow() {
    // With n even, the logs at p <= 4 (1 or 2 members copying) show sizes that are all
    // multiples of n/2 rows: "2 halves" fits them as well as "n rows". The finest, n rows,
    // is taken: at p = 5 the 3 members copy 6, 5 and 5 of 16 rows (as the logs there do),
    // not 1, 1 and 0 halves.
    let dir = scratch("pace-units");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for n in [16u32, 64] {
        for p in [2u32, 3, 4, 5] {
            std::fs::write(
                logs.join(format!("pipe-model-n{n}-p{p}-r1.log")),
                pipeline_log(n, p, 8),
            )
            .unwrap();
        }
    }
    let request = BuildRequest {
        study: dir.clone(),
        implementation: "pipe".into(),
        conditions: Condition::parse_all(&["p<=4".to_string()]).unwrap(),
        cores: 64,
        replayed: 4,
        core_switch_s: None,
    };
    let m = build(&request).unwrap();
    use lca::pace::model::Split;
    let step = m.template.iter().find(|s| s.region == "move").unwrap();
    assert_eq!(step.split, Split::Chunks { units: "n".into() });
    // The busiest member at p = 5 copies ceil(16/3) = 6 of 16 rows: its copy takes 6/16 of
    // the region's copying, as the log at p = 5 says (500 ns a row: 3 us).
    let measured = pipeline_log(16, 5, 8);
    let last: u64 = measured
        .lines()
        .last()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let predicted = m.evaluate(&[16.0, 5.0]).unwrap().t_p;
    let truth = last as f64 * 1e-9;
    assert!(
        (predicted / truth - 1.0).abs() < 0.1,
        "{predicted} vs {truth}"
    );
}

#[test]
fn lca_pace_build_predict_choose_and_crossover_end_to_end() {
    let dir = scratch("pace-cli");
    pipeline_study(&dir);
    let a = dir.join("pipe.toml");
    let out = lca!()
        .args(["pace", "build"])
        .arg(&dir)
        .args(["--impl", "pipe", "--cores", "64", "-o"])
        .arg(&a)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A second model: the same with cores twice as fast.
    let b = dir.join("fast.toml");
    let text = std::fs::read_to_string(&a).unwrap();
    let fast = text
        .replacen("name = \"pipe\"", "name = \"fast\"", 1)
        .replacen("speed = 1.0", "speed = 2.0", 1);
    std::fs::write(&b, fast).unwrap();
    let out = lca!().arg("crossover").arg(&a).arg(&b).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // B (twice the speed) wins everywhere, with no crossing.
    assert!(
        stdout.contains("p=5: B from 13 to 25; crossing: none"),
        "{stdout}"
    );
    // A PACE model's interval is its error on the runs it was built from, not a fit's
    // coefficients, and the verdict says so.
    assert!(
        stdout.contains(
            "verdict: At 90% confidence in the models' errors on the runs they were built from \
             alone: fast is faster"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("model error: the intervals hold the models' errors on the runs"),
        "{stdout}"
    );
    assert!(!stdout.contains("coefficients"), "{stdout}");
    let out = lca!()
        .arg("crossover")
        .arg(&a)
        .arg(&b)
        .args(["--format", "json"])
        .output()
        .unwrap();
    test_support::succeeded("lca crossover --format json", &out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["interval_basis"]["A"], "error on the runs it was built from",
        "{doc}"
    );
    // No run narrows a PACE model's interval: --suggest says so rather than "nothing to
    // decide: every point has a winner at 90%" (its placeholder categories have no variance).
    let out = lca!()
        .arg("crossover")
        .arg(&a)
        .arg(&b)
        .args(["--suggest", "2"])
        .output()
        .unwrap();
    let e = one_line_error(&out, Some(1), &["no single run narrows"]);
    assert!(e.contains("pipe: a PACE model's interval"), "{e}");
    // Along p too: between two whole p a model's categories are the straight line between
    // theirs, so the solver may look between them (it used to stop at the first fractional
    // p: "a template is replayed on a whole number of threads").
    let out = lca!()
        .arg("crossover")
        .arg(&a)
        .arg(&b)
        .args(["--var", "p", "--at", "n=25"])
        .output()
        .unwrap();
    test_support::succeeded("lca crossover --var p", &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("no crossover in the range"), "{stdout}");
    let m = lca::pace::file::read(&a).unwrap();
    let model = lca::pace::seam::performance(m.clone()).unwrap();
    let at = |p: f64| model.predict(&[25.0, p]);
    let (four, half, five) = (at(4.0), at(4.5), at(5.0));
    for k in 0..four.categories.len() {
        let (x, y, z) = (
            four.categories[k].value,
            half.categories[k].value,
            five.categories[k].value,
        );
        assert!(
            (y - 0.5 * (x + z)).abs() <= 1e-12 * (x.abs() + z.abs()),
            "{x} {y} {z}"
        );
    }
    assert!(
        m.evaluate(&[25.0, 4.5]).is_err(),
        "the replay itself takes whole p"
    );
    let out = lca!()
        .args(["pace", "choose"])
        .arg(&a)
        .arg(&b)
        .args(["--at", "n=25,p=4"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("choose fast"), "{stdout}");
    assert!(
        stdout.contains("pipe takes ") && stdout.contains(": fast is faster at 90%"),
        "{stdout}"
    );
    let trace = dir.join("trace.log");
    let predict_trace = || {
        lca!()
            .args(["pace", "predict"])
            .arg(&a)
            .args(["--at", "n=25,p=3", "--trace"])
            .arg(&trace)
            .output()
            .unwrap()
    };
    let out = predict_trace();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&trace)
            .unwrap()
            .starts_with("pplog 1 p=3")
    );
    // Not replaced without --force, and said so by the option's name.
    let e = one_line_error(&predict_trace(), Some(1), &[]);
    assert!(
        e.starts_with("Error: --trace ") && e.contains("--force"),
        "{e}"
    );
    // Below one thread nothing is replayed, nor between: refused in one line.
    let out = lca!()
        .arg("predict")
        .arg(&a)
        .args(["--at", "n=25,p=0.5"])
        .output()
        .unwrap();
    let e = one_line_error(&out, Some(1), &[]);
    assert!(e.contains("whole number"), "{e}");
}

/// `lca report` with a PACE model and a flat model of the same implementation: each validation
/// run against both, which is closer, and where. The PACE model takes `1e-3 n / p` (equal split,
/// cores enough), the flat one `2e-3 n / p`; at n = 1000 they say 0.5 and 1 s at p = 2, 0.25
/// and 0.5 s at p = 4.
#[test]
fn lca_report_puts_the_hierarchical_model_beside_the_flat_one() {
    let dir = scratch("pace-report");
    let pace = dir.join("one.toml");
    std::fs::write(
        &pace,
        one_step("threads = \"all\"", "split = \"equal\"", 64, 1e-3),
    )
    .unwrap();
    let flat = dir.join("flat.toml");
    std::fs::write(
        &flat,
        "format = 1\nname = \"one\"\nfactors = [\"n\", \"p\"]\n\n[[category]]\n\
         name = \"pc\"\nformula = \"n\"\n\n[[category.coefficient]]\nname = \"n\"\n\
         value = 2e-3\nstd_error = 0.0\nhalf_width = 0.0\n",
    )
    .unwrap();
    let data = dir.join("runs.dat");
    std::fs::write(
        &data,
        "impl=one n=1000 p=2 wall=0.6 pc=1.2 role=validate\n\
         impl=one n=1000 p=4 wall=0.45 pc=1.8 role=validate\n\
         impl=one n=1000 p=4 wall=9 pc=36 role=model\n",
    )
    .unwrap();
    let out = lca!()
        .arg("report")
        .arg(&pace)
        .arg(&flat)
        .arg("--data")
        .arg(&data)
        .arg("-o")
        .arg(dir.join("report"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Errors: p = 2: 1/6 against 2/3; p = 4: 4/9 against 1/9. Means 30.6% and 38.9%.
    let sentence = "one: the hierarchical model predicts the 2 validation runs better (mean T_p \
                    error 30.6% hierarchical, 38.9% flat; the hierarchical one is closer on 1 of \
                    them); the hierarchical model is closer on average at p = 2.";
    assert!(stdout.contains(sentence), "{stdout}");
    assert!(stdout.contains("16.7%"), "{stdout}");
    assert!(stdout.contains("44.4%"), "{stdout}");
    let html = std::fs::read_to_string(dir.join("report").join("index.html")).unwrap();
    assert!(
        html.contains("Hierarchical against flat: one"),
        "no section"
    );
    // The PACE model's own section says what it is: its error, hardware, template and
    // subtask layer, not the placeholder categories that let the other commands take it.
    let pace_section = html
        .split("<h2>one</h2>")
        .nth(1)
        .and_then(|s| s.split("<h2>").next())
        .expect("a section of the PACE model");
    assert!(
        pace_section.contains("A hierarchical (PACE) model"),
        "{pace_section}"
    );
    assert!(pace_section.contains("Hardware layer: "), "{pace_section}");
    assert!(
        pace_section.contains("<h3>Parallel template: one iteration of the loop</h3>"),
        "{pace_section}"
    );
    assert!(
        pace_section.contains("<td>1</td><td>work</td><td>all</td><td>work</td><td>equal</td>"),
        "{pace_section}"
    );
    assert!(pace_section.contains("Subtask layer"), "{pace_section}");
    assert!(!pace_section.contains("<td>li</td>"), "{pace_section}");
    assert!(
        !pace_section.contains("Built from 0 runs"),
        "{pace_section}"
    );
    // The flat model's section keeps its table of categories.
    let flat_section = html.split("<h2>one</h2>").nth(2).expect("the flat model's");
    assert!(flat_section.contains("<td>pc</td>"), "{flat_section}");
}

/// A dp model of the README's study (five regions an iteration, each in chunks of `n` rows
/// among all threads; run to block on 2 cores), at p = 8: one more row at `n + 1` moves `T_p`
/// by little. When a region's end waited only for the member that ended last in the template
/// (each member on its own core: one with most rows), a member queued last on a core ended
/// after its region had closed, the next region's members queued behind it, and every `n`
/// with `n mod 8` = 3 or 5 predicted a quarter more than its neighbours (n = 443: 1.249 s
/// against 0.997 and 1.006 s at 442 and 444).
#[test]
fn one_row_more_moves_a_run_to_block_replay_by_little() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pace/readme-study-dp.toml");
    let model = lca::pace::file::read(&path).unwrap();
    let times: Vec<f64> = (440..450).map(|n| t_p(&model, f64::from(n), 8.0)).collect();
    for (k, w) in times.windows(2).enumerate() {
        let step = w[1] / w[0] - 1.0;
        assert!(
            step.abs() < 0.05,
            "n = {} to {}: T_p {} to {} ({:+.1}%)",
            440 + k,
            441 + k,
            w[0],
            w[1],
            100.0 * step
        );
    }
}

/// `choose` names the lower prediction; `margin` says whether the runner-up is behind by more
/// than the two models' errors allow at 90%: `1e-3 n / p` against `1.1e-3 n / p` (10% apart)
/// are told apart with errors of 1% over 12 runs, not with errors of 30%.
#[test]
fn a_choice_says_whether_the_models_errors_allow_it() {
    let model =
        |name: &str, coefficient: f64, sd: f64| {
            let text = one_step("threads = \"all\"", "split = \"equal\"", 64, coefficient)
                .replacen("name = \"one\"", &format!("name = \"{name}\""), 1)
                + &format!("\n[error]\nrelative_sd = {sd}\nruns = 12\n");
            parse("m.toml", &text).unwrap()
        };
    let at = [("n".to_string(), 1000.0), ("p".to_string(), 2.0)];
    for (sd, told) in [(0.01, true), (0.3, false)] {
        let models = [model("slow", 1.1e-3, sd), model("quick", 1e-3, sd)];
        let (best, times) = lca::pace::choose(&models, &at).unwrap();
        assert_eq!(best, 1);
        let (next, ahead, significant) = lca::pace::choose::margin(&models, best, &times).unwrap();
        assert_eq!(next, 0);
        assert!((ahead - 0.1).abs() < 1e-6, "{ahead}");
        assert_eq!(significant, told, "sd {sd}");
    }
}

/// With validated errors, a PACE model's interval is that error alone: its own error on the
/// runs it was built from measures the same thing, and adding the two counted it twice. Two
/// models of `1e-3 n / p` and `2e-3 n / p` (own errors 30% and 40%) with validated errors of
/// 10% over 5 points and 20% over 3: the comparison's half-width is the Welch–Satterthwaite t
/// times `sqrt((0.1 T_A)² + (0.2 T_B)²)`.
#[test]
fn a_validated_error_takes_the_place_of_a_pace_models_own() {
    let model = |coefficient: f64, sd: f64| {
        let text = one_step("threads = \"all\"", "split = \"equal\"", 64, coefficient)
            + &format!("\n[error]\nrelative_sd = {sd}\nruns = 12\n");
        lca::pace::seam::performance(parse("m.toml", &text).unwrap()).unwrap()
    };
    let (a, b) = (model(1e-3, 0.3), model(2e-3, 0.4));
    let errors = [
        Some(fit::crossover::ValidatedError {
            relative_sd: 0.1,
            points: 5,
        }),
        Some(fit::crossover::ValidatedError {
            relative_sd: 0.2,
            points: 3,
        }),
    ];
    let pair = fit::crossover::Pair::new(&a, &b)
        .unwrap()
        .with_validated_errors(errors);
    let c = pair
        .compare_at(&[("n".to_string(), 1000.0), ("p".to_string(), 2.0)])
        .unwrap();
    assert!(close(c.t_a, 0.5) && close(c.t_b, 1.0), "{c:?}");
    let (va, vb) = ((0.1 * c.t_a).powi(2), (0.2 * c.t_b).powi(2));
    let dof = (va + vb).powi(2) / (va * va / 4.0 + vb * vb / 2.0);
    let want = fit::stats::t_quantile_real(dof) * (va + vb).sqrt();
    assert!(
        (c.half_width - want).abs() < 1e-9 * want,
        "{} against {want}",
        c.half_width
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Over random templates of one step (all threads or one of several groups, equal or in
    /// chunks), hardware (other programs' load, computation's growth past the cores) and
    /// points: the categories sum to p × T_p, the computation is conserved (pc is the
    /// subtask's: what the hardware stretches it by is `rc`), and T_p is no less than the
    /// busiest member's share of it nor than the work over the cores that can serve it.
    #[test]
    fn evaluations_conserve_work_and_respect_its_bounds(
        p in 1u32..12,
        cores in 1u32..6,
        groups in 1u32..4,
        group_pick in 0u32..4,
        units in 1u32..40,
        chunks in proptest::bool::ANY,
        all in proptest::bool::ANY,
        load_tenths in 0u32..30,
        shared_tenths in 0u32..20,
    ) {
        let group = group_pick % groups;
        let members = if all {
            "threads = \"all\"".to_string()
        } else {
            format!("threads = \"group\"\ngroup = {group}\ngroups = {groups}")
        };
        let split = if chunks {
            format!("split = \"chunks\"\nunits = \"{units}\"")
        } else {
            "split = \"equal\"".to_string()
        };
        let text = one_step(&members, &split, cores, 1e-3).replacen(
            "load = 0.0",
            &format!(
                "load = {}\ncompute_shared = {}",
                f64::from(load_tenths) / 10.0,
                f64::from(shared_tenths) / 10.0
            ),
            1,
        );
        let m = parse("t.toml", &text).unwrap();
        let stretch = m.hardware.stretch(p);
        let threads = if all {
            p
        } else {
            lca::pace::model::Members::Group { group, groups, smaller_first: true }.threads(p).len() as u32
        };
        let e = m.evaluate(&[100.0, f64::from(p)]).unwrap();
        let sum: f64 = e.categories.iter().map(|c| c.1).sum();
        proptest::prop_assert!((sum - f64::from(p) * e.t_p).abs() <= 1e-9 * sum.max(1e-6));
        let pc = e.categories.iter().find(|c| c.0 == "pc").unwrap().1;
        if threads == 0 {
            proptest::prop_assert!(pc.abs() < 1e-9);
        } else {
            // 0.1 processor-seconds of work (1e-3 * n), a few ns of ordering per step.
            proptest::prop_assert!((pc - 0.1).abs() < 1e-6, "pc {}", pc);
            let rc = e.categories.iter().find(|c| c.0 == "rc").unwrap().1;
            proptest::prop_assert!(rc >= 0.1 * (stretch - 1.0) - 1e-6, "rc {} stretch {}", rc, stretch);
            let largest = if chunks {
                f64::from(units.div_ceil(threads)) / f64::from(units)
            } else {
                1.0 / f64::from(threads)
            };
            let served = f64::from(threads.min(cores));
            proptest::prop_assert!(e.t_p >= 0.1 * largest - 1e-6, "{} < {}", e.t_p, 0.1 * largest);
            proptest::prop_assert!(e.t_p >= 0.1 / served - 1e-6, "{} < {}", e.t_p, 0.1 / served);
        }
    }
}

/// The loop scaled from a few iterations replayed (docs/pace.md#evaluation) against a second
/// method, the replay of every iteration: tp's pipeline fills in its first iteration and two
/// MPI ranks on one core fall into step, so scaling the first few by iterations / replayed
/// made tp at n = 256, p = 6 7.8% long and the one-core MPI model 9.4% long; the later
/// iterations' pace (an even span of them: ranks that take turns repeat every two) is the
/// whole replay's within 0.1%, and the categories still sum to p × T_p.
#[test]
fn the_loop_goes_at_the_pace_of_the_later_iterations_replayed() {
    let data = test_support::repository().join("lca/tests/data/pace");
    let read =
        |file: &str| parse(file, &std::fs::read_to_string(data.join(file)).unwrap()).unwrap();
    let tp = read("fft2d-tp.toml");
    let mut mpi = read("mpi-quiet/shm-pace-1.toml");
    mpi.hardware.cores = 1;
    mpi.hardware.sharing = lca::pace::model::CoreSharing::RunToBlock;
    mpi.hardware.slice_s = 0.004;
    mpi.hardware.waits = pp::whatif::Waits::Spin;
    let mut spin_and_rendezvous = mpi.clone();
    spin_and_rendezvous.hardware.rendezvous_bytes = Some(4096);
    for (model, points) in [
        (&tp, vec![[64.0, 2.0], [256.0, 5.0], [256.0, 6.0]]),
        (&mpi, vec![[64.0, 2.0], [256.0, 2.0]]),
        (&spin_and_rendezvous, vec![[64.0, 2.0], [128.0, 2.0]]),
    ] {
        assert_eq!(model.application.replayed, 6);
        // Every iteration of the loop (200 in each of these models).
        let iterations = 200;
        let mut all = model.clone();
        all.application.replayed = iterations;
        for point in points {
            let few = t_p(model, point[0], point[1]);
            let every = t_p(&all, point[0], point[1]);
            assert!(
                (few / every - 1.0).abs() < 1e-3,
                "{} at {point:?}: {few} from 6 iterations, {every} from all {iterations}",
                model.name
            );
        }
    }
}
