//! The predicted log: every event at its predicted time, in the input's encoding, with a
//! `predicted=` header parameter and `cpu` samples that show the processor sharing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::load::MeasuredRun;
use super::predict::PredictedLog;
use super::record::Record;
use super::replay::{Predicted, Sample, nearest};
use crate::event::{Event, EventKind};
use crate::log::{BinaryWriter, Encoding, TextWriter};
use pp_recorder::log::binary::BlockState;

/// Events per block of a binary log.
const BLOCK_EVENTS: usize = 4096;

/// Thread `i`'s events at their predicted times (rounded to the ns), `cpu` samples rewritten:
/// the CPU clock less the demand the speed factors took away, the run-queue delay plus the
/// time the thread was runnable without a processor (without the measured delay when
/// `unshared`: demand from CPU time, the sharing it came from gone). A thread without samples
/// gets one at its `start` and one at its `stop` when `sampled` (some processor is shared), so
/// that the profile of the predicted log shows the sharing as `rc.cpu`. An error reading the
/// temporary file ends the events and is kept for [`Predicted::error`].
pub fn thread_events<'a>(
    run: &'a MeasuredRun,
    predicted: &'a Predicted,
    i: usize,
    sampled: bool,
    unshared: bool,
) -> impl Iterator<Item = Event> + 'a {
    let mut records = run.records.cursor(i);
    let mut state = BlockState::default();
    let mut times = predicted.times.cursor(i);
    let mut samples = predicted.samples.each_ref().map(|t| t.cursor(i));
    let add = sampled && run.samples[i] == 0;
    let mut record = Record::default();
    let mut next = None::<Event>;
    // The last sample's CPU clock, measured and predicted: the predicted clock does not go
    // back where the measured one did not (the speed factors' savings can outgrow a stretch's
    // CPU time), and goes back where it did (rule 16 of docs/event-log.md: the attribution
    // ignores such a sample, in the predicted log as in the measured one).
    let mut last: Option<(u64, u64)> = None;
    let fail = move |e: String| {
        predicted
            .failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(e);
        None
    };
    std::iter::from_fn(move || {
        if let Some(e) = next.take() {
            return Some(e);
        }
        let data = match records.bytes(&run.records) {
            Ok([]) => return None,
            Ok(d) => d,
            Err(e) => return fail(e.to_string()),
        };
        let Some(n) = record.decode_event(data, i as u32, &mut state) else {
            return fail(format!(
                "thread {i}'s records in the temporary file are damaged"
            ));
        };
        records.consume(n);
        let at = match times.next(&predicted.times) {
            Ok(Some(t)) => t,
            Ok(None) => return fail(format!("thread {i}'s predicted times end early")),
            Err(e) => return fail(e.to_string()),
        };
        let e = record.event;
        let sample = if matches!(
            e.kind,
            EventKind::Start | EventKind::Stop | EventKind::Cpu { .. }
        ) {
            let mut next = |k: usize| samples[k].next(&predicted.samples[k]);
            match (next(0), next(1), next(2)) {
                (Ok(Some(delay)), Ok(Some(served)), Ok(Some(saved))) => Some(Sample {
                    delay,
                    served,
                    saved,
                }),
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return fail(e.to_string()),
                _ => return fail(format!("thread {i}'s predicted samples end early")),
            }
        } else {
            None
        };
        let t = predicted.origin.saturating_add(nearest(at));
        let mut event = Event { t, ..e };
        if let (
            EventKind::Cpu {
                thread_cpu_ns,
                run_delay_ns,
            },
            Some(s),
        ) = (e.kind, sample)
        {
            let cpu = nearest(thread_cpu_ns as f64 - s.saved);
            let cpu = match last {
                Some((measured, predicted)) if thread_cpu_ns < measured => {
                    cpu.min(predicted.saturating_sub(1))
                }
                Some((_, predicted)) => {
                    let cpu = cpu.max(predicted);
                    last = Some((thread_cpu_ns, cpu));
                    cpu
                }
                None => {
                    last = Some((thread_cpu_ns, cpu));
                    cpu
                }
            };
            let delay = nearest(s.delay);
            event.kind = EventKind::Cpu {
                thread_cpu_ns: cpu,
                run_delay_ns: match run_delay_ns {
                    Some(_) if unshared => Some(delay),
                    Some(d) => Some(d.saturating_add(delay)),
                    None if delay > 0 => Some(delay),
                    None => None,
                },
            };
        }
        let added = sample.filter(|_| add).map(|s| Event {
            t,
            thread: e.thread,
            kind: EventKind::Cpu {
                thread_cpu_ns: nearest(s.served),
                run_delay_ns: Some(nearest(s.delay)),
            },
        });
        let (first, second) = match (e.kind, added) {
            (EventKind::Start, Some(cpu)) => (event, Some(cpu)),
            (EventKind::Stop, Some(cpu)) => (cpu, Some(event)),
            _ => (event, None),
        };
        next = second;
        Some(first)
    })
}

