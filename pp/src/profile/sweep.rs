//! The streaming attribution: events in time order go in, every thread-instant of the run
//! window comes out with exactly one category (the first rule of [`RULES`](super::rules)
//! that applies). Memory is bounded by threads, open regions and names, not by log length.
//!
//! Each thread carries a category and a *context* (itself, its innermost region, its phase)
//! and the time it took them; an event re-evaluates only the threads it can affect, and a
//! thread whose category or context changes closes its stretch, which is one addition to
//! the totals of its context (the breakdowns by thread, region and phase are sums of
//! contexts). Stretches of a thread tile the window, so the categories sum to `p × wall`
//! exactly (integer nanoseconds). At `cpu` samples time moves to rc.cpu (see
//! [`Sweep::event`]'s rules in [`super::rules`]).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::messages::{Messages, Sent};
use super::rules::{CATEGORIES, Category, Own, RUNNABLE_FROM, Situation, classify};
use super::totals::{ThreadTotals, Totals};
use super::violations::{Violation, Violations};
use crate::event::{Event, EventKind, Header, Sym, Symbols, TeamRef, ThreadId, WaitKind};
use crate::log::{LogError, LogReader};
use crate::machine::Machine;

/// An attributed stretch of one thread's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    /// The thread.
    pub thread: ThreadId,
    /// Start, ns.
    pub start: u64,
    /// End (exclusive), ns.
    pub end: u64,
    /// Its category (rc.cpu is known only per pair of cpu samples, so the stretches it comes
    /// from show as pc, li, ip or sl).
    pub category: Category,
    /// The thread's innermost open region.
    pub region: Option<Sym>,
    /// The thread's phase.
    pub phase: Option<Sym>,
}

/// Receives every attributed interval, in the order they close (for timelines).
pub trait Sink {
    /// One interval; `symbols` names its region and phase.
    fn interval(&mut self, interval: &Interval, symbols: &Symbols);

    /// Every event [`Sweep::read`] applies, after it (for sinks that also build the activity
    /// graph: the critical path). Nothing by default.
    fn event(&mut self, _event: &Event, _symbols: &Symbols) {}
}

/// No context cached for a region key (see [`ThreadState::ctx_cache`]).
const NO_CTX: u32 = u32::MAX;

/// No open `comm` deadline.
const NO_DEADLINE: u64 = u64::MAX;

#[derive(Debug, Clone)]
struct ThreadState {
    /// The innermost open interval (`Idle` when none): the top of `stack`, kept apart because
    /// every event reads it.
    own: Own,
    /// The category of the open stretch `[since, now)`.
    category: Category,
    /// The context (thread, innermost region, phase) of the open stretch.
    ctx: u32,
    /// Start of the open stretch; `u64::MAX` before the run window opens.
    since: u64,
    /// With a machine file: when the open `comm` interval's ideal time runs out.
    comm_deadline: u64,
    /// Open work/wait/comm intervals, innermost last.
    stack: Vec<Open>,
    /// Ids of the open regions this thread began, in order (a region is begun once by each
    /// thread that records it, and the thread ends it).
    begun: Vec<u64>,
    /// Slots of the open regions whose team includes this thread, in opening order.
    regions: Vec<u32>,
    /// Name of the innermost of them.
    region_name: Option<Sym>,
    phase: Option<Sym>,
    /// The context of each innermost region (`0` none, `s + 1` the name `Sym(s)`) in the
    /// current phase; emptied when the phase changes.
    ctx_cache: Vec<u32>,
    started: bool,
    stopped: bool,
    /// Started and not stopped (the one test every event makes).
    live: bool,
    /// Last `cpu` sample, and the work time (by context) since it.
    last_cpu: Option<u64>,
    work_since_cpu: Vec<(u32, u64)>,
    /// Last run-queue delay sample; since it, the work time not backed by the CPU clock, and
    /// the contexts the thread was in with their time in [`RUNNABLE_FROM`] at the sample (or
    /// when first entered): the waiting time since is the difference.
    last_delay: Option<u64>,
    unbacked_since_delay: u64,
    entered_since_delay: Vec<(u32, [u64; RUNNABLE_FROM.len()])>,
    /// The open `wait recv` (the outermost one), for the late-sender split: its begin, the
    /// latest time a message it received was sent (none yet: `None`) and the largest of them.
    recv_wait: Option<RecvWait>,
}

/// A `wait recv` and the messages received in it (see [`Sweep::split_receive`]).
#[derive(Debug, Clone, Copy)]
struct RecvWait {
    begin: u64,
    last_send: Option<u64>,
    bytes: u64,
}

/// An open interval and its begin's arguments, which its end must repeat (see [`arg`]).
#[derive(Debug, Clone, Copy)]
struct Open {
    own: Own,
    arg: u64,
}

/// The arguments of a begin or end in one number: a work's label, a wait's kind and object,
/// a comm's bytes.
#[inline(always)]
fn arg(kind: &EventKind) -> u64 {
    let sym = |s: Option<Sym>| s.map_or(u64::from(u32::MAX), |s| u64::from(s.0));
    match *kind {
        EventKind::WorkBegin { label } | EventKind::WorkEnd { label } => sym(label),
        EventKind::WaitBegin { kind, object } | EventKind::WaitEnd { kind, object, .. } => {
            (kind as u64) << 32 | sym(object)
        }
        EventKind::CommBegin { bytes } | EventKind::CommEnd { bytes } => bytes,
        _ => 0,
    }
}

