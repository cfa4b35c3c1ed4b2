//! Categories and contexts: a thread's category is the rule table at its situation, and a
//! change of category or context closes its stretch, which is added to the totals of its
//! context (and handed to the sink).

use super::state::{NO_CTX, own_index};
use super::{Interval, Sweep};
use crate::event::ThreadId;
use crate::profile::rules::{Category, Own};

impl Sweep<'_> {
    /// Moves thread `i` to the context of its current region and phase (closing its open
    /// stretch at `t` when that changes it).
    #[inline]
    pub(super) fn refresh_ctx(&mut self, i: usize, t: u64) {
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
        }
    }

    /// The category of thread `i` now: the rule table at its situation.
    #[inline(always)]
    pub(super) fn category_of(&self, i: usize) -> Category {
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

    /// Re-evaluates thread `i` at `t`; a changed category closes its stretch.
    #[inline(always)]
    pub(super) fn retag(&mut self, i: usize, t: u64) {
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
    pub(super) fn close(&mut self, i: usize, t: u64) {
        let th = &mut self.threads[i];
        let since = th.since;
        if t <= since {
            return;
        }
        if th.released_from.is_some() {
            self.count_released(i, t);
        }
        let th = &mut self.threads[i];
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
    pub(super) fn attribute(
        &mut self,
        i: usize,
        start: u64,
        end: u64,
        category: Category,
        ctx: u32,
    ) {
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
            c => {
                totals.add(c, ns);
                // The part in an explicit wait of a stretch (which may have begun before the
                // wait in the same category), which a release at the wait's end may show to
                // be after the release (see `release.rs`).
                let th = &mut self.threads[i];
                // Idle in regions that forked the thread, before its first event since (and not
                // already released by its team's finishing): after the fork's release if that
                // event comes (see `release.rs`).
                if !th.forks.is_empty() && th.own == Own::Idle && th.released_from.is_none() {
                    th.fork_stretches.push((ctx, c, start, end));
                }
                if let Some(open) = th.stack.last()
                    && open.own == Own::Wait
                    && end > open.begin
                {
                    th.wait_stretches.push((ctx, c, start.max(open.begin), end));
                }
            }
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

/// Adds work time to a context that is not the last one worked in.
#[cold]
#[inline(never)]
fn add_work(work: &mut Vec<(u32, u64)>, ctx: u32, ns: u64) {
    match work.iter_mut().find(|w| w.0 == ctx) {
        Some(w) => w.1 += ns,
        None => work.push((ctx, ns)),
    }
}
