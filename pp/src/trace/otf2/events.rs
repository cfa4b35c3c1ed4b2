//! The mapping of OTF2 event records onto pp events (the table in docs/otf2.md): one
//! [`Mapper`] takes the records of every location in time order and keeps, per thread, what
//! it is doing (working, waiting, in an MPI call, in an OpenMP team).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use super::definitions::{Definitions, IdMap, Layout, PARADIGM_MPI};
use super::ffi::UNDEFINED_U32;
use super::order::Order;
use crate::event::{Event, EventKind, Sym, Symbols, ThreadId, WaitKind};

/// The window is released to the sorter each time it holds this many events.
const WINDOW_RELEASE: usize = 4096;

/// `OTF2_REGION_ROLE_PARALLEL`.
const ROLE_PARALLEL: u8 = 5;
/// `OTF2_REGION_ROLE_CRITICAL`.
const ROLE_CRITICAL: u8 = 12;
/// `OTF2_REGION_ROLE_BARRIER` and `OTF2_REGION_ROLE_IMPLICIT_BARRIER`.
const ROLE_BARRIER: u8 = 15;
const ROLE_IMPLICIT_BARRIER: u8 = 16;
/// `OTF2_REGION_ROLE_COLL_ONE2ALL` .. `OTF2_REGION_ROLE_COLL_OTHER`.
const ROLES_COLLECTIVE: std::ops::RangeInclusive<u8> = 23..=26;
/// `OTF2_REGION_ROLE_THREAD_WAIT`: `pthread_join` in Score-P's pthread adapter.
const ROLE_THREAD_WAIT: u8 = 33;
/// `OTF2_REGION_ROLE_TASK` and `OTF2_REGION_ROLE_TASK_UNTIED`: an OpenMP task's body.
const ROLE_TASK: u8 = 20;
const ROLE_TASK_UNTIED: u8 = 34;
/// `OTF2_REGION_ROLE_TASK_WAIT`: `!$omp taskwait`.
const ROLE_TASK_WAIT: u8 = 22;

/// MPI calls whose time is a `send` wait.
const MPI_SENDS: [&str; 4] = ["MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend"];
/// MPI calls whose time is a `recv` wait.
const MPI_RECVS: [&str; 9] = [
    "MPI_Recv",
    "MPI_Sendrecv",
    "MPI_Sendrecv_replace",
    "MPI_Wait",
    "MPI_Waitall",
    "MPI_Waitany",
    "MPI_Waitsome",
    "MPI_Probe",
    "MPI_Mprobe",
];
/// MPI collectives known by name (for traces whose regions carry no collective role).
const MPI_COLLECTIVES: [&str; 16] = [
    "MPI_Barrier",
    "MPI_Bcast",
    "MPI_Reduce",
    "MPI_Allreduce",
    "MPI_Alltoall",
    "MPI_Alltoallv",
    "MPI_Gather",
    "MPI_Gatherv",
    "MPI_Scatter",
    "MPI_Scatterv",
    "MPI_Allgather",
    "MPI_Allgatherv",
    "MPI_Reduce_scatter",
    "MPI_Reduce_scatter_block",
    "MPI_Scan",
    "MPI_Exscan",
];
/// OpenMP lock calls whose time until the lock is acquired is a `lock` wait.
const OMP_LOCKS: [&str; 2] = ["omp_set_lock", "omp_set_nest_lock"];
/// The pthread calls that wait for a lock (Score-P's pthread adapter records the acquisition
/// with `ThreadAcquireLock` inside them).
const PTHREAD_LOCKS: [&str; 2] = ["pthread_mutex_lock", "pthread_spin_lock"];

/// The longest name the import writes (longer region names are cut).
const MAX_NAME: usize = 200;

/// What an entered region is to its thread.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// `MPI_Init`: the rank's part of the run starts at its `Leave`.
    Init,
    /// The outermost MPI call; `waits` when its time is a wait.
    Mpi { waits: bool },
    /// A barrier or lock region whose time is a wait.
    Wait,
    /// An OpenMP parallel region that made the thread a team member (no `ThreadTeamBegin`).
    Team,
    /// A user region (names the thread's phase).
    User(Sym),
    /// An OpenMP task's body (names the phase, as a user region does); entered during a
    /// barrier-kind wait, that wait is resumed, with its object, at the task's `Leave`.
    Task(Sym, Option<Option<Sym>>),
    /// Anything else: an MPI call inside an MPI call, `MPI_Finalize`.
    Other,
}

#[derive(Debug, Default)]
struct Thread {
    started: bool,
    stopped: bool,
    /// The first thread of its process: works outside OpenMP teams.
    master: bool,
    /// An MPI rank's thread: starts where `MPI_Init` returns, at its first MPI call when that
    /// comes first, and at its first record in a trace without `MPI_Init`.
    waits_for_init: bool,
    in_mpi_region: bool,
    in_work: bool,
    /// The open wait, and whether the thread worked before it.
    wait: Option<(WaitKind, Option<Sym>, bool)>,
    frames: Vec<Frame>,
    mpi_depth: u32,
    mpi_enter_t: u64,
    /// The index of the `coll` whose operation comes with `MpiCollectiveEnd`.
    pending_coll: Option<usize>,
    team_depth: u32,
    fork_depth: u32,
    last_t: u64,
}

/// The open outermost OpenMP region of a process, or its threads created with `ThreadCreate`
/// (pthreads) not waited for yet.
#[derive(Debug)]
struct OmpRegion {
    id: u64,
    /// The index of its `region_begin`, completed (name, team) as the region goes on.
    begin: usize,
    forker: ThreadId,
    named: bool,
    members: BTreeSet<ThreadId>,
    /// Threads created (`ThreadCreate`) and not waited for (`ThreadWait`); 0 for an OpenMP
    /// region.
    created: u32,
}

