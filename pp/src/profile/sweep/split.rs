//! The line along which the sweep splits by thread (docs/event-log.md#reading-on-several-cores):
//! which events only their own thread's pass needs, and which a combining pass must see in
//! time order because another thread's state reads what they change, or they read another
//! thread's. The unit tests below check the line against the sweep itself: an event on the
//! thread's side changes nothing of another thread, no team, region or message, and nothing of
//! its own thread that a teammate reads.

use super::Sweep;
use super::nesting::closes;
use super::state::Open;
use crate::event::{Event, EventKind, WaitKind};
use crate::profile::rules::Own;

/// Where an event of a log goes when the sweep is split by thread: the first five to the
/// combining pass, the others to the thread's own pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Meeting {
    /// `start`, `stop`, or an event of a thread beyond `p`: the run window and who is live.
    Lifetime,
    /// `region_begin`, `region_end`: teams, and their members' contexts.
    Region,
    /// A `wait_begin barrier` (it may be the team's last arrival, which releases the team), or
    /// a begin or end that makes the thread enter or leave a barrier wait (the last arrival
    /// reads who is at one).
    Barrier,
    /// `send`, `recv`, `release`, a lock or cond `wait_end` with `by=`: filed for, or matched
    /// with, another thread's event.
    Partner,
    /// A begin or end that makes the thread busy or not (innermost work or comm), or active or
    /// not (live with an open interval): its teammates' categories and releases read the
    /// team's counts, and a region that opens later counts its members (so outside regions
    /// too).
    Team,
    /// The thread's first event since a region forked it (its pass needs the fork's time).
    AfterFork,
    /// A `cpu` sample: the thread's own rc.cpu bookkeeping.
    Sample,
    /// Any other begin or end: the thread's own category.
    Own,
    /// `phase`, `coll`: the thread's own context, or nothing.
    Context,
}

impl Meeting {
    /// Every class, in order.
    pub const ALL: [Meeting; 9] = [
        Meeting::Lifetime,
        Meeting::Region,
        Meeting::Barrier,
        Meeting::Partner,
        Meeting::Team,
        Meeting::AfterFork,
        Meeting::Sample,
        Meeting::Own,
        Meeting::Context,
    ];

    /// Whether the combining pass must see it.
    pub fn combined(self) -> bool {
        self < Meeting::AfterFork
    }
}

/// What a teammate reads of a thread: innermost work or comm, live with an open interval,
/// innermost a barrier wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    busy: bool,
    active: bool,
    barrier: bool,
}

fn seen(own: Own, live: bool) -> Seen {
    Seen {
        busy: own.is_busy(),
        active: live && own != Own::Idle,
        barrier: own == Own::Barrier,
    }
}

/// The innermost open interval after an end of `ending`, as `Sweep::pop` leaves it: the end
/// closes the innermost interval of its kind and those inside it, or nothing.
fn after_end(stack: &[Open], ending: Own) -> Own {
    let top = |s: &[Open]| s.last().map_or(Own::Idle, |o| o.own);
    match stack.iter().rposition(|o| closes(ending, o.own)) {
        Some(pos) => top(&stack[..pos]),
        None => top(stack),
    }
}

