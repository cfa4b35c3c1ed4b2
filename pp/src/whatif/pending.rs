//! [`Pending`]: the replay's pending items, earliest first, ties in the order they were set;
//! one slot an item (a thread's next event, a processor's next completion), so that moving a
//! processor's completion replaces its entry instead of leaving a stale one behind
//! (docs/whatif.md#cost).

/// A slot's entry: its time, its order among entries of one time, the slot.
type Entry = (f64, u64, u32);

/// A binary heap of slots by (time, order), each slot at most once.
#[derive(Debug)]
pub(super) struct Pending {
    heap: Vec<Entry>,
    /// Each slot's place in `heap` (`NONE`: not pending).
    at: Vec<u32>,
    /// The order of the next entry set.
    seq: u64,
}

const NONE: u32 = u32::MAX;

fn before(a: &Entry, b: &Entry) -> bool {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).is_lt()
}

impl Pending {
    /// No item pending, of `slots` slots.
    pub fn new(slots: usize) -> Pending {
        Pending {
            heap: Vec::with_capacity(slots),
            at: vec![NONE; slots],
            seq: 0,
        }
    }

    /// Slot `slot` is due at `t`, after every entry set before at that time (replacing its
    /// entry if it has one).
    pub fn set(&mut self, slot: u32, t: f64) {
        self.seq += 1;
        let entry = (t, self.seq, slot);
        match self.at[slot as usize] {
            NONE => {
                self.heap.push(entry);
                self.up(self.heap.len() - 1);
            }
            k => {
                let k = k as usize;
                let earlier = before(&entry, &self.heap[k]);
                self.heap[k] = entry;
                if earlier {
                    self.up(k);
                } else {
                    self.down(k);
                }
            }
        }
    }

    /// Slot `slot` is no longer pending.
    pub fn remove(&mut self, slot: u32) {
        let k = self.at[slot as usize];
        if k == NONE {
            return;
        }
        self.at[slot as usize] = NONE;
        let k = k as usize;
        let last = self.heap.len() - 1;
        if k != last {
            let moved = self.heap[last];
            let earlier = before(&moved, &self.heap[k]);
            self.heap[k] = moved;
            self.heap.pop();
            self.at[moved.2 as usize] = k as u32;
            if earlier {
                self.up(k);
            } else {
                self.down(k);
            }
        } else {
            self.heap.pop();
        }
    }

    /// The earliest entry's time and slot, no longer pending.
    pub fn pop(&mut self) -> Option<(f64, u32)> {
        let &(t, _, slot) = self.heap.first()?;
        self.remove(slot);
        Some((t, slot))
    }

    fn up(&mut self, mut k: usize) {
        let entry = self.heap[k];
        while k > 0 {
            let parent = (k - 1) / 2;
            if !before(&entry, &self.heap[parent]) {
                break;
            }
            self.heap[k] = self.heap[parent];
            self.at[self.heap[k].2 as usize] = k as u32;
            k = parent;
        }
        self.heap[k] = entry;
        self.at[entry.2 as usize] = k as u32;
    }

    fn down(&mut self, mut k: usize) {
        let entry = self.heap[k];
        let n = self.heap.len();
        loop {
            let mut child = 2 * k + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && before(&self.heap[child + 1], &self.heap[child]) {
                child += 1;
            }
            if !before(&self.heap[child], &entry) {
                break;
            }
            self.heap[k] = self.heap[child];
            self.at[self.heap[k].2 as usize] = k as u32;
            k = child;
        }
        self.heap[k] = entry;
        self.at[entry.2 as usize] = k as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a sorted list of the live entries: the same pops in the same order.
        #[test]
        fn pops_in_time_then_order_of_setting(
            ops in proptest::collection::vec((0u32..12, 0u8..4, 0u32..20), 1..200)
        ) {
            let mut pending = Pending::new(12);
            let mut live: Vec<(f64, u64, u32)> = Vec::new();
            let mut seq = 0;
            for (slot, op, t) in ops {
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
