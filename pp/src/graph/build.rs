//! [`Builder`]: the activity graph from the events in time order, in one pass.

use std::collections::VecDeque;

use super::path_graph::{PathGraph, Taken};
use super::spill::Spill;
use super::{ArcKind, Departure, Graph, NO_ARC, Node, RemoteArc};
use crate::event::{Event, EventKind, Header, Sym, ThreadId, WaitKind};
use crate::messages::{Messages, Sent};
// Open regions, barriers and sends by time are looked up for most events: hashed by one
// multiplication, not SipHash, which cost more than the rest of the event.
use crate::profile::sweep::IdMap;

/// An event of the graph: thread, node index, time.
type At = (ThreadId, u32, u64);

/// A barrier is keyed by the innermost region instance of the arriving thread (none: outside
/// every region) and the wait's object.
type BarrierKey = (Option<u64>, Option<Sym>);

/// Builds the activity graph from events in time order (as [`crate::log::LogReader`] gives
/// them). Events of threads at or above `p` are ignored; a thread's time going back is taken
/// as the time before it, as the attribution does.
///
/// [`Builder::new`] keeps the whole graph (a replay needs it: [`Builder::finish`]);
/// [`Builder::compact`] keeps only what the critical path needs, in memory bounded whatever
/// the log's length: the arc the longest path takes into each event reached through one, in a
/// [`Spill`] ([`Builder::finish_path`]).
#[derive(Debug)]
pub struct Builder {
    graph: Graph,
    /// The arcs the longest paths take, when compact (the whole graph is kept otherwise).
    taken: Option<Spill>,
    /// Remote arcs of each kind, in [`ArcKind::ALL`] order.
    arc_counts: [u64; 5],
    /// Barrier episodes opened.
    episodes: u32,
    threads: Vec<ThreadState>,
    messages: Messages,
    regions: IdMap<u64, Region>,
    barriers: IdMap<BarrierKey, Episodes>,
    last_t: u64,
    /// Events added so far (an event's number orders events of one time).
    seq: u64,
    /// Remote arcs into the event being added: (kind, source).
    candidates: Vec<(ArcKind, At)>,
    /// What a streaming replay needs ([`Builder::streaming`]).
    streamed: Option<Streamed>,
}

/// What [`Builder::streaming`] keeps: the arrivals of the barrier episodes still open, and
/// what the latest event added.
#[derive(Debug, Default)]
struct Streamed {
    arrivals: IdMap<u32, Vec<At>>,
    /// The index in [`Added::arcs`] of the arc the longest path takes into the latest event.
    taken: Option<usize>,
    /// The arrivals a departure of the latest event waited for.
    departed: Vec<At>,
    /// The last events of the other members in the region the latest event closed.
    joined: Vec<At>,
}

/// What one event added to the graph ([`Builder::added`], streaming).
#[derive(Debug, Clone, Copy)]
pub struct Added<'a> {
    /// The remote arcs into it, in the order the whole graph has them.
    pub arcs: &'a [RemoteArc],
    /// Which of them the longest path takes ([`Node::arc`]).
    pub taken: Option<usize>,
    /// When it leaves a barrier: the episode's arrivals it waited for (thread, node, time).
    pub departed: Option<&'a [(ThreadId, u32, u64)]>,
    /// When it closes a region: the last event in it of every other member (thread, node,
    /// time). The join's arc comes from the latest of them; a replay in which another member
    /// finishes last must wait for that one too.
    pub joined: &'a [(ThreadId, u32, u64)],
}