/// Turns OTF2 records into pp events.
pub struct Mapper<'a, 's> {
    defs: &'a Definitions,
    layout: &'a Layout,
    resolution: u64,
    offset: u64,
    symbols: Symbols,
    region_syms: IdMap<u32, Sym>,
    /// Location id → thread ([`NOT_A_THREAD`] for other locations) when the ids are small
    /// enough for a vector (else empty, and `layout.thread_of` is looked up).
    dense_threads: Vec<ThreadId>,
    /// The events from the oldest one a later record may still complete (an open OpenMP
    /// region's `region_begin`, a collective's `coll` before its `MpiCollectiveEnd`) on; the
    /// ones before it are in `order` (docs/otf2.md#memory-and-speed).
    window: VecDeque<Event>,
    /// The index of `window[0]` among every event pushed.
    base: usize,
    /// The window's earliest time: (index, time) of the events no later one is earlier than,
    /// in order of index (so the front is the least).
    window_min: VecDeque<(usize, u64)>,
    /// The events released from the window, put in the log's order.
    order: Order<'s>,
    /// The first error writing the external sort's temporary file.
    spill_error: Option<std::io::Error>,
    /// Indices of `coll` events never completed by an `MpiCollectiveEnd` (dropped).
    unfinished: BTreeSet<usize>,
    threads: Vec<Thread>,
    rank_of: HashMap<ThreadId, u32>,
    omp: HashMap<u32, OmpRegion>,
    next_region: u64,
    /// Records read and not mapped, by kind.
    pub ignored: BTreeMap<&'static str, u64>,
    /// Records read.
    pub records: u64,
    /// The location and time (ticks) of the last record read.
    pub last: (u64, u64),
    /// The trace defines `MPI_Init` (else its ranks start at their first record).
    init_defined: bool,
}

/// A location that is not a thread, in [`Mapper`]'s vector of location ids.
const NOT_A_THREAD: ThreadId = ThreadId::MAX;

/// Location id → thread as a vector, when the largest id is below 2²⁰ and at most 16 times
/// the number of threads (plus 1,024); else empty.
fn dense_threads(layout: &Layout) -> Vec<ThreadId> {
    let Some(&largest) = layout.thread_of.keys().max() else {
        return Vec::new();
    };
    let fits = largest < 1 << 20 && largest <= 16 * layout.thread_of.len() as u64 + 1024;
    if !fits {
        return Vec::new();
    }
    let mut v = vec![NOT_A_THREAD; largest as usize + 1];
    for (&loc, &th) in &layout.thread_of {
        v[loc as usize] = th;
    }
    v
}

/// Whether region `name` of `paradigm` is an MPI call.
fn is_mpi(name: &str, paradigm: u8) -> bool {
    paradigm == PARADIGM_MPI || name.starts_with("MPI_")
}

