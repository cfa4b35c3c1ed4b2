//! The OMPT tool on real OpenMP programs: each test compiles a small C program with
//! `clang -fopenmp` (LLVM's libomp), runs it with the tool loaded as `pp run` loads it, and
//! reads the log with `pp`'s own reader and attribution. Without clang or libomp, or before
//! the tool library is built, the tests pass and say what they skipped.
//!
//! Timing on a shared 2-core machine is not fixed, so the tests check structure (names,
//! threads, nesting, warnings) and inequalities that hold under any load: wall time is at
//! least CPU time, so a thread idle while another burns `x` ms of CPU is idle at least `x` ms.

use std::path::{Path, PathBuf};
use std::process::Command;

use pp::event::{EventKind, WaitKind};
use pp::log::LogReader;
use pp::profile::{Category, Profile, profile_log};

use test_support::{NotBuilt, compile, scratch, skip};

/// The tool library cargo built beside this test (`target/<profile>/deps/`).
fn tool() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    [deps.join("libpp_ompt.so"), deps.join("../libpp_ompt.so")]
        .into_iter()
        .find(|p| p.exists())
}

/// Compiles `src` with `clang -O2 -fopenmp` into `dir`; `None` (and a line saying why) when
/// the tool, clang or libomp is missing.
fn build(test: &str, dir: &Path, src: &str) -> Option<(PathBuf, PathBuf)> {
    let Some(tool) = tool() else {
        skip(
            test,
            "libpp_ompt.so is not built beside the test (cargo test --workspace builds it)",
        );
        return None;
    };
    let c = dir.join("prog.c");
    std::fs::write(&c, format!("{PRELUDE}\n{src}")).unwrap();
    let exe = dir.join("prog");
    let built = compile(
        Command::new("clang")
            // As docs/openmp.md advises, so that each region is named after its function.
            .args(["-O2", "-fopenmp", "-fno-optimize-sibling-calls", "-I"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("include"))
            .arg("-o")
            .arg(&exe)
            .arg(&c),
    );
    match built {
        Ok(_) => Some((tool, exe)),
        Err(NotBuilt::NoCompiler(e)) => {
            skip(
                test,
                format!("no clang ({e}; tools/system-packages.sh installs it)"),
            );
            None
        }
        Err(failed) => {
            skip(
                test,
                format!(
                    "clang -fopenmp failed (libomp-dev missing?; tools/system-packages.sh installs it): {}",
                    failed.first_line()
                ),
            );
            None
        }
    }
}

/// Busy work of a given CPU time, and a region opener the compiler keeps as a function.
const PRELUDE: &str = r#"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double cpu_ms(void) {
    struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static volatile double sink;
static void burn(double ms) {
    double end = cpu_ms() + ms, x = 0;
    while (cpu_ms() < end) for (int i = 0; i < 1000; i++) x += i * 1e-9;
    sink = x;
}
"#;

struct Run {
    profile: Profile,
    events: Vec<pp::event::Event>,
    /// Names of the regions begun, in order.
    names: Vec<String>,
    stderr: String,
}

impl Run {
    fn category(&self, c: Category) -> f64 {
        self.profile.totals.get(c) as f64 / 1e6
    }

    fn region(&self, name: &str) -> Option<&pp::profile::Totals> {
        self.profile
            .by_region
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t)
    }

    fn waits(&self, kind: WaitKind) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::WaitBegin { kind: k, .. } if k == kind))
            .count()
    }

    fn starts(&self, thread: u32) -> usize {
        self.events
            .iter()
            .filter(|e| e.thread == thread && e.kind == EventKind::Start)
            .count()
    }
}

/// Runs `exe` with the tool as `pp run` does (preloaded and named in `OMP_TOOL_LIBRARIES`),
/// with libomp's default waits.
fn run(tool: &Path, exe: &Path, dir: &Path, threads: u32, params: &str) -> Run {
    run_with(tool, exe, dir, threads, params, &[])
}