#[derive(Debug, Default)]
struct ThreadState {
    /// Open work/wait/comm intervals, innermost last.
    stack: Vec<Open>,
    /// When the thread last became idle (no open interval).
    idle_since: u64,
    /// Open regions this thread is a member of, in opening order.
    regions: Vec<u64>,
    /// Regions opened by another thread in which this thread has had no event yet.
    forks: Vec<u64>,
    /// Its events so far, and the times of its first and last.
    count: u32,
    first_t: u64,
    last_t: u64,
    /// The number ([`Builder::seq`]) of its last event.
    last_seq: u64,
    /// Its sends not yet received, by time: the thread's last event at that time (a
    /// receive's arc leaves from there) and how many of them.
    sends: IdMap<u64, (u32, u32)>,
    /// The time of its latest send, while its events are still at that time.
    send_t: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
struct Open {
    what: Interval,
    since: u64,
    /// For a wait: whether a remote arc came into it (its cause is known).
    caused: bool,
    /// For a barrier wait: its key and episode.
    barrier: Option<(BarrierKey, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interval {
    Work,
    Wait(WaitKind),
    Comm,
}

#[derive(Debug)]
struct Region {
    begin: At,
    /// The number of its opening event: a member's events from there on are in it.
    begin_seq: u64,
    members: u32,
    /// `region_begin`s not yet ended (one thread may record it, or every member).
    opens: u32,
}

/// The open episodes of one barrier, oldest first; `first` numbers the front one.
#[derive(Debug, Default)]
struct Episodes {
    first: u64,
    open: VecDeque<Episode>,
}

#[derive(Debug)]
struct Episode {
    /// Its number in [`Graph::arrivals`].
    id: u32,
    size: u32,
    arrived: u32,
    departed: u32,
    last_arrival: At,
}

impl Builder {
    /// A builder of the whole graph of a run of `header.p` threads.
    pub fn new(header: &Header) -> Self {
        let p = header.p as usize;
        Builder {
            graph: Graph {
                p: header.p,
                threads: vec![Vec::new(); p],
                ..Graph::default()
            },
            taken: None,
            arc_counts: [0; 5],
            episodes: 0,
            threads: (0..p).map(|_| ThreadState::default()).collect(),
            messages: Messages::default(),
            regions: IdMap::default(),
            barriers: IdMap::default(),
            last_t: 0,
            seq: 0,
            candidates: Vec::new(),
            streamed: None,
        }
    }

    /// A builder that keeps no node and no arc: after each event, [`Builder::added`] says
    /// what it added, for a replay that streams the run (docs/whatif.md#cost).
    pub fn streaming(header: &Header) -> Self {
        let mut builder = Builder::new(header);
        builder.graph.threads = Vec::new();
        builder.streamed = Some(Streamed::default());
        builder
    }

    /// What the latest event added ([`Builder::streaming`]; empty otherwise).
    pub fn added(&self) -> Added<'_> {
        let streamed = self.streamed.as_ref();
        Added {
            arcs: if streamed.is_some() {
                &self.graph.arcs
            } else {
                &[]
            },
            taken: streamed.and_then(|s| s.taken),
            departed: streamed
                .filter(|_| !self.graph.departures.is_empty())
                .map(|s| &s.departed[..]),
            joined: streamed.map_or(&[], |s| &s.joined[..]),
        }
    }

    /// Whether every node and arc is kept ([`Builder::new`]).
    fn whole(&self) -> bool {
        self.taken.is_none() && self.streamed.is_none()
    }

    /// A builder of what the critical path needs of the graph ([`PathGraph`]).
    pub fn compact(header: &Header) -> Self {
        let mut builder = Builder::new(header);
        builder.graph.threads = Vec::new();
        builder.taken = Some(Spill::default());
        builder
    }

    /// Adds one event (events in time order).
    pub fn event(&mut self, e: &Event, symbols: &crate::event::Symbols) {
        let i = e.thread as usize;
        if i >= self.threads.len() {
            return;
        }
        let t = e.t.max(self.last_t);
        self.last_t = t;
        if let Some(s) = &mut self.streamed {
            self.graph.arcs.clear();
            self.graph.departures.clear();
            s.taken = None;
            s.departed.clear();
            s.joined.clear();
        }
        let th = e.thread;
        let state = &mut self.threads[i];
        let idx = state.count;
        if idx == 0 {
            state.first_t = t;
        }
        state.count += 1;
        state.last_t = t;
        state.last_seq = self.seq;
        self.seq += 1;
        match state.send_t {
            Some(s) if s == t => {
                if let Some(send) = state.sends.get_mut(&t) {
                    send.0 = idx;
                }
            }
            Some(_) => state.send_t = None,
            None => {}
        }
        if self.whole() {
            self.graph.threads[i].push(Node { t, arc: NO_ARC });
        }
        match self.graph.window {
            None if matches!(e.kind, EventKind::Start) => self.graph.window = Some((t, t)),
            Some((s, _)) => self.graph.window = Some((s, t)),
            None => {}
        }
        let here = (th, idx, t);
        // When the thread began to wait or idle before this event (None: it was busy).
        let blocked_since = match self.threads[i].stack.last() {
            None => Some(self.threads[i].idle_since),
            Some(o) if matches!(o.what, Interval::Wait(_)) => Some(o.since),
            Some(_) => None,
        };
        self.candidates.clear();
        // Fork: this thread's first event in regions another thread opened, after its
        // `start` (a thread the fork starts records it first). A member that records its own
        // `region_begin` of the region (as every MPI rank does) entered it by itself.
        if !self.threads[i].forks.is_empty() && !matches!(e.kind, EventKind::Start) {
            for id in std::mem::take(&mut self.threads[i].forks) {
                let own = matches!(e.kind, EventKind::RegionBegin { id: own, .. } if own == id);
                if let Some(r) = self.regions.get(&id)
                    && !own
                {
                    self.candidates.push((ArcKind::Fork, r.begin));
                }
            }
        }
        match e.kind {
            EventKind::WorkBegin { .. } => self.push(i, Interval::Work, t, None),
            EventKind::CommBegin { .. } => self.push(i, Interval::Comm, t, None),
            EventKind::WaitBegin { kind, object } => {
                let barrier = (kind == WaitKind::Barrier).then(|| self.arrive(i, object, here));
                self.push(i, Interval::Wait(kind), t, barrier);
            }
            EventKind::WorkEnd { .. } => {
                self.pop(i, Interval::Work, t);
            }
            EventKind::CommEnd { .. } => {
                self.pop(i, Interval::Comm, t);
            }
            EventKind::WaitEnd { kind, by, .. } => {
                if let Some(open) = self.pop(i, Interval::Wait(kind), t) {
                    self.wait_end(i, t, open, by);
                }
            }
            EventKind::Stop => {
                self.threads[i].stack.clear();
                self.threads[i].idle_since = t;
            }
            // The cause arc of a wait ended `by=` comes from the releaser at the wait's end.
            EventKind::Release { .. } => {}
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
            } => {
                self.messages.send(comm, th, peer, tag, Sent { t, bytes });
                let state = &mut self.threads[i];
                state.sends.entry(t).or_insert((idx, 0)).1 += 1;
                state.send_t = Some(t);
            }
            EventKind::Recv {
                peer, tag, comm, ..
            } => {
                if let Some(sent) = self.messages.recv(comm, peer, th, tag)
                    && let Some(from) = self.sent_from(peer, sent.t)
                {
                    self.candidates.push((ArcKind::Message, from));
                }
            }
            EventKind::RegionBegin { id, team, .. } => match self.regions.get_mut(&id) {
                Some(r) => r.opens += 1,
                None => {
                    let members: Vec<ThreadId> = match team.and_then(|t| symbols.get_team(t)) {
                        Some(team) => team.to_vec(),
                        None if team.is_some() => Vec::new(),
                        None => (0..self.graph.p).collect(),
                    };
                    for &m in &members {
                        if let Some(state) = self.threads.get_mut(m as usize) {
                            state.regions.push(id);
                            if m != th {
                                state.forks.push(id);
                            }
                        }
                    }
                    self.regions.insert(
                        id,
                        Region {
                            begin: here,
                            begin_seq: self.threads[i].last_seq,
                            members: members.len() as u32,
                            opens: 1,
                        },
                    );
                }
            },
            EventKind::RegionEnd { id } => self.region_end(th, id),
            // A thread is idle from the start of time until its first interval (so that a
            // fork that starts it is its cause).
            EventKind::Start
            | EventKind::Cpu { .. }
            | EventKind::Phase { .. }
            | EventKind::Coll { .. } => {}
        }
        self.attach(i, idx, blocked_since);
    }

