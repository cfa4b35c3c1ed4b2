//! Releases: when the wait of a thread was over (docs/attribution.md, "Contention during
//! waits"). A wait lasts as long as its partner makes it; only the time between its release
//! and the thread's resumption can be run-queue delay, so only that time is what a `cpu`
//! sample's run-queue delay may move to rc.cpu.
//!
//! What the log gives:
//! - a barrier wait is released by the team's last arrival: the moment every live member of
//!   the thread's innermost region (every live thread outside regions) is in a barrier wait
//!   that is not yet released;
//! - a thread idle inside a region was released by the fork (the region's begin) until its
//!   first event after it, when that event comes before the region ends: a member woken at a
//!   fork waits for a core before it records anything. After that event (its part done) it
//!   waits for the others until the team's last member finishes (no live member of its
//!   innermost region has an open interval), and only from then is it released again, until
//!   the region ends: a worker that yields while it waits is runnable the whole time, so
//!   taking its run-queue delay while teammates still work or wait would make that waiting
//!   contention only on a busy machine;
//! - a `recv` wait is released by the matched send, and the time after it is already the
//!   transfer (cl, rc.comm: [`Sweep::split_receive`]);
//! - a lock or condition wait that ends `by=` a thread was released at that thread's latest
//!   `release` of the same kind and object before the wait's end (an unlock, a notify);
//! - a wait whose releaser did not record its `release`, a send or other wait, and idle time
//!   outside every region have no known release: none of that time is taken.

use super::Sweep;
use super::state::ThreadState;
use crate::event::ThreadId;
use crate::profile::rules::{Category, Own, RUNNABLE_FROM};

