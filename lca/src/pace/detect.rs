//! What one measured log shows of the template (docs/pace.md#how-the-template-is-derived):
//! each region's instances, teams, innermost activity, copy sizes per member, and what each
//! wait with `by=` waited for; and the run's window around its regions.

use std::collections::{BTreeMap, HashMap, VecDeque};

use anyhow::Result;
use pp::event::{EventKind, ThreadId, WaitKind};

use super::messages::Exchange;
use pp::log::LogReader;

/// One region's structure in one log.
#[derive(Debug, Clone, Default)]
pub struct RegionSeen {
    /// Instances (each id opened once counts one).
    pub instances: u64,
    /// Distinct teams (sorted thread ids), with how many instances had each.
    pub teams: BTreeMap<Vec<ThreadId>, u64>,
    /// Innermost `work`, `comm` and `wait` intervals begun in it.
    pub work: u64,
    /// Innermost `comm` intervals begun in it.
    pub comm: u64,
    /// Waits begun in it.
    pub waits: u64,
    /// Bytes of every `comm` interval begun in it, by instance: each member's sum.
    pub bytes: Vec<BTreeMap<ThreadId, u64>>,
    /// For waits ended `by=` another thread: (region that released it, lag in instances)
    /// and how many times.
    pub released_by: BTreeMap<(String, i64), u64>,
    /// Rank of the first begin in the log (the order regions first appear).
    pub first: u64,
    /// Per instance without waits: the part of its length in which none of its members
    /// computed or copied (the fork, the join and the wake-ups between), ns. Not its length
    /// less its busiest member's busy time: on a loaded machine the members often ran one
    /// after another on one core, and that measure then held a member's whole work.
    pub fork_join_ns: Vec<u64>,
}

/// One log's structure.
#[derive(Debug, Clone, Default)]
pub struct LogSeen {
    /// Threads.
    pub p: u32,
    /// The header's parameters.
    pub params: Vec<(String, String)>,
    /// By region name.
    pub regions: BTreeMap<String, RegionSeen>,
    /// ns from the first event to the first region's begin.
    pub startup_ns: u64,
    /// ns from the last region's end to the last event.
    pub teardown_ns: u64,
    /// Per wait ended `by=` another thread: from the end of the releaser's region to the
    /// wait's end, ns.
    pub handoff_ns: Vec<u64>,
    /// Per rank, the message exchanges it took part in, in order (an MPI log; empty without
    /// messages): its sends and the receives that follow them ([`Exchange`]).
    pub exchanges: Vec<Vec<Exchange>>,
    /// Collective operations (`coll` events) by operation, over all ranks.
    pub collectives: BTreeMap<String, u64>,
    /// The log's first and last events, ns.
    pub first_ns: u64,
    /// See `first_ns`.
    pub last_ns: u64,
}

/// Each rank's exchanges as the log goes: a rank's exchange is its sends and the receives
/// that follow them, until its next send after a receive
/// (docs/pace.md#how-the-template-is-derived).
#[derive(Default)]
struct Exchanges {
    done: Vec<Vec<Exchange>>,
    open: Vec<Option<Exchange>>,
    wait_begin: Vec<Option<u64>>,
    latest_send: Vec<Option<u64>>,
    /// Send times not received yet, by (sender, receiver, tag, communicator).
    sends: HashMap<(u32, u32, u32, Option<u32>), VecDeque<u64>>,
}

impl Exchanges {
    fn new(p: u32) -> Self {
        Exchanges {
            done: vec![Vec::new(); p as usize],
            open: vec![None; p as usize],
            wait_begin: vec![None; p as usize],
            latest_send: vec![None; p as usize],
            sends: HashMap::new(),
        }
    }

    fn current(&mut self, t: usize, at: u64, new_if_received: bool) -> &mut Exchange {
        if new_if_received
            && self.open[t]
                .as_ref()
                .is_some_and(|x| !x.received.is_empty())
        {
            let x = self.open[t].take().expect("open");
            self.done[t].push(x);
        }
        self.open[t].get_or_insert_with(|| Exchange {
            begin_ns: at,
            end_ns: at,
            ..Exchange::default()
        })
    }

