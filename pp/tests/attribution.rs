//! The attribution against an independent brute force: random schedules (regions with teams, work
//! with waits and comm inside, top-level waits and comm, idle gaps, phases, cpu samples) are
//! attributed by the streaming sweep and by sampling every nanosecond of the window with
//! docs/attribution.md's rules written out as plain conditions. Every category of every thread must
//! agree exactly, and the categories must sum to `p × wall`; so must the breakdowns by innermost
//! region and by phase (before rc.cpu, which is shared over them in integer parts).

use std::collections::{BTreeMap, VecDeque};

use pp::event::{Event, EventKind, Header, Sym, Symbols, WaitKind};
use pp::machine::Machine;
use pp::profile::{CATEGORIES, Category, Sweep, Totals};
use proptest::prelude::*;

/// A small deterministic generator (xorshift), driven by proptest's seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const HORIZON: u64 = 300;

/// Random events of `p` threads, in time order, with the order they were made in for equal
/// times.
struct Schedule {
    events: Vec<(u64, usize, Event)>,
}

impl Schedule {
    fn push(&mut self, t: u64, thread: u32, kind: EventKind) {
        let order = self.events.len();
        self.events.push((t, order, Event { t, thread, kind }));
    }

    /// Thread `from` sends `bytes` to `to` with `tag` at `t` (on the world communicator).
    fn send(&mut self, t: u64, from: u32, to: u32, tag: u32, bytes: u64) {
        let (peer, comm) = (to, None);
        self.push(
            t,
            from,
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
            },
        );
    }
}

/// Random valid events of `p` threads, in time order.
fn schedule(seed: u64, p: u32) -> (Vec<Event>, Symbols) {
    let mut rng = Rng(seed | 1);
    let mut symbols = Symbols::default();
    let names = ["a", "b", "c"].map(|n| symbols.intern(n));
    let mut s = Schedule { events: Vec::new() };
    // Regions first, so that messages are received only in waits that no region boundary
    // cuts (a region beginning or ending at the wait's end counts: its event comes first):
    // pp splits a receive's wait where it ends, in the context (region, phase) it ends in,
    // and leaves as `sl` the part of the transfer that lies in an earlier context.
    let mut boundaries = Vec::new();
    for id in 0..rng.below(5) {
        let begin = rng.below(HORIZON);
        let end = begin + rng.below(HORIZON / 2);
        let team = if rng.chance(50) {
            let members: Vec<u32> = (0..p).filter(|_| rng.chance(60)).collect();
            Some(symbols.intern_team(&members))
        } else {
            None
        };
        let name = names[rng.below(3) as usize];
        let by = rng.below(p as u64) as u32;
        s.push(begin, by, EventKind::RegionBegin { id, name, team });
        s.push(end, by, EventKind::RegionEnd { id });
        boundaries.extend([begin, end]);
    }
    // Messages received: (sender, receiver, time received, tag, bytes); sent at the end.
    let mut messages: Vec<(u32, u32, u64, u32, u64)> = Vec::new();
    // A wait of `kind` by `thread` over `[t, t + len]`; a `recv` wait that no region boundary
    // cuts mostly receives one or two messages inside.
    let mut wait = |s: &mut Schedule, rng: &mut Rng, thread: u32, t: u64, len: u64, kind| {
        s.push(t, thread, EventKind::WaitBegin { kind, object: None });
        let uncut = !boundaries.iter().any(|&b| t < b && b <= t + len);
        if kind == WaitKind::Recv && uncut && t > 0 && rng.chance(70) {
            for _ in 0..1 + rng.below(2) {
                let at = t + rng.below(len + 1);
                let (peer, tag, bytes) = (
                    rng.below(p as u64) as u32,
                    rng.below(2) as u32,
                    rng.below(4096),
                );
                messages.push((peer, thread, at, tag, bytes));
                let comm = None;
                s.push(
                    at,
                    thread,
                    EventKind::Recv {
                        peer,
                        tag,
                        bytes,
                        comm,
                    },
                );
            }
        }
        // A lock or condition wait names who ended it, mostly.
        let by = (matches!(kind, WaitKind::Lock | WaitKind::Cond) && rng.chance(70))
            .then(|| rng.below(p as u64) as u32);
        s.push(
            t + len,
            thread,
            EventKind::WaitEnd {
                kind,
                object: None,
                by,
            },
        );
    };
    for thread in 0..p {
        if rng.chance(10) {
            continue; // a thread that never starts
        }
        let mut t = rng.below(30);
        let (mut cpu, mut delay) = (0, 0);
        s.push(t, thread, EventKind::Start);
        while t < HORIZON {
            let step = 1 + rng.below(20);
            match rng.below(6) {
                0 => t += step, // idle gap
                1 => {
                    s.push(t, thread, EventKind::WorkBegin { label: None });
                    let end = t + step + rng.below(30);
                    while t < end {
                        t += 1 + rng.below(8);
                        if rng.chance(15) {
                            // An unlock or a notify: what may release others' waits.
                            let kind = [WaitKind::Lock, WaitKind::Cond][rng.below(2) as usize];
                            s.push(t, thread, EventKind::Release { kind, object: None });
                        }
                        if rng.chance(30) {
                            let len = rng.below(10);
                            if rng.chance(50) {
                                let kind = WaitKind::ALL[rng.below(6) as usize];
                                wait(&mut s, &mut rng, thread, t, len, kind);
                            } else {
                                let bytes = rng.below(4096);
                                s.push(t, thread, EventKind::CommBegin { bytes });
                                s.push(t + len, thread, EventKind::CommEnd { bytes });
                            }
                            t += len;
                        }
                    }
                    s.push(t, thread, EventKind::WorkEnd { label: None });
                }
                2 => {
                    let kind = WaitKind::ALL[rng.below(6) as usize];
                    wait(&mut s, &mut rng, thread, t, step, kind);
                    t += step;
                }
                3 => {
                    s.push(t, thread, EventKind::CommBegin { bytes: 64 });
                    t += step;
                    s.push(t, thread, EventKind::CommEnd { bytes: 64 });
                }
                4 => {
                    let name = names[rng.below(3) as usize];
                    s.push(t, thread, EventKind::Phase { name });
                    t += rng.below(3);
                }
                _ => {
                    // CPU clock advances by at most the elapsed time, sometimes much less;
                    // most samples carry a run-queue delay, which grows by a few ns.
                    cpu += rng.below(t + 1 - cpu.min(t));
                    delay += rng.below(15);
                    let run_delay_ns = rng.chance(70).then_some(delay);
                    s.push(
                        t,
                        thread,
                        EventKind::Cpu {
                            thread_cpu_ns: cpu,
                            run_delay_ns,
                        },
                    );
                    t += rng.below(3);
                }
            }
        }
        s.push(t + rng.below(10), thread, EventKind::Stop);
    }
    // Each message's send, strictly before its receive (so before it in time order), and a
    // few sends nobody receives. A channel's receives match its sends oldest first, which
    // need not be the pairs made here (their bytes may then differ: rule 20 warns).
    for (from, to, at, tag, bytes) in messages {
        s.send(rng.below(at), from, to, tag, bytes);
    }
    for _ in 0..rng.below(3) {
        let (from, to) = (rng.below(p as u64) as u32, rng.below(p as u64) as u32);
        s.send(rng.below(HORIZON), from, to, 0, 8);
    }
    let mut events = s.events;
    events.sort_by_key(|&(t, order, _)| (t, order));
    (events.into_iter().map(|(_, _, e)| e).collect(), symbols)
}

