//! Partners of a threaded skeleton's waits (docs/skeletons.md#partners): a `cond`, `recv`,
//! `send` or `other` wait that the log says another thread ended (`by=P`) is ended, in the
//! skeleton, by that thread's own `release` of the same kind and object, at the point of its
//! program where the application released it. Per waiter W, partner P, kind and object (a
//! *link*), W's i-th wait is ended by P's i-th release, for the first min(waits, releases) of
//! each; the other waits, and every wait whose partner's program has ended or whose threads all
//! wait on one another (or are a `Team`'s members parked between regions), sleep what the
//! application's wait lasted (divided by K), as a wait with no partner does.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, PoisonError};

use super::Programs;
use super::mpi::walk;
use crate::signature::Op;
use crate::signature::steps::partnered;

/// What a wait or release is on: its kind and object.
pub type Key = (String, Option<String>);

/// How a partnered wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The partner's release ended it.
    Signalled(u32),
    /// It has no release to wait for (no link, or more waits than releases): it sleeps.
    Unpaired,
    /// Its partner's program ended, or every thread still running waited on another's
    /// release, before the release came: it sleeps the rest.
    Gone,
}

#[derive(Debug)]
struct State {
    /// Per link: the partner's releases so far.
    released: Vec<u64>,
    /// Per link: the waiter's waits begun so far.
    waited: Vec<u64>,
    /// Per link: whether its waiter is blocked now.
    blocked_on: Vec<bool>,
    /// Per thread (by id): whether its program has ended.
    done: Vec<bool>,
    /// Per thread (by id): whether it is parked (a `Team` member between its parts: it releases
    /// nothing until the next region).
    parked: Vec<bool>,
    /// Threads blocked in a partnered wait or parked, and threads whose programs have not
    /// ended.
    blocked: usize,
    live: usize,
}

/// The links of a skeleton and their state while it runs.
#[derive(Debug)]
pub struct Partners {
    /// (key, partner, waiter) → link.
    links: BTreeMap<(Key, u32, u32), usize>,
    /// (key, partner) → the links its releases signal.
    signals: BTreeMap<(Key, u32), Vec<usize>>,
    /// Per link: how many of its waits are ended by a release (min of waits and releases).
    paired: Vec<u64>,
    state: Mutex<State>,
    changed: Condvar,
}