/// A name as a token of the log: whitespace, `#` and control characters become `_`, cut to
/// [`MAX_NAME`] bytes; an empty name is `_`.
pub fn token(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(MAX_NAME));
    for c in name.chars() {
        if out.len() + c.len_utf8() > MAX_NAME {
            break;
        }
        out.push(if c.is_whitespace() || c.is_control() || c == '#' {
            '_'
        } else {
            c
        });
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

impl<'a, 's> Mapper<'a, 's> {
    /// A mapper for the trace with these definitions and threads, whose events go to `order`.
    pub fn new(defs: &'a Definitions, layout: &'a Layout, order: Order<'s>) -> Mapper<'a, 's> {
        let (resolution, offset) = defs.clock.unwrap_or((1_000_000_000, 0));
        let has_init = defs
            .regions
            .values()
            .any(|r| r.name == "MPI_Init" || r.name == "MPI_Init_thread");
        // A trace of MPI calls is of MPI ranks, in the region of every rank from their start,
        // whether or not its writer recorded `MPI_Init`.
        let mpi = has_init || defs.regions.values().any(|r| is_mpi(&r.name, r.paradigm));
        let mut threads: Vec<Thread> = (0..layout.p()).map(|_| Thread::default()).collect();
        for (i, t) in threads.iter_mut().enumerate() {
            t.master = i == 0 || layout.group_of_thread[i] != layout.group_of_thread[i - 1];
        }
        let rank_of: HashMap<ThreadId, u32> = layout
            .ranks
            .iter()
            .enumerate()
            .map(|(r, &t)| (t, r as u32))
            .collect();
        if mpi {
            for &t in &layout.ranks {
                threads[t as usize].waits_for_init = true;
            }
        }
        Mapper {
            defs,
            layout,
            resolution: resolution.max(1),
            offset,
            symbols: Symbols::default(),
            region_syms: IdMap::default(),
            dense_threads: dense_threads(layout),
            window: VecDeque::new(),
            base: 0,
            window_min: VecDeque::new(),
            order,
            spill_error: None,
            unfinished: BTreeSet::new(),
            threads,
            rank_of,
            omp: HashMap::new(),
            next_region: 1,
            ignored: BTreeMap::new(),
            records: 0,
            last: (0, 0),
            init_defined: has_init,
        }
    }

    /// Counts a record that is not mapped.
    pub fn ignore(&mut self, kind: &'static str) {
        *self.ignored.entry(kind).or_default() += 1;
    }

    /// Nanoseconds since the trace's global offset, rounded down (`u64::MAX` beyond).
    #[inline]
    pub fn ns(&self, ticks: u64) -> u64 {
        const NS: u64 = 1_000_000_000;
        let since = ticks.saturating_sub(self.offset);
        if self.resolution == NS {
            return since;
        }
        // since × 10⁹ / r = q × 10⁹ + rest × 10⁹ / r (since = q r + rest), with 64-bit
        // divisions: a 128-bit one for every record was a visible share of the import.
        let (q, rest) = (since / self.resolution, since % self.resolution);
        let part = match rest.checked_mul(NS) {
            Some(x) => x / self.resolution,
            None => (u128::from(rest) * u128::from(NS) / u128::from(self.resolution)) as u64,
        };
        q.checked_mul(NS)
            .and_then(|whole| whole.checked_add(part))
            .unwrap_or(u64::MAX)
    }

    /// The thread of a location and the record's time in ns; `None` (the record counted as
    /// ignored) for a location that is not a CPU thread.
    fn at(&mut self, location: u64, ticks: u64) -> Option<(ThreadId, u64)> {
        self.records += 1;
        self.last = (location, ticks);
        let th = if self.dense_threads.is_empty() {
            self.layout.thread_of.get(&location).copied()
        } else {
            usize::try_from(location)
                .ok()
                .and_then(|l| self.dense_threads.get(l).copied())
                .filter(|&th| th != NOT_A_THREAD)
        };
        let Some(th) = th else {
            self.ignore("records of locations that are not CPU threads");
            return None;
        };
        let t = self.ns(ticks);
        let s = &mut self.threads[th as usize];
        let t = t.max(s.last_t);
        s.last_t = t;
        if !s.started && !s.waits_for_init {
            s.started = true;
            s.in_work = s.master;
            self.push(th, t, EventKind::Start);
            if self.threads[th as usize].in_work {
                self.push(th, t, EventKind::WorkBegin { label: None });
            }
        } else if !s.started && !self.init_defined {
            self.start_rank(th, t);
        }
        Some((th, t))
    }

    /// Adds an event while the thread is between its start and its stop; returns its index.
    fn push(&mut self, thread: ThreadId, t: u64, kind: EventKind) -> Option<usize> {
        let s = &self.threads[thread as usize];
        if !s.started || s.stopped {
            return None;
        }
        let e = Event { t, thread, kind };
        if self.window.is_empty()
            && !matches!(kind, EventKind::RegionBegin { .. } | EventKind::Coll { .. })
        {
            // Nothing waits in the window, and no later record changes this event: it goes
            // straight on.
            let i = self.base;
            self.base += 1;
            self.hand_on(e);
            self.flush_if_due();
            return Some(i);
        }
        self.window.push_back(e);
        let i = self.base + self.window.len() - 1;
        while self.window_min.back().is_some_and(|&(_, at)| at >= t) {
            self.window_min.pop_back();
        }
        self.window_min.push_back((i, t));
        if self.window.len() >= WINDOW_RELEASE {
            self.release(false);
        }
        Some(i)
    }

    /// The event of index `i`, while it is in the window.
    fn event_mut(&mut self, i: usize) -> Option<&mut Event> {
        self.window.get_mut(i.checked_sub(self.base)?)
    }

    /// Hands the events before the oldest one a later record may complete (all of them when
    /// `all`) to the sorter; a `coll` never completed is dropped.
    fn release(&mut self, all: bool) {
        let pinned = if all {
            usize::MAX
        } else {
            let regions = self.omp.values().map(|r| r.begin);
            let colls = self.threads.iter().filter_map(|t| t.pending_coll);
            regions.chain(colls).min().unwrap_or(usize::MAX)
        };
        while self.base < pinned {
            let Some(e) = self.window.pop_front() else {
                break;
            };
            let i = self.base;
            self.base += 1;
            if self.window_min.front().is_some_and(|&(j, _)| j == i) {
                self.window_min.pop_front();
            }
            if self.unfinished.remove(&i) {
                continue;
            }
            self.hand_on(e);
        }
        self.flush_if_due();
    }

    #[inline]
    fn hand_on(&mut self, e: Event) {
        if let Err(e) = self.order.push(e) {
            self.spill_error.get_or_insert(e);
        }
    }

    /// Hands the ordered events before the watermark over, when the order asks for it.
    #[inline]
    fn flush_if_due(&mut self) {
        if self.order.wants_flush() {
            let watermark = self.watermark();
            if let Err(e) = self.order.flush(watermark, &self.symbols) {
                self.spill_error.get_or_insert(e);
            }
        }
    }

    /// A time no event still to be released is earlier than: the window's earliest, each
    /// running thread's last record (or the start of its MPI call, where a `send` goes), and,
    /// while a thread has not started, the last record's (the reader gives the records in time
    /// order; [`Order`] notices a trace that does not).
    fn watermark(&self) -> u64 {
        let mut w = self.window_min.front().map_or(u64::MAX, |&(_, t)| t);
        let mut waiting = false;
        for s in &self.threads {
            if s.stopped {
                continue;
            }
            if !s.started {
                waiting = true;
                continue;
            }
            w = w.min(s.last_t);
            if s.mpi_depth > 0 {
                w = w.min(s.mpi_enter_t);
            }
        }
        if waiting {
            w = w.min(self.ns(self.last.1));
        }
        w
    }

    fn name(&mut self, name: &str) -> Sym {
        self.symbols.intern(&token(name))
    }

    fn region_sym(&mut self, region: u32) -> Sym {
        if let Some(&s) = self.region_syms.get(&region) {
            return s;
        }
        let name = match self.defs.regions.get(&region) {
            Some(r) => r.name.clone(),
            None => format!("region{region}"),
        };
        let s = self.name(&name);
        self.region_syms.insert(region, s);
        s
    }

    fn work_begin(&mut self, th: ThreadId, t: u64) {
        if !self.threads[th as usize].in_work {
            self.threads[th as usize].in_work = true;
            self.push(th, t, EventKind::WorkBegin { label: None });
        }
    }

    fn work_end(&mut self, th: ThreadId, t: u64) {
        if self.threads[th as usize].in_work {
            self.threads[th as usize].in_work = false;
            self.push(th, t, EventKind::WorkEnd { label: None });
        }
    }

    fn wait_begin(&mut self, th: ThreadId, t: u64, kind: WaitKind, object: Option<Sym>) -> bool {
        if self.threads[th as usize].wait.is_some() {
            return false;
        }
        let worked = self.threads[th as usize].in_work;
        self.work_end(th, t);
        self.threads[th as usize].wait = Some((kind, object, worked));
        self.push(th, t, EventKind::WaitBegin { kind, object });
        true
    }

    fn wait_end(&mut self, th: ThreadId, t: u64) {
        if let Some((kind, object, worked)) = self.threads[th as usize].wait.take() {
            self.push(
                th,
                t,
                EventKind::WaitEnd {
                    kind,
                    object,
                    by: None,
                },
            );
            if worked {
                self.work_begin(th, t);
            }
        }
    }

    /// The phase after a user region is entered or left: the innermost one's name.
    fn phase(&mut self, th: ThreadId, t: u64) {
        let innermost = self.threads[th as usize]
            .frames
            .iter()
            .rev()
            .find_map(|f| match f {
                Frame::User(s) | Frame::Task(s, _) => Some(*s),
                _ => None,
            });
        if let Some(name) = innermost {
            self.push(th, t, EventKind::Phase { name });
        }
    }

    /// `Enter`.
    pub fn enter(&mut self, location: u64, ticks: u64, region: u32) {
        let Some((th, t)) = self.at(location, ticks) else {
            return;
        };
        let (name, role, paradigm) = match self.defs.regions.get(&region) {
            Some(r) => (r.name.as_str(), r.role, r.paradigm),
            None => ("", 0, 0),
        };
        let frame = if is_mpi(name, paradigm) {
            self.enter_mpi(th, t, name, role)
        } else if role == ROLE_BARRIER
            || role == ROLE_IMPLICIT_BARRIER
            || role == ROLE_TASK_WAIT
            || role == ROLE_THREAD_WAIT
            || name == "pthread_join"
        {
            let object = self.name(match role {
                ROLE_BARRIER => "barrier",
                ROLE_IMPLICIT_BARRIER => "implicit_barrier",
                ROLE_TASK_WAIT => "taskwait",
                _ => "join",
            });
            if self.wait_begin(th, t, WaitKind::Barrier, Some(object)) {
                Frame::Wait
            } else {
                Frame::Other
            }
        } else if role == ROLE_TASK || role == ROLE_TASK_UNTIED {
            // A waiting thread that runs a task works (as the OMPT tool has it).
            let resume = match self.threads[th as usize].wait {
                Some((WaitKind::Barrier, object, _)) => {
                    self.wait_end(th, t);
                    Some(object)
                }
                _ => None,
            };
            Frame::Task(self.region_sym(region), resume)
        } else if role == ROLE_CRITICAL
            || OMP_LOCKS.contains(&name)
            || PTHREAD_LOCKS.contains(&name)
        {
            let object = self.name(if role == ROLE_CRITICAL {
                "critical"
            } else {
                name
            });
            if self.wait_begin(th, t, WaitKind::Lock, Some(object)) {
                Frame::Wait
            } else {
                Frame::Other
            }
        } else if role == ROLE_PARALLEL {
            let sym = self.region_sym(region);
            self.name_omp_region(th, sym);
            if self.threads[th as usize].team_depth == 0 {
                self.team_begin(th, t);
                self.threads[th as usize].frames.push(Frame::Team);
            }
            Frame::User(sym)
        } else {
            Frame::User(self.region_sym(region))
        };
        self.threads[th as usize].frames.push(frame);
        if let Frame::User(_) | Frame::Task(..) = frame {
            self.phase(th, t);
        }
    }

    fn enter_mpi(&mut self, th: ThreadId, t: u64, name: &str, role: u8) -> Frame {
        if name == "MPI_Init" || name == "MPI_Init_thread" {
            return Frame::Init;
        }
        // An MPI call before `MPI_Init` returned: its `MPI_Init` was not recorded.
        self.start_rank(th, t);
        if name == "MPI_Finalize" {
            self.finish_thread(th, t);
            return Frame::Other;
        }
        let s = &mut self.threads[th as usize];
        if s.mpi_depth > 0 {
            return Frame::Other;
        }
        s.mpi_depth = 1;
        s.mpi_enter_t = t;
        let collective = ROLES_COLLECTIVE.contains(&role)
            || role == ROLE_BARRIER
            || MPI_COLLECTIVES.contains(&name);
        let waits = if MPI_SENDS.contains(&name) {
            self.wait_begin(th, t, WaitKind::Send, None)
        } else if MPI_RECVS.contains(&name) {
            self.wait_begin(th, t, WaitKind::Recv, None)
        } else if collective {
            let op = name.strip_prefix("MPI_").unwrap_or(name).to_lowercase();
            let op = self.name(&op);
            let coll = EventKind::Coll {
                op,
                bytes: 0,
                root: None,
                comm: None,
            };
            if let Some(i) = self.push(th, t, coll) {
                self.unfinished.insert(i);
                self.threads[th as usize].pending_coll = Some(i);
            }
            self.wait_begin(th, t, WaitKind::Barrier, Some(op))
        } else {
            false
        };
        Frame::Mpi { waits }
    }

    /// `Leave`.
    pub fn leave(&mut self, location: u64, ticks: u64, _region: u32) {
        let Some((th, t)) = self.at(location, ticks) else {
            return;
        };
        let Some(frame) = self.threads[th as usize].frames.pop() else {
            self.ignore("Leave records without their Enter");
            return;
        };
        match frame {
            Frame::Init => self.start_rank(th, t),
            Frame::Mpi { waits } => {
                let s = &mut self.threads[th as usize];
                s.mpi_depth = 0;
                s.pending_coll = None;
                if waits {
                    self.wait_end(th, t);
                }
            }
            Frame::Wait => self.wait_end(th, t),
            Frame::Team => self.team_end(th, t),
            Frame::User(_) => {
                if let Some(Frame::Team) = self.threads[th as usize].frames.last() {
                    self.threads[th as usize].frames.pop();
                    self.team_end(th, t);
                }
                self.phase(th, t);
            }
            Frame::Task(_, resume) => {
                self.phase(th, t);
                if let Some(object) = resume {
                    self.wait_begin(th, t, WaitKind::Barrier, object);
                }
            }
            Frame::Other => {}
        }
    }

    /// `MPI_Init` returns (or, where it was not recorded, the rank's first MPI call or record
    /// comes): the rank starts, in the region of every rank, working.
    fn start_rank(&mut self, th: ThreadId, t: u64) {
        let s = &mut self.threads[th as usize];
        if s.started || !s.waits_for_init {
            return;
        }
        s.started = true;
        s.in_mpi_region = true;
        self.push(th, t, EventKind::Start);
        let name = self.name("mpi");
        let team = if self.layout.ranks.len() == self.layout.p() {
            None
        } else {
            Some(self.symbols.intern_team(&self.layout.ranks))
        };
        self.push(th, t, EventKind::RegionBegin { id: 0, name, team });
        self.threads[th as usize].in_work = false;
        self.work_begin(th, t);
    }

    /// Ends what the thread has open and stops it (at `MPI_Finalize`, or the end of the trace).
    fn finish_thread(&mut self, th: ThreadId, t: u64) {
        if self.threads[th as usize].stopped || !self.threads[th as usize].started {
            return;
        }
        self.wait_end(th, t);
        self.work_end(th, t);
        if let Some(group) = self.layout.group_of_thread.get(th as usize)
            && self.omp.get(group).is_some_and(|r| r.forker == th)
        {
            self.join_omp(th, t);
        }
        if std::mem::take(&mut self.threads[th as usize].in_mpi_region) {
            self.push(th, t, EventKind::RegionEnd { id: 0 });
        }
        self.push(th, t, EventKind::Stop);
        self.threads[th as usize].stopped = true;
    }

    /// The world thread of rank `rank` of `comm`, as seen from thread `th`.
    fn peer(&self, th: ThreadId, comm: u32, rank: u32) -> Option<ThreadId> {
        let own = self.rank_of.get(&th).copied();
        let world = self.defs.world_rank(comm, rank, own)?;
        self.layout.ranks.get(world as usize).copied()
    }

    fn comm_sym(&mut self, comm: u32) -> Option<Sym> {
        let name = self.defs.comm_name(comm, self.layout.ranks.len())?;
        Some(self.symbols.intern(&name))
    }

    /// `MpiSend` and `MpiIsend`: `send` where the call began.
    pub fn send(
        &mut self,
        location: u64,
        ticks: u64,
        receiver: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
    ) {
        let Some((th, t)) = self.at(location, ticks) else {
            return;
        };
        let Some(peer) = self.peer(th, comm, receiver) else {
            self.ignore("MPI send records to an undefined rank");
            return;
        };
        let s = &self.threads[th as usize];
        let t = if s.mpi_depth > 0 { s.mpi_enter_t } else { t };
        let comm = self.comm_sym(comm);
        self.push(
            th,
            t,
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm,
            },
        );
    }

    /// `MpiRecv` and `MpiIrecv`: `recv` where the receive completed.
    pub fn recv(
        &mut self,
        location: u64,
        ticks: u64,
        sender: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
    ) {
        let Some((th, t)) = self.at(location, ticks) else {
            return;
        };
        let Some(peer) = self.peer(th, comm, sender) else {
            self.ignore("MPI receive records from an undefined rank");
            return;
        };
        let comm = self.comm_sym(comm);
        self.push(
            th,
            t,
            EventKind::Recv {
                peer,
                tag,
                bytes,
                comm,
            },
        );
    }

    /// A record that only needs its location's clock (`MpiIrecvRequest`, `MpiIsendComplete`,
    /// the release of a lock, `MpiCollectiveBegin`): mapped onto nothing of its own.
    pub fn touch(&mut self, location: u64, ticks: u64) {
        self.at(location, ticks);
    }

    /// `MpiCollectiveEnd`: completes the `coll` written where the call began.
    pub fn collective_end(&mut self, location: u64, ticks: u64, comm: u32, root: u32, sent: u64) {
        let Some((th, _)) = self.at(location, ticks) else {
            return;
        };
        let Some(i) = self.threads[th as usize].pending_coll.take() else {
            self.ignore("MpiCollectiveEnd records outside a collective call");
            return;
        };
        let root = if root == UNDEFINED_U32 {
            None
        } else {
            self.peer(th, comm, root)
        };
        let comm = self.comm_sym(comm);
        if let Some(e) = self.event_mut(i)
            && let EventKind::Coll { op, .. } = e.kind
        {
            e.kind = EventKind::Coll {
                op,
                bytes: sent,
                root,
                comm,
            };
            self.unfinished.remove(&i);
        }
    }

    /// `ThreadFork` / `OmpFork`: the outermost one opens a region of the thread's process.
    pub fn fork(&mut self, location: u64, ticks: u64) {
        let Some((th, t)) = self.at(location, ticks) else {
            return;
        };
        self.threads[th as usize].fork_depth += 1;
        let group = self.layout.group_of_thread[th as usize];
        if self.threads[th as usize].fork_depth > 1 || self.omp.contains_key(&group) {
            return;
        }
        self.work_end(th, t);
        self.open_region(th, t, "parallel", 0);
    }

    /// Opens a region of `th`'s process, which `th` records (`region_begin`, its team written
    /// when it ends): an OpenMP region (`created` 0, named by the first parallel region entered
    /// in it) or the threads `created` with `ThreadCreate` (named `name`).
    fn open_region(&mut self, th: ThreadId, t: u64, name: &str, created: u32) {
        let id = self.next_region;
        self.next_region += 1;
        let name = self.name(name);
        let kind = EventKind::RegionBegin {
            id,
            name,
            team: None,
        };
        let Some(begin) = self.push(th, t, kind) else {
            return;
        };
        let region = OmpRegion {
            id,
            begin,
            forker: th,
            named: created > 0,
            members: BTreeSet::from([th]),
            created,
        };
        self.omp
            .insert(self.layout.group_of_thread[th as usize], region);
    }

    /// Ends `region`, which `th` records (`region_end`), with its team written.
    fn end_region(&mut self, th: ThreadId, t: u64, region: OmpRegion) {
        self.complete_region(&region);
        self.push(th, t, EventKind::RegionEnd { id: region.id });
    }

    /// `ThreadCreate`: a thread of the process is created. The first one opens a region of
    /// the process (`pthreads`), which the creator records and goes on working in; the region
    /// ends when every created thread has been waited for (docs/otf2.md#records).
    pub fn thread_create(&mut self, location: u64, ticks: u64) {
        let Some((th, t)) = self.at(location, ticks) else {
            return;
        };
        let group = self.layout.group_of_thread[th as usize];
        if let Some(region) = self.omp.get_mut(&group) {
            if region.created > 0 {
                region.created += 1;
            } else {
                self.ignore("ThreadCreate records inside an OpenMP region");
            }
            return;
        }
        self.open_region(th, t, "pthreads", 1);
    }

    /// `ThreadWait`: a created thread was waited for (joined); after the last, the region
    /// of the process ends.
    pub fn thread_wait(&mut self, location: u64, ticks: u64) {
        let Some((th, t)) = self.at(location, ticks) else {
            return;
        };
        let group = self.layout.group_of_thread[th as usize];
        let Some(region) = self.omp.get_mut(&group).filter(|r| r.created > 0) else {
            self.ignore("ThreadWait records without their ThreadCreate");
            return;
        };
        region.created -= 1;
        if region.created == 0
            && let Some(region) = self.omp.remove(&group)
        {
            self.end_region(th, t, region);
        }
    }

    /// `ThreadJoin` / `OmpJoin`: the outermost one ends the region; serial work again.
    pub fn join(&mut self, location: u64, ticks: u64) {
        let Some((th, t)) = self.at(location, ticks) else {
            return;
        };
        let s = &mut self.threads[th as usize];
        s.fork_depth = s.fork_depth.saturating_sub(1);
        if s.fork_depth == 0 {
            self.join_omp(th, t);
            if self.threads[th as usize].master && self.threads[th as usize].team_depth == 0 {
                self.work_begin(th, t);
            }
        }
    }

    fn join_omp(&mut self, th: ThreadId, t: u64) {
        let group = self.layout.group_of_thread[th as usize];
        if self.omp.get(&group).is_none_or(|r| r.forker != th) {
            return;
        }
        if let Some(region) = self.omp.remove(&group) {
            self.end_region(th, t, region);
        }
    }

    /// Writes the region's team into its `region_begin`.
    fn complete_region(&mut self, region: &OmpRegion) {
        let members: Vec<ThreadId> = region.members.iter().copied().collect();
        let team = if members.len() == self.layout.p() {
            None
        } else {
            Some(self.symbols.intern_team(&members))
        };
        if let Some(e) = self.event_mut(region.begin)
            && let EventKind::RegionBegin { id, name, .. } = e.kind
        {
            e.kind = EventKind::RegionBegin { id, name, team };
        }
    }

    /// The first parallel region entered inside an open region names it.
    fn name_omp_region(&mut self, th: ThreadId, name: Sym) {
        let group = self.layout.group_of_thread[th as usize];
        let Some(region) = self.omp.get_mut(&group) else {
            return;
        };
        if region.named {
            return;
        }
        region.named = true;
        let begin = region.begin;
        if let Some(e) = self.event_mut(begin)
            && let EventKind::RegionBegin { id, team, .. } = e.kind
        {
            e.kind = EventKind::RegionBegin { id, name, team };
        }
    }

    /// `ThreadTeamBegin`, and `ThreadBegin`: a thread created with `ThreadCreate` works, a
    /// member of its process's region, as a team member does.
    pub fn team_begin_record(&mut self, location: u64, ticks: u64) {
        if let Some((th, t)) = self.at(location, ticks) {
            self.team_begin(th, t);
        }
    }

    /// `ThreadTeamEnd`, and `ThreadEnd` of a created thread (it stops at its last record).
    pub fn team_end_record(&mut self, location: u64, ticks: u64) {
        if let Some((th, t)) = self.at(location, ticks) {
            self.team_end(th, t);
        }
    }

    fn team_begin(&mut self, th: ThreadId, t: u64) {
        let s = &mut self.threads[th as usize];
        s.team_depth += 1;
        if s.team_depth > 1 {
            return;
        }
        let group = self.layout.group_of_thread[th as usize];
        if let Some(region) = self.omp.get_mut(&group) {
            region.members.insert(th);
        }
        self.work_begin(th, t);
    }

    fn team_end(&mut self, th: ThreadId, t: u64) {
        let s = &mut self.threads[th as usize];
        if s.team_depth == 0 {
            return;
        }
        s.team_depth -= 1;
        if s.team_depth == 0 {
            self.wait_end(th, t);
            self.work_end(th, t);
        }
    }

    /// `ThreadAcquireLock` / `OmpAcquireLock`: ends the thread's lock wait.
    pub fn acquire_lock(&mut self, location: u64, ticks: u64) {
        let Some((th, t)) = self.at(location, ticks) else {
            return;
        };
        if let Some((WaitKind::Lock, ..)) = self.threads[th as usize].wait {
            self.wait_end(th, t);
        }
    }

    /// Stops every thread at its last record and hands the rest of the events over in order
    /// (time, then thread, then the order they were mapped in): the names and teams, how many
    /// events were handed over, and whether they were out of order ([`Order::disordered`]).
    /// `Err` is the error writing the external sort's temporary file.
    pub fn finish(mut self) -> std::io::Result<(Symbols, u64, bool)> {
        for th in 0..self.threads.len() {
            let t = self.threads[th].last_t;
            self.finish_thread(th as ThreadId, t);
        }
        self.release(true);
        if let Some(e) = self.spill_error.take() {
            return Err(e);
        }
        let disordered = self.order.disordered();
        let count = self.order.finish(&self.symbols)?;
        Ok((self.symbols, count, disordered))
    }
}