impl Sweep<'_> {
    /// Where `e`, the event to be applied next, goes when the sweep is split by thread,
    /// decided from what its thread's own pass knows before it: its open intervals, whether
    /// it is live, and forked since its last event.
    pub fn meeting(&self, e: &Event) -> Meeting {
        let i = e.thread as usize;
        let Some(th) = self.threads.get(i) else {
            return Meeting::Lifetime;
        };
        let after = match e.kind {
            EventKind::Start | EventKind::Stop => return Meeting::Lifetime,
            EventKind::RegionBegin { .. } | EventKind::RegionEnd { .. } => {
                return Meeting::Region;
            }
            EventKind::Send { .. } | EventKind::Recv { .. } | EventKind::Release { .. } => {
                return Meeting::Partner;
            }
            EventKind::WaitEnd {
                kind: WaitKind::Lock | WaitKind::Cond,
                by: Some(_),
                ..
            } => return Meeting::Partner,
            EventKind::WorkBegin { .. } => Some(Own::Work),
            EventKind::CommBegin { .. } => Some(Own::Comm),
            EventKind::WaitBegin {
                kind: WaitKind::Barrier,
                ..
            } => return Meeting::Barrier,
            EventKind::WaitBegin { .. } => Some(Own::Wait),
            EventKind::WorkEnd { .. } => Some(after_end(&th.stack, Own::Work)),
            EventKind::CommEnd { .. } => Some(after_end(&th.stack, Own::Comm)),
            EventKind::WaitEnd { kind, .. } => Some(after_end(&th.stack, Own::waiting_for(kind))),
            EventKind::Cpu { .. } | EventKind::Phase { .. } | EventKind::Coll { .. } => None,
        };
        if let Some(after) = after {
            let (was, now) = (seen(th.own, th.live), seen(after, th.live));
            if was.barrier != now.barrier {
                return Meeting::Barrier;
            }
            if was != now {
                return Meeting::Team;
            }
        }
        if !th.forks.is_empty() {
            return Meeting::AfterFork;
        }
        match e.kind {
            EventKind::Cpu { .. } => Meeting::Sample,
            EventKind::Phase { .. } | EventKind::Coll { .. } => Meeting::Context,
            _ => Meeting::Own,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::event::{Header, Sym, Symbols, ThreadId};

    /// Everything of the sweep an event of thread `i` on its own pass must leave alone: every
    /// other thread (its state and its contexts' totals), the teams, regions, releases,
    /// messages and window, and what teammates read of thread `i`.
    fn beyond(sweep: &Sweep, i: usize) -> String {
        let mut text = String::new();
        for (j, th) in sweep.threads.iter().enumerate() {
            if j == i {
                text += &format!(
                    "{j}: {:?} {} {} {} {:?} {:?} {:?}\n",
                    seen(th.own, th.live),
                    th.live,
                    th.started,
                    th.stopped,
                    th.regions,
                    th.begun,
                    th.release
                );
            } else {
                text += &format!("{j}: {th:?}\n");
            }
        }
        for (key, totals) in sweep.contexts.keys.iter().zip(&sweep.contexts.totals) {
            if key.0 as usize != i {
                text += &format!("{key:?} {totals:?}\n");
            }
        }
        let mut slots: Vec<_> = sweep.slots.iter().collect();
        slots.sort();
        let mut releases: Vec<_> = sweep.releases.iter().collect();
        releases.sort();
        text += &format!(
            "{:?} {slots:?} {:?} {releases:?} {:?} {:?} {:?}",
            sweep.regions, sweep.free_slots, sweep.messages, sweep.window_start, sweep.last_stop
        );
        text
    }

    /// A context's key: thread, innermost region, phase.
    type Context = (ThreadId, Option<Sym>, Option<Sym>);

    /// The totals of every context of the threads `mine` picks once each thread's open
    /// stretch is closed at `end` (as `Sweep::finish` closes them), in order, empty ones left out.
    fn contexts(
        sweep: &mut Sweep,
        end: u64,
        mine: impl Fn(usize) -> bool,
    ) -> Vec<(Context, String)> {
        for j in 0..sweep.p {
            let since = sweep.threads[j].since;
            sweep.close(j, end.max(since));
        }
        let mut all: Vec<_> = (sweep.contexts.keys.iter().zip(&sweep.contexts.totals))
            .filter(|(key, totals)| mine(key.0 as usize) && !totals.is_empty())
            .map(|(key, totals)| (*key, format!("{totals:?}")))
            .collect();
        all.sort();
        all
    }

    /// A random run of `p` threads (and a thread beyond them now and then) in time order, of
    /// every kind of event, nested well or badly: regions with and without a team, barriers,
    /// locks released and ended `by=`, messages, cpu samples with run-queue delays, phases.
    fn run(seed: u64, p: u32, n: usize) -> (Vec<Event>, Symbols) {
        let mut state = seed | 1;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let mut symbols = Symbols::default();
        let names = [symbols.intern("a"), symbols.intern("b")];
        let lock = Some(symbols.intern("l"));
        let half: Vec<ThreadId> = (0..p.div_ceil(2)).collect();
        let team = symbols.intern_team(&half);
        let mut events = Vec::with_capacity(n);
        let (mut t, mut cpu, mut delay) = (0u64, vec![0u64; p as usize], vec![0u64; p as usize]);
        for th in 0..p {
            events.push(Event {
                t,
                thread: th,
                kind: EventKind::Start,
            });
        }
        let kinds = [
            WaitKind::Barrier,
            WaitKind::Lock,
            WaitKind::Recv,
            WaitKind::Cond,
        ];
        while events.len() < n {
            t += next(40);
            let thread = if next(100) == 0 {
                p
            } else {
                next(u64::from(p)) as u32
            };
            let th = (thread as usize).min(p as usize - 1);
            let kind = match next(20) {
                0 | 1 => EventKind::WorkBegin { label: None },
                2 | 3 => EventKind::WorkEnd { label: None },
                4 => EventKind::CommBegin { bytes: 64 },
                5 => EventKind::CommEnd { bytes: 64 },
                6 | 7 => EventKind::WaitBegin {
                    kind: kinds[next(4) as usize],
                    object: lock.filter(|_| next(2) == 0),
                },
                8 | 9 => EventKind::WaitEnd {
                    kind: kinds[next(4) as usize],
                    object: lock.filter(|_| next(2) == 0),
                    by: (next(2) == 0).then(|| next(u64::from(p)) as ThreadId),
                },
                10 => EventKind::Release {
                    kind: WaitKind::Lock,
                    object: lock,
                },
                11 | 12 => {
                    cpu[th] += next(60);
                    delay[th] += next(30);
                    EventKind::Cpu {
                        thread_cpu_ns: cpu[th],
                        run_delay_ns: (next(4) != 0).then_some(delay[th]),
                    }
                }
                13 => EventKind::RegionBegin {
                    id: next(3),
                    name: names[next(2) as usize],
                    team: (next(2) == 0).then_some(team),
                },
                14 => EventKind::RegionEnd { id: next(3) },
                15 => EventKind::Send {
                    peer: next(u64::from(p)) as ThreadId,
                    tag: 0,
                    bytes: 8,
                    comm: None,
                },
                16 => EventKind::Recv {
                    peer: next(u64::from(p)) as ThreadId,
                    tag: 0,
                    bytes: 8,
                    comm: None,
                },
                17 => EventKind::Phase {
                    name: names[next(2) as usize],
                },
                18 => EventKind::Coll {
                    op: Sym(0),
                    bytes: 0,
                    root: None,
                    comm: None,
                },
                _ if next(8) == 0 => EventKind::Stop,
                _ => EventKind::Start,
            };
            events.push(Event { t, thread, kind });
        }
        (events, symbols)
    }

    /// A run of `p` threads that keeps the log's rules, in rounds as an OpenMP or MPI program
    /// records them: a region (of every thread, or of half of them) whose members sample their
    /// CPU, work (sometimes moving data, taking a lock another member released, or receiving
    /// a message another member sent) and wait at a barrier, which the last arrival releases;
    /// now and then a member records nothing in the region, or thread 0 works alone in a phase.
    fn rounds(seed: u64, p: u32, n: usize) -> (Vec<Event>, Symbols) {
        let mut state = seed | 1;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let mut symbols = Symbols::default();
        let names = [symbols.intern("a"), symbols.intern("b")];
        let lock = Some(symbols.intern("l"));
        let half: Vec<ThreadId> = (0..p.div_ceil(2)).collect();
        let team = symbols.intern_team(&half);
        let mut events: Vec<Event> = (0..p)
            .map(|thread| Event {
                t: u64::from(thread),
                thread,
                kind: EventKind::Start,
            })
            .collect();
        let (mut now, mut cpu, mut delay) =
            (100u64, vec![0u64; p as usize], vec![0u64; p as usize]);
        let mut id = 0;
        while events.len() < n {
            let mut ev = |t: u64, thread: ThreadId, kind| events.push(Event { t, thread, kind });
            if next(4) == 0 {
                ev(
                    now,
                    0,
                    EventKind::Phase {
                        name: names[next(2) as usize],
                    },
                );
                ev(now + 5, 0, EventKind::WorkBegin { label: None });
                now += 20 + next(50);
                ev(now, 0, EventKind::WorkEnd { label: None });
            }
            id += 1;
            let small = next(3) == 0;
            let members = if small { p.div_ceil(2) } else { p };
            let name = names[next(2) as usize];
            let mut arrivals = Vec::new();
            let mut recorded = Vec::new();
            for m in 0..members {
                // The first member always records the region (it opens it).
                if m > 0 && next(6) == 0 {
                    continue;
                }
                recorded.push(m);
                let i = m as usize;
                let mut t = now + next(30);
                let team = small.then_some(team);
                ev(t, m, EventKind::RegionBegin { id, name, team });
                t += next(20);
                delay[i] += next(15);
                ev(
                    t,
                    m,
                    EventKind::Cpu {
                        thread_cpu_ns: cpu[i],
                        run_delay_ns: Some(delay[i]),
                    },
                );
                t += next(20);
                ev(t, m, EventKind::WorkBegin { label: None });
                let start = t;
                match next(4) {
                    0 => {
                        ev(t + 5, m, EventKind::CommBegin { bytes: 64 });
                        t += 10 + next(30);
                        ev(t, m, EventKind::CommEnd { bytes: 64 });
                    }
                    1 if m > 0 => {
                        let by = next(u64::from(m)) as ThreadId;
                        ev(
                            t + 1,
                            m,
                            EventKind::WaitBegin {
                                kind: WaitKind::Lock,
                                object: lock,
                            },
                        );
                        ev(
                            t + 1 + next(20),
                            by,
                            EventKind::Release {
                                kind: WaitKind::Lock,
                                object: lock,
                            },
                        );
                        t += 25 + next(20);
                        ev(
                            t,
                            m,
                            EventKind::WaitEnd {
                                kind: WaitKind::Lock,
                                object: lock,
                                by: Some(by),
                            },
                        );
                    }
                    2 if m > 0 => {
                        let from = next(u64::from(m)) as ThreadId;
                        let message = |peer| (peer, 7, 32, None);
                        let (peer, tag, bytes, comm) = message(m);
                        ev(
                            t + next(20),
                            from,
                            EventKind::Send {
                                peer,
                                tag,
                                bytes,
                                comm,
                            },
                        );
                        ev(
                            t + 1,
                            m,
                            EventKind::WaitBegin {
                                kind: WaitKind::Recv,
                                object: None,
                            },
                        );
                        t += 25 + next(20);
                        let (peer, tag, bytes, comm) = message(from);
                        ev(
                            t,
                            m,
                            EventKind::Recv {
                                peer,
                                tag,
                                bytes,
                                comm,
                            },
                        );
                        t += next(10);
                        ev(
                            t,
                            m,
                            EventKind::WaitEnd {
                                kind: WaitKind::Recv,
                                object: None,
                                by: Some(from),
                            },
                        );
                    }
                    _ => {}
                }
                t = t.max(start + next(200));
                ev(t, m, EventKind::WorkEnd { label: None });
                cpu[i] += (t - start) * (1 + next(3)) / 3;
                delay[i] += next(40);
                t += next(20);
                ev(
                    t,
                    m,
                    EventKind::Cpu {
                        thread_cpu_ns: cpu[i],
                        run_delay_ns: Some(delay[i]),
                    },
                );
                t += next(20);
                ev(
                    t,
                    m,
                    EventKind::WaitBegin {
                        kind: WaitKind::Barrier,
                        object: None,
                    },
                );
                arrivals.push(t);
            }
            let release = arrivals.iter().max().copied().unwrap_or(now) + next(30);
            for &m in &recorded {
                let t = release + next(20);
                ev(
                    t,
                    m,
                    EventKind::WaitEnd {
                        kind: WaitKind::Barrier,
                        object: None,
                        by: None,
                    },
                );
                ev(t + next(10), m, EventKind::RegionEnd { id });
            }
            now = release + 60;
        }
        for thread in 0..p {
            events.push(Event {
                t: now + u64::from(thread),
                thread,
                kind: EventKind::Stop,
            });
        }
        // Time order, ties by thread, each thread's own order kept (as the reader gives them).
        events.sort_by_key(|e| (e.t, e.thread));
        (events, symbols)
    }

    /// Each class on a small run of two threads, the first region forking thread 1.
    #[test]
    fn every_class_on_a_small_run() {
        use EventKind::*;
        use Meeting::*;
        let mut symbols = Symbols::default();
        let name = symbols.intern("r");
        let lock = Some(symbols.intern("l"));
        let run = [
            (0, Start, Lifetime),
            (1, Start, Lifetime),
            (
                0,
                RegionBegin {
                    id: 1,
                    name,
                    team: None,
                },
                Region,
            ),
            (
                1,
                Cpu {
                    thread_cpu_ns: 0,
                    run_delay_ns: Some(0),
                },
                AfterFork,
            ),
            (0, WorkBegin { label: None }, Team),
            (0, CommBegin { bytes: 8 }, Meeting::Own),
            (0, CommEnd { bytes: 8 }, Meeting::Own),
            (
                0,
                Cpu {
                    thread_cpu_ns: 10,
                    run_delay_ns: Some(0),
                },
                Sample,
            ),
            (0, Phase { name }, Context),
            (
                1,
                WaitBegin {
                    kind: WaitKind::Lock,
                    object: lock,
                },
                Team,
            ),
            (
                1,
                WaitBegin {
                    kind: WaitKind::Recv,
                    object: None,
                },
                Meeting::Own,
            ),
            (
                1,
                WaitEnd {
                    kind: WaitKind::Recv,
                    object: None,
                    by: None,
                },
                Meeting::Own,
            ),
            (
                0,
                Release {
                    kind: WaitKind::Lock,
                    object: lock,
                },
                Partner,
            ),
            (
                1,
                WaitEnd {
                    kind: WaitKind::Lock,
                    object: lock,
                    by: Some(0),
                },
                Partner,
            ),
            (0, WorkEnd { label: None }, Team),
            (
                0,
                WaitBegin {
                    kind: WaitKind::Barrier,
                    object: None,
                },
                Barrier,
            ),
            (
                0,
                WaitBegin {
                    kind: WaitKind::Lock,
                    object: None,
                },
                Barrier,
            ),
            (
                0,
                WaitEnd {
                    kind: WaitKind::Lock,
                    object: None,
                    by: None,
                },
                Barrier,
            ),
            (
                1,
                Send {
                    peer: 0,
                    tag: 0,
                    bytes: 8,
                    comm: None,
                },
                Partner,
            ),
            (
                0,
                Recv {
                    peer: 1,
                    tag: 0,
                    bytes: 8,
                    comm: None,
                },
                Partner,
            ),
            (
                0,
                WaitEnd {
                    kind: WaitKind::Barrier,
                    object: None,
                    by: None,
                },
                Barrier,
            ),
            (0, RegionEnd { id: 1 }, Region),
            (1, Stop, Lifetime),
            (0, Stop, Lifetime),
        ];
        let mut sweep = Sweep::new(
            &Header {
                p: 2,
                params: vec![],
            },
            None,
        );
        for (n, (thread, kind, want)) in run.into_iter().enumerate() {
            let e = Event {
                t: 10 * n as u64,
                thread,
                kind,
            };
            assert_eq!(sweep.meeting(&e), want, "{e:?}");
            sweep.event(&e, &symbols);
        }
    }

    /// The runs the property test draws keep the rules where they should and, between them,
    /// give every class (else the test would check less than it says).
    #[test]
    fn the_drawn_runs_reach_every_class() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..20 {
            for (kept, (events, symbols)) in
                [(true, rounds(seed, 3, 300)), (false, run(seed, 3, 300))]
            {
                let mut sweep = Sweep::new(
                    &Header {
                        p: 3,
                        params: vec![],
                    },
                    None,
                );
                for e in &events {
                    seen.insert(sweep.meeting(e));
                    sweep.event(e, &symbols);
                }
                let warnings = sweep.finish(&symbols).map(|a| a.warnings);
                if kept {
                    assert_eq!(warnings, Ok(vec![]), "seed {seed}");
                }
            }
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), Meeting::ALL);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// An event the split leaves to its thread's pass changes nothing beyond its thread
        /// that the sweep keeps, whatever came before it: in runs that keep the log's rules
        /// (barriers, locks and forks released, messages matched) and in random ones.
        #[test]
        fn the_threads_side_stays_on_its_thread(seed in any::<u64>(), p in 1u32..5, kept in any::<bool>()) {
            let (events, symbols) = if kept { rounds(seed, p, 300) } else { run(seed, p, 300) };
            let header = Header { p, params: vec![] };
            let mut sweep = Sweep::new(&header, None);
            for e in &events {
                let meeting = sweep.meeting(e);
                let i = e.thread as usize;
                let before = (!meeting.combined()).then(|| beyond(&sweep, i));
                sweep.event(e, &symbols);
                if let Some(before) = before {
                    prop_assert_eq!(before, beyond(&sweep, i), "{:?} {:?}", meeting, e);
                }
            }
        }

        /// The split gives each thread the same attribution as one sweep: a sweep that sees
        /// the events of a group of threads and only the combining events of the others (as
        /// a thread's pass would, its situation coming from the combining pass) ends with the
        /// same totals in every context (thread, region, phase) of its group's threads, for
        /// one, two and three groups, on runs that keep the log's rules. (On the random runs
        /// it differs: there the sweep recomputes what another thread's combining event did to
        /// it from that thread's intervals without its own-side ones, and an end that crosses
        /// intervals can then leave it idle instead of waiting; the combining pass must take
        /// what teammates see of a thread after its event from the thread's own pass.)
        #[test]
        fn a_group_needs_only_its_events_and_the_combining_ones(
            seed in any::<u64>(), p in 1u32..5, groups in 1usize..4,
        ) {
            let (events, symbols) = rounds(seed, p, 300);
            let header = Header { p, params: vec![] };
            let mut whole = Sweep::new(&header, None);
            let mut passes: Vec<Sweep> = (0..groups).map(|_| Sweep::new(&header, None)).collect();
            for e in &events {
                let combined = whole.meeting(e).combined();
                whole.event(e, &symbols);
                for (k, pass) in passes.iter_mut().enumerate() {
                    if combined || e.thread as usize % groups == k {
                        pass.event(e, &symbols);
                    }
                }
            }
            // The run's last event, which the combining pass would tell every thread's pass.
            let end = whole.last_t;
            let want = contexts(&mut whole, end, |_| true);
            for (k, pass) in passes.iter_mut().enumerate() {
                let mine = |j: usize| j % groups == k;
                let got = contexts(pass, end, mine);
                let want: Vec<_> = want.iter().filter(|c| mine(c.0.0 as usize)).cloned().collect();
                prop_assert_eq!(got, want, "group {} of {}", k, groups);
            }
        }

        /// Whether an event goes to the combining pass depends on its thread's own events
        /// alone: a sweep that sees only that thread's events says the same. So a thread's pass
        /// routes its events as it decodes them, before any merge.
        #[test]
        fn the_route_is_known_on_the_threads_side(seed in any::<u64>(), p in 1u32..5, kept in any::<bool>()) {
            let (events, symbols) = if kept { rounds(seed, p, 300) } else { run(seed, p, 300) };
            let header = Header { p, params: vec![] };
            let mut sweep = Sweep::new(&header, None);
            let mut alone: Vec<Sweep> = (0..=p).map(|_| Sweep::new(&header, None)).collect();
            for e in &events {
                let own = &mut alone[(e.thread as usize).min(p as usize)];
                prop_assert_eq!(sweep.meeting(e).combined(), own.meeting(e).combined(), "{:?}", e);
                sweep.event(e, &symbols);
                own.event(e, &symbols);
            }
        }
    }
}