impl Sweep<'_> {
    /// Counts thread `i`'s open stretch up to `t`, as far as it is after its release, into
    /// the time run-queue delay may be taken from.
    #[cold]
    #[inline(never)]
    pub(super) fn count_released(&mut self, i: usize, t: u64) {
        let th = &mut self.threads[i];
        let Some(from) = th.released_from else {
            return;
        };
        let from = from.max(th.released_counted).max(th.since);
        th.released_counted = th.released_counted.max(t);
        let Some(k) = RUNNABLE_FROM.iter().position(|&c| c == th.category) else {
            return;
        };
        if t <= from {
            return;
        }
        let ctx = th.ctx;
        add_released(&mut th.released_since_delay, ctx, k, t - from);
    }

    /// Re-evaluates at `t` whether thread `i` is after its release, counting the time before
    /// `t` as it was. Called after its state or regions changed.
    #[inline]
    pub(super) fn released_changed(&mut self, i: usize, t: u64) {
        if self.threads[i].released_from.is_some() {
            self.count_released(i, t);
        }
        if !self.threads[i].forks.is_empty() {
            // Idle time counted here is not the fork's to release too (see `attribute`).
            self.close(i, t);
        }
        let th = &self.threads[i];
        let released_from = match th.own {
            Own::Barrier => th.release,
            Own::Idle => match th.regions.last() {
                Some(&slot) if self.regions[slot as usize].active == 0 => Some(t),
                _ => None,
            },
            _ => None,
        };
        let th = &mut self.threads[i];
        if th.own != Own::Barrier {
            th.release = None;
        }
        th.released_from = released_from;
        th.released_counted = t;
    }

    /// Thread `i` may have turned active (live with an open interval) or not at `t`: updates
    /// its regions' counts; a region whose last active member finishes (or whose first starts
    /// again) re-evaluates its idle members' releases.
    #[inline(always)]
    pub(super) fn active_changed(&mut self, i: usize, t: u64) {
        let Sweep {
            threads, regions, ..
        } = self;
        let th = &mut threads[i];
        let now = th.live && th.own != Own::Idle;
        if now == th.active {
            return;
        }
        th.active = now;
        let mut flipped = false;
        for &slot in &th.regions {
            let region = &mut regions[slot as usize];
            if now {
                region.active += 1;
                flipped |= region.active == 1;
            } else {
                region.active = region.active.saturating_sub(1);
                flipped |= region.active == 0;
            }
        }
        if flipped {
            self.team_finished_changed(i, t, now);
        }
    }

    /// Thread `i` turned active (`now`) or not at `t`, and so the last active member of some
    /// of its regions finished, or the first began: their idle members' releases change.
    #[inline(never)]
    fn team_finished_changed(&mut self, i: usize, t: u64, now: bool) {
        for k in 0..self.threads[i].regions.len() {
            let slot = self.threads[i].regions[k];
            if self.regions[slot as usize].active != u32::from(now) {
                continue;
            }
            for n in 0..self.regions[slot as usize].members.len() {
                let m = self.regions[slot as usize].members[n] as usize;
                let th = &self.threads[m];
                if m != i && th.own == Own::Idle && th.regions.last() == Some(&slot) {
                    self.released_changed(m, t);
                }
            }
        }
    }

    /// Thread `i`'s wait of `arg` (kind and object) ends at `t`, ended by thread `by`: the
    /// stretch since `by`'s latest `release` of the same kind and object is after the wait's
    /// release, when that release fell inside the wait (and only what is since the thread's
    /// last sample counts, as for every release). A release before the wait (a lock already
    /// free, or a cause recorded after the acquisition) or none recorded leaves the whole wait
    /// its category: never less waiting than the log shows.
    pub(super) fn released_by(&mut self, i: usize, t: u64, by: ThreadId, arg: u64) {
        let th = &self.threads[i];
        let Some(open) = th
            .stack
            .last()
            .filter(|o| o.arg == arg && o.own == Own::Wait)
        else {
            return;
        };
        let Some(&released) = self.releases.get(&(by, arg)) else {
            return;
        };
        if released >= t || released < open.begin {
            return;
        }
        self.close(i, t);
        let th = &mut self.threads[i];
        add_after(&th.wait_stretches, released, &mut th.released_since_delay);
        th.wait_stretches.clear();
    }

    /// Thread `i` records its first event (at `t`) since regions that are still open forked
    /// it: its idle time in them since the earliest of those forks was after its release.
    #[cold]
    #[inline(never)]
    pub(super) fn first_event_since_fork(&mut self, i: usize, t: u64) {
        let th = &mut self.threads[i];
        let from = th.forks.first().map_or(u64::MAX, |f| f.1);
        // The open stretch, as `attribute` would push it when it closes (it is not closed
        // here: the forks are forgotten below, so it will not be pushed).
        if th.own == Own::Idle && th.released_from.is_none() && th.since < t {
            let open = (th.ctx, th.category, th.since, t);
            th.fork_stretches.push(open);
        }
        add_after(&th.fork_stretches, from, &mut th.released_since_delay);
        th.forks.clear();
        th.fork_stretches.clear();
    }

    /// The region in `slot`, which forked `th` and in which it has recorded nothing since,
    /// ends: that fork releases nothing (the thread gave no sign it was woken for it).
    #[cold]
    #[inline(never)]
    pub(super) fn fork_ended(th: &mut ThreadState, slot: u32) {
        th.forks.retain(|f| f.0 != slot);
        if th.forks.is_empty() {
            th.fork_stretches.clear();
        }
    }

    /// Thread `i` arrived at a barrier at `t`: when it is the last of its team, the barrier
    /// waits of the team are released.
    pub(super) fn barrier_arrival(&mut self, i: usize, t: u64) {
        let slot = self.threads[i].regions.last().copied();
        let members = match slot {
            Some(slot) => std::mem::take(&mut self.regions[slot as usize].members),
            None => (0..self.p as ThreadId).collect(),
        };
        let all_arrived = members.iter().all(|&m| {
            let m = &self.threads[m as usize];
            !m.live || (m.own == Own::Barrier && m.release.is_none())
        });
        if all_arrived {
            for &m in &members {
                let m = m as usize;
                if self.threads[m].live && self.threads[m].own == Own::Barrier {
                    self.threads[m].release = Some(t);
                    self.released_changed(m, t);
                }
            }
        }
        if let Some(slot) = slot {
            self.regions[slot as usize].members = members;
        }
    }
}

/// Adds to `released` the part after `from` of each of `stretches` (context, category, start,
/// end) whose category run-queue delay may take (the released waiting of a barrier's wait or of
/// a fork's idle time).
fn add_after(
    stretches: &[(u32, Category, u64, u64)],
    from: u64,
    released: &mut Vec<(u64, [u64; RUNNABLE_FROM.len()])>,
) {
    for &(ctx, category, start, end) in stretches {
        let Some(k) = RUNNABLE_FROM.iter().position(|&c| c == category) else {
            continue;
        };
        let ns = end.saturating_sub(start.max(from));
        if ns > 0 {
            add_released(released, ctx, k, ns);
        }
    }
}

/// Adds `ns` of released waiting in category `RUNNABLE_FROM[k]` of context `ctx`.
fn add_released(
    released: &mut Vec<(u64, [u64; RUNNABLE_FROM.len()])>,
    ctx: u32,
    k: usize,
    ns: u64,
) {
    let ctx = u64::from(ctx);
    let at = match released.iter().position(|r| r.0 == ctx) {
        Some(at) => at,
        None => {
            // Pushed zeroed and added to in place: an array built on the stack with one part
            // set, then copied in, stalled on store forwarding (14% of `pp -l`'s time).
            released.push((ctx, [0; RUNNABLE_FROM.len()]));
            released.len() - 1
        }
    };
    if let Some(part) = released.get_mut(at).and_then(|r| r.1.get_mut(k)) {
        *part += ns;
    }
}
