//! What the critical path is made of: its time per thread, per region and per category.

use std::collections::HashMap;

use super::ArcKind;
use super::critical::CriticalPath;
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
    /// file); rc.cpu, known only per pair of `cpu` samples, shows as the category it is
    /// taken from.
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
            for (d, region, category) in stretches.overlapping(seg.thread, seg.start, seg.end) {
                covered += d;
                *regions.entry(region).or_default() += d;
                // A message's time in flight is the receive's transfer, which the attribution
                // moves from sl to cl in its totals (its stretches still show sl).
                let category = if seg.arc == Some(ArcKind::Message) {
                    Category::Cl
                } else {
                    category
                };
                let c = CATEGORIES.iter().position(|&c| c == category).unwrap_or(0);
                categories[c] += d;
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
