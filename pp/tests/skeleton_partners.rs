//! Partners of a threaded skeleton's waits (docs/skeletons.md#partners): a wait that the log
//! says another thread ended (`by=`) is ended in the skeleton's run by that thread's release
//! (the skeleton's own log names it), after the partner's computation; a skeleton whose waits
//! and releases do not pair up (any counts, waits on each other) still ends.

use std::path::{Path, PathBuf};

use pp::log::LogReader;
use pp::signature::Op;
use pp::skeleton::{self, Item, Size, file};
use pp_recorder::event::EventKind;
use proptest::prelude::*;
use test_support::{pp, scratch, stdout_of};

/// Thread 0 computes `work` ns, then notifies `c`, 40 times; thread 1 waits for each notify
/// (ended `by=0`) and computes 1 us after it (or `after(i)` ns after the i-th). No `cpu`
/// samples: CPU time is the wall time.
fn notify_log(work: u64, after: impl Fn(u64) -> u64) -> String {
    let mut s = String::from("pplog 1 p=2\n0 0 start\n0 1 start\n");
    let mut t = 0;
    let mut waiter = 1000;
    for i in 0..40 {
        s.push_str(&format!("{waiter} 1 wait_begin cond c\n"));
        t += work;
        s.push_str(&format!("{t} 0 release cond c\n"));
        s.push_str(&format!("{} 1 wait_end cond c by=0\n", t + 50));
        waiter = t + 50 + after(i);
    }
    s.push_str(&format!("{} 0 stop\n{waiter} 1 stop\n", t + 10));
    // In time order, as a recorder writes it.
    let mut lines: Vec<&str> = s.lines().collect();
    lines[1..].sort_by_key(|l| l.split(' ').next().unwrap().parse::<u64>().unwrap());
    lines.join("\n") + "\n"
}

/// What a skeleton's run recorded: per thread, its `release` times, its waits' spans and the
/// thread that ended each (`by=`), and its start and stop.
#[derive(Debug, Default, Clone)]
struct Thread {
    releases: Vec<u64>,
    waits: Vec<(u64, u64, Option<u32>)>,
    span: (u64, u64),
}

fn recorded(log: &Path) -> Vec<Thread> {
    let mut reader = LogReader::open(log).unwrap();
    let p = reader.header().p as usize;
    let mut threads = vec![Thread::default(); p];
    let mut open = vec![0u64; p];
    reader
        .for_each_event(|e, _| {
            let t = &mut threads[e.thread as usize];
            match e.kind {
                EventKind::Start => t.span.0 = e.t,
                EventKind::Stop => t.span.1 = e.t,
                EventKind::Release { .. } => t.releases.push(e.t),
                EventKind::WaitBegin { .. } => open[e.thread as usize] = e.t,
                EventKind::WaitEnd { by, .. } => t.waits.push((open[e.thread as usize], e.t, by)),
                _ => {}
            }
        })
        .unwrap();
    threads
}

fn run(dir: &Path) -> (PathBuf, String) {
    let log = dir.join("skel.log");
    let out = pp!()
        .args(["skeleton", "run"])
        .arg(dir)
        .env("PP_LOG", &log)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (log, stderr)
}

