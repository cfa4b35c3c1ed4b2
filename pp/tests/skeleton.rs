//! `pp skeleton` (docs/skeletons.md#pp-skeleton): a log with a known loop nest gives a skeleton
//! with the divided counts and times, exactly; the skeleton file reads back as written; a
//! skeleton's run records a log whose signature is the skeleton's program; the prediction's
//! arithmetic; one-line errors naming file, line and field.

use std::path::Path;

use pp::log::LogReader;
use pp::profile::profile_log;
use pp::signature::{self, Entry, Op, Threshold};
use pp::skeleton::{self, Item, Size, SkelStep, file, predict};
use proptest::prelude::*;
use test_support::{error_of, pp, scratch, stdout_of};

/// Thread 0: `loop 50 { 2000 ns, copy 8000 B (30 ns); loop 3 { 500 ns, wait barrier b (10 ns) } }`,
/// then 100 ns and its stop. No `cpu` samples: CPU time is the wall time.
fn nest_log() -> String {
    let mut s = String::from("pplog 1 p=1\n0 0 start\n");
    let mut t = 0;
    for _ in 0..50 {
        t += 2000;
        s.push_str(&format!(
            "{t} 0 comm_begin 8000\n{} 0 comm_end 8000\n",
            t + 30
        ));
        t += 30;
        for _ in 0..3 {
            t += 500;
            s.push_str(&format!(
                "{t} 0 wait_begin barrier b\n{} 0 wait_end barrier b\n",
                t + 10
            ));
            t += 10;
        }
    }
    s.push_str(&format!("{} 0 stop\n", t + 100));
    s
}

/// A step of a log without `cpu` samples: its CPU times are its wall times.
fn step(cpu: u64, op_ns: u64, bytes: u64, op: Op) -> Item {
    Item::Step(SkelStep {
        cpu_ns: cpu,
        wall_ns: cpu,
        op_ns,
        op_cpu_ns: op_ns,
        bytes,
        op,
    })
}

fn barrier() -> Op {
    Op::Wait {
        kind: "barrier".into(),
        object: Some("b".into()),
        by: None,
    }
}

#[test]
fn loop_counts_and_times_are_divided_by_k() {
    let dir = scratch("skeleton-divide");
    let log = test_support::write(&dir, "app.log", &nest_log());
    // K = 10: 5 whole iterations; the stop keeps 10 of its 100 ns.
    let (s, warnings) = skeleton::from_log(&log, Size::Scale(10.0)).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let body = vec![
        step(2000, 30, 8000, Op::Copy),
        Item::Loop {
            count: 3,
            body: vec![step(500, 10, 0, barrier())],
        },
    ];
    assert_eq!(
        s.threads[0].items,
        vec![
            Item::Loop {
                count: 5,
                body: body.clone()
            },
            step(10, 0, 0, Op::Stop)
        ]
    );
    // The run: 50 × (2030 + 3 × 510) + 100 ns.
    assert_eq!(s.source_wall_ns, 50 * 3560 + 100);
    // K = 4: 12.5 iterations: 12 whole, then one at half its size, whose inner loop keeps
    // 1.5 iterations (one whole, one at half); the stop keeps 25 ns.
    let (s, _) = skeleton::from_log(&log, Size::Scale(4.0)).unwrap();
    assert_eq!(
        s.threads[0].items,
        vec![
            Item::Loop { count: 12, body },
            step(1000, 15, 4000, Op::Copy),
            step(500, 10, 0, barrier()),
            step(250, 5, 0, barrier()),
            step(25, 0, 0, Op::Stop),
        ]
    );
    // K = 100: half an iteration of the dominant loop, below the shortest good skeleton.
    let (s, warnings) = skeleton::from_log(&log, Size::Scale(100.0)).unwrap();
    assert_eq!(s.threads[0].items[0], step(1000, 15, 4000, Op::Copy));
    assert!(
        warnings.iter().any(|w| w.contains(
            "thread 0: the skeleton (1.781 us) is shorter than one iteration (3.560 us)"
        )),
        "{warnings:?}"
    );
    // --time: the run lasts 178.1 us; 17.81 us asks for K = 10.
    let (s, _) = skeleton::from_log(&log, Size::Time(17.81e-6)).unwrap();
    assert!((s.k - 10.0).abs() < 1e-9, "{}", s.k);
}

#[test]
fn cpu_time_is_the_samples_rate_over_the_computation() {
    use pp::signature::steps::cpu_in;
    let samples = [(0, 0), (1000, 500), (2000, 1500)];
    assert_eq!(cpu_in(&samples, 0, 1000), 500);
    assert_eq!(cpu_in(&samples, 500, 1500), 250 + 500);
    // Past the last sample the rate is taken as 1.
    assert_eq!(cpu_in(&samples, 1500, 3000), 500 + 1000);
    assert_eq!(cpu_in(&[], 10, 30), 20);
    // A rate above 1 (a sample's rounding) counts as 1.
    assert_eq!(cpu_in(&[(0, 0), (100, 150)], 0, 100), 100);
}

