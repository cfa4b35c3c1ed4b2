//! `dp`, the data-parallel implementation: every iteration is a sequence of parallel loops,
//! each a region of the whole team of `p` threads (see [`steps`] for what each
//! loop records):
//!
//! 1. `init`: the input `X_k`, column-major (line `j` holds column `j`), so that the column
//!    transforms run along contiguous lines;
//! 2. `columns`: the 1-D FFT of every column;
//! 3. `transpose.out`, `transpose.back`: the transpose through an intermediate matrix,
//!    recorded as communication with its byte counts (`cl`);
//! 4. `rows`: the 1-D FFT of every line, now a row: the result `Y_k`, row-major.
//!
//! The iterations are driven from the team's thread 0 (as an OpenMP master thread would):
//! between loops, and while the result is handed out, every thread of the team is outside
//! every region (`ip`, a few microseconds per loop).

use std::sync::Arc;

use pp_recorder::Team;
use rustfft::Fft;

use crate::matrix::{C64, Layout, Matrix, MatrixRef};
use crate::steps;

/// The memory of a `dp` run: the matrix and the transpose's intermediate. Allocated (and
/// written, so that its pages exist) before the run, which then allocates nothing.
pub struct Workspace {
    data: Vec<C64>,
    tmp: Vec<C64>,
}

impl Workspace {
    /// The buffers for n×n matrices.
    pub fn new(n: usize) -> Workspace {
        Workspace {
            data: vec![C64::default(); n * n],
            tmp: vec![C64::default(); n * n],
        }
    }
}

/// Runs `iters` iterations on `team`; after iteration `k`, `result(k, Y_k)` (on the team's
/// thread 0, recording nothing). Returns the last result.
pub fn run(
    team: &Team,
    fft: &Arc<dyn Fft<f64>>,
    iters: usize,
    workspace: Workspace,
    result: &mut (dyn FnMut(usize, MatrixRef<'_>) + Send),
) -> Matrix {
    let n = fft.len();
    let Workspace { mut data, mut tmp } = workspace;
    assert_eq!(data.len(), n * n, "a workspace for another n");
    team.run(|| {
        for k in 0..iters {
            steps::init(team, &mut data, n, k, Layout::ColumnMajor);
            // Line j: column j of the column transforms C(u, j).
            steps::transform_lines(team, "columns", &mut data, fft);
            // Line u: row u of C.
            steps::transpose(team, &mut data, &mut tmp, n);
            // Line u: row u of Y.
            steps::transform_lines(team, "rows", &mut data, fft);
            result(
                k,
                MatrixRef {
                    n,
                    layout: Layout::RowMajor,
                    data: &data,
                },
            );
        }
    });
    Matrix {
        n,
        layout: Layout::RowMajor,
        data,
    }
}
