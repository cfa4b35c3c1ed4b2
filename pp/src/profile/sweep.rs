//! The streaming attribution: events in time order go in, every thread-instant of the run
//! window comes out with exactly one category (the first rule of [`RULES`](super::rules)
//! that applies). Memory is bounded by threads, open regions and names, not by log length.
//!
//! Each thread carries a *tag* (category, innermost region, phase) and the time it took it;
//! an event re-evaluates only the threads it can affect, and a thread whose tag changes closes
//! its interval. Intervals of a thread tile the window, so the categories sum to `p × wall`
//! exactly (integer nanoseconds).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::rules::{CATEGORIES, Category, Own, Situation, classify};
use super::totals::Totals;
use crate::event::{Event, EventKind, Header, Sym, Symbols, ThreadId};
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
    /// Its category (work shows as pc: rc.cpu is known only per pair of cpu samples).
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
}

/// What a thread is attributed to at the moment, and since when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tag {
    category: Category,
    region: Option<Sym>,
    phase: Option<Sym>,
}

#[derive(Debug, Clone)]
struct ThreadState {
    /// Open work/wait/comm intervals, innermost last.
    stack: Vec<Own>,
    /// Slots of the open regions whose team includes this thread, in opening order.
    regions: Vec<usize>,
    phase: Option<Sym>,
    tag: Tag,
    since: u64,
    started: bool,
    stopped: bool,
    has_events: bool,
    /// With a machine file: when the open `comm` interval's ideal time runs out.
    comm_deadline: Option<u64>,
    /// Last `cpu` sample, and the work time (by region and phase) since it.
    last_cpu: Option<u64>,
    work_since_cpu: Vec<(Option<Sym>, Option<Sym>, u64)>,
}

impl ThreadState {
    fn own(&self) -> Own {
        self.stack.last().copied().unwrap_or(Own::Idle)
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
}

/// The attribution state machine.
pub struct Sweep<'s> {
    p: usize,
    threads: Vec<ThreadState>,
    /// Open regions in slots (threads refer to slots); ids map to slots.
    regions: Vec<Option<Region>>,
    slots: HashMap<u64, usize, BuildHasherDefault<IdHasher>>,
    /// Member lists of closed regions, kept for reuse.
    spare_members: Vec<Vec<ThreadId>>,
    free_slots: Vec<usize>,
    /// The rule table evaluated once for every situation: `[own][in_region][team_busy]`.
    table: [[[Category; 2]; 2]; 4],
    window_start: Option<u64>,
    last_stop: Option<u64>,
    last_t: u64,
    events: u64,
    by_thread: Vec<Totals>,
    by_region: Vec<Totals>,
    by_phase: Vec<Totals>,
    warnings: Vec<String>,
    sink: Option<&'s mut dyn Sink>,
    /// Intervals closed during the current event, for the sink.
    pending: Vec<Interval>,
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
    /// What was odd or missing (open intervals at the end, unmatched ends, ...).
    pub warnings: Vec<String>,
}

/// The sweep found nothing to attribute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    /// No thread ever started.
    #[error("no thread has a start event: the run window is empty")]
    NoStart,
}

const IDLE_TAG: Tag = Tag {
    category: Category::Ip,
    region: None,
    phase: None,
};

impl<'s> Sweep<'s> {
    /// A sweep over a run of `header.p` threads; `sink` receives every interval.
    pub fn new(header: &Header, sink: Option<&'s mut dyn Sink>) -> Self {
        let p = header.p as usize;
        Sweep {
            p,
            threads: vec![
                ThreadState {
                    stack: Vec::new(),
                    regions: Vec::new(),
                    phase: None,
                    tag: IDLE_TAG,
                    since: 0,
                    started: false,
                    stopped: false,
                    has_events: false,
                    comm_deadline: None,
                    last_cpu: None,
                    work_since_cpu: Vec::new(),
                };
                p
            ],
            regions: Vec::new(),
            slots: HashMap::default(),
            spare_members: Vec::new(),
            free_slots: Vec::new(),
            table: rule_table(),
            window_start: None,
            last_stop: None,
            last_t: 0,
            events: 0,
            by_thread: vec![Totals::default(); p],
            by_region: Vec::new(),
            by_phase: Vec::new(),
            warnings: Vec::new(),
            sink,
            pending: Vec::new(),
            machine: None,
        }
    }

