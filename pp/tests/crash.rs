//! Crashes keep their events (docs/event-log.md, "Crash-safe buffers"): a Rust program using
//! the recorder is killed halfway by SIGSEGV, SIGABRT or SIGKILL, and its log is completed from
//! its threads' buffers — by `pp recover`, and by `pp run`, which then profiles it. The
//! program is this test binary itself, run again with `PP_CRASH_CHILD` set ([`crash_child`]).
//!
//! What the program records is known exactly (the counts below), so the recovered log is
//! checked event by event; its times depend on the machine's load, so the profile is checked
//! for its structure: computation and the lock wait are there, and the window ends at the
//! last recorded event.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use test_support::{pp, scratch};

/// Work intervals thread 0 records after its lock wait and before the crash.
const BEFORE: usize = 1000;

/// The recorded program, when this binary runs with `PP_CRASH_CHILD=segv|abort|kill`: thread 1
/// holds lock `m`, working, until 20 ms after thread 0 is about to take it (so thread 0 waits); thread 0 then records
/// [`BEFORE`] work intervals `before` and dies by the signal while thread 1 is inside its work
/// `tail`. Without the variable it returns at once (it is this file's entry for the child).
#[test]
fn crash_child() {
    let Ok(mode) = std::env::var("PP_CRASH_CHILD") else {
        return;
    };
    use pp_recorder::{self as recorder, Session, sync::Mutex};
    let _session = Session::start(2, &[("impl", "crash")]).unwrap();
    let lock = Arc::new(Mutex::named("m", 0u64));
    let flag = || Arc::new(AtomicBool::new(false));
    let (held, trying, tail) = (flag(), flag(), flag());
    {
        let (lock, held, trying, tail) = (lock.clone(), held.clone(), trying.clone(), tail.clone());
        std::thread::spawn(move || {
            recorder::thread_start(1);
            {
                let mut g = lock.lock().unwrap();
                held.store(true, Ordering::SeqCst);
                let _w = recorder::work("hold");
                while !trying.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                spin(Duration::from_millis(20));
                *g += 1;
            }
            let _w = recorder::work("tail");
            tail.store(true, Ordering::SeqCst);
            loop {
                spin(Duration::from_millis(1));
            }
        });
    }
    recorder::thread_start(0);
    while !held.load(Ordering::SeqCst) {
        std::hint::spin_loop();
    }
    trying.store(true, Ordering::SeqCst);
    drop(lock.lock().unwrap());
    for _ in 0..BEFORE {
        let _w = recorder::work("before");
    }
    while !tail.load(Ordering::SeqCst) {
        std::hint::spin_loop();
    }
    // SAFETY: signal, raise, getpid and kill have no memory preconditions; SIGSEGV's default
    // action is restored first (Rust's own handler only serves stack overflows).
    unsafe {
        match mode.as_str() {
            "segv" => {
                libc::signal(libc::SIGSEGV, libc::SIG_DFL);
                libc::raise(libc::SIGSEGV);
            }
            "abort" => std::process::abort(),
            _ => {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
        }
    }
    unreachable!("the signal ended the program");
}

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// The child program: this binary, running only [`crash_child`].
fn child(mode: &str, buffer_events: Option<&str>) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env("PP_CRASH_CHILD", mode)
        .env_remove("PP_CRASH_SAFE")
        .env_remove("PP_BUFFER_EVENTS");
    if let Some(n) = buffer_events {
        c.env("PP_BUFFER_EVENTS", n);
    }
    c
}

