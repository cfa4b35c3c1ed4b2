//! `pp import`: OTF2 traces written here with the OTF2 writer API (`otf2_writer.c`, compiled
//! with `cc -lopen-trace-format2`, driven by a script of records), imported by the `pp`
//! binary, and the log and its profile checked against hand-computed answers: one test per
//! mapped record kind (docs/otf2.md), the clock conversion, ignored records, and one-line
//! errors for a missing file, a directory and a damaged anchor file. Times are in ticks of
//! 1 ns unless a test says otherwise. Without the OTF2 library and headers each test passes
//! and says on standard error what it skipped and why.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;
use test_support::{NotBuilt, compile, one_line_error, pp, skip};

/// OTF2 region roles and paradigms (`OTF2_Definitions.h`, `OTF2_GeneralDefinitions.h`).
const FUNCTION: u8 = 1;
const WRAPPER: u8 = 2;
const PARALLEL: u8 = 5;
const CRITICAL: u8 = 12;
const IMPLICIT_BARRIER: u8 = 16;
const COLL_ONE2ALL: u8 = 23;
const COLL_ALL2ALL: u8 = 25;
const POINT2POINT: u8 = 28;
const USER: u8 = 1;
const OPENMP: u8 = 3;
const MPI: u8 = 4;
const THREAD_WAIT: u8 = 33;
const TASK: u8 = 20;
const TASK_WAIT: u8 = 22;
const PTHREAD: u8 = 7;

/// The script-driven OTF2 writer, compiled once, or why it cannot be.
fn writer() -> &'static Result<PathBuf, String> {
    static WRITER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    WRITER.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("otf2_import");
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(format!("otf2_writer-{}", std::process::id()));
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otf2_writer.c");
        let mut why = String::new();
        for lib in ["-lopen-trace-format2", "-lotf2"] {
            let built = compile(
                Command::new("cc")
                    .args(["-O1", "-Wall", "-Wno-deprecated-declarations", "-o"])
                    .arg(&exe)
                    .arg(&source)
                    .arg(lib),
            );
            match built {
                Ok(_) => return Ok(exe),
                Err(NotBuilt::NoCompiler(e)) => return Err(format!("no C compiler cc ({e})")),
                Err(failed) => why = failed.first_line().to_string(),
            }
        }
        Err(format!(
            "the OTF2 headers or library are missing ({why}); tools/system-packages.sh installs them"
        ))
    })
}

/// The writer, or `None` after saying why the test is skipped.
fn ready(test: &str) -> Option<&'static Path> {
    match writer() {
        Ok(p) => Some(p),
        Err(why) => {
            skip(test, why);
            None
        }
    }
}

/// A trace's records: the definitions' strings are numbered as they are added.
struct Script {
    lines: Vec<String>,
    strings: u32,
}

impl Script {
    /// A trace whose clock has `resolution` ticks a second and starts at `offset`.
    fn new(resolution: u64, offset: u64) -> Script {
        Script {
            lines: vec![format!("clock {resolution} {offset} 0")],
            strings: 0,
        }
    }

    fn string(&mut self, text: &str) -> u32 {
        let id = self.strings;
        self.strings += 1;
        self.lines.push(format!("string {id} {text}"));
        id
    }

    fn region(&mut self, id: u32, name: &str, role: u8, paradigm: u8) -> &mut Self {
        let s = self.string(name);
        self.lines
            .push(format!("region {id} {s} {role} {paradigm}"));
        self
    }

    /// A process (location group `id`) with these thread locations.
    fn process(&mut self, id: u32, threads: &[u64]) -> &mut Self {
        let s = self.string(&format!("rank {id}"));
        self.lines.push(format!("process {id} {s}"));
        for t in threads {
            let s = self.string(&format!("thread {t}"));
            self.lines.push(format!("thread {t} {s} {id}"));
        }
        self
    }

    /// MPI's world: rank `i` is location `locations[i]`; communicator 0 is MPI_COMM_WORLD.
    fn world(&mut self, locations: &[u64]) -> &mut Self {
        let s = self.string("MPI");
        let members: Vec<String> = locations.iter().map(u64::to_string).collect();
        self.lines
            .push(format!("group 0 {s} 4 {MPI} {}", members.join(" ")));
        let ranks: Vec<String> = (0..locations.len()).map(|r| r.to_string()).collect();
        let s = self.string("world");
        self.lines
            .push(format!("group 1 {s} 5 {MPI} {}", ranks.join(" ")));
        let s = self.string("MPI_COMM_WORLD");
        self.lines.push(format!("comm 0 {s} 1"));
        self
    }