#[derive(Debug, Clone)]
struct Region {
    name: Sym,
    /// `region_begin`s not yet matched by a `region_end`: one thread may record the region,
    /// or every member its own part (as OpenMP threads do); it closes at the last end.
    opens: u32,
    members: Vec<ThreadId>,
    /// Members currently busy (innermost work or comm).
    busy: u32,
    /// A thread that did not begin it ended it (so a beginner may still list it as begun).
    ended_by_other: bool,
}

/// Where time is added up: one [`Totals`] per context, a (thread, innermost region, phase)
/// that occurred. The breakdowns by thread, region and phase are sums of contexts, so each
/// attributed stretch is one addition.
#[derive(Debug, Default)]
struct Contexts {
    keys: Vec<(ThreadId, Option<Sym>, Option<Sym>)>,
    /// One thread's time each, so 64 bits (sums over threads are [`Totals`], 128 bits).
    totals: Vec<ThreadTotals>,
    index: HashMap<(ThreadId, Option<Sym>, Option<Sym>), u32>,
}

impl Contexts {
    fn get(&mut self, key: (ThreadId, Option<Sym>, Option<Sym>)) -> u32 {
        *self.index.entry(key).or_insert_with(|| {
            self.keys.push(key);
            self.totals.push(ThreadTotals::default());
            (self.keys.len() - 1) as u32
        })
    }

    /// The totals grouped by one part of the key, `None` first, empty groups left out.
    fn group(
        &self,
        part: impl Fn(&(ThreadId, Option<Sym>, Option<Sym>)) -> Option<Sym>,
    ) -> Vec<(Option<Sym>, Totals)> {
        let mut groups: Vec<(Option<Sym>, Totals)> = Vec::new();
        for (key, totals) in self.keys.iter().zip(&self.totals) {
            if totals.is_empty() {
                continue;
            }
            let k = part(key);
            let totals = Totals::from(totals);
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, t)) => t.absorb(&totals),
                None => groups.push((k, totals)),
            }
        }
        groups.sort_by_key(|(k, _)| *k);
        groups
    }
}

/// The attribution state machine.
pub struct Sweep<'s> {
    p: usize,
    threads: Vec<ThreadState>,
    /// Regions in slots (threads refer to slots; closed slots are reused); open ids map to
    /// slots.
    regions: Vec<Region>,
    slots: HashMap<u64, u32, BuildHasherDefault<IdHasher>>,
    /// The last region found in or put into `slots` (every member records its part of a
    /// region, so the next region event is usually about it): `(id, slot)`.
    recent: Option<(u64, u32)>,
    free_slots: Vec<u32>,
    /// The rule table evaluated once for every situation: `[own][in_region][team_busy]`.
    table: [[[Category; 2]; 2]; OWNS],
    /// Whether the rule for `[own][in_region]` depends on the team at all.
    needs_team: [[bool; 2]; OWNS],
    /// Whether a busy (`[1]`) or non-busy (`[0]`) member's rule in a region does.
    team_matters: [bool; 2],
    contexts: Contexts,
    window_start: Option<u64>,
    last_stop: Option<u64>,
    last_t: u64,
    events: u64,
    violations: Violations,
    /// Sends waiting for their receives (rules 20 and 21).
    messages: Messages,
    sink: Option<&'s mut dyn Sink>,
    /// Intervals closed during the current event, for the sink.
    pending: Vec<Interval>,
    /// Reused for sharing run-queue delay over contexts.
    scratch: Vec<(u32, u64)>,
    waits: Vec<(u32, [u64; RUNNABLE_FROM.len()])>,
    /// The calibration that gives `comm` intervals their ideal time.
    machine: Option<Machine>,
}

/// Category totals of a finished sweep (names still as symbols).
pub struct Attribution {
    /// Processors.
    pub p: u32,
    /// The run window, ns.
    pub window: (u64, u64),
    /// Events processed.
    pub events: u64,
    /// Whole-run totals.
    pub totals: Totals,
    /// Per thread.
    pub by_thread: Vec<Totals>,
    /// Per innermost region (`None`: outside every region).
    pub by_region: Vec<(Option<Sym>, Totals)>,
    /// Per phase (`None`: before any phase).
    pub by_phase: Vec<(Option<Sym>, Totals)>,
    /// The rules of the log it broke, one line per kind of violation with its count and first
    /// place (see [`Sweep::read`]).
    pub warnings: Vec<String>,
}

/// The sweep found nothing to attribute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    /// No thread ever started.
    #[error("no thread has a start event: the run window is empty")]
    NoStart,
}

impl<'s> Sweep<'s> {
    /// A sweep over a run of `header.p` threads; `sink` receives every interval.
    pub fn new(header: &Header, sink: Option<&'s mut dyn Sink>) -> Self {
        let p = header.p as usize;
        let table = rule_table();
        let mut needs_team = [[false; 2]; OWNS];
        let mut team_matters = [false; 2];
        for (o, row) in table.iter().enumerate() {
            for r in 0..2 {
                needs_team[o][r] = row[r][0] != row[r][1];
            }
            team_matters[Own::ALL[o].is_busy() as usize] |= needs_team[o][1];
        }
        let mut sweep = Sweep {
            p,
            threads: Vec::with_capacity(p),
            regions: Vec::new(),
            slots: HashMap::default(),
            recent: None,
            free_slots: Vec::new(),
            table,
            needs_team,
            team_matters,
            contexts: Contexts::default(),
            window_start: None,
            last_stop: None,
            last_t: 0,
            events: 0,
            violations: Violations::default(),
            messages: Messages::default(),
            sink,
            pending: Vec::new(),
            scratch: Vec::new(),
            waits: Vec::new(),
            machine: None,
        };
        for i in 0..p {
            let ctx = sweep.contexts.get((i as ThreadId, None, None));
            sweep.threads.push(ThreadState {
                own: Own::Idle,
                category: table[own_index(Own::Idle)][0][0],
                ctx,
                since: u64::MAX,
                comm_deadline: NO_DEADLINE,
                stack: Vec::new(),
                begun: Vec::new(),
                regions: Vec::new(),
                region_name: None,
                phase: None,
                ctx_cache: vec![ctx],
                started: false,
                stopped: false,
                live: false,
                last_cpu: None,
                work_since_cpu: Vec::new(),
                last_delay: None,
                unbacked_since_delay: 0,
                entered_since_delay: Vec::new(),
                recv_wait: None,
            });
        }
        sweep
    }