#[cfg(test)]
mod tests {
    //! The mapping without the OTF2 library: records handed to the mapper as the reader's
    //! callbacks would (pp/tests/otf2_import.rs reads real traces).

    use super::*;
    use crate::trace::otf2::definitions::{Location, Region};

    fn defs(regions: &[(&str, u8, u8)], threads: &[(u64, u32)]) -> Definitions {
        let mut d = Definitions::default();
        d.clock = Some((1_000_000_000, 0));
        for (id, &(name, role, paradigm)) in regions.iter().enumerate() {
            let region = Region {
                name: name.into(),
                role,
                paradigm,
            };
            d.regions.insert(id as u32, region);
        }
        for &(id, group) in threads {
            d.locations.push(Location {
                id,
                kind: 1,
                group,
                events: 1,
            });
        }
        d
    }

    /// The log of the records `records` gives the mapper, as text, and its events; the same
    /// whether the events are handed over as they come or sorted at the end.
    fn mapped(d: &Definitions, records: impl Fn(&mut Mapper)) -> (String, u64) {
        let layout = d.layout();
        let logs: Vec<(String, u64)> = [true, false]
            .into_iter()
            .map(|streaming| {
                let mut events = Vec::new();
                let mut sink = |run: &[Event], _: &Symbols| events.extend_from_slice(run);
                let order = Order::new(streaming, crate::log::RUN_EVENTS, &mut sink);
                let mut m = Mapper::new(d, &layout, order);
                records(&mut m);
                let (symbols, count, disordered) = m.finish().unwrap();
                assert!(!disordered);
                let header = super::super::header(&layout);
                let mut w = crate::log::TextWriter::new(Vec::new(), &header).unwrap();
                for e in &events {
                    w.write_event(e, &symbols).unwrap();
                }
                (String::from_utf8(w.finish().unwrap()).unwrap(), count)
            })
            .collect();
        assert_eq!(logs[0], logs[1]);
        logs[0].clone()
    }

