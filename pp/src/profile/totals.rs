//! Processor-time per category, in integer nanoseconds (so sums are exact).

use super::rules::{CATEGORIES, Category, SUBCATEGORIES};

const RC_CPU: usize = 0;
const RC_COMM: usize = 1;

/// Nanoseconds per category and sub-category.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Per category, indexed by [`Category::index`].
    pub ns: [u64; CATEGORIES.len()],
    /// Per sub-category, in the order of [`SUBCATEGORIES`].
    pub sub: [u64; SUBCATEGORIES.len()],
}

impl Totals {
    /// Adds time to a category.
    pub fn add(&mut self, category: Category, ns: u64) {
        self.ns[category.index()] += ns;
    }

    /// Time in a category.
    pub fn get(&self, category: Category) -> u64 {
        self.ns[category.index()]
    }

    /// Sum over the categories (sub-categories are inside their parents).
    pub fn sum(&self) -> u64 {
        self.ns.iter().sum()
    }

    /// Moves time a thread lost waiting for a CPU from `from` to rc (sub-category rc.cpu):
    /// work not backed by CPU time (from pc), or run-queue delay while it waited (from li,
    /// ip or sl). At most what `from` holds.
    pub fn move_to_rc_cpu(&mut self, from: Category, ns: u64) {
        let ns = ns.min(self.get(from));
        self.ns[from.index()] -= ns;
        self.ns[Category::Rc.index()] += ns;
        self.sub[RC_CPU] += ns;
    }

    /// Adds data movement beyond its ideal time to rc (sub-category rc.comm).
    pub fn add_rc_comm(&mut self, ns: u64) {
        self.ns[Category::Rc.index()] += ns;
        self.sub[RC_COMM] += ns;
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
    pub fn sub(&self, key: &str) -> Option<u64> {
        SUBCATEGORIES
            .iter()
            .position(|(k, _)| *k == key)
            .map(|i| self.sub[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_to_rc_keeps_the_sum() {
        let mut t = Totals::default();
        t.add(Category::Pc, 100);
        t.add(Category::Li, 5);
        t.move_to_rc_cpu(Category::Pc, 30);
        assert_eq!(t.get(Category::Pc), 70);
        assert_eq!(t.get(Category::Rc), 30);
        assert_eq!(t.sub("rc.cpu"), Some(30));
        assert_eq!(t.sum(), 105);
        t.move_to_rc_cpu(Category::Pc, 1000);
        assert_eq!(t.get(Category::Pc), 0);
        assert_eq!(t.sum(), 105);
        t.add_rc_comm(7);
        assert_eq!(t.sub("rc.comm"), Some(7));
        assert_eq!(t.get(Category::Rc), 107);
        assert_eq!(t.sub.iter().sum::<u64>(), t.get(Category::Rc));
    }
}