    /// Splits communication into its ideal time (cl) and the excess (rc.comm) with a
    /// calibrated machine; without one every `comm` instant is cl.
    pub fn with_machine(mut self, machine: Machine) -> Self {
        self.machine = Some(machine);
        self
    }

    /// Applies one event (events must come in non-decreasing time; threads `< p`). An event
    /// that breaks a rule of the log is counted (see [`Attribution::warnings`]) and treated as
    /// docs/event-log.md says.
    #[inline]
    pub fn event(&mut self, e: &Event, symbols: &Symbols) {
        self.events += 1;
        let i = e.thread as usize;
        if i >= self.p {
            let p = self.p;
            self.violate(Violation::ThreadOutOfRange, || {
                format!("thread {} at {} ns, p = {p}", e.thread, e.t)
            });
            return;
        }
        let t = if e.t >= self.last_t {
            e.t
        } else {
            let last = self.last_t;
            self.violate(Violation::OutOfOrder, || {
                format!("thread {i} at {} ns, after {last} ns", e.t)
            });
            last
        };
        self.last_t = t;
        if !self.threads[i].live {
            self.outside_lifetime(i, t, &e.kind);
        }
        match e.kind {
            EventKind::WorkBegin { .. } => self.push(i, t, Own::Work, arg(&e.kind)),
            EventKind::WorkEnd { .. } => self.pop(i, t, Own::Work, arg(&e.kind)),
            EventKind::WaitBegin { kind, .. } => {
                if kind == WaitKind::Recv && self.threads[i].recv_wait.is_none() {
                    self.threads[i].recv_wait = Some(RecvWait {
                        begin: t,
                        last_send: None,
                        bytes: 0,
                    });
                }
                self.push(i, t, Own::waiting_for(kind), arg(&e.kind))
            }
            EventKind::WaitEnd { kind, .. } => {
                if kind == WaitKind::Recv {
                    self.split_receive(i, t);
                }
                self.pop(i, t, Own::waiting_for(kind), arg(&e.kind))
            }
            EventKind::Cpu {
                thread_cpu_ns,
                run_delay_ns,
            } => self.cpu_sample(i, t, thread_cpu_ns, run_delay_ns),
            EventKind::CommBegin { bytes } => {
                self.push(i, t, Own::Comm, bytes);
                // A comm inside a comm (a broken rule) has the deadline of the inner one.
                self.threads[i].comm_deadline = match &self.machine {
                    Some(m) => t.saturating_add(m.ideal_copy_ns(bytes)),
                    None => NO_DEADLINE,
                };
            }
            EventKind::CommEnd { bytes } => {
                self.pop(i, t, Own::Comm, bytes);
                self.threads[i].comm_deadline = NO_DEADLINE;
            }
            EventKind::RegionBegin { id, name, team } => match self.slot(id) {
                Some(slot) => {
                    if self.threads[i].begun.contains(&id) {
                        self.violate(Violation::RegionBegunTwice, || {
                            format!("thread {i} at {t} ns, region {id}")
                        });
                    } else {
                        // Another member recording its part of an open region.
                        self.regions[slot as usize].opens += 1;
                        self.threads[i].begun.push(id);
                    }
                }
                None => {
                    self.begin_region(t, id, name, team, symbols);
                    self.threads[i].begun.push(id);
                }
            },
            EventKind::RegionEnd { id } => match self.slot(id) {
                None => self.violate(Violation::RegionEndNotOpen, || {
                    format!("thread {i} at {t} ns, region {id}")
                }),
                Some(slot) => {
                    let begun = &mut self.threads[i].begun;
                    if begun.last() == Some(&id) {
                        begun.pop();
                    } else {
                        self.region_end_out_of_turn(i, t, id, slot);
                    }
                    let region = &mut self.regions[slot as usize];
                    region.opens -= 1;
                    if region.opens == 0 {
                        self.end_region(id, slot, t);
                    }
                }
            },
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
            } => self
                .messages
                .send(comm, e.thread, peer, tag, Sent { t, bytes }),
            EventKind::Recv {
                peer,
                tag,
                bytes,
                comm,
            } => match self.messages.recv(comm, peer, e.thread, tag) {
                None => self.violate(Violation::RecvWithoutSend, || {
                    format!("thread {i} at {t} ns, from thread {peer}, tag {tag}")
                }),
                Some(sent) => {
                    if let Some(w) = &mut self.threads[i].recv_wait {
                        w.last_send = Some(w.last_send.map_or(sent.t, |l| l.max(sent.t)));
                        w.bytes = w.bytes.max(bytes);
                    }
                    if sent.bytes != bytes {
                        self.violate(Violation::RecvBytesDiffer, || {
                            format!(
                                "thread {i} at {t} ns received {bytes} bytes, thread {peer} sent {} at {} ns",
                                sent.bytes, sent.t
                            )
                        })
                    }
                }
            },
            EventKind::Coll { .. } => {}
            EventKind::Phase { name } => {
                let th = &mut self.threads[i];
                if th.phase != Some(name) {
                    th.phase = Some(name);
                    th.ctx_cache.clear();
                    self.refresh_ctx(i, t);
                }
            }
            EventKind::Start => {
                if self.threads[i].started {
                    self.violate(Violation::StartTwice, || format!("thread {i} at {t} ns"));
                }
                if self.window_start.is_none() {
                    self.window_start = Some(t);
                    for j in 0..self.p {
                        self.threads[j].since = t;
                        self.threads[j].category = self.category_of(j);
                    }
                }
                let th = &mut self.threads[i];
                th.live = !th.stopped;
                th.started = true;
            }
            EventKind::Stop => {
                if self.threads[i].stopped {
                    self.violate(Violation::StopTwice, || format!("thread {i} at {t} ns"));
                }
                let open = std::mem::take(&mut self.threads[i].stack);
                if !open.is_empty() {
                    self.violate(Violation::OpenAtStop, || {
                        format!("thread {i} at {t} ns, open: {}", describe(&open))
                    });
                    self.close(i, t);
                    let was_busy = self.threads[i].own.is_busy();
                    self.threads[i].own = Own::Idle;
                    if was_busy {
                        self.busy_changed(i, t, false);
                    }
                }
                let th = &mut self.threads[i];
                th.stopped = true;
                th.live = false;
                th.comm_deadline = NO_DEADLINE;
                self.last_stop = Some(t);
                self.retag(i, t);
            }
        }
        if !self.pending.is_empty() {
            self.drain(symbols);
        }
    }

    /// Applies every remaining event of `log`, in time order. `Err` is the damage that ended
    /// the log early (every event before it was applied); [`Sweep::finish`] then attributes
    /// what was read. The first violation of each rule of the log is placed in the file
    /// ([`LogReader::place`]).
    pub fn read(&mut self, log: &mut LogReader) -> Result<(), LogError> {
        log.for_each_placed(|e, symbols, place| {
            self.event(e, symbols);
            if let Some(sink) = self.sink.as_deref_mut() {
                sink.event(e, symbols);
            }
            if self.violations.unplaced() {
                self.violations.place(&place);
            }
        })
    }

    #[cold]
    #[inline(never)]
    fn drain(&mut self, symbols: &Symbols) {
        if let Some(sink) = self.sink.as_deref_mut() {
            for interval in self.pending.drain(..) {
                sink.interval(&interval, symbols);
            }
        }
    }

    /// Closes the window and returns the totals. The window ends at the last `stop`; when a
    /// thread that started never stopped (a cut log), or events follow the last `stop` (a
    /// malformed log), it ends at the last event instead, with a warning.
    pub fn finish(mut self, symbols: &Symbols) -> Result<Attribution, SweepError> {
        let start = self.window_start.ok_or(SweepError::NoStart)?;
        let unstopped: Vec<usize> = (0..self.p)
            .filter(|&j| self.threads[j].started && !self.threads[j].stopped)
            .collect();
        let end = self.last_t;
        if let Some(&first) = unstopped.first() {
            let n = unstopped.len();
            self.violations.add(Violation::NeverStopped, 0, || {
                format!("{n} of them, first thread {first}; the last event is at {end} ns")
            });
        } else if let Some(stop) = self.last_stop.filter(|&stop| stop < end) {
            self.violations.add(Violation::AfterLastStop, 0, || {
                format!("the last stop is at {stop} ns, the last event at {end} ns")
            });
        }
        let open: Vec<(usize, usize)> = (0..self.p)
            .map(|j| (j, self.threads[j].stack.len()))
            .filter(|&(_, n)| n > 0)
            .collect();
        if let Some(&(j, _)) = open.first() {
            let n: usize = open.iter().map(|o| o.1).sum();
            let first = describe(&self.threads[j].stack);
            self.violations.add(Violation::OpenAtEnd, 0, || {
                format!("{n} of them, first thread {j}'s {first}; the log ends at {end} ns")
            });
        }
        if let Some(&id) = self.slots.keys().min() {
            let n = self.slots.len();
            self.violations.add(Violation::RegionOpenAtEnd, 0, || {
                format!("{n} of them, first region {id}")
            });
        }
        if let (n, Some((from, to, tag, at))) = self.messages.unreceived() {
            self.violations.add(Violation::SendNeverReceived, 0, || {
                format!("{n} of them, the first from thread {from} to thread {to}, tag {tag}, at {at} ns")
            });
        }
        for j in 0..self.p {
            self.close(j, end.max(self.threads[j].since));
        }
        self.drain(symbols);
        let mut by_thread = vec![Totals::default(); self.p];
        for (key, t) in self.contexts.keys.iter().zip(&self.contexts.totals) {
            by_thread[key.0 as usize].absorb(&Totals::from(t));
        }
        let mut totals = Totals::default();
        for t in &by_thread {
            totals.absorb(t);
        }
        Ok(Attribution {
            p: self.p as u32,
            window: (start, end),
            events: self.events,
            totals,
            by_thread,
            by_region: self.contexts.group(|k| k.1),
            by_phase: self.contexts.group(|k| k.2),
            warnings: self.violations.lines(),
        })
    }

    /// Counts a violation of a rule of the log by the current event; `detail` describes it
    /// when it is the first of its kind.
    #[inline(always)]
    fn violate(&mut self, kind: Violation, detail: impl FnOnce() -> String) {
        self.violations.add(kind, self.events, detail);
    }

    /// An event of thread `i`, which has not started or has stopped.
    #[cold]
    #[inline(never)]
    fn outside_lifetime(&mut self, i: usize, t: u64, kind: &EventKind) {
        let th = &self.threads[i];
        let event = name(kind);
        match kind {
            // A start is checked by itself (started twice or not); so is a stop after a stop.
            EventKind::Start => {}
            EventKind::Stop if th.stopped => {}
            _ if !th.started => self.violate(Violation::BeforeStart, || {
                format!("thread {i} {event} at {t} ns")
            }),
            _ => self.violate(Violation::AfterStop, || {
                format!("thread {i} {event} at {t} ns")
            }),
        }
    }

    #[inline(always)]
    fn push(&mut self, i: usize, t: u64, own: Own, arg: u64) {
        let th = &mut self.threads[i];
        let outer = th.own;
        if outer != Own::Idle && (outer != Own::Work || own == Own::Work) {
            self.nested(i, t, own, outer);
        }
        let th = &mut self.threads[i];
        let was_busy = th.own.is_busy();
        th.stack.push(Open { own, arg });
        th.own = own;
        if was_busy != own.is_busy() {
            self.busy_changed(i, t, own.is_busy());
        }
        self.retag(i, t);
    }

    /// A begin of `own` inside an open `outer` other than a comm or wait inside work.
    #[cold]
    #[inline(never)]
    fn nested(&mut self, i: usize, t: u64, own: Own, outer: Own) {
        use Own::{Barrier, Comm, Wait, Work};
        let kind = match (own, outer) {
            (Work, Work) => Violation::WorkInWork,
            (Work, Wait | Barrier) => Violation::WorkInWait,
            (Work, _) => Violation::WorkInComm,
            (Wait | Barrier, Comm) => Violation::WaitInComm,
            (Wait | Barrier, _) => Violation::WaitInWait,
            (_, Comm) => Violation::CommInComm,
            _ => Violation::CommInWait,
        };
        self.violate(kind, || format!("thread {i} at {t} ns"));
    }

    #[inline]
    fn pop(&mut self, i: usize, t: u64, own: Own, arg: u64) {
        let th = &mut self.threads[i];
        let was_busy = th.own.is_busy();
        if closes(own, th.own) {
            if let Some(open) = th.stack.pop()
                && open.arg != arg
            {
                self.end_differs(i, t, own, open.arg, arg);
            }
        } else {
            self.unmatched_end(i, t, own, arg);
        }
        let th = &mut self.threads[i];
        th.own = th.stack.last().map_or(Own::Idle, |o| o.own);
        let now_busy = th.own.is_busy();
        if was_busy != now_busy {
            self.busy_changed(i, t, now_busy);
        }
        self.retag(i, t);
    }

    /// An end that does not close the innermost interval: it closes the innermost interval of
    /// its kind and those opened inside it, or nothing when there is none.
    #[cold]
    #[inline(never)]
    fn unmatched_end(&mut self, i: usize, t: u64, own: Own, arg: u64) {
        let stack = &mut self.threads[i].stack;
        let what = end_name(own);
        match stack.iter().rposition(|o| closes(own, o.own)) {
            Some(pos) => {
                let inner = stack.split_off(pos + 1);
                let open = stack.pop().map_or(arg, |o| o.arg);
                self.violate(Violation::EndCrossing, || {
                    format!(
                        "thread {i} {what} at {t} ns, inside it: {}",
                        describe(&inner)
                    )
                });
                if open != arg {
                    self.end_differs(i, t, own, open, arg);
                }
            }
            None => self.violate(Violation::EndWithoutBegin, || {
                format!("thread {i} {what} at {t} ns")
            }),
        }
    }

    /// An end whose arguments are not its begin's.
    #[cold]
    #[inline(never)]
    fn end_differs(&mut self, i: usize, t: u64, own: Own, begin: u64, end: u64) {
        let at = || format!("thread {i} at {t} ns");
        match own {
            Own::Work => self.violate(Violation::WorkLabelDiffers, at),
            Own::Comm => self.violate(Violation::CommBytesDiffer, || {
                format!("thread {i} at {t} ns, {begin} then {end} bytes")
            }),
            _ => {
                let kind = |a: u64| WaitKind::ALL.get((a >> 32) as usize).map(|k| k.as_str());
                if begin >> 32 != end >> 32 {
                    self.violate(Violation::WaitKindDiffers, || {
                        format!(
                            "thread {i} at {t} ns, {} then {}",
                            kind(begin).unwrap_or("?"),
                            kind(end).unwrap_or("?")
                        )
                    });
                }
                if begin as u32 != end as u32 {
                    self.violate(Violation::WaitObjectDiffers, at);
                }
            }
        }
    }

    /// A `region_end` of an open region that is not the last one thread `i` began: one it
    /// began earlier (the regions cross), or one it did not begin.
    #[cold]
    #[inline(never)]
    fn region_end_out_of_turn(&mut self, i: usize, t: u64, id: u64, slot: u32) {
        let begun = &mut self.threads[i].begun;
        match begun.iter().rposition(|&r| r == id) {
            Some(pos) => {
                let inner = begun[pos + 1..].to_vec();
                begun.remove(pos);
                self.violate(Violation::RegionsCross, || {
                    format!("thread {i} at {t} ns, region {id} ends before {inner:?}")
                });
            }
            None => {
                self.regions[slot as usize].ended_by_other = true;
                self.violate(Violation::RegionEndByOther, || {
                    format!("thread {i} at {t} ns, region {id}")
                });
            }
        }
    }

    /// Thread `i` turned busy (`now`) or not: updates the busy counts of its regions and
    /// re-evaluates the teammates whose category depends on whether the team is busy.
    fn busy_changed(&mut self, i: usize, t: u64, now: bool) {
        for k in 0..self.threads[i].regions.len() {
            let slot = self.threads[i].regions[k] as usize;
            let region = &mut self.regions[slot];
            let before = region.busy;
            let after = if now {
                before + 1
            } else {
                before.saturating_sub(1)
            };
            region.busy = after;
            // A member sees the team busy when the count exceeds its own share (1 if busy).
            let flips_idle = self.team_matters[0] && (before > 0) != (after > 0);
            let flips_busy = self.team_matters[1] && (before > 1) != (after > 1);
            if !flips_idle && !flips_busy {
                continue;
            }
            for n in 0..self.regions[slot].members.len() {
                let m = self.regions[slot].members[n] as usize;
                let own = self.threads[m].own;
                let flips = if own.is_busy() {
                    flips_busy
                } else {
                    flips_idle
                };
                if m != i && flips && self.needs_team[own_index(own)][1] {
                    self.retag(m, t);
                }
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn begin_region(
        &mut self,
        t: u64,
        id: u64,
        name: Sym,
        team: Option<TeamRef>,
        symbols: &Symbols,
    ) {
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                self.regions.push(Region {
                    name: Sym(0),
                    opens: 0,
                    members: Vec::new(),
                    busy: 0,
                    ended_by_other: false,
                });
                (self.regions.len() - 1) as u32
            }
        };
        let mut members = std::mem::take(&mut self.regions[slot as usize].members);
        members.clear();
        match team.map(|team| symbols.get_team(team)) {
            Some(Some(team)) => {
                members.extend(team.iter().copied().filter(|&m| (m as usize) < self.p))
            }
            Some(None) => self.violate(Violation::TeamUnknown, || format!("region {id} at {t} ns")),
            None => members.extend(0..self.p as ThreadId),
        }
        let busy = members
            .iter()
            .filter(|&&m| self.threads[m as usize].own.is_busy())
            .count() as u32;
        self.slots.insert(id, slot);
        self.recent = Some((id, slot));
        self.regions[slot as usize] = Region {
            name,
            opens: 1,
            members,
            busy,
            ended_by_other: false,
        };
        for k in 0..self.regions[slot as usize].members.len() {
            let m = self.regions[slot as usize].members[k] as usize;
            let th = &mut self.threads[m];
            th.regions.push(slot);
            th.region_name = Some(name);
            self.refresh_ctx(m, t);
            self.retag(m, t);
        }
    }

    #[cold]
    #[inline(never)]
    fn end_region(&mut self, id: u64, slot: u32, t: u64) {
        self.slots.remove(&id);
        self.recent = None;
        self.free_slots.push(slot);
        if self.regions[slot as usize].ended_by_other {
            // Threads that began it and did not end it no longer have it open.
            for th in &mut self.threads {
                th.begun.retain(|&r| r != id);
            }
        }
        let members = std::mem::take(&mut self.regions[slot as usize].members);
        for &m in &members {
            let m = m as usize;
            let th = &mut self.threads[m];
            th.regions.retain(|&r| r != slot);
            let innermost = th.regions.last().map(|&r| r as usize);
            self.threads[m].region_name = innermost.map(|r| self.regions[r].name);
            self.refresh_ctx(m, t);
            self.retag(m, t);
        }
        self.regions[slot as usize].members = members;
    }

    /// The slot of the open region `id`.
    #[inline]
    fn slot(&mut self, id: u64) -> Option<u32> {
        match self.recent {
            Some((recent, slot)) if recent == id => Some(slot),
            _ => {
                let slot = *self.slots.get(&id)?;
                self.recent = Some((id, slot));
                Some(slot)
            }
        }
    }

    /// Moves thread `i` to the context of its current region and phase (closing its open
    /// stretch at `t` when that changes it).
    #[inline]
    fn refresh_ctx(&mut self, i: usize, t: u64) {
        let th = &self.threads[i];
        let k = th.region_name.map_or(0, |s| s.0 as usize + 1);
        let cached = th.ctx_cache.get(k).copied().unwrap_or(NO_CTX);
        let ctx = if cached != NO_CTX {
            cached
        } else {
            let ctx = self.contexts.get((i as ThreadId, th.region_name, th.phase));
            let cache = &mut self.threads[i].ctx_cache;
            if cache.len() <= k {
                cache.resize(k + 1, NO_CTX);
            }
            cache[k] = ctx;
            ctx
        };
        if ctx != self.threads[i].ctx {
            self.close(i, t);
            self.threads[i].ctx = ctx;
            if self.threads[i].last_delay.is_some() {
                self.enter(i, ctx);
            }
        }
    }

    /// Notes that thread `i` entered a context since its last run-queue delay sample.
    #[cold]
    #[inline(never)]
    fn enter(&mut self, i: usize, ctx: u32) {
        if !self.threads[i]
            .entered_since_delay
            .iter()
            .any(|e| e.0 == ctx)
        {
            let waited = self.waited(ctx);
            self.threads[i].entered_since_delay.push((ctx, waited));
        }
    }

    /// A `cpu` sample: the work since the previous sample that the CPU clock does not back
    /// moves from pc to rc.cpu; with run-queue delays, the delay since the previous delay that
    /// this does not explain moves to rc.cpu from the thread's waiting time (li, ip, sl).
    #[inline]
    fn cpu_sample(&mut self, i: usize, t: u64, cpu: u64, mut delay: Option<u64>) {
        self.close(i, t);
        let th = &self.threads[i];
        if th.last_cpu.is_some_and(|last| cpu < last) {
            let last = th.last_cpu.unwrap_or(0);
            self.violate(Violation::CpuBack, || {
                format!("thread {i} at {t} ns, {cpu} ns after {last} ns")
            });
            return;
        }
        if let (Some(d), Some(last)) = (delay, th.last_delay)
            && d < last
        {
            self.violate(Violation::DelayBack, || {
                format!("thread {i} at {t} ns, {d} ns after {last} ns")
            });
            delay = None;
        }
        let th = &mut self.threads[i];
        let previous = th.last_cpu.replace(cpu);
        let unbacked = match previous {
            Some(previous) if !th.work_since_cpu.is_empty() => {
                let worked: u64 = th.work_since_cpu.iter().map(|w| w.1).sum();
                let unbacked = worked.saturating_sub(cpu.saturating_sub(previous));
                let totals = &mut self.contexts.totals;
                share(unbacked, &th.work_since_cpu, |ctx, ns| {
                    totals[ctx as usize].move_to_rc_cpu(Category::Pc, ns)
                });
                unbacked
            }
            _ => 0,
        };
        th.work_since_cpu.clear();
        th.unbacked_since_delay += unbacked;
        if let Some(delay) = delay {
            let previous = th.last_delay.replace(delay);
            if let Some(previous) = previous {
                let runnable = delay.saturating_sub(previous);
                let outside_work = runnable.saturating_sub(th.unbacked_since_delay);
                if outside_work > 0 {
                    self.runnable_while_waiting(i, outside_work);
                }
            }
            let ctx = self.threads[i].ctx;
            let waited = self.waited(ctx);
            let th = &mut self.threads[i];
            th.unbacked_since_delay = 0;
            th.entered_since_delay.clear();
            th.entered_since_delay.push((ctx, waited));
        }
    }

    /// The time of a context in the categories of [`RUNNABLE_FROM`].
    #[inline]
    fn waited(&self, ctx: u32) -> [u64; RUNNABLE_FROM.len()] {
        let totals = &self.contexts.totals[ctx as usize];
        RUNNABLE_FROM.map(|c| totals.get(c))
    }

    /// Moves `ns` (at most all of it) of thread `i`'s waiting time since its previous delay
    /// sample to rc.cpu: shared over the categories of [`RUNNABLE_FROM`] in that order, then
    /// within each over its contexts, by rounded-down cumulative shares.
    fn runnable_while_waiting(&mut self, i: usize, ns: u64) {
        // The waiting time since the sample, per context entered and category.
        let mut waits = std::mem::take(&mut self.waits);
        waits.clear();
        for &(ctx, at) in &self.threads[i].entered_since_delay {
            let now = self.waited(ctx);
            waits.push((ctx, std::array::from_fn(|k| now[k].saturating_sub(at[k]))));
        }
        let per_category: [(usize, u64); RUNNABLE_FROM.len()] =
            std::array::from_fn(|k| (k, waits.iter().map(|w| w.1[k]).sum()));
        let totals = &mut self.contexts.totals;
        let parts = &mut self.scratch;
        share(ns, &per_category, |k, moved| {
            parts.clear();
            parts.extend(waits.iter().map(|w| (w.0, w.1[k])));
            share(moved, parts, |ctx, part| {
                totals[ctx as usize].move_to_rc_cpu(RUNNABLE_FROM[k], part)
            });
        });
        self.waits = waits;
    }

    /// The category of thread `i` now: the rule table at its situation.
    #[inline(always)]
    fn category_of(&self, i: usize) -> Category {
        let th = &self.threads[i];
        let own = own_index(th.own);
        let in_region = !th.regions.is_empty() as usize;
        let team_busy = self.needs_team[own][in_region] && {
            let mine = th.own.is_busy() as u32;
            th.regions
                .iter()
                .any(|&slot| self.regions[slot as usize].busy > mine)
        };
        self.table[own][in_region][team_busy as usize]
    }

    /// At the end of thread `i`'s `wait recv` (at `t`), the late-sender split (DESIGN §4 rule
    /// 2): of the wait, the time before the last message it received was sent is waiting for
    /// the partner (sl, as attributed); the rest is the transfer, moved from sl to cl — with
    /// a machine file that has an `[mpi]` model, cl up to the ideal time of the largest
    /// message and rc.comm beyond. Waits in which nothing was received stay sl.
    fn split_receive(&mut self, i: usize, t: u64) {
        let Some(RecvWait {
            begin,
            last_send: Some(last_send),
            bytes,
        }) = self.threads[i].recv_wait.take()
        else {
            return;
        };
        self.close(i, t);
        let start = begin.max(last_send);
        let transfer = t.saturating_sub(start);
        if transfer == 0 {
            return;
        }
        let ideal = self
            .machine
            .as_ref()
            .and_then(|m| m.mpi.as_ref())
            .map_or(transfer, |mpi| mpi.ideal_message_ns(bytes));
        let ctx = self.threads[i].ctx;
        let totals = &mut self.contexts.totals[ctx as usize];
        let transfer = transfer.min(totals.get(Category::Sl));
        let cl = transfer.min(ideal);
        totals.move_to(Category::Sl, Category::Cl, cl);
        totals.move_to_rc_comm(Category::Sl, transfer - cl);
    }

    /// Re-evaluates thread `i` at `t`; a changed category closes its stretch.
    #[inline(always)]
    fn retag(&mut self, i: usize, t: u64) {
        let category = self.category_of(i);
        if category != self.threads[i].category {
            self.close(i, t);
            self.threads[i].category = category;
        }
    }

    /// Attributes `[since, t)` of thread `i` to its category and context. Communication past
    /// its ideal time (the deadline set at `comm_begin` from the machine file) is rc.comm
    /// instead of cl.
    #[inline(always)]
    fn close(&mut self, i: usize, t: u64) {
        let th = &mut self.threads[i];
        let since = th.since;
        if t <= since {
            return;
        }
        th.since = t;
        let (category, ctx) = (th.category, th.ctx);
        if category == Category::Cl && th.comm_deadline < t {
            let split = th.comm_deadline.max(since);
            self.attribute(i, since, split, Category::Cl, ctx);
            self.attribute(i, split, t, Category::Rc, ctx);
        } else {
            self.attribute(i, since, t, category, ctx);
        }
    }

    #[inline(always)]
    fn attribute(&mut self, i: usize, start: u64, end: u64, category: Category, ctx: u32) {
        let ns = end - start;
        if ns == 0 {
            return;
        }
        let totals = &mut self.contexts.totals[ctx as usize];
        match category {
            Category::Pc => {
                totals.add(Category::Pc, ns);
                // Work usually continues in the context of the previous work.
                let work = &mut self.threads[i].work_since_cpu;
                match work.last_mut() {
                    Some(w) if w.0 == ctx => w.1 += ns,
                    _ => add_work(work, ctx, ns),
                }
            }
            // Only communication past its ideal time is tagged rc here (rc.cpu is moved
            // at cpu samples).
            Category::Rc => totals.add_rc_comm(ns),
            c => totals.add(c, ns),
        }
        if self.sink.is_some() {
            let (_, region, phase) = self.contexts.keys[ctx as usize];
            self.pending.push(Interval {
                thread: i as ThreadId,
                start,
                end,
                category,
                region,
                phase,
            });
        }
    }
}