/// A fast machine: moving `b` bytes ideally takes `2 + b/512` ns, so that the generated
/// comm intervals (up to ~20 ns, up to 4 KiB) are sometimes within, sometimes beyond it; an
/// MPI message of `b` bytes `3 + b/1024` ns.
fn machine() -> Machine {
    Machine::parse(
        "test",
        "[about]\nhost = \"t\"\ncores = 2\nmeasured_at = 0\npp_version = \"0\"\n\
         [copy]\npoints = []\n[[copy.segments]]\nfrom_bytes = 0\nto_bytes = 1099511627776\n\
         alpha_ns = 2.0\nbeta_bytes_per_ns = 512.0\n\
         [handoff]\nreps = 1\nmin_ns = 1.0\nmedian_ns = 1.0\ncv = 0.0\nflagged = false\n\
         [mpi]\nlibrary = \"test\"\nlocality = \"node\"\npoints = []\n[[mpi.segments]]\n\
         from_bytes = 0\nto_bytes = 1099511627776\nalpha_ns = 3.0\nbeta_bytes_per_ns = 1024.0\n",
    )
    .unwrap()
}

/// What the brute force finds: ns per category per thread, and per innermost region and per
/// phase (keyed by name, `None` outside regions / before a phase) with rc.cpu not yet moved
/// out of pc (the sweep shares it over regions and phases in integer parts).
#[derive(Debug)]
struct Expected {
    by_thread: Vec<[u64; 6]>,
    by_region: BTreeMap<Option<Sym>, [u64; 6]>,
    by_phase: BTreeMap<Option<Sym>, [u64; 6]>,
}

/// Stretches of time as `(from, to)`.
type Stretches = Vec<(u64, u64)>;