    #[test]
    fn a_send_and_its_receive_between_init_and_finalize() {
        let d = defs(
            &[
                ("MPI_Init", 1, PARADIGM_MPI),
                ("MPI_Finalize", 1, PARADIGM_MPI),
                ("MPI_Send", 28, PARADIGM_MPI),
                ("MPI_Recv", 28, PARADIGM_MPI),
            ],
            &[(0, 0), (1, 1)],
        );
        let (log, _) = mapped(&d, |m| {
            for loc in [0, 1] {
                m.enter(loc, 0, 0);
                m.leave(loc, 100, 0);
            }
            m.enter(0, 500, 2);
            m.send(0, 510, 1, 0, 9, 32);
            m.leave(0, 520, 2);
            m.enter(1, 200, 3);
            m.recv(1, 700, 0, 0, 9, 32);
            m.leave(1, 700, 3);
            m.enter(0, 1000, 1);
            m.enter(1, 1000, 1);
        });
        assert_eq!(
            log,
            "pplog 1 p=2\n100 0 start\n100 0 region_begin 0 mpi\n100 0 work_begin\n\
             100 1 start\n100 1 region_begin 0 mpi\n100 1 work_begin\n\
             200 1 work_end\n200 1 wait_begin recv\n\
             500 0 work_end\n500 0 wait_begin send\n500 0 send 1 9 32\n\
             520 0 wait_end send\n520 0 work_begin\n\
             700 1 recv 0 9 32\n700 1 wait_end recv\n700 1 work_begin\n\
             1000 0 work_end\n1000 0 region_end 0\n1000 0 stop\n\
             1000 1 work_end\n1000 1 region_end 0\n1000 1 stop\n"
        );
    }

