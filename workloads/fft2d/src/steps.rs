//! The parallel loops an iteration is made of, each one recorded region of the [`Team`] that
//! runs it. `dp` runs them all on one team of `p` threads; `tp` runs some on each of its two
//! groups, each group a team of its own, so that a group's regions name that group as their
//! team and its idle members count against that group only.
//!
//! Every loop splits the `n` lines of a matrix into one contiguous block per thread of the team
//! (block sizes differ by at most one line; a thread whose block is empty, as when the team
//! has more threads than the matrix has lines, does nothing). What is recorded, and what the
//! profiler makes of it (docs/attribution.md):
//!
//! | loop | recorded as | category |
//! |---|---|---|
//! | [`init`] | `work init` per thread | `pc` |
//! | [`transform_lines`] | `work fft` per thread | `pc` |
//! | [`transpose`], both loops | `comm <bytes>` per thread, bytes = the thread's lines × n × 16 | `cl` (with a machine calibration, time beyond the ideal copy time: `rc.comm`) |
//! | idle in a loop while a teammate works | nothing | `li` |
//! | idle in a loop while no teammate works (fork/join) | nothing | `sl` |
//!
//! Work time during which the thread was descheduled becomes `rc.cpu` (the team samples each
//! thread's CPU clock at the begin and end of its part of every region).

use std::cell::RefCell;
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use pp_recorder::{self as recorder, Team};
use rustfft::Fft;

use crate::matrix::{C64, Layout, input};

/// Side of the square tiles the transpose copies (32×32×16 bytes: 16 KiB, in L1 with its
/// source lines).
const TILE: usize = 32;

/// The lines of thread `index` of a team of `threads` over `n` lines: contiguous blocks whose
/// sizes differ by at most one.
pub fn block(n: usize, threads: usize, index: usize) -> Range<usize> {
    n * index / threads..n * (index + 1) / threads
}

/// One region `name` of `team` over the `n` lines (of `n` values) of `data`: thread `t` of
/// the team calls `f` with its block of lines ([`block`]) and those lines, unless the block is
/// empty. `f` records what it does.
fn for_blocks<F>(team: &Team, name: &'static str, data: &mut [C64], n: usize, f: F)
where
    F: Fn(Range<usize>, &mut [C64]) + Sync,
{
    let threads = team.threads();
    // Each block in a lock of its own, taken once by its own thread: safe shared access to
    // disjoint parts of `data` from the team's threads.
    let mut blocks = Vec::with_capacity(threads);
    let mut rest = data;
    for index in 0..threads {
        let lines = block(n, threads, index);
        let (head, tail) = rest.split_at_mut(lines.len() * n);
        blocks.push(Mutex::new((lines, head)));
        rest = tail;
    }
    team.region(name, |part| {
        let mut guard = blocks[part.index()]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (lines, values) = &mut *guard;
        if lines.start < lines.end {
            f(lines.clone(), values);
        }
    });
}

/// Region `init`: fills `data` with the input `X_k` of iteration `k` ([`input`]) in `layout`
/// (line `r` holds row `r` of `X_k` for [`Layout::RowMajor`], column `r` for
/// [`Layout::ColumnMajor`]). Recorded as `work init`.
pub fn init(team: &Team, data: &mut [C64], n: usize, k: usize, layout: Layout) {
    for_blocks(team, "init", data, n, |lines, values| {
        let _w = recorder::work("init");
        for (r, line) in lines.zip(values.chunks_exact_mut(n)) {
            for (c, v) in line.iter_mut().enumerate() {
                *v = match layout {
                    Layout::RowMajor => input(r, c, k),
                    Layout::ColumnMajor => input(c, r, k),
                };
            }
        }
    });
}

thread_local! {
    /// The calling thread's scratch space for `rustfft`, grown on first use.
    static SCRATCH: RefCell<Vec<C64>> = const { RefCell::new(Vec::new()) };
}

/// Region `name` (`rows` or `columns`, after what the lines hold): the 1-D FFT of every line
/// of `data` with `fft` (whose length is the line length). Recorded as `work fft`.
pub fn transform_lines(team: &Team, name: &'static str, data: &mut [C64], fft: &Arc<dyn Fft<f64>>) {
    let n = fft.len();
    for_blocks(team, name, data, n, |_, values| {
        let _w = recorder::work("fft");
        let need = fft.get_inplace_scratch_len();
        SCRATCH.with_borrow_mut(|scratch| {
            if scratch.len() < need {
                scratch.resize(need, C64::default());
            }
            // Transforms the block's lines one after the other.
            fft.process_with_scratch(values, &mut scratch[..need]);
        });
    });
}

/// The transpose of `data` through the intermediate matrix `tmp`, in two loops, each recorded
/// as communication (`comm <bytes>`, the bytes of the lines the thread writes):
///
/// * region `transpose.out`: thread `t` writes its block of lines of `tmp`, reading the
///   matching columns of `data` (`tmp[r][c] = data[c][r]`, in tiles);
/// * region `transpose.back`: thread `t` copies its block of lines of `tmp` back into `data`.
///
/// Afterwards line `r` of `data` holds what column `r` held before.
pub fn transpose(team: &Team, data: &mut [C64], tmp: &mut [C64], n: usize) {
    let value_bytes = std::mem::size_of::<C64>() as u64;
    {
        let src: &[C64] = data;
        for_blocks(team, "transpose.out", tmp, n, |lines, out| {
            let _c = recorder::comm(lines.len() as u64 * n as u64 * value_bytes);
            let first = lines.start;
            for c0 in (0..n).step_by(TILE) {
                let c1 = (c0 + TILE).min(n);
                for r0 in lines.clone().step_by(TILE) {
                    let r1 = (r0 + TILE).min(lines.end);
                    for c in c0..c1 {
                        for (r, v) in (r0..r1).zip(&src[c * n + r0..c * n + r1]) {
                            out[(r - first) * n + c] = *v;
                        }
                    }
                }
            }
        });
    }
    let src: &[C64] = tmp;
    for_blocks(team, "transpose.back", data, n, |lines, out| {
        let _c = recorder::comm(lines.len() as u64 * n as u64 * value_bytes);
        out.copy_from_slice(&src[lines.start * n..lines.end * n]);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_lines_once() {
        for n in [0, 1, 5, 8, 64] {
            for threads in 1..10 {
                let mut next = 0;
                for index in 0..threads {
                    let b = block(n, threads, index);
                    assert_eq!(b.start, next);
                    assert!(b.len() <= n.div_ceil(threads));
                    next = b.end;
                }
                assert_eq!(next, n);
            }
        }
    }

    #[test]
    fn transpose_transposes() {
        let team = Team::new(3).unwrap();
        for n in [1, 7, 33, 64] {
            let orig: Vec<C64> = (0..n * n)
                .map(|x| C64::new(x as f64, -(x as f64)))
                .collect();
            let mut data = orig.clone();
            let mut tmp = vec![C64::default(); n * n];
            transpose(&team, &mut data, &mut tmp, n);
            for r in 0..n {
                for c in 0..n {
                    assert_eq!(data[r * n + c], orig[c * n + r], "n={n} ({r}, {c})");
                }
            }
        }
    }
}
