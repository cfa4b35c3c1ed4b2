//! Rotating a folded thread's loops until every region lies whole in one iteration
//! (docs/skeletons.md#hybrid-skeletons): a loop `A [B C D]ⁿ` whose body holds a region's end
//! but not its begin is turned, where the items around the loop allow it, until it holds each
//! region whole. Two moves, both exact on the sequence the loop stands for:
//!
//! * backward, where the item before the loop is the body's last: `x [b₁ … bₘ]ⁿ` with
//!   `x = bₘ` becomes `[bₘ b₁ … bₘ₋₁]ⁿ bₘ`;
//! * forward, where the item after the loop is the body's first: `[b₁ … bₘ]ⁿ y` with `y = b₁`
//!   becomes `b₁ [b₂ … bₘ b₁]ⁿ`;
//! * a loop whose iterations open and close regions unevenly (`[region_end]²`: a region's end
//!   and the `mpi` region's back to back) is written out, where that is at most [`UNROLL`]
//!   items;
//! * where neither turn makes the body whole, one iteration is peeled: `[b₁ … bₘ]ⁿ` becomes
//!   `b₁ … bₖ [bₖ₊₁ … bₘ b₁ … bₖ]ⁿ⁻¹ bₖ₊₁ … bₘ`, k the first turn that makes the body whole
//!   (one exists wherever the body's begins and ends come out even).
//!
//! A body is *whole* when, read in order, its region ends never outnumber its begins and they
//! come out even: then a C `#pragma omp parallel` block per region can be written inside it.
//! Inner loops are made whole first, among their own body's items.

use std::collections::HashMap;

use crate::signature::Folded;
use crate::signature::loops::{Node, Table};

use super::hybrid::depth;

/// The most items a loop whose iterations open and close regions unevenly is written out as.
pub const UNROLL: u64 = 256;

/// Rotates `f`'s loops until each body is whole. The error names the thread and the loop that
/// cannot be rotated so.
pub fn rotate(f: &mut Folded) -> Result<(), String> {
    let deltas: Vec<i32> = f.clusters.iter().map(|c| depth(&c.op)).collect();
    let top = std::mem::take(&mut f.top);
    let mut done = HashMap::new();
    let top = sequence(top, &mut f.table, &deltas, &mut done)
        .map_err(|count| format!("thread {}: {}", f.thread, unrotatable(count)))?;
    f.size = top.iter().map(|&s| f.table.size(s)).sum();
    f.top = top;
    Ok(())
}

/// The one-line reason a loop of `count` iterations cannot hold its regions whole.
pub fn unrotatable(count: u64) -> String {
    format!(
        "each iteration of a loop of {count} opens more regions than it closes, or closes more than it opens, so no rotation of the loop holds them whole (a hybrid skeleton writes each region as one #pragma omp parallel block)"
    )
}

/// `seq` with its loops' bodies whole; the count of a loop that cannot be made so.
pub fn sequence(
    mut seq: Vec<u32>,
    table: &mut Table,
    deltas: &[i32],
    done: &mut HashMap<u32, u32>,
) -> Result<Vec<u32>, u64> {
    for s in seq.iter_mut() {
        *s = inner(*s, table, deltas, done)?;
    }
    let mut j = 0;
    while j < seq.len() {
        if let Node::Loop { body, count } = table.nodes[seq[j] as usize].clone()
            && !whole(&body, table, deltas)
        {
            j = turn(&mut seq, j, body, count, table, deltas)?;
            continue;
        }
        j += 1;
    }
    Ok(seq)
}

/// Symbol `s` with the loops inside it made whole (its own body is the caller's).
fn inner(
    s: u32,
    table: &mut Table,
    deltas: &[i32],
    done: &mut HashMap<u32, u32>,
) -> Result<u32, u64> {
    if let Some(&t) = done.get(&s) {
        return Ok(t);
    }
    let t = match table.nodes[s as usize].clone() {
        Node::Step(_) => s,
        Node::Loop { body, count } => {
            // The loops inside the body are rotated among the body's own items; the body
            // itself is the caller's to rotate.
            let body = sequence(body, table, deltas, done)?;
            table.intern(Node::Loop { body, count })
        }
    };
    done.insert(s, t);
    Ok(t)
}