    #[test]
    fn a_collective_without_its_end_record_is_dropped_and_its_wait_kept() {
        let d = defs(&[("MPI_Allreduce", 25, PARADIGM_MPI)], &[(0, 0)]);
        let (log, _) = mapped(&d, |m| {
            m.enter(0, 10, 0);
            m.leave(0, 30, 0);
        });
        assert_eq!(
            log,
            "pplog 1 p=1\n10 0 start\n10 0 region_begin 0 mpi\n10 0 work_begin\n\
             10 0 work_end\n10 0 wait_begin barrier allreduce\n\
             30 0 wait_end barrier allreduce\n30 0 work_begin\n30 0 work_end\n\
             30 0 region_end 0\n30 0 stop\n"
        );
    }

    #[test]
    fn ranks_of_a_trace_without_mpi_init_are_in_the_mpi_region_from_their_first_record() {
        // A writer that recorded no `MPI_Init`: the ranks start at their first record, in the
        // region of every rank, so a barrier wait while another rank computes is li (not ip,
        // idle outside every region).
        let d = defs(
            &[("main", 1, 0), ("MPI_Barrier", 7, PARADIGM_MPI)],
            &[(0, 0), (1, 1)],
        );
        let (log, _) = mapped(&d, |m| {
            m.enter(0, 0, 0);
            m.enter(1, 0, 0);
            m.enter(0, 10, 1);
            m.enter(1, 30, 1);
            m.leave(0, 31, 1);
            m.leave(1, 31, 1);
            m.leave(0, 40, 0);
            m.leave(1, 40, 0);
        });
        assert!(
            log.starts_with(
                "pplog 1 p=2\n0 0 start\n0 0 region_begin 0 mpi\n0 0 work_begin\n0 0 phase main\n\
                 0 1 start\n0 1 region_begin 0 mpi\n0 1 work_begin\n0 1 phase main\n"
            ),
            "{log}"
        );
        assert!(log.ends_with("40 1 region_end 0\n40 1 stop\n"), "{log}");
    }