/// A random program: loops of steps of every operation.
fn program() -> impl Strategy<Value = Vec<Item>> {
    let op = prop_oneof![
        Just(Op::Copy),
        Just(Op::Stop),
        Just(Op::RegionEnd),
        Just(Op::PartEnd),
        "[a-z]{1,5}".prop_map(|name| Op::RegionBegin { name }),
        "[a-z.]{1,5}".prop_map(|name| Op::PartBegin { name }),
        (
            "(lock|barrier|cond|other)",
            proptest::option::of("[a-z.]{1,6}"),
            proptest::option::of(0u32..4)
        )
            .prop_map(|(kind, object, by)| Op::Wait { kind, object, by }),
        (
            "(cond|recv|send|other)",
            proptest::option::of("[a-z.]{1,6}")
        )
            .prop_map(|(kind, object)| Op::Release { kind, object }),
        (0u32..4, any::<u32>()).prop_map(|(peer, tag)| Op::Send { peer, tag }),
        (0u32..4, any::<u32>()).prop_map(|(peer, tag)| Op::Recv { peer, tag }),
        ("[a-z]{1,8}", proptest::option::of(0u32..4)).prop_map(|(op, root)| Op::Coll { op, root }),
    ];
    let leaf = (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        op,
    )
        .prop_map(|(cpu_ns, wall_ns, op_ns, op_cpu_ns, bytes, op)| {
            Item::Step(SkelStep {
                cpu_ns,
                wall_ns,
                op_ns,
                op_cpu_ns,
                bytes,
                op,
            })
        });
    let item = leaf.prop_recursive(3, 30, 4, |inner| {
        (any::<u64>(), prop::collection::vec(inner, 0..4))
            .prop_map(|(count, body)| Item::Loop { count, body })
    });
    prop::collection::vec(item, 0..5)
}

/// The computation of a signature's entries at full size (ns), as the skeleton counts it.
fn total(entries: &[Entry], clusters: &[signature::Cluster]) -> f64 {
    entries
        .iter()
        .map(|e| match e {
            Entry::Step(c) => clusters[*c as usize].mean_cpu_ns(),
            Entry::Loop { count, body } => *count as f64 * total(body, clusters),
        })
        .sum()
}

