//! `pp`, the predicate profiler: the event-log format (DESIGN §3), the recorder that
//! instrumented programs link, and the attribution of every thread-instant to one
//! lost-cycles category (DESIGN §4).

/// The events of a log, from the recorder crate.
pub use pp_recorder::event;

pub mod calibrate;
pub mod graph;
pub mod log;
pub mod machine;
pub mod mpicc;
pub mod otf2;
pub mod profile;
pub mod whatif;
