//! Runs many cases in a child process that a parent watches: a case that aborts (a failed
//! allocation under the child's memory limit, a stack overflow) or makes no progress for the
//! hang limit costs only that case: the parent records it and starts a new child at the next
//! case. Cases are numbered, and a case's input is a function of its number, so the child
//! makes its own inputs and the parent only reads one line per failure.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

use crate::checks::{Failure, excerpt};
use crate::target::Target;
use crate::{case, mutate};

/// Where the cases come from.
pub enum Inputs {
    /// `cases` mutants of the seeds, round-robin over `targets`.
    Mutants {
        /// Random seed of the run.
        seed: u64,
        /// The first case's number (the cases are `first..first + cases`).
        first: u64,
        /// How many cases.
        cases: u64,
        /// The targets, taken in turn.
        targets: Vec<Target>,
        /// Seeds of every target, indexed by [`Target::index`].
        seeds: Vec<Vec<Vec<u8>>>,
    },
    /// Saved inputs (regressions, crashes), each with its target and name.
    Files(Vec<(Target, String, Vec<u8>)>),
}

impl Inputs {
    /// The number of cases.
    pub fn len(&self) -> u64 {
        match self {
            Inputs::Mutants { cases, .. } => *cases,
            Inputs::Files(files) => files.len() as u64,
        }
    }

    /// True when there is no case.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Case `i`: its target, input and name.
    pub fn get(&self, i: u64) -> (Target, Vec<u8>, String) {
        match self {
            Inputs::Mutants {
                seed,
                first,
                targets,
                seeds,
                ..
            } => {
                let i = first + i;
                let t = targets[(i % targets.len() as u64) as usize];
                let input = mutate::case(*seed, i, t, &seeds[t.index()]);
                (t, input, format!("seed {seed} case {i}"))
            }
            Inputs::Files(files) => {
                let (t, name, bytes) = &files[i as usize];
                (*t, bytes.clone(), name.clone())
            }
        }
    }
}

/// Limits of one child.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A case that takes longer is reported as `slow` (the time is measured, not enforced).
    pub slow: Duration,
    /// A child that finishes no case for this long is killed, and its case is a `hang`.
    pub hang: Duration,
    /// Address space of the child (`RLIMIT_AS`), bytes: more is a failed allocation.
    pub memory: u64,
}

/// One failing case.
#[derive(Debug, Clone)]
pub struct Found {
    /// Case number.
    pub case: u64,
    /// The target it ran on.
    pub target: Target,
    /// What went wrong.
    pub failure: Failure,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Report {
    /// Cases run per target ([`Target::index`]).
    pub cases: [u64; Target::ALL.len()],
    /// Time spent in cases per target, ns.
    pub nanos: [u64; Target::ALL.len()],
    /// Every failure, in case order per child.
    pub found: Vec<Found>,
    /// Children started (1 + those lost to a crash or hang).
    pub children: u64,
}

// Layout of the memory the parent shares with its children (u64 words).
const IN_FLIGHT: usize = 0;
const NEXT: usize = 1;
const CASES: usize = 2;
const NANOS: usize = CASES + Target::ALL.len();
const WORDS: usize = NANOS + Target::ALL.len();

struct Shared(*mut u64);

impl Shared {
    fn new() -> Shared {
        // SAFETY: an anonymous shared mapping of WORDS zeroed u64s, never unmapped.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                WORDS * 8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(p != libc::MAP_FAILED, "mmap failed");
        Shared(p.cast())
    }

    fn get(&self, i: usize) -> u64 {
        assert!(i < WORDS);
        // SAFETY: in bounds; volatile because another process writes it.
        unsafe { self.0.add(i).read_volatile() }
    }

    fn set(&self, i: usize, v: u64) {
        assert!(i < WORDS);
        // SAFETY: as in `get`.
        unsafe { self.0.add(i).write_volatile(v) }
    }
}

fn pipe() -> (i32, i32) {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors.
    let rc = unsafe { libc::pipe(fds.as_mut_ptr()) };
    assert_eq!(rc, 0, "pipe failed");
    (fds[0], fds[1])
}

/// The child: runs cases from `NEXT` on, writes `case\tkind\tdetail` per failure to `out`.
fn child(inputs: &Inputs, limits: Limits, shared: &Shared, out: i32) -> ! {
    let limit = libc::rlimit {
        rlim_cur: limits.memory,
        rlim_max: limits.memory,
    };
    // SAFETY: plain system calls on this process.
    unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) };
    // SAFETY: `out` is the write end of a pipe this process owns from here on.
    let mut out = unsafe { File::from_raw_fd(out) };
    for i in shared.get(NEXT)..inputs.len() {
        shared.set(IN_FLIGHT, i);
        let (t, input, _) = inputs.get(i);
        let start = Instant::now();
        let result = case::check(t, &input);
        let took = start.elapsed();
        shared.set(CASES + t.index(), shared.get(CASES + t.index()) + 1);
        shared.set(
            NANOS + t.index(),
            shared.get(NANOS + t.index()) + took.as_nanos() as u64,
        );
        let mut lines = String::new();
        if let Err(f) = result {
            lines += &format!("{i}\t{}\t{}\n", f.kind, f.detail);
        }
        if took > limits.slow {
            lines += &format!(
                "{i}\tslow\t{} ms for {} bytes\n",
                took.as_millis(),
                input.len()
            );
        }
        if !lines.is_empty() {
            let _ = out.write_all(lines.as_bytes());
        }
        shared.set(NEXT, i + 1);
    }
    // SAFETY: ends the child without running the parent's exit handlers.
    unsafe { libc::_exit(0) }
}

