//! The program activity graph of a run (docs/critical-path.md; the PAG of seed 000, Eom &
//! Hollingsworth) and its critical path.
//!
//! The nodes are the events of each thread, in time order; a *local arc* joins a thread's
//! consecutive events and weighs the thread's time between them. A *remote arc* says that an
//! event of one thread could not happen before an event (or an instant) of another:
//!
//! * a matched message: its `send` → its `recv` (matched as the attribution does);
//! * a barrier: the last arrival (`wait_begin barrier`) → every departure (`wait_end`);
//! * a region's fork: its `region_begin` → each other member's first event in it;
//! * a region's join: the last event of a member in it → its `region_end`;
//! * a wait's cause: the thread named by `wait_end .. by=<thread>` → that `wait_end`.
//!
//! Every arc points forward in time, so the graph is acyclic, and its weights are the times
//! between its ends: the longest path into an event is the event's time. The
//! [critical path](CriticalPath) is found by walking back from the end of the run. The graph
//! is built in one pass over the events in time order ([`Builder`]): whole, in memory linear
//! in the events (16 bytes a node), for a replay; or compact ([`PathGraph`]), in memory
//! bounded whatever the log's length, for the critical path, which [`RecordSink`] and
//! [`Makeup::of_records`] break down from records spilled to a temporary file.

mod build;
mod critical;
mod makeup;
mod pass;
mod path_graph;
mod records;
pub mod report;
mod spill;
mod stretches;

pub use build::{Added, Builder};
pub use critical::{CriticalPath, Segment};
pub(crate) use spill::temporary;

pub use makeup::Makeup;
pub use path_graph::PathGraph;
pub use records::{RecordSink, Records};
pub use stretches::{PathSink, Stretches};

use crate::event::ThreadId;

/// No remote arc ([`Node::arc`]).
pub const NO_ARC: u32 = u32::MAX;

/// One event of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// When it happened, ns.
    pub t: u64,
    /// The remote arc the longest path into this event takes ([`NO_ARC`]: the local arc):
    /// the arc with the latest source among those whose source came after the thread began to
    /// wait (or to idle) before this event. An event that the thread reached while busy, or
    /// whose remote sources all came before its wait began, is reached through its own thread.
    pub arc: u32,
}

/// What a remote arc stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArcKind {
    /// A message: its `send` → its `recv`.
    Message,
    /// A barrier (or a collective's wait): the last arrival → a departure.
    Barrier,
    /// A region opens: its `region_begin` → a member's first event in it.
    Fork,
    /// A region closes: the last event of a member in it → its `region_end`.
    Join,
    /// A wait ended by another thread's release, notify or send (`wait_end .. by=`).
    Cause,
}

impl ArcKind {
    /// Every kind, in report order.
    pub const ALL: [ArcKind; 5] = [
        ArcKind::Message,
        ArcKind::Barrier,
        ArcKind::Fork,
        ArcKind::Join,
        ArcKind::Cause,
    ];

    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ArcKind::Message => "message",
            ArcKind::Barrier => "barrier",
            ArcKind::Fork => "fork",
            ArcKind::Join => "join",
            ArcKind::Cause => "cause",
        }
    }
}

/// An arc between two threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteArc {
    /// What it stands for.
    pub kind: ArcKind,
    /// The source thread.
    pub from: ThreadId,
    /// The source thread's last node at or before [`RemoteArc::from_t`].
    pub from_node: u32,
    /// When the source happened: the source node's time, or for a [`ArcKind::Cause`] the
    /// time of the wait's end (the releasing thread had released by then; its own log has no
    /// event there).
    pub from_t: u64,
    /// The target thread.
    pub to: ThreadId,
    /// The target node.
    pub to_node: u32,
}

/// The program activity graph of a log.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// Threads.
    pub p: u32,
    /// Each thread's events, in time order.
    pub threads: Vec<Vec<Node>>,
    /// Every remote arc, in the order their targets happened.
    pub arcs: Vec<RemoteArc>,
    /// The run window as the attribution has it: the first `start` to the last event
    /// (`None`: no thread started).
    pub window: Option<(u64, u64)>,
    /// Waits (other than barrier waits) whose end has no known cause: no `by=`, no matched
    /// message received in them. The critical path goes on through the waiting thread there.
    pub unknown_causes: u64,
    /// Every barrier episode's arrivals (`wait_begin barrier` nodes), in arrival order, by
    /// episode number: the arcs keep only the last arrival, a replay needs them all.
    pub arrivals: Vec<Vec<(ThreadId, u32)>>,
    /// Every departure from a barrier (its `wait_end` node), in the order they happened.
    pub departures: Vec<Departure>,
}

/// A thread leaves a barrier episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departure {
    /// The departing thread.
    pub thread: ThreadId,
    /// Its `wait_end` node.
    pub node: u32,
    /// The episode ([`Graph::arrivals`]).
    pub episode: u32,
    /// How many had arrived when it left (the first ones of the episode's arrivals).
    pub arrived: u32,
}

impl Graph {
    /// Number of events.
    pub fn events(&self) -> u64 {
        self.threads.iter().map(|t| t.len() as u64).sum()
    }

    /// Number of remote arcs of each kind, in [`ArcKind::ALL`] order.
    pub fn arc_counts(&self) -> [u64; 5] {
        let mut n = [0; 5];
        for a in &self.arcs {
            n[a.kind as usize] += 1;
        }
        n
    }
}