/// docs/attribution.md by sampling every nanosecond.
fn brute_force(
    p: u32,
    events: &[Event],
    symbols: &Symbols,
    machine: Option<&Machine>,
) -> Option<Expected> {
    let p = p as usize;
    let start = events
        .iter()
        .filter(|e| e.kind == EventKind::Start)
        .map(|e| e.t)
        .min()?;
    // The window ends at the last stop, or at a later event (region events in this generator
    // may fall outside the recording thread's lifetime; the sweep warns and extends).
    let end = events.iter().map(|e| e.t).max()?;
    // Intervals per thread: (begin, end, kind) with kind 0 work, 1 wait, 2 comm, 3 barrier
    // wait; nested ones
    // come later in the list, so the innermost at an instant is the last one containing it.
    let mut intervals: Vec<Vec<(u64, u64, usize, u8)>> = vec![Vec::new(); p];
    let mut open: Vec<Vec<(u64, u8)>> = vec![Vec::new(); p];
    // Per thread: (begin, ideal end) of each comm interval, with a machine file.
    let mut deadlines: Vec<Vec<(u64, u64)>> = vec![Vec::new(); p];
    // (begin, end, members, name, opening order)
    let mut regions: Vec<(u64, u64, Vec<usize>, Sym, usize)> = Vec::new();
    let mut open_regions: Vec<(u64, u64, Vec<usize>, Sym, usize)> = Vec::new();
    let mut opened = 0;
    // Per thread: (time, name) of each phase event.
    let mut phases: Vec<Vec<(u64, Sym)>> = vec![Vec::new(); p];
    let mut cpu: Vec<Vec<(u64, u64, Option<u64>)>> = vec![Vec::new(); p];
    // Sends not received yet per (sender, receiver, tag), oldest first: (time, bytes).
    let mut unreceived: BTreeMap<(u32, u32, u32), VecDeque<u64>> = BTreeMap::new();
    // Per thread: its open `recv` wait's (begin, time its last matched message was sent,
    // largest bytes received); then per thread its receiving waits as (begin, end, start of
    // the transfer, ideal time of the transfer).
    let mut receiving: Vec<Option<(u64, Option<u64>, u64)>> = vec![None; p];
    let mut transfers: Vec<Vec<(u64, u64, u64, u64)>> = vec![Vec::new(); p];
    // Releases (docs/attribution.md, "Contention during waits"): per thread whether it is
    // started and not stopped, its open barrier wait's release once the last live member of
    // its innermost open region (of all threads outside regions) arrived, and its barrier
    // waits as (begin, end, release).
    let mut live = vec![false; p];
    let mut stopped = vec![false; p];
    let mut release: Vec<Option<u64>> = vec![None; p];
    // Per thread, the stretches of its open barrier wait after a release: from the release
    // to the end of the region it waits in (a member still at the barrier when its innermost
    // region ends is no longer released; u64::MAX marks that), or open (u64::MAX end).
    let mut segments: Vec<Stretches> = vec![Vec::new(); p];
    let mut barriers: Vec<Vec<(u64, u64, Stretches)>> = vec![Vec::new(); p];
    // Each thread's latest `release` of each kind (objects are all None here), and per thread
    // its lock and condition waits ended `by=` a thread whose latest release of that kind
    // fell inside the wait, as (begin, end, release).
    let mut last_release: BTreeMap<(u32, u8), u64> = BTreeMap::new();
    let mut lock_released: Vec<Vec<(u64, u64, u64)>> = vec![Vec::new(); p];
    for e in events {
        let i = e.thread as usize;
        match e.kind {
            EventKind::Start => live[i] = !stopped[i],
            EventKind::Stop => {
                stopped[i] = true;
                live[i] = false;
            }
            _ => {}
        }
        match e.kind {
            EventKind::WorkBegin { .. } => open[i].push((e.t, 0)),
            EventKind::WaitBegin { kind, .. } => {
                if kind == WaitKind::Recv {
                    receiving[i] = Some((e.t, None, 0));
                }
                open[i].push((e.t, if kind == WaitKind::Barrier { 3 } else { 1 }));
                if kind == WaitKind::Barrier {
                    let members: Vec<usize> = open_regions
                        .iter()
                        .filter(|r| r.2.contains(&i))
                        .max_by_key(|r| r.4)
                        .map_or((0..p).collect(), |r| r.2.clone());
                    let at_barrier = |m: usize| open[m].last().is_some_and(|o| o.1 == 3);
                    if members
                        .iter()
                        .all(|&m| !live[m] || (at_barrier(m) && release[m].is_none()))
                    {
                        for &m in &members {
                            if live[m] && at_barrier(m) {
                                if release[m].is_none_or(|r| r == u64::MAX) {
                                    segments[m].push((e.t, u64::MAX));
                                }
                                release[m] = Some(e.t);
                            }
                        }
                    }
                }
            }
            EventKind::Send { peer, tag, .. } => {
                let channel = (e.thread, peer, tag);
                unreceived.entry(channel).or_default().push_back(e.t);
            }
            EventKind::Recv {
                peer, tag, bytes, ..
            } => {
                let sent = unreceived
                    .get_mut(&(peer, e.thread, tag))
                    .and_then(|q| q.pop_front());
                if let (Some(sent), Some((_, last, most))) = (sent, &mut receiving[i]) {
                    *last = Some(last.map_or(sent, |l| l.max(sent)));
                    *most = (*most).max(bytes);
                }
            }
            EventKind::CommBegin { bytes } => {
                open[i].push((e.t, 2));
                if let Some(m) = machine {
                    deadlines[i].push((e.t, e.t + m.ideal_copy_ns(bytes)));
                }
            }
            EventKind::WaitEnd {
                kind: WaitKind::Recv,
                ..
            } => {
                if let Some((begin, Some(sent), bytes)) = receiving[i].take() {
                    let ideal = machine
                        .and_then(|m| m.mpi.as_ref())
                        .map_or(u64::MAX, |mpi| mpi.ideal_message_ns(bytes));
                    transfers[i].push((begin, e.t, begin.max(sent), ideal));
                }
                let (b, k) = open[i].pop().unwrap();
                intervals[i].push((b, e.t, open[i].len(), k));
            }
            EventKind::Release { kind, .. } => {
                last_release.insert((e.thread, kind as u8), e.t);
            }
            EventKind::WorkEnd { .. } | EventKind::WaitEnd { .. } | EventKind::CommEnd { .. } => {
                if let EventKind::WaitEnd {
                    kind: kind @ (WaitKind::Lock | WaitKind::Cond),
                    by: Some(by),
                    ..
                } = e.kind
                {
                    let begin = open[i].last().unwrap().0;
                    if let Some(&r) = last_release.get(&(by, kind as u8))
                        && begin <= r
                        && r < e.t
                    {
                        lock_released[i].push((begin, e.t, r));
                    }
                }
                let (b, k) = open[i].pop().unwrap();
                intervals[i].push((b, e.t, open[i].len(), k));
                if k == 3 {
                    release[i] = None;
                    barriers[i].push((b, e.t, std::mem::take(&mut segments[i])));
                }
            }
            EventKind::RegionBegin { id, team, name } => {
                let members = match team {
                    Some(t) => symbols.team(t).iter().map(|&m| m as usize).collect(),
                    None => (0..p).collect(),
                };
                open_regions.push((id, e.t, members, name, opened));
                opened += 1;
            }
            EventKind::RegionEnd { id } => {
                let pos = open_regions.iter().position(|r| r.0 == id).unwrap();
                let order = open_regions[pos].4;
                for &m in &open_regions[pos].2 {
                    let innermost = open_regions
                        .iter()
                        .filter(|r| r.2.contains(&m))
                        .map(|r| r.4)
                        .max();
                    let at_barrier = open[m].last().is_some_and(|o| o.1 == 3);
                    if innermost == Some(order) && at_barrier && release[m].is_some() {
                        if release[m] != Some(u64::MAX)
                            && let Some(open) = segments[m].last_mut()
                            && open.1 == u64::MAX
                        {
                            open.1 = e.t;
                        }
                        release[m] = Some(u64::MAX);
                    }
                }
                let (_, b, members, name, order) = open_regions.remove(pos);
                regions.push((b, e.t, members, name, order));
            }
            EventKind::Phase { name } => phases[i].push((e.t, name)),
            EventKind::Cpu {
                thread_cpu_ns,
                run_delay_ns,
            } => cpu[i].push((e.t, thread_cpu_ns, run_delay_ns)),
            _ => {}
        }
    }
    // Among the intervals containing an instant, the deepest is the innermost.
    let state = |i: usize, x: u64| -> Option<u8> {
        intervals[i]
            .iter()
            .filter(|&&(b, e, _, _)| b <= x && x < e)
            .max_by_key(|&&(_, _, depth, _)| depth)
            .map(|&(_, _, _, k)| k)
    };
    let busy = |i: usize, x: u64| matches!(state(i, x), Some(0) | Some(2));
    let mut totals = vec![[0u64; 6]; p];
    let mut by_region = BTreeMap::new();
    let mut by_phase = BTreeMap::new();
    let mut work_at = vec![Vec::new(); p];
    // The category of each instant of each thread, before rc.cpu moves.
    let mut at: Vec<Vec<(u64, Category)>> = vec![Vec::new(); p];
    for x in start..end {
        for i in 0..p {
            let innermost = regions
                .iter()
                .filter(|(b, e, members, _, _)| *b <= x && x < *e && members.contains(&i))
                .max_by_key(|r| r.4)
                .map(|r| r.3);
            let phase = phases[i].iter().rev().find(|&&(t, _)| t <= x).map(|p| p.1);
            let category = match state(i, x) {
                // Communication: cl up to its ideal time, rc beyond (with a machine file).
                Some(2) => {
                    let deadline = deadlines[i].iter().rev().find(|&&(b, _)| b <= x);
                    match deadline {
                        Some(&(_, end)) if x >= end => Category::Rc,
                        _ => Category::Cl,
                    }
                }
                // Waiting: for a late sender (sl) until the last message received in the
                // wait was sent, then the transfer: cl up to its ideal time, rc beyond.
                Some(1) => {
                    let transfer = transfers[i].iter().find(|&&(b, e, _, _)| b <= x && x < e);
                    match transfer {
                        Some(&(_, _, from, ideal)) if x >= from && x - from >= ideal => {
                            Category::Rc
                        }
                        Some(&(_, _, from, _)) if x >= from => Category::Cl,
                        _ => Category::Sl,
                    }
                }
                Some(0) => {
                    work_at[i].push(x);
                    Category::Pc
                }
                // Idle (None) or at a barrier (3): li while a member of one of its teams is
                // busy, else sl; idle or at a barrier outside every team is ip.
                _ => {
                    let mine: Vec<_> = regions
                        .iter()
                        .filter(|(b, e, members, _, _)| *b <= x && x < *e && members.contains(&i))
                        .collect();
                    if mine.is_empty() {
                        Category::Ip
                    } else if mine
                        .iter()
                        .any(|(_, _, members, _, _)| members.iter().any(|&m| m != i && busy(m, x)))
                    {
                        Category::Li
                    } else {
                        Category::Sl
                    }
                }
            };
            totals[i][category.index()] += 1;
            at[i].push((x, category));
            by_region.entry(innermost).or_insert([0; 6])[category.index()] += 1;
            by_phase.entry(phase).or_insert([0; 6])[category.index()] += 1;
        }
    }
    // Idle time released by a fork: per member of a region, from its begin to the member's
    // first event at or after the begin event (the begin itself when the member records it),
    // when that event comes no later than the region's end event.
    let mut fork_released: Vec<Stretches> = vec![Vec::new(); p];
    for (bi, e) in events.iter().enumerate() {
        let EventKind::RegionBegin { id, team, .. } = e.kind else {
            continue;
        };
        let ei = events[bi..]
            .iter()
            .position(|x| x.kind == EventKind::RegionEnd { id })
            .map_or(events.len(), |k| bi + k + 1);
        let members: Vec<usize> = match team {
            Some(t) => symbols.team(t).iter().map(|&m| m as usize).collect(),
            None => (0..p).collect(),
        };
        for m in members {
            if let Some(first) = events[bi..ei].iter().find(|x| x.thread as usize == m) {
                fork_released[m].push((e.t, first.t));
            }
        }
    }
    // Whether thread m is started and not stopped at instant x.
    let first_at = |m: usize, kind: EventKind| {
        events
            .iter()
            .find(|e| e.thread as usize == m && e.kind == kind)
            .map(|e| e.t)
    };
    let lifetimes: Vec<(Option<u64>, Option<u64>)> = (0..p)
        .map(|m| (first_at(m, EventKind::Start), first_at(m, EventKind::Stop)))
        .collect();
    let live_at = |m: usize, x: u64| {
        let (start, stop) = lifetimes[m];
        start.is_some_and(|s| s <= x) && stop.is_none_or(|s| s > x)
    };
    // Whether every live member of thread i's innermost region at x is idle: the team's last
    // member has finished its part.
    let team_finished = |i: usize, x: u64| {
        regions
            .iter()
            .filter(|(b, e, members, _, _)| *b <= x && x < *e && members.contains(&i))
            .max_by_key(|r| r.4)
            .is_some_and(|(_, _, members, _, _)| {
                members
                    .iter()
                    .all(|&m| !live_at(m, x) || state(m, x).is_none())
            })
    };
    // Whether thread i at instant x waits after its release: idle in a region that forked it,
    // before its first event since (above), or once its team's last member finished; at a
    // barrier that its team's last arrival has released; or in a lock or condition wait after
    // the release of the thread that ended it.
    let released = |i: usize, x: u64| match state(i, x) {
        Some(1) => lock_released[i]
            .iter()
            .any(|&(b, e, r)| b <= x && x < e && r <= x),
        None => fork_released[i].iter().any(|&(b, f)| b <= x && x < f) || team_finished(i, x),
        Some(3) => barriers[i].iter().any(|(b, e, segments)| {
            *b <= x && x < *e && segments.iter().any(|&(from, to)| from <= x && x < to)
        }),
        _ => false,
    };
    // rc.cpu: between consecutive samples, work time beyond the CPU time used; between
    // consecutive samples with a run-queue delay, the delay beyond that unbacked work, taken
    // from the time in li, ip and sl after a release (in that order of rounded-down
    // cumulative shares).
    for i in 0..p {
        let mut unbacked_since = 0;
        let mut last_delay: Option<(u64, u64)> = None;
        for k in 0..cpu[i].len() {
            let (t1, c1, d1) = cpu[i][k];
            if k > 0 {
                let (t0, c0, _) = cpu[i][k - 1];
                let worked = work_at[i].iter().filter(|&&x| t0 <= x && x < t1).count() as u64;
                let unbacked = worked.saturating_sub(c1.saturating_sub(c0));
                totals[i][Category::Pc.index()] -= unbacked;
                totals[i][Category::Rc.index()] += unbacked;
                unbacked_since += unbacked;
            }
            let Some(d1) = d1 else { continue };
            if let Some((t0, d0)) = last_delay {
                let runnable = d1.saturating_sub(d0).saturating_sub(unbacked_since);
                let waiting: Vec<u64> = [Category::Li, Category::Ip, Category::Sl]
                    .iter()
                    .map(|&c| {
                        let n = at[i]
                            .iter()
                            .filter(|&&(x, cat)| t0 <= x && x < t1 && cat == c && released(i, x));
                        n.count() as u64
                    })
                    .collect();
                let whole: u64 = waiting.iter().sum();
                let moved = runnable.min(whole);
                let (mut cumulative, mut given) = (0, 0);
                for (c, w) in [Category::Li, Category::Ip, Category::Sl]
                    .into_iter()
                    .zip(waiting)
                {
                    cumulative += w;
                    let upto = (moved * cumulative).checked_div(whole).unwrap_or(0);
                    totals[i][c.index()] -= upto - given;
                    totals[i][Category::Rc.index()] += upto - given;
                    given = upto;
                }
            }
            last_delay = Some((t1, d1));
            unbacked_since = 0;
        }
    }
    Some(Expected {
        by_thread: totals,
        by_region,
        by_phase,
    })
}

