//! A team member's part of a region another thread recorded (docs/skeletons.md#steps): the Rust
//! recorder's `Team` records `region_begin`/`region_end` on one thread, and every member samples
//! its CPU clock where its part begins and ends. A member that recorded no region of its own
//! overlapping the region gets a `part_begin NAME` step at its first sample inside the region
//! and a `part_end` step at its last, so that its steps show the fork and join it took part in.
//!
//! The parts are found while the log is read in time order, keeping only what is open: per
//! region open, a watch per member that may have a part (its first and last sample since the
//! region began); a region's parts are settled once the log has passed its end.

use std::collections::{HashMap, VecDeque};

use pp_recorder::event::{Event, EventKind, Symbols, ThreadId};

use super::steps::Builder;

/// A thread's part of a region another thread recorded: from its first `cpu` sample inside
/// the region to its last (or to the end of a wait it began inside the region and the region's
/// end released).
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub begin: u64,
    pub end: u64,
    /// The region's name, by its number in [`Regions::parts`]' names.
    pub name: u32,
}

/// A region open (its end not seen yet), or closed and not yet settled.
struct Region {
    name: u32,
    begin: u64,
    end: u64,
    /// Its number (in the order regions began), which names its watches.
    serial: u64,
    /// The members watched, in the team's order.
    watched: Vec<ThreadId>,
}

/// A member's samples inside a region so far.
struct Watch {
    serial: u64,
    first: u64,
    last: u64,
    count: u32,
}

/// A thread's own regions that began last (at the same time): how many, and the end of the
/// last of them (`u64::MAX` while it is open).
#[derive(Clone, Copy, Default)]
struct Latest {
    begin: u64,
    count: u32,
    end: u64,
}

/// The regions of a log read in time order, and each thread's parts of them.
pub struct Regions {
    p: u32,
    open: HashMap<(ThreadId, u64), Region>,
    /// Closed regions whose end the log has not passed yet (in the order they closed).
    closing: VecDeque<Region>,
    latest: Vec<Option<Latest>>,
    watches: Vec<Vec<Watch>>,
    /// Per thread, its parts (in the order their regions closed).
    parts: Vec<Vec<Part>>,
    /// Per thread, its parts that end where its open wait or copy ends.
    straddling: Vec<Vec<usize>>,
    serial: u64,
    /// The regions' names, numbered in the order first seen.
    names: Vec<String>,
    name_index: HashMap<String, u32>,
}

impl Regions {
    /// For a log of `p` threads.
    pub fn new(p: u32) -> Self {
        let n = p as usize;
        Regions {
            p,
            open: HashMap::new(),
            closing: VecDeque::new(),
            latest: vec![None; n],
            watches: (0..n).map(|_| Vec::new()).collect(),
            parts: (0..n).map(|_| Vec::new()).collect(),
            straddling: (0..n).map(|_| Vec::new()).collect(),
            serial: 0,
            names: Vec::new(),
            name_index: HashMap::new(),
        }
    }