    /// Records (one a line).
    fn events(&mut self, text: &str) -> &mut Self {
        self.lines.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(String::from),
        );
        self
    }

    /// Writes the trace into a fresh folder named after the test; its anchor file.
    fn write(&self, writer: &Path, test: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("otf2_import")
            .join(test);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("script.txt");
        std::fs::write(&script, self.lines.join("\n") + "\n").unwrap();
        let out = Command::new(writer)
            .arg(dir.join("trace"))
            .arg("traces")
            .stdin(std::fs::File::open(&script).unwrap())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "otf2_writer: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir.join("trace/traces.otf2")
    }
}

/// Regions every MPI test uses: 0 main, 1 MPI_Init, 2 MPI_Finalize.
fn mpi_script(ranks: usize) -> Script {
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .region(1, "MPI_Init", FUNCTION, MPI)
        .region(2, "MPI_Finalize", FUNCTION, MPI);
    for r in 0..ranks {
        s.process(r as u32, &[r as u64]);
    }
    let locations: Vec<u64> = (0..ranks as u64).collect();
    s.world(&locations);
    s
}

/// `main` from 0, `MPI_Init` returning at 1000 and `MPI_Finalize` at 9000 on location `loc`,
/// around `body`.
fn rank(loc: u64, body: &str) -> String {
    format!(
        "enter {loc} 0 0\nenter {loc} 0 1\nleave {loc} 1000 1\n{body}\n\
         enter {loc} 9000 2\nleave {loc} 9100 2\nleave {loc} 9200 0\n"
    )
}

/// `pp import TRACE -o LOG`: the log's text, and the command's output.
fn import(anchor: &Path) -> (String, Output) {
    let log = anchor.parent().unwrap().with_extension("log");
    let out = pp!()
        .arg("import")
        .arg(anchor)
        .arg("-o")
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pp import: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (std::fs::read_to_string(&log).unwrap(), out)
}

