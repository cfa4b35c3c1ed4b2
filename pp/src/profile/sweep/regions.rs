//! Regions in the sweep: opening and closing them (their members change context), and which
//! members are busy (a teammate's category can depend on it).

use super::Sweep;
use super::state::{Region, own_index};
use crate::event::{Sym, Symbols, TeamRef, ThreadId};
use crate::profile::rules::Own;
use crate::profile::violations::Violation;

impl Sweep<'_> {
    /// Thread `i` turned busy (`now`) or not: updates the busy counts of its regions and
    /// re-evaluates the teammates whose category depends on whether the team is busy.
    pub(super) fn busy_changed(&mut self, i: usize, t: u64, now: bool) {
        for k in 0..self.threads[i].regions.len() {
            let slot = self.threads[i].regions[k] as usize;
            let region = &mut self.regions[slot];
            let before = region.busy;
            let after = if now {
                before + 1
            } else {
                before.saturating_sub(1)
            };
            region.busy = after;
            // A member sees the team busy when the count exceeds its own share (1 if busy).
            let flips_idle = self.team_matters[0] && (before > 0) != (after > 0);
            let flips_busy = self.team_matters[1] && (before > 1) != (after > 1);
            if !flips_idle && !flips_busy {
                continue;
            }
            for n in 0..self.regions[slot].members.len() {
                let m = self.regions[slot].members[n] as usize;
                let own = self.threads[m].own;
                let flips = if own.is_busy() {
                    flips_busy
                } else {
                    flips_idle
                };
                if m != i && flips && self.needs_team[own_index(own)][1] {
                    self.retag(m, t);
                }
            }
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn begin_region(
        &mut self,
        by: usize,
        t: u64,
        id: u64,
        name: Sym,
        team: Option<TeamRef>,
        symbols: &Symbols,
    ) {
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                self.regions.push(Region {
                    name: Sym(0),
                    opens: 0,
                    members: Vec::new(),
                    busy: 0,
                    active: 0,
                    ended_by_other: false,
                });
                (self.regions.len() - 1) as u32
            }
        };
        let mut members = std::mem::take(&mut self.regions[slot as usize].members);
        members.clear();
        match team.map(|team| symbols.get_team(team)) {
            Some(Some(team)) => {
                members.extend(team.iter().copied().filter(|&m| (m as usize) < self.p))
            }
            Some(None) => self.violate(Violation::TeamUnknown, || format!("region {id} at {t} ns")),
            None => members.extend(0..self.p as ThreadId),
        }
        let busy = members
            .iter()
            .filter(|&&m| self.threads[m as usize].own.is_busy())
            .count() as u32;
        let active = members
            .iter()
            .filter(|&&m| self.threads[m as usize].active)
            .count() as u32;
        self.slots.insert(id, slot);
        self.recent = Some((id, slot));
        self.regions[slot as usize] = Region {
            name,
            opens: 1,
            members,
            busy,
            active,
            ended_by_other: false,
        };
        for k in 0..self.regions[slot as usize].members.len() {
            let m = self.regions[slot as usize].members[k] as usize;
            let th = &mut self.threads[m];
            th.regions.push(slot);
            th.region_name = Some(name);
            self.refresh_ctx(m, t);
            self.retag(m, t);
            self.released_changed(m, t);
            if m != by {
                self.threads[m].forks.push((slot, t));
            }
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn end_region(&mut self, id: u64, slot: u32, t: u64) {
        self.slots.remove(&id);
        self.recent = None;
        self.free_slots.push(slot);
        if self.regions[slot as usize].ended_by_other {
            // Threads that began it and did not end it no longer have it open.
            for th in &mut self.threads {
                th.begun.retain(|&r| r != id);
            }
        }
        let members = std::mem::take(&mut self.regions[slot as usize].members);
        for &m in &members {
            let m = m as usize;
            let th = &mut self.threads[m];
            // A member still at the released barrier of the region that ends waits for nothing
            // in it any more: its time from here is not after a release (as idle time outside
            // regions is not), whenever its runtime reports the barrier's end (see
            // `release.rs`).
            if th.own == Own::Barrier && th.regions.last() == Some(&slot) && th.release.is_some() {
                th.release = Some(u64::MAX);
            }
            th.regions.retain(|&r| r != slot);
            if !th.forks.is_empty() {
                Self::fork_ended(th, slot);
            }
            let innermost = th.regions.last().map(|&r| r as usize);
            self.threads[m].region_name = innermost.map(|r| self.regions[r].name);
            self.refresh_ctx(m, t);
            self.retag(m, t);
            self.released_changed(m, t);
        }
        self.regions[slot as usize].members = members;
    }

    /// The slot of the open region `id`.
    #[inline]
    pub(super) fn slot(&mut self, id: u64) -> Option<u32> {
        match self.recent {
            Some((recent, slot)) if recent == id => Some(slot),
            _ => {
                let slot = *self.slots.get(&id)?;
                self.recent = Some((id, slot));
                Some(slot)
            }
        }
    }
}
