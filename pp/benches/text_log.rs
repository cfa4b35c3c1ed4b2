//! Text logs in bounded memory: the commands that read a text log, timed with their peak
//! memory. Writes the benchmarks' realistic binary log (8 threads, `PP_TEXT_LOG_BENCH_EVENTS`
//! events, default 10⁷), converts it to text with `pp convert`, then runs, each as its own
//! process measured by `wait4` (wall time, CPU time, peak resident set):
//!
//! * reading the text file alone (the I/O floor: 1 MiB reads, nothing decoded);
//! * `pp -l TEXT`, `pp convert TEXT BIN`, `pp signature TEXT`;
//! * `pp -l BIN` and reading the binary file alone, for comparison.
//!
//! `PP_TEXT_LOG_BENCH_COMMANDS=l,convert` runs only those of `l`, `convert` and `signature`
//! (`pp signature` keeps every step: about 80 bytes an event). With
//! `PP_TEXT_LOG_BENCH_BASELINE=PATH` the text commands are run with that `pp` binary too
//! (an older build, for before/after figures). `PP_TEXT_LOG_BENCH_KEEP=DIR` keeps the logs in
//! DIR; otherwise they go to the temporary folder and are removed.
//!
//! `PP_TEXT_LOG_BENCH_EVENTS=10000000 cargo bench -p pp --bench text_log`

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Wall seconds, CPU seconds and peak resident set (MiB) of one process.
struct Measured {
    wall: f64,
    cpu: f64,
    rss_mib: f64,
}

fn measure(cmd: &mut Command) -> Measured {
    let start = Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: wait4 fills the status and the usage it is given; the child is ours.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed().as_secs_f64();
    assert_eq!(got, pid, "wait4");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    // Already reaped by wait4: this only lets `Child` know.
    let _ = child.wait();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed: {err}"
    );
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Measured {
        wall,
        cpu: s(usage.ru_utime) + s(usage.ru_stime),
        rss_mib: usage.ru_maxrss as f64 / 1024.0,
    }
}

/// Seconds to read `path` alone, in 1 MiB reads (through the page cache).
fn read_alone(path: &Path) -> f64 {
    let start = Instant::now();
    let mut f = std::fs::File::open(path).expect("open");
    let mut buf = vec![0u8; 1 << 20];
    while f.read(&mut buf).expect("read") > 0 {}
    start.elapsed().as_secs_f64()
}

/// The lines of a file.
fn lines(path: &Path) -> u64 {
    let mut f = std::fs::File::open(path).expect("open");
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf).expect("read");
        if k == 0 {
            return n;
        }
        n += buf[..k].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

fn report(what: &str, events: u64, m: &Measured) {
    println!(
        "  {what:<34} {:7.2} s wall {:7.2} s CPU {:7.1} M events/s  peak {:7.1} MiB",
        m.wall,
        m.cpu,
        events as f64 / m.wall / 1e6,
        m.rss_mib
    );
}

fn main() {
    let keep = std::env::var_os("PP_TEXT_LOG_BENCH_KEEP").map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(std::env::temp_dir);
    let bin = dir.join(format!("pp-text-bench-{}.bin", std::process::id()));
    let text = bin.with_extension("log");
    let out = bin.with_extension("out");
    // SAFETY: the bench is one thread; nothing else reads the environment meanwhile.
    unsafe { std::env::set_var("PP_TEXT_LOG_BENCH_KEEP", &bin) };
    let (_, _, _) = log_support::bench_log("TEXT_LOG");
    let pp = PathBuf::from(env!("CARGO_BIN_EXE_pp"));
    let convert = Command::new(&pp)
        .args(["convert".as_ref(), bin.as_os_str(), text.as_os_str()])
        .output()
        .expect("pp convert");
    assert!(convert.status.success());
    // One event a line after the header (a converted log has no comments).
    let events = lines(&text) - 1;
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    println!(
        "text log: 8 threads, {events} events, {} bytes ({} bytes binary)",
        size(&text),
        size(&bin)
    );
    let floor = read_alone(&text);
    println!(
        "  {:<34} {floor:7.2} s => {:.1} M events/s, {:.0} MB/s",
        "read the text file alone",
        events as f64 / floor / 1e6,
        size(&text) as f64 / floor / 1e6
    );
    let mut binaries = vec![("this build", pp.clone())];
    if let Some(base) = std::env::var_os("PP_TEXT_LOG_BENCH_BASELINE") {
        binaries.push(("baseline", PathBuf::from(base)));
    }
    let commands =
        std::env::var("PP_TEXT_LOG_BENCH_COMMANDS").unwrap_or("l,convert,signature".into());
    let wanted = |c: &str| commands.split(',').any(|w| w == c);
    for (name, exe) in &binaries {
        println!(" {name} ({}):", exe.display());
        let run = |args: &[&std::ffi::OsStr]| {
            let mut cmd = Command::new(exe);
            cmd.args(args).env("HOME", &dir).env_remove("PP_MACHINE");
            measure(&mut cmd)
        };
        if wanted("l") {
            report(
                "pp -l TEXT",
                events,
                &run(&["-l".as_ref(), text.as_os_str()]),
            );
        }
        if wanted("convert") {
            report(
                "pp convert TEXT BIN",
                events,
                &run(&["convert".as_ref(), text.as_os_str(), out.as_os_str()]),
            );
            let _ = std::fs::remove_file(&out);
        }
        if wanted("signature") {
            report(
                "pp signature TEXT",
                events,
                &run(&["signature".as_ref(), text.as_os_str()]),
            );
        }
    }
    let floor = read_alone(&bin);
    println!(
        "  {:<34} {floor:7.2} s => {:.1} M events/s",
        "read the binary file alone",
        events as f64 / floor / 1e6
    );
    let mut cmd = Command::new(&pp);
    cmd.args(["-l".as_ref(), bin.as_os_str()]);
    report("pp -l BIN (this build)", events, &measure(&mut cmd));
    if keep.is_none() {
        let _ = std::fs::remove_file(&bin);
        let _ = std::fs::remove_file(&text);
    } else {
        println!("  logs kept: {} {}", bin.display(), text.display());
    }
}
