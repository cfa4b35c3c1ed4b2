//! A thread's open intervals (work, waits, comm): begins push, ends pop, and the rules of the
//! log that an event can break there (events outside a thread's lifetime, nesting, ends that
//! do not match their begin, regions ended out of turn).

use super::Sweep;
use super::state::{Open, describe};
use crate::event::{EventKind, WaitKind};
use crate::profile::rules::Own;
use crate::profile::violations::Violation;

impl Sweep<'_> {
    /// An event of thread `i`, which has not started or has stopped.
    #[cold]
    #[inline(never)]
    pub(super) fn outside_lifetime(&mut self, i: usize, t: u64, kind: &EventKind) {
        let th = &self.threads[i];
        let event = name(kind);
        match kind {
            // A start is checked by itself (started twice or not); so is a stop after a stop.
            EventKind::Start => {}
            EventKind::Stop if th.stopped => {}
            _ if !th.started => self.violate(Violation::BeforeStart, || {
                format!("thread {i} {event} at {t} ns")
            }),
            _ => self.violate(Violation::AfterStop, || {
                format!("thread {i} {event} at {t} ns")
            }),
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, i: usize, t: u64, own: Own, arg: u64) {
        let th = &mut self.threads[i];
        let outer = th.own;
        if outer != Own::Idle && (outer != Own::Work || own == Own::Work) {
            self.nested(i, t, own, outer);
        }
        let th = &mut self.threads[i];
        let was_busy = th.own.is_busy();
        th.stack.push(Open { own, arg, begin: t });
        th.own = own;
        if own == Own::Wait {
            th.wait_stretches.clear();
        }
        if was_busy != own.is_busy() {
            self.busy_changed(i, t, own.is_busy());
        }
        self.active_changed(i, t);
        self.retag(i, t);
        self.released_changed(i, t);
    }

    /// A begin of `own` inside an open `outer` other than a comm or wait inside work.
    #[cold]
    #[inline(never)]
    pub(super) fn nested(&mut self, i: usize, t: u64, own: Own, outer: Own) {
        use Own::{Barrier, Comm, Wait, Work};
        let kind = match (own, outer) {
            (Work, Work) => Violation::WorkInWork,
            (Work, Wait | Barrier) => Violation::WorkInWait,
            (Work, _) => Violation::WorkInComm,
            (Wait | Barrier, Comm) => Violation::WaitInComm,
            (Wait | Barrier, _) => Violation::WaitInWait,
            (_, Comm) => Violation::CommInComm,
            _ => Violation::CommInWait,
        };
        self.violate(kind, || format!("thread {i} at {t} ns"));
    }

    #[inline]
    pub(super) fn pop(&mut self, i: usize, t: u64, own: Own, arg: u64) {
        let th = &mut self.threads[i];
        let was_busy = th.own.is_busy();
        if closes(own, th.own) {
            if let Some(open) = th.stack.pop()
                && open.arg != arg
            {
                self.end_differs(i, t, own, open.arg, arg);
            }
        } else {
            self.unmatched_end(i, t, own, arg);
        }
        let th = &mut self.threads[i];
        th.own = th.stack.last().map_or(Own::Idle, |o| o.own);
        let now_busy = th.own.is_busy();
        if was_busy != now_busy {
            self.busy_changed(i, t, now_busy);
        }
        self.active_changed(i, t);
        self.retag(i, t);
        self.released_changed(i, t);
    }

    /// An end that does not close the innermost interval: it closes the innermost interval of
    /// its kind and those opened inside it, or nothing when there is none.
    #[cold]
    #[inline(never)]
    pub(super) fn unmatched_end(&mut self, i: usize, t: u64, own: Own, arg: u64) {
        let stack = &mut self.threads[i].stack;
        let what = end_name(own);
        match stack.iter().rposition(|o| closes(own, o.own)) {
            Some(pos) => {
                let inner = stack.split_off(pos + 1);
                let open = stack.pop().map_or(arg, |o| o.arg);
                self.violate(Violation::EndCrossing, || {
                    format!(
                        "thread {i} {what} at {t} ns, inside it: {}",
                        describe(&inner)
                    )
                });
                if open != arg {
                    self.end_differs(i, t, own, open, arg);
                }
            }
            None => self.violate(Violation::EndWithoutBegin, || {
                format!("thread {i} {what} at {t} ns")
            }),
        }
    }

    /// An end whose arguments are not its begin's.
    #[cold]
    #[inline(never)]
    pub(super) fn end_differs(&mut self, i: usize, t: u64, own: Own, begin: u64, end: u64) {
        let at = || format!("thread {i} at {t} ns");
        match own {
            Own::Work => self.violate(Violation::WorkLabelDiffers, at),
            Own::Comm => self.violate(Violation::CommBytesDiffer, || {
                format!("thread {i} at {t} ns, {begin} then {end} bytes")
            }),
            _ => {
                let kind = |a: u64| WaitKind::ALL.get((a >> 32) as usize).map(|k| k.as_str());
                if begin >> 32 != end >> 32 {
                    self.violate(Violation::WaitKindDiffers, || {
                        format!(
                            "thread {i} at {t} ns, {} then {}",
                            kind(begin).unwrap_or("?"),
                            kind(end).unwrap_or("?")
                        )
                    });
                }
                if begin as u32 != end as u32 {
                    self.violate(Violation::WaitObjectDiffers, at);
                }
            }
        }
    }

    /// A `region_end` of an open region that is not the last one thread `i` began: one it
    /// began earlier (the regions cross), or one it did not begin.
    #[cold]
    #[inline(never)]
    pub(super) fn region_end_out_of_turn(&mut self, i: usize, t: u64, id: u64, slot: u32) {
        let begun = &mut self.threads[i].begun;
        match begun.iter().rposition(|&r| r == id) {
            Some(pos) => {
                let inner = begun[pos + 1..].to_vec();
                begun.remove(pos);
                self.violate(Violation::RegionsCross, || {
                    format!("thread {i} at {t} ns, region {id} ends before {inner:?}")
                });
            }
            None => {
                self.regions[slot as usize].ended_by_other = true;
                self.violate(Violation::RegionEndByOther, || {
                    format!("thread {i} at {t} ns, region {id}")
                });
            }
        }
    }
}