fn items_cpu(items: &[Item]) -> (f64, u64) {
    items.iter().fold((0.0, 0), |(cpu, steps), i| match i {
        Item::Step(s) => (cpu + s.cpu_ns as f64, steps + 1),
        Item::Loop { count, body } => {
            let (c, n) = items_cpu(body);
            (cpu + *count as f64 * c, steps + count * n)
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// The file reads back as it was written.
    #[test]
    fn the_skeleton_file_reads_back(
        programs in prop::collection::vec(program(), 1..4),
        k in 1.0f64..1000.0,
        omp_blocktime_ms in prop::option::of(0u64..=u64::MAX),
    ) {
        let s = skeleton::Skeleton {
            k,
            p: 4,
            source_log: "some dir/app.log".into(),
            source_wall_ns: 123_456_789,
            threshold: 0.05,
            compression: 41.8,
            omp_blocktime_ms,
            threads: programs
                .into_iter()
                .enumerate()
                .map(|(t, items)| skeleton::ThreadProgram { thread: t as u32, items })
                .collect(),
        };
        prop_assert_eq!(file::parse(&file::text(&s)).unwrap(), s);
    }

    /// A skeleton computes 1/K of its signature's computation, up to rounding each step it
    /// runs to the nanosecond.
    #[test]
    fn a_skeleton_computes_one_kth(
        counts in prop::collection::vec(1u64..40, 1..4),
        k in 1.0f64..30.0,
    ) {
        // Nested loops of counts[0] × counts[1] × ... iterations of one step of 1000 ns.
        let mut text = String::from("pplog 1 p=1\n0 0 start\n");
        let mut t = 0;
        let n: u64 = counts.iter().product();
        for i in 0..n {
            t += 1000;
            // A distinct tag per level at the end of each inner loop, so the nest is kept.
            let mut tag = 0;
            let mut m = 1;
            for (level, c) in counts.iter().enumerate() {
                m *= c;
                if (i + 1) % m == 0 {
                    tag = level as u32 + 1;
                }
            }
            text.push_str(&format!("{t} 0 send 0 {tag} 8\n"));
        }
        text.push_str(&format!("{} 0 stop\n", t + 1000));
        let reader = LogReader::from_bytes("t.log", text.into_bytes()).unwrap();
        let sig = signature::from_reader(reader, Threshold::Fixed(0.0)).unwrap();
        let s = skeleton::scale::skeleton(&sig, k, "t.log", t + 1000);
        let th = &sig.threads[0];
        let want = total(&th.entries, &th.clusters) / k;
        let (got, steps) = items_cpu(&s.threads[0].items);
        prop_assert!((got - want).abs() <= 0.5 * steps as f64 + 1e-6, "got {got}, want {want}");
    }
}

fn skeleton_dir(name: &str, program: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    let text = format!(
        "pp-skeleton 1\nk 10\np 2\nsource_wall_ns 1000000\nthreshold 0.05\ncompression 20\nsource_log app.log\n{program}"
    );
    test_support::write(&dir, file::NAME, &text);
    dir
}

/// Runs the skeleton in `dir` with `pp skeleton run`, its log written to `dir/skel.log`;
/// returns the log's path.
fn run_skeleton(dir: &Path) -> std::path::PathBuf {
    let log = dir.join("skel.log");
    stdout_of(pp!().args(["skeleton", "run"]).arg(dir).env("PP_LOG", &log));
    log
}

#[test]
fn a_skeletons_run_records_a_log_with_its_signature() {
    let thread = |t: u32| {
        format!(
            "thread {t}\nloop 20 {{\n  step cpu_ns=20000 wall_ns=20000 op_ns=0 bytes=1000 copy\n  step cpu_ns=10000 wall_ns=10000 op_ns=0 bytes=0 wait kind=barrier object=b\n  step cpu_ns=1000 wall_ns=1000 op_ns=0 bytes=0 wait kind=lock object=m\n}}\nstep cpu_ns=5000 wall_ns=5000 op_ns=0 bytes=0 stop\n"
        )
    };
    let dir = skeleton_dir("skeleton-run", &format!("{}{}", thread(0), thread(1)));
    let log = run_skeleton(&dir);
    // The log is whole and profiles.
    let mut reader = LogReader::open(&log).unwrap();
    let profile = profile_log(&mut reader, None, None)
        .whole("skel.log")
        .unwrap();
    assert_eq!(profile.header.p, 2);
    // Its signature (loose threshold: the spins' times vary; the operations are compared
    // exactly): per thread, 20 iterations of the copy and the barrier. An uncontended lock
    // records nothing, so the lock steps are there only where the two threads met at it.
    let sig = signature::read(&log, Threshold::Fixed(0.9)).unwrap();
    assert_eq!(sig.threads.len(), 2);
    for t in &sig.threads {
        let ops = |e: &Entry| match e {
            Entry::Step(c) => Some(t.clusters[*c as usize].op.clone()),
            Entry::Loop { .. } => None,
        };
        let copies: u64 = t
            .clusters
            .iter()
            .filter(|c| c.op == Op::Copy)
            .map(|c| c.count)
            .sum();
        let barriers: u64 = t
            .clusters
            .iter()
            .filter(|c| c.op == barrier())
            .map(|c| c.count)
            .sum();
        assert_eq!((copies, barriers), (20, 20), "thread {}", t.thread);
        assert!(
            t.clusters
                .iter()
                .all(|c| c.op != Op::Copy || c.mean_bytes() == 1000.0)
        );
        assert_eq!(ops(t.entries.last().unwrap()), Some(Op::Stop));
        if t.clusters.len() == 3 {
            // No lock contention: exactly the skeleton's loop.
            match &t.entries[0] {
                Entry::Loop { count, body } => {
                    assert_eq!(*count, 20);
                    assert_eq!(
                        body.iter().filter_map(ops).collect::<Vec<_>>(),
                        vec![Op::Copy, barrier()]
                    );
                }
                e => panic!("{e:?}"),
            }
        }
    }
}

#[test]
fn a_skeletons_run_keeps_a_log_there_that_is_not_a_skeletons() {
    let program = "thread 0\nstep cpu_ns=1000 wall_ns=1000 op_ns=0 bytes=0 stop\nthread 1\nstep cpu_ns=1000 wall_ns=1000 op_ns=0 bytes=0 stop\n";
    let dir = skeleton_dir("skeleton-run-keeps", program);
    // The application's log where the skeleton would write its own (./pp.log, as when the
    // skeleton is run in the folder the application ran in), and a file that is no log.
    let app = "pplog 1 p=2\n0 0 start\n0 1 start\n10 0 stop\n10 1 stop\n";
    let app_log = test_support::write(&dir, "pp.log", app);
    let notes = test_support::write(&dir, "notes.txt", "my notes\n");
    let run = |args: &[&str]| {
        pp!()
            .current_dir(&dir)
            .args(["skeleton", "run", "."])
            .args(args)
            .env_remove("PP_LOG")
            .output()
            .unwrap()
    };
    let refused = |out: std::process::Output, name: &str| {
        assert!(!out.status.success());
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains(name) && e.contains("--log") && e.contains("--force"),
            "{e}"
        );
    };
    refused(
        run(&[]),
        "pp.log holds the log of a run that is not a skeleton's (p=2)",
    );
    refused(
        run(&["--log", "notes.txt"]),
        "notes.txt holds a file that is not a pp log",
    );
    assert_eq!(std::fs::read_to_string(&app_log).unwrap(), app);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    // --log elsewhere; a skeleton's log there is a run's result and is replaced.
    for _ in 0..2 {
        let out = run(&["--log", "skel.log"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let header = LogReader::open(&dir.join("skel.log"))
            .unwrap()
            .header()
            .clone();
        assert!(header.params.contains(&("skeleton".into(), "1".into())));
    }
    assert_eq!(std::fs::read_to_string(&app_log).unwrap(), app);
    // --force replaces the application's.
    assert!(run(&["--force"]).status.success());
    let header = LogReader::open(&app_log).unwrap().header().clone();
    assert!(header.params.contains(&("skeleton".into(), "1".into())));
}

fn write_log(dir: &Path, name: &str, wall: u64, waited: u64) -> std::path::PathBuf {
    test_support::write(
        dir,
        name,
        &format!(
            "pplog 1 p=1\n0 0 start\n0 0 work_begin\n{w} 0 work_end\n{w} 0 wait_begin lock l\n{e} 0 wait_end lock l\n{e} 0 stop\n",
            w = wall - waited,
            e = wall
        ),
    )
}

fn whole(path: &Path) -> pp::profile::Profile {
    let mut reader = LogReader::open(path).unwrap();
    profile_log(&mut reader, None, None).whole("x").unwrap()
}

#[test]
fn predict_scales_the_skeletons_run_by_the_dedicated_ratio() {
    let dir = scratch("skeleton-predict");
    let app = write_log(&dir, "app.log", 2_000_000_000, 0);
    let skel = write_log(&dir, "skel.log", 200_000_000, 0);
    let under = write_log(&dir, "under.log", 300_000_000, 50_000_000);
    let app_under = write_log(&dir, "app-under.log", 2_500_000_000, 0);
    let p = predict::predict(
        &whole(&app),
        &whole(&skel),
        &whole(&under),
        Some(&whole(&app_under)),
    )
    .unwrap();
    assert_eq!(p.ratio, 10.0);
    // 0.3 s × 10.
    assert_eq!(p.wall(), 3e9);
    let under_p = whole(&under);
    for r in &p.rows[1..] {
        let c = pp::profile::CATEGORIES
            .iter()
            .find(|c| c.key() == r.name)
            .unwrap();
        assert_eq!(
            r.predicted,
            under_p.totals.get(*c) as f64 * 10.0,
            "{}",
            r.name
        );
    }
    // 2.5 s of busy work and 0.5 s of a lock wait predicted: the categories still sum to
    // p × the predicted wall.
    let sum: f64 = p.rows[1..].iter().map(|r| r.predicted).sum();
    assert_eq!(sum, 3e9);
    let out = stdout_of(
        pp!()
            .args(["skeleton", "predict", "--app"])
            .arg(&app)
            .arg("--skeleton")
            .arg(&skel)
            .arg("--under")
            .arg(&under)
            .arg("--app-under")
            .arg(&app_under),
    );
    assert!(out.starts_with("T_app / T_skel = 10.000"), "{out}");
    assert!(out.contains("app' (p)"), "{out}");
    let wall_row = out.lines().find(|l| l.starts_with("wall")).unwrap();
    assert_eq!(
        wall_row.split_whitespace().collect::<Vec<_>>(),
        [
            "wall", "2.0000", "0.2000", "0.3000", "3.0000", "2.5000", "+20.0%"
        ]
    );
}

#[test]
fn predict_says_how_far_the_skeleton_is_from_its_application_over_k() {
    let dir = scratch("skeleton-predict-k");
    let app = write_log(&dir, "app.log", 2_000_000_000, 0);
    let under = write_log(&dir, "under.log", 300_000_000, 0);
    // A skeleton log as `pp skeleton run` writes it: K in its header.
    let skel_log = |name: &str, k: f64| {
        test_support::write(
            &dir,
            name,
            &format!(
                "pplog 1 p=1 skeleton=1 k={k}\n0 0 start\n0 0 work_begin\n200000000 0 work_end\n200000000 0 stop\n"
            ),
        )
    };
    // 0.2 s × K = 10 is the application's 2 s: no warning.
    let exact = skel_log("exact.log", 10.0);
    let p = predict::predict(&whole(&app), &whole(&exact), &whole(&under), None).unwrap();
    assert_eq!(p.k, Some(10.0));
    assert_eq!(p.off(), Some(0.0));
    assert_eq!(p.warning(), None);
    // K = 8: the skeleton ran 0.2 s where 1/K of the application is 0.25 s, 20% shorter.
    let short = skel_log("short.log", 8.0);
    let p = predict::predict(&whole(&app), &whole(&short), &whole(&under), None).unwrap();
    assert!((p.off().unwrap() + 0.2).abs() < 1e-12, "{:?}", p.off());
    let w = p.warning().expect("20% is past FAITHFUL");
    assert!(
        w.contains("20.0% shorter") && w.contains("K = 8.000"),
        "{w}"
    );
    // The command says both: the line on stdout, the warning on stderr; the prediction stands.
    let out = pp!()
        .args(["skeleton", "predict", "--app"])
        .arg(&app)
        .arg("--skeleton")
        .arg(&short)
        .arg("--under")
        .arg(&under)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("K = 8.000 (the skeleton's header): its dedicated run is -20.0% off"),
        "{stdout}"
    );
    assert!(
        stderr.contains("short.log: the skeleton's dedicated run is 20.0% shorter"),
        "{stderr}"
    );
    // An application run of no length is refused in one line naming it (its ratio to 1/K
    // would be infinite).
    let zero = test_support::write(&dir, "zero.log", "pplog 1 p=1\n5 0 start\n5 0 stop\n");
    let (run, _) =
        predict::predict(&whole(&zero), &whole(&short), &whole(&under), None).unwrap_err();
    assert_eq!(run, predict::Run::App);
    let (run, _) = predict::predict(&whole(&app), &whole(&short), &whole(&zero), None).unwrap_err();
    assert_eq!(run, predict::Run::Under);
    let err = error_of(
        pp!()
            .args(["skeleton", "predict", "--app"])
            .arg(&zero)
            .arg("--skeleton")
            .arg(&short)
            .arg("--under")
            .arg(&under),
    );
    assert!(
        err.contains("zero.log: the application's dedicated run has no length"),
        "{err}"
    );
    let err = error_of(
        pp!()
            .args(["skeleton", "predict", "--app"])
            .arg(&app)
            .arg("--skeleton")
            .arg(&exact)
            .arg("--under")
            .arg(&zero),
    );
    assert!(
        err.contains("zero.log: the skeleton's run under the condition has no length"),
        "{err}"
    );
    // A skeleton log without K (made by hand, or an older pp): no line, no warning.
    let plain = write_log(&dir, "plain.log", 200_000_000, 0);
    let p = predict::predict(&whole(&app), &whole(&plain), &whole(&under), None).unwrap();
    assert_eq!((p.k, p.warning()), (None, None));
    assert!(!p.text().contains("K ="), "{}", p.text());
}

#[test]
fn bad_input_is_refused_in_one_line() {
    // A bad field names the file, the line and the field.
    let dir = skeleton_dir(
        "skeleton-bad",
        "thread 0\nstep cpu_ns=x wall_ns=1 op_ns=0 bytes=0 stop\n",
    );
    let err = error_of(pp!().args(["skeleton", "run"]).arg(&dir));
    assert!(
        err.contains("skeleton.txt:9:") && err.contains("field cpu_ns"),
        "{err}"
    );
    let dir = skeleton_dir("skeleton-bad-loop", "thread 0\nloop 3 {\n");
    let err = error_of(pp!().args(["skeleton", "run"]).arg(&dir));
    assert!(
        err.contains("skeleton.txt:") && err.contains("not closed"),
        "{err}"
    );
    let dir = skeleton_dir("skeleton-bad-thread", "thread 5\n");
    let err = error_of(pp!().args(["skeleton", "run"]).arg(&dir));
    assert!(
        err.contains("field thread") && err.contains("p = 2"),
        "{err}"
    );
    // An MPI skeleton whose message no rank receives would never end: refused before it is
    // built.
    let dir = skeleton_dir(
        "skeleton-mpi",
        "thread 0\nstep cpu_ns=1 wall_ns=1 op_ns=0 bytes=8 send peer=1 tag=0\n",
    );
    let err = error_of(pp!().args(["skeleton", "run"]).arg(&dir));
    assert!(
        err.contains("rank 0 sends 1 messages to rank 1 with tag 0 but rank 1 receives 0")
            && err.contains("would not end"),
        "{err}"
    );
    // A line that is no step, loop or thread.
    let dir = skeleton_dir(
        "skeleton-unknown",
        "thread 0\nstep cpu_ns=1 wall_ns=1 op_ns=0 bytes=0 wait kind=barrier\nthread 1\nstop_here\n",
    );
    let err = error_of(pp!().args(["skeleton", "run"]).arg(&dir));
    assert!(err.contains("skeleton.txt:11: `stop_here`"), "{err}");
    // Barriers reached unequally would deadlock: refused.
    let dir = skeleton_dir(
        "skeleton-unequal2",
        "thread 0\nloop 2 {\nstep cpu_ns=1 wall_ns=1 op_ns=0 bytes=0 wait kind=barrier\n}\nthread 1\nstep cpu_ns=1 wall_ns=1 op_ns=0 bytes=0 wait kind=barrier\n",
    );
    let err = error_of(pp!().args(["skeleton", "run"]).arg(&dir));
    assert!(err.contains("thread 0: 2, thread 1: 1"), "{err}");
    // A directory with something in it is not written into without --force.
    let dir = scratch("skeleton-out");
    let log = test_support::write(&dir, "app.log", &nest_log());
    let err = error_of(
        pp!()
            .args(["skeleton", "--scale", "10", "--out"])
            .arg(&dir)
            .arg(&log),
    );
    assert!(err.contains("not empty"), "{err}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), nest_log());
    // Refused before the log is read: a long log is not folded for nothing.
    let err = error_of(
        pp!()
            .args(["skeleton", "--scale", "10", "--out"])
            .arg(&dir)
            .arg(dir.join("no-such.log")),
    );
    assert!(err.contains("not empty"), "{err}");
    // A file is no skeleton's directory.
    let err = error_of(
        pp!()
            .args(["skeleton", "--scale", "10", "--force", "--out"])
            .arg(&log)
            .arg(&log),
    );
    assert!(err.contains("is not a directory"), "{err}");
    pp!()
        .args(["skeleton", "--scale", "10", "--force", "--out"])
        .arg(&dir)
        .arg(&log)
        .output()
        .unwrap();
    assert!(dir.join(file::NAME).exists());
    // A bad log line names the log and its line.
    let bad = test_support::write(&dir, "bad.log", "pplog 1 p=1\n0 0 start\n5 0 bogus\n");
    let err = error_of(
        pp!()
            .args(["skeleton", "--scale", "2", "--out"])
            .arg(dir.join("new"))
            .arg(&bad),
    );
    assert!(err.contains("bad.log") && err.contains('3'), "{err}");
    let err = error_of(
        pp!()
            .args(["skeleton", "--scale", "0.5", "--out", "x"])
            .arg(&bad),
    );
    assert!(err.contains("--scale"), "{err}");
    // A number quoted short and exact, not 300 digits.
    let err = error_of(
        pp!()
            .args(["skeleton", "--time=-1e-300", "--out", "x"])
            .arg(&bad),
    );
    assert!(err.contains("--time: -1e-300 is not"), "{err}");
    // A skeleton shorter than a nanosecond of the run: refused in one line, not written with
    // a K of 300 digits and steps of 0 ns.
    for (option, value) in [("--scale", "1e300"), ("--time", "1e-300")] {
        let out = dir.join(format!("tiny{option}"));
        let err = error_of(
            pp!()
                .args(["skeleton", option, value, "--out"])
                .arg(&out)
                .arg(&log),
        );
        assert!(
            err.contains(&format!("{option} {value}: a skeleton of"))
                && err.contains("less than a nanosecond")
                && err.contains("K at most"),
            "{err}"
        );
        assert!(!out.exists());
    }
}

/// A `Team`'s skeleton whose parts end right after a lock's wait: the lock is held through the
/// part's last computation and released with it, as after any other step, not kept past the
/// part while the region waits for it (before, the run deadlocked: one thread held the lock
/// past its part, the other waited for it in the region, and the region for that one). The
/// opener's serial lock before a region is released before the region, likewise.
#[test]
fn a_teams_lock_taken_last_in_a_part_is_released_with_the_part() {
    let step = |op: &str| format!("  step cpu_ns=50000 wall_ns=50000 op_ns=1000 bytes=0 {op}\n");
    let opener = format!(
        "thread 0\nloop 10 {{\n{}{}{}{}}}\n{}",
        step("wait kind=lock object=l"),
        step("region_begin name=r"),
        step("wait kind=lock object=l"),
        step("region_end"),
        step("stop"),
    );
    let member = format!(
        "thread 1\nloop 10 {{\n{}{}{}}}\n{}",
        step("part_begin name=r"),
        step("wait kind=lock object=l"),
        step("part_end"),
        step("stop"),
    );
    let dir = skeleton_dir("skeleton-team-lock", &format!("{opener}{member}"));
    let log = dir.join("skel.log");
    let mut child = pp!()
        .args(["skeleton", "run"])
        .arg(&dir)
        .env("PP_LOG", &log)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // 10 regions of about 0.2 ms: a minute is a deadlock, whatever the machine's load.
    let began = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if began.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pp skeleton run deadlocked on a lock taken last in a part");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    // Both threads took part in the 10 regions.
    let sig = signature::read(&log, Threshold::Fixed(0.9)).unwrap();
    assert_eq!(regions_taken(&sig), [10, 10]);
}

/// Per thread of a skeleton's run, how many regions it took part in, as opener or member.
fn regions_taken(sig: &signature::Signature) -> Vec<u64> {
    sig.threads
        .iter()
        .map(|t| {
            t.clusters
                .iter()
                .filter(|c| matches!(c.op, Op::PartBegin { .. } | Op::RegionBegin { .. }))
                .map(|c| c.count)
                .sum()
        })
        .collect()
}

#[test]
fn a_team_members_parts_are_steps_and_its_skeleton_forks_and_joins() {
    // Thread 0 opens 10 regions `r` of the whole team and spins 100 us in each; thread 1, a
    // member, samples its CPU clock where its part begins and ends (as a `Team` member does),
    // copies 4096 bytes in it, and idles between regions (its CPU clock stands still).
    let mut text = String::from("pplog 1 p=2\n0 0 start\n0 1 start\n0 1 cpu 0\n");
    let mut cpu1 = 0;
    for i in 0..10u64 {
        let b = 1_000_000 * i + 900_000;
        text.push_str(&format!("{b} 0 region_begin {i} r\n"));
        text.push_str(&format!("{} 1 cpu {cpu1}\n", b + 10));
        text.push_str(&format!(
            "{} 1 comm_begin 4096\n{} 1 comm_end 4096\n",
            b + 50_010,
            b + 50_110
        ));
        cpu1 += 100_000;
        text.push_str(&format!("{} 1 cpu {cpu1}\n", b + 100_010));
        text.push_str(&format!("{} 0 region_end {i}\n", b + 100_100));
    }
    text.push_str("10900000 0 stop\n10900000 1 cpu 1000000\n10900000 1 stop\n");
    let dir = scratch("skeleton-parts");
    let log = test_support::write(&dir, "app.log", &text);
    let sig = signature::read(&log, Threshold::Fixed(0.05)).unwrap();
    let t1 = &sig.threads[1];
    let ops: Vec<String> = match &t1.entries[0] {
        Entry::Loop { count: 10, body } => body
            .iter()
            .map(|e| match e {
                Entry::Step(c) => format!("{:?}", t1.clusters[*c as usize].op),
                e => panic!("{e:?}"),
            })
            .collect(),
        e => panic!("{e:?}"),
    };
    assert_eq!(ops, ["PartBegin { name: \"r\" }", "Copy", "PartEnd"]);
    // The copy's computation: 50 us of wall and of CPU; the idle before a part has no CPU.
    let copy = t1.clusters.iter().find(|c| c.op == Op::Copy).unwrap();
    assert_eq!(copy.mean_compute_ns(), 50_000.0);
    assert_eq!(copy.mean_cpu_ns(), 50_000.0);
    let part = t1
        .clusters
        .iter()
        .find(|c| matches!(c.op, Op::PartBegin { .. }))
        .unwrap();
    assert!(part.mean_cpu_ns() < 1.0, "{}", part.mean_cpu_ns());
    // The skeleton (K = 2) runs, and its log shows the member's parts again.
    let sk = dir.join("sk");
    stdout_of(
        pp!()
            .args(["skeleton", "--scale", "2", "--out"])
            .arg(&sk)
            .arg(&log),
    );
    let text = std::fs::read_to_string(sk.join(file::NAME)).unwrap();
    // Folded as `part_begin [copy part_end part_begin]⁹ copy part_end`: 4 whole iterations and
    // half of one more, so 6 parts of the 10.
    assert!(text.contains("loop 4 {"), "{text}");
    assert!(text.contains("part_begin name=r"), "{text}");
    let skel_log = run_skeleton(&sk);
    // It ran on a recorder `Team`, whose regions are opened by whichever of its threads runs
    // the opening: each thread takes part in the 6 regions, as their opener or as a member.
    let sig = signature::read(&skel_log, Threshold::Fixed(0.9)).unwrap();
    assert_eq!(regions_taken(&sig), [6, 6]);
    // Thread 1 did its 6 copies, one in each of its parts.
    let copies: u64 = sig.threads[1]
        .clusters
        .iter()
        .filter(|c| c.op == Op::Copy)
        .map(|c| c.count)
        .sum();
    assert_eq!(copies, 6);
}

#[test]
fn a_gate_pairs_arrivals_and_lets_the_extra_ones_through() {
    use pp::skeleton::gate::{Gate, Point};
    use pp::skeleton::spinning::{Budget, Yields};
    use std::sync::atomic::{AtomicU64, Ordering};
    // Thread 0 arrives 3 times, thread 1 5 times: the first 3 pair up (a fork of thread 1 never
    // passes before thread 0's fork of the same number), the last 2 pass once thread 0 is done;
    // whether the waits block at once, poll for a while, or poll until they end, yielding
    // after a few pauses or every few polls.
    let every = |ns| Budget {
        ns,
        yields: Yields::Every(3),
    };
    for budget in [
        Budget::ns(0),
        Budget::ns(20_000),
        Budget::ns(u64::MAX),
        every(20_000),
        every(u64::MAX),
    ] {
        let gate = Gate::new(2);
        let zero = AtomicU64::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..3 {
                    zero.fetch_add(1, Ordering::SeqCst);
                    gate.arrive(0, Point::Fork, budget);
                }
                gate.finish(0);
            });
            s.spawn(|| {
                for i in 1..=5u64 {
                    gate.arrive(1, Point::Fork, budget);
                    assert!(zero.load(Ordering::SeqCst) >= i.min(3), "{budget:?}");
                }
                gate.finish(1);
            });
        });
    }
}

