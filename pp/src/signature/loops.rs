//! Finding the loops of a sequence of cluster symbols (docs/skeletons.md#loops): a run of two
//! or more back-to-back copies of a body becomes one loop symbol with its count; bodies are
//! looked for shortest first, and after every replacement the search starts again from
//! length 1, so inner loops are folded before the loops around them and a nest comes out
//! innermost first (`abbcbbcbbc` → `a[(b)²c]³`). Bodies longer than [`MAX_BODY`] symbols (after
//! their inner loops are folded) are not looked for, which keeps each pass linear.
//!
//! The sequence is folded in place (4 bytes a symbol), and a pass for a body of `len` symbols
//! looks at every `len`-th position first: a run of `len` matches covers one of them, so where
//! matches are rare a pass reads about `n / len` symbols, not `n`.

use std::collections::HashMap;

/// The longest loop body looked for, in symbols.
pub const MAX_BODY: usize = 1024;

/// A symbol of the compressed sequence: a cluster, or a loop.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Node {
    /// A step of this cluster.
    Step(u32),
    /// `count` back-to-back copies of `body` (symbols of the same table).
    Loop { body: Vec<u32>, count: u64 },
}

/// The symbols of one thread: `nodes[s]` is what symbol `s` stands for.
#[derive(Debug, Default)]
pub struct Table {
    /// Every symbol.
    pub nodes: Vec<Node>,
    index: HashMap<Node, u32>,
    /// Per symbol, the entries it prints as.
    sizes: Vec<u64>,
    /// Per cluster, its step's symbol (`u32::MAX`: none yet).
    steps: Vec<u32>,
}

impl Table {
    /// The symbol of `node`, made if new.
    pub fn intern(&mut self, node: Node) -> u32 {
        if let Some(&s) = self.index.get(&node) {
            return s;
        }
        let size = match &node {
            Node::Step(_) => 1,
            Node::Loop { body, .. } => 1 + body.iter().map(|&b| self.size(b)).sum::<u64>(),
        };
        let s = self.nodes.len() as u32;
        self.nodes.push(node.clone());
        self.sizes.push(size);
        self.index.insert(node, s);
        s
    }

    /// The symbol of a step of cluster `c`.
    fn step(&mut self, c: u32) -> u32 {
        let i = c as usize;
        if self.steps.len() <= i {
            self.steps.resize(i + 1, u32::MAX);
        }
        if self.steps[i] == u32::MAX {
            self.steps[i] = self.intern(Node::Step(c));
        }
        self.steps[i]
    }

    /// The number of entries symbol `s` prints as (a step 1, a loop 1 + its body's).
    pub fn size(&self, s: u32) -> u64 {
        self.sizes[s as usize]
    }
}

/// Compresses the cluster sequence `ids` into loops, in place; returns the top-level symbols.
pub fn compress(mut ids: Vec<u32>, table: &mut Table) -> Vec<u32> {
    for c in ids.iter_mut() {
        *c = table.step(*c);
    }
    let mut seq = ids;
    'search: loop {
        for len in 1..=MAX_BODY.min(seq.len() / 2) {
            if fold(&mut seq, len, table) {
                continue 'search;
            }
        }
        seq.shrink_to_fit();
        return seq;
    }
}

/// [`compress`] with the lengths of runs left free (docs/skeletons.md#locks-taken-in-varying-numbers):
/// each run of back-to-back steps of one cluster counts as one symbol whatever its length, so
/// passes of a loop that take a lock 118 times in one pass and 123 in the next fold into one
/// loop. Each run of the folded structure then repeats its step as many times as the runs it
/// stands for did on average, rounded to the nearest count (at least 1): the unrolled total
/// differs from the log's by at most half a step for each run of the log (for runs of mean
/// length m, by at most 1/(2m) of them).
pub fn compress_runs(ids: Vec<u32>, table: &mut Table) -> Vec<u32> {
    // Each run as its cluster, and its length.
    let mut runs: Vec<u32> = Vec::new();
    let mut lengths: Vec<u64> = Vec::new();
    for c in ids {
        match (runs.last(), lengths.last_mut()) {
            (Some(&last), Some(n)) if last == c => *n += 1,
            _ => {
                runs.push(c);
                lengths.push(1);
            }
        }
    }
    let mut shape = Table::default();
    let top = compress(runs, &mut shape);
    // The lengths of the runs each position of the shape stands for, in the order they unroll.
    let mut sums: Vec<Sum> = top.iter().map(|&s| Sum::of(&shape, s)).collect();
    let mut next = lengths.into_iter();
    for s in &mut sums {
        s.add(&mut next);
    }
    sums.iter().map(|s| s.intern(table)).collect()
}

/// A symbol of [`compress_runs`]'s shape, with the sum of the lengths of the runs it stands
/// for (one per position: shared symbols of the shape are apart here).
enum Sum {
    Run { cluster: u32, total: u64, runs: u64 },
    Loop { count: u64, body: Vec<Sum> },
}