/// The profile of an imported log, as `pp --format json --by thread` gives it, in ns.
fn profile(anchor: &Path) -> Value {
    let log = anchor.parent().unwrap().with_extension("log");
    let out = pp!()
        .args(["--format", "json", "--by", "thread"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("rule"),
        "the imported log breaks a rule: {stderr}"
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Category `c` of thread `t` (or of the whole run for `None`) in ns, rounded.
fn ns(profile: &Value, t: Option<usize>, c: &str) -> u64 {
    let v = match t {
        Some(t) => &profile["by_thread"][t][c],
        None => &profile["categories"][c],
    };
    (v.as_f64().unwrap() * 1e9).round() as u64
}

fn has_line(log: &str, line: &str) -> bool {
    log.lines().any(|l| l == line)
}

#[test]
fn enter_and_leave_are_work_named_by_phase() {
    let test = "enter_and_leave_are_work_named_by_phase";
    let Some(writer) = ready(test) else { return };
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .region(1, "solve step", FUNCTION, USER)
        .process(0, &[0])
        .events("enter 0 100 0\nenter 0 300 1\nleave 0 700 1\nleave 0 1000 0");
    let anchor = s.write(writer, test);
    let (log, _) = import(&anchor);
    assert_eq!(
        log,
        "pplog 1 p=1\n100 0 start\n100 0 work_begin\n100 0 phase main\n300 0 phase solve_step\n\
         700 0 phase main\n1000 0 work_end\n1000 0 stop\n"
    );
    let p = profile(&anchor);
    assert_eq!(ns(&p, None, "pc"), 900);
    let by_phase = &p["by_phase"];
    assert_eq!(
        (by_phase["main"]["pc"].as_f64().unwrap() * 1e9).round(),
        500.0
    );
    assert_eq!(
        (by_phase["solve_step"]["pc"].as_f64().unwrap() * 1e9).round(),
        400.0
    );
    // The binary encoding holds the same events.
    let bin = anchor.parent().unwrap().with_extension("bin");
    let out = pp!()
        .arg("import")
        .arg(&anchor)
        .args(["--to", "binary", "-o"])
        .arg(&bin)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = pp!().arg("convert").arg(&bin).arg("-").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), log);
}

#[test]
fn a_late_sender_is_sl_on_the_receiver_and_the_transfer_cl() {
    let test = "a_late_sender_is_sl_on_the_receiver_and_the_transfer_cl";
    let Some(writer) = ready(test) else { return };
    let mut s = mpi_script(2);
    s.region(3, "MPI_Send", POINT2POINT, MPI)
        .region(4, "MPI_Recv", POINT2POINT, MPI);
    s.events(&rank(
        0,
        "enter 0 5000 3\nsend 0 5000 1 0 7 64\nleave 0 5100 3",
    ));
    s.events(&rank(
        1,
        "enter 1 2000 4\nrecv 1 5600 0 0 7 64\nleave 1 5600 4",
    ));
    let anchor = s.write(writer, test);
    // The trace is valid OTF2 to the library's own printer.
    if let Ok(out) = Command::new("otf2-print").arg(&anchor).output() {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("MPI_SEND"));
    } else {
        eprintln!("{test}: otf2-print not found, the trace is not checked by it (otf2-tools)");
    }
    let (log, _) = import(&anchor);
    for line in [
        "1000 0 start",
        "1000 0 region_begin 0 mpi",
        "5000 0 wait_begin send",
        "5000 0 send 1 7 64",
        "5100 0 wait_end send",
        "2000 1 wait_begin recv",
        "5600 1 recv 0 7 64",
        "5600 1 wait_end recv",
        "9000 1 region_end 0",
        "9000 1 stop",
    ] {
        assert!(has_line(&log, line), "no '{line}' in\n{log}");
    }
    let p = profile(&anchor);
    // Rank 1 waits 2000..5600: sl until the send began (5000), cl for the transfer.
    assert_eq!(ns(&p, Some(1), "sl"), 3000);
    assert_eq!(ns(&p, Some(1), "cl"), 600);
    assert_eq!(ns(&p, Some(1), "pc"), 1000 + 3400);
    // Rank 0's blocking send waits 100 ns (sl, docs/mpi.md).
    assert_eq!(ns(&p, Some(0), "sl"), 100);
    assert_eq!(ns(&p, Some(0), "pc"), 4000 + 3900);
    // `pp TRACE.otf2` profiles the trace directly: the same row as the imported log's.
    let row = |path: &Path| {
        let out = pp!().arg("-l").arg(path).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let direct = row(&anchor);
    assert!(direct.contains(" sl=0.000003100 "), "{direct}");
    assert_eq!(direct, row(&anchor.parent().unwrap().with_extension("log")));
}

#[test]
fn isend_and_irecv_complete_in_waits() {
    let test = "isend_and_irecv_complete_in_waits";
    let Some(writer) = ready(test) else { return };
    let mut s = mpi_script(2);
    s.region(3, "MPI_Isend", POINT2POINT, MPI)
        .region(4, "MPI_Irecv", POINT2POINT, MPI)
        .region(5, "MPI_Wait", POINT2POINT, MPI);
    s.events(&rank(
        0,
        "enter 0 3000 3\nisend 0 3000 1 0 1 100 5\nleave 0 3010 3\n\
         enter 0 4000 5\nisend_complete 0 4005 5\nleave 0 4010 5",
    ));
    s.events(&rank(
        1,
        "enter 1 1500 4\nirecv_request 1 1505 9\nleave 1 1510 4\n\
         enter 1 2000 5\nirecv 1 6000 0 0 1 100 9\nleave 1 6000 5",
    ));
    let anchor = s.write(writer, test);
    let (log, _) = import(&anchor);
    assert!(has_line(&log, "3000 0 send 1 1 100"), "{log}");
    assert!(has_line(&log, "6000 1 recv 0 1 100"), "{log}");
    // The Isend and Irecv calls do not interrupt the work.
    assert!(!log.contains("1500 1 work_end"), "{log}");
    let p = profile(&anchor);
    assert_eq!(ns(&p, Some(1), "sl"), 1000);
    assert_eq!(ns(&p, Some(1), "cl"), 3000);
    assert_eq!(ns(&p, Some(1), "pc"), 1000 + 3000);
    assert_eq!(ns(&p, Some(0), "sl"), 10);
    assert_eq!(ns(&p, Some(0), "pc"), 3000 + 4990);
}

#[test]
fn an_imbalanced_collective_is_li_until_the_last_rank_arrives() {
    let test = "an_imbalanced_collective_is_li_until_the_last_rank_arrives";
    let Some(writer) = ready(test) else { return };
    let mut s = mpi_script(2);
    s.region(3, "MPI_Allreduce", COLL_ALL2ALL, MPI);
    s.events(&rank(
        0,
        "enter 0 3000 3\ncoll_begin 0 3000\ncoll_end 0 7100 4 0 -1 8 8\nleave 0 7100 3",
    ));
    s.events(&rank(
        1,
        "enter 1 7000 3\ncoll_begin 1 7000\ncoll_end 1 7100 4 0 -1 8 8\nleave 1 7100 3",
    ));
    let anchor = s.write(writer, test);
    let (log, _) = import(&anchor);
    for line in [
        "3000 0 coll allreduce 8",
        "3000 0 wait_begin barrier allreduce",
        "7100 0 wait_end barrier allreduce",
        "7000 1 coll allreduce 8",
    ] {
        assert!(has_line(&log, line), "no '{line}' in\n{log}");
    }
    let p = profile(&anchor);
    // Rank 0 waits 3000..7100: li while rank 1 computes (to 7000), then sl.
    assert_eq!(ns(&p, Some(0), "li"), 4000);
    assert_eq!(ns(&p, Some(0), "sl"), 100);
    assert_eq!(ns(&p, Some(1), "sl"), 100);
    assert_eq!(ns(&p, None, "pc"), 2000 + 1900 + 6000 + 1900);
}

#[test]
fn a_communicator_translates_peers_and_roots_to_world_ranks() {
    let test = "a_communicator_translates_peers_and_roots_to_world_ranks";
    let Some(writer) = ready(test) else { return };
    let mut s = mpi_script(3);
    // Communicator 1: its rank 0 is world rank 2, its rank 1 world rank 0.
    let name = s.string("sub");
    s.events(&format!("group 2 {name} 5 {MPI} 2 0\ncomm 1 {name} 2"));
    s.region(3, "MPI_Send", POINT2POINT, MPI)
        .region(4, "MPI_Recv", POINT2POINT, MPI)
        .region(5, "MPI_Bcast", COLL_ONE2ALL, MPI);
    let bcast = |loc: u64| {
        format!(
            "enter {loc} 6000 5\ncoll_begin {loc} 6000\n\
             coll_end {loc} 6500 1 1 0 16 16\nleave {loc} 6500 5"
        )
    };
    s.events(&rank(
        2,
        &format!(
            "enter 2 2000 3\nsend 2 2000 1 1 3 16\nleave 2 2100 3\n{}",
            bcast(2)
        ),
    ));
    s.events(&rank(
        0,
        &format!(
            "enter 0 1500 4\nrecv 0 2500 0 1 3 16\nleave 0 2500 4\n{}",
            bcast(0)
        ),
    ));
    s.events(&rank(1, ""));
    let anchor = s.write(writer, test);
    let (log, _) = import(&anchor);
    for line in [
        "2000 2 send 0 3 16 comm=c1",
        "2500 0 recv 2 3 16 comm=c1",
        "6000 0 coll bcast 16 root=2 comm=c1",
        "6000 2 coll bcast 16 root=2 comm=c1",
    ] {
        assert!(has_line(&log, line), "no '{line}' in\n{log}");
    }
    let p = profile(&anchor);
    // The receive matched its send: sl until 2000, cl after.
    assert_eq!(ns(&p, Some(0), "sl"), 500);
    assert_eq!(ns(&p, Some(0), "cl"), 500);
}

#[test]
fn openmp_fork_join_team_barrier_and_lock() {
    let test = "openmp_fork_join_team_barrier_and_lock";
    let Some(writer) = ready(test) else { return };
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .region(1, "!$omp parallel @a.c:3", PARALLEL, OPENMP)
        .region(2, "!$omp implicit barrier @a.c:9", IMPLICIT_BARRIER, OPENMP)
        .region(3, "omp_set_lock", WRAPPER, OPENMP)
        .process(0, &[0, 1])
        .events(
            "enter 0 0 0\nthread_fork 0 1000 2\nteam_begin 0 1000 0\nenter 0 1000 1\n\
             enter 0 1500 3\nthread_acquire 0 1800 1 1\nleave 0 1800 3\nthread_release 0 2000 1 1\n\
             enter 0 3000 2\nleave 0 5000 2\nleave 0 5000 1\nteam_end 0 5000 0\n\
             thread_join 0 5000\nleave 0 6000 0\n\
             team_begin 1 1000 0\nenter 1 1000 1\nenter 1 5000 2\nleave 1 5000 2\n\
             leave 1 5000 1\nteam_end 1 5000 0",
        );
    let anchor = s.write(writer, test);
    let (log, _) = import(&anchor);
    for line in [
        "1000 0 work_end",
        "1000 0 region_begin 1 !$omp_parallel_@a.c:3",
        "1500 0 wait_begin lock omp_set_lock",
        "1800 0 wait_end lock omp_set_lock",
        "3000 0 wait_begin barrier implicit_barrier",
        "5000 0 region_end 1",
        "1000 1 start",
        "1000 1 work_begin",
        "5000 1 work_end",
    ] {
        assert!(has_line(&log, line), "no '{line}' in\n{log}");
    }
    let p = profile(&anchor);
    assert_eq!(ns(&p, Some(0), "sl"), 300, "the lock wait");
    assert_eq!(
        ns(&p, Some(0), "li"),
        2000,
        "the barrier while thread 1 works"
    );
    assert_eq!(ns(&p, Some(0), "pc"), 1000 + 500 + 1200 + 1000);
    assert_eq!(ns(&p, Some(1), "pc"), 4000);
    assert_eq!(ns(&p, Some(1), "ip"), 2000, "outside the region");
}

/// Score-P's pthread adapter: the master creates two threads (`ThreadCreate`), which work
/// from `ThreadBegin` to `ThreadEnd` and take a mutex, and joins them in `pthread_join`
/// (`ThreadWait`). Before these records were mapped the workers never worked (their 7 µs of
/// work were ip) and the master's joins were pc.
#[test]
fn pthreads_created_and_joined_are_a_region_the_joins_wait_in() {
    let test = "pthreads_created_and_joined_are_a_region_the_joins_wait_in";
    let Some(writer) = ready(test) else { return };
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .region(1, "pthread_join", THREAD_WAIT, PTHREAD)
        .region(2, "pthread_mutex_lock", WRAPPER, PTHREAD)
        .region(3, "worker", FUNCTION, USER)
        .process(0, &[0, 1, 2])
        .events(
            "enter 0 0 0\nthread_create 0 1000 0 1\nthread_create 0 1100 0 2\n\
             enter 0 2000 1\nthread_wait 0 4000 0 1\nleave 0 4000 1\n\
             enter 0 4000 1\nthread_wait 0 8000 0 2\nleave 0 8000 1\nleave 0 9000 0\n\
             thread_begin 1 1000 0 1\nenter 1 1000 3\nenter 1 3000 2\n\
             thread_acquire 1 3000 5 1\nleave 1 3000 2\nthread_release 1 3500 5 1\n\
             leave 1 4000 3\nthread_end 1 4000 0 1\n\
             thread_begin 2 1100 0 2\nenter 2 1100 3\nenter 2 3200 2\n\
             thread_acquire 2 3500 5 2\nleave 2 3500 2\nthread_release 2 3700 5 2\n\
             leave 2 8000 3\nthread_end 2 8000 0 2",
        );
    let anchor = s.write(writer, test);
    let (log, out) = import(&anchor);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Thread"), "{stderr}");
    for line in [
        "1000 0 region_begin 1 pthreads",
        "1000 1 work_begin",
        "2000 0 wait_begin barrier join",
        "3200 2 wait_begin lock pthread_mutex_lock",
        "3500 2 wait_end lock pthread_mutex_lock",
        "8000 0 region_end 1",
    ] {
        assert!(has_line(&log, line), "no '{line}' in\n{log}");
    }
    let p = profile(&anchor);
    // The master: works 0..2000 and 8000..9000; joins 2000..8000 while a worker works.
    assert_eq!(ns(&p, Some(0), "pc"), 3000);
    assert_eq!(ns(&p, Some(0), "li"), 6000);
    // Worker 1 works 1000..4000, then waits for the others in the region: li until 8000,
    // ip outside the region before it opened and after it ended.
    assert_eq!(ns(&p, Some(1), "pc"), 3000);
    assert_eq!(ns(&p, Some(1), "li"), 4000);
    assert_eq!(ns(&p, Some(1), "ip"), 2000);
    // Worker 2 waits 300 ns for the mutex worker 1 holds.
    assert_eq!(ns(&p, Some(2), "sl"), 300);
    assert_eq!(ns(&p, Some(2), "pc"), 8000 - 1100 - 300);
}

/// OpenMP tasks as Score-P records them: a task's body (role `TASK`) that a thread runs while
/// it waits at a barrier is work, and the wait goes on after it; a `taskwait` (role
/// `TASK_WAIT`) is a wait. Before, both threads' tasks run inside the implicit barrier were
/// counted as waiting (li and sl), and the taskwait as work.
#[test]
fn tasks_run_in_a_barrier_are_work_and_a_taskwait_waits() {
    let test = "tasks_run_in_a_barrier_are_work_and_a_taskwait_waits";
    let Some(writer) = ready(test) else { return };
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .region(1, "!$omp parallel @t.c:3", PARALLEL, OPENMP)
        .region(2, "!$omp implicit barrier @t.c:9", IMPLICIT_BARRIER, OPENMP)
        .region(3, "!$omp task @t.c:5", TASK, OPENMP)
        .region(4, "!$omp taskwait @t.c:7", TASK_WAIT, OPENMP)
        .process(0, &[0, 1])
        .events(
            "enter 0 0 0\nthread_fork 0 1000 2\nteam_begin 0 1000 0\nenter 0 1000 1\n\
             enter 0 1800 4\nleave 0 2000 4\nenter 0 2000 2\nenter 0 2000 3\nleave 0 5000 3\n\
             leave 0 6000 2\nleave 0 6000 1\nteam_end 0 6000 0\nthread_join 0 6000\n\
             leave 0 7000 0\n\
             team_begin 1 1000 0\nenter 1 1000 1\nenter 1 1500 2\nenter 1 1500 3\n\
             leave 1 6000 3\nleave 1 6000 2\nleave 1 6000 1\nteam_end 1 6000 0",
        );
    let anchor = s.write(writer, test);
    let (log, _) = import(&anchor);
    for line in [
        "1800 0 wait_begin barrier taskwait",
        "2000 0 wait_end barrier taskwait",
        "2000 0 wait_begin barrier implicit_barrier",
        "2000 0 wait_end barrier implicit_barrier",
        "2000 0 phase !$omp_task_@t.c:5",
        "5000 0 wait_begin barrier implicit_barrier",
        "6000 0 wait_end barrier implicit_barrier",
    ] {
        assert!(has_line(&log, line), "no '{line}' in\n{log}");
    }
    let p = profile(&anchor);
    // Thread 0: works 0..1800, its task 2000..5000 and 6000..7000; waits in the taskwait and
    // at the barrier after its task while thread 1 runs its own.
    assert_eq!(ns(&p, Some(0), "pc"), 1800 + 3000 + 1000);
    assert_eq!(ns(&p, Some(0), "li"), 200 + 1000);
    // Thread 1: works 1000..1500 and its task 1500..6000; idle outside the region before and
    // after it.
    assert_eq!(ns(&p, Some(1), "pc"), 500 + 4500);
    assert_eq!(ns(&p, Some(1), "li"), 0);
    assert_eq!(ns(&p, Some(1), "ip"), 2000);
}

#[test]
fn opari2_fork_join_and_critical() {
    let test = "opari2_fork_join_and_critical";
    let Some(writer) = ready(test) else { return };
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .region(1, "!$omp parallel @b.c:5", PARALLEL, OPENMP)
        .region(2, "!$omp critical @b.c:7", CRITICAL, OPENMP)
        .process(0, &[0, 1])
        .events(
            "enter 0 0 0\nomp_fork 0 1000 2\nenter 0 1000 1\nenter 0 2000 2\n\
             omp_acquire 0 2500 1 1\nomp_release 0 2800 1 1\nleave 0 2800 2\nleave 0 4000 1\n\
             omp_join 0 4000\nleave 0 5000 0\n\
             enter 1 1000 1\nleave 1 4000 1",
        );
    let anchor = s.write(writer, test);
    let (log, _) = import(&anchor);
    for line in [
        "1000 0 region_begin 1 !$omp_parallel_@b.c:5",
        "1000 0 phase !$omp_parallel_@b.c:5",
        "2000 0 wait_begin lock critical",
        "4000 0 phase main",
        "2500 0 wait_end lock critical",
        "4000 0 region_end 1",
        "1000 1 work_begin",
        "4000 1 work_end",
    ] {
        assert!(has_line(&log, line), "no '{line}' in\n{log}");
    }
    let p = profile(&anchor);
    assert_eq!(ns(&p, Some(0), "sl"), 500);
    assert_eq!(ns(&p, Some(0), "pc"), 1000 + 1000 + 1500 + 1000);
    assert_eq!(ns(&p, Some(1), "pc"), 3000);
    assert_eq!(ns(&p, Some(1), "ip"), 2000);
}

#[test]
fn ticks_become_ns_by_the_clock_resolution_and_offset() {
    let test = "ticks_become_ns_by_the_clock_resolution_and_offset";
    let Some(writer) = ready(test) else { return };
    // 3 GHz from tick 10: tick 10 + 3000 is 1000 ns, 10 + 4500 is 1500 ns, 10 + 7501 is
    // 2500.33 ns (2500).
    let mut s = Script::new(3_000_000_000, 10);
    s.region(0, "main", FUNCTION, USER)
        .region(1, "f", FUNCTION, USER)
        .process(0, &[0])
        .events("enter 0 3010 0\nenter 0 4510 1\nleave 0 7511 1\nleave 0 9010 0");
    let anchor = s.write(writer, test);
    let (log, _) = import(&anchor);
    assert_eq!(
        log,
        "pplog 1 p=1\n1000 0 start\n1000 0 work_begin\n1000 0 phase main\n1500 0 phase f\n\
         2500 0 phase main\n3000 0 work_end\n3000 0 stop\n"
    );
}

#[test]
fn records_that_are_not_mapped_are_counted_on_stderr() {
    let test = "records_that_are_not_mapped_are_counted_on_stderr";
    let Some(writer) = ready(test) else { return };
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .process(0, &[0])
        .events("enter 0 0 0\nrma_put 0 10 0 0 8 1\nrma_put 0 20 0 0 8 2\nleave 0 100 0");
    let anchor = s.write(writer, test);
    let (log, out) = import(&anchor);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l == "pp import: ignored 2 RmaPut records"),
        "{stderr}"
    );
    assert!(has_line(&log, "100 0 stop"), "{log}");
}

