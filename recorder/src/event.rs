//! The events of a run (docs/event-log.md), shared by the text and binary encodings, the recorder
//! and the profiler.
//!
//! Names (region names, work labels, wait objects, phase names) and region teams are interned
//! in a [`Symbols`] table so that an [`Event`] is small and `Copy`: a log of 10⁸ events is
//! decoded without an allocation per event.

use std::collections::HashMap;
use std::fmt;

/// A thread of the team, `0..p`.
pub type ThreadId = u32;

/// An interned name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub u32);

/// An interned team (sorted, distinct thread ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TeamRef(pub u32);

/// What a thread waits for (`wait_begin <kind>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitKind {
    /// Acquiring a lock.
    Lock,
    /// In a barrier.
    Barrier,
    /// On a condition variable.
    Cond,
    /// Receiving a message.
    Recv,
    /// Sending a message.
    Send,
    /// Anything else.
    Other,
}

impl WaitKind {
    /// Every kind, in the order of their codes.
    pub const ALL: [WaitKind; 6] = [
        WaitKind::Lock,
        WaitKind::Barrier,
        WaitKind::Cond,
        WaitKind::Recv,
        WaitKind::Send,
        WaitKind::Other,
    ];

    /// The keyword of the text encoding.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitKind::Lock => "lock",
            WaitKind::Barrier => "barrier",
            WaitKind::Cond => "cond",
            WaitKind::Recv => "recv",
            WaitKind::Send => "send",
            WaitKind::Other => "other",
        }
    }

    /// Parses the keyword of the text encoding.
    pub fn parse(s: &str) -> Option<WaitKind> {
        WaitKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for WaitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The thread's part of the run begins.
    Start,
    /// The thread's part of the run ends.
    Stop,
    /// A parallel construct starts; its team is all `p` threads unless `team` is given.
    RegionBegin {
        /// Region instance id (unique among open regions).
        id: u64,
        /// Region name.
        name: Sym,
        /// Explicit team.
        team: Option<TeamRef>,
    },
    /// A parallel construct ends.
    RegionEnd {
        /// Region instance id.
        id: u64,
    },
    /// The thread starts useful work.
    WorkBegin {
        /// Optional label.
        label: Option<Sym>,
    },
    /// The thread ends useful work.
    WorkEnd {
        /// Optional label.
        label: Option<Sym>,
    },
    /// The thread starts waiting (explicit synchronization).
    WaitBegin {
        /// What it waits for.
        kind: WaitKind,
        /// Optional object (lock name, channel, ...).
        object: Option<Sym>,
    },
    /// The thread stops waiting.
    WaitEnd {
        /// What it waited for.
        kind: WaitKind,
        /// Optional object.
        object: Option<Sym>,
        /// The thread whose release, notify or send ended the wait (`by=<thread>`), where the
        /// recorder knows it.
        by: Option<ThreadId>,
    },
    /// The thread releases what others may wait for: unlocks a lock (`kind` lock), notifies a
    /// condition (`kind` cond). A wait of that kind and object that ends `by` this thread was
    /// released at this thread's latest such event before the wait's end.
    Release {
        /// What was released.
        kind: WaitKind,
        /// Optional object (lock name, ...).
        object: Option<Sym>,
    },
    /// The thread starts moving `bytes` of data.
    CommBegin {
        /// Bytes moved.
        bytes: u64,
    },
    /// The data movement ends.
    CommEnd {
        /// Bytes moved.
        bytes: u64,
    },
    /// A sample of the thread's scheduler accounting: its CPU clock
    /// (`CLOCK_THREAD_CPUTIME_ID`) and, where the kernel reports it, its run-queue delay (the
    /// time it has been runnable but waiting for a CPU: `/proc/thread-self/schedstat`), both
    /// cumulative nanoseconds.
    Cpu {
        /// Thread CPU time.
        thread_cpu_ns: u64,
        /// Run-queue delay, if known.
        run_delay_ns: Option<u64>,
    },
    /// Labels the following time of this thread.
    Phase {
        /// Phase name.
        name: Sym,
    },
    /// The thread sends a message to thread `peer` (MPI: when the send call starts, blocking
    /// or not). A point in time; the time the thread blocks is a `wait send` interval.
    Send {
        /// The receiving thread (rank).
        peer: ThreadId,
        /// The message tag.
        tag: u32,
        /// Bytes sent.
        bytes: u64,
        /// The communicator, if not the world.
        comm: Option<Sym>,
    },
    /// The thread has received a message from thread `peer` (MPI: when the receive completes:
    /// the blocking call's end, or the wait or test that completed it). A point in time; the
    /// time the thread blocks is a `wait recv` interval.
    Recv {
        /// The sending thread (rank), as matched.
        peer: ThreadId,
        /// The message tag, as matched.
        tag: u32,
        /// Bytes received.
        bytes: u64,
        /// The communicator, if not the world.
        comm: Option<Sym>,
    },
    /// The thread enters a collective operation (its waiting inside is a `wait barrier`
    /// interval).
    Coll {
        /// The operation (`allreduce`, `alltoall`, ...).
        op: Sym,
        /// Bytes this thread contributes.
        bytes: u64,
        /// The root thread of a rooted operation.
        root: Option<ThreadId>,
        /// The communicator, if not the world.
        comm: Option<Sym>,
    },
}

