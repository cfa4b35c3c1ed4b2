//! `pp whatif` in bounded memory (docs/whatif.md#cost): the streams it keeps in a temporary
//! file give the same predicted log, byte for byte, as when they stay in memory, on random
//! logs and targets; the command runs under an address-space limit that the whole run held in
//! memory exceeds; a temporary folder it cannot write is a one-line error; and a binary
//! predicted log, written as the replay goes, holds the events that the library's predicted
//! log holds, or, where it cannot be written, is a one-line error that leaves nothing behind,
//! as a killed `pp whatif` does.

use std::os::unix::process::CommandExt;
use std::path::Path;

use proptest::prelude::*;
use test_support::{pp, scratch};

mod log_support;
use log_support::activity::random_log;
use log_support::realistic_log;

/// `pp whatif LOG ARGS` with `chunk` bytes of buffer a stream (`None`: the default), its
/// standard error and the predicted log (`None` when it failed).
fn whatif(
    dir: &Path,
    log: &Path,
    args: &[&str],
    chunk: Option<usize>,
) -> (String, Option<Vec<u8>>) {
    let out = dir.join(format!("predicted-{}.log", chunk.unwrap_or(0)));
    let mut cmd = pp!();
    cmd.arg("whatif")
        .arg(log)
        .args(args)
        .arg("--out")
        .arg(&out)
        .arg("--force")
        .env("TMPDIR", dir);
    if let Some(c) = chunk {
        cmd.env("PP_SPILL_CHUNK", c.to_string());
    }
    let done = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr).replace(&*out.to_string_lossy(), "OUT");
    let report = String::from_utf8_lossy(&done.stdout).replace(&*out.to_string_lossy(), "OUT");
    let log = done.status.success().then(|| std::fs::read(&out).unwrap());
    (report + &err, log)
}

/// A scratch folder `name` holding `log` as `run.log`; the folder, the log's path and the
/// predicted log's (`predicted.log`, not written).
fn folder_with(
    name: &str,
    log: &[u8],
) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(name);
    let path = dir.join("run.log");
    std::fs::write(&path, log).unwrap();
    let out = dir.join("predicted.log");
    (dir, path, out)
}

/// The names in `dir` other than `run.log`.
fn left_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "run.log")
        .collect()
}

/// The targets compared: identity, regrouped, demand from CPU time, both.
const TARGETS: [&[&str]; 4] = [
    &[],
    &["--group", "0,1"],
    &["--demand", "cpu"],
    &["--group", "0,1/2,3", "--demand", "cpu"],
];

fn same_from_the_file_as_from_memory(name: &str, log: &[u8], target: usize) {
    let (dir, path, _) = folder_with(name, log);
    // 8 bytes a buffer: every record and time goes to the file as soon as it is written.
    let on_disk = whatif(&dir, &path, TARGETS[target], Some(8));
    let in_memory = whatif(&dir, &path, TARGETS[target], None);
    assert_eq!(on_disk.0, in_memory.0);
    assert!(on_disk.1 == in_memory.1, "the predicted logs differ");
}

/// Every event of the log at `path`, with the names and teams it defines.
fn contents(path: &Path) -> (Vec<pp::event::Event>, Vec<String>, Vec<Vec<u32>>) {
    let mut reader = pp::log::LogReader::open(path).unwrap();
    let mut events = Vec::new();
    while let Some(e) = reader.next_event() {
        events.push(e.unwrap());
    }
    let symbols = reader.symbols();
    let names = (0..symbols.len() as u32)
        .map(|k| symbols.name(pp::event::Sym(k)).to_string())
        .collect();
    let teams = (0..)
        .map_while(|k| symbols.get_team(pp::event::TeamRef(k)).map(<[u32]>::to_vec))
        .collect();
    (events, names, teams)
}