/// Shares `total` (at most the sum of the parts) over `parts` in order: each takes the
/// difference of the rounded-down cumulative shares, so no part gives more than it has and
/// the shares sum to `total` exactly.
fn share<K: Copy>(total: u64, parts: &[(K, u64)], mut f: impl FnMut(K, u64)) {
    let whole: u64 = parts.iter().map(|p| p.1).sum();
    if total == 0 || whole == 0 {
        return;
    }
    let total = total.min(whole);
    let (mut cumulative, mut given) = (0u64, 0u64);
    for &(key, ns) in parts {
        if ns == 0 {
            continue;
        }
        cumulative += ns;
        // In 64 bits unless the product overflows (stretches of seconds); no division for the
        // last part (often the only one).
        let upto = if cumulative == whole {
            total
        } else {
            match total.checked_mul(cumulative) {
                Some(product) => product / whole,
                None => (u128::from(total) * u128::from(cumulative) / u128::from(whole)) as u64,
            }
        };
        if upto > given {
            f(key, upto - given);
        }
        given = upto;
    }
}

/// Adds work time to a context that is not the last one worked in.
#[cold]
#[inline(never)]
fn add_work(work: &mut Vec<(u32, u64)>, ctx: u32, ns: u64) {
    match work.iter_mut().find(|w| w.0 == ctx) {
        Some(w) => w.1 += ns,
        None => work.push((ctx, ns)),
    }
}

