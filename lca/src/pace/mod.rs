//! PACE's hierarchical performance models (seed 004; docs/pace.md): an application layer (the
//! loop), a parallel template (who takes part in each region, how the work splits, what waits
//! for what), a subtask layer (each region's computation, fitted by `fit`) and a hardware
//! layer (cores, speed), built from a study's logs and evaluated by replaying the template on
//! the hardware with `pp whatif`'s engine.
//!
//! * [`model`]: the layers.
//! * [`file`]: the TOML file.
//! * [`detect`]: what one log shows of the template.
//! * [`build`]: `lca pace build`, from a study folder.
//! * [`schedule`]: a point's events, each thread on its own processor.
//! * [`template_log`]: those events as a log `pp` reads.
//! * [`evaluate`]: the replay on the hardware, the attribution and the scaling.
//! * [`messages`]: message exchanges between ranks in the template, and the network.
//! * [`mpi`]: the template of an MPI study's logs.
//! * [`spin`]: whether a log's threads spin while they wait.
//! * [`seam`]: a PACE model as a `fit` performance model, for the other commands.
//! * [`describe`]: a PACE model as a report shows it.
//! * [`against_flat`]: a PACE model beside the flat model of the same implementation.
//! * [`choose`]: which of several models is fastest at a point.

pub mod against_flat;
pub mod build;
pub mod choose;
pub mod core_switch;
pub mod describe;
pub mod detect;
pub mod evaluate;
pub mod file;
pub mod messages;
pub mod model;
pub mod mpi;
pub mod schedule;
pub mod seam;
pub mod spin;
pub mod template_log;

pub use build::{BuildRequest, build};
pub use choose::choose;
pub use evaluate::{Evaluation, Trace};
pub use model::PaceModel;
pub use seam::read_model;