#[test]
fn a_copy_keeps_the_processor_as_long_as_the_applications_did() {
    // A copy of 1 KB that took the application 20 ms of CPU (a transpose, say): the skeleton's
    // copy lasts at least that long (its thread's CPU time cannot exceed its wall time). The
    // file's other step has no op_cpu_ns, as files written before it: it reads as 0.
    let dir = skeleton_dir(
        "skeleton-copy-cpu",
        "thread 0\nstep cpu_ns=0 wall_ns=0 op_ns=20000000 op_cpu_ns=20000000 bytes=1024 copy\n\
         step cpu_ns=0 wall_ns=0 op_ns=0 bytes=0 stop\nthread 1\nstep cpu_ns=0 wall_ns=0 op_ns=0 bytes=0 stop\n",
    );
    let s = file::read(&dir).unwrap();
    match (&s.threads[0].items[..], &s.threads[1].items[..]) {
        ([Item::Step(copy), _], [Item::Step(stop)]) => {
            assert_eq!((copy.op_ns, copy.op_cpu_ns), (20_000_000, 20_000_000));
            assert_eq!(stop.op_cpu_ns, 0);
        }
        other => panic!("{other:?}"),
    }
    let log = run_skeleton(&dir);
    let sig = signature::read(&log, Threshold::Fixed(0.0)).unwrap();
    let copy = sig.threads[0]
        .clusters
        .iter()
        .find(|c| c.op == Op::Copy)
        .expect("the copy");
    assert!(copy.mean_op_ns() >= 20e6, "{}", copy.mean_op_ns());
    assert_eq!(copy.mean_bytes(), 1024.0);
}

