//! `fft2d`, a case-study workload for lost cycles analysis: the 2D FFT of an n×n complex
//! matrix, repeated for a number of iterations (a new input matrix each time), in two
//! implementations instrumented with the `pp` recorder:
//!
//! * [`dp`], data parallel: per iteration, parallel loops over the whole team of `p` threads
//!   (init, column FFTs, a transpose through an intermediate matrix, row FFTs);
//! * [`tp`], task + data parallel: two groups of threads form a pipeline over successive
//!   matrices (init and row FFTs, then transpose and column FFTs), handing matrices over
//!   through bounded queues whose waits are recorded.
//!
//! The 1-D transforms are `rustfft`'s, always along contiguous lines. [`steps`] has the
//! parallel loops both are made of and what each records; [`reference`](mod@reference) the single-threaded
//! 2D FFT results are checked against; [`run`] one run with its session, timing and checksum.
//!
//! Input: element `(i, j)` of iteration `k` is a hash of `(i, j, k)` ([`matrix::input`]).

pub mod check;
pub mod cli;
pub mod dp;
pub mod matrix;
pub mod reference;
pub mod run;
pub mod steps;
pub mod tp;

pub use run::{Config, Impl, Outcome};
