//! Experiment design: factors, levels, factorial, edge and fractional designs, run plans.
//!
//! Nothing is implemented yet; issue #5 fills this crate.