impl Sum {
    fn of(shape: &Table, s: u32) -> Sum {
        match &shape.nodes[s as usize] {
            Node::Step(c) => Sum::Run {
                cluster: *c,
                total: 0,
                runs: 0,
            },
            Node::Loop { body, count } => Sum::Loop {
                count: *count,
                body: body.iter().map(|&b| Sum::of(shape, b)).collect(),
            },
        }
    }

    /// Takes the lengths of the runs this position stands for from `lengths`.
    fn add(&mut self, lengths: &mut impl Iterator<Item = u64>) {
        match self {
            Sum::Run { total, runs, .. } => {
                *total += lengths.next().expect("a length for every run");
                *runs += 1;
            }
            Sum::Loop { count, body } => {
                for _ in 0..*count {
                    body.iter_mut().for_each(|b| b.add(lengths));
                }
            }
        }
    }

    /// The symbol in `table`: a run of its mean length (a step, or a loop of it).
    fn intern(&self, table: &mut Table) -> u32 {
        match self {
            Sum::Run {
                cluster,
                total,
                runs,
            } => {
                let step = table.step(*cluster);
                let mean = ((*total as f64 / (*runs).max(1) as f64).round() as u64).max(1);
                if mean == 1 {
                    step
                } else {
                    table.intern(Node::Loop {
                        body: vec![step],
                        count: mean,
                    })
                }
            }
            Sum::Loop { count, body } => {
                let body = body.iter().map(|b| b.intern(table)).collect();
                table.intern(Node::Loop {
                    body,
                    count: *count,
                })
            }
        }
    }
}

/// The first `s >= from` where `seq[s..s + len]` and `seq[s + len..s + 2 * len]` are equal.
fn find(seq: &[u32], len: usize, from: usize) -> Option<usize> {
    let n = seq.len();
    let matches = |k: usize| seq[k] == seq[k + len];
    let mut s = from;
    loop {
        // Every start in s..=k needs position k to match.
        let k = s + len - 1;
        if k + len >= n {
            return None;
        }
        if !matches(k) {
            s = k + 1;
            continue;
        }
        let mut b = k;
        while b > s && matches(b - 1) {
            b -= 1;
        }
        let mut f = k + 1;
        while f < b + len {
            if f + len >= n {
                return None;
            }
            if !matches(f) {
                break;
            }
            f += 1;
        }
        if f == b + len {
            return Some(b);
        }
        // Every start in b..=f needs position f to match.
        s = f + 1;
    }
}

