//! The sweep's state: each thread's category, context and open intervals, the open regions,
//! and the contexts whose totals the breakdowns add up.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::event::{EventKind, Sym, ThreadId};
use crate::profile::rules::{CATEGORIES, Category, Own, RUNNABLE_FROM, Situation, classify};
use crate::profile::totals::{ThreadTotals, Totals};

/// No context cached for a region key (see [`ThreadState::ctx_cache`]).
pub(super) const NO_CTX: u32 = u32::MAX;

/// No open `comm` deadline.
pub(super) const NO_DEADLINE: u64 = u64::MAX;

#[derive(Debug, Clone)]
pub(super) struct ThreadState {
    /// The innermost open interval (`Idle` when none): the top of `stack`, kept apart because
    /// every event reads it.
    pub(super) own: Own,
    /// The category of the open stretch `[since, now)`.
    pub(super) category: Category,
    /// The context (thread, innermost region, phase) of the open stretch.
    pub(super) ctx: u32,
    /// Start of the open stretch; `u64::MAX` before the run window opens.
    pub(super) since: u64,
    /// With a machine file: when the open `comm` interval's ideal time runs out.
    pub(super) comm_deadline: u64,
    /// Open work/wait/comm intervals, innermost last.
    pub(super) stack: Vec<Open>,
    /// Ids of the open regions this thread began, in order (a region is begun once by each
    /// thread that records it, and the thread ends it).
    pub(super) begun: Vec<u64>,
    /// Slots of the open regions whose team includes this thread, in opening order.
    pub(super) regions: Vec<u32>,
    /// Name of the innermost of them.
    pub(super) region_name: Option<Sym>,
    pub(super) phase: Option<Sym>,
    /// The context of each innermost region (`0` none, `s + 1` the name `Sym(s)`) in the
    /// current phase; emptied when the phase changes.
    pub(super) ctx_cache: Vec<u32>,
    pub(super) started: bool,
    pub(super) stopped: bool,
    /// Started and not stopped (the one test every event makes).
    pub(super) live: bool,
    /// Live with an open interval: counted in its regions' `active`.
    pub(super) active: bool,
    /// Last `cpu` sample, and the work time (by context) since it.
    pub(super) last_cpu: Option<u64>,
    pub(super) work_since_cpu: Vec<(u32, u64)>,
    /// Last run-queue delay sample; since it, the work time not backed by the CPU clock, and
    /// the waiting time after its release (see `release.rs`) by context and category of
    /// [`RUNNABLE_FROM`]: what run-queue delay may be taken from.
    pub(super) last_delay: Option<u64>,
    pub(super) unbacked_since_delay: u64,
    /// (The context is widened to 64 bits so that an entry has no padding: pushing one with
    /// padding was copied through the stack in overlapping pieces, a store-forwarding stall.)
    pub(super) released_since_delay: Vec<(u64, [u64; RUNNABLE_FROM.len()])>,
    /// The stretches of the innermost explicit wait (`Own::Wait`) closed since it began and
    /// since the last delay sample, as `(ctx, category, from, to)`: what a release found at
    /// its end may count as after the release (see `release.rs`).
    pub(super) wait_stretches: Vec<(u32, Category, u64, u64)>,
    /// The open regions that included this thread in their team (their fork) since its
    /// last event, as `(slot, fork time)` in fork order; and the idle stretches in them since
    /// the first of those forks, as `(ctx, category, from, to)`: released by the fork once the
    /// thread records an event in such a region (see `release.rs`).
    pub(super) forks: Vec<(u32, u64)>,
    pub(super) fork_stretches: Vec<(u32, Category, u64, u64)>,
    /// The open barrier wait's release (the team's last arrival), once known.
    pub(super) release: Option<u64>,
    /// Since when the thread's current waiting is after its release (`None`: not released,
    /// or not waiting), and up to when that time is counted in `released_since_delay`.
    pub(super) released_from: Option<u64>,
    pub(super) released_counted: u64,
    /// The open `wait recv` (the outermost one), for the late-sender split: its begin, the
    /// latest time a message it received was sent (none yet: `None`) and the largest of them.
    pub(super) recv_wait: Option<RecvWait>,
}

