//! The critical path's pass over the log (docs/critical-path.md#cost): the attribution, the
//! compact activity graph and the make-up's records, each on its own thread when there are
//! threads to spare.
//!
//! The attribution's sweep ([`profile_log`]) hands its sink each event, each attributed
//! interval and each move to rc.cpu, in order. The graph ([`Builder::compact`]) needs the
//! events alone (and the teams the log defined); the records ([`RecordSink`]) need the
//! intervals, the moves and the `cpu` samples alone. [`Split`] sends each to its side, so
//! the two sides run apart: the reader decodes on one thread (the log's own hand-over), the
//! sweep runs on a second, the graph on a third and the records on the caller's, each side
//! seeing its calls in the order one thread would make them, so the result is the same.

use super::build::Builder;
use super::path_graph::PathGraph;
use super::records::{RecordSink, Records};
use crate::event::{Event, EventKind, Header, Symbols, TeamRef, ThreadId};
use crate::log::{Handover, LogReader, default_threads, pipelined_with};
use crate::profile::{Category, Interval, LogProfile, Sink, profile_log};

/// Each side's calls, handed over: batches of 8,192 (4,096 measured slower, stop 42), 4 in
/// flight (a few MB).
const HANDOVER: Handover = Handover {
    batch: 8192,
    in_flight: 4,
};

/// What the graph's side is handed: each event, or a team the log defined (the builder
/// needs the members of a region's team; the side keeps its own copy of the teams).
enum ToGraph {
    Event(Event),
    Team(Vec<ThreadId>),
}

/// What the records' side is handed.
enum ToRecords {
    Interval(Interval),
    RcCpu(ThreadId, Category, u64),
    /// A `cpu` sample the sweep applied: thread, time (the latest event's so far), the
    /// thread's CPU clock and run-queue delay.
    Sample(ThreadId, u64, u64, Option<u64>),
}

/// Profiles `reader` with [`profile_log`] while the compact graph and the make-up's records
/// are built from what the sweep hands its sink: on four threads when the machine (or
/// `$PP_THREADS`) gives two or more, else on this one.
pub fn profile_and_record(reader: &mut LogReader) -> (LogProfile, PathGraph, Records) {
    let header = reader.header().clone();
    let mut graph = Graph::new(&header);
    let mut records = RecordSink::new(&header);
    let profiled = if default_threads() > 1 {
        let side = &mut graph;
        pipelined_with(
            HANDOVER,
            |to_records| {
                pipelined_with(
                    HANDOVER,
                    |to_graph| {
                        let mut split = Split::new(
                            &header,
                            |call| to_graph.push(call),
                            |call| to_records.push(call),
                        );
                        profile_log(reader, None, Some(&mut split))
                    },
                    |call| side.apply(call),
                )
            },
            |call| apply(&mut records, call),
        )
    } else {
        let mut split = Split::new(
            &header,
            |call| graph.apply(call),
            |call| apply(&mut records, call),
        );
        profile_log(reader, None, Some(&mut split))
    };
    (profiled, graph.builder.finish_path(), records.finish())
}

/// The graph's side: the builder and its copy of the log's teams.
struct Graph {
    builder: Builder,
    symbols: Symbols,
}

impl Graph {
    fn new(header: &Header) -> Self {
        Graph {
            builder: Builder::compact(header),
            symbols: Symbols::default(),
        }
    }

    fn apply(&mut self, call: ToGraph) {
        match call {
            ToGraph::Event(e) => self.builder.event(&e, &self.symbols),
            ToGraph::Team(members) => {
                self.symbols.intern_team(&members);
            }
        }
    }
}

/// The records' side.
fn apply(records: &mut RecordSink, call: ToRecords) {
    match call {
        ToRecords::Interval(i) => records.interval(&i),
        ToRecords::RcCpu(thread, from, ns) => records.rc_cpu(thread, from, ns),
        ToRecords::Sample(thread, t, cpu, delay) => records.sample(thread as usize, t, cpu, delay),
    }
}

/// The sweep's sink: sends each call to its side.
struct Split<G, R> {
    graph: G,
    records: R,
    /// Threads of the run (events of others are dropped by both sides).
    p: u32,
    /// Teams of the log's symbols sent so far (teams are numbered in the order they were
    /// defined, and only added to).
    teams: u32,
    /// The latest event's time (a time going back is taken as this, as the sweep does).
    last_t: u64,
}

impl<G: FnMut(ToGraph), R: FnMut(ToRecords)> Split<G, R> {
    fn new(header: &Header, graph: G, records: R) -> Self {
        Split {
            graph,
            records,
            p: header.p,
            teams: 0,
            last_t: 0,
        }
    }
}

impl<G: FnMut(ToGraph), R: FnMut(ToRecords)> Sink for Split<G, R> {
    fn interval(&mut self, interval: &Interval, _symbols: &Symbols) {
        (self.records)(ToRecords::Interval(*interval));
    }

    fn event(&mut self, event: &Event, symbols: &Symbols) {
        if matches!(event.kind, EventKind::RegionBegin { team: Some(_), .. }) {
            while let Some(members) = symbols.get_team(TeamRef(self.teams)) {
                (self.graph)(ToGraph::Team(members.to_vec()));
                self.teams += 1;
            }
        }
        (self.graph)(ToGraph::Event(*event));
        if event.thread >= self.p {
            return;
        }
        self.last_t = self.last_t.max(event.t);
        if let EventKind::Cpu {
            thread_cpu_ns,
            run_delay_ns,
        } = event.kind
        {
            (self.records)(ToRecords::Sample(
                event.thread,
                self.last_t,
                thread_cpu_ns,
                run_delay_ns,
            ));
        }
    }

    fn rc_cpu(&mut self, thread: ThreadId, from: Category, ns: u64) {
        (self.records)(ToRecords::RcCpu(thread, from, ns));
    }
}
