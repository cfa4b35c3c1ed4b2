//! How the tools write files, so that no output replaces what is not a regular file and no
//! failure leaves a half-written file behind:
//!
//! * [`output`]: a whole file, written beside its target and renamed into place only where the
//!   target is absent or a regular file (devices, FIFOs, sockets, directories and links to
//!   them are refused); `-` is standard output where a caller allows it.
//! * [`append`]: one record appended whole, or the file truncated back to its old length.
//! * [`input`]: a small input file read whole, never past a bound.
//! * [`quote`]: how an error quotes what a file holds: a short excerpt on one line.

pub mod append;
pub mod input;
pub mod output;
pub mod quote;

pub use append::AppendError;
pub use output::{Output, OutputError, Target};
