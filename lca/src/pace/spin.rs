//! Whether a log's threads spin while they wait (docs/pace.md#how-the-template-is-derived): the CPU
//! time its `cpu` samples show a thread consumed between them, over the stretches where it
//! neither computed nor communicated (it waited, or sat idle between regions).

use anyhow::Result;
use pp::event::EventKind;
use pp::log::LogReader;

/// A stretch between two `cpu` samples of a thread counts as waiting when at least this share
/// of it was outside `work` and `comm` intervals.
const WAITING: f64 = 0.95;

/// Waiting time and the CPU time consumed during it, over the stretches of one log.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spin {
    /// ns of waiting stretches.
    pub waiting_ns: u64,
    /// CPU ns the threads' clocks grew by over them.
    pub cpu_ns: u64,
}

impl Spin {
    /// The share of a core a waiting thread used (0: its waits block, 1: they spin).
    pub fn share(&self) -> Option<f64> {
        (self.waiting_ns > 0).then(|| self.cpu_ns as f64 / self.waiting_ns as f64)
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
                    if th.all_ns > 0 && waiting as f64 >= WAITING * th.all_ns as f64 {
                        total.waiting_ns += e.t.saturating_sub(t0);
                        total.cpu_ns += thread_cpu_ns.saturating_sub(c0);
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
