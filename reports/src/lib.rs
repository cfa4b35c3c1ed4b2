//! Reports for lost cycles analysis: text tables, CSV and JSON export, charts.
//!
//! Reports format what `fit` computed; they never compute statistics themselves.
pub mod chart;
pub mod crossover;
pub mod decision;
pub mod figures;
pub mod file_names;
mod format;
pub mod html;
pub mod map_chart;
pub mod measured;
pub mod model;
pub mod number;
pub mod prediction;
pub mod ranking;
mod sides;
pub mod validation;
pub mod variation;
pub mod verdict;

pub use crate::format::Format;
