//! The attribution and the activity graph on two threads (docs/critical-path.md#cost): the
//! reading thread decodes the log and runs the attribution's sweep; what the sweep hands its
//! sink (each event, each attributed interval, each move to rc.cpu) goes, in batches and in
//! the same order, to a second thread, which builds the compact graph and writes the records
//! of the make-up ([`RecordSink`]). The second thread sees exactly the calls one thread would
//! have made, so the result is the same.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use super::path_graph::PathGraph;
use super::records::{RecordSink, Records};
use crate::event::{Event, EventKind, Header, Symbols, TeamRef, ThreadId};
use crate::log::LogReader;
use crate::profile::{Category, Interval, LogProfile, Sink, profile_log};

/// Calls per batch: large enough that the hand-over costs little per call, small enough that
/// the batches in flight stay a few MB.
const BATCH: usize = 8192;

/// Batches on their way to the second thread at most (the first waits beyond that).
const IN_FLIGHT: usize = 4;

/// One call the sweep made on its sink, or a team the log defined (the graph needs the
/// members of a region's team; the second thread keeps its own copy of the teams).
enum Call {
    Event(Event),
    Interval(Interval),
    RcCpu(ThreadId, Category, u64),
    Team(Vec<ThreadId>),
}

/// Profiles `reader` with [`profile_log`] on this thread while a second thread builds the
/// compact graph and the make-up's records from what the sweep hands its sink.
pub fn profile_and_record(reader: &mut LogReader) -> (LogProfile, PathGraph, Records) {
    let header = reader.header().clone();
    std::thread::scope(|scope| {
        let (to_worker, batches) = sync_channel::<Vec<Call>>(IN_FLIGHT);
        let (give_back, spare) = sync_channel::<Vec<Call>>(IN_FLIGHT + 2);
        let worker = scope.spawn(move || record(&header, &batches, &give_back));
        let mut batcher = Batcher {
            batch: Vec::with_capacity(BATCH),
            to_worker: Some(to_worker),
            spare,
            teams: 0,
        };
        let profiled = profile_log(reader, None, Some(&mut batcher));
        batcher.send();
        // Closing the channel ends the worker's loop.
        batcher.to_worker = None;
        match worker.join() {
            Ok((graph, records)) => (profiled, graph, records),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The second thread: applies the calls in order to a [`RecordSink`].
fn record(
    header: &Header,
    batches: &Receiver<Vec<Call>>,
    give_back: &SyncSender<Vec<Call>>,
) -> (PathGraph, Records) {
    let mut sink = RecordSink::new(header);
    let mut symbols = Symbols::default();
    for mut batch in batches {
        for call in batch.drain(..) {
            match call {
                Call::Event(e) => sink.event(&e, &symbols),
                Call::Interval(i) => sink.interval(&i, &symbols),
                Call::RcCpu(thread, from, ns) => sink.rc_cpu(thread, from, ns),
                Call::Team(members) => {
                    symbols.intern_team(&members);
                }
            }
        }
        // The first thread may have stopped taking them back; the batch is then dropped.
        let _ = give_back.try_send(batch);
    }
    sink.finish()
}

/// The sink on the reading thread: batches the calls.
struct Batcher {
    batch: Vec<Call>,
    /// `None` once closed.
    to_worker: Option<SyncSender<Vec<Call>>>,
    spare: Receiver<Vec<Call>>,
    /// Teams of the log's symbols sent so far (teams are numbered in the order they were
    /// defined, and only added to).
    teams: u32,
}

impl Batcher {
    fn push(&mut self, call: Call) {
        self.batch.push(call);
        if self.batch.len() >= BATCH {
            self.send();
        }
    }

    /// Sends the batch (a worker that died is found at the join).
    fn send(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let next = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let batch = std::mem::replace(&mut self.batch, next);
        if let Some(to) = &self.to_worker
            && to.send(batch).is_err()
        {
            self.to_worker = None;
        }
    }
}

impl Sink for Batcher {
    fn interval(&mut self, interval: &Interval, _symbols: &Symbols) {
        self.push(Call::Interval(*interval));
    }

    fn event(&mut self, event: &Event, symbols: &Symbols) {
        if matches!(event.kind, EventKind::RegionBegin { team: Some(_), .. }) {
            while let Some(members) = symbols.get_team(TeamRef(self.teams)) {
                self.push(Call::Team(members.to_vec()));
                self.teams += 1;
            }
        }
        self.push(Call::Event(*event));
    }

    fn rc_cpu(&mut self, thread: ThreadId, from: Category, ns: u64) {
        self.push(Call::RcCpu(thread, from, ns));
    }
}