/// [`run`] with more environment variables (libomp's defaults apart from these).
fn run_with(
    tool: &Path,
    exe: &Path,
    dir: &Path,
    threads: u32,
    params: &str,
    env: &[(&str, &str)],
) -> Run {
    let log = dir.join("run.log");
    let out = Command::new(exe)
        .env_remove("KMP_BLOCKTIME")
        .env_remove("OMP_WAIT_POLICY")
        .envs(env.iter().copied())
        .env("OMP_NUM_THREADS", threads.to_string())
        .env("OMP_TOOL_LIBRARIES", tool)
        .env("LD_PRELOAD", tool)
        .env("PP_LOG", &log)
        .env("PP_PARAMS", params)
        .env("PP_RUN_DELAY", "0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let mut reader = LogReader::open(&log).unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let mut events = Vec::new();
    let mut names = Vec::new();
    reader
        .for_each_event(|e, symbols| {
            if let EventKind::RegionBegin { name, .. } = e.kind {
                names.push(symbols.name(name).to_owned());
            }
            events.push(*e);
        })
        .unwrap();
    let mut reader = LogReader::open(&log).unwrap();
    let profiled = profile_log(&mut reader, None, None);
    assert!(profiled.finished, "the log has its end marker");
    let profile = profiled.whole("run.log").unwrap();
    Run {
        profile,
        events,
        names,
        stderr,
    }
}

#[test]
fn records_serial_work_regions_barriers_and_critical_sections() {
    let dir = scratch("shape");
    let Some((tool, exe)) = build(
        "records_serial_work_regions_barriers_and_critical_sections",
        &dir,
        r#"
__attribute__((noinline)) static void imbalance(void) {
    #pragma omp parallel
    burn(40.0 * (omp_get_thread_num() + 1));
}
__attribute__((noinline)) static void contend(void) {
    #pragma omp parallel
    {
        #pragma omp critical
        burn(30);
    }
}
int main(void) { burn(60); imbalance(); burn(20); contend(); burn(20); return 0; }
"#,
    ) else {
        return;
    };
    let r = run(&tool, &exe, &dir, 2, "impl=shape n=3");
    let p = &r.profile;
    assert_eq!(p.header.p, 2);
    assert_eq!(
        p.header.params,
        [
            ("impl".into(), "shape".into()),
            ("n".into(), "3".into()),
            // libomp's default blocktime (docs/openmp.md#the-runtimes-waits).
            ("omp_blocktime_ms".into(), "200".into())
        ]
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(p.totals.sum(), 2 * p.wall_ns() as u128);
    for t in 0..2 {
        assert_eq!(r.starts(t), 1, "thread {t} starts once");
    }
    // The regions are named after the functions that open them.
    assert!(r.region("imbalance").is_some(), "{:?}", r.names);
    assert!(r.region("contend").is_some(), "{:?}", r.names);
    // Both threads wait at the implicit barriers; one waits for the critical section.
    assert!(r.waits(WaitKind::Barrier) >= 4);
    assert!(r.waits(WaitKind::Lock) >= 2);
    // Thread 1 is idle through 100 ms of serial CPU work: ip, and at least that much.
    assert!(
        r.category(Category::Ip) >= 100.0,
        "ip {}",
        r.category(Category::Ip)
    );
    // Work covers at least the 100 + 120 + 60 ms of CPU burned.
    let worked = r.category(Category::Pc) + r.category(Category::Rc);
    assert!(worked >= 280.0 * 0.99, "pc + rc {worked}");
    // A thread waits for the critical section (how long depends on when it arrives): sl in
    // `contend`, which run-queue delay cannot take (PP_RUN_DELAY=0).
    let contend = r.region("contend").unwrap();
    assert!(contend.get(Category::Sl) > 0);
    // One of the two waits in `imbalance` while the other burns: li there.
    let imbalance = r.region("imbalance").unwrap();
    assert!(imbalance.get(Category::Li) > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_header_says_how_long_the_runtimes_waits_poll() {
    let dir = scratch("blocktime");
    let Some((tool, exe)) = build(
        "the_header_says_how_long_the_runtimes_waits_poll",
        &dir,
        r#"
int main(void) {
    #pragma omp parallel
    burn(1);
    return 0;
}
"#,
    ) else {
        return;
    };
    let blocktime = |env: &[(&str, &str)], params: &str| {
        let r = run_with(&tool, &exe, &dir, 2, params, env);
        r.profile
            .header
            .params
            .iter()
            .find(|(k, _)| k == "omp_blocktime_ms")
            .map(|(_, v)| v.clone())
    };
    assert_eq!(blocktime(&[], "").as_deref(), Some("200"));
    assert_eq!(
        blocktime(&[("KMP_BLOCKTIME", "5")], "").as_deref(),
        Some("5")
    );
    let passive = [("OMP_WAIT_POLICY", "passive")];
    assert_eq!(blocktime(&passive, "").as_deref(), Some("0"));
    let infinite = [("KMP_BLOCKTIME", "infinite")];
    assert_eq!(blocktime(&infinite, "").as_deref(), Some("2147483647"));
    // A value the user gave in PP_PARAMS stands (the header names no key twice).
    assert_eq!(blocktime(&[], "omp_blocktime_ms=7").as_deref(), Some("7"));
}

#[test]
fn explicit_tasks_run_in_a_barrier_are_work() {
    let dir = scratch("tasks");
    let Some((tool, exe)) = build(
        "explicit_tasks_run_in_a_barrier_are_work",
        &dir,
        r#"
__attribute__((noinline)) static void tasks(void) {
    #pragma omp parallel
    {
        #pragma omp single nowait
        for (int i = 0; i < 16; i++) {
            #pragma omp task
            burn(3);
        }
        #pragma omp taskwait
    }
}
int main(void) { tasks(); return 0; }
"#,
    ) else {
        return;
    };
    let r = run(&tool, &exe, &dir, 2, "");
    // Waits end while a task runs inside them and begin again after: the nesting stays
    // valid (no warning) and the tasks' 48 ms of CPU are work.
    assert!(r.profile.warnings.is_empty(), "{:?}", r.profile.warnings);
    let worked = r.category(Category::Pc) + r.category(Category::Rc);
    assert!(worked >= 48.0 * 0.99, "pc + rc {worked}");
    assert!(r.region("tasks").is_some(), "{:?}", r.names);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nested_teams_and_teams_larger_than_p_are_reported_not_recorded() {
    let dir = scratch("nested");
    let Some((tool, exe)) = build(
        "nested_teams_and_teams_larger_than_p_are_reported_not_recorded",
        &dir,
        r#"
__attribute__((noinline)) static void inner(void) {
    #pragma omp parallel num_threads(2)
    burn(5);
}
__attribute__((noinline)) static void outer(void) {
    #pragma omp parallel
    inner();
}
__attribute__((noinline)) static void wide(void) {
    #pragma omp parallel num_threads(4)
    burn(5);
}
int main(void) { omp_set_max_active_levels(2); outer(); wide(); return 0; }
"#,
    ) else {
        return;
    };
    let r = run(&tool, &exe, &dir, 2, "");
    assert_eq!(r.profile.header.p, 2);
    assert!(r.profile.warnings.is_empty(), "{:?}", r.profile.warnings);
    assert!(r.stderr.contains("beyond p = 2"), "{}", r.stderr);
    assert!(r.stderr.contains("nested parallel regions"), "{}", r.stderr);
    // Nested regions are not regions of the log; the outermost ones are.
    assert!(r.region("outer").is_some() && r.region("wide").is_some());
    assert!(r.region("inner").is_none(), "{:?}", r.names);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_program_without_parallel_regions_is_one_processor_of_serial_work() {
    let dir = scratch("serial");
    let Some((tool, exe)) = build(
        "a_program_without_parallel_regions_is_one_processor_of_serial_work",
        &dir,
        r#"int main(void) { burn(30); printf("%d\n", omp_get_max_threads()); burn(30); return 0; }"#,
    ) else {
        return;
    };
    let r = run(&tool, &exe, &dir, 2, "");
    assert_eq!(r.profile.header.p, 1);
    assert!(r.profile.warnings.is_empty(), "{:?}", r.profile.warnings);
    // Time 0 is the program's start (the tool is preloaded), so both bursts are work.
    let worked = r.category(Category::Pc) + r.category(Category::Rc);
    assert!(worked >= 60.0 * 0.99, "pc + rc {worked}");
    // Only the instants between the work's end and the thread's stop are idle.
    assert!(
        r.category(Category::Ip) < 1.0,
        "ip {}",
        r.category(Category::Ip)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn data_movement_marked_through_omp_control_tool_is_communication() {
    let dir = scratch("comm");
    let Some((tool, exe)) = build(
        "data_movement_marked_through_omp_control_tool_is_communication",
        &dir,
        r#"
#include "pp_ompt.h"
#include <string.h>
__attribute__((noinline)) static void copy(char *to, const char *from, size_t n) {
    #pragma omp parallel
    for (int k = 0; k < 8; k++) {
        pp_comm_begin(n);
        memcpy(to, from, n);
        pp_comm_end(n);
    }
}
int main(void) {
    size_t n = 1 << 22;
    char *a = malloc(n), *b = malloc(n);
    memset(a, 1, n);
    copy(b, a, n);
    /* Without a pointer the byte count is 0; an unknown command is ignored, not an error. */
    int ok = omp_control_tool(PP_OMPT_COMM_BEGIN, 0, 0) == 0
          && omp_control_tool(PP_OMPT_COMM_END, 0, 0) == 0
          && omp_control_tool(99, 0, 0) == 1;
    return ok && b[7] == 1 ? 0 : 1;
}
"#,
    ) else {
        return;
    };
    let r = run(&tool, &exe, &dir, 2, "");
    assert!(r.profile.warnings.is_empty(), "{:?}", r.profile.warnings);
    let comms: Vec<u64> = r
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::CommBegin { bytes } => Some(bytes),
            _ => None,
        })
        .collect();
    assert_eq!(comms.len(), 2 * 8 + 1, "{comms:?}");
    assert_eq!(comms.iter().filter(|&&b| b == 1 << 22).count(), 16);
    assert!(r.category(Category::Cl) > 0.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_the_tool_the_marks_do_nothing() {
    let dir = scratch("notool");
    let Some((_, exe)) = build(
        "without_the_tool_the_marks_do_nothing",
        &dir,
        r#"
#include "pp_ompt.h"
int main(void) {
    #pragma omp parallel
    pp_comm_begin(8);
    return omp_control_tool(PP_OMPT_COMM_END, 0, 0) == omp_control_tool_notool ? 0 : 1;
}
"#,
    ) else {
        return;
    };
    let status = Command::new(&exe)
        .env_remove("OMP_TOOL_LIBRARIES")
        .env("PP_LOG", dir.join("none.log"))
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!dir.join("none.log").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_recorded_thread_lent_to_a_nested_team_works_there() {
    let dir = scratch("lent");
    let Some((tool, exe)) = build(
        "a_recorded_thread_lent_to_a_nested_team_works_there",
        &dir,
        r#"
__attribute__((noinline)) static void both(void) {
    #pragma omp parallel
    burn(5);
}
__attribute__((noinline)) static void lone(void) {
    /* A team of one whose nested team of two takes thread 1 from libomp's pool (idle, outside
       every region) when libomp reuses it. */
    #pragma omp parallel num_threads(1)
    {
        #pragma omp parallel num_threads(2)
        burn(20);
    }
}
int main(void) { omp_set_max_active_levels(2); both(); lone(); return 0; }
"#,
    ) else {
        return;
    };
    let r = run(&tool, &exe, &dir, 2, "");
    // Its work in the nested team is begun and ended like any (no unmatched end).
    assert!(r.profile.warnings.is_empty(), "{:?}", r.profile.warnings);
    let worked = r.category(Category::Pc) + r.category(Category::Rc);
    assert!(worked >= 30.0 * 0.99, "pc + rc {worked}");
    let _ = std::fs::remove_dir_all(&dir);
}
