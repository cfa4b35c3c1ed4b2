//! Finding the loops of a sequence of cluster symbols (docs/skeletons.md#loops): a run of two
//! or more back-to-back copies of a body becomes one loop symbol with its count; bodies are
//! looked for shortest first, and after every replacement the search starts again from
//! length 1, so inner loops are folded before the loops around them and a nest comes out
//! innermost first (`abbcbbcbbc` → `a[(b)²c]³`). Bodies longer than [`MAX_BODY`] symbols (after
//! their inner loops are folded) are not looked for, which keeps each pass linear.

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
}

impl Table {
    /// The symbol of `node`, made if new.
    pub fn intern(&mut self, node: Node) -> u32 {
        if let Some(&s) = self.index.get(&node) {
            return s;
        }
        let s = self.nodes.len() as u32;
        self.nodes.push(node.clone());
        self.index.insert(node, s);
        s
    }

    /// The number of entries symbol `s` prints as (a step 1, a loop 1 + its body's).
    pub fn size(&self, s: u32) -> u64 {
        match &self.nodes[s as usize] {
            Node::Step(_) => 1,
            Node::Loop { body, .. } => 1 + body.iter().map(|&b| self.size(b)).sum::<u64>(),
        }
    }
}

/// Compresses the cluster sequence `ids` into loops; returns the top-level symbols.
pub fn compress(ids: &[u32], table: &mut Table) -> Vec<u32> {
    let mut seq: Vec<u32> = ids.iter().map(|&c| table.intern(Node::Step(c))).collect();
    'search: loop {
        for len in 1..=MAX_BODY.min(seq.len() / 2) {
            if let Some(folded) = fold(&seq, len, table) {
                seq = folded;
                continue 'search;
            }
        }
        return seq;
    }
}

/// Folds every run of back-to-back copies of a body of `len` symbols, left to right, or `None`
/// where there is none.
fn fold(seq: &[u32], len: usize, table: &mut Table) -> Option<Vec<u32>> {
    let n = seq.len();
    let mut out: Vec<u32> = Vec::new();
    let mut copied = 0; // seq[..copied] is in out
    let mut run = 0; // how many seq[j] == seq[j + len] end at j
    let mut j = 0;
    let mut any = false;
    while j + len < n {
        if seq[j] == seq[j + len] {
            run += 1;
        } else {
            run = 0;
        }
        if run == len {
            let start = j + 1 - len;
            // Extend over every further matching position.
            let mut k = j + 1;
            while k + len < n && seq[k] == seq[k + len] {
                k += 1;
            }
            let period_span = k - start + len; // seq[start..start + span] has period len
            let count = (period_span / len) as u64;
            out.extend_from_slice(&seq[copied..start]);
            let body = seq[start..start + len].to_vec();
            out.push(table.intern(Node::Loop { body, count }));
            copied = start + count as usize * len;
            any = true;
            j = copied;
            run = 0;
            continue;
        }
        j += 1;
    }
    if !any {
        return None;
    }
    out.extend_from_slice(&seq[copied..]);
    Some(out)
}
