//! `pp`, the predicate profiler: reads the event log that the recorder (the `pp-recorder` crate) or
//! a tracer wrote, attributes every thread-instant to one lost-cycles category
//! (docs/attribution.md), and analyses the run further. Its modules, each importing only those
//! above it:
//!
//! * [`log`]: reading logs (text and binary) and converting between the encodings;
//! * [`machine`]: the machine file `pp calibrate` writes (copy and message costs);
//! * [`profile`]: the attribution ([`profile::Sweep`]) and the [`profile::Profile`] `pp`
//!   prints, with [`profile::profile_log`], the one way from a log to its profile;
//! * [`graph`]: the program activity graph and its critical path;
//! * [`chrome`]: the timeline in Chrome Trace Event JSON (categories and critical path);
//! * [`whatif`]: replaying a run on another configuration;
//! * [`signature`]: the execution signature of a run (clustered steps folded into loops);
//! * [`trace`]: tracers and importers (`pp run`'s OMPT and MPI launchers, OTF2 import);
//! * [`calibrate`]: measuring this machine into a machine file.
//!
//! The command line (`src/main.rs` and `src/cli/`) only parses options and wires these.

/// The events of a log, from the recorder crate.
pub use pp_recorder::event;

pub mod calibrate;
pub mod chrome;
pub mod graph;
pub mod log;
pub mod machine;
mod messages;
pub mod profile;
pub mod signature;
pub mod skeleton;
pub mod trace;
pub mod whatif;