    #[test]
    fn pthreads_created_and_joined_work_in_a_region_of_their_process() {
        // Score-P's pthread adapter: the master creates a thread (ThreadCreate), which works
        // from its ThreadBegin to its ThreadEnd; the master waits in pthread_join
        // (ThreadWait). The region opens at the create and ends at the last wait.
        let d = defs(
            &[("pthread_join", ROLE_THREAD_WAIT, 7), ("work", 1, 0)],
            &[(0, 0), (1, 0)],
        );
        let (log, _) = mapped(&d, |m| {
            m.touch(0, 0);
            m.thread_create(0, 10);
            m.team_begin_record(1, 12);
            m.enter(1, 12, 1);
            m.enter(0, 20, 0);
            m.leave(1, 50, 1);
            m.team_end_record(1, 51);
            m.thread_wait(0, 60);
            m.leave(0, 60, 0);
            m.touch(0, 70);
        });
        assert_eq!(
            log,
            "pplog 1 p=2\n0 0 start\n0 0 work_begin\n10 0 region_begin 1 pthreads\n\
             12 1 start\n12 1 work_begin\n12 1 phase work\n\
             20 0 work_end\n20 0 wait_begin barrier join\n\
             51 1 work_end\n51 1 stop\n\
             60 0 region_end 1\n60 0 wait_end barrier join\n60 0 work_begin\n\
             70 0 work_end\n70 0 stop\n"
        );
    }