/// How many states a thread can be in ([`Own::ALL`]).
const OWNS: usize = Own::ALL.len();

fn own_index(own: Own) -> usize {
    own as usize
}

/// The event's keyword in the text encoding.
fn name(kind: &EventKind) -> &'static str {
    match kind {
        EventKind::Start => "start",
        EventKind::Stop => "stop",
        EventKind::RegionBegin { .. } => "region_begin",
        EventKind::RegionEnd { .. } => "region_end",
        EventKind::WorkBegin { .. } => "work_begin",
        EventKind::WorkEnd { .. } => "work_end",
        EventKind::WaitBegin { .. } => "wait_begin",
        EventKind::WaitEnd { .. } => "wait_end",
        EventKind::CommBegin { .. } => "comm_begin",
        EventKind::CommEnd { .. } => "comm_end",
        EventKind::Cpu { .. } => "cpu",
        EventKind::Phase { .. } => "phase",
        EventKind::Send { .. } => "send",
        EventKind::Recv { .. } => "recv",
        EventKind::Coll { .. } => "coll",
    }
}

/// The keyword of the end of an interval.
fn end_name(own: Own) -> &'static str {
    match own {
        Own::Work => "work_end",
        Own::Comm => "comm_end",
        _ => "wait_end",
    }
}

