//! Tracers and importers: where a log comes from when the program does not link the recorder.
//! [`run`] launches an unmodified OpenMP program with the OMPT tool, or an MPI program's ranks
//! with the PMPI tracer, and finds the log they wrote; [`mpicc`] builds the MPI helpers `pp`
//! carries as C sources; [`otf2`] imports an OTF2 trace (Score-P) into a log; [`recover`]
//! completes the log of a recorded run that died, from its threads' crash-safe buffers.

pub mod mpicc;
pub mod otf2;
pub mod recover;
pub mod run;