    /// Takes one event, before its thread's builder does; `builders` is every thread's.
    pub fn event(&mut self, e: &Event, symbols: &Symbols, builders: &[Option<Builder>]) {
        // Regions that ended before this event are settled.
        while self.closing.front().is_some_and(|r| r.end < e.t) {
            let r = self.closing.pop_front().expect("a closing region");
            self.settle(r, builders, true);
        }
        let th = e.thread as usize;
        match e.kind {
            EventKind::RegionBegin { id, name, team } => {
                // The thread has a region of its own overlapping every region it is watched in.
                self.watches[th].clear();
                let latest = &mut self.latest[th];
                match latest {
                    Some(l) if l.begin == e.t => {
                        l.count += 1;
                        l.end = u64::MAX;
                    }
                    _ => {
                        *latest = Some(Latest {
                            begin: e.t,
                            count: 1,
                            end: u64::MAX,
                        })
                    }
                }
                let name = symbols.get_name(name).unwrap_or("?");
                let name = match self.name_index.get(name) {
                    Some(&n) => n,
                    None => {
                        let n = self.names.len() as u32;
                        self.names.push(name.to_string());
                        self.name_index.insert(name.to_string(), n);
                        n
                    }
                };
                let members: Vec<ThreadId> = match team.and_then(|t| symbols.get_team(t)) {
                    Some(t) => t.to_vec(),
                    None => (0..self.p).collect(),
                };
                let serial = self.serial;
                self.serial += 1;
                let mut watched = Vec::new();
                for m in members.into_iter().filter(|&m| m != e.thread) {
                    let Some(mi) = (m < self.p).then_some(m as usize) else {
                        continue;
                    };
                    if self.recorded(mi, e.t) {
                        continue;
                    }
                    // Its samples at this very time (read before this event) are inside.
                    let count = builders[mi]
                        .as_ref()
                        .filter(|b| b.last_sample() == Some(e.t))
                        .map_or(0, |b| b.at_last_sample);
                    self.watches[mi].push(Watch {
                        serial,
                        first: e.t,
                        last: e.t,
                        count,
                    });
                    watched.push(m);
                }
                self.open.insert(
                    (e.thread, id),
                    Region {
                        name,
                        begin: e.t,
                        end: e.t,
                        serial,
                        watched,
                    },
                );
            }
            EventKind::RegionEnd { id } => {
                if let Some(region) = self.open.remove(&(e.thread, id)) {
                    if let Some(l) = &mut self.latest[th]
                        && l.begin == region.begin
                    {
                        l.end = e.t;
                    }
                    self.closing.push_back(Region { end: e.t, ..region });
                }
            }
            EventKind::Cpu { .. } => {
                for w in &mut self.watches[th] {
                    if w.count == 0 {
                        w.first = e.t;
                    }
                    w.last = e.t;
                    w.count += 1;
                }
            }
            _ => {}
        }
    }

    /// After the builder of `thread` took an event: its parts that waited for its open wait or
    /// copy to end end there.
    pub fn after(&mut self, thread: ThreadId, builder: &Builder) {
        let th = thread as usize;
        if self.straddling[th].is_empty() || builder.open_since().is_some() {
            return;
        }
        if let Some((_, end)) = builder.closed {
            for i in self.straddling[th].drain(..) {
                let part = &mut self.parts[th][i];
                part.end = part.end.max(end);
            }
        }
    }

    /// Whether thread `m` has, at `t`, a region of its own that makes every region begun at `t`
    /// overlap one of its own: its region begun last is open, or ended at or after `t` (or, as
    /// the list the first version kept had it, several began at that same time).
    fn recorded(&self, m: usize, t: u64) -> bool {
        self.latest[m].is_some_and(|l| l.count >= 2 || l.end >= t)
    }

    /// A closed region's parts: each watched member's (that recorded no region of its own
    /// overlapping it since) with two samples or more inside it. `more`: whether the log goes
    /// on (a wait open now ends later, and the part with it).
    fn settle(&mut self, r: Region, builders: &[Option<Builder>], more: bool) {
        for m in r.watched {
            let mi = m as usize;
            let Some(k) = self.watches[mi].iter().position(|w| w.serial == r.serial) else {
                continue;
            };
            let w = self.watches[mi].swap_remove(k);
            let Some(builder) = &builders[mi] else {
                continue;
            };
            if w.count < 2 {
                continue;
            }
            let at = self.parts[mi].len();
            self.parts[mi].push(Part {
                begin: w.first,
                end: w.last,
                name: r.name,
            });
            // A wait the member began inside the region and the region's end released
            // (OpenMP's implicit barrier) is part of its part: the join follows it.
            if more && builder.open_since().is_some_and(|b| b >= r.begin) {
                self.straddling[mi].push(at);
            }
        }
    }

    /// Per thread, its parts of regions other threads recorded, in the order the regions
    /// closed, once the whole log is read; and the regions' names.
    pub fn parts(mut self, builders: &[Option<Builder>]) -> (Vec<Vec<Part>>, Vec<String>) {
        while let Some(r) = self.closing.pop_front() {
            self.settle(r, builders, false);
        }
        (self.parts, self.names)
    }
}
