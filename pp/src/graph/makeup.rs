//! What the critical path is made of: its time per thread, per region and per category.

use std::collections::HashMap;

use super::ArcKind;
use super::critical::{CriticalPath, Segment};
use super::stretches::Stretches;
use crate::event::{Sym, ThreadId};
use crate::profile::{CATEGORIES, Category};

/// The critical path's time, ns, broken down three ways; each breakdown sums to its length.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Makeup {
    /// Per thread, threads in order (only threads on the path).
    pub by_thread: Vec<(ThreadId, u64)>,
    /// Per innermost region (`None`: outside every region), `None` first, then by symbol.
    pub by_region: Vec<(Option<Sym>, u64)>,
    /// Per category, in [`CATEGORIES`] order (all of them): the categories of the threads'
    /// stretches on the path as the timeline (`pp --chrome`) shows them, except that a
    /// message's time in flight is cl, as in the attribution's totals (without a machine
    /// file), and that rc.cpu is rc: of the time a thread's `cpu` sample moved from a category
    /// to rc.cpu over its span, the path takes the share it covers of that category there.
    pub by_category: Vec<(Category, u64)>,
    /// Path time on no attributed stretch (before a thread's first event, say); normally 0.
    pub unattributed: u64,
}

impl Makeup {
    /// The make-up of `path` from the threads' attributed `stretches`.
    pub fn of(path: &CriticalPath, stretches: &Stretches) -> Makeup {
        let mut threads: HashMap<ThreadId, u64> = HashMap::new();
        let mut regions: HashMap<Option<Sym>, u64> = HashMap::new();
        let mut categories = [0u64; CATEGORIES.len()];
        let mut unattributed = 0;
        for seg in &path.segments {
            *threads.entry(seg.thread).or_default() += seg.end - seg.start;
            let mut covered = 0;
            let mut here = [0u64; CATEGORIES.len()];
            for (d, region, category) in stretches.overlapping(seg.thread, seg.start, seg.end) {
                covered += d;
                *regions.entry(region).or_default() += d;
                here[shown(seg, category).index()] += d;
            }
            contention(seg, stretches, &mut here);
            for (total, ns) in categories.iter_mut().zip(here) {
                *total += ns;
            }
            unattributed += (seg.end - seg.start) - covered;
        }
        let mut by_thread: Vec<_> = threads.into_iter().collect();
        by_thread.sort_unstable();
        let mut by_region: Vec<_> = regions.into_iter().collect();
        by_region.sort_unstable();
        Makeup {
            by_thread,
            by_region,
            by_category: CATEGORIES.iter().copied().zip(categories).collect(),
            unattributed,
        }
    }
}

/// The category the path shows a stretch's time in: a message's time in flight is the
/// receive's transfer, which the attribution moves from sl to cl in its totals (its stretches
/// still show sl).
pub(super) fn shown(seg: &Segment, category: Category) -> Category {
    if seg.arc == Some(ArcKind::Message) {
        Category::Cl
    } else {
        category
    }
}

/// Moves the segment's share of its thread's rc.cpu into rc in `here` (the segment's time by
/// category): for each span whose sample moved `ns` of category `c` to rc.cpu, the segment
/// takes `ns ×` (its time in `c` in the span) `/` (the thread's time in `c` in the span),
/// rounded down, from the category it shows that time in.
fn contention(seg: &Segment, stretches: &Stretches, here: &mut [u64; CATEGORIES.len()]) {
    let moves = stretches.moves(seg.thread);
    // Spans end at samples, in order; a span may start before an earlier one ends (time moved
    // from waiting counts from the last sample with a run-queue delay).
    let first = moves.partition_point(|m| m.end <= seg.start);
    for m in &moves[first..] {
        if m.start >= seg.end {
            // Later spans of work start later still.
            if m.from == Category::Pc {
                break;
            }
            continue;
        }
        let (lo, hi) = (m.start.max(seg.start), m.end.min(seg.end));
        let on_path = stretches.time_in(seg.thread, m.from, lo, hi);
        if on_path == 0 {
            continue;
        }
        let share = (u128::from(m.ns) * u128::from(on_path) / u128::from(m.of.max(1))) as u64;
        let from = shown(seg, m.from).index();
        let share = share.min(here[from]);
        here[from] -= share;
        here[Category::Rc.index()] += share;
    }
}
