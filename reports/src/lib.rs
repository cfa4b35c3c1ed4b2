//! Reports for lost cycles analysis: text tables, CSV and JSON export, charts.
//!
//! Reports format what `fit` computed; they never compute statistics themselves.
pub mod chart;
pub mod number;
pub mod ranking;
pub mod variation;
