//! The category example: a recorded run whose phases each produce one lost-cycles category on
//! purpose, to check the recorder and the profiler end to end.
//!
//! ```text
//! cargo run --release -p pp --example categories -- -p 4      # writes $PP_LOG or ./pp.log
//! cargo run --release -p pp -- --by phase                     # categories per phase
//! ```
//!
//! | phase            | what the threads do                                   | category |
//! |------------------|-------------------------------------------------------|----------|
//! | `serial`         | one thread works outside any region, the others idle  | `ip`     |
//! | `imbalance`      | a parallel region where thread i does (i+1) units     | `li`     |
//! | `locks`          | every thread takes one lock, working inside it        | `sl`     |
//! | `copy`           | every thread copies a large buffer, recorded as comm  | `cl`     |
//! | `oversubscribed` | every thread works while unrecorded threads also spin, 4x as many busy threads as cores | `rc` (`rc.cpu`) |
//!
//! All of it is real work (multiply-adds, memory copies). With `p` above the number of cores,
//! every parallel phase also shows some `rc.cpu`: the team itself oversubscribes the machine.
//! Takes about 2 s on 2 cores with `-p 4`; `--scale` multiplies every phase's length.
//! `--phase` runs a list of phases, and `--repeats` runs the list over and over, a time-step
//! loop: the skeleton validation (`tools/skeleton-validation.sh`, `APPS=rust-categories`) runs
//! `-p 2 --phase serial,imbalance,locks --scale 0.1 --repeats 450 --unit 790000`, about 30 s
//! on 2 cores, with `--unit` fixing the work (spin iterations per 1 ms at `--scale 1`) that is
//! otherwise measured at the start, and `PP_LOCKS=every`, so that the `locks` phase records
//! every acquisition and its passes fold (docs/skeletons.md#locks-taken-in-varying-numbers).

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use pp_recorder::{self as recorder, Session, Team, sync::Mutex};

#[path = "support/mod.rs"]
mod support;
use support::{iters_per_ms, spin};

/// The phases, in the order `--phase all` runs them.
#[derive(Clone, Copy)]
enum Phase {
    Serial,
    Imbalance,
    Locks,
    Copy,
    Oversubscribed,
}

const PHASES: [(&str, Phase); 5] = [
    ("serial", Phase::Serial),
    ("imbalance", Phase::Imbalance),
    ("locks", Phase::Locks),
    ("copy", Phase::Copy),
    ("oversubscribed", Phase::Oversubscribed),
];

struct Options {
    p: u32,
    scale: f64,
    phases: Vec<Phase>,
    repeats: u32,
    /// Iterations of `spin` per unit (1 ms of work at `--scale 1`); `None`: measured at start.
    unit: Option<u64>,
}

const USAGE: &str =
    "usage: categories [-p THREADS] [--scale FACTOR] [--phase PHASES] [--repeats N] [--unit ITERS]
  PHASES: all (the default), or a comma-separated list of serial, imbalance, locks, copy,
  oversubscribed, run in that order --repeats times (default 1). --unit: spin iterations per
  1 ms of work (default: measured at the start, so the work differs a little from run to run)
writes the log to $PP_LOG or ./pp.log";

fn all_phases() -> Vec<Phase> {
    PHASES.iter().map(|&(_, ph)| ph).collect()
}