/// `pp import` on `path` fails with one line naming it and saying `what`.
fn fails(path: &Path, what: &str) {
    let out = pp!()
        .arg("import")
        .arg(path)
        .arg("-o")
        .arg(path.with_extension("never.log"))
        .output()
        .unwrap();
    one_line_error(&out, None, &[&path.display().to_string(), what]);
    assert!(!path.with_extension("never.log").exists());
}

#[test]
fn a_missing_file_a_directory_and_damaged_traces_are_one_line_errors() {
    let test = "a_missing_file_a_directory_and_damaged_traces_are_one_line_errors";
    let Some(writer) = ready(test) else { return };
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .process(0, &[0])
        .events("enter 0 0 0\nleave 0 100 0");
    let anchor = s.write(writer, test);
    let dir = anchor.parent().unwrap();
    fails(&dir.join("nothing.otf2"), "no such file");
    fails(dir, "a directory, not an OTF2 anchor file");
    // A FIFO (or a device) is refused at once rather than waited on.
    for (target, _) in test_support::hostile_targets(dir, ".otf2") {
        if !target.is_dir() {
            fails(&target, "not a regular file");
        }
    }
    let damaged = dir.join("damaged.otf2");
    let mut bytes = std::fs::read(&anchor).unwrap();
    for b in bytes.iter_mut().skip(8).take(64) {
        *b ^= 0x5a;
    }
    std::fs::write(&damaged, bytes).unwrap();
    fails(&damaged, "not a readable OTF2 anchor file");
    let text = dir.join("text.otf2");
    std::fs::write(&text, "pplog 1 p=1\n").unwrap();
    fails(&text, "not a readable OTF2 anchor file");
    // The output may not be the anchor file itself.
    let before = std::fs::read(&anchor).unwrap();
    let out = pp!()
        .arg("import")
        .arg(&anchor)
        .arg("-o")
        .arg(&anchor)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to overwrite it"));
    assert_eq!(std::fs::read(&anchor).unwrap(), before);
    // Nor a file that is there, without --force.
    let mine = dir.join("mine.log");
    std::fs::write(&mine, "mine").unwrap();
    let out = pp!()
        .arg("import")
        .arg(&anchor)
        .arg("-o")
        .arg(&mine)
        .output()
        .unwrap();
    let e = one_line_error(&out, Some(1), &[&mine.display().to_string()]);
    assert!(e.contains("exists; not replaced"), "{e}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
    let out = pp!()
        .arg("import")
        .arg(&anchor)
        .args(["--force", "-o"])
        .arg(&mine)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // An anchor that declares 2³¹ properties: OTF2 3.0 would write past its allocation.
    let mut bytes = std::fs::read(&anchor).unwrap();
    let mut at = 2 + 5 + 39;
    for _ in 0..3 {
        at += bytes[at..].iter().position(|&b| b == 0).unwrap() + 1;
    }
    bytes[at..at + 4].copy_from_slice(&(1u32 << 31).to_le_bytes());
    let properties = dir.join("properties.otf2");
    std::fs::write(&properties, bytes).unwrap();
    fails(
        &properties,
        "a damaged anchor file: it declares 2147483648 properties",
    );
    // A trace whose event file was cut in half.
    let evt = dir.join("traces/0.evt");
    let bytes = std::fs::read(&evt).unwrap();
    std::fs::write(&evt, &bytes[..bytes.len() / 2]).unwrap();
    fails(&anchor, "events");
}

#[test]
fn mpi_with_openmp_threads_numbers_every_thread_and_messages_go_to_the_ranks_first() {
    let test = "mpi_with_openmp_threads_numbers_every_thread_and_messages_go_to_the_ranks_first";
    let Some(writer) = ready(test) else { return };
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .region(1, "MPI_Init_thread", FUNCTION, MPI)
        .region(2, "MPI_Finalize", FUNCTION, MPI)
        .region(3, "MPI_Send", POINT2POINT, MPI)
        .region(4, "MPI_Recv", POINT2POINT, MPI)
        .region(5, "!$omp parallel @h.c:1", PARALLEL, OPENMP)
        // Rank 0 is locations 0 and 1, rank 1 locations 2 and 3: threads 0..3.
        .process(0, &[0, 1])
        .process(1, &[2, 3])
        .world(&[0, 2]);
    s.events(&rank(
        0,
        "enter 0 5000 3\nsend 0 5000 1 0 7 64\nleave 0 5100 3",
    ));
    s.events(&rank(
        2,
        "thread_fork 2 2000 2\nteam_begin 2 2000 0\nenter 2 2000 5\nleave 2 3000 5\n\
         team_end 2 3000 0\nthread_join 2 3000\n\
         enter 2 4000 4\nrecv 2 5600 0 0 7 64\nleave 2 5600 4",
    ));
    s.events("team_begin 3 2000 0\nenter 3 2000 5\nleave 3 3000 5\nteam_end 3 3000 0");
    let anchor = s.write(writer, test);
    let (log, _) = import(&anchor);
    assert!(log.starts_with("pplog 1 p=4\n"), "{log}");
    for line in [
        "1000 0 region_begin 0 mpi team=0,2",
        "1000 2 region_begin 0 mpi team=0,2",
        "5000 0 send 2 7 64",
        "5600 2 recv 0 7 64",
        "2000 2 region_begin 1 !$omp_parallel_@h.c:1 team=2,3",
        "3000 2 region_end 1",
        "2000 3 start",
    ] {
        assert!(has_line(&log, line), "no '{line}' in\n{log}");
    }
    let p = profile(&anchor);
    assert_eq!(ns(&p, Some(2), "sl"), 1000);
    assert_eq!(ns(&p, Some(2), "cl"), 600);
    assert_eq!(ns(&p, Some(3), "pc"), 1000);
    assert_eq!(ns(&p, Some(1), "pc"), 0, "a thread without records is idle");
}

#[test]
fn a_log_written_as_the_trace_is_read_is_the_log_of_every_event_sorted_first() {
    // Thread 0 enters `main` and is silent until the end, which holds back what can be written
    // while thread 1 (all along) and thread 2 (from the middle on) record 2·10⁵ pairs: the
    // events beyond the buffer go through the external sort. Standard output gets every event
    // sorted before any is written: both are the same log, on one thread or two.
    let test = "a_log_written_as_the_trace_is_read_is_the_log_of_every_event_sorted_first";
    let Some(writer) = ready(test) else { return };
    let pairs = 100_000u64;
    let end = 20 * pairs + 20;
    let half = 10 * pairs;
    let mut s = Script::new(1_000_000_000, 0);
    s.region(0, "main", FUNCTION, USER)
        .region(1, "step", FUNCTION, USER)
        .process(0, &[0, 1, 2])
        .events(&format!(
            "enter 0 0 0\nenter 0 5 1\nleave 0 {end} 1\nleave 0 {end} 0\n\
             enter 1 0 0\npairs 1 10 10 {pairs} 1\nleave 1 {end} 0\n\
             enter 2 {half} 0\npairs 2 {} 10 {} 1\nleave 2 {end} 0",
            half + 10,
            pairs / 2
        ));
    let anchor = s.write(writer, test);
    let sorted = pp!()
        .arg("import")
        .arg(&anchor)
        .args(["-o", "-"])
        .output()
        .unwrap();
    assert!(sorted.status.success());
    assert!(sorted.stdout.len() > 2_000_000);
    for threads in ["1", "2"] {
        let log = anchor
            .parent()
            .unwrap()
            .with_extension(format!("{threads}.log"));
        let out = pp!()
            .arg("import")
            .arg(&anchor)
            .arg("-o")
            .arg(&log)
            .env("PP_THREADS", threads)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stderr, sorted.stderr);
        assert!(
            std::fs::read(&log).unwrap() == sorted.stdout,
            "PP_THREADS={threads}: the log differs from the sorted one"
        );
    }
}