#[test]
fn threads_that_would_enter_a_region_different_numbers_of_times_are_folded_by_operations() {
    // A `Team`'s log: thread 0 opens 20 regions alike; thread 1's part starts early or late in
    // each, in no repeating order, so at threshold 0 its idle computations (before its parts)
    // fold into few loops while thread 0's regions fold whole. Divided by K = 3, thread 0
    // would keep 8 regions and thread 1 16 of its parts: folded by operations alone, both keep
    // 20 / 3 (6 whole iterations and the remainder's copy).
    let late = [0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0];
    let mut text = String::from("pplog 1 p=2\n0 0 start\n0 1 start\n");
    let mut t = 1000u64;
    for (i, &l) in late.iter().enumerate() {
        let off = if l == 1 { 400 } else { 10 };
        text.push_str(&format!(
            "{t} 0 region_begin {i} r\n{} 0 cpu {}\n{} 1 cpu {}\n{} 1 cpu {}\n{} 0 cpu {}\n{} 0 region_end {i}\n",
            t + 5,
            t + 5,
            t + off,
            t + off,
            t + off + 100,
            t + off + 100,
            t + 600,
            t + 600,
            t + 700
        ));
        t += 800;
    }
    text.push_str(&format!("{t} 0 stop\n{t} 1 stop\n"));
    let dir = scratch("skeleton-uneven-regions");
    let log = test_support::write(&dir, "app.log", &text);
    let (s, warnings) = skeleton::from_log(&log, Size::Scale(3.0)).unwrap();
    assert_eq!(s.threshold, 1.0, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("enter 1 region(s) different numbers of times")),
        "{warnings:?}"
    );
    let opens = |t: usize| -> u64 {
        s.threads[t]
            .items
            .iter()
            .map(|i| i.count(&|st| matches!(st.op, Op::RegionBegin { .. } | Op::PartBegin { .. })))
            .sum()
    };
    assert_eq!((opens(0), opens(1)), (7, 7));
}