    #[test]
    fn a_rank_whose_mpi_init_was_not_recorded_starts_at_its_first_mpi_call() {
        // `MPI_Init` is defined, and rank 1 enters `MPI_Send` without it: it starts there
        // instead of never (its earlier records are read for their state only).
        let d = defs(
            &[("MPI_Init", 1, PARADIGM_MPI), ("MPI_Send", 6, PARADIGM_MPI)],
            &[(0, 0), (1, 1)],
        );
        let (log, _) = mapped(&d, |m| {
            m.enter(0, 0, 0);
            m.leave(0, 5, 0);
            m.enter(1, 2, 1);
            m.leave(1, 9, 1);
        });
        assert!(
            log.contains("2 1 start\n2 1 region_begin 0 mpi\n2 1 work_begin\n2 1 work_end\n2 1 wait_begin send\n"),
            "{log}"
        );
    }

    #[test]
    fn events_a_later_record_completes_wait_in_the_window_until_it_comes() {
        // More events than the window releases at once come between an OpenMP fork and its
        // join, and between a collective's enter and its end record: the region's team and
        // the collective's bytes still reach the events written where they began.
        let d = defs(
            &[
                ("!$omp parallel", ROLE_PARALLEL, 3),
                ("work", 1, 1),
                ("MPI_Allreduce", 25, PARADIGM_MPI),
            ],
            &[(0, 0), (1, 0), (2, 1)],
        );
        let n = 3 * WINDOW_RELEASE as u64;
        let (log, count) = mapped(&d, |m| {
            m.enter(0, 0, 1);
            m.fork(0, 10);
            m.enter(2, 10, 2);
            for th in [0, 1] {
                m.team_begin_record(th, 10);
                m.enter(th, 10, 0);
            }
            for k in 0..n {
                m.enter(1, 20 + 2 * k, 1);
                m.leave(1, 21 + 2 * k, 1);
            }
            let end = 20 + 2 * n;
            for th in [0, 1] {
                m.leave(th, end, 0);
                m.team_end_record(th, end);
            }
            m.join(0, end);
            m.collective_end(2, end, 0, UNDEFINED_U32, 64);
            m.leave(2, end + 5, 2);
        });
        assert_eq!(log.lines().count() as u64, count + 1);
        assert!(
            log.contains("\n10 0 region_begin 1 !$omp_parallel team=0,1\n"),
            "{}",
            &log[..600]
        );
        assert!(
            log.contains("\n10 2 coll allreduce 64\n"),
            "{}",
            &log[..600]
        );
        assert!(count > 2 * n);
    }

    #[test]
    fn a_thread_starting_before_events_handed_over_is_disorder() {
        // Records out of time order (the OTF2 reader never gives them so): thread 1's first
        // record comes after thread 0's events up to far later were handed over.
        let d = defs(&[("work", 1, 1)], &[(0, 0), (1, 0)]);
        let layout = d.layout();
        let n = 4 * WINDOW_RELEASE as u64;
        let records = |m: &mut Mapper| {
            for k in 0..n {
                m.enter(0, 100 + 2 * k, 0);
                m.leave(0, 101 + 2 * k, 0);
            }
            m.enter(1, 5, 0);
            m.leave(1, 7, 0);
        };
        let mut logs = Vec::new();
        for streaming in [true, false] {
            let mut events = Vec::new();
            let mut sink = |run: &[Event], _: &Symbols| events.extend_from_slice(run);
            let mut m = Mapper::new(&d, &layout, Order::new(streaming, 1000, &mut sink));
            records(&mut m);
            let (_, count, disordered) = m.finish().unwrap();
            assert_eq!(disordered, streaming);
            logs.push((events, count));
        }
        let (sorted, count) = &logs[1];
        assert_eq!(sorted.len() as u64, *count);
        assert_eq!(
            sorted[0],
            Event {
                t: 5,
                thread: 1,
                kind: EventKind::Start
            }
        );
        assert!(
            sorted
                .windows(2)
                .all(|w| (w[0].t, w[0].thread) <= (w[1].t, w[1].thread))
        );
    }

    #[test]
    fn ticks_become_ns_and_names_tokens() {
        let mut d = defs(&[], &[(0, 0)]);
        d.clock = Some((3_000_000_000, 10));
        let layout = d.layout();
        let mut sink = |_: &[Event], _: &Symbols| {};
        let m = Mapper::new(&d, &layout, Order::new(true, 1, &mut sink));
        assert_eq!(m.ns(3010), 1000);
        assert_eq!(m.ns(7511), 2500);
        assert_eq!(m.ns(5), 0, "before the offset");
        assert_eq!(m.ns(u64::MAX), (u64::MAX - 10) / 3);
        // Against the exact 128-bit quotient, for clocks slower and faster than 1 GHz.
        let mut seed = 5u64;
        for resolution in [
            1,
            3,
            1_000,
            999_999_937,
            1_000_000_000,
            2_400_000_000,
            u64::MAX,
        ] {
            let mut d = defs(&[], &[(0, 0)]);
            d.clock = Some((resolution, 7));
            let layout = d.layout();
            let mut sink = |_: &[Event], _: &Symbols| {};
            let m = Mapper::new(&d, &layout, Order::new(true, 1, &mut sink));
            for shift in 0..64 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let ticks = seed >> shift;
                let exact =
                    u128::from(ticks.saturating_sub(7)) * 1_000_000_000 / u128::from(resolution);
                let want = u64::try_from(exact).unwrap_or(u64::MAX);
                assert_eq!(m.ns(ticks), want, "{ticks} ticks at {resolution} Hz");
            }
        }
        assert_eq!(token("a b\t#c\u{1}"), "a_b__c_");
        assert_eq!(token(""), "_");
        assert_eq!(token(&"é".repeat(150)).len(), 200);
    }
}