/// Open intervals for a message, outermost first: `work, comm`; past six, the first six and
/// how many in all (a message is one short line however deep the stack).
fn describe(open: &[Open]) -> String {
    const SHOWN: usize = 6;
    let names: Vec<&str> = open
        .iter()
        .take(SHOWN)
        .map(|o| match o.own {
            Own::Work => "work",
            Own::Comm => "comm",
            _ => "wait",
        })
        .collect();
    let mut text = names.join(", ");
    if open.len() > SHOWN {
        text.push_str(&format!(", … ({} in all)", open.len()));
    }
    text
}

/// Whether an end of `ending` closes an open `open` interval: the same kind, or two waits
/// (a `wait_end` closes the innermost wait whatever kind it names, as it always has).
#[inline(always)]
fn closes(ending: Own, open: Own) -> bool {
    ending == open || (ending.is_wait() && open.is_wait())
}

/// The rule table evaluated for every situation, so that the sweep looks categories up.
fn rule_table() -> [[[Category; 2]; 2]; OWNS] {
    let mut table = [[[CATEGORIES[0]; 2]; 2]; OWNS];
    for (o, &own) in Own::ALL.iter().enumerate() {
        for in_region in [false, true] {
            for team_busy in [false, true] {
                table[o][in_region as usize][team_busy as usize] = classify(&Situation {
                    own,
                    in_region,
                    team_busy,
                });
            }
        }
    }
    table
}

/// Hashes region ids (u64) with one multiplication. The map only ever holds the open
/// regions (a handful), so collisions cost little; SipHash cost more than the rest of a
/// region event.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