/// `pp whatif` writes a binary predicted log as its replay goes (each block when it closes,
/// after the definitions it needs, which the reading hands over): the log holds the events,
/// names and teams that the library's predicted log, written from the replay's blocks once
/// it has ended, holds.
fn written_as_it_goes_as_the_library_writes_it(log: &[u8], target: usize) {
    let (dir, path, _) = folder_with("whatif-bounded-direct", log);
    let (report, direct) = whatif(&dir, &path, TARGETS[target], None);
    assert!(direct.is_some(), "{report}");
    let run = pp::whatif::MeasuredRun::read(
        pp::log::LogReader::open(&path).unwrap(),
        "run.log",
        &Default::default(),
    )
    .unwrap();
    let mut t = pp::whatif::Target::default();
    let args = TARGETS[target];
    if let Some(k) = args.iter().position(|&a| a == "--group") {
        t.groups = pp::whatif::parse_groups(args[k + 1]).unwrap();
    }
    if args.contains(&"--demand") {
        t.demand = pp::whatif::Demand::Cpu;
    }
    let prediction = pp::whatif::predict(&run, &t).unwrap();
    let library = dir.join("library.log");
    pp::whatif::write::write(&run, &prediction, "--out", &library, true).unwrap();
    let written = dir.join("predicted-0.log");
    assert!(
        contents(&written) == contents(&library),
        "the predicted logs differ"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn a_binary_predicted_log_written_as_the_replay_goes_holds_the_librarys_events(
        seed in any::<u64>(), p in 4u32..9, events in 20u64..5000, block in 1usize..300,
        target in 0usize..4
    ) {
        let log = realistic_log(p, events, block, seed);
        written_as_it_goes_as_the_library_writes_it(&log, target);
    }

    #[test]
    fn the_file_gives_the_predicted_log_of_memory_on_logs_with_messages_and_locks(
        seed in any::<u64>(), p in 4u32..7, rounds in 1usize..12,
        messages in any::<bool>(), locks in any::<bool>(), target in 0usize..4
    ) {
        let (log, _) = random_log(seed, p, rounds, messages, locks);
        same_from_the_file_as_from_memory("whatif-bounded-random", log.as_bytes(), target);
    }

    #[test]
    fn the_file_gives_the_predicted_log_of_memory_on_realistic_logs(
        seed in any::<u64>(), p in 4u32..9, events in 20u64..3000, block in 1usize..300,
        target in 0usize..4
    ) {
        let log = realistic_log(p, events, block, seed);
        same_from_the_file_as_from_memory("whatif-bounded-realistic", &log, target);
    }
}

#[test]
fn pp_whatif_runs_under_an_address_space_limit_the_whole_run_exceeds() {
    // The whole run held in memory took about 120 bytes an event (360 MB for these 3 M
    // events, more while vectors grow); the streams need their buffers (about 40 MB).
    const LIMIT: u64 = 96 << 20;
    let dir = scratch("whatif-bounded-limit");
    let log = dir.join("big.log");
    std::fs::write(&log, realistic_log(8, 3_000_000, 4096, 7)).unwrap();
    let out = dir.join("predicted.log");
    let mut cmd = pp!();
    cmd.args([
        "whatif",
        log.to_str().unwrap(),
        "--group",
        "0,1/2,3/4,5/6,7",
    ])
    .args(["--out", out.to_str().unwrap(), "--force"])
    .env("TMPDIR", &dir);
    let done = test_support::limit(&mut cmd, libc::RLIMIT_AS, LIMIT)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let text = String::from_utf8(done.stdout).unwrap();
    assert!(text.starts_with("measured wall: "), "{text}");
    assert!(text.contains("predicted wall: "), "{text}");
    let predicted = pp::log::LogReader::open(&out).unwrap();
    assert_eq!(predicted.header().p, 8);
}

#[test]
fn a_temporary_folder_that_cannot_be_written_is_a_one_line_error() {
    let (dir, log, out) = folder_with("whatif-bounded-no-tmp", &realistic_log(4, 2000, 64, 3));
    let missing = dir.join("missing");
    let err = test_support::error_of(
        pp!()
            .args([
                "whatif",
                log.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .env("TMPDIR", &missing)
            .env("PP_SPILL_CHUNK", "8"),
    );
    assert!(err.contains("a temporary file in"), "{err}");
    assert!(err.contains("missing"), "{err}");
    assert!(!out.exists());
}

#[test]
fn a_predicted_log_that_cannot_be_written_as_the_replay_goes_is_a_one_line_error() {
    // 100,000 events: records, times and blocks all stay in memory (the hand-over's 16 MB,
    // 256 kB of times a thread), so only the predicted log (about 440 kB) meets the limit.
    let (dir, log, out) = folder_with(
        "whatif-bounded-direct-full",
        &realistic_log(8, 100_000, 4096, 5),
    );
    let mut cmd = pp!();
    cmd.args(["whatif", log.to_str().unwrap(), "--group", "0,1/2,3"])
        .args(["--out", out.to_str().unwrap()])
        .env("TMPDIR", &dir);
    test_support::limit(&mut cmd, libc::RLIMIT_FSIZE, 100_000);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let err = test_support::error_of(&mut cmd);
    assert!(
        err.contains("--out") && err.contains("predicted.log: cannot write"),
        "{err}"
    );
    assert!(!out.exists());
    let left = left_in(&dir);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_pp_whatif_killed_while_it_writes_leaves_nothing_behind() {
    let (dir, log, out) = folder_with(
        "whatif-bounded-killed",
        &realistic_log(8, 2_000_000, 4096, 11),
    );
    let mut child = pp!()
        .args(["whatif", log.to_str().unwrap(), "--group", "0,1/2,3"])
        .args(["--out", out.to_str().unwrap()])
        .env("TMPDIR", &dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once it holds its output open: a file in `dir` other than the log.
    let fds = format!("/proc/{}/fd", child.id());
    let log_name = log.canonicalize().unwrap();
    let open = |dir: &Path| {
        std::fs::read_dir(&fds).into_iter().flatten().any(|fd| {
            std::fs::read_link(fd.unwrap().path())
                .is_ok_and(|to| to.starts_with(dir.canonicalize().unwrap()) && to != log_name)
        })
    };
    let mut seen = false;
    while child.try_wait().unwrap().is_none() {
        if open(&dir) {
            seen = true;
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.wait().unwrap();
    assert!(seen, "pp whatif ended before its output was seen open");
    let left = left_in(&dir);
    assert!(left.is_empty(), "left behind: {left:?}");
}
