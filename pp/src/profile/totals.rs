//! Processor-time per category, in integer nanoseconds (so sums are exact).
//!
//! Two widths, so that nothing wraps: the sweep adds up one thread's time in 64 bits (a
//! thread's time is at most the run window, a difference of two 64-bit times), and every sum
//! over threads is 128 bits (`p ≤ 2^20` threads × a window below 2^64 ns is below 2^84).

use super::rules::{CATEGORIES, Category, SUBCATEGORIES};

const RC_CPU: usize = 0;
const RC_COMM: usize = 1;

/// Nanoseconds per category and sub-category, of a thread or summed over threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Per category, indexed by [`Category::index`].
    pub ns: [u128; CATEGORIES.len()],
    /// Per sub-category, in the order of [`SUBCATEGORIES`].
    pub sub: [u128; SUBCATEGORIES.len()],
}

impl Totals {
    /// Time in a category.
    pub fn get(&self, category: Category) -> u128 {
        self.ns[category.index()]
    }

    /// Sum over the categories (sub-categories are inside their parents).
    pub fn sum(&self) -> u128 {
        self.ns.iter().sum()
    }

    /// Adds another set of totals to this one.
    pub fn absorb(&mut self, other: &Totals) {
        for (a, b) in self.ns.iter_mut().zip(other.ns) {
            *a += b;
        }
        for (a, b) in self.sub.iter_mut().zip(other.sub) {
            *a += b;
        }
    }

    /// Sub-category time by key (`rc.cpu`).
    pub fn sub(&self, key: &str) -> Option<u128> {
        SUBCATEGORIES
            .iter()
            .position(|(k, _)| *k == key)
            .map(|i| self.sub[i])
    }
}

impl From<&ThreadTotals> for Totals {
    fn from(t: &ThreadTotals) -> Totals {
        Totals {
            ns: t.ns.map(u128::from),
            sub: t.sub.map(u128::from),
        }
    }
}

/// One thread's time in one context, as the sweep adds it up: 64 bits hold it exactly,
/// because the stretches of a thread tile the run window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ThreadTotals {
    ns: [u64; CATEGORIES.len()],
    sub: [u64; SUBCATEGORIES.len()],
}

impl ThreadTotals {
    /// Adds time to a category.
    #[inline]
    pub(crate) fn add(&mut self, category: Category, ns: u64) {
        self.ns[category.index()] += ns;
    }

    /// Time in a category.
    #[inline]
    pub(crate) fn get(&self, category: Category) -> u64 {
        self.ns[category.index()]
    }

    /// Whether no time was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.ns.iter().all(|&ns| ns == 0)
    }

    /// Moves time a thread lost waiting for a CPU from `from` to rc (sub-category rc.cpu):
    /// work not backed by CPU time (from pc), or run-queue delay while it waited (from li,
    /// ip or sl). At most what `from` holds.
    pub(crate) fn move_to_rc_cpu(&mut self, from: Category, ns: u64) {
        let ns = ns.min(self.get(from));
        self.ns[from.index()] -= ns;
        self.ns[Category::Rc.index()] += ns;
        self.sub[RC_CPU] += ns;
    }

    /// Moves time from one category to another (at most what `from` holds).
    pub(crate) fn move_to(&mut self, from: Category, to: Category, ns: u64) {
        let ns = ns.min(self.get(from));
        self.ns[from.index()] -= ns;
        self.ns[to.index()] += ns;
    }

    /// Moves time from `from` to rc as rc.comm (a message's transfer beyond its ideal time).
    pub(crate) fn move_to_rc_comm(&mut self, from: Category, ns: u64) {
        let ns = ns.min(self.get(from));
        self.ns[from.index()] -= ns;
        self.add_rc_comm(ns);
    }

    /// Adds data movement beyond its ideal time to rc (sub-category rc.comm).
    #[inline]
    pub(crate) fn add_rc_comm(&mut self, ns: u64) {
        self.ns[Category::Rc.index()] += ns;
        self.sub[RC_COMM] += ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_to_rc_keeps_the_sum() {
        let mut t = ThreadTotals::default();
        t.add(Category::Pc, 100);
        t.add(Category::Li, 5);
        t.move_to_rc_cpu(Category::Pc, 30);
        assert_eq!(t.get(Category::Pc), 70);
        assert_eq!(t.get(Category::Rc), 30);
        let wide = Totals::from(&t);
        assert_eq!(wide.sub("rc.cpu"), Some(30));
        assert_eq!(wide.sum(), 105);
        t.move_to_rc_cpu(Category::Pc, 1000);
        assert_eq!(t.get(Category::Pc), 0);
        t.add_rc_comm(7);
        let wide = Totals::from(&t);
        assert_eq!(wide.sum(), 112);
        assert_eq!(wide.sub("rc.comm"), Some(7));
        assert_eq!(wide.get(Category::Rc), 107);
        assert_eq!(wide.sub.iter().sum::<u128>(), wide.get(Category::Rc));
    }

    #[test]
    fn sums_over_threads_do_not_wrap() {
        // 2^20 threads, each 18,000 s idle: 1.8874368e19 ns, past 2^64 (1.8447e19).
        let mut one = ThreadTotals::default();
        one.add(Category::Ip, 18_000_000_000_000);
        let mut run = Totals::default();
        for _ in 0..1 << 20 {
            run.absorb(&Totals::from(&one));
        }
        assert_eq!(run.sum(), 18_874_368_000_000_000_000);
        assert!(run.sum() > u128::from(u64::MAX));
    }
}
