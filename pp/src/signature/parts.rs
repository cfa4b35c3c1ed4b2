//! A team member's part of a region another thread recorded (docs/skeletons.md#steps): the Rust
//! recorder's `Team` records `region_begin`/`region_end` on one thread, and every member samples
//! its CPU clock where its part begins and ends. A member that recorded no `region_begin` of
//! its own overlapping the region gets a `part_begin NAME` step at its first sample inside the region
//! and a `part_end` step at its last, so that its steps show the fork and join it took part in.

use std::collections::{BTreeMap, HashMap};

use pp_recorder::event::{Event, EventKind, Symbols, ThreadId};

use super::steps::Builder;

/// A region as its opener recorded it.
struct Region {
    opener: ThreadId,
    name: String,
    /// The team, or `None` for every thread.
    team: Option<Vec<ThreadId>>,
    begin: u64,
    end: u64,
}

/// The regions of a log, and when each thread recorded a `region_begin` itself.
#[derive(Default)]
pub struct Regions {
    /// Regions open, by opener and id (their `end` not known yet).
    open: HashMap<(ThreadId, u64), Region>,
    closed: Vec<Region>,
    /// Per thread, the regions it recorded itself: (begin, end), `end` the log's last time while
    /// open.
    own: HashMap<ThreadId, Vec<(u64, u64)>>,
}

impl Regions {
    /// Takes one event.
    pub fn event(&mut self, e: &Event, symbols: &Symbols) {
        match e.kind {
            EventKind::RegionBegin { id, name, team } => {
                let name = symbols.get_name(name).unwrap_or("?").to_string();
                let team = team.and_then(|t| symbols.get_team(t)).map(<[_]>::to_vec);
                let region = Region {
                    opener: e.thread,
                    name,
                    team,
                    begin: e.t,
                    end: e.t,
                };
                self.open.insert((e.thread, id), region);
                self.own.entry(e.thread).or_default().push((e.t, u64::MAX));
            }
            EventKind::RegionEnd { id } => {
                if let Some(region) = self.open.remove(&(e.thread, id)) {
                    if let Some(own) = self.own.get_mut(&e.thread)
                        && let Some(o) = own.iter_mut().rev().find(|o| o.0 == region.begin)
                    {
                        o.1 = e.t;
                    }
                    self.closed.push(Region { end: e.t, ..region });
                }
            }
            _ => {}
        }
    }

    /// Per thread, its parts `(begin, end, region name)` of regions other threads recorded,
    /// from its `cpu` samples; threads that recorded a region of their own overlapping it (one
    /// begun inside it, or an MPI rank's `mpi` region, which every rank records) have no part of
    /// it.
    pub fn parts(
        mut self,
        p: u32,
        builders: &BTreeMap<ThreadId, Builder>,
    ) -> HashMap<ThreadId, Vec<(u64, u64, String)>> {
        let mut out: HashMap<ThreadId, Vec<(u64, u64, String)>> = HashMap::new();
        for own in self.own.values_mut() {
            own.sort_unstable();
        }
        for r in &self.closed {
            let all: Vec<ThreadId>;
            let team = match &r.team {
                Some(t) => t.as_slice(),
                None => {
                    all = (0..p).collect();
                    &all
                }
            };
            for &m in team.iter().filter(|&&m| m != r.opener) {
                // The member's own region begun last before the region's end, if it reaches
                // into the region.
                let recorded = self.own.get(&m).is_some_and(|own| {
                    let i = own.partition_point(|&(b, _)| b <= r.end);
                    i > 0 && own[i - 1].1 >= r.begin
                });
                if recorded {
                    continue;
                }
                let Some(builder) = builders.get(&m) else {
                    continue;
                };
                if let Some((b, e)) = builder.samples_in(r.begin, r.end) {
                    // A wait the member began inside the region and the region's end released
                    // (OpenMP's implicit barrier) is part of its part: the join follows it.
                    let e = builder.straddling(r.begin, r.end).map_or(e, |w| w.max(e));
                    out.entry(m).or_default().push((b, e, r.name.clone()));
                }
            }
        }
        out
    }
}