/// Folds every run of back-to-back copies of a body of `len` symbols, left to right, in place;
/// false where there is none.
fn fold(seq: &mut Vec<u32>, len: usize, table: &mut Table) -> bool {
    let n = seq.len();
    let mut out = 0; // seq[..out] is the folded sequence so far
    let mut copied = 0; // seq[copied..] is still to fold
    let mut any = false;
    while let Some(start) = find(seq, len, copied) {
        // Extend over every further matching position.
        let mut k = start + len;
        while k + len < n && seq[k] == seq[k + len] {
            k += 1;
        }
        let count = (k - start + len) / len;
        let body = seq[start..start + len].to_vec();
        seq.copy_within(copied..start, out);
        out += start - copied;
        seq[out] = table.intern(Node::Loop {
            body,
            count: count as u64,
        });
        out += 1;
        copied = start + count * len;
        any = true;
    }
    if any {
        seq.copy_within(copied..n, out);
        seq.truncate(out + n - copied);
    }
    any
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The first version's pass (every position read, a new sequence made): what [`fold`]
    /// must give.
    fn fold_by_reading_all(seq: &[u32], len: usize, table: &mut Table) -> Option<Vec<u32>> {
        let n = seq.len();
        let mut out: Vec<u32> = Vec::new();
        let (mut copied, mut run, mut j, mut any) = (0, 0, 0, false);
        while j + len < n {
            run = if seq[j] == seq[j + len] { run + 1 } else { 0 };
            if run == len {
                let start = j + 1 - len;
                let mut k = j + 1;
                while k + len < n && seq[k] == seq[k + len] {
                    k += 1;
                }
                let count = (k - start + len) / len;
                out.extend_from_slice(&seq[copied..start]);
                let body = seq[start..start + len].to_vec();
                out.push(table.intern(Node::Loop {
                    body,
                    count: count as u64,
                }));
                copied = start + count * len;
                any = true;
                j = copied;
                run = 0;
                continue;
            }
            j += 1;
        }
        any.then(|| {
            out.extend_from_slice(&seq[copied..]);
            out
        })
    }

    fn compress_by_reading_all(ids: &[u32], table: &mut Table) -> Vec<u32> {
        let mut seq: Vec<u32> = ids.iter().map(|&c| table.intern(Node::Step(c))).collect();
        'search: loop {
            for len in 1..=MAX_BODY.min(seq.len() / 2) {
                if let Some(folded) = fold_by_reading_all(&seq, len, table) {
                    seq = folded;
                    continue 'search;
                }
            }
            return seq;
        }
    }

    /// A symbol's steps, loops unrolled.
    fn unroll(table: &Table, s: u32, out: &mut Vec<u32>) {
        match &table.nodes[s as usize] {
            Node::Step(c) => out.push(*c),
            Node::Loop { body, count } => {
                for _ in 0..*count {
                    body.iter().for_each(|&b| unroll(table, b, out));
                }
            }
        }
    }

    #[test]
    fn runs_of_varying_length_fold_into_their_mean_length() {
        // a b^k c for k = 3, 5, 4, 5: one loop of 4 passes, b 4.25 times a pass, rounded.
        let mut ids = Vec::new();
        for k in [3, 5, 4, 5] {
            ids.push(0);
            ids.extend(std::iter::repeat_n(1, k));
            ids.push(2);
        }
        let mut t = Table::default();
        let top = compress_runs(ids.clone(), &mut t);
        let [pass] = top[..] else {
            panic!("{top:?}: {:?}", t.nodes)
        };
        let Node::Loop { body, count: 4 } = t.nodes[pass as usize].clone() else {
            panic!("{:?}", t.nodes)
        };
        let runs: Vec<Vec<u32>> = body
            .iter()
            .map(|&b| {
                let mut steps = Vec::new();
                unroll(&t, b, &mut steps);
                steps
            })
            .collect();
        assert_eq!(runs, [vec![0], vec![1; 4], vec![2]]);
        // Where runs do not vary, as compress.
        let mut plain = Table::default();
        let same: Vec<u32> = [0, 1, 1, 2].repeat(3);
        let mut runs_free = Table::default();
        let a = compress(same.clone(), &mut plain);
        let b = compress_runs(same, &mut runs_free);
        let (mut ua, mut ub) = (Vec::new(), Vec::new());
        a.iter().for_each(|&s| unroll(&plain, s, &mut ua));
        b.iter().for_each(|&s| unroll(&runs_free, s, &mut ub));
        assert_eq!(ua, ub);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn folding_in_place_gives_the_first_versions_symbols(
            ids in prop::collection::vec(0u32..4, 0..300),
            repeat in 1usize..4,
        ) {
            // Repeated, so that loops of loops are common.
            let ids: Vec<u32> = ids.iter().copied().cycle().take(ids.len() * repeat).collect();
            let mut fast = Table::default();
            let mut slow = Table::default();
            let top = compress(ids.clone(), &mut fast);
            let want = compress_by_reading_all(&ids, &mut slow);
            prop_assert_eq!(&top, &want);
            prop_assert_eq!(&fast.nodes, &slow.nodes);
            let mut steps = Vec::new();
            top.iter().for_each(|&s| unroll(&fast, s, &mut steps));
            prop_assert_eq!(steps, ids);
            let size: u64 = top.iter().map(|&s| fast.size(s)).sum();
            let slow_size = |s: u32| -> u64 {
                fn go(t: &Table, s: u32) -> u64 {
                    match &t.nodes[s as usize] {
                        Node::Step(_) => 1,
                        Node::Loop { body, .. } => 1 + body.iter().map(|&b| go(t, b)).sum::<u64>(),
                    }
                }
                go(&slow, s)
            };
            prop_assert_eq!(size, want.iter().map(|&s| slow_size(s)).sum::<u64>());
        }

        #[test]
        fn passes_whose_runs_vary_fold_into_one_loop_of_mean_runs(
            pattern in prop::collection::vec(0u32..4, 2..6),
            lengths in prop::collection::vec(prop::collection::vec(1u64..10, 6), 2..20),
        ) {
            // Each pass runs the clusters of `pattern` (all different) in turn,
            // each its pass's number of times.
            let pattern: Vec<u32> = pattern.iter().enumerate().map(|(i, &c)| c * 8 + i as u32).collect();
            let mut ids = Vec::new();
            for pass in &lengths {
                for (&c, &k) in pattern.iter().zip(pass) {
                    ids.extend(std::iter::repeat_n(c, k as usize));
                }
            }
            let mut t = Table::default();
            let top = compress_runs(ids, &mut t);
            prop_assert_eq!(top.len(), 1);
            let Node::Loop { body, count } = t.nodes[top[0] as usize].clone() else {
                panic!("{:?}", t.nodes)
            };
            prop_assert_eq!(count, lengths.len() as u64);
            prop_assert_eq!(body.len(), pattern.len());
            for (i, (&b, &c)) in body.iter().zip(&pattern).enumerate() {
                let total: u64 = lengths.iter().map(|pass| pass[i]).sum();
                let mean = ((total as f64 / lengths.len() as f64).round() as u64).max(1);
                let mut steps = Vec::new();
                unroll(&t, b, &mut steps);
                prop_assert_eq!(steps, vec![c; mean as usize]);
            }
        }
    }
}
