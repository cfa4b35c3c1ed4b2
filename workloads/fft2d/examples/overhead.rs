//! The recorder's overhead on the workload: recorded and unrecorded runs of the same setting,
//! alternated in one process so that load from elsewhere on the machine hits both alike; the
//! minimum of each is compared.
//!
//! ```text
//! cargo run --release -p fft2d --example overhead -- [-n 512] [-p 2] [--iters 20] [--reps 40]
//! ```
//!
//! The logs go to the temporary directory and are removed.

use std::process::ExitCode;

use fft2d::matrix::MatrixRef;
use fft2d::{Config, Impl};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let (mut n, mut p, mut iters, mut reps) = (512usize, 2usize, 20usize, 40usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value: usize = args
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or(format!("{a}: expected a number"))?;
        match a.as_str() {
            "-n" => n = value,
            "-p" => p = value,
            "--iters" => iters = value,
            "--reps" => reps = value.max(1),
            _ => return Err(format!("{a}: unknown argument")),
        }
    }
    let log = std::env::temp_dir().join(format!("fft2d-overhead-{}.log", std::process::id()));
    println!("n={n} p={p} iters={iters}, {reps} alternated pairs; seconds of the iterations");
    println!("impl  unrecorded min   recorded min   overhead  events/iteration");
    for implementation in [Impl::Dp, Impl::Tp] {
        let mut config = Config {
            implementation,
            n,
            p,
            iters,
            record: false,
            log: Some(log.clone()),
        };
        if implementation == Impl::Tp && p < 2 {
            continue;
        }
        config.validate()?;
        let (mut plain, mut recorded, mut events) = (f64::INFINITY, f64::INFINITY, 0);
        for _ in 0..reps {
            for record in [false, true] {
                config.record = record;
                let mut ignore = |_: usize, _: MatrixRef<'_>| {};
                let outcome = fft2d::run::run(&config, &mut ignore).map_err(|e| e.to_string())?;
                if record {
                    recorded = recorded.min(outcome.seconds);
                    events = outcome.events;
                } else {
                    plain = plain.min(outcome.seconds);
                }
            }
        }
        let _ = std::fs::remove_file(&log);
        println!(
            "{implementation}    {plain:>14.6} {recorded:>14.6} {:>+9.2}%  {:>16.1}",
            100.0 * (recorded / plain - 1.0),
            events as f64 / iters as f64
        );
    }
    Ok(())
}
