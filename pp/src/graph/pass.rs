//! The critical path's pass over the log (docs/critical-path.md#cost): the attribution, the
//! compact activity graph and the make-up's records, each on its own thread when there are
//! threads to spare.
//!
//! The attribution's sweep ([`profile_log_tapped`]) hands its sink each attributed interval
//! and each move to rc.cpu, in order; the graph ([`Builder::compact`]) needs the log's events
//! alone (and its teams, all known when it is opened), so it taps them from the reader: the
//! batches the reader's thread decoded go to the sweep and then, the same batches, to the
//! graph on a thread of its own ([`crate::log::LogReader::for_each_placed_tapped`]), copied
//! by no one. The records ([`RecordSink`]) need the intervals, the moves and the `cpu`
//! samples alone, which [`Split`] hands to the caller's thread. So: the reader decodes on one
//! thread, the sweep runs on a second, the graph on a third and the records on the caller's,
//! each seeing its calls in the order one thread would make them, so the result is the same.
//! The records go to 1, 2 or 4 streams (the threads, at most 4, rounded down to a power of
//! two), which the make-up reads back at once ([`super::Makeup::of_records`]).

use super::build::Builder;
use super::path_graph::PathGraph;
use super::records::{RecordSink, Records};
use crate::event::{Event, Sym, Symbols, ThreadId};
use crate::log::{Handover, LogReader, default_threads, pipelined_with};
use crate::profile::{Category, Interval, LogProfile, Sink, profile_log_tapped};

/// The records' calls, handed over: batches of 8,192, 4 in flight (a few MB). The
/// reader's 4,096 were not measurably different (stop 42: 10 runs, within the noise); 1,024
/// took the attribution's thread from 0.5 s to 0.95 s of CPU at 10⁷ events, and 32,768 made
/// no difference (`perf`, two runs each, 2026-11-28).
const HANDOVER: Handover = Handover {
    batch: 8192,
    in_flight: 4,
};

/// What the records' side is handed (32 bytes: every byte handed over is written once and
/// read once more, and the intervals are about one an event).
enum ToRecords {
    /// An attributed interval: [`Interval`] without its phase, which the records do not keep.
    Interval {
        thread: ThreadId,
        start: u64,
        end: u64,
        category: Category,
        region: Option<Sym>,
    },
    RcCpu(ThreadId, Category, u64),
    /// A `cpu` sample the sweep applied: thread, time (the latest event's so far), the
    /// thread's CPU clock and run-queue delay (with `has_delay`).
    Sample {
        thread: ThreadId,
        t: u64,
        cpu: u64,
        delay: u64,
        has_delay: bool,
    },
}

/// Profiles `reader` with [`profile_log_tapped`] while the compact graph and the make-up's
/// records are built: the graph from the log's events, tapped from the reader, and the records
/// from what the sweep hands its sink. On four threads when the machine (or `$PP_THREADS`)
/// gives two or more, else on this one.
pub fn profile_and_record(reader: &mut LogReader) -> (LogProfile, PathGraph, Records) {
    let header = reader.header().clone();
    let mut builder = Builder::compact(&header);
    // The graph's copy of the log's names and teams (the reader's stay with the sweep).
    let symbols = reader.symbols().clone();
    let graph = Some(|e: &Event| builder.event(e, &symbols));
    let threads = default_threads();
    // The make-up reads each stream on a thread of its own; a few are enough.
    let mut records = RecordSink::new(&header, threads.min(4).min(header.p as usize));
    let profiled = if threads > 1 {
        pipelined_with(
            HANDOVER,
            |to_records| {
                let mut split = Split {
                    records: |call| to_records.push(call),
                };
                profile_log_tapped(reader, None, Some(&mut split), graph)
            },
            |call| apply(&mut records, call),
        )
    } else {
        let mut split = Split {
            records: |call| apply(&mut records, call),
        };
        profile_log_tapped(reader, None, Some(&mut split), graph)
    };
    (profiled, builder.finish_path(), records.finish())
}

/// The records' side.
fn apply(records: &mut RecordSink, call: ToRecords) {
    match call {
        ToRecords::Interval {
            thread,
            start,
            end,
            category,
            region,
        } => records.interval(thread, start, end, category, region),
        ToRecords::RcCpu(thread, from, ns) => records.rc_cpu(thread, from, ns),
        ToRecords::Sample {
            thread,
            t,
            cpu,
            delay,
            has_delay,
        } => records.sample(thread as usize, t, cpu, has_delay.then_some(delay)),
    }
}

/// The sweep's sink: sends what the records need to their side (the intervals, the moves to
/// rc.cpu and the `cpu` samples; no event).
struct Split<R> {
    records: R,
}

impl<R: FnMut(ToRecords)> Sink for Split<R> {
    fn interval(&mut self, i: &Interval, _symbols: &Symbols) {
        (self.records)(ToRecords::Interval {
            thread: i.thread,
            start: i.start,
            end: i.end,
            category: i.category,
            region: i.region,
        });
    }

    fn intervals(&mut self, intervals: &[Interval], symbols: &Symbols) {
        for i in intervals {
            self.interval(i, symbols);
        }
    }

    fn wants_events(&self) -> bool {
        false
    }

    fn cpu_sample(&mut self, thread: ThreadId, t: u64, cpu: u64, delay: Option<u64>) {
        (self.records)(ToRecords::Sample {
            thread,
            t,
            cpu,
            delay: delay.unwrap_or(0),
            has_delay: delay.is_some(),
        });
    }

    fn rc_cpu(&mut self, thread: ThreadId, from: Category, ns: u64) {
        (self.records)(ToRecords::RcCpu(thread, from, ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_for_the_records_takes_32_bytes() {
        assert_eq!(std::mem::size_of::<ToRecords>(), 32);
    }
}