/// Checks a breakdown against the brute force's, which has no rc.cpu yet (the sweep shares it
/// over regions and phases in integer parts): per key, cl and rc.comm are exact, and rc.cpu
/// came out of li, ip, sl and pc without taking more than any of them had.
fn check_breakdown(
    rows: &[(Option<Sym>, Totals)],
    want: BTreeMap<Option<Sym>, [u64; 6]>,
) -> Result<(), String> {
    let want: BTreeMap<_, _> = want
        .into_iter()
        .filter(|(_, v)| v.iter().sum::<u64>() > 0)
        .collect();
    let keys: Vec<_> = rows.iter().map(|r| r.0).collect();
    if keys != want.keys().copied().collect::<Vec<_>>() {
        return Err(format!("keys {keys:?} vs {:?}", want.keys()));
    }
    for (key, got) in rows {
        let w = want[key].map(u128::from);
        let [li, ip, sl, cl, rc, pc] = CATEGORIES.map(Category::index);
        let rc_cpu = got.sub("rc.cpu").unwrap();
        let fits = [li, ip, sl, pc].iter().all(|&c| got.ns[c] <= w[c]);
        let sum = |v: &[u128; 6]| v[li] + v[ip] + v[sl] + v[pc];
        if got.ns[cl] != w[cl]
            || got.sub("rc.comm").unwrap() != w[rc]
            || !fits
            || sum(&got.ns) + rc_cpu != sum(&w)
        {
            return Err(format!("{key:?}: {got:?} vs {w:?} before rc.cpu"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn sweep_equals_brute_force(seed in any::<u64>(), p in 1u32..6) {
        let (events, symbols) = schedule(seed, p);
        let header = Header { p, params: vec![] };
        let machine = (seed % 2 == 0).then(machine);
        let mut sweep = Sweep::new(&header, None);
        if let Some(m) = machine.clone() {
            sweep = sweep.with_machine(m);
        }
        for e in &events {
            sweep.event(e, &symbols);
        }
        let expected = brute_force(p, &events, &symbols, machine.as_ref());
        match (sweep.finish(&symbols), expected) {
            (Err(_), None) => {}
            (Ok(a), Some(expected)) => {
                let wall = a.window.1 - a.window.0;
                prop_assert_eq!(a.totals.sum(), u128::from(p) * u128::from(wall));
                for (i, want) in expected.by_thread.iter().enumerate() {
                    let got = a.by_thread[i].ns;
                    prop_assert_eq!(got, want.map(u128::from), "thread {} ({:?})", i, CATEGORIES);
                }
                if let Err(e) = check_breakdown(&a.by_region, expected.by_region) {
                    prop_assert!(false, "by region: {}", e);
                }
                if let Err(e) = check_breakdown(&a.by_phase, expected.by_phase) {
                    prop_assert!(false, "by phase: {}", e);
                }
                for rows in [&a.by_region, &a.by_phase] {
                    let mut sum = Totals::default();
                    rows.iter().for_each(|(_, t)| sum.absorb(t));
                    prop_assert_eq!(sum, a.totals);
                }
                for w in &a.warnings {
                    // The generator records region events from any thread, started or not,
                    // and two regions of one thread may cross.
                    let allowed = [
                        "rule 5: event of a thread before its start",
                        "rule 5: event of a thread after its stop",
                        "rule 14: region_end of a region that is not the thread's innermost",
                        "rule 18: events after the last stop",
                        "rule 20: recv whose bytes differ from its send's",
                        "rule 21: ",
                    ];
                    prop_assert!(allowed.iter().any(|a| w.starts_with(a)), "{}", w);
                }
            }
            (got, want) => prop_assert!(false, "sweep {:?} vs brute force {:?}", got.is_ok(), want),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// An idle machine (a run-queue delay that never grows) moves nothing to rc.cpu beyond the
    /// unbacked work: the attribution is the one without delays, in every breakdown, whatever
    /// the release rules are.
    #[test]
    fn no_run_delay_growth_is_no_delay(seed in any::<u64>(), p in 1u32..6) {
        let (events, symbols) = schedule(seed, p);
        let header = Header { p, params: vec![] };
        let attribute = |delay: Option<u64>| {
            let mut sweep = Sweep::new(&header, None);
            for e in &events {
                let mut e = *e;
                if let EventKind::Cpu { run_delay_ns, .. } = &mut e.kind {
                    *run_delay_ns = run_delay_ns.and(delay);
                }
                sweep.event(&e, &symbols);
            }
            sweep.finish(&symbols).ok()
        };
        match (attribute(Some(7)), attribute(None)) {
            (Some(idle), Some(none)) => {
                prop_assert_eq!(&idle.totals, &none.totals);
                prop_assert_eq!(&idle.by_thread, &none.by_thread);
                prop_assert_eq!(&idle.by_region, &none.by_region);
                prop_assert_eq!(&idle.by_phase, &none.by_phase);
            }
            (idle, none) => prop_assert!(idle.is_none() && none.is_none()),
        }
    }
}

/// The worked example of docs/attribution.md ("A worked example"), on the example log of
/// docs/event-log.md: (li, ip, sl, cl, rc, pc) per thread and for the run.
#[test]
fn the_documented_example_log() {
    let docs = include_str!("../../docs/event-log.md");
    let example = docs
        .split("```\n")
        .find(|block| block.starts_with("# hand-written: p=2"))
        .expect("the example of docs/event-log.md");
    let threads = worked(example);
    assert_eq!(threads[0], [350, 100, 0, 0, 0, 550]);
    assert_eq!(threads[1], [0, 150, 0, 50, 100, 700]);
}

/// The worked examples of docs/attribution.md, "Contention during waits": (li, ip, sl, cl,
/// rc, pc) per thread of a hand-written log.
fn worked(text: &str) -> Vec<[u128; 6]> {
    let mut reader = pp::log::LogReader::from_bytes("waits.log", text.as_bytes().to_vec()).unwrap();
    let profile = pp::profile::profile_log(&mut reader, None, None)
        .whole("waits.log")
        .unwrap();
    profile.by_thread.iter().map(|t| t.ns).collect()
}

#[test]
fn a_barrier_wait_is_imbalance_up_to_the_last_arrival_beside_load() {
    // Thread 0 spins at the barrier from 100 while thread 1 works until 300; both leave at
    // 340. Thread 0's run-queue delay grew by 200 over 100-340 (it shared a core the whole
    // time), but only 300-340, after the last arrival released it, can be contention: 40 ns
    // of sl move to rc.cpu, the 200 ns of li stay. (The rule before this one took 200 from
    // li and sl.)
    let threads = worked(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 region_begin 1 loop
0 0 work_begin
0 1 work_begin
100 0 work_end
100 0 cpu 100 0
100 0 wait_begin barrier
300 1 work_end
300 1 wait_begin barrier
340 0 wait_end barrier
340 0 cpu 300 200
340 1 wait_end barrier
340 0 region_end 1
340 0 stop
340 1 stop
",
    );
    assert_eq!(threads[0], [200, 0, 0, 0, 40, 100]);
    assert_eq!(threads[1], [0, 0, 40, 0, 0, 300]);
}

#[test]
fn a_lock_wait_without_a_release_time_stays_a_wait_beside_load() {
    // The log says when thread 0 got the lock, not when thread 1 let it go: none of the wait
    // is after a known release, so its run-queue delay (300) moves nothing.
    let threads = worked(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 cpu 0 0
0 1 work_begin
100 0 work_begin
100 0 wait_begin lock critical
500 0 wait_end lock critical
500 0 work_end
500 0 cpu 100 300
500 1 work_end
500 0 stop
500 1 stop
",
    );
    assert_eq!(threads[0], [0, 100, 400, 0, 0, 0]);
    assert_eq!(threads[1], [0, 0, 0, 0, 0, 500]);
}

#[test]
fn a_lock_wait_is_contention_only_after_its_release() {
    // As above, and thread 1 records its unlock at 420, and thread 0's wait ends by=1: of
    // the 300 ns of delay, only the 80 ns after the release (420-500) can be contention.
    let threads = worked(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 cpu 0 0
0 1 work_begin
100 0 work_begin
100 0 wait_begin lock critical
420 1 release lock critical
500 0 wait_end lock critical by=1
500 0 work_end
500 0 cpu 100 300
500 1 work_end
500 0 stop
500 1 stop
",
    );
    assert_eq!(threads[0], [0, 100, 320, 0, 80, 0]);
    assert_eq!(threads[1], [0, 0, 0, 0, 0, 500]);
    // A release before the wait began (the lock was free then) or by another thread than
    // the one named releases nothing: the whole wait stays sl.
    for (release, by) in [
        ("50 1 release lock critical", 1),
        ("420 1 release lock critical", 0),
    ] {
        let text = format!(
            "pplog 1 p=2\n0 0 start\n0 1 start\n0 0 cpu 0 0\n0 1 work_begin\n{release}\n\
             100 0 work_begin\n100 0 wait_begin lock critical\n\
             500 0 wait_end lock critical by={by}\n500 0 work_end\n500 0 cpu 100 300\n\
             500 1 work_end\n500 0 stop\n500 1 stop\n"
        );
        assert_eq!(
            worked(&text)[0],
            [0, 100, 400, 0, 0, 0],
            "{release} by={by}"
        );
    }
}

#[test]
fn a_worker_still_at_its_barrier_after_the_region_ended_is_not_released() {
    // Thread 1 reaches the region's end barrier at 100, thread 0 at 300 (the last arrival)
    // and ends the region at 310; thread 1's runtime reports the barrier's end only at 900,
    // when it next got a core (an OpenMP worker beside CPU hogs), and its delay grew by 700.
    // Released from 300 to 310 only: after the region ended it waited for nothing in it, so
    // its time to 900 stays ip, as a worker idle outside regions would be.
    let threads = worked(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 region_begin 1 loop
0 0 work_begin
0 1 cpu 0 0
0 1 work_begin
100 1 work_end
100 1 wait_begin barrier
300 0 work_end
300 0 wait_begin barrier
310 0 wait_end barrier
310 0 region_end 1
900 1 wait_end barrier
900 1 cpu 100 700
900 0 stop
900 1 stop
",
    );
    assert_eq!(threads[1], [200, 590, 0, 0, 10, 100]);
}

#[test]
fn a_worker_woken_at_a_fork_waits_for_a_core_after_its_release() {
    // The region begins at 1000; thread 1 records nothing in it until 1080. Its delay grew by
    // 70 over a span whose idle time in the region (80 ns of li while thread 0 works) is all
    // after the fork, and whose idle time before it (ip) nothing released.
    let threads = worked(
        "pplog 1 p=2
0 0 start
0 1 start
0 1 cpu 0 0
1000 0 region_begin 1 loop
1000 0 work_begin
1080 1 work_begin
1100 1 work_end
1100 1 cpu 20 70
1100 0 work_end
1100 0 region_end 1
1100 0 stop
1100 1 stop
",
    );
    assert_eq!(threads[1], [10, 1000, 0, 0, 70, 20]);
}

/// A member that finishes its part early and then waits idle in the region for the others,
/// with its run-queue delay over that wait (`{delay}` at 610; 20 at 200): 20 on an idle
/// machine, 390 beside CPU hogs (a worker that yields while it waits is runnable the whole
/// time).
fn early_finisher(delay: u64) -> String {
    format!(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 cpu 0 0
0 1 cpu 0 0
100 0 region_begin 1 loop
100 0 cpu 0 0
100 0 work_begin
130 1 cpu 0 20
130 1 work_begin
200 1 work_end
200 1 cpu 70 20
600 0 work_end
600 0 cpu 500 0
600 0 region_end 1
610 1 cpu 70 {delay}
610 0 stop
610 1 stop
"
    )
}

#[test]
fn waiting_for_the_team_after_its_part_keeps_its_category_beside_load() {
    // Thread 1, woken at the fork (100), gets a core at 130: 20 ns of its 30 ns of li then
    // are run-queue delay after the fork's release (rc.cpu). It finishes its part at 200 and
    // waits idle until thread 0 ends the region at 600 (li 400), then outside it (ip 10). On
    // an idle machine its delay does not grow over that wait; beside hogs it grows by 370.
    // That wait is before any release (the fork's ended at its first event, and the team's
    // last member finishes only at 600), so it is li in both: the rule before this one took
    // 370 of it as rc.cpu beside the hogs, leaving li 40.
    let idle = worked(&early_finisher(20));
    let hogged = worked(&early_finisher(390));
    assert_eq!(idle[0], [0, 110, 0, 0, 0, 500]);
    assert_eq!(idle[1], [410, 110, 0, 0, 20, 70]);
    assert_eq!(hogged, idle);
}

#[test]
fn a_fork_releases_nothing_to_a_member_that_records_nothing_in_its_region() {
    // Thread 1 is in the team of the region 100-600 but records nothing in it (it gets no
    // part); its delay grows by 300 over it. Nothing shows it was woken for the region, so
    // its li stays li; with an event at 150 in the region, the fork released 100-150.
    let log = |event: &str| {
        format!(
            "pplog 1 p=2\n0 0 start\n0 1 start\n0 1 cpu 0 0\n100 0 region_begin 1 loop\n\
             100 0 work_begin\n{event}600 0 work_end\n600 0 region_end 1\n\
             700 1 cpu 0 300\n700 0 stop\n700 1 stop\n"
        )
    };
    assert_eq!(worked(&log(""))[1], [500, 200, 0, 0, 0, 0]);
    assert_eq!(
        worked(&log("150 1 phase part\n"))[1],
        [450, 200, 0, 0, 50, 0]
    );
}

/// Two threads work in a region from 100, thread 1 until 300, thread 0 until 400; thread 0
/// ends the region at 500. Their delays at 500 are `{d0}` and `{d1}` (0 at 400 and 300).
fn join(d0: u64, d1: u64) -> String {
    format!(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 cpu 0 0
0 1 cpu 0 0
100 0 region_begin 1 loop
100 0 work_begin
100 1 work_begin
300 1 work_end
300 1 cpu 200 0
400 0 work_end
400 0 cpu 300 0
500 0 region_end 1
500 0 cpu 300 {d0}
500 1 cpu 200 {d1}
500 0 stop
500 1 stop
"
    )
}

#[test]
fn the_join_after_the_teams_last_member_finished_is_contention_beside_load() {
    // From 400 no member works: both idle threads are released (sl, fork/join) until the
    // region ends at 500. Thread 1's 300-400 waits for thread 0's work (li): not released.
    let idle = worked(&join(0, 0));
    assert_eq!(idle[0], [0, 100, 100, 0, 0, 300]);
    assert_eq!(idle[1], [100, 100, 100, 0, 0, 200]);
    // Beside hogs: thread 0 had no core for 80 of the join, thread 1 for 150 of 300-500, of
    // which only the 100 of the join are after a release. (The rule before this one took 75
    // of thread 1's li.)
    let hogged = worked(&join(80, 150));
    assert_eq!(hogged[0], [0, 100, 20, 0, 80, 300]);
    assert_eq!(hogged[1], [100, 100, 0, 0, 100, 200]);
}