    /// Adds the candidate arcs into node `idx` of thread `i`, and takes the latest whose
    /// source came after the thread began to wait or idle.
    fn attach(&mut self, i: usize, idx: u32, blocked_since: Option<u64>) {
        if self.candidates.is_empty() {
            return;
        }
        let mut best: Option<(u64, u32, RemoteArc)> = None;
        for &(kind, (from, from_node, from_t)) in &self.candidates {
            let arcs: u64 = self.arc_counts.iter().sum();
            if from as usize == i || arcs >= u64::from(NO_ARC) {
                continue;
            }
            let a = arcs as u32;
            self.arc_counts[kind as usize] += 1;
            let arc = RemoteArc {
                kind,
                from,
                from_node,
                from_t,
                to: i as ThreadId,
                to_node: idx,
            };
            if self.taken.is_none() {
                self.graph.arcs.push(arc);
            }
            if let Some(s) = &mut self.streamed
                && blocked_since.is_some_and(|b| from_t > b)
                && best.is_none_or(|(t, _, _)| from_t > t)
            {
                s.taken = Some(self.graph.arcs.len() - 1);
            }
            if blocked_since.is_some_and(|b| from_t > b) && best.is_none_or(|(t, _, _)| from_t > t)
            {
                best = Some((from_t, a, arc));
            }
            if let Some(o) = self.threads[i].stack.last_mut()
                && matches!(o.what, Interval::Wait(_))
            {
                o.caused = true;
            }
        }
        match (best, &mut self.taken) {
            (Some((_, _, arc)), Some(taken)) => {
                let t = self.threads[i].last_t;
                taken.push(&Taken { t, arc }.to_bytes());
            }
            (Some((_, a, _)), None) if self.streamed.is_none() => {
                self.graph.threads[i][idx as usize].arc = a
            }
            (Some(_), None) | (None, _) => {}
        }
    }

