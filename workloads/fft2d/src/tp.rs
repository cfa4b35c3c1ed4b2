//! `tp`, the task + data parallel implementation: the `p` threads form two groups, each a
//! [`Team`] of its own (threads `0..p/2` and `p/2..p`), that make a two-stage pipeline over
//! the iterations' matrices:
//!
//! * stage 1, group [`Groups::first`]: `init` (the input `X_k`, row-major), then `rows` (the
//!   1-D FFT of every row);
//! * stage 2, group [`Groups::second`]: `transpose.out` and `transpose.back` (communication,
//!   `cl`), then `columns` (the 1-D FFT of every line, now a column of the row transforms):
//!   the result `Y_k`, column-major.
//!
//! The stages hand matrices over through two bounded queues of [`BUFFERS`] buffers (double
//! buffering): `full` from stage 1 to stage 2, `free` back. A stage takes its next buffer in a
//! region of its group (`recv.free` or `recv.full`) in which the group's first thread receives,
//! recording `wait recv <queue>` while the queue is empty, and the others wait for it idle with
//! no teammate working: all of it is synchronization loss (`sl`). Handing a buffer on never
//! blocks (a queue holds at most the [`BUFFERS`] buffers there are), so it needs no wait.
//! Each group's loops are regions whose team is the group, so a group's idle members count as
//! that group's load imbalance (`li`), not the other's. While the pipeline fills, stage 2 waits
//! (`sl`); once stage 1 has handed on its last matrix, its threads are outside every region
//! until the run ends (`ip`, the pipeline draining).

use std::sync::{Arc, Mutex, PoisonError};

use pp_recorder::Team;
use pp_recorder::sync::{Receiver, sync_channel};
use rustfft::Fft;

use crate::matrix::{C64, Layout, Matrix, MatrixRef};
use crate::steps;

/// The matrices in flight between the stages: one being filled by stage 1 while stage 2
/// works on the other.
pub const BUFFERS: usize = 2;

/// The two groups of threads of a `tp` run.
pub struct Groups {
    /// Stage 1 (init, rows): threads `0..p/2`.
    pub first: Team,
    /// Stage 2 (transpose, columns): threads `p/2..p`, the larger group when `p` is odd
    /// (it moves the data twice besides transforming it).
    pub second: Team,
}

impl Groups {
    /// The sizes of the groups for `p` threads: `p/2` and `p - p/2`.
    pub fn sizes(p: usize) -> (usize, usize) {
        (p / 2, p - p / 2)
    }

    /// Two teams of `p/2` and `p - p/2` threads with ids `0..p/2` and `p/2..p`.
    ///
    /// # Errors
    /// `InvalidInput` for `p < 2`, or the error of starting a team's threads.
    pub fn new(p: usize) -> std::io::Result<Groups> {
        if p < 2 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("tp needs at least 2 threads, one per pipeline stage (got p = {p})"),
            ));
        }
        let (a, b) = Groups::sizes(p);
        let first_id = u32::try_from(a).map_err(std::io::Error::other)?;
        Ok(Groups {
            first: Team::with_first_id(a, 0)?,
            second: Team::with_first_id(b, first_id)?,
        })
    }
}

/// Region `name` of `team` in which the team's first thread receives the next value of `queue`
/// (recording `wait recv` while it is empty); `None` once the other stage has gone.
fn receive<T: Send>(team: &Team, name: &'static str, queue: &Mutex<Receiver<T>>) -> Option<T> {
    team.region(name, |part| {
        if part.index() == 0 {
            queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .recv()
                .ok()
        } else {
            None
        }
    })
    .into_iter()
    .flatten()
    .next()
}

/// The memory of a `tp` run: the [`BUFFERS`] matrices that circulate between the stages and
/// stage 2's transpose intermediate. Allocated (and written, so that its pages exist) before
/// the run, which then allocates nothing.
pub struct Workspace {
    buffers: Vec<Vec<C64>>,
    tmp: Vec<C64>,
}

impl Workspace {
    /// The buffers for n×n matrices.
    pub fn new(n: usize) -> Workspace {
        Workspace {
            buffers: (0..BUFFERS).map(|_| vec![C64::default(); n * n]).collect(),
            tmp: vec![C64::default(); n * n],
        }
    }
}

/// Runs `iters` iterations on the two groups; after iteration `k`, `result(k, Y_k)` (on
/// stage 2's first thread, recording nothing). Each stage is driven from its group's first
/// thread; the calling thread waits. Returns the last result (`None` only if `iters` is 0).
pub fn run(
    groups: &Groups,
    fft: &Arc<dyn Fft<f64>>,
    iters: usize,
    workspace: Workspace,
    result: &mut (dyn FnMut(usize, MatrixRef<'_>) + Send),
) -> Option<Matrix> {
    let n = fft.len();
    let Workspace { buffers, mut tmp } = workspace;
    assert_eq!(tmp.len(), n * n, "a workspace for another n");
    let (free_tx, free_rx) = sync_channel::<Vec<C64>>("free", BUFFERS);
    let (full_tx, full_rx) = sync_channel::<(usize, Vec<C64>)>("full", BUFFERS);
    for buffer in buffers {
        free_tx
            .try_send(buffer)
            .expect("the free queue holds every buffer");
    }
    // A receiver is used by one thread at a time, but from inside a region (a `Sync` closure).
    let free_rx = Mutex::new(free_rx);
    let full_rx = Mutex::new(full_rx);
    // Each stage owns the sending end it uses, so that if one stage panics, the other's
    // receive fails instead of waiting forever.
    std::thread::scope(|s| {
        s.spawn(move || {
            let team = &groups.first;
            team.run(move || {
                for k in 0..iters {
                    let Some(mut data) = receive(team, "recv.free", &free_rx) else {
                        return;
                    };
                    steps::init(team, &mut data, n, k, Layout::RowMajor);
                    steps::transform_lines(team, "rows", &mut data, fft);
                    // Line i: row i of the row transforms R(i, v).
                    if full_tx.send((k, data)).is_err() {
                        return;
                    }
                }
            });
        });
        let team = &groups.second;
        team.run(move || {
            let mut last = None;
            for _ in 0..iters {
                let Some((k, mut data)) = receive(team, "recv.full", &full_rx) else {
                    break;
                };
                // Line v: column v of R.
                steps::transpose(team, &mut data, &mut tmp, n);
                // Line v: column v of Y.
                steps::transform_lines(team, "columns", &mut data, fft);
                result(
                    k,
                    MatrixRef {
                        n,
                        layout: Layout::ColumnMajor,
                        data: &data,
                    },
                );
                if k + 1 == iters {
                    last = Some(Matrix {
                        n,
                        layout: Layout::ColumnMajor,
                        data,
                    });
                } else {
                    // Fails only once stage 1 is done and needs no more buffers.
                    let _ = free_tx.send(data);
                }
            }
            last
        })
    })
}
