//! Running a skeleton whose regions were a `Team`'s (docs/skeletons.md#pp-skeleton-run): one
//! thread opens every region (`region_begin`), the others take part (`part_begin`). The skeleton
//! then runs on a recorder `Team` (a rayon pool, as the application did), so that its forks,
//! joins and idle workers behave as the application's: the opener's steps outside regions run
//! as serial code on the team, each `region_begin` is a `Team::region` in which the opener runs
//! its steps up to its `region_end` and every other thread its steps up to its next `part_end`.

use std::sync::{Mutex, PoisonError};

use super::run::{Objects, State, leak};
use super::spinning::Waits;
use super::{Item, SkelStep, Skeleton};
use crate::signature::Op;
use pp_recorder::Team;

/// Walks a program's steps in order, loops expanded as they are reached.
pub struct Cursor<'a> {
    /// (items, next index, iterations left after this one).
    stack: Vec<(&'a [Item], usize, u64)>,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `items`.
    pub fn new(items: &'a [Item]) -> Self {
        Cursor {
            stack: vec![(items, 0, 0)],
        }
    }
}

impl<'a> Iterator for Cursor<'a> {
    type Item = &'a SkelStep;

    fn next(&mut self) -> Option<&'a SkelStep> {
        loop {
            let (items, i, left) = self.stack.last_mut()?;
            if *i == items.len() {
                if *left > 0 {
                    *left -= 1;
                    *i = 0;
                } else {
                    self.stack.pop();
                }
                continue;
            }
            let item = &items[*i];
            *i += 1;
            match item {
                Item::Step(s) => return Some(s),
                Item::Loop { count, body } => {
                    if *count > 0 && !body.is_empty() {
                        self.stack.push((body, 0, count - 1));
                    }
                }
            }
        }
    }
}

/// Parks a thread when its part of a region returns, however it returns.
struct Parked<'a>(&'a super::partner::Partners, u32);

impl Drop for Parked<'_> {
    fn drop(&mut self) {
        self.0.park(self.1);
    }
}

/// The thread that opens every region, where the skeleton is a `Team`'s: exactly one thread
/// has `region_begin` steps, and some other has `part_begin` steps.
pub fn opener(s: &Skeleton) -> Option<u32> {
    let has = |t: &super::ThreadProgram, f: &dyn Fn(&SkelStep) -> bool| {
        t.items.iter().any(|i| i.count(f) > 0)
    };
    let begins = |st: &SkelStep| matches!(st.op, Op::RegionBegin { .. });
    let parts = |st: &SkelStep| matches!(st.op, Op::PartBegin { .. });
    let openers: Vec<u32> = s
        .threads
        .iter()
        .filter(|t| has(t, &begins))
        .map(|t| t.thread)
        .collect();
    match openers[..] {
        [o] if s.threads.iter().any(|t| t.thread != o && has(t, &parts)) => Some(o),
        _ => None,
    }
}

/// Runs `s` on a team of `s.p` threads, `opener` opening the regions.
pub fn run(s: &Skeleton, opener: u32, objects: &Objects) -> std::io::Result<()> {
    let team = Team::new(s.p as usize)?;
    let cursor = |t: u32| {
        s.threads
            .iter()
            .find(|p| p.thread == t)
            .map(|p| Cursor::new(&p.items))
    };
    // Per thread: its cursor and its state (the lock it holds, its buffers).
    let threads: Vec<Mutex<Option<(Cursor<'_>, State<'_>)>>> = (0..s.p)
        .map(|t| {
            Mutex::new(cursor(t).map(|c| {
                let items = &s
                    .threads
                    .iter()
                    .find(|p| p.thread == t)
                    .expect("found")
                    .items;
                (c, State::new(t, objects, items, Waits::Measured))
            }))
        })
        .collect();
    let slot = |t: u32| {
        threads[t as usize]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    };
    // The members run only in regions: outside them they release nothing (partner.rs).
    (0..s.p)
        .filter(|&t| t != opener)
        .for_each(|t| objects.partners.park(t));
    // The whole program runs inside one `Team::run`, as fft2d's does: its regions are opened
    // from a thread of the team, so no thread outside it wakes for each region (opened from
    // outside, each region woke the calling thread: 9 context switches a region where fft2d
    // has 1, and beside a CPU hog the skeleton slowed 1.4x where fft2d slowed 3.3x).
    team.run(|| {
        loop {
            // The opener's serial steps, up to its next region_begin (whose computation is
            // serial).
            objects.partners.unpark(opener);
            let next = {
                let mut guard = slot(opener);
                let (cur, state) = guard.as_mut().expect("the opener has a program");
                let mut next = None;
                for st in cur.by_ref() {
                    match &st.op {
                        Op::RegionBegin { name } => {
                            state.compute(st.cpu_ns);
                            next = Some(name.clone());
                            break;
                        }
                        _ => state.step(st),
                    }
                }
                next
            };
            let Some(name) = next else {
                objects.partners.finish(opener);
                break;
            };
            team.region(leak(&name), |part| {
                let t = part.thread();
                objects.partners.unpark(t);
                let _parked = Parked(&objects.partners, t);
                let mut guard = slot(t);
                let Some((cur, state)) = guard.as_mut() else {
                    return;
                };
                if t == opener {
                    // Its part: up to its region_end, whose computation is the part's last.
                    for st in cur.by_ref() {
                        if st.op == Op::RegionEnd {
                            state.compute(st.cpu_ns);
                            return;
                        }
                        state.step(st);
                    }
                } else {
                    // Up to its next part_begin, then its part. The computation before the
                    // part_begin is the member's idle time between its parts, which the pool's
                    // own idle workers reproduce (rayon's spin, yield, then sleep): not spun.
                    let mut inside = false;
                    for st in cur.by_ref() {
                        match &st.op {
                            Op::PartBegin { .. } if !inside => inside = true,
                            Op::PartEnd if inside => {
                                state.compute(st.cpu_ns);
                                return;
                            }
                            Op::Stop => state.compute(st.cpu_ns),
                            _ => state.step(st),
                        }
                    }
                    objects.partners.finish(t);
                }
            });
        }
    });
    // The other threads' steps after their last part (a stop's idle computation, or parts
    // beyond the opener's regions) are not run: nothing opens a region for them.
    for t in 0..s.p {
        objects.partners.finish(t);
        if let Some((_, state)) = slot(t).as_mut() {
            state.release();
        }
    }
    drop(team);
    Ok(())
}