#[test]
fn the_skeletons_waits_are_ended_by_the_partners_release() {
    let dir = scratch("skeleton-partner");
    let app = test_support::write(&dir, "app.log", &notify_log(200_000, |_| 1000));
    // The signature keeps the partner and the release: K = 4 keeps 10 of each.
    let (s, warnings) = skeleton::from_log(&app, Size::Scale(4.0)).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let ops = |t: usize| {
        let mut ops = Vec::new();
        fn walk(items: &[Item], times: u64, ops: &mut Vec<(Op, u64)>) {
            for i in items {
                match i {
                    Item::Step(s) => ops.push((s.op.clone(), times)),
                    Item::Loop { count, body } => walk(body, times * count, ops),
                }
            }
        }
        walk(&s.threads[t].items, 1, &mut ops);
        ops
    };
    let release = Op::Release {
        kind: "cond".into(),
        object: Some("c".into()),
    };
    let wait = Op::Wait {
        kind: "cond".into(),
        object: Some("c".into()),
        by: Some(0),
    };
    let count =
        |t: usize, op: &Op| -> u64 { ops(t).iter().filter(|(o, _)| o == op).map(|(_, n)| n).sum() };
    assert_eq!(count(0, &release), 10);
    assert_eq!(count(1, &wait), 10);
    assert!(file::text(&s).contains("wait kind=cond object=c by=0"));

    // Its run: every wait of thread 1 ends by thread 0, at or after thread 0's matching release.
    let out = dir.join("skel");
    stdout_of(
        pp!()
            .args(["skeleton"])
            .arg(&app)
            .args(["--scale", "4", "--out"])
            .arg(&out),
    );
    let (log, _) = run(&out);
    let th = recorded(&log);
    assert_eq!(th[0].releases.len(), 10);
    assert_eq!(th[1].waits.len(), 10);
    for (i, &(_, end, by)) in th[1].waits.iter().enumerate() {
        assert_eq!(by, Some(0), "wait {i}");
        assert!(
            end >= th[0].releases[i],
            "wait {i} ended before release {i}"
        );
    }
}

#[test]
fn waits_folded_apart_from_their_releases_are_folded_by_operations() {
    // Thread 1's computations after the notifies are 100 ns or 5 us in no repeating order, so
    // under the seed's threshold its 40 waits fold into no loop (40 steps, each at 1/4) while
    // thread 0's 40 releases divide to 10: by their operations alone, both are 10.
    let dir = scratch("skeleton-partner-refold");
    let app = test_support::write(
        &dir,
        "app.log",
        &notify_log(200_000, |i| {
            if (0x9E37_79B9_7F4A_7C15u64 >> i) & 1 == 1 {
                100
            } else {
                5000
            }
        }),
    );
    let (s, warnings) = skeleton::from_log(&app, Size::Scale(4.0)).unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("of the waits' partners do not pair up")
                && w.contains("folded by their operations alone")),
        "{warnings:?}"
    );
    assert!(
        !warnings.iter().any(|w| w.contains("waits 40 times")),
        "{warnings:?}"
    );
    let count = |t: usize, f: &dyn Fn(&Op) -> bool| -> u64 {
        s.threads[t]
            .items
            .iter()
            .map(|i| i.count(&|st| f(&st.op)))
            .sum()
    };
    assert_eq!(count(0, &|o| matches!(o, Op::Release { .. })), 10);
    assert_eq!(count(1, &|o| matches!(o, Op::Wait { by: Some(0), .. })), 10);
}

/// A skeleton file: thread 0 spins `work` ns and releases `cond c` 5 times; thread 1 waits for
/// each (`by=0` when `partner`) with no computation of its own.
fn notify_skeleton(name: &str, work: u64, partner: bool) -> PathBuf {
    let dir = scratch(name);
    let by = if partner { " by=0" } else { "" };
    let text = format!(
        "pp-skeleton 1\nk 10\np 2\nsource_wall_ns 1000000\nthreshold 0.05\ncompression 20\nsource_log app.log\n\
         thread 0\nloop 5 {{\n  step cpu_ns={work} wall_ns={work} op_ns=0 bytes=0 release kind=cond object=c\n}}\nstep cpu_ns=0 wall_ns=0 op_ns=0 bytes=0 stop\n\
         thread 1\nloop 5 {{\n  step cpu_ns=0 wall_ns=0 op_ns=1000 bytes=0 wait kind=cond object=c{by}\n}}\nstep cpu_ns=0 wall_ns=0 op_ns=0 bytes=0 stop\n"
    );
    test_support::write(&dir, file::NAME, &text);
    dir
}