/// `v`, the value of option `name`, as a whole number of at least 1.
fn positive<T: std::str::FromStr + PartialOrd + From<u8>>(
    name: &str,
    v: String,
) -> Result<T, String> {
    v.parse()
        .ok()
        .filter(|n| *n >= T::from(1))
        .ok_or(format!("{name}: expected a positive integer"))
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        p: 4,
        scale: 1.0,
        phases: all_phases(),
        repeats: 1,
        unit: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name}: expected a value"));
        match a.as_str() {
            "-p" => opts.p = positive("-p", value("-p")?)?,
            "--scale" => {
                opts.scale = value("--scale")?
                    .parse()
                    .ok()
                    .filter(|&s: &f64| s > 0.0 && s.is_finite())
                    .ok_or("--scale: expected a positive number")?;
            }
            "--phase" => {
                let v = value("--phase")?;
                opts.phases = if v == "all" {
                    all_phases()
                } else {
                    v.split(',')
                        .map(|name| PHASES.iter().find(|&&(n, _)| n == name).map(|&(_, ph)| ph))
                        .collect::<Option<_>>()
                        .ok_or(format!(
                            "--phase '{v}': expected all, or a comma-separated list of serial, \
                             imbalance, locks, copy, oversubscribed"
                        ))?
                };
            }
            "--repeats" => opts.repeats = positive("--repeats", value("--repeats")?)?,
            "--unit" => opts.unit = Some(positive("--unit", value("--unit")?)?),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("{other}: unknown argument (try --help)")),
        }
    }
    Ok(opts)
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(opts: &Options) -> std::io::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_ms = opts.unit.unwrap_or_else(iters_per_ms);
    let unit = (opts.scale * per_ms as f64) as u64;
    let p = opts.p;
    let session = Session::start(
        p,
        &[
            ("prog", "categories"),
            ("cores", &cores.to_string()),
            ("unit", &per_ms.to_string()),
        ],
    )?;
    let team = Team::new(p as usize)?;
    let wall = Instant::now();
    // The whole program runs on the team, as fft2d's does, so that one thread of the team
    // opens every region. Called from outside the team, each region would be opened by
    // whichever worker rayon picks, and no thread's sequence of steps would repeat: its
    // signature would not fold (docs/skeletons.md#not-built-yet).
    team.run(|| {
        for _ in 0..opts.repeats {
            for phase in &opts.phases {
                match phase {
                    Phase::Serial => serial(&team, unit),
                    Phase::Imbalance => imbalance(&team, unit),
                    Phase::Locks => locks(&team, unit),
                    Phase::Copy => copy(&team, p, opts.scale),
                    Phase::Oversubscribed => oversubscribed(&team, p, cores, unit),
                }
            }
        }
    });
    drop(team);
    let report = session.finish()?;
    println!(
        "categories: p={p} on {cores} cores, {} repeats, {:.2} s, {} events -> {}",
        opts.repeats,
        wall.elapsed().as_secs_f64(),
        report.events,
        report.path.display()
    );
    println!("phases: serial=ip imbalance=li locks=sl copy=cl oversubscribed=rc.cpu");
    println!("see them with: pp --by phase {}", report.path.display());
    Ok(())
}

/// ip: serial work on one team thread, no region open.
fn serial(team: &Team, unit: u64) {
    team.phase("serial");
    team.run(|| {
        let _w = recorder::work("serial");
        spin(300 * unit)
    });
}

/// li: thread i works (i+1) units; the early finishers idle inside the region.
fn imbalance(team: &Team, unit: u64) {
    team.phase("imbalance");
    team.region("imbalance", |part| {
        let _w = recorder::work("imbalance");
        spin(40 * unit * (part.index() as u64 + 1))
    });
}

/// sl: all threads hammer one lock and work inside the critical section. The rounds are
/// claimed under the lock, so all threads are busy until the last one (no li at the end).
fn locks(team: &Team, unit: u64) {
    team.phase("locks");
    let rounds = Mutex::named("counter", 0u64);
    team.region("locks", |_| {
        loop {
            let mut done = rounds.lock().unwrap_or_else(|e| e.into_inner());
            if *done >= 240 {
                break;
            }
            let _w = recorder::work("critical");
            black_box(spin(unit));
            *done += 1;
        }
    });
}

/// cl: every thread copies its own large buffer, each copy recorded with its byte count; the
/// copies are claimed one at a time, so the threads end together.
fn copy(team: &Team, p: u32, scale: f64) {
    team.phase("copy");
    let len = 16 << 20;
    let copies = (40.0 * f64::from(p) * scale).ceil() as usize;
    let claimed = AtomicUsize::new(0);
    team.region("copy", |part| {
        let (src, mut dst) = {
            // Allocating and touching the buffers is setup work, not communication.
            let _w = recorder::work("setup");
            (vec![part.index() as u8; len], vec![1u8; len])
        };
        while claimed.fetch_add(1, Ordering::Relaxed) < copies {
            let _c = recorder::comm(len as u64);
            dst.copy_from_slice(black_box(&src));
            // Without this the optimizer drops repeated copies as redundant.
            black_box(&mut dst);
        }
        black_box(dst[len - 1])
    });
}

/// rc.cpu: 4x as many busy threads as cores; the extra ones are not recorded (other load on
/// the machine), so the team's work is often descheduled. Work is handed out a unit at a time,
/// so the threads end together.
fn oversubscribed(team: &Team, p: u32, cores: usize, unit: u64) {
    team.phase("oversubscribed");
    let hogs = (4 * cores).saturating_sub(p as usize);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..hogs {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    black_box(spin(unit / 10 + 1));
                }
            });
        }
        team.parallel_for("oversubscribed", 0..100 * p as usize, 1, |_| {
            black_box(spin(unit));
        });
        stop.store(true, Ordering::Relaxed);
    });
}