    fn push(&mut self, i: usize, what: Interval, t: u64, barrier: Option<(BarrierKey, u64)>) {
        self.threads[i].stack.push(Open {
            what,
            since: t,
            caused: false,
            barrier,
        });
    }

    /// Closes the innermost open interval of this type (and those inside it); `None` when
    /// there is none.
    fn pop(&mut self, i: usize, what: Interval, t: u64) -> Option<Open> {
        let same = |o: &Open| match (o.what, what) {
            (Interval::Wait(_), Interval::Wait(_)) => true,
            (a, b) => a == b,
        };
        let state = &mut self.threads[i];
        let at = state.stack.iter().rposition(same)?;
        let open = state.stack[at];
        state.stack.truncate(at);
        if state.stack.is_empty() {
            state.idle_since = t;
        }
        Some(open)
    }

    /// A wait ends: its cause is the barrier's last arrival, the thread `by` names, or a
    /// message received in it; otherwise it is counted as unknown.
    fn wait_end(&mut self, i: usize, t: u64, open: Open, by: Option<ThreadId>) {
        let mut known = open.caused;
        if let Some((key, n)) = open.barrier {
            known = true;
            if let Some((from, episode, arrived)) = self.depart(key, n) {
                self.candidates.push((ArcKind::Barrier, from));
                let node = self.threads[i].count - 1;
                if self.taken.is_none() {
                    self.graph.departures.push(Departure {
                        thread: i as ThreadId,
                        node,
                        episode,
                        arrived,
                    });
                }
            }
        }
        if let Some(by) = by {
            known = true;
            if by as usize != i
                && let Some(&(by, node, _)) = self.latest(by).as_ref()
            {
                self.candidates.push((ArcKind::Cause, (by, node, t)));
            }
        }
        if !known {
            self.graph.unknown_causes += 1;
        }
    }

    /// The latest node of thread `th` (events come in time order: its last at or before now).
    fn latest(&self, th: ThreadId) -> Option<At> {
        let state = self.threads.get(th as usize)?;
        let k = state.count.checked_sub(1)?;
        Some((th, k, state.last_t))
    }