impl Partners {
    /// The links of `s` (threads numbered below `p`), and a warning for each link whose counts
    /// differ after the division by K.
    pub fn plan(s: &dyn Programs) -> (Partners, Vec<String>) {
        let threads = s.threads();
        // (key, waiter, partner) → waits; (key, thread) → releases.
        let mut waits: BTreeMap<(Key, u32, u32), u64> = BTreeMap::new();
        let mut releases: BTreeMap<(Key, u32), u64> = BTreeMap::new();
        for (i, &t) in threads.iter().enumerate() {
            s.each(i, &mut |it| {
                walk(std::slice::from_ref(it), 1, &mut |st, n| match &st.op {
                    Op::Wait {
                        kind,
                        object,
                        by: Some(by),
                    } if partnered(kind) => {
                        let c = waits
                            .entry(((kind.clone(), object.clone()), t, *by))
                            .or_default();
                        *c = c.saturating_add(n);
                    }
                    Op::Release { kind, object } => {
                        let c = releases
                            .entry(((kind.clone(), object.clone()), t))
                            .or_default();
                        *c = c.saturating_add(n);
                    }
                    _ => {}
                })
            });
        }
        let mut links = BTreeMap::new();
        let mut signals: BTreeMap<(Key, u32), Vec<usize>> = BTreeMap::new();
        let mut paired = Vec::new();
        let mut warnings = Vec::new();
        for ((key, waiter, partner), w) in waits {
            let r = if partner == waiter {
                0
            } else {
                releases.get(&(key.clone(), partner)).copied().unwrap_or(0)
            };
            if r != w {
                let what = match &key.1 {
                    Some(o) => format!("wait {} {o}", key.0),
                    None => format!("wait {}", key.0),
                };
                warnings.push(format!(
                    "{what}: thread {waiter} waits {w} times for thread {partner}, which releases it {r} times: {}",
                    if r == 0 {
                        "its waits sleep (docs/skeletons.md#partners)".to_string()
                    } else if r < w {
                        format!("the first {r} are ended by its releases, the other {} sleep", w - r)
                    } else {
                        format!("each is ended by one of its first {w} releases")
                    }
                ));
            }
            if r > 0 {
                let link = paired.len();
                paired.push(r.min(w));
                signals
                    .entry((key.clone(), partner))
                    .or_default()
                    .push(link);
                links.insert((key, partner, waiter), link);
            }
        }
        let n = paired.len();
        let ids = threads.iter().map(|&t| t as usize + 1).max().unwrap_or(0);
        let partners = Partners {
            links,
            signals,
            paired,
            state: Mutex::new(State {
                released: vec![0; n],
                waited: vec![0; n],
                blocked_on: vec![false; n],
                done: vec![true; ids],
                parked: vec![false; ids],
                blocked: 0,
                live: threads.len(),
            }),
            changed: Condvar::new(),
        };
        {
            let mut st = partners.lock();
            for &t in &threads {
                st.done[t as usize] = false;
            }
        }
        (partners, warnings)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Thread `thread` releases `key`: the next wait of each of its links may end.
    pub fn release(&self, thread: u32, key: &Key) {
        let Some(links) = self.signals.get(&(key.clone(), thread)) else {
            return;
        };
        let mut st = self.lock();
        for &l in links {
            st.released[l] += 1;
            if st.blocked_on[l] && st.released[l] >= st.waited[l] {
                st.blocked_on[l] = false;
                st.blocked -= 1;
            }
        }
        self.changed.notify_all();
    }

    /// Thread `waiter` waits on `key` for thread `partner`'s release; returns how it ended.
    pub fn wait(&self, waiter: u32, key: &Key, partner: u32) -> Outcome {
        let Some(&l) = self.links.get(&(key.clone(), partner, waiter)) else {
            return Outcome::Unpaired;
        };
        let mut st = self.lock();
        let i = st.waited[l];
        st.waited[l] += 1;
        if i >= self.paired[l] {
            return Outcome::Unpaired;
        }
        if st.released[l] > i {
            return Outcome::Signalled(partner);
        }
        st.blocked_on[l] = true;
        st.blocked += 1;
        // Another thread may have been the last one running: it is blocked now.
        self.changed.notify_all();
        let p = partner as usize;
        let mut st = self
            .changed
            .wait_while(st, |s| {
                s.released[l] <= i && !s.done.get(p).copied().unwrap_or(true) && s.blocked < s.live
            })
            .unwrap_or_else(PoisonError::into_inner);
        if st.blocked_on[l] {
            st.blocked_on[l] = false;
            st.blocked -= 1;
        }
        if st.released[l] > i {
            Outcome::Signalled(partner)
        } else {
            Outcome::Gone
        }
    }

    /// Thread `thread`'s program has ended: nobody waits for its releases any more.
    pub fn finish(&self, thread: u32) {
        self.unpark(thread);
        let mut st = self.lock();
        if let Some(d) = st.done.get_mut(thread as usize)
            && !*d
        {
            *d = true;
            st.live -= 1;
        }
        self.changed.notify_all();
    }

    /// Thread `thread` releases nothing until [`Partners::unpark`] (a `Team` member between
    /// its parts): it counts as blocked, so that waits for it end once every thread is.
    pub fn park(&self, thread: u32) {
        let mut st = self.lock();
        let t = thread as usize;
        if t < st.parked.len() && !st.parked[t] && !st.done[t] {
            st.parked[t] = true;
            st.blocked += 1;
            self.changed.notify_all();
        }
    }

    /// Thread `thread` runs again.
    pub fn unpark(&self, thread: u32) {
        let mut st = self.lock();
        let t = thread as usize;
        if t < st.parked.len() && st.parked[t] {
            st.parked[t] = false;
            st.blocked -= 1;
        }
    }
}
