//! Reports for lost cycles analysis: text tables, CSV and JSON export, charts.
//!
//! Reports format what `fit` computed; they never compute statistics themselves.