    /// The last node of thread `th` at or before `t`, the time of one of its sends not yet
    /// received; that send is now received.
    fn sent_from(&mut self, th: ThreadId, t: u64) -> Option<At> {
        let sends = &mut self.threads.get_mut(th as usize)?.sends;
        let (node, left) = sends.get_mut(&t)?;
        let node = *node;
        *left -= 1;
        if *left == 0 {
            sends.remove(&t);
        }
        Some((th, node, t))
    }

    /// Thread `i` arrives at a barrier: it joins the newest episode that is not full, or
    /// opens one. Returns the key and the episode's number.
    fn arrive(&mut self, i: usize, object: Option<Sym>, here: At) -> (BarrierKey, u64) {
        let region = self.threads[i].regions.last().copied();
        let size = region
            .and_then(|id| self.regions.get(&id))
            .map_or(self.graph.p, |r| r.members.max(1));
        let key = (region, object);
        let eps = self.barriers.entry(key).or_default();
        match eps.open.back_mut() {
            Some(ep) if ep.arrived < ep.size => {
                ep.arrived += 1;
                ep.last_arrival = here;
                if let Some(s) = &mut self.streamed {
                    s.arrivals.entry(ep.id).or_default().push(here);
                } else if self.taken.is_none() {
                    self.graph.arrivals[ep.id as usize].push((here.0, here.1));
                }
            }
            _ => eps.open.push_back(Episode {
                id: {
                    if let Some(s) = &mut self.streamed {
                        s.arrivals.insert(self.episodes, vec![here]);
                    } else if self.taken.is_none() {
                        self.graph.arrivals.push(vec![(here.0, here.1)]);
                    }
                    self.episodes += 1;
                    self.episodes - 1
                },
                size,
                arrived: 1,
                departed: 0,
                last_arrival: here,
            }),
        }
        (key, eps.first + eps.open.len() as u64 - 1)
    }

    /// A thread leaves episode `n` of a barrier: the last arrival so far is its cause; also
    /// the episode's number and how many had arrived. Episodes every arrival of which has left
    /// are dropped.
    fn depart(&mut self, key: BarrierKey, n: u64) -> Option<(At, u32, u32)> {
        let eps = self.barriers.get_mut(&key)?;
        let ep = eps.open.get_mut(n.checked_sub(eps.first)? as usize)?;
        ep.departed += 1;
        let from = (ep.last_arrival, ep.id, ep.arrived);
        if let Some(s) = &mut self.streamed
            && let Some(arrivals) = s.arrivals.get(&ep.id)
        {
            s.departed.clear();
            s.departed
                .extend_from_slice(&arrivals[..ep.arrived as usize]);
        }
        while eps
            .open
            .front()
            .is_some_and(|e| e.arrived == e.size && e.departed >= e.arrived)
        {
            if let (Some(e), Some(s)) = (eps.open.pop_front(), &mut self.streamed) {
                s.arrivals.remove(&e.id);
            }
            eps.first += 1;
        }
        if eps.open.is_empty() {
            self.barriers.remove(&key);
        }
        Some(from)
    }

    /// A `region_end`: the region closes at its last end; the latest event of another member
    /// in it is the join's source.
    fn region_end(&mut self, th: ThreadId, id: u64) {
        let Some(r) = self.regions.get_mut(&id) else {
            return;
        };
        r.opens -= 1;
        if r.opens > 0 {
            return;
        }
        let Some(r) = self.regions.remove(&id) else {
            return;
        };
        // The join's source: the latest event in the region of a member other than this
        // thread (a member's latest event is in the region if it came after the opening:
        // membership lasts until the region closes).
        let mut from: Option<(u64, At)> = None;
        for (j, state) in self.threads.iter_mut().enumerate() {
            if let Some(k) = state.regions.iter().rposition(|&r| r == id) {
                state.regions.remove(k);
                if j != th as usize && state.count > 0 && state.last_seq >= r.begin_seq {
                    let at = (j as ThreadId, state.count - 1, state.last_t);
                    if from.is_none_or(|(seq, _)| state.last_seq > seq) {
                        from = Some((state.last_seq, at));
                    }
                    if let Some(s) = &mut self.streamed {
                        s.joined.push(at);
                    }
                }
            }
            if let Some(k) = state.forks.iter().position(|&r| r == id) {
                state.forks.remove(k);
            }
        }
        if let Some((_, from)) = from {
            self.candidates.push((ArcKind::Join, from));
        }
    }

