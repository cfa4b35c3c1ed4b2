//! Releases: when the wait of a thread was over (docs/attribution.md, "Contention during
//! waits"). A wait lasts as long as its partner makes it; only the time between its release
//! and the thread's resumption can be run-queue delay, so only that time is what a `cpu`
//! sample's run-queue delay may move to rc.cpu.
//!
//! What the log gives:
//! - a barrier wait is released by the team's last arrival: the moment every live member of
//!   the thread's innermost region (every live thread outside regions) is in a barrier wait
//!   that is not yet released;
//! - a thread idle inside a region was released by the fork (the region's begin), so all of
//!   that time is after its release;
//! - a `recv` wait is released by the matched send, and the time after it is already the
//!   transfer (cl, rc.comm: [`Sweep::split_receive`]);
//! - a lock, condition, send or other wait records who released it (`by=`) but not when, and
//!   idle time outside every region has no release: none of that time is taken.

use super::Sweep;
use crate::event::ThreadId;
use crate::profile::rules::{Own, RUNNABLE_FROM};

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
        let (ctx, ns) = (th.ctx, t - from);
        match th.released_since_delay.iter_mut().find(|r| r.0 == ctx) {
            Some(r) => r.1[k] += ns,
            None => {
                let mut parts = [0; RUNNABLE_FROM.len()];
                parts[k] = ns;
                th.released_since_delay.push((ctx, parts));
            }
        }
    }

    /// Re-evaluates at `t` whether thread `i` is after its release, counting the time before
    /// `t` as it was. Called after its state or regions changed.
    #[inline]
    pub(super) fn released_changed(&mut self, i: usize, t: u64) {
        if self.threads[i].released_from.is_some() {
            self.count_released(i, t);
        }
        let th = &mut self.threads[i];
        if th.own != Own::Barrier {
            th.release = None;
        }
        th.released_from = match th.own {
            Own::Idle if !th.regions.is_empty() => Some(t),
            Own::Barrier => th.release,
            _ => None,
        };
        th.released_counted = t;
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