#[test]
fn a_skeleton_less_than_twice_shorter_still_folds_its_loops() {
    // 30 iterations of a computation of 1000, 1022 or 1045 ns in no repeating order, then a
    // barrier: below threshold 0.05 the three stay apart and the run compresses by less than
    // 1.5. For K = 1.5 the seed's Q = K/2 = 0.75 is met at threshold 0, and the skeleton would
    // run all 30 barriers with 1/1.5 of each computation; the target is at least min(K, 2), so
    // the loop folds at 0.05 and keeps 30 / 1.5 = 20 iterations at full size.
    assert_eq!(signature::target(1.5), 1.5);
    assert_eq!(signature::target(3.0), 2.0);
    assert_eq!(signature::target(20.0), 10.0);
    let mut text = String::from("pplog 1 p=1\n0 0 start\n");
    let mut t = 0u64;
    let order = [
        0, 2, 1, 1, 0, 2, 2, 0, 1, 0, 0, 2, 1, 2, 2, 1, 0, 1, 2, 0, 0, 1, 1, 2, 0, 2, 1, 0, 2, 2,
    ];
    for i in order {
        t += [1000, 1022, 1045][i];
        text.push_str(&format!(
            "{t} 0 wait_begin barrier b\n{} 0 wait_end barrier b\n",
            t + 10
        ));
        t += 10;
    }
    text.push_str(&format!("{} 0 stop\n", t + 5));
    let dir = scratch("skeleton-k-below-2");
    let log = test_support::write(&dir, "app.log", &text);
    let (s, warnings) = skeleton::from_log(&log, Size::Scale(1.5)).unwrap();
    assert!(s.threshold > 0.0, "{warnings:?}");
    let barriers: u64 = s.threads[0]
        .items
        .iter()
        .map(|i| i.count(&|st| matches!(st.op, Op::Wait { .. })))
        .sum();
    assert_eq!(barriers, 20, "{}", skeleton::file::text(&s));
}
