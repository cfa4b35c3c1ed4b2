//! [`Pending`]: the replay's pending items, earliest first, ties in the order they were set;
//! one slot an item (a thread's next event, a processor's next completion), so that moving a
//! processor's completion replaces its entry instead of leaving a stale one behind
//! (docs/whatif.md#cost).

/// A tournament tree over the slots: each leaf a slot, each inner node the earlier of its two
/// children's entries by (time, order), the root the earliest. Setting or removing a slot plays
/// the matches on its path to the root again: `log2(slots)` comparisons of one integer key,
/// with no positions to keep up to date as a heap's entries move. Each node holds its winner's
/// key beside its slot, so a match reads the one sibling node and nothing else. On the bench's
/// regrouped log it took 3–4% less wall than the binary heap before it, and 6–7% less again
/// with the popped slot left in place (docs/whatif.md#cost).
#[derive(Debug)]
pub(super) struct Pending {
    /// Node `k`'s earliest entry, `k` from 1 (the root); the leaves from `leaves`, slot `s` at
    /// `leaves + s` with its own key ([`key`]: its time, then its order; `NONE` when not
    /// pending). The leaves past the last slot are always `NONE`.
    tree: Vec<Entry>,
    leaves: usize,
    /// The order of the next entry set.
    seq: u64,
    /// The slot [`Pending::pop`] gave last, whose entry stays in the tree until it is set
    /// again (one pass up the tree instead of two) or the next pop takes it out.
    popped: Option<u32>,
}

/// A slot and its key.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u128,
    slot: u32,
}

const NONE: u128 = u128::MAX;

/// A time and an order as one integer key, ordered as `(t.total_cmp, order)`: the bits of a
/// double with the sign bit flipped (and, for a negative one, all the others), then the order.
fn key(t: f64, order: u64) -> u128 {
    let b = t.to_bits();
    let ordered = if b >> 63 == 1 { !b } else { b | 1 << 63 };
    (u128::from(ordered) << 64) | u128::from(order)
}

/// The time of a [`key`].
fn time(key: u128) -> f64 {
    let ordered = (key >> 64) as u64;
    f64::from_bits(if ordered >> 63 == 1 {
        ordered & !(1 << 63)
    } else {
        !ordered
    })
}

impl Pending {
    /// No item pending, of `slots` slots.
    pub fn new(slots: usize) -> Pending {
        let leaves = slots.next_power_of_two();
        let mut tree = vec![
            Entry {
                key: NONE,
                slot: slots as u32,
            };
            2 * leaves
        ];
        for (k, leaf) in tree[leaves..leaves + slots].iter_mut().enumerate() {
            leaf.slot = k as u32;
        }
        Pending {
            tree,
            leaves,
            seq: 0,
            popped: None,
        }
    }

    /// Slot `slot` is due at `t`, after every entry set before at that time (replacing its
    /// entry if it has one).
    pub fn set(&mut self, slot: u32, t: f64) {
        if self.popped == Some(slot) {
            self.popped = None;
        }
        self.seq += 1;
        self.play(slot, key(t, self.seq));
    }

    /// Slot `slot` is no longer pending.
    pub fn remove(&mut self, slot: u32) {
        if self.popped == Some(slot) {
            self.popped = None;
        }
        if self.tree[self.leaves + slot as usize].key != NONE {
            self.play(slot, NONE);
        }
    }

    /// The earliest entry's time and slot, no longer pending.
    pub fn pop(&mut self) -> Option<(f64, u32)> {
        if let Some(p) = self.popped.take() {
            self.remove(p);
        }
        let Entry { key, slot } = self.tree[1];
        if key == NONE {
            return None;
        }
        self.popped = Some(slot);
        Some((time(key), slot))
    }

    /// Slot `slot`'s time, if it is pending (the slot [`Pending::pop`] gave last is not).
    pub fn time_of(&self, slot: u32) -> Option<f64> {
        let k = self.tree[self.leaves + slot as usize].key;
        (k != NONE && self.popped != Some(slot)).then(|| time(k))
    }

    /// Slot `slot` takes key `key`, and the matches on its path to the root are played again:
    /// the entry coming up meets its sibling. No two pending keys are equal (each has its own
    /// order), so only two `NONE`s tie, and which of them wins does not matter.
    fn play(&mut self, slot: u32, key: u128) {
        let mut k = self.leaves + slot as usize;
        let mut winner = Entry { key, slot };
        self.tree[k] = winner;
        while k > 1 {
            let other = self.tree[k ^ 1];
            if other.key < winner.key {
                winner = other;
            }
            k >>= 1;
            self.tree[k] = winner;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a sorted list of the live entries: the same pops in the same order, for any
        /// number of slots (powers of two and not) and negative times too.
        #[test]
        fn pops_in_time_then_order_of_setting(
            slots in 1u32..40,
            ops in proptest::collection::vec((0u32..40, 0u8..4, -20i32..20), 1..200)
        ) {
            let mut pending = Pending::new(slots as usize);
            let mut live: Vec<(f64, u64, u32)> = Vec::new();
            let mut seq = 0;
            for (slot, op, t) in ops {
                let slot = slot % slots;
                let t = f64::from(t) / 2.0;
                match op {
                    0 | 1 => {
                        pending.set(slot, t);
                        seq += 1;
                        live.retain(|e| e.2 != slot);
                        live.push((t, seq, slot));
                    }
                    2 => {
                        pending.remove(slot);
                        live.retain(|e| e.2 != slot);
                    }
                    _ => {
                        live.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                        let want = (!live.is_empty()).then(|| live.remove(0));
                        prop_assert_eq!(pending.pop(), want.map(|e| (e.0, e.2)));
                    }
                }
            }
            live.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for e in live {
                prop_assert_eq!(pending.pop(), Some((e.0, e.2)));
            }
            prop_assert_eq!(pending.pop(), None);
        }
    }
}
