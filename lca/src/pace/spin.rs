//! What a log's `cpu` samples say of its threads' cores (docs/pace.md#how-the-template-is-derived):
//! the CPU time a thread consumed over the stretches between two samples where it neither
//! computed nor communicated (it waited, or sat idle between regions: does it spin?), and
//! over those where it did nothing else (the share of a core its computation had: what other
//! programs took from it while it could run).

use anyhow::Result;
use pp::event::EventKind;
use pp::log::LogReader;

/// A stretch between two `cpu` samples of a thread counts as waiting when at least this share
/// of it was outside `work` and `comm` intervals, and as busy when at least this share was
/// inside them.
const WAITING: f64 = 0.95;

/// Waiting time and the CPU time consumed during it, and busy time and the CPU time it
/// received, over the stretches of one log.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spin {
    /// ns of waiting stretches.
    pub waiting_ns: u64,
    /// CPU ns the threads' clocks grew by over them.
    pub cpu_ns: u64,
    /// ns of busy stretches.
    pub busy_ns: u64,
    /// CPU ns the threads' clocks grew by over them.
    pub busy_cpu_ns: u64,
}

impl Spin {
    /// The share of a core a waiting thread used (0: its waits block, 1: they spin).
    pub fn share(&self) -> Option<f64> {
        (self.waiting_ns > 0).then(|| self.cpu_ns as f64 / self.waiting_ns as f64)
    }

    /// The share of a core a computing thread had (1: nothing else wanted its core), at
    /// most 1.
    pub fn busy_share(&self) -> Option<f64> {
        (self.busy_ns > 0).then(|| (self.busy_cpu_ns as f64 / self.busy_ns as f64).min(1.0))
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Thread {
    /// The last sample: (time, CPU clock).
    sample: Option<(u64, u64)>,
    /// Since the last event: inside `work` or `comm`.
    busy: bool,
    /// Since the last sample: ns busy and ns in all.
    busy_ns: u64,
    all_ns: u64,
    last_t: Option<u64>,
}

/// Reads a log's waiting stretches.
pub fn spin(mut reader: LogReader) -> Result<Spin> {
    let p = reader.header().p as usize;
    let mut threads = vec![Thread::default(); p];
    let mut total = Spin::default();
    while let Some(e) = reader.next_event() {
        let e = e?;
        let Some(th) = threads.get_mut(e.thread as usize) else {
            continue;
        };
        if let Some(last) = th.last_t {
            let dt = e.t.saturating_sub(last);
            th.all_ns += dt;
            if th.busy {
                th.busy_ns += dt;
            }
        }
        th.last_t = Some(e.t);
        match e.kind {
            EventKind::WorkBegin { .. } | EventKind::CommBegin { .. } => th.busy = true,
            EventKind::WorkEnd { .. } | EventKind::CommEnd { .. } => th.busy = false,
            EventKind::Cpu { thread_cpu_ns, .. } => {
                if let Some((t0, c0)) = th.sample {
                    let waiting = th.all_ns - th.busy_ns;
                    let (span, cpu) = (e.t.saturating_sub(t0), thread_cpu_ns.saturating_sub(c0));
                    if th.all_ns > 0 && waiting as f64 >= WAITING * th.all_ns as f64 {
                        total.waiting_ns += span;
                        total.cpu_ns += cpu;
                    } else if th.all_ns > 0 && th.busy_ns as f64 >= WAITING * th.all_ns as f64 {
                        total.busy_ns += span;
                        total.busy_cpu_ns += cpu;
                    }
                }
                th.sample = Some((e.t, thread_cpu_ns));
                th.busy_ns = 0;
                th.all_ns = 0;
            }
            _ => {}
        }
    }
    Ok(total)
}
