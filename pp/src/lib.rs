//! `pp`, the predicate profiler: the event-log format, the recorder that instrumented programs
//! link, and the attribution of every thread-instant to one lost-cycles category.
//!
//! Nothing is implemented yet; issue #3 fills this crate.