#[test]
fn a_wait_lasts_until_the_partners_computation_is_done() {
    for work in [2_000_000u64, 20_000_000] {
        let (log, _) = run(&notify_skeleton(
            &format!("skeleton-partner-{work}"),
            work,
            true,
        ));
        let th = recorded(&log);
        // Each release comes after the partner has spun i × work of CPU time (so as much wall
        // time at least), and thread 1's i-th wait ends after it.
        assert_eq!(th[0].releases.len(), 5);
        for (i, &r) in th[0].releases.iter().enumerate() {
            assert!(r - th[0].span.0 >= (i as u64 + 1) * work, "release {i}");
            let (_, end, by) = th[1].waits[i];
            assert_eq!(by, Some(0));
            assert!(end >= r, "wait {i}");
        }
        // Thread 1 does nothing but wait: it lasts as long as the partner's work.
        assert!(th[1].span.1 >= th[0].span.0 + 5 * work);
    }
    // Without the partner, the waits sleep their 1 us and name nobody.
    let (log, _) = run(&notify_skeleton("skeleton-partner-none", 20_000_000, false));
    let th = recorded(&log);
    assert_eq!(th[1].waits.len(), 5);
    assert!(th[1].waits.iter().all(|w| w.2.is_none()));
}

fn team_skeleton(name: &str, opener: &str) -> PathBuf {
    let dir = scratch(name);
    let step = |op: &str| format!("step cpu_ns=100000 wall_ns=100000 op_ns=1000 bytes=0 {op}\n");
    let text = format!(
        "pp-skeleton 1\nk 10\np 2\nsource_wall_ns 1000000\nthreshold 0.05\ncompression 20\nsource_log app.log\nthread 0\n{opener}thread 1\n{}{}{}{}",
        step("part_begin name=r"),
        step("wait kind=cond object=c by=0"),
        step("part_end"),
        step("stop"),
    );
    test_support::write(&dir, file::NAME, &text);
    dir
}

#[test]
fn a_teams_member_is_signalled_in_a_region_and_never_waits_past_it() {
    let step = |op: &str| format!("step cpu_ns=100000 wall_ns=100000 op_ns=1000 bytes=0 {op}\n");
    // The opener releases inside the region: the member's wait ends by its release.
    let inside = [
        "region_begin name=r",
        "release kind=cond object=c",
        "region_end",
        "stop",
    ]
    .map(step)
    .concat();
    let (log, _) = run(&team_skeleton("skeleton-partner-team", &inside));
    let th = recorded(&log);
    assert_eq!(th[1].waits.len(), 1);
    assert_eq!(th[1].waits[0].2, Some(0));
    // The opener releases only after the region, which waits for the member's part: the
    // member's wait gives up once the opener's part is done (it would deadlock), and sleeps.
    let after = [
        "region_begin name=r",
        "region_end",
        "release kind=cond object=c",
        "stop",
    ]
    .map(step)
    .concat();
    let (log, _) = run(&team_skeleton("skeleton-partner-team-after", &after));
    let th = recorded(&log);
    assert_eq!(th[1].waits.len(), 1);
    assert_eq!(th[1].waits[0].2, None);
}