/// An event: when, which thread, what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Nanoseconds on the run's monotonic clock.
    pub t: u64,
    /// The thread.
    pub thread: ThreadId,
    /// What happened.
    pub kind: EventKind,
}

/// The log header: the number of processors and the run parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header {
    /// Processors (threads of the team).
    pub p: u32,
    /// Every other `key=value` of the header, in order (copied into the datafile row).
    pub params: Vec<(String, String)>,
}

/// Interned names and teams.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Symbols {
    names: Vec<String>,
    name_index: HashMap<String, Sym>,
    teams: Vec<Vec<ThreadId>>,
    team_index: HashMap<Vec<ThreadId>, TeamRef>,
}

impl Symbols {
    /// The symbol of `name`, interning it if new.
    pub fn intern(&mut self, name: &str) -> Sym {
        if let Some(&s) = self.name_index.get(name) {
            return s;
        }
        let s = Sym(self.names.len() as u32);
        self.names.push(name.to_string());
        self.name_index.insert(name.to_string(), s);
        s
    }

    /// The team of these threads (sorted and deduplicated), interning it if new.
    pub fn intern_team(&mut self, threads: &[ThreadId]) -> TeamRef {
        let mut team = threads.to_vec();
        team.sort_unstable();
        team.dedup();
        if let Some(&t) = self.team_index.get(&team) {
            return t;
        }
        let t = TeamRef(self.teams.len() as u32);
        self.teams.push(team.clone());
        self.team_index.insert(team, t);
        t
    }

    /// The name of a symbol. Panics on a symbol of another table.
    pub fn name(&self, s: Sym) -> &str {
        &self.names[s.0 as usize]
    }

    /// The threads of a team. Panics on a team of another table.
    pub fn team(&self, t: TeamRef) -> &[ThreadId] {
        &self.teams[t.0 as usize]
    }

    /// The name of a symbol, or `None` for a symbol of another table.
    pub fn get_name(&self, s: Sym) -> Option<&str> {
        self.names.get(s.0 as usize).map(String::as_str)
    }

    /// The threads of a team, or `None` for a team of another table.
    pub fn get_team(&self, t: TeamRef) -> Option<&[ThreadId]> {
        self.teams.get(t.0 as usize).map(Vec::as_slice)
    }

    /// Number of interned names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when nothing is interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.teams.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable() {
        let mut s = Symbols::default();
        let a = s.intern("fft");
        assert_eq!(s.intern("fft"), a);
        assert_ne!(s.intern("copy"), a);
        assert_eq!(s.name(a), "fft");
        let t = s.intern_team(&[3, 1, 1]);
        assert_eq!(s.intern_team(&[1, 3]), t);
        assert_eq!(s.team(t), [1, 3]);
    }

    #[test]
    fn wait_kinds_round_trip() {
        for k in WaitKind::ALL {
            assert_eq!(WaitKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(WaitKind::parse("spin"), None);
    }

    #[test]
    fn events_are_small() {
        assert!(std::mem::size_of::<Event>() <= 48);
    }
}