impl PredictedLog {
    /// Thread `i`'s events in the predicted log ([`thread_events`]).
    pub fn events<'a>(
        &'a self,
        run: &'a MeasuredRun,
        i: usize,
    ) -> impl Iterator<Item = Event> + 'a {
        thread_events(run, &self.replay, i, self.sampled, self.unshared)
    }
}

/// Writes the predicted log of `run` in its encoding to `out` (a temporary file renamed over
/// it when complete); `force` allows replacing an existing file.
pub fn write(run: &MeasuredRun, prediction: &PredictedLog, out: &Path, force: bool) -> Result<()> {
    let header = &prediction.header;
    let mut threads: Vec<_> = (0..run.header.p as usize)
        .map(|i| prediction.events(run, i).peekable())
        .collect();
    let name = out.display().to_string();
    files::output::check(out).with_context(|| format!("--out {name}"))?;
    if out.exists() && !force {
        bail!("--out {name}: a file is already there; --force replaces it");
    }
    let target = files::Target::open(out).with_context(|| format!("--out {name}"))?;
    let werr = |e: io::Error| anyhow::anyhow!("--out {name}: cannot write: {e}");
    let target = match run.encoding {
        Encoding::Text => {
            let mut w = TextWriter::new(BufWriter::new(target), header).map_err(werr)?;
            // Merged by time, ties by thread, as a reader orders them.
            let mut heap: BinaryHeap<Reverse<(u64, usize)>> = threads
                .iter_mut()
                .enumerate()
                .filter_map(|(i, t)| t.peek().map(|e| Reverse((e.t, i))))
                .collect();
            while let Some(Reverse((_, i))) = heap.pop() {
                if let Some(e) = threads[i].next() {
                    w.write_event(&e, &run.symbols).map_err(werr)?;
                }
                if let Some(e) = threads[i].peek() {
                    heap.push(Reverse((e.t, i)));
                }
            }
            w.finish()
                .map_err(werr)?
                .into_inner()
                .map_err(|e| werr(e.into_error()))?
        }
        Encoding::Binary => {
            let mut w = BinaryWriter::new(BufWriter::new(target), header).map_err(werr)?;
            // The events come in blocks from another thread (reading the records and the
            // times back, the samples rewritten) while this one encodes and writes them; a
            // few blocks in flight, their vectors handed back.
            std::thread::scope(|s| -> Result<()> {
                let (blocks, written) = std::sync::mpsc::sync_channel::<(u32, Vec<Event>)>(4);
                let (spent, reuse) = std::sync::mpsc::channel::<Vec<Event>>();
                s.spawn(move || {
                    for (i, events) in threads.iter_mut().enumerate() {
                        loop {
                            let mut block = reuse
                                .try_recv()
                                .unwrap_or_else(|_| Vec::with_capacity(BLOCK_EVENTS));
                            block.clear();
                            block.extend(events.by_ref().take(BLOCK_EVENTS));
                            if block.is_empty() {
                                break;
                            }
                            if blocks.send((i as u32, block)).is_err() {
                                return;
                            }
                        }
                    }
                });
                for (i, block) in written {
                    w.write_block(i, &block, &run.symbols).map_err(werr)?;
                    let _ = spent.send(block);
                }
                Ok(())
            })?;
            w.finish()
                .map_err(werr)?
                .into_inner()
                .map_err(|e| werr(e.into_error()))?
        }
    };
    if let Some(e) = prediction.replay.error() {
        bail!("{e}");
    }
    let mut target = target;
    target.flush().map_err(werr)?;
    target.commit().with_context(|| format!("--out {name}"))?;
    Ok(())
}
