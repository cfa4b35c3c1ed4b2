//! The recorder writes logs that the log reader reads back with the expected events per thread.
//!
//! Sessions are process-wide, so the tests take a lock and run one at a time.
//! They sit in `mod recorder` so that `cargo test -p pp recorder` selects them.

mod recorder {
    use std::path::Path;
    use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

    use pp::event::{Event, EventKind, Header, Symbols, ThreadId};
    use pp::log::LogReader;
    use pp_recorder::{self as recorder, Session, Team, sync};
    use test_support::{one_at_a_time, scratch};

    /// The calling thread's kernel id, for [`until_blocked`].
    fn tid() -> i32 {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() }
    }

    /// Returns once the thread whose id is (or will be) published in `slot` is asleep in the
    /// kernel (state S): blocked on the lock, channel or condition variable it went on to
    /// take. The tests order threads by observing this, however long it takes, rather than
    /// by sleeping and hoping the other thread got there first (which a loaded machine can
    /// defeat).
    fn until_blocked(slot: &AtomicI32) {
        loop {
            let tid = slot.load(Ordering::Acquire);
            if tid != 0 {
                let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
                // `tid (comm) state ...`: the comm may hold spaces and parentheses.
                let state = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().next());
                if state == Some("S") {
                    return;
                }
            }
            std::thread::yield_now();
        }
    }

    /// Burns CPU for about `iters` multiply-adds.
    fn busy(iters: u64) -> u64 {
        let mut x = 1u64;
        for i in 0..iters {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        x
    }

    struct Log {
        header: Header,
        symbols: Symbols,
        events: Vec<Event>,
        error: Option<String>,
        finished: bool,
    }

    impl Log {
        fn read(path: &Path) -> Log {
            let mut r = LogReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut events = Vec::new();
            let mut error = None;
            while let Some(e) = r.next_event() {
                match e {
                    Ok(e) => events.push(e),
                    Err(e) => error = Some(e.to_string()),
                }
            }
            Log {
                header: r.header().clone(),
                symbols: r.symbols().clone(),
                events,
                error,
                finished: r.finished(),
            }
        }

        fn thread(&self, t: ThreadId) -> Vec<Event> {
            self.events
                .iter()
                .filter(|e| e.thread == t)
                .copied()
                .collect()
        }

        /// The event as text without time and thread: `work_begin compute`, `cpu`, ...
        fn describe(&self, e: &Event) -> String {
            let n = |s| self.symbols.name(s).to_string();
            let opt = |s: Option<_>| s.map(|s| format!(" {}", n(s))).unwrap_or_default();
            match e.kind {
                EventKind::Start => "start".into(),
                EventKind::Stop => "stop".into(),
                EventKind::RegionBegin { name, team, .. } => match team {
                    None => format!("region_begin {}", n(name)),
                    Some(t) => format!("region_begin {} team={:?}", n(name), self.symbols.team(t)),
                },
                EventKind::RegionEnd { .. } => "region_end".into(),
                EventKind::WorkBegin { label } => format!("work_begin{}", opt(label)),
                EventKind::WorkEnd { label } => format!("work_end{}", opt(label)),
                EventKind::WaitBegin { kind, object } => {
                    format!("wait_begin {kind}{}", opt(object))
                }
                EventKind::WaitEnd { kind, object, by } => format!(
                    "wait_end {kind}{}{}",
                    opt(object),
                    by.map_or(String::new(), |b| format!(" by={b}"))
                ),
                EventKind::Release { kind, object } => format!("release {kind}{}", opt(object)),
                EventKind::CommBegin { bytes } => format!("comm_begin {bytes}"),
                EventKind::CommEnd { bytes } => format!("comm_end {bytes}"),
                EventKind::Cpu { .. } => "cpu".into(),
                EventKind::Phase { name } => format!("phase {}", n(name)),
                // The recorder records no messages.
                EventKind::Send { .. } | EventKind::Recv { .. } | EventKind::Coll { .. } => {
                    format!("{:?}", e.kind)
                }
            }
        }

        fn described(&self, t: ThreadId) -> Vec<String> {
            self.thread(t).iter().map(|e| self.describe(e)).collect()
        }

        fn count(&self, t: ThreadId, what: &str) -> usize {
            self.described(t).iter().filter(|d| *d == what).count()
        }
    }

    /// Per thread: `start` then `cpu` first, `cpu` then `stop` last and at the same time, times
    /// non-decreasing, intervals properly paired.
    fn check_thread_shape(log: &Log, t: ThreadId) {
        let d = log.described(t);
        assert!(d.len() >= 4, "thread {t}: {d:?}");
        assert_eq!(&d[..2], ["start", "cpu"], "thread {t}");
        assert_eq!(&d[d.len() - 2..], ["cpu", "stop"], "thread {t}");
        let times: Vec<u64> = log.thread(t).iter().map(|e| e.t).collect();
        // The last sample and the stop are one instant, taken before the clocks' slow reads: a
        // thread preempted while it read them would otherwise stop later, idle meanwhile.
        assert_eq!(
            times[times.len() - 2],
            times[times.len() - 1],
            "thread {t}: its last sample and its stop"
        );
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "thread {t}: {times:?}"
        );
        for (b, e) in [
            ("work_begin", "work_end"),
            ("wait_begin", "wait_end"),
            ("comm_begin", "comm_end"),
        ] {
            let nb = d.iter().filter(|x| x.starts_with(b)).count();
            let ne = d.iter().filter(|x| x.starts_with(e)).count();
            assert_eq!(nb, ne, "thread {t}: {b}/{e}");
        }
    }

    #[test]
    fn manual_threads_record_regions_work_waits_comm_phases_and_cpu() {
        let _s = one_at_a_time();
        let dir = scratch("manual");
        let path = dir.join("pp.log");
        let session = Session::builder(3)
            .param("impl", "manual")
            .param("n", 64)
            .path(&path)
            .start()
            .unwrap();
        assert_eq!(session.tmp_path(), dir.join("pp.log.tmp"));
        let counter = sync::Mutex::named("counter", 0u64);
        let barrier = sync::Barrier::named("sync", 3);
        let held = std::sync::Barrier::new(3); // not recorded
        let waiters = [AtomicI32::new(0), AtomicI32::new(0)];
        std::thread::scope(|s| {
            for i in 0..3 {
                let (counter, barrier, held, waiters) = (&counter, &barrier, &held, &waiters);
                s.spawn(move || {
                    let t = recorder::thread(i);
                    assert!(t.is_recording());
                    assert_eq!(recorder::current_thread(), Some(i));
                    recorder::phase("compute");
                    let region = (i == 0).then(|| recorder::region("main"));
                    {
                        let _w = recorder::work("compute");
                        busy(10_000);
                        let src = vec![7u8; 1 << 16];
                        let _c = recorder::comm(src.len() as u64);
                        let dst = src.clone();
                        assert_eq!(dst.len(), 1 << 16);
                    }
                    barrier.wait();
                    recorder::phase("locks");
                    // Certain contention: thread 0 holds the lock until the others are blocked
                    // on it.
                    if i == 0 {
                        let g = counter.lock().unwrap();
                        held.wait();
                        waiters.iter().for_each(until_blocked);
                        drop(g);
                    } else {
                        held.wait();
                        waiters[i as usize - 1].store(tid(), Ordering::Release);
                        drop(counter.lock().unwrap());
                    }
                    for _ in 0..100 {
                        let mut g = counter.lock().unwrap();
                        let _w = recorder::work("critical");
                        *g += 1;
                        busy(20_000);
                    }
                    barrier.wait();
                    drop(region);
                });
            }
        });
        assert_eq!(*counter.lock().unwrap(), 300);
        let report = session.finish().unwrap();
        assert_eq!(report.path, path);
        assert!(report.unstopped.is_empty());
        assert_eq!(report.refused_blocks, 0, "{:?}", report.first_refusal);
        assert!(!dir.join("pp.log.tmp").exists());

        let log = Log::read(&path);
        assert!(log.finished && log.error.is_none(), "{:?}", log.error);
        assert_eq!(log.events.len() as u64, report.events);
        assert_eq!(log.header.p, 3);
        assert_eq!(
            log.header.params,
            [("impl".into(), "manual".into()), ("n".into(), "64".into())]
        );
        for t in 0..3 {
            check_thread_shape(&log, t);
            let d = log.described(t);
            assert_eq!(log.count(t, "phase compute"), 1);
            assert_eq!(log.count(t, "phase locks"), 1);
            assert_eq!(log.count(t, "work_begin compute"), 1);
            assert_eq!(log.count(t, "comm_begin 65536"), 1);
            assert_eq!(log.count(t, "comm_end 65536"), 1);
            assert_eq!(log.count(t, "work_begin critical"), 100);
            assert_eq!(log.count(t, "wait_begin barrier sync"), 2);
            assert_eq!(log.count(t, "wait_end barrier sync"), 2);
            if t > 0 {
                assert!(log.count(t, "wait_begin lock counter") >= 1, "thread {t}");
            }
            // Each wait's end names the thread that held the lock before (another one).
            let others = (0..3).filter(|&o| o != t);
            assert_eq!(
                log.count(t, "wait_begin lock counter"),
                others
                    .map(|o| log.count(t, &format!("wait_end lock counter by={o}")))
                    .sum::<usize>()
            );
            // comm nests in work.
            let w = d.iter().position(|x| x == "work_begin compute").unwrap();
            assert_eq!(d[w + 1], "comm_begin 65536");
            assert_eq!(d[w + 3], "work_end compute");
        }
        // The region and its CPU samples are on thread 0.
        let d = log.described(0);
        let b = d.iter().position(|x| x == "region_begin main").unwrap();
        assert_eq!(d[b + 1], "cpu");
        let e = d.iter().position(|x| x == "region_end").unwrap();
        assert_eq!(d[e - 1], "cpu");
        assert!(b < e);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn finish_renames_the_tmp_log_over_the_previous_one() {
        let _s = one_at_a_time();
        let dir = scratch("rename");
        let path = dir.join("pp.log");
        std::fs::write(&path, "last run's log").unwrap();
        let session = Session::builder(1).path(&path).start().unwrap();
        assert!(session.tmp_path().exists());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "last run's log");
        recorder::thread_start(0);
        drop(recorder::work(None));
        recorder::thread_stop();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "last run's log");
        session.finish().unwrap();
        assert!(!dir.join("pp.log.tmp").exists());
        let log = Log::read(&path);
        assert!(log.finished);
        assert_eq!(
            log.described(0),
            ["start", "cpu", "work_begin", "work_end", "cpu", "stop"]
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn dropping_the_session_finishes_it() {
        let _s = one_at_a_time();
        let dir = scratch("drop");
        let path = dir.join("pp.log");
        {
            let _session = Session::builder(1).path(&path).start().unwrap();
            let _t = recorder::thread(0);
            recorder::phase("only");
        }
        let log = Log::read(&path);
        assert!(log.finished);
        assert_eq!(
            log.described(0),
            ["start", "cpu", "phase only", "cpu", "stop"]
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_panicking_worker_still_leaves_its_events() {
        let _s = one_at_a_time();
        let dir = scratch("panic");
        let path = dir.join("pp.log");
        let session = Session::builder(3).path(&path).start().unwrap();
        let doomed = std::thread::spawn(|| {
            recorder::thread_start(1);
            let _w = recorder::work("doomed");
            busy(1000);
            panic!("worker fails on purpose");
        });
        assert!(doomed.join().is_err());
        // A thread that exits without thread_stop is stopped at exit.
        std::thread::spawn(|| {
            recorder::thread_start(2);
            recorder::phase("forgetful");
        })
        .join()
        .unwrap();
        let report = session.finish().unwrap();
        assert!(report.unstopped.is_empty(), "{:?}", report.unstopped);
        let log = Log::read(&path);
        assert!(log.finished);
        assert_eq!(
            log.described(1),
            [
                "start",
                "cpu",
                "work_begin doomed",
                "work_end doomed",
                "cpu",
                "stop"
            ]
        );
        assert_eq!(
            log.described(2),
            ["start", "cpu", "phase forgetful", "cpu", "stop"]
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_panic_hook_flushes_the_panicking_thread_before_unwinding() {
        let _s = one_at_a_time();
        let dir = scratch("hook");
        let path = dir.join("pp.log");
        let session = Session::builder(1).path(&path).start().unwrap();
        let (panicked_tx, panicked_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            recorder::thread_start(0);
            let caught = std::panic::catch_unwind(|| {
                let _w = recorder::work("before_panic");
                panic!("caught on purpose");
            });
            assert!(caught.is_err());
            panicked_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            recorder::thread_stop();
        });
        panicked_rx.recv().unwrap();
        // The buffer is far from full and the thread still runs: only the hook wrote these.
        let prefix = Log::read(session.tmp_path());
        assert_eq!(
            prefix.described(0),
            ["start", "cpu", "work_begin before_panic"]
        );
        go_tx.send(()).unwrap();
        worker.join().unwrap();
        session.finish().unwrap();
        let log = Log::read(&path);
        assert_eq!(
            log.described(0),
            [
                "start",
                "cpu",
                "work_begin before_panic",
                "work_end before_panic",
                "cpu",
                "stop"
            ]
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn full_buffers_are_flushed_and_the_prefix_is_readable_mid_run() {
        let _s = one_at_a_time();
        let dir = scratch("prefix");
        let path = dir.join("pp.log");
        let session = Session::builder(1)
            .path(&path)
            .buffer_events(16)
            .start()
            .unwrap();
        recorder::thread_start(0);
        for _ in 0..100 {
            let _w = recorder::work("step");
        }
        // 202 events so far (start, cpu, 200 work events): 12 full blocks of 16 are in the file.
        let prefix = Log::read(session.tmp_path());
        assert!(!prefix.finished);
        assert_eq!(prefix.events.len(), 192);
        let err = prefix.error.expect("a log without end marker reports it");
        assert!(err.contains("end marker"), "{err}");
        assert!(!path.exists());
        recorder::thread_stop();
        let report = session.finish().unwrap();
        assert_eq!(report.events, 204);
        let log = Log::read(&path);
        assert!(log.finished && log.error.is_none());
        assert_eq!(log.events.len(), 204);
        assert_eq!(log.count(0, "work_begin step"), 100);
        check_thread_shape(&log, 0);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn recv_and_send_waits_are_recorded_only_when_blocking() {
        let _s = one_at_a_time();
        let dir = scratch("channel");
        let path = dir.join("pp.log");
        let session = Session::builder(2).path(&path).start().unwrap();
        let (tx, rx) = sync::channel::<u32>("results");
        let (stx, srx) = sync::sync_channel::<u32>("handoff", 0);
        static RECEIVER: AtomicI32 = AtomicI32::new(0);
        static SENDER: AtomicI32 = AtomicI32::new(0);
        let receiver = std::thread::spawn(move || {
            let _t = recorder::thread(0);
            RECEIVER.store(tid(), Ordering::Release);
            assert_eq!(rx.recv(), Ok(1)); // blocks: the sender sends once it is blocked
            until_blocked(&SENDER);
            assert_eq!(srx.recv(), Ok(2));
            assert_eq!(rx.recv(), Ok(3)); // ready: no wait
        });
        let sender = std::thread::spawn(move || {
            let _t = recorder::thread(1);
            until_blocked(&RECEIVER);
            tx.send(1).unwrap();
            tx.send(3).unwrap();
            SENDER.store(tid(), Ordering::Release);
            // Rendezvous: the receiver takes it only once this thread is blocked here.
            stx.send(2).unwrap();
        });
        receiver.join().unwrap();
        sender.join().unwrap();
        session.finish().unwrap();
        let log = Log::read(&path);
        assert_eq!(log.count(0, "wait_begin recv results"), 1);
        assert_eq!(log.count(1, "wait_begin send handoff"), 1);
        // The receive's end names the sending thread; the blocked send's names nobody.
        assert_eq!(log.count(0, "wait_end recv results by=1"), 1);
        assert_eq!(log.count(1, "wait_end send handoff"), 1);
        // The send that ended the wait recorded its release (a skeleton's partner signals
        // there); the sends that no wait needed record none.
        assert_eq!(log.count(1, "release recv results"), 1);
        assert_eq!(log.count(1, "release recv handoff"), 0);
        for t in 0..2 {
            check_thread_shape(&log, t);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn condvar_waits_are_recorded() {
        let _s = one_at_a_time();
        let dir = scratch("condvar");
        let path = dir.join("pp.log");
        let session = Session::builder(2).path(&path).start().unwrap();
        let ready = sync::Mutex::new(false);
        let cv = sync::Condvar::named("ready");
        let waiter = AtomicI32::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _t = recorder::thread(0);
                let g = ready.lock().unwrap();
                waiter.store(tid(), Ordering::Release);
                let g = cv.wait_while(g, |r| !*r).unwrap();
                assert!(*g);
            });
            s.spawn(|| {
                let _t = recorder::thread(1);
                // Once thread 0 sleeps in the wait (it holds the lock until then).
                until_blocked(&waiter);
                *ready.lock().unwrap() = true;
                cv.notify_all();
            });
        });
        session.finish().unwrap();
        let log = Log::read(&path);
        assert_eq!(log.count(0, "wait_begin cond ready"), 1);
        // The wait's end names the thread that notified.
        assert_eq!(log.count(0, "wait_end cond ready by=1"), 1);
        // The notify came while thread 0 waited: it recorded its release.
        assert_eq!(log.count(1, "release cond ready"), 1);
        let _ = std::fs::remove_dir_all(dir);
    }

    /// For each region of the log and each thread that worked in it: a `cpu` sample of that
    /// thread between the region's begin and its first work, and one between its last work and
    /// the region's end.
    fn check_cpu_brackets_region_work(log: &Log) {
        let mut open: Vec<(u64, u64)> = Vec::new(); // (id, begin)
        let mut regions = Vec::new(); // (begin, end)
        for e in &log.events {
            match e.kind {
                EventKind::RegionBegin { id, .. } => open.push((id, e.t)),
                EventKind::RegionEnd { id } => {
                    let i = open.iter().position(|o| o.0 == id).unwrap();
                    regions.push((open.remove(i).1, e.t));
                }
                _ => {}
            }
        }
        assert!(open.is_empty());
        for &(b, end) in &regions {
            for t in 0..log.header.p {
                let ev = log.thread(t);
                let inside: Vec<&Event> = ev.iter().filter(|e| e.t >= b && e.t <= end).collect();
                let works: Vec<u64> = inside
                    .iter()
                    .filter(|e| {
                        matches!(
                            e.kind,
                            EventKind::WorkBegin { .. } | EventKind::WorkEnd { .. }
                        )
                    })
                    .map(|e| e.t)
                    .collect();
                let (Some(&first), Some(&last)) = (works.first(), works.last()) else {
                    continue;
                };
                let cpus: Vec<u64> = inside
                    .iter()
                    .filter(|e| matches!(e.kind, EventKind::Cpu { .. }))
                    .map(|e| e.t)
                    .collect();
                // Where the kernel reports run-queue delay, every sample carries it.
                if std::path::Path::new("/proc/thread-self/schedstat").exists() {
                    assert!(inside.iter().all(|e| !matches!(
                        e.kind,
                        EventKind::Cpu {
                            run_delay_ns: None,
                            ..
                        }
                    )));
                }
                assert!(
                    cpus.iter().any(|&c| c <= first),
                    "thread {t}: no cpu sample before its work in [{b}, {end}]"
                );
                assert!(
                    cpus.iter().any(|&c| c >= last),
                    "thread {t}: no cpu sample after its work in [{b}, {end}]"
                );
            }
        }
    }

    #[test]
    fn a_team_records_serial_work_regions_tasks_and_cpu_samples() {
        let _s = one_at_a_time();
        let dir = scratch("team");
        let path = dir.join("pp.log");
        let session = Session::builder(3).path(&path).start().unwrap();
        let team = session.team().unwrap();
        assert_eq!(team.threads(), 3);
        let on = team.run(|| {
            let _w = recorder::work("serial");
            busy(100_000);
            recorder::current_thread()
        });
        assert!(on.is_some_and(|t| t < 3), "run executes on a team thread");
        team.phase("parallel");
        let sum = AtomicU64::new(0);
        team.parallel_for("loop", 0..64, 4, |i| {
            sum.fetch_add(busy(10_000) & 1 | i as u64, Ordering::Relaxed);
        });
        let parts = team.region("spmd", |part| {
            let _w = recorder::work("part");
            busy(50_000 * (part.index() as u64 + 1));
            part.thread()
        });
        assert_eq!(parts, [0, 1, 2]);
        let tasks = AtomicU64::new(0);
        team.scope("tasks", |s| {
            for _ in 0..8 {
                s.spawn(|_| {
                    busy(20_000);
                    tasks.fetch_add(1, Ordering::Relaxed);
                });
            }
        });
        assert_eq!(tasks.into_inner(), 8);
        drop(team);
        let report = session.finish().unwrap();
        assert!(report.unstopped.is_empty());

        let log = Log::read(&path);
        assert!(log.finished && log.error.is_none(), "{:?}", log.error);
        let all: Vec<String> = log.events.iter().map(|e| log.describe(e)).collect();
        let count = |what: &str| all.iter().filter(|d| *d == what).count();
        for name in ["loop", "spmd", "tasks"] {
            assert_eq!(count(&format!("region_begin {name}")), 1, "{name}");
        }
        assert_eq!(count("region_end"), 3);
        assert_eq!(count("work_begin serial"), 1);
        assert_eq!(count("work_begin part"), 3);
        // 16 chunks of the loop and 8 tasks, unlabelled.
        assert_eq!(count("work_begin"), 24);
        for t in 0..3 {
            check_thread_shape(&log, t);
            assert_eq!(log.count(t, "phase parallel"), 1, "thread {t}");
            assert_eq!(log.count(t, "work_begin part"), 1, "thread {t}");
        }
        // The serial work is outside every region.
        let serial_t = log
            .events
            .iter()
            .find(|e| log.describe(e) == "work_begin serial")
            .unwrap()
            .t;
        let first_region = log
            .events
            .iter()
            .find(|e| matches!(e.kind, EventKind::RegionBegin { .. }))
            .unwrap()
            .t;
        assert!(serial_t < first_region);
        check_cpu_brackets_region_work(&log);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_team_built_before_the_session_and_never_dropped_is_recorded_and_stopped() {
        let _s = one_at_a_time();
        let dir = scratch("team-early");
        let path = dir.join("pp.log");
        let team = Team::new(2).unwrap();
        let session = Session::builder(4).path(&path).start().unwrap();
        team.region("r", |_| {
            let _w = recorder::work(None);
            busy(10_000);
        });
        let report = session.finish().unwrap();
        assert!(report.unstopped.is_empty(), "{:?}", report.unstopped);
        let log = Log::read(&path);
        assert!(log.finished);
        for t in 0..2 {
            check_thread_shape(&log, t);
        }
        // Two of four threads: the region names its team.
        let begins: Vec<String> = log
            .events
            .iter()
            .map(|e| log.describe(e))
            .filter(|d| d.starts_with("region_begin"))
            .collect();
        assert_eq!(begins, ["region_begin r team=[0, 1]"]);
        // The team outlives the session: work after it is not recorded, and a new session
        // registers the threads again.
        team.region("after", |_| drop(recorder::work(None)));
        let path2 = dir.join("pp2.log");
        let session = Session::builder(2).path(&path2).start().unwrap();
        team.region("again", |_| drop(recorder::work(None)));
        drop(team);
        session.finish().unwrap();
        let log = Log::read(&path2);
        for t in 0..2 {
            check_thread_shape(&log, t);
            assert_eq!(log.count(t, "work_begin"), 1);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn only_one_session_at_a_time_and_bad_headers_are_refused() {
        let _s = one_at_a_time();
        let dir = scratch("refuse");
        let path = dir.join("pp.log");
        let bad = Session::builder(2)
            .param("my key", "x")
            .path(&path)
            .start()
            .unwrap_err();
        assert_eq!(bad.kind(), std::io::ErrorKind::InvalidInput);
        assert!(bad.to_string().contains("my key"), "{bad}");
        assert!(!dir.join("pp.log.tmp").exists());
        let zero = Session::builder(0).path(&path).start().unwrap_err();
        assert_eq!(zero.kind(), std::io::ErrorKind::InvalidInput);

        let first = Session::builder(1).path(&path).start().unwrap();
        let second = Session::builder(1).path(dir.join("other.log")).start();
        assert_eq!(
            second.unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        // Ids not below p are refused; unregistered threads record nothing.
        assert!(!recorder::thread_start(1));
        assert_eq!(recorder::current_thread(), None);
        drop(recorder::work("nothing"));
        first.finish().unwrap();
        assert!(!recorder::thread_start(0), "no session is active");
        let log = Log::read(&path);
        assert!(log.events.is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn names_that_are_not_tokens_are_made_tokens() {
        let _s = one_at_a_time();
        let dir = scratch("names");
        let path = dir.join("pp.log");
        let session = Session::builder(1).path(&path).start().unwrap();
        recorder::thread_start(0);
        recorder::phase(recorder::name(&format!("step {}", 1)));
        recorder::thread_stop();
        session.finish().unwrap();
        let log = Log::read(&path);
        assert_eq!(log.count(0, "phase step_1"), 1);
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A tracer that learns `p` late (the OMPT tool) registers its first thread at the epoch.
    #[test]
    fn a_thread_registered_at_the_epoch_starts_and_works_from_time_0() {
        let _serial = one_at_a_time();
        let dir = scratch("epoch");
        let path = dir.join("epoch.log");
        let epoch = recorder::Epoch::now();
        // The program runs a while before it knows p.
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = x.wrapping_add(std::hint::black_box(i));
        }
        let session = Session::builder(2)
            .epoch(epoch)
            .path(&path)
            .start()
            .unwrap();
        assert!(recorder::thread_start_at_epoch(
            0,
            Some("serial"),
            Some(None)
        ));
        assert!(
            !recorder::thread_start_at_epoch(2, None, None),
            "2 is not below p"
        );
        recorder::work_end(None);
        session.finish().unwrap();
        let mut reader = LogReader::open(&path).unwrap();
        let mut events = Vec::new();
        reader
            .for_each_event(|e, s| {
                let phase = match e.kind {
                    EventKind::Phase { name } => Some(s.name(name).to_owned()),
                    _ => None,
                };
                events.push((e.t, e.kind, phase));
            })
            .unwrap();
        assert!(matches!(events[0], (0, EventKind::Start, _)), "{events:?}");
        assert!(
            matches!(events[1], (0, EventKind::Cpu { .. }, _)),
            "{events:?}"
        );
        assert_eq!(events[2].2.as_deref(), Some("serial"));
        assert!(matches!(
            events[3],
            (0, EventKind::WorkBegin { label: None }, _)
        ));
        // The work ends after the time the program ran before the session started.
        let end = events
            .iter()
            .find(|e| matches!(e.1, EventKind::WorkEnd { .. }))
            .unwrap();
        assert!(end.0 > 0, "{events:?} {x}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
