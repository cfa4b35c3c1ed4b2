//! Experiment design for lost cycles analysis: factors and their levels, and the run plans of
//! full factorial, 2^k and the paper's edges designs.
//!
//! Not yet here (issue #5): fractional 2^(k-q) designs with generators, alias structure and
//! resolution.

pub mod factor;
pub mod plan;

pub use factor::{Factor, FactorError, Scale};
pub use plan::{Design, Plan, PlanError, Run, plan};