    /// The whole graph (empty of nodes and arcs when [`Builder::compact`]).
    pub fn finish(self) -> Graph {
        self.graph
    }

    /// What the critical path needs of the graph (its taken arcs empty unless
    /// [`Builder::compact`]).
    pub fn finish_path(self) -> PathGraph {
        PathGraph {
            p: self.graph.p,
            counts: self.threads.iter().map(|s| s.count).collect(),
            first_t: self.threads.iter().map(|s| s.first_t).collect(),
            last_t: self.threads.iter().map(|s| s.last_t).collect(),
            window: self.graph.window,
            unknown_causes: self.graph.unknown_causes,
            arc_counts: self.arc_counts,
            taken: self.taken.unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Symbols;

    fn graph(p: u32, events: &[(u64, ThreadId, EventKind)]) -> Graph {
        let symbols = Symbols::default();
        let mut b = Builder::new(&Header { p, params: vec![] });
        for &(t, thread, kind) in events {
            b.event(&Event { t, thread, kind }, &symbols);
        }
        b.finish()
    }

    fn wait(kind: WaitKind, end: bool) -> EventKind {
        if end {
            EventKind::WaitEnd {
                kind,
                object: None,
                by: None,
            }
        } else {
            EventKind::WaitBegin { kind, object: None }
        }
    }

    #[test]
    fn a_thread_back_at_a_barrier_joins_its_next_round() {
        use EventKind::{Start, Stop};
        let b = WaitKind::Barrier;
        // Round 1: thread 1 arrives last (20); thread 0 leaves at 21, arrives again at 25
        // (round 2) before thread 1 leaves round 1 at 30; thread 1 arrives at 40 and both
        // leave round 2 at 41.
        let g = graph(
            2,
            &[
                (0, 0, Start),
                (0, 1, Start),
                (10, 0, wait(b, false)),
                (20, 1, wait(b, false)),
                (21, 0, wait(b, true)),
                (25, 0, wait(b, false)),
                (30, 1, wait(b, true)),
                (40, 1, wait(b, false)),
                (41, 0, wait(b, true)),
                (41, 1, wait(b, true)),
                (50, 0, Stop),
                (50, 1, Stop),
            ],
        );
        let arcs: Vec<(ThreadId, u64, ThreadId, u32)> = g
            .arcs
            .iter()
            .map(|a| (a.from, a.from_t, a.to, a.to_node))
            .collect();
        // Round 1: thread 1's arrival releases thread 0; round 2: thread 1's arrival (40)
        // again, not thread 0's arrival at 25 for thread 1's departure from round 1.
        assert_eq!(arcs, [(1, 20, 0, 2), (1, 40, 0, 4)]);
        assert_eq!(g.threads[0][2].arc, 0);
        assert_eq!(g.threads[0][4].arc, 1);
        assert_eq!(g.unknown_causes, 0);
    }

    #[test]
    fn a_cause_before_the_wait_is_not_taken() {
        use EventKind::{Start, Stop};
        let r = WaitKind::Recv;
        let send = EventKind::Send {
            peer: 1,
            tag: 0,
            bytes: 8,
            comm: None,
        };
        let recv = EventKind::Recv {
            peer: 0,
            tag: 0,
            bytes: 8,
            comm: None,
        };
        let g = graph(
            2,
            &[
                (0, 0, Start),
                (0, 1, Start),
                (0, 1, EventKind::WorkBegin { label: None }),
                (5, 0, send),
                (10, 1, EventKind::WorkEnd { label: None }),
                (10, 1, wait(r, false)),
                (12, 1, recv),
                (12, 1, wait(r, true)),
                (20, 0, Stop),
                (20, 1, Stop),
            ],
        );
        assert_eq!(g.arcs.len(), 1);
        assert_eq!(g.threads[1][4].arc, NO_ARC);
        assert_eq!(g.window, Some((0, 20)));
    }
}
