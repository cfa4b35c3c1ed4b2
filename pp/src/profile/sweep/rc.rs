//! Time moved to rc (resource contention) after the fact: at a `cpu` sample, work that the CPU
//! clock does not back and waiting the run-queue delay explains (rc.cpu); at the end of a
//! `wait recv`, the transfer of the late-sender split (cl, and rc.comm beyond its ideal time).

use super::Sweep;
use super::state::RecvWait;
use crate::event::ThreadId;
use crate::profile::rules::{Category, RUNNABLE_FROM};
use crate::profile::violations::Violation;

impl Sweep<'_> {
    /// A `cpu` sample: the work since the previous sample that the CPU clock does not back
    /// moves from pc to rc.cpu; with run-queue delays, the delay since the previous delay that
    /// this does not explain moves to rc.cpu from the thread's waiting time after its releases
    /// (li, ip, sl; see `release.rs`).
    #[inline]
    pub(super) fn cpu_sample(&mut self, i: usize, t: u64, cpu: u64, mut delay: Option<u64>) {
        self.close(i, t);
        let th = &self.threads[i];
        if th.last_cpu.is_some_and(|last| cpu < last) {
            let last = th.last_cpu.unwrap_or(0);
            self.violate(Violation::CpuBack, || {
                format!("thread {i} at {t} ns, {cpu} ns after {last} ns")
            });
            return;
        }
        if let (Some(d), Some(last)) = (delay, th.last_delay)
            && d < last
        {
            self.violate(Violation::DelayBack, || {
                format!("thread {i} at {t} ns, {d} ns after {last} ns")
            });
            delay = None;
        }
        let th = &mut self.threads[i];
        let previous = th.last_cpu.replace(cpu);
        let unbacked = match previous {
            Some(previous) if !th.work_since_cpu.is_empty() => {
                let worked: u64 = th.work_since_cpu.iter().map(|w| w.1).sum();
                let unbacked = worked.saturating_sub(cpu.saturating_sub(previous));
                let totals = &mut self.contexts.totals;
                share(unbacked, &th.work_since_cpu, |ctx, ns| {
                    totals[ctx as usize].move_to_rc_cpu(Category::Pc, ns)
                });
                if let Some(sink) = self.sink.as_deref_mut() {
                    sink.rc_cpu(i as ThreadId, Category::Pc, unbacked.min(worked));
                }
                unbacked
            }
            _ => 0,
        };
        th.work_since_cpu.clear();
        th.unbacked_since_delay += unbacked;
        if let Some(delay) = delay {
            let previous = th.last_delay.replace(delay);
            if let Some(previous) = previous {
                let runnable = delay.saturating_sub(previous);
                let outside_work = runnable.saturating_sub(th.unbacked_since_delay);
                if outside_work > 0 {
                    self.runnable_while_waiting(i, outside_work);
                }
            }
            let th = &mut self.threads[i];
            th.unbacked_since_delay = 0;
            th.released_since_delay.clear();
            th.wait_stretches.clear();
        }
    }

    /// Moves `ns` (at most all of it) of thread `i`'s waiting time after its releases since its
    /// previous delay sample (see `release.rs`) to rc.cpu: shared over the categories of
    /// [`RUNNABLE_FROM`] in that order, then within each over its contexts, by rounded-down
    /// cumulative shares.
    pub(super) fn runnable_while_waiting(&mut self, i: usize, ns: u64) {
        let released = &self.threads[i].released_since_delay;
        let per_category: [(usize, u64); RUNNABLE_FROM.len()] =
            std::array::from_fn(|k| (k, released.iter().map(|w| w.1[k]).sum()));
        let totals = &mut self.contexts.totals;
        let parts = &mut self.scratch;
        let mut sink = self.sink.as_deref_mut();
        share(ns, &per_category, |k, moved| {
            if let Some(sink) = sink.as_deref_mut() {
                sink.rc_cpu(i as ThreadId, RUNNABLE_FROM[k], moved);
            }
            parts.clear();
            parts.extend(released.iter().map(|w| (w.0 as u32, w.1[k])));
            share(moved, parts, |ctx, part| {
                totals[ctx as usize].move_to_rc_cpu(RUNNABLE_FROM[k], part)
            });
        });
    }

    /// At the end of thread `i`'s `wait recv` (at `t`), the late-sender split (docs/attribution.md,
    /// "Communication: `cl` and `rc.comm`"): of the wait, the time before the last message it
    /// received was sent is waiting for the partner (sl, as attributed); the rest is the transfer,
    /// moved from sl to cl — with a machine file that has an `[mpi]` model, cl up to the ideal time
    /// of the largest message and rc.comm beyond. Waits in which nothing was received stay sl.
    pub(super) fn split_receive(&mut self, i: usize, t: u64) {
        let Some(RecvWait {
            begin,
            last_send: Some(last_send),
            bytes,
        }) = self.threads[i].recv_wait.take()
        else {
            return;
        };
        self.close(i, t);
        let start = begin.max(last_send);
        let transfer = t.saturating_sub(start);
        if transfer == 0 {
            return;
        }
        let ideal = self
            .machine
            .as_ref()
            .and_then(|m| m.mpi.as_ref())
            .map_or(transfer, |mpi| mpi.ideal_message_ns(bytes));
        let ctx = self.threads[i].ctx;
        let totals = &mut self.contexts.totals[ctx as usize];
        let transfer = transfer.min(totals.get(Category::Sl));
        let cl = transfer.min(ideal);
        totals.move_to(Category::Sl, Category::Cl, cl);
        totals.move_to_rc_comm(Category::Sl, transfer - cl);
    }
}

/// Shares `total` (at most the sum of the parts) over `parts` in order: each takes the
/// difference of the rounded-down cumulative shares, so no part gives more than it has and
/// the shares sum to `total` exactly.
pub(super) fn share<K: Copy>(total: u64, parts: &[(K, u64)], mut f: impl FnMut(K, u64)) {
    let whole: u64 = parts.iter().map(|p| p.1).sum();
    if total == 0 || whole == 0 {
        return;
    }
    let total = total.min(whole);
    let (mut cumulative, mut given) = (0u64, 0u64);
    for &(key, ns) in parts {
        if ns == 0 {
            continue;
        }
        cumulative += ns;
        // In 64 bits unless the product overflows (stretches of seconds); no division for the
        // last part (often the only one).
        let upto = if cumulative == whole {
            total
        } else {
            match total.checked_mul(cumulative) {
                Some(product) => product / whole,
                None => (u128::from(total) * u128::from(cumulative) / u128::from(whole)) as u64,
            }
        };
        if upto > given {
            f(key, upto - given);
        }
        given = upto;
    }
}