fn signal_of(mode: &str) -> i32 {
    match mode {
        "segv" => libc::SIGSEGV,
        "abort" => libc::SIGABRT,
        _ => libc::SIGKILL,
    }
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Each thread's events in the log, as text lines without their time.
fn events(dir: &Path, log: &str) -> (HashMap<u32, Vec<String>>, u64) {
    let out = pp!()
        .current_dir(dir)
        .args(["convert", log, "events.txt", "--to", "text"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", text(&out));
    let body = std::fs::read_to_string(dir.join("events.txt")).unwrap();
    let mut threads: HashMap<u32, Vec<String>> = HashMap::new();
    let mut last = 0;
    for line in body.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let mut f = line.splitn(3, ' ');
        let t: u64 = f.next().unwrap().parse().unwrap();
        let thread: u32 = f.next().unwrap().parse().unwrap();
        last = last.max(t);
        threads
            .entry(thread)
            .or_default()
            .push(f.next().unwrap().to_string());
    }
    (threads, last)
}

/// The recovered log holds exactly what the program recorded, each event once.
fn check_events(dir: &Path, log: &str) -> u64 {
    let (threads, last) = events(dir, log);
    let t0 = &threads[&0];
    let count = |lines: &[String], what: &str| lines.iter().filter(|l| *l == what).count();
    assert_eq!(count(t0, "start"), 1);
    assert_eq!(count(t0, "wait_begin lock m"), 1, "{t0:?}");
    assert_eq!(count(t0, "work_begin before"), BEFORE);
    assert_eq!(count(t0, "work_end before"), BEFORE);
    assert_eq!(
        t0.last().unwrap(),
        "work_end before",
        "thread 0 ends at its last event"
    );
    let t1 = &threads[&1];
    assert_eq!(count(t1, "work_begin hold"), 1);
    assert_eq!(count(t1, "work_end hold"), 1);
    assert_eq!(t1.last().unwrap(), "work_begin tail");
    assert!(!t0.iter().chain(t1).any(|l| l == "stop"));
    last
}

/// `pp -l`'s row as numbers by key.
fn row(dir: &Path, log: &str) -> HashMap<String, f64> {
    let out = pp!().current_dir(dir).args(["-l", log]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    stdout
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

/// The profile has the program's computation and lock wait, and its window ends at the last
/// recorded event (nothing is invented after it).
fn check_profile(dir: &Path, log: &str, last_event_ns: u64) {
    let row = row(dir, log);
    assert!(row["pc"] > 0.0, "{row:?}");
    assert!(row["sl"] > 0.0, "thread 0 waited for lock m: {row:?}");
    assert!(row["wall"] <= last_event_ns as f64 * 1e-9 + 1e-9, "{row:?}");
    let sum: f64 = ["pc", "li", "ip", "sl", "cl", "rc"]
        .iter()
        .map(|k| row[*k])
        .sum();
    assert!(
        (sum - row["total"]).abs() < 1e-6 && (row["total"] - 2.0 * row["wall"]).abs() < 1e-6,
        "categories sum to p × wall: {row:?}"
    );
}

fn crashed(status: ExitStatus, mode: &str) {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(signal_of(mode)), "{status:?}");
}

fn left_nothing_behind(dir: &Path) {
    for f in ["pp.log.tmp", "pp.log.tmp.buffers", "pp.log.tmp.names"] {
        assert!(!dir.join(f).exists(), "{f} is left");
    }
}

/// Killed without `pp run`: `pp recover` finishes the log from the `.tmp` and the buffers.
fn recovered_by_hand(mode: &str, buffer_events: Option<&str>) {
    let dir = scratch(&format!(
        "crash-{mode}-{}",
        buffer_events.unwrap_or("default")
    ));
    let out = child(mode, buffer_events)
        .env("PP_LOG", dir.join("pp.log"))
        .output()
        .unwrap();
    crashed(out.status, mode);
    assert!(dir.join("pp.log.tmp.buffers").exists());
    // Before it is recovered, pp points at the way: asked for the log, which is not there,
    // and for the .tmp as it is (a profile of what was flushed, or an error when nothing was).
    let out = pp!().current_dir(&dir).arg("pp.log").output().unwrap();
    test_support::one_line_error(
        &out,
        Some(1),
        &[
            "pp.log: cannot open: ",
            "pp.log.tmp is there: the recorded run did not finish \
          (it crashed, or exited before its session finished); `pp recover pp.log.tmp` \
          completes the log from its threads' buffers",
        ],
    );
    let out = pp!().current_dir(&dir).arg("pp.log.tmp").output().unwrap();
    let (_, stderr) = text(&out);
    assert!(
        stderr.lines().next().is_some_and(|l| l.contains(
            "its threads' buffers are beside it: `pp recover pp.log.tmp` completes the log"
        )),
        "{stderr}"
    );
    let out = pp!()
        .current_dir(&dir)
        .args(["recover", "pp.log.tmp"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("recovered ")
            && stderr.contains(" events into pp.log (")
            && stderr
                .trim_end()
                .ends_with("threads that did not stop end at their last event: 0, 1"),
        "{stderr}"
    );
    if buffer_events.is_none() {
        // Nothing had filled a buffer: every event came from the buffers.
        assert!(stderr.contains(" (0 from pp.log.tmp, "), "{stderr}");
    } else {
        assert!(!stderr.contains(" (0 from pp.log.tmp, "), "{stderr}");
    }
    left_nothing_behind(&dir);
    let last = check_events(&dir, "pp.log");
    check_profile(&dir, "pp.log", last);
}

#[test]
fn a_program_killed_by_sigsegv_is_recovered_up_to_its_crash() {
    recovered_by_hand("segv", None);
}

#[test]
fn a_program_that_aborts_is_recovered_up_to_its_crash() {
    recovered_by_hand("abort", None);
}

#[test]
fn a_program_killed_by_sigkill_is_recovered_up_to_its_crash() {
    recovered_by_hand("kill", None);
}

/// Blocks written before the crash and buffers refilled since: each event once, in order.
#[test]
fn events_already_in_the_log_are_not_taken_twice() {
    recovered_by_hand("kill", Some("300"));
    recovered_by_hand("segv", Some("7"));
}

/// A stand-in for the OMPT tool, which this Rust program does not use: the C library, which
/// every process here has loaded already (`pp run` preloads the tool).
fn stand_in_tool() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libc.so"))
        .map(PathBuf::from)
        .expect("the C library in /proc/self/maps")
}

#[test]
fn pp_run_profiles_a_crashed_program_up_to_its_last_event() {
    let dir = scratch("crash-pp-run");
    let exe = std::env::current_exe().unwrap();
    let out = pp!()
        .current_dir(&dir)
        .env("PP_OMPT_LIBRARY", stand_in_tool())
        .env("PP_CRASH_CHILD", "segv")
        .env_remove("PP_LOG")
        .env_remove("PP_BUFFER_EVENTS")
        .args(["run", "-l", "--"])
        .arg(&exe)
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(128 + libc::SIGSEGV), "{stderr}");
    // The child's own test harness writes `test crash_child ... ` to the same stream first.
    let warning = stderr
        .lines()
        .find_map(|l| l.find("pp run: warning: ").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        warning.starts_with("pp run: warning: ")
            && warning
                .contains(" was killed by signal 11: profiled up to its last recorded event (")
            && warning.contains(" of them from its threads' buffers, recovered into "),
        "{warning}"
    );
    assert!(stdout.starts_with("impl=crash p=2 "), "{stdout}");
    left_nothing_behind(&dir);
    let last = check_events(&dir, "pp.log");
    check_profile(&dir, "pp.log", last);
}

mod property {
    use proptest::prelude::*;

    use pp::event::EventKind;
    use pp::log::LogReader;
    use pp_recorder::{self as recorder, Session};
    use test_support::scratch;

    const LABELS: [Option<&str>; 4] = [None, Some("a"), Some("b c"), Some("d")];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Stopped at any point, with any buffer size, a run's log completed from its `.tmp`
        /// and its buffers holds every event it recorded, once, in order. (The run is this
        /// process: its buffers are read while it is alive, as after a crash.)
        #[test]
        fn a_recovered_log_holds_every_recorded_event_once_in_order(
            buffer in 1usize..40,
            labels in proptest::collection::vec(0usize..4, 0..120),
        ) {
            let dir = scratch("crash-property");
            let session = Session::builder(1)
                .path(dir.join("pp.log"))
                .buffer_events(buffer)
                .crash_safe(true)
                .start()
                .unwrap();
            recorder::thread_start(0);
            for &l in &labels {
                let _w = recorder::work(LABELS[l]);
            }
            let tmp = session.tmp_path().to_path_buf();
            let out = dir.join("recovered.log");
            let r = pp::trace::recover::recover(&tmp, &out).unwrap().unwrap();
            recorder::thread_stop();
            let _ = session.finish(); // its files are gone: the rename fails, as it may
            let mut reader = LogReader::open(&out).unwrap();
            let mut got = Vec::new();
            reader
                .for_each_event(|e, symbols| {
                    let name = |s: Option<pp::event::Sym>| s.map(|s| symbols.name(s).to_string());
                    got.push(match e.kind {
                        EventKind::Start => "start".to_string(),
                        EventKind::Cpu { .. } => "cpu".to_string(),
                        EventKind::WorkBegin { label } => format!("begin {:?}", name(label)),
                        EventKind::WorkEnd { label } => format!("end {:?}", name(label)),
                        k => format!("{k:?}"),
                    });
                })
                .unwrap();
            let mut want = vec!["start".to_string(), "cpu".to_string()];
            for &l in &labels {
                let label = LABELS[l].map(|s| s.replace(' ', "_"));
                want.push(format!("begin {label:?}"));
                want.push(format!("end {label:?}"));
            }
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(r.from_log + r.from_buffers, want.len() as u64);
            prop_assert_eq!(r.unstopped, vec![0]);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// A crash during a flush leaves the log holding some of the buffer's events: the buffer's
/// `base` says where it started, and those events are taken once. The files are made here as
/// the recorder lays them out (docs/event-log.md, "Crash-safe buffers"): a clock of 1 ns per
/// tick, one buffer of thread 0 that started when the log held 2 of its events.
#[test]
fn a_flush_cut_short_by_the_crash_is_not_taken_twice() {
    use pp::event::{Event, EventKind, Header, Symbols};
    let dir = scratch("crash-mid-flush");
    let tmp = dir.join("pp.log.tmp");
    let ev = |t, kind| Event { t, thread: 0, kind };
    let (begin, end) = (
        EventKind::WorkBegin { label: None },
        EventKind::WorkEnd { label: None },
    );
    // The log: start, then 5 events the buffer also holds (its flush was cut after them).
    let header = Header {
        p: 1,
        params: Vec::new(),
    };
    let mut w = pp::log::BinaryWriter::new(std::fs::File::create(&tmp).unwrap(), &header).unwrap();
    let logged = [
        ev(0, EventKind::Start),
        ev(10, begin),
        ev(20, end),
        ev(30, begin),
        ev(40, end),
        ev(50, begin),
    ];
    w.write_block(0, &logged[..2], &Symbols::default()).unwrap();
    w.write_block(0, &logged[2..], &Symbols::default()).unwrap();
    drop(w); // no end marker: the run died
    // The buffer: base 1 (the log held `start` when it began), 7 events from t = 10.
    let (cap, slot) = (16u64, 4096u64);
    let mut file = vec![0u8; 4096 + slot as usize];
    file[..8].copy_from_slice(b"ppbuf01\n");
    for (i, v) in [40, cap, slot, 0, 1 << 32].into_iter().enumerate() {
        file[8 + 8 * i..16 + 8 * i].copy_from_slice(&v.to_ne_bytes());
    }
    let head = 4096;
    file[head..head + 4].copy_from_slice(&1u32.to_ne_bytes());
    file[head + 8..head + 16].copy_from_slice(&1u64.to_ne_bytes());
    file[head + 16..head + 24].copy_from_slice(&7u64.to_ne_bytes());
    for k in 0..7u64 {
        let at = head + 64 + 40 * k as usize;
        file[at..at + 8].copy_from_slice(&(10 + 10 * k).to_ne_bytes());
        file[at + 32] = if k % 2 == 0 { 5 } else { 6 }; // work_begin, work_end
    }
    std::fs::write(dir.join("pp.log.tmp.buffers"), &file).unwrap();
    std::fs::write(dir.join("pp.log.tmp.names"), b"").unwrap();
    let r = pp::trace::recover::recover(&tmp, &dir.join("pp.log"))
        .unwrap()
        .unwrap();
    assert_eq!((r.from_log, r.from_buffers), (6, 2));
    let (threads, last) = events(&dir, "pp.log");
    assert_eq!(
        threads[&0],
        [
            "start",
            "work_begin",
            "work_end",
            "work_begin",
            "work_end",
            "work_begin",
            "work_end",
            "work_begin"
        ]
    );
    assert_eq!(last, 70);
    left_nothing_behind(&dir);
}

#[test]
fn pp_recover_without_buffers_or_an_output_name_is_a_one_line_error() {
    let dir = scratch("recover-errors");
    std::fs::write(dir.join("run.log.tmp"), b"").unwrap();
    let out = pp!()
        .current_dir(&dir)
        .args(["recover", "run.log.tmp"])
        .output()
        .unwrap();
    test_support::one_line_error(
        &out,
        Some(1),
        &["run.log.tmp: no buffers with events beside it (run.log.tmp.buffers)"],
    );
    let out = pp!()
        .current_dir(&dir)
        .args(["recover", "run.log"])
        .output()
        .unwrap();
    test_support::one_line_error(&out, Some(1), &["run.log: name the log to write"]);
    std::fs::write(dir.join("run.log.tmp.buffers"), b"").unwrap();
    let out = pp!()
        .current_dir(&dir)
        .args(["recover", "run.log.tmp", "./run.log.tmp"])
        .output()
        .unwrap();
    test_support::one_line_error(
        &out,
        Some(1),
        &["./run.log.tmp: the recovered log would replace what it is recovered from"],
    );
    assert!(dir.join("run.log.tmp").exists(), "nothing is removed");
    assert!(!dir.join("run.log").exists());
    // A .tmp that is not there: said so, not that it has no buffers (which it seemed to say).
    let out = pp!()
        .current_dir(&dir)
        .args(["recover", "gone.log.tmp"])
        .output()
        .unwrap();
    test_support::one_line_error(
        &out,
        Some(1),
        &["gone.log.tmp: no such file: nothing to recover"],
    );
    // ... and when its log is there, recovered already or finished, so is that.
    std::fs::write(dir.join("gone.log"), b"").unwrap();
    let out = pp!()
        .current_dir(&dir)
        .args(["recover", "gone.log.tmp"])
        .output()
        .unwrap();
    test_support::one_line_error(
        &out,
        Some(1),
        &[
            "gone.log.tmp: no such file: nothing to recover (gone.log is there: the run finished, \
           or its log was recovered already)",
        ],
    );
}