/// What a dead child's last words say about how it died.
fn crash_kind(status: i32, stderr: &str) -> String {
    if stderr.contains("memory allocation of") {
        "abort-out-of-memory".into()
    } else if stderr.contains("overflowed its stack") {
        "abort-stack-overflow".into()
    } else if libc::WIFSIGNALED(status) {
        format!("abort-signal-{}", libc::WTERMSIG(status))
    } else {
        format!("abort-exit-{}", libc::WEXITSTATUS(status))
    }
}

/// Runs every case of `inputs`, each child under `limits`.
pub fn run(inputs: &Inputs, limits: Limits) -> Report {
    let shared = Shared::new();
    let mut report = Report::default();
    while shared.get(NEXT) < inputs.len() {
        report.children += 1;
        let (results_r, results_w) = pipe();
        let (err_r, err_w) = pipe();
        // SAFETY: this process is single-threaded when it forks (the fuzz binary's main).
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: descriptors of this process.
            unsafe {
                libc::close(results_r);
                libc::close(err_r);
                libc::dup2(err_w, 2);
                libc::close(err_w);
            }
            child(inputs, limits, &shared, results_w);
        }
        // SAFETY: the write ends belong to the child now.
        unsafe {
            libc::close(results_w);
            libc::close(err_w);
        }
        let (lines, stderr, hung) = watch(pid, results_r, err_r, &shared, limits.hang);
        for line in lines.lines() {
            let mut parts = line.splitn(3, '\t');
            let (Some(i), Some(kind), Some(detail)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let Ok(i) = i.parse::<u64>() else { continue };
            report.found.push(Found {
                case: i,
                target: inputs.get(i).0,
                failure: Failure {
                    kind: kind.into(),
                    detail: detail.into(),
                },
            });
        }
        let mut status = 0;
        // SAFETY: reaps the child this loop forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        let clean = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        if !clean || hung {
            let i = shared.get(IN_FLIGHT);
            let (t, input, _) = inputs.get(i);
            let kind = if hung {
                "hang".to_string()
            } else {
                crash_kind(status, &stderr)
            };
            let last = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
            report.found.push(Found {
                case: i,
                target: t,
                failure: Failure::new(kind, format!("{} ({} bytes)", excerpt(last), input.len())),
            });
            shared.set(CASES + t.index(), shared.get(CASES + t.index()) + 1);
            shared.set(NEXT, i + 1);
        }
    }
    for t in Target::ALL {
        report.cases[t.index()] = shared.get(CASES + t.index());
        report.nanos[t.index()] = shared.get(NANOS + t.index());
    }
    report
}

/// Reads the child's failure lines and the tail of its standard error until both pipes close;
/// kills it when `NEXT` stands still for `hang`. Returns (lines, stderr tail, hung).
fn watch(
    pid: i32,
    results: i32,
    err: i32,
    shared: &Shared,
    hang: Duration,
) -> (String, String, bool) {
    // SAFETY: the read ends belong to this process.
    let (mut results_file, mut err_file) =
        unsafe { (File::from_raw_fd(results), File::from_raw_fd(err)) };
    let (mut lines, mut stderr) = (Vec::new(), Vec::new());
    let (mut open, mut hung) = ([true, true], false);
    let (mut last_next, mut last_progress) = (shared.get(NEXT), Instant::now());
    let mut buf = [0u8; 8192];
    while open[0] || open[1] {
        let mut fds = [
            libc::pollfd {
                fd: if open[0] { results } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if open[1] { err } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfd entries.
        unsafe { libc::poll(fds.as_mut_ptr(), 2, 200) };
        for (k, fd) in fds.iter().enumerate() {
            if open[k] && fd.revents != 0 {
                let (file, sink) = if k == 0 {
                    (&mut results_file, &mut lines)
                } else {
                    (&mut err_file, &mut stderr)
                };
                match file.read(&mut buf) {
                    Ok(0) | Err(_) => open[k] = false,
                    Ok(n) => sink.extend_from_slice(&buf[..n]),
                }
            }
        }
        if stderr.len() > 1 << 16 {
            stderr.drain(..stderr.len() - 4096);
        }
        let next = shared.get(NEXT);
        if next != last_next {
            (last_next, last_progress) = (next, Instant::now());
        } else if !hung && last_progress.elapsed() > hang {
            // SAFETY: the child this run forked and has not reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            hung = true;
        }
    }
    (
        String::from_utf8_lossy(&lines).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
        hung,
    )
}
