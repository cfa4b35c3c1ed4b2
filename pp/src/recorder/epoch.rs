//! A session's time 0 taken before the session starts.
//!
//! A tracer that learns `p` only after the program has been running a while (the OMPT tool
//! learns it from the first parallel region's team) takes an [`Epoch`] when the program starts,
//! starts the [`Session`](super::Session) later with [`SessionBuilder::epoch`](super::SessionBuilder::epoch),
//! and registers the thread that took the epoch with [`thread_start_at_epoch`]: its `start`,
//! its first CPU sample and, if asked, the serial work it has been doing since, are recorded at
//! time 0 as if the session had started then.

use crate::event::ThreadId;

use super::buffer::{self, RawKind};
use super::clock::{Clock, ClockSource, RunDelay, thread_cpu_ns};
use super::session;

/// A moment on the session clock, with the CPU clock and run-queue delay of the thread that
/// took it.
#[derive(Debug, Clone, Copy)]
pub struct Epoch {
    pub(crate) clock: Clock,
    cpu: Option<u64>,
    delay: Option<u64>,
}

impl Epoch {
    /// Now, on the clock [`ClockSource::detect`] chooses (so `PP_CLOCK` applies), with the
    /// calling thread's CPU clock and run-queue delay.
    pub fn now() -> Epoch {
        Epoch::now_on(ClockSource::detect())
    }

    /// Now, on `source`. (The TSC's calibration sleeps about 5 ms once per process; a tracer
    /// loaded into every run may prefer [`ClockSource::Monotonic`].)
    pub fn now_on(source: ClockSource) -> Epoch {
        let cpu = thread_cpu_ns();
        let delay = RunDelay::open().read();
        Epoch {
            clock: Clock::start(source),
            cpu,
            delay,
        }
    }
}

/// Registers the calling thread as thread `id` of the active session from the session's epoch:
/// records `start` and the epoch's CPU sample at time 0, then, when given, `phase <phase>` and
/// `work_begin [label]` (for `work: Some(label)`), also at time 0. The work stays open, to be
/// ended with [`work_end`](super::work_end). Call it on the thread that took the epoch.
/// Returns `false` (and records nothing) when no session is active, it has no epoch, or `id`
/// is not below `p`.
pub fn thread_start_at_epoch(
    id: ThreadId,
    phase: Option<&'static str>,
    work: Option<Option<&'static str>>,
) -> bool {
    let Some(s) = session::current() else {
        return false;
    };
    let Some(epoch) = s.epoch else {
        return false;
    };
    if id >= s.p {
        return false;
    }
    let base = epoch.clock.base();
    let mut first = vec![(base, RawKind::Start)];
    if let Some(cpu) = epoch.cpu {
        first.push((base, RawKind::Cpu(cpu, epoch.delay)));
    }
    if let Some(name) = phase {
        first.push((base, RawKind::Phase(name)));
    }
    if let Some(label) = work {
        first.push((base, RawKind::WorkBegin(label)));
    }
    buffer::start_with(id, s, &first);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventKind;
    use crate::log::LogReader;
    use crate::recorder::{Session, work_end};

    #[test]
    fn a_thread_registered_at_the_epoch_starts_and_works_from_time_0() {
        let dir = std::env::temp_dir().join(format!("pp-epoch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("epoch.log");
        let epoch = Epoch::now();
        // The program runs a while before it knows p.
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = x.wrapping_add(std::hint::black_box(i));
        }
        let session = Session::builder(2)
            .epoch(epoch)
            .path(&path)
            .start()
            .unwrap();
        assert!(thread_start_at_epoch(0, Some("serial"), Some(None)));
        assert!(!thread_start_at_epoch(2, None, None), "2 is not below p");
        work_end(None);
        session.finish().unwrap();
        let mut reader = LogReader::open(&path).unwrap();
        let mut events = Vec::new();
        reader
            .for_each_event(|e, s| {
                let phase = match e.kind {
                    EventKind::Phase { name } => Some(s.name(name).to_owned()),
                    _ => None,
                };
                events.push((e.t, e.kind, phase));
            })
            .unwrap();
        assert!(matches!(events[0], (0, EventKind::Start, _)), "{events:?}");
        assert!(
            matches!(events[1], (0, EventKind::Cpu { .. }, _)),
            "{events:?}"
        );
        assert_eq!(events[2].2.as_deref(), Some("serial"));
        assert!(matches!(
            events[3],
            (0, EventKind::WorkBegin { label: None }, _)
        ));
        // The work ends after the time the program ran before the session started.
        let end = events
            .iter()
            .find(|e| matches!(e.1, EventKind::WorkEnd { .. }))
            .unwrap();
        assert!(end.0 > 0, "{events:?} {x}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
