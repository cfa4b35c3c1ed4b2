//! The commands of `lca`: each module's clap `Args` and its `run`, which checks the options,
//! calls the libraries and returns the text to print.

pub mod crossover;
pub mod model;
pub mod pace;
pub mod plan;
pub mod predict;
pub mod rank;
pub mod report;
pub mod specs;
pub mod study;
pub mod validate;
pub mod variation;
