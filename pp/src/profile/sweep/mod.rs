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

//!
//! The sweep's parts: `state` (what it keeps per thread, region and context), `attribute`
//! (categories and contexts: closing a stretch adds it up), `nesting` (a thread's open
//! intervals and the rules of the log they break), `regions` (teams and who is busy) and `rc`
//! (time moved to rc at `cpu` samples and at the ends of receives); `split` says which events a
//! sweep split by thread would take on each thread and which in a combining pass.

mod attribute;
mod nesting;
mod rc;
mod regions;
mod release;
mod split;
mod state;

pub use split::Meeting;
pub(crate) use state::{IdHasher, IdMap};

use std::collections::HashMap;

use super::rules::{Category, Own};
use super::totals::Totals;
use super::violations::{Violation, Violations};
use crate::event::{Event, EventKind, Header, Sym, Symbols, ThreadId, WaitKind};
use crate::log::{LogError, LogReader};
use crate::machine::Machine;
use crate::messages::{Messages, Sent};
use state::{
    Contexts, NO_DEADLINE, OWNS, RecvWait, Region, ThreadState, arg, describe, own_index,
    rule_table,
};

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

    /// Several intervals, in order: [`Sink::interval`] each, unless the sink takes them at
    /// once (one call where the sweep has several, instead of one through the `dyn` each).
    fn intervals(&mut self, intervals: &[Interval], symbols: &Symbols) {
        for interval in intervals {
            self.interval(interval, symbols);
        }
    }

    /// Every event [`Sweep::read`] applies, after it (for sinks that also build the activity
    /// graph: the critical path). Nothing by default.
    fn event(&mut self, _event: &Event, _symbols: &Symbols) {}

    /// Whether [`Sink::event`] is to be called (true by default): a sink that needs only the
    /// `cpu` samples says no, and is spared a call through the `dyn` at every event.
    fn wants_events(&self) -> bool {
        true
    }

    /// A `cpu` sample of a thread of the run that [`Sweep::read`] applied, after it: its
    /// thread, the latest event's time so far (a time going back is taken as that, as the
    /// sweep does), the thread's CPU clock and run-queue delay. Nothing by default.
    fn cpu_sample(&mut self, _thread: ThreadId, _t: u64, _cpu_ns: u64, _delay_ns: Option<u64>) {}

    /// At a `cpu` sample of `thread` (the event applied next), `ns` of its time in `from`
    /// moved to rc.cpu: pc time since its previous sample, li, ip or sl time since its previous
    /// sample with a run-queue delay (docs/attribution.md), so that a critical path can show
    /// its share as rc. Nothing by default.
    fn rc_cpu(&mut self, _thread: ThreadId, _from: Category, _ns: u64) {}
}

/// The attribution state machine.
pub struct Sweep<'s> {
    p: usize,
    threads: Vec<ThreadState>,
    /// Regions in slots (threads refer to slots; closed slots are reused); open ids map to
    /// slots.
    regions: Vec<Region>,
    slots: IdMap<u64, u32>,
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
    /// The calibration that gives `comm` intervals their ideal time.
    machine: Option<Machine>,
    /// Each thread's latest `release` of each kind and object ([`arg`]): when a wait it ends
    /// (`by=`) was released (see `release.rs`).
    releases: HashMap<(ThreadId, u64), u64>,
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
            machine: None,
            releases: HashMap::new(),
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
                active: false,
                last_cpu: None,
                work_since_cpu: Vec::new(),
                last_delay: None,
                unbacked_since_delay: 0,
                released_since_delay: Vec::new(),
                wait_stretches: Vec::new(),
                forks: Vec::new(),
                fork_stretches: Vec::new(),
                release: None,
                released_from: None,
                released_counted: 0,
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
        if !self.threads[i].forks.is_empty() {
            self.first_event_since_fork(i, t);
        }
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
                self.push(i, t, Own::waiting_for(kind), arg(&e.kind));
                if kind == WaitKind::Barrier {
                    self.barrier_arrival(i, t);
                }
            }
            EventKind::WaitEnd { kind, by, .. } => {
                if kind == WaitKind::Recv {
                    self.split_receive(i, t);
                }
                if let Some(by) = by
                    && matches!(kind, WaitKind::Lock | WaitKind::Cond)
                {
                    self.released_by(i, t, by, arg(&e.kind));
                }
                self.pop(i, t, Own::waiting_for(kind), arg(&e.kind))
            }
            EventKind::Release { .. } => {
                self.releases.insert((i as ThreadId, arg(&e.kind)), t);
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
                    self.begin_region(i, t, id, name, team, symbols);
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
                self.active_changed(i, t);
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
                self.active_changed(i, t);
                self.retag(i, t);
                self.released_changed(i, t);
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
        self.read_tapped(log, None::<fn(&Event)>)
    }

    /// [`Sweep::read`], and every event of the log also goes to `tap`, in order, on a thread
    /// of its own when the log is decoded on a second one
    /// ([`LogReader::for_each_placed_tapped`]).
    pub fn read_tapped(
        &mut self,
        log: &mut LogReader,
        tap: Option<impl FnMut(&Event) + Send>,
    ) -> Result<(), LogError> {
        let wants_events = self.sink.as_deref().is_some_and(|s| s.wants_events());
        log.for_each_placed_tapped(
            |e, symbols, place| {
                self.event(e, symbols);
                if let Some(sink) = self.sink.as_deref_mut() {
                    if wants_events {
                        sink.event(e, symbols);
                    }
                    if let EventKind::Cpu {
                        thread_cpu_ns,
                        run_delay_ns,
                    } = e.kind
                        && (e.thread as usize) < self.p
                    {
                        sink.cpu_sample(e.thread, self.last_t, thread_cpu_ns, run_delay_ns);
                    }
                }
                if self.violations.unplaced() {
                    self.violations.place(&place);
                }
            },
            tap,
        )
    }

    #[cold]
    #[inline(never)]
    fn drain(&mut self, symbols: &Symbols) {
        if let Some(sink) = self.sink.as_deref_mut() {
            sink.intervals(&self.pending, symbols);
        }
        self.pending.clear();
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
}
