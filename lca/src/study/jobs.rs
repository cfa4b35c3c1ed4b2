//! `lca study --jobs N`: N local runs at a time. Each worker thread makes runs with a runner of
//! its own (so its own watchdog: every run still dies with the study), taking the round's
//! points in order; the rows are appended by the calling thread as runs end, so in the order
//! they end. Concurrent runs compete for the machine, so `lca study` warns that their times
//! are disturbed.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{Context, Result};

use super::plan::Point;
use super::runner::{Ran, Runner};
use super::signals;

/// Makes the runs of `round`, `jobs` at a time, handing each end to `record` (in the calling
/// thread). After a stopping signal every worker kills its run and ends; the rows of the runs
/// that had finished are still recorded, then the signal is.
pub fn make(
    runner: &Runner,
    round: &[Point],
    jobs: usize,
    record: &mut dyn FnMut(&Point, Ran, f64) -> Result<()>,
) -> Result<()> {
    if round.is_empty() {
        return Ok(());
    }
    let workers: Vec<Runner> = (0..jobs.min(round.len()))
        .map(|_| runner.another())
        .collect::<std::io::Result<_>>()
        .context("cannot start a run's watchdog")?;
    let next = AtomicUsize::new(0);
    // Set when recording failed: the workers take no more points.
    let quit = AtomicBool::new(false);
    let (send, receive) = mpsc::channel::<(usize, Ran, f64)>();
    std::thread::scope(|scope| {
        for worker in &workers {
            let send = send.clone();
            let (next, quit) = (&next, &quit);
            scope.spawn(move || {
                while signals::caught().is_none() && !quit.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(point) = round.get(i) else { break };
                    let begun = Instant::now();
                    let ran = worker.run(point);
                    if send.send((i, ran, begun.elapsed().as_secs_f64())).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        let mut stopped = None;
        let mut result = Ok(());
        for (i, ran, seconds) in receive {
            if result.is_err() {
                continue;
            }
            match ran {
                Ran::Stopped(signal) => stopped = Some((i, signal)),
                ran => {
                    result = record(&round[i], ran, seconds);
                    if result.is_err() {
                        quit.store(true, Ordering::SeqCst);
                    }
                }
            }
        }
        // Every worker has ended here (the channel closed): no run is left.
        result?;
        let signal = stopped.or_else(|| signals::caught().map(|s| (0, s)));
        if let Some((i, signal)) = signal {
            record(&round[i.min(round.len() - 1)], Ran::Stopped(signal), 0.0)?;
        }
        Ok(())
    })
}
