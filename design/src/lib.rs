//! Experiment design for lost cycles analysis: factors and their levels, and the run plans of
//! full factorial, 2^k, fractional 2^(k−q) and the paper's edges designs.

pub mod factor;
pub mod fractional;
pub mod plan;

pub use factor::{Factor, FactorError, Scale};
pub use fractional::{Generator, GeneratorError};
pub use plan::{Design, Plan, PlanError, Run, fractional_plan, plan};