/// A skeleton of two threads, each a random sequence of waits for the other's release and
/// releases of its own, on two objects.
fn random_skeleton() -> impl Strategy<Value = Vec<Vec<(bool, u8, u64)>>> {
    // (a wait (else a release), object 0 or 1, a loop count).
    let step = (any::<bool>(), 0u8..2, 1u64..4);
    prop::collection::vec(prop::collection::vec(step, 0..6), 2)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any counts of waits and releases, in any order (waits on each other included): the run
    /// ends, every wait is recorded, and no more waits end by the partner than it released.
    #[test]
    fn a_skeleton_with_unpaired_waits_ends(programs in random_skeleton()) {
        let mut text = String::from(
            "pp-skeleton 1\nk 10\np 2\nsource_wall_ns 1000000\nthreshold 0.05\ncompression 20\nsource_log app.log\n",
        );
        for (t, program) in programs.iter().enumerate() {
            text += &format!("thread {t}\n");
            for &(wait, object, count) in program {
                let op = if wait {
                    format!("wait kind=cond object=o{object} by={}", 1 - t)
                } else {
                    format!("release kind=cond object=o{object}")
                };
                text += &format!("loop {count} {{\n  step cpu_ns=1000 wall_ns=1000 op_ns=1000 bytes=0 {op}\n}}\n");
            }
            text += "step cpu_ns=0 wall_ns=0 op_ns=0 bytes=0 stop\n";
        }
        let dir = scratch("skeleton-partner-random");
        test_support::write(&dir, file::NAME, &text);
        let (log, _) = run(&dir);
        let th = recorded(&log);
        for (t, program) in programs.iter().enumerate() {
            let count = |wait: bool, object: u8| -> usize {
                program.iter().filter(|s| s.0 == wait && s.1 == object).map(|s| s.2 as usize).sum()
            };
            let waits: usize = (0..2).map(|o| count(true, o)).sum();
            let releases: usize = (0..2).map(|o| count(false, o)).sum();
            prop_assert_eq!(th[t].waits.len(), waits);
            prop_assert_eq!(th[t].releases.len(), releases);
            let other = &programs[1 - t];
            let ended: usize = th[t].waits.iter().filter(|w| w.2 == Some(1 - t as u32)).count();
            let possible: usize = (0..2u8)
                .map(|o| {
                    let r: usize = other.iter().filter(|s| !s.0 && s.1 == o).map(|s| s.2 as usize).sum();
                    count(true, o).min(r)
                })
                .sum();
            prop_assert!(ended <= possible, "thread {}: {} ended by the partner, {} possible", t, ended, possible);
        }
    }
}

/// Two threads that take lock `m` 50 times each and hold it through 200 us of computation,
/// the skeleton of an OpenMP run (`omp_blocktime_ms`) or of a Rust one.
fn lock_skeleton(name: &str, openmp: bool) -> PathBuf {
    let dir = scratch(name);
    let blocktime = if openmp { "omp_blocktime_ms 0\n" } else { "" };
    let thread = |t: u32| {
        format!(
            "thread {t}\nloop 50 {{\n  step cpu_ns=200000 wall_ns=200000 op_ns=1000 bytes=0 wait kind=lock object=m\n}}\nstep cpu_ns=200000 wall_ns=200000 op_ns=0 bytes=0 stop\n"
        )
    };
    let text = format!(
        "pp-skeleton 1\nk 10\np 2\nsource_wall_ns 1000000\nthreshold 0.05\ncompression 20\nsource_log app.log\n{blocktime}{}{}",
        thread(0),
        thread(1)
    );
    test_support::write(&dir, file::NAME, &text);
    dir
}

/// libomp's locks are queues and its tool records who released a lock to its waiter; the
/// Rust recorder's `Mutex` neither (docs/skeletons.md#pp-skeleton-run, `skeleton/lock.rs`).
/// The lock is always held by one thread's computation, so the other waits for it.
#[test]
fn an_openmp_skeletons_lock_waits_are_ended_by_the_thread_that_released_the_lock() {
    let (log, _) = run(&lock_skeleton("skeleton-lock-openmp", true));
    let th = recorded(&log);
    assert!(th.iter().map(|t| t.waits.len()).sum::<usize>() > 0);
    for (t, me) in th.iter().enumerate() {
        // Every release is recorded; every wait names the other thread.
        assert_eq!(me.releases.len(), 50, "thread {t}'s releases");
        let other = 1 - t as u32;
        assert!(
            me.waits.iter().all(|w| w.2 == Some(other)),
            "thread {t}: {:?}",
            me.waits
        );
        // ... and ends after a release of that thread.
        let theirs = &th[other as usize].releases;
        assert!(me.waits.iter().all(|w| theirs.iter().any(|&r| r <= w.1)));
    }
    // pp reads it without a warning: each by= has its release.
    let out = pp!().arg(&log).output().unwrap();
    assert!(out.status.success());
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let (log, _) = run(&lock_skeleton("skeleton-lock-rust", false));
    let th = recorded(&log);
    assert!(th.iter().all(|t| t.releases.is_empty()));
    assert!(th.iter().flat_map(|t| &t.waits).all(|w| w.2.is_none()));
}