    fn event(&mut self, t: usize, e: &pp::event::Event) {
        match e.kind {
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
            } => {
                let x = self.current(t, e.t, true);
                x.sent.push((peer, bytes));
                x.end_ns = e.t;
                self.sends
                    .entry((t as u32, peer, tag, comm.map(|c| c.0)))
                    .or_default()
                    .push_back(e.t);
            }
            EventKind::Recv {
                peer,
                tag,
                bytes,
                comm,
            } => {
                let sent = self
                    .sends
                    .get_mut(&(peer, t as u32, tag, comm.map(|c| c.0)))
                    .and_then(|q| q.pop_front());
                if let Some(s) = sent {
                    let l = &mut self.latest_send[t];
                    *l = Some(l.map_or(s, |x| x.max(s)));
                }
                let x = self.current(t, e.t, false);
                x.received.push((peer, bytes));
                x.end_ns = e.t;
            }
            EventKind::WaitBegin {
                kind: WaitKind::Recv,
                ..
            } => {
                self.wait_begin[t] = Some(e.t);
                self.latest_send[t] = None;
            }
            EventKind::WaitEnd {
                kind: WaitKind::Recv,
                ..
            } => {
                let begin = self.wait_begin[t].take();
                let latest = self.latest_send[t].take();
                if let Some(x) = self.open[t].as_mut()
                    && !x.received.is_empty()
                {
                    x.end_ns = e.t;
                    if let (Some(b), Some(s)) = (begin, latest) {
                        x.transfer_ns = Some(e.t.saturating_sub(b.max(s)));
                    }
                }
            }
            _ => {}
        }
    }

    fn finish(mut self) -> Vec<Vec<Exchange>> {
        if self.sends.values().all(VecDeque::is_empty)
            && self.done.iter().all(Vec::is_empty)
            && self.open.iter().all(Option::is_none)
        {
            return Vec::new();
        }
        for (t, x) in self.open.iter_mut().enumerate() {
            if let Some(x) = x.take() {
                self.done[t].push(x);
            }
        }
        self.done
    }
}

#[derive(Debug, Clone)]
struct Open {
    name: String,
    instance: u64,
    begin: u64,
    /// Members computing or copying now, since when some have been, and the time in all
    /// during which some were.
    active: u32,
    active_since: u64,
    active_ns: u64,
    /// Whether any member computed or copied in it.
    busy: bool,
    waited: bool,
}

