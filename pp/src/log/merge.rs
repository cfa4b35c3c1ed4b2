//! A loser tree (tournament tree) that merges k sorted streams: each step replays ⌈log₂ k⌉
//! matches of `u128` keys on the path from the winner's leaf to the root.

/// The key of an exhausted stream; real keys must be smaller.
pub(crate) const EXHAUSTED: u128 = u128::MAX;

/// Tracks the stream with the smallest key.
#[derive(Debug, Clone)]
pub(crate) struct LoserTree {
    /// `losers[n]` for internal nodes `1..k`: the stream that lost the match at node `n`.
    losers: Vec<u32>,
    /// Current key of each stream.
    keys: Vec<u128>,
    /// The stream with the smallest key.
    winner: u32,
    /// Streams not exhausted (counted apart, so that `winner` need not reload the key just
    /// stored).
    live: usize,
}

impl LoserTree {
    /// A tree over streams whose first keys are `keys`. Keys should be distinct (callers put
    /// the stream index in the low bits) so that ties are broken by index.
    pub(crate) fn new(keys: Vec<u128>) -> LoserTree {
        let k = keys.len();
        let mut losers = vec![0u32; k.max(1)];
        // Winners of every node of a complete tree whose leaves are nodes k..2k.
        let mut winners = vec![0u32; 2 * k.max(1)];
        for i in 0..k {
            winners[k + i] = i as u32;
        }
        for n in (1..k).rev() {
            let (a, b) = (winners[2 * n], winners[2 * n + 1]);
            let (w, l) = if keys[b as usize] < keys[a as usize] {
                (b, a)
            } else {
                (a, b)
            };
            winners[n] = w;
            losers[n] = l;
        }
        let winner = if k > 1 { winners[1] } else { 0 };
        let live = keys.iter().filter(|&&key| key != EXHAUSTED).count();
        LoserTree {
            losers,
            keys,
            winner,
            live,
        }
    }

    /// The stream with the smallest key, unless every stream is exhausted.
    #[inline(always)]
    pub(crate) fn winner(&self) -> Option<usize> {
        if self.live > 0 {
            Some(self.winner as usize)
        } else {
            None
        }
    }

    /// Sets the key of the current winner (which must not be exhausted) and replays its
    /// matches up to the root.
    #[inline(always)]
    pub(crate) fn replace_winner(&mut self, key: u128) {
        if key == EXHAUSTED {
            self.live = self.live.saturating_sub(1);
        }
        let k = self.keys.len();
        let mut w = self.winner as usize;
        if let Some(slot) = self.keys.get_mut(w) {
            *slot = key;
        }
        let mut wkey = key;
        let mut node = (w + k) / 2;
        while node > 0 {
            let l = self.losers[node] as usize;
            let lkey = self.keys[l];
            let swap = lkey < wkey;
            self.losers[node] = if swap { w as u32 } else { l as u32 };
            w = if swap { l } else { w };
            wkey = if swap { lkey } else { wkey };
            node /= 2;
        }
        self.winner = w as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_like_sorting() {
        let mut seed = 12345u64;
        let mut rand = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for k in 1..20usize {
            let streams: Vec<Vec<u128>> = (0..k)
                .map(|i| {
                    let n = (rand() % 30) as usize;
                    let mut v: Vec<u128> = (0..n)
                        .map(|_| u128::from(rand() % 50) << 32 | i as u128)
                        .collect();
                    v.sort_unstable();
                    v
                })
                .collect();
            let mut want: Vec<u128> = streams.iter().flatten().copied().collect();
            want.sort_unstable();
            assert_eq!(merged(&streams), want, "k = {k}");
        }
        assert_eq!(LoserTree::new(Vec::new()).winner(), None);
    }

    /// Merges `streams` (each sorted) with the tree: keys in the order taken.
    fn merged(streams: &[Vec<u128>]) -> Vec<u128> {
        let mut at = vec![0usize; streams.len()];
        let first = streams
            .iter()
            .map(|s| s.first().copied().unwrap_or(EXHAUSTED))
            .collect();
        let mut tree = LoserTree::new(first);
        let mut got = Vec::new();
        while let Some(w) = tree.winner() {
            got.push(streams[w][at[w]]);
            at[w] += 1;
            tree.replace_winner(streams[w].get(at[w]).copied().unwrap_or(EXHAUSTED));
        }
        got
    }

    proptest::proptest! {
        /// Streams that take turns in runs of any length merge as sorting does.
        #[test]
        fn runs_merge_like_sorting(
            runs in proptest::collection::vec((0usize..9, 1usize..40, 0u64..3), 0..60),
        ) {
            let k = 9;
            let mut streams: Vec<Vec<u128>> = vec![Vec::new(); k];
            let mut t = 0u64;
            for (stream, len, gap) in runs {
                for _ in 0..len {
                    t += gap;
                    streams[stream].push(u128::from(t) << 32 | stream as u128);
                }
            }
            let mut want: Vec<u128> = streams.iter().flatten().copied().collect();
            want.sort_unstable();
            for n in 1..=k {
                let some = &streams[..n];
                let mut want_n: Vec<u128> = some.iter().flatten().copied().collect();
                want_n.sort_unstable();
                proptest::prop_assert_eq!(merged(some), want_n);
            }
            proptest::prop_assert_eq!(merged(&streams), want);
        }
    }
}