    /// Splits communication into its ideal time (cl) and the excess (rc.comm) with a
    /// calibrated machine; without one every `comm` instant is cl.
    pub fn with_machine(mut self, machine: Machine) -> Self {
        self.machine = Some(machine);
        self
    }

    /// Applies one event (events must come in non-decreasing time; threads `< p`).
    pub fn event(&mut self, e: &Event, symbols: &Symbols) {
        let i = e.thread as usize;
        if i >= self.p {
            let p = self.p;
            self.warn(|| format!("event of thread {} ignored: p = {p}", e.thread));
            return;
        }
        let t = e.t.max(self.last_t);
        self.last_t = t;
        self.events += 1;
        self.threads[i].has_events = true;
        match e.kind {
            EventKind::Start => {
                if self.window_start.is_none() {
                    self.window_start = Some(t);
                    for j in 0..self.p {
                        self.threads[j].since = t;
                        self.threads[j].tag = self.tag_of(j);
                    }
                }
                self.threads[i].started = true;
            }
            EventKind::Stop => {
                let open = std::mem::take(&mut self.threads[i].stack);
                if !open.is_empty() {
                    self.warn(|| {
                        format!(
                            "thread {}: stop at {t} ns with open {:?} intervals (closed there)",
                            e.thread, open
                        )
                    });
                    self.busy_changed(i, t, busy_of(&open), false);
                }
                self.threads[i].stopped = true;
                self.threads[i].comm_deadline = None;
                self.last_stop = Some(t);
                self.retag(i, t);
            }
            EventKind::RegionBegin { id, name, team } => {
                if let Some(&slot) = self.slots.get(&id) {
                    // Another member recording its part of an open region.
                    if let Some(region) = self.regions[slot].as_mut() {
                        region.opens += 1;
                    }
                    self.drain(symbols);
                    return;
                }
                let mut members = self.spare_members.pop().unwrap_or_default();
                members.clear();
                match team.map(|team| symbols.get_team(team)) {
                    Some(Some(team)) => {
                        members.extend(team.iter().copied().filter(|&m| (m as usize) < self.p))
                    }
                    Some(None) => self.warn(|| {
                        format!("region {id} at {t} ns: its team is not in the symbol table")
                    }),
                    None => members.extend(0..self.p as ThreadId),
                }
                let busy = members
                    .iter()
                    .filter(|&&m| self.threads[m as usize].own().is_busy())
                    .count() as u32;
                let slot = self.free_slots.pop().unwrap_or_else(|| {
                    self.regions.push(None);
                    self.regions.len() - 1
                });
                for &m in &members {
                    self.threads[m as usize].regions.push(slot);
                }
                self.slots.insert(id, slot);
                self.regions[slot] = Some(Region {
                    name,
                    opens: 1,
                    members,
                    busy,
                });
                self.retag_members(slot, t, None);
            }
            EventKind::RegionEnd { id } => match self.slots.get(&id) {
                None => self.warn(|| {
                    format!(
                        "thread {}: region_end {id} at {t} ns without region_begin",
                        e.thread
                    )
                }),
                Some(&slot) => {
                    let region = self.regions[slot].as_mut().expect("slots map to regions");
                    region.opens -= 1;
                    if region.opens == 0 {
                        self.end_region(id, t);
                    }
                }
            },
            EventKind::WorkBegin { .. } => self.push(i, t, Own::Work),
            EventKind::WaitBegin { .. } => self.push(i, t, Own::Wait),
            EventKind::CommBegin { bytes } => {
                let ideal = self.machine.as_ref().map(|m| m.ideal_copy_ns(bytes));
                self.threads[i].comm_deadline = ideal.map(|ns| t.saturating_add(ns));
                self.push(i, t, Own::Comm);
            }
            EventKind::WorkEnd { .. } => self.pop(i, t, Own::Work, "work_end"),
            EventKind::WaitEnd { .. } => self.pop(i, t, Own::Wait, "wait_end"),
            EventKind::CommEnd { .. } => {
                self.pop(i, t, Own::Comm, "comm_end");
                self.threads[i].comm_deadline = None;
            }
            EventKind::Cpu { thread_cpu_ns } => self.cpu_sample(i, t, thread_cpu_ns),
            EventKind::Phase { name } => {
                self.threads[i].phase = Some(name);
                self.retag(i, t);
            }
        }
        self.drain(symbols);
    }

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
        if !unstopped.is_empty() {
            self.warn(|| format!(
                "threads {unstopped:?} never stopped: the log is cut at {end} ns (the window ends there)"
            ));
        } else if let Some(stop) = self.last_stop.filter(|&stop| stop < end) {
            self.warn(|| format!(
                "events after the last stop ({stop} ns): the window ends at the last event ({end} ns)"
            ));
        }
        for j in 0..self.p {
            let (has_events, started) = (self.threads[j].has_events, self.threads[j].started);
            if has_events && !started {
                self.warn(|| format!("thread {j} has events but no start"));
            }
            let open = self.threads[j].stack.clone();
            if !open.is_empty() {
                self.warn(|| format!("thread {j}: {open:?} still open at the end ({end} ns)"));
            }
        }
        let mut open: Vec<_> = self.slots.keys().copied().collect();
        open.sort_unstable();
        for id in open {
            self.warn(|| format!("region {id} never ended"));
        }
        for j in 0..self.p {
            self.close(j, end.max(self.threads[j].since));
        }
        self.drain(symbols);
        let keyed = |v: Vec<Totals>| -> Vec<(Option<Sym>, Totals)> {
            v.into_iter()
                .enumerate()
                .filter(|(_, t)| t.sum() > 0)
                .map(|(k, t)| ((k > 0).then(|| Sym(k as u32 - 1)), t))
                .collect()
        };
        let mut totals = Totals::default();
        for t in &self.by_thread {
            totals.absorb(t);
        }
        Ok(Attribution {
            p: self.p as u32,
            window: (start, end),
            events: self.events,
            totals,
            by_thread: self.by_thread,
            by_region: keyed(self.by_region),
            by_phase: keyed(self.by_phase),
            warnings: self.warnings,
        })
    }

    /// Records an oddity; only the first hundred are kept (and formatted).
    fn warn(&mut self, message: impl FnOnce() -> String) {
        if self.warnings.len() < 100 {
            self.warnings.push(message());
        } else if self.warnings.len() == 100 {
            self.warnings.push("... more warnings suppressed".into());
        }
    }

    fn push(&mut self, i: usize, t: u64, own: Own) {
        let was = self.threads[i].own().is_busy();
        self.threads[i].stack.push(own);
        self.busy_changed(i, t, was, own.is_busy());
        self.retag(i, t);
    }

    fn pop(&mut self, i: usize, t: u64, own: Own, what: &str) {
        let was = self.threads[i].own().is_busy();
        let stack = &mut self.threads[i].stack;
        match stack.iter().rposition(|&o| o == own) {
            Some(pos) => {
                if pos + 1 != stack.len() {
                    let inner = stack.split_off(pos + 1);
                    self.warn(|| {
                        format!("thread {i}: {what} at {t} ns closes {inner:?} opened inside it")
                    });
                }
                self.threads[i].stack.pop();
            }
            None => self.warn(|| format!("thread {i}: {what} at {t} ns without a begin")),
        }
        let now = self.threads[i].own().is_busy();
        self.busy_changed(i, t, was, now);
        self.retag(i, t);
    }

    /// Updates the busy counts of thread `i`'s regions; idle teammates whose team turns busy
    /// or quiet change between li and sl.
    fn busy_changed(&mut self, i: usize, t: u64, was: bool, now: bool) {
        if was == now {
            return;
        }
        for k in 0..self.threads[i].regions.len() {
            let slot = self.threads[i].regions[k];
            let Some(region) = self.regions[slot].as_mut() else {
                continue;
            };
            let before = region.busy;
            region.busy = if now {
                before + 1
            } else {
                before.saturating_sub(1)
            };
            if (before == 0) != (region.busy == 0) {
                self.retag_members(slot, t, Some(i));
            }
        }
    }

    /// Re-evaluates the members of the region in `slot`: all of them, or (with `busy_change`
    /// naming the thread that changed) the other, idle ones.
    fn retag_members(&mut self, slot: usize, t: u64, busy_change: Option<usize>) {
        let count = self.regions[slot].as_ref().map_or(0, |r| r.members.len());
        for k in 0..count {
            let Some(m) = self.regions[slot].as_ref().map(|r| r.members[k] as usize) else {
                return;
            };
            match busy_change {
                Some(i) if m == i || self.threads[m].own() != Own::Idle => {}
                _ => self.retag(m, t),
            }
        }
    }

    fn end_region(&mut self, id: u64, t: u64) {
        let Some(slot) = self.slots.remove(&id) else {
            return;
        };
        let Some(region) = self.regions[slot].take() else {
            return;
        };
        self.free_slots.push(slot);
        for &m in &region.members {
            let m = m as usize;
            self.threads[m].regions.retain(|&r| r != slot);
            self.retag(m, t);
        }
        self.spare_members.push(region.members);
    }

    fn cpu_sample(&mut self, i: usize, t: u64, cpu: u64) {
        self.close(i, t);
        let th = &mut self.threads[i];
        let previous = th.last_cpu.replace(cpu);
        // Taken for the loop below and given back cleared, so its capacity is reused.
        let mut work = std::mem::take(&mut th.work_since_cpu);
        self.rc_cpu(i, previous, cpu, &work);
        work.clear();
        self.threads[i].work_since_cpu = work;
    }

    /// Moves the work since the previous sample that the CPU clock does not back to rc.cpu.
    fn rc_cpu(
        &mut self,
        i: usize,
        previous: Option<u64>,
        cpu: u64,
        work: &[(Option<Sym>, Option<Sym>, u64)],
    ) {
        let Some(previous) = previous else {
            return;
        };
        let worked: u64 = work.iter().map(|w| w.2).sum();
        let backed = cpu.saturating_sub(previous);
        let unbacked = worked.saturating_sub(backed);
        if unbacked == 0 {
            return;
        }
        // Move the unbacked part of the work from pc to rc.cpu, shared over the regions and
        // phases the work was in (integer shares; the last takes the remainder).
        self.by_thread[i].move_to_rc_cpu(unbacked);
        let mut left = unbacked;
        for (n, &(region, phase, ns)) in work.iter().enumerate() {
            let share = if n + 1 == work.len() {
                left
            } else {
                ((unbacked as u128 * ns as u128) / worked as u128) as u64
            };
            left -= share;
            slot(&mut self.by_region, region).move_to_rc_cpu(share);
            slot(&mut self.by_phase, phase).move_to_rc_cpu(share);
        }
    }

    fn tag_of(&self, i: usize) -> Tag {
        let th = &self.threads[i];
        let own = th.own();
        let busy_self = own.is_busy() as u32;
        let team_busy = th.regions.iter().any(|&slot| {
            self.regions[slot]
                .as_ref()
                .is_some_and(|r| r.busy > busy_self)
        });
        let in_region = !th.regions.is_empty();
        Tag {
            category: self.table[own_index(own)][in_region as usize][team_busy as usize],
            region: th
                .regions
                .last()
                .and_then(|&slot| self.regions[slot].as_ref())
                .map(|r| r.name),
            phase: th.phase,
        }
    }

    /// Re-evaluates thread `i` at `t`; a changed tag closes its interval.
    fn retag(&mut self, i: usize, t: u64) {
        let tag = self.tag_of(i);
        if tag != self.threads[i].tag {
            self.close(i, t);
            self.threads[i].tag = tag;
        }
    }

    /// Attributes `[since, t)` of thread `i` to its tag. Communication past its ideal time
    /// (the deadline set at `comm_begin` from the machine file) is rc.comm instead of cl.
    fn close(&mut self, i: usize, t: u64) {
        if self.window_start.is_none() {
            return;
        }
        let th = &mut self.threads[i];
        let (since, tag) = (th.since, th.tag);
        th.since = t;
        if t <= since {
            return;
        }
        match th.comm_deadline.filter(|_| tag.category == Category::Cl) {
            Some(deadline) if deadline < t => {
                let split = deadline.max(since);
                self.attribute(i, since, split, tag);
                self.attribute(
                    i,
                    split,
                    t,
                    Tag {
                        category: Category::Rc,
                        ..tag
                    },
                );
            }
            _ => self.attribute(i, since, t, tag),
        }
    }

    fn attribute(&mut self, i: usize, start: u64, end: u64, tag: Tag) {
        let ns = end - start;
        if ns == 0 {
            return;
        }
        let th = &mut self.threads[i];
        if tag.category == Category::Pc {
            // Work usually continues in the region and phase of the previous work.
            match th.work_since_cpu.last_mut() {
                Some(w) if w.0 == tag.region && w.1 == tag.phase => w.2 += ns,
                _ => match th
                    .work_since_cpu
                    .iter_mut()
                    .find(|w| w.0 == tag.region && w.1 == tag.phase)
                {
                    Some(w) => w.2 += ns,
                    None => th.work_since_cpu.push((tag.region, tag.phase, ns)),
                },
            }
        }
        let add = |totals: &mut Totals| match tag.category {
            // Only communication past its ideal time is tagged rc here (rc.cpu is moved
            // from pc at cpu samples).
            Category::Rc => totals.add_rc_comm(ns),
            c => totals.add(c, ns),
        };
        add(&mut self.by_thread[i]);
        add(slot(&mut self.by_region, tag.region));
        add(slot(&mut self.by_phase, tag.phase));
        if self.sink.is_some() {
            self.pending.push(Interval {
                thread: i as ThreadId,
                start,
                end,
                category: tag.category,
                region: tag.region,
                phase: tag.phase,
            });
        }
    }
}

/// Every state, in declaration order (so that `own as usize` indexes the table).
const OWN: [Own; 4] = [Own::Comm, Own::Wait, Own::Work, Own::Idle];

fn own_index(own: Own) -> usize {
    own as usize
}

/// The rule table evaluated for every situation, so that the sweep looks categories up.
fn rule_table() -> [[[Category; 2]; 2]; 4] {
    let mut table = [[[CATEGORIES[0]; 2]; 2]; 4];
    for (o, &own) in OWN.iter().enumerate() {
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

/// Whether the innermost of these open intervals is busy.
fn busy_of(stack: &[Own]) -> bool {
    stack.last().is_some_and(|o| o.is_busy())
}

/// The totals of a symbol-keyed breakdown (`None` is slot 0), growing the table.
fn slot(table: &mut Vec<Totals>, key: Option<Sym>) -> &mut Totals {
    let k = key.map_or(0, |s| s.0 as usize + 1);
    if table.len() <= k {
        table.resize(k + 1, Totals::default());
    }
    &mut table[k]
}
