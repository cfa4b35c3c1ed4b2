//! The handoff example: two threads that take turns, each computing while the other waits for
//! it on a recorder channel, so that every wait lasts the other thread's computation. It is
//! the application of the partners' measurement (docs/skeletons.md#partners,
//! docs/results.md#skeleton-partners): a skeleton whose waits only slept would not stretch them
//! when a CPU hog slows the computation they wait for.
//!
//! ```text
//! cargo run --release -p pp --example handoff -- --turns 2000 --ms 1   # writes $PP_LOG or ./pp.log
//! pp skeleton pp.log --scale 10 --out skel && pp skeleton run skel
//! ```
//!
//! Thread 0 computes `--ms` ms, hands the turn to thread 1 (`ping`) and waits for it back
//! (`pong`); thread 1 waits for the turn, computes `--ms` ms and hands it back: `--turns`
//! times each. Each hand-over is recorded as `release recv NAME`, each receive as `wait recv
//! NAME .. by=<sender>` whether or not it blocked (the recorder's own channel records a wait
//! only when it blocks, so on a busy machine some turns would have none and the log's loop would
//! not fold).

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::process::ExitCode;

use std::sync::mpsc::{Receiver, Sender, channel};

use pp_recorder::event::WaitKind;
use pp_recorder::{self as recorder, Session};
use support::{iters_per_ms, spin};

/// A turn's computation, recorded as work, with the thread's CPU clock sampled where it
/// begins and ends (so that a signature knows this stretch's CPU time, not the thread's
/// average over its waits too: docs/skeletons.md#steps).
fn compute(iters: u64) {
    recorder::cpu_sample();
    {
        let _w = recorder::work(None);
        black_box(spin(iters));
    }
    recorder::cpu_sample();
}

/// Hands the turn on: the release that ends the other thread's wait, then the value.
fn hand(tx: &Sender<u64>, name: &'static str, i: u64) -> bool {
    recorder::release(WaitKind::Recv, name);
    tx.send(i).is_ok()
}

/// Waits for the turn from thread `from`.
fn take(rx: &Receiver<u64>, name: &'static str, from: u32) -> Option<u64> {
    let mut w = recorder::wait(WaitKind::Recv, name);
    let v = rx.recv().ok();
    w.ended_by(v.map(|_| from));
    v
}

fn parse() -> Result<(u64, f64), String> {
    let usage = "usage: handoff [--turns N] [--ms MS]\nwrites the log to $PP_LOG or ./pp.log";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut turns, mut ms) = (1000u64, 1.0f64);
    let mut it = args.chunks(2);
    for pair in &mut it {
        match pair {
            [flag, v] if flag == "--turns" => {
                turns = v
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or("--turns: expected a positive integer")?
            }
            [flag, v] if flag == "--ms" => {
                ms = v
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x > 0.0)
                    .ok_or("--ms: expected a positive number")?
            }
            _ => return Err(usage.into()),
        }
    }
    Ok((turns, ms))
}

fn main() -> ExitCode {
    let (turns, ms) = match parse() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("handoff: {e}");
            return ExitCode::from(2);
        }
    };
    let iters = (iters_per_ms() as f64 * ms) as u64;
    let (turns_s, ms_s) = (turns.to_string(), ms.to_string());
    let session = match Session::start(2, &[("turns", &turns_s), ("ms", &ms_s)]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("handoff: cannot start the log: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (ping_tx, ping_rx) = channel::<u64>();
    let (pong_tx, pong_rx) = channel::<u64>();
    std::thread::scope(|s| {
        s.spawn(move || {
            let _t = recorder::thread(0);
            for i in 0..turns {
                compute(iters);
                if !hand(&ping_tx, "ping", i) || take(&pong_rx, "pong", 1).is_none() {
                    return;
                }
            }
        });
        s.spawn(move || {
            let _t = recorder::thread(1);
            while let Some(i) = take(&ping_rx, "ping", 0) {
                compute(iters);
                if !hand(&pong_tx, "pong", i) {
                    return;
                }
            }
        });
    });
    match session.finish() {
        Ok(r) => {
            eprintln!("handoff: {} events to {}", r.events, r.path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("handoff: cannot finish the log: {e}");
            ExitCode::FAILURE
        }
    }
}