/// A `wait recv` and the messages received in it (see `Sweep::split_receive`).
#[derive(Debug, Clone, Copy)]
pub(super) struct RecvWait {
    pub(super) begin: u64,
    pub(super) last_send: Option<u64>,
    pub(super) bytes: u64,
}

/// An open interval and its begin's arguments, which its end must repeat (see [`arg`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Open {
    pub(super) own: Own,
    pub(super) arg: u64,
    /// When it opened.
    pub(super) begin: u64,
}

/// The arguments of a begin or end in one number: a work's label, a wait's kind and object,
/// a comm's bytes.
#[inline(always)]
pub(super) fn arg(kind: &EventKind) -> u64 {
    let sym = |s: Option<Sym>| s.map_or(u64::from(u32::MAX), |s| u64::from(s.0));
    match *kind {
        EventKind::WorkBegin { label } | EventKind::WorkEnd { label } => sym(label),
        EventKind::WaitBegin { kind, object }
        | EventKind::WaitEnd { kind, object, .. }
        | EventKind::Release { kind, object } => (kind as u64) << 32 | sym(object),
        EventKind::CommBegin { bytes } | EventKind::CommEnd { bytes } => bytes,
        _ => 0,
    }
}

#[derive(Debug, Clone)]
pub(super) struct Region {
    pub(super) name: Sym,
    /// `region_begin`s not yet matched by a `region_end`: one thread may record the region,
    /// or every member its own part (as OpenMP threads do); it closes at the last end.
    pub(super) opens: u32,
    pub(super) members: Vec<ThreadId>,
    /// Members currently busy (innermost work or comm).
    pub(super) busy: u32,
    /// Live members with an open interval (work, comm or a wait): none means the team's
    /// last member has finished its part, which releases its idle members (see `release.rs`).
    pub(super) active: u32,
    /// A thread that did not begin it ended it (so a beginner may still list it as begun).
    pub(super) ended_by_other: bool,
}

/// Where time is added up: one [`Totals`] per context, a (thread, innermost region, phase)
/// that occurred. The breakdowns by thread, region and phase are sums of contexts, so each
/// attributed stretch is one addition.
#[derive(Debug, Default)]
pub(super) struct Contexts {
    pub(super) keys: Vec<(ThreadId, Option<Sym>, Option<Sym>)>,
    /// One thread's time each, so 64 bits (sums over threads are [`Totals`], 128 bits).
    pub(super) totals: Vec<ThreadTotals>,
    pub(super) index: HashMap<(ThreadId, Option<Sym>, Option<Sym>), u32>,
}

impl Contexts {
    pub(super) fn get(&mut self, key: (ThreadId, Option<Sym>, Option<Sym>)) -> u32 {
        *self.index.entry(key).or_insert_with(|| {
            self.keys.push(key);
            self.totals.push(ThreadTotals::default());
            (self.keys.len() - 1) as u32
        })
    }

    /// The totals grouped by one part of the key, `None` first, empty groups left out.
    pub(super) fn group(
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

/// How many states a thread can be in ([`Own::ALL`]).
pub(super) const OWNS: usize = Own::ALL.len();

pub(super) fn own_index(own: Own) -> usize {
    own as usize
}

/// Hashes region ids (u64) with one multiplication. The map only ever holds the open
/// regions (a handful), so collisions cost little; SipHash cost more than the rest of a
/// region event. `pp import` uses it too, for the trace's location and region ids.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

/// A map keyed by ids and looked up for most events, hashed by [`IdHasher`]: the sweep's open
/// regions, the activity graph's regions, barriers and sends, the what-if's regions and phases,
/// an OTF2 trace's ids, the signature's places.
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

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
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// Open intervals for a message, outermost first: `work, comm`; past six, the first six and
/// how many in all (a message is one short line however deep the stack).
pub(super) fn describe(open: &[Open]) -> String {
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

/// The rule table evaluated for every situation, so that the sweep looks categories up.
pub(super) fn rule_table() -> [[[Category; 2]; 2]; OWNS] {
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