/// Reads a log's structure.
pub fn detect(mut reader: LogReader) -> Result<LogSeen> {
    let header = reader.header().clone();
    let p = header.p;
    let mut seen = LogSeen {
        p,
        params: header.params.clone(),
        ..LogSeen::default()
    };
    let mut open: HashMap<u64, Open> = HashMap::new();
    // Per thread: the regions it is in (innermost last), and the last one that ended while it
    // was in it (name, instance).
    let mut inside: Vec<Vec<u64>> = vec![Vec::new(); p as usize];
    let mut last_ended: Vec<Option<(String, u64)>> = vec![None; p as usize];
    let mut ended_at: Vec<u64> = vec![0; p as usize];
    let mut busy_since: Vec<Option<u64>> = vec![None; p as usize];
    let (mut first_t, mut last_t) = (None::<u64>, 0u64);
    let (mut first_region, mut last_region_end) = (None::<u64>, None::<u64>);
    let mut rank = 0u64;
    let mut exchanges = Exchanges::new(p);
    while let Some(e) = reader.next_event() {
        let e = e?;
        first_t.get_or_insert(e.t);
        last_t = last_t.max(e.t);
        let t = e.thread as usize;
        if t >= inside.len() {
            continue;
        }
        exchanges.event(t, &e);
        if let EventKind::Coll { op, .. } = e.kind {
            *seen
                .collectives
                .entry(reader.symbols().name(op).to_string())
                .or_default() += 1;
        }
        let symbols = reader.symbols();
        let innermost = |inside: &Vec<Vec<u64>>, open: &HashMap<u64, Open>| {
            inside[t].last().and_then(|id| open.get(id)).cloned()
        };
        match e.kind {
            EventKind::RegionBegin { id, name, team } => {
                first_region.get_or_insert(e.t);
                let name = symbols.name(name).to_string();
                let members: Vec<ThreadId> = match team {
                    Some(team) => symbols.team(team).to_vec(),
                    None => (0..p).collect(),
                };
                if let std::collections::hash_map::Entry::Vacant(slot) = open.entry(id) {
                    let r = seen
                        .regions
                        .entry(name.clone())
                        .or_insert_with(|| RegionSeen {
                            first: rank,
                            ..RegionSeen::default()
                        });
                    rank += 1;
                    let instance = r.instances;
                    r.instances += 1;
                    *r.teams.entry(members.clone()).or_default() += 1;
                    r.bytes.push(BTreeMap::new());
                    slot.insert(Open {
                        name,
                        instance,
                        begin: e.t,
                        active: 0,
                        active_since: e.t,
                        active_ns: 0,
                        busy: false,
                        waited: false,
                    });
                    for m in members {
                        if let Some(s) = inside.get_mut(m as usize) {
                            s.push(id);
                        }
                    }
                }
            }
            EventKind::RegionEnd { id } => {
                if let Some(o) = open.remove(&id) {
                    last_region_end = Some(e.t);
                    if !o.waited && o.busy {
                        let open_ns = if o.active > 0 {
                            e.t.saturating_sub(o.active_since)
                        } else {
                            0
                        };
                        if let Some(r) = seen.regions.get_mut(&o.name) {
                            r.fork_join_ns
                                .push((e.t - o.begin).saturating_sub(o.active_ns + open_ns));
                        }
                    }
                    for (k, s) in inside.iter_mut().enumerate() {
                        if let Some(pos) = s.iter().rposition(|&x| x == id) {
                            s.remove(pos);
                            last_ended[k] = Some((o.name.clone(), o.instance));
                            ended_at[k] = e.t;
                        }
                    }
                    last_ended[t] = Some((o.name, o.instance));
                    ended_at[t] = e.t;
                }
            }
            EventKind::WorkEnd { .. } | EventKind::CommEnd { .. } => {
                if busy_since[t].take().is_some()
                    && let Some(id) = inside[t].last()
                    && let Some(o) = open.get_mut(id)
                    && o.active > 0
                {
                    o.active -= 1;
                    if o.active == 0 {
                        o.active_ns += e.t.saturating_sub(o.active_since);
                    }
                }
            }
            EventKind::WorkBegin { .. } => {
                begin_busy(t, e.t, &mut busy_since, &inside, &mut open);
                if let Some(o) = innermost(&inside, &open)
                    && let Some(r) = seen.regions.get_mut(&o.name)
                {
                    r.work += 1;
                }
            }
            EventKind::CommBegin { bytes } => {
                begin_busy(t, e.t, &mut busy_since, &inside, &mut open);
                if let Some(o) = innermost(&inside, &open)
                    && let Some(r) = seen.regions.get_mut(&o.name)
                {
                    r.comm += 1;
                    if let Some(b) = r.bytes.get_mut(o.instance as usize) {
                        *b.entry(e.thread).or_default() += bytes;
                    }
                }
            }
            EventKind::WaitBegin { .. } => {
                if let Some(id) = inside[t].last()
                    && let Some(o) = open.get_mut(id)
                {
                    o.waited = true;
                    if let Some(r) = seen.regions.get_mut(&o.name) {
                        r.waits += 1;
                    }
                }
            }
            EventKind::WaitEnd { by: Some(by), .. } => {
                let Some(o) = innermost(&inside, &open) else {
                    continue;
                };
                // The releaser's region: the last one it left (a hand-off at a region's end),
                // else the one it is in. A releaser that ran on before the waiter woke gives
                // a later region, of a negative lag, which the builder's vote ignores.
                if let Some(&at) = ended_at.get(by as usize)
                    && last_ended[by as usize].is_some()
                    && at <= e.t
                {
                    seen.handoff_ns.push(e.t - at);
                }
                let from = last_ended.get(by as usize).cloned().flatten().or_else(|| {
                    innermost_of(by as usize, &inside, &open).map(|x| (x.name, x.instance))
                });
                if let (Some((name, instance)), Some(r)) = (from, seen.regions.get_mut(&o.name)) {
                    let lag = o.instance as i64 - instance as i64;
                    *r.released_by.entry((name, lag)).or_default() += 1;
                }
            }
            _ => {}
        }
    }
    seen.exchanges = exchanges.finish();
    seen.first_ns = first_t.unwrap_or(0);
    seen.last_ns = last_t;
    let first = first_t.unwrap_or(0);
    seen.startup_ns = first_region.map_or(0, |r| r - first);
    seen.teardown_ns = last_region_end.map_or(0, |r| last_t - r);
    Ok(seen)
}

/// Thread `t` begins computing or copying at `at`, inside its innermost region.
fn begin_busy(
    t: usize,
    at: u64,
    busy_since: &mut [Option<u64>],
    inside: &[Vec<u64>],
    open: &mut HashMap<u64, Open>,
) {
    if busy_since[t].replace(at).is_some() {
        return;
    }
    if let Some(id) = inside[t].last()
        && let Some(o) = open.get_mut(id)
    {
        if o.active == 0 {
            o.active_since = at;
        }
        o.active += 1;
        o.busy = true;
    }
}

fn innermost_of(t: usize, inside: &[Vec<u64>], open: &HashMap<u64, Open>) -> Option<Open> {
    inside.get(t)?.last().and_then(|id| open.get(id)).cloned()
}
