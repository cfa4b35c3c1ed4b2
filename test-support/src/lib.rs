//! Helpers shared by the tests and benchmarks of every crate of this workspace, each defined
//! once:
//!
//! * folders and files: [`scratch`] (a fresh folder per test), [`temp_path`], [`write`],
//!   [`repository`] (the workspace's root);
//! * commands: [`pp!`] and [`lca!`] (the binaries under test), [`cargo_build`], [`example`]
//!   and [`record`] (example programs), [`shell`], [`ran`] and [`lines_of_pages`] (a line a user types);
//! * what a command shows: [`stdout_of`] (it succeeded), [`one_line_error`] and [`error_of`]
//!   (it failed, saying why in one line), [`hostile_targets`] and [`assert_untouched`] (it
//!   refused to replace what is not a regular file);
//! * C programs compiled or the test skipped: [`compile`], [`Toolchain`], [`skip`];
//! * processes: [`wait_for`] (a condition, with a cap), [`limit`] (a resource limit on a
//!   child), [`one_at_a_time`] (tests that must not overlap), [`time`] and [`setting`]
//!   (benchmarks).
//!
//! It sits below every crate of the workspace and depends on none of them (std and libc only),
//! so that any crate can take it as a dev-dependency. The path of a binary is known only to
//! the tests of the crate that builds it (`CARGO_BIN_EXE_<name>`), so the binaries' commands
//! are macros, expanded in the test that calls them.

mod bench;
mod commands;
mod compile;
mod errors;
mod examples;
mod limit;
mod outputs;
mod repository;
mod runtimes;
mod scratch;
mod serial;
mod shell;
mod wait;

pub use bench::{setting, time};
pub use commands::{NO_MACHINE, cargo_build, log_text, make_skeleton};
pub use compile::{NotBuilt, Toolchain, compile, skip};
pub use errors::{error_of, one_line_error, stdout_of, succeeded};
pub use examples::{example, record};
pub use limit::limit;
pub use outputs::{IsKind, assert_untouched, hostile_targets};
pub use repository::repository;
pub use runtimes::{ompt_tool, open_mpi};
pub use scratch::{scratch, temp_path, write};
pub use serial::one_at_a_time;
pub use shell::{lines_of_pages, ran, shell};
pub use wait::{wait_for, wait_for_every};
