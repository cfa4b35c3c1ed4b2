//! `pp import` throughput (issue 37 item 2): writes an OTF2 trace of 4 threads × N
//! `Enter`/`Leave` pairs of a user region with `tests/otf2_writer.c` (`PP_IMPORT_BENCH_RECORDS`
//! records, default 10⁷), then measures, `PP_IMPORT_BENCH_ROUNDS` times each (default 3,
//! alternating; the best is printed):
//! - the I/O floor: reading the trace's files alone;
//! - `pp import TRACE -o LOG --to binary --force` with `PP_THREADS=1` and `PP_THREADS=2`
//!   (the sorted events read back on a second thread while the log is written, docs/otf2.md):
//!   wall and CPU time of the child (`wait4`) and its peak resident set;
//! - `otf2-print TRACE > /dev/null`, when it is installed, on the same trace.
//!
//! Needs a C compiler and the OTF2 library (`tools/system-packages.sh`); says so and does
//! nothing without them. Run: `cargo bench -p pp --bench import`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use test_support::setting;

/// Wall and CPU seconds (user + system) of `cmd`, which must succeed, and its peak resident
/// set (KiB), from `wait4` of that child alone (which reaps it: clippy cannot see that).
#[allow(clippy::zombie_processes)]
fn timed(cmd: &mut Command) -> (f64, f64, i64) {
    let start = Instant::now();
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run");
    let mut status = 0;
    // SAFETY: wait4 fills the status and the struct it is given, for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let wall = start.elapsed().as_secs_f64();
    assert!(
        pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed"
    );
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (wall, s(usage.ru_utime) + s(usage.ru_stime), usage.ru_maxrss)
}

/// The writer, compiled into `dir`, or why not.
fn writer(dir: &Path) -> Result<PathBuf, String> {
    let exe = dir.join("otf2_writer");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otf2_writer.c");
    let mut why = String::new();
    for lib in ["-lopen-trace-format2", "-lotf2"] {
        let out = Command::new("cc")
            .args(["-O1", "-Wno-deprecated-declarations", "-o"])
            .arg(&exe)
            .arg(&source)
            .arg(lib)
            .output()
            .map_err(|e| format!("no C compiler cc ({e})"))?;
        if out.status.success() {
            return Ok(exe);
        }
        why = String::from_utf8_lossy(&out.stderr)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
    }
    Err(format!("the OTF2 library is missing ({why})"))
}

fn main() {
    let records: u64 = setting("PP_IMPORT_BENCH_RECORDS", 10_000_000);
    let rounds: usize = setting("PP_IMPORT_BENCH_ROUNDS", 3).max(1);
    let dir = std::env::temp_dir().join(format!("pp-import-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let writer = match writer(&dir) {
        Ok(w) => w,
        Err(why) => {
            println!("import bench skipped: {why}");
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
    };
    // 4 threads of one process, each `main` around N pairs of it: 2 + 2N records a thread.
    let threads = 4u64;
    let pairs = (records / threads).saturating_sub(2) / 2;
    let mut script = String::from("clock 1000000000 0 0\nstring 0 main\nregion 0 0 1 1\n");
    script.push_str("string 1 rank_0\nprocess 0 1\n");
    for t in 0..threads {
        script.push_str(&format!(
            "string {} thread_{t}\nthread {t} {} 0\n",
            t + 2,
            t + 2
        ));
    }
    for t in 0..threads {
        let end = 20 * pairs + 20;
        script.push_str(&format!(
            "enter {t} 0 0\npairs {t} 10 10 {pairs} 0\nleave {t} {end} 0\n"
        ));
    }
    let start = Instant::now();
    let mut child = Command::new(&writer)
        .arg(dir.join("trace"))
        .arg("traces")
        .stdin(Stdio::piped())
        .spawn()
        .expect("run the writer");
    std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), script.as_bytes())
        .expect("the script");
    drop(child.stdin.take());
    assert!(child.wait().expect("the writer").success());
    let trace = dir.join("trace/traces.otf2");
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("trace/traces"))
        .expect("the event files")
        .map(|e| e.expect("an entry").path())
        .collect();
    let written = threads * (2 + 2 * pairs);
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    println!(
        "OTF2 trace: {threads} threads, {written} records, {bytes} bytes of events (written in {:.2} s)",
        start.elapsed().as_secs_f64()
    );

    let mut floor = f64::INFINITY;
    let mut import = [(f64::INFINITY, f64::INFINITY, 0i64); 2];
    let mut print = (f64::INFINITY, f64::INFINITY);
    let has_print = Command::new("otf2-print")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    let log = dir.join("bench.log");
    for _ in 0..rounds {
        let start = Instant::now();
        let mut buf = vec![0u8; 1 << 20];
        for f in &files {
            let mut file = std::fs::File::open(f).expect("an event file");
            while file.read(&mut buf).expect("read") > 0 {}
        }
        floor = floor.min(start.elapsed().as_secs_f64());
        for workers in [1usize, 2] {
            let r = timed(
                Command::new(env!("CARGO_BIN_EXE_pp"))
                    .arg("import")
                    .arg(&trace)
                    .arg("-o")
                    .arg(&log)
                    .args(["--to", "binary", "--force"])
                    .env("PP_THREADS", workers.to_string()),
            );
            let best = &mut import[workers - 1];
            *best = (best.0.min(r.0), best.1.min(r.1), r.2);
        }
        if has_print {
            let r = timed(Command::new("otf2-print").arg(&trace));
            print = (print.0.min(r.0), print.1.min(r.1));
        }
    }
    let rate = |s: f64| written as f64 / s / 1e6;
    println!(
        "  I/O floor (reading the event files), best of {rounds}: {floor:.3} s wall => {:.0} M records/s",
        rate(floor)
    );
    for (k, (wall, cpu, peak)) in import.iter().enumerate() {
        println!(
            "  pp import --to binary, PP_THREADS={}, best of {rounds}: {wall:.3} s wall, {cpu:.3} s CPU => {:.1} M records/s of wall, {:.1} M of CPU; peak RSS {peak} KiB",
            k + 1,
            rate(*wall),
            rate(*cpu)
        );
    }
    if has_print {
        println!(
            "  otf2-print > /dev/null, best of {rounds}: {:.3} s wall, {:.3} s CPU => {:.1} M records/s of CPU",
            print.0,
            print.1,
            rate(print.1)
        );
    } else {
        println!("  otf2-print: not installed");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