/// The event's keyword in the text encoding.
pub(super) fn name(kind: &EventKind) -> &'static str {
    match kind {
        EventKind::Start => "start",
        EventKind::Stop => "stop",
        EventKind::RegionBegin { .. } => "region_begin",
        EventKind::RegionEnd { .. } => "region_end",
        EventKind::WorkBegin { .. } => "work_begin",
        EventKind::WorkEnd { .. } => "work_end",
        EventKind::WaitBegin { .. } => "wait_begin",
        EventKind::WaitEnd { .. } => "wait_end",
        EventKind::Release { .. } => "release",
        EventKind::CommBegin { .. } => "comm_begin",
        EventKind::CommEnd { .. } => "comm_end",
        EventKind::Cpu { .. } => "cpu",
        EventKind::Phase { .. } => "phase",
        EventKind::Send { .. } => "send",
        EventKind::Recv { .. } => "recv",
        EventKind::Coll { .. } => "coll",
    }
}

/// The keyword of the end of an interval.
pub(super) fn end_name(own: Own) -> &'static str {
    match own {
        Own::Work => "work_end",
        Own::Comm => "comm_end",
        _ => "wait_end",
    }
}

/// Whether an end of `ending` closes an open `open` interval: the same kind, or two waits
/// (a `wait_end` closes the innermost wait whatever kind it names, as it always has).
#[inline(always)]
pub(super) fn closes(ending: Own, open: Own) -> bool {
    ending == open || (ending.is_wait() && open.is_wait())
}