/// The net depth of symbol `s` (begins less ends over every iteration).
fn net(s: u32, table: &Table, deltas: &[i32]) -> i64 {
    match &table.nodes[s as usize] {
        Node::Step(c) => i64::from(deltas[*c as usize]),
        Node::Loop { body, count } => {
            *count as i64 * body.iter().map(|&b| net(b, table, deltas)).sum::<i64>()
        }
    }
}

/// Whether `body` is whole: its depth never drops below 0 and ends at 0 (inner loops count by
/// their net depth; they are whole themselves by the time this is asked).
pub fn whole(body: &[u32], table: &Table, deltas: &[i32]) -> bool {
    let mut d = 0i64;
    for &s in body {
        d += net(s, table, deltas);
        if d < 0 {
            return false;
        }
    }
    d == 0
}

/// Rotates the loop at `seq[j]` (of `body`, `count`) backward, else forward, else peels it, until
/// its body is whole, or writes it out where its iterations are uneven; returns the next
/// position to look at.
fn turn(
    seq: &mut Vec<u32>,
    j: usize,
    body: Vec<u32>,
    count: u64,
    table: &mut Table,
    deltas: &[i32],
) -> Result<usize, u64> {
    let m = body.len();
    let uneven: i64 = body.iter().map(|&s| net(s, table, deltas)).sum();
    if uneven != 0 {
        let items = count.saturating_mul(m as u64);
        if items > UNROLL {
            return Err(count);
        }
        let out: Vec<u32> = (0..count).flat_map(|_| body.iter().copied()).collect();
        seq.splice(j..=j, out);
        // Look at what was written out again: a loop inside the uneven body may be uneven
        // itself.
        return Ok(j);
    }
    // Backward: pull the items before the loop in at the front, pushing the body's last out.
    let mut b = body.clone();
    let mut k = 0;
    while k < m && k < j && seq[j - 1 - k] == b[m - 1] && !whole(&b, table, deltas) {
        b.rotate_right(1);
        k += 1;
    }
    if whole(&b, table, deltas) {
        let out: Vec<u32> = body[m - k..].to_vec();
        let lp = table.intern(Node::Loop { body: b, count });
        seq.splice(j - k..=j, std::iter::once(lp).chain(out));
        return Ok(j - k + 1);
    }
    // Forward: pull the items after the loop in at the back, pushing the body's first out.
    let mut b = body.clone();
    let mut k = 0;
    while k < m && j + 1 + k < seq.len() && seq[j + 1 + k] == b[0] && !whole(&b, table, deltas) {
        b.rotate_left(1);
        k += 1;
    }
    if whole(&b, table, deltas) {
        let out: Vec<u32> = body[..k].to_vec();
        let lp = table.intern(Node::Loop { body: b, count });
        seq.splice(j..=j + k, out.into_iter().chain(std::iter::once(lp)));
        return Ok(j + k + 1);
    }
    // Peel: the first k items of the first iteration before the loop, the rest of the last
    // after it, and the loop one iteration shorter.
    let Some(k) = (1..m).find(|&k| {
        let mut b = body.clone();
        b.rotate_left(k);
        whole(&b, table, deltas)
    }) else {
        return Err(count);
    };
    let mut b = body.clone();
    b.rotate_left(k);
    let middle = if count > 2 {
        vec![table.intern(Node::Loop {
            body: b,
            count: count - 1,
        })]
    } else {
        b
    };
    let at = j + k + middle.len() - 1;
    let items: Vec<u32> = body[..k]
        .iter()
        .copied()
        .chain(middle)
        .chain(body[k..].iter().copied())
        .collect();
    seq.splice(j..=j, items);
    // The loop (or the iteration left in its place) is whole: go on after it.
    Ok(at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::loops::compress;
    use proptest::prelude::*;

    /// The clusters' steps `s` stands for, in order.
    fn unfold(s: u32, table: &Table, out: &mut Vec<u32>) {
        match &table.nodes[s as usize] {
            Node::Step(c) => out.push(*c),
            Node::Loop { body, count } => {
                for _ in 0..*count {
                    for &b in body {
                        unfold(b, table, out);
                    }
                }
            }
        }
    }

    fn all(top: &[u32], table: &Table) -> Vec<u32> {
        let mut out = Vec::new();
        for &s in top {
            unfold(s, table, &mut out);
        }
        out
    }

    /// Every loop in `top` has a whole body.
    fn every_body_whole(top: &[u32], table: &Table, deltas: &[i32]) -> bool {
        top.iter().all(|&s| match &table.nodes[s as usize] {
            Node::Step(_) => true,
            Node::Loop { body, .. } => {
                whole(body, table, deltas) && every_body_whole(body, table, deltas)
            }
        })
    }

    /// Clusters: 0 a region's begin, 1 its end, 2.. other operations.
    const BEGIN: u32 = 0;
    const END: u32 = 1;

    /// 100 and 101 begin and end the `mpi` region; 200 + c is a variant of cluster c (the same
    /// operation, another computation).
    fn deltas(n: usize) -> Vec<i32> {
        (0..n as u32)
            .map(|c| match if c >= 200 { c - 200 } else { c } {
                BEGIN | 100 => 1,
                END | 101 => -1,
                _ => 0,
            })
            .collect()
    }

    fn rotated(ids: Vec<u32>) -> (Vec<u32>, Vec<u32>, Result<Vec<u32>, u64>, Table) {
        let d = deltas(300);
        let mut table = Table::default();
        let top = compress(ids.clone(), &mut table);
        let before = all(&top, &table);
        let after = sequence(top, &mut table, &d, &mut HashMap::new());
        (ids, before, after, table)
    }

    #[test]
    fn the_hybrid_masters_loop_is_rotated_forward() {
        // mpi's begin (100), the first region's begin unlike the rest (a cluster of its own,
        // 200), then [barrier 2, end 1, recv 3, begin 0] five times, barrier, end, recv, stop 4.
        let mut ids = vec![100, 200];
        for _ in 0..5 {
            ids.extend([2, END, 3, BEGIN]);
        }
        ids.extend([2, END, 3, 4, 101]);
        let (ids, before, after, table) = rotated(ids);
        assert_eq!(before, ids);
        let top = after.unwrap();
        assert_eq!(all(&top, &table), ids);
        assert!(every_body_whole(&top, &table, &deltas(300)));
        // The loop is now [recv, begin, barrier, end], with the first region's barrier and
        // end before it.
        let shape: Vec<String> = top
            .iter()
            .map(|&s| match &table.nodes[s as usize] {
                Node::Step(c) => c.to_string(),
                Node::Loop { body, count } => format!("{count}x{:?}", all(body, &table)),
            })
            .collect();
        assert_eq!(
            shape,
            ["100", "200", "2", "1", "5x[3, 0, 2, 1]", "3", "4", "101"].map(String::from),
        );
    }

    #[test]
    fn a_loop_that_no_move_makes_whole_is_peeled() {
        // [end, x, begin] three times with nothing like it around: no move is possible, so
        // an iteration is peeled: end [x begin end]² x begin.
        let mut ids = vec![100, BEGIN, 5];
        for _ in 0..3 {
            ids.extend([END, 3, BEGIN]);
        }
        ids.extend([6, END, 101]);
        let (ids, _, after, table) = rotated(ids);
        let top = after.unwrap();
        assert_eq!(all(&top, &table), ids);
        assert!(every_body_whole(&top, &table, &deltas(300)));
        let loops: Vec<(u64, Vec<u32>)> = top
            .iter()
            .filter_map(|&s| match &table.nodes[s as usize] {
                Node::Loop { body, count } => Some((*count, all(body, &table))),
                Node::Step(_) => None,
            })
            .collect();
        assert_eq!(loops, [(2, vec![3, BEGIN, END])]);
    }

    #[test]
    fn a_short_uneven_loop_is_written_out_and_a_long_one_refused() {
        // A region's end and the mpi region's back to back fold as [end]² (an MPI_THREAD_MULTIPLE
        // log's master did): written out.
        let mut ids = vec![100, BEGIN, 3, 2];
        for _ in 0..4 {
            ids.extend([END, 3, BEGIN, 2]);
        }
        ids.extend([END, END, 4]);
        let mut folded = Table::default();
        let top = compress(ids.clone(), &mut folded);
        assert!(
            top.iter().any(|&s| matches!(&folded.nodes[s as usize],
                Node::Loop { body, count: 2 } if all(body, &folded) == [END])),
            "the ends fold as [end]²"
        );
        let (ids, _, after, table) = rotated(ids);
        let top = after.unwrap();
        assert_eq!(all(&top, &table), ids);
        assert!(every_body_whole(&top, &table, &deltas(300)));
        // Iterations that open a region each, closed after the loop: refused past UNROLL.
        let n = UNROLL as usize;
        let mut ids = vec![100];
        for _ in 0..n {
            ids.extend([BEGIN, 3]);
        }
        ids.extend(std::iter::repeat_n(END, n + 1));
        let (_, _, after, _) = rotated(ids);
        assert_eq!(after.unwrap_err(), n as u64);
    }

    /// A balanced body of regions (0 .. 1) and other operations (2..6).
    fn body() -> impl Strategy<Value = Vec<u32>> {
        prop::collection::vec(prop::sample::select(vec![2u32, 3, 4, 5, 6, 9]), 1..6).prop_flat_map(
            |ops| {
                let n = ops.len();
                (Just(ops), 0..=n, 0..=n).prop_map(|(mut ops, a, b)| {
                    let (a, b) = (a.min(b), a.max(b));
                    ops.insert(b, END);
                    ops.insert(a, BEGIN);
                    ops
                })
            },
        )
    }

    proptest! {
        /// Unfolding before and after the rotation gives the same steps, and a rotated
        /// sequence's every loop body is whole; where the first iteration's first steps differ
        /// from the rest (clusters of their own), so that the loop search starts the loop
        /// inside a region, and the last iteration's last steps too (so that only a peel
        /// helps), the rotation always succeeds.
        #[test]
        fn rotation_keeps_the_sequence_and_makes_bodies_whole(
            b in body(),
            n in 2usize..6,
            cut in 0usize..8,
            mangle in any::<bool>(),
            mangle_end in any::<bool>(),
            cut_end in 0usize..8,
            tail in prop::collection::vec(prop::sample::select(vec![7u32, 8]), 0..3),
        ) {
            let cut = cut % b.len();
            let mut ids = vec![100];
            for (i, &s) in b.iter().enumerate() {
                // The first copy's first `cut` steps: variants with the same depth.
                ids.push(if mangle && i < cut { 200 + s } else { s });
            }
            let cut_end = cut_end % b.len();
            for copy in 1..n {
                for (i, &s) in b.iter().enumerate() {
                    let last = copy == n - 1 && mangle_end && i >= cut_end;
                    ids.push(if last { 200 + s } else { s });
                }
            }
            ids.extend(&tail);
            ids.push(101);
            let (ids, before, after, table) = rotated(ids);
            prop_assert_eq!(&before, &ids);
            let top = after.map_err(|c| TestCaseError::fail(format!("loop of {c} not rotated")))?;
            prop_assert_eq!(all(&top, &table), ids);
            prop_assert!(every_body_whole(&top, &table, &deltas(300)));
        }

        /// On any sequence the rotation either fails or keeps the steps and makes every body
        /// whole; it fails only where a loop of more than UNROLL items opens and closes
        /// regions unevenly.
        #[test]
        fn rotation_never_changes_the_steps(
            ids in prop::collection::vec(prop::sample::select(vec![BEGIN, END, 2, 3]), 0..60),
        ) {
            let (ids, _, after, table) = rotated(ids);
            if let Ok(top) = after {
                prop_assert_eq!(all(&top, &table), ids);
                prop_assert!(every_body_whole(&top, &table, &deltas(300)));
            }
        }
    }
}
