//! Reading the event log of a run (docs/event-log.md): a reader that detects which encoding it is
//! given and returns the events in global time order, and [`convert`] between the encodings.
//! The writers, the encodings' layout and what both sides check come from the recorder crate
//! ([`pp_recorder::log`]) and are re-exported here.
//!
//! The text reader reads the log as a stream of lines of at most [`MAX_LINE`] bytes and returns
//! its events stably sorted by time (then thread), in bounded memory: an external merge sort
//! whose runs go to an unlinked temporary file (`sorted`).
//!
//! The binary reader indexes the blocks on open and merges the threads while decoding, so
//! memory is bounded by the number of threads, the block size and a few bytes per block, not by
//! the number of events.

mod binary_index;
mod binary_reader;
mod convert;
mod decode;
mod error;
mod limits;
mod merge;
mod pipeline;
mod place;
mod reader;
mod sorted;
mod temporary;
mod text;
pub mod unfinished;

pub use convert::{ConvertStats, convert};
pub(crate) use decode::{Defined, decode_record};
pub use error::LogError;
pub use limits::{MAX_LINE, MAX_NAMES, MAX_PIPED, MAX_SYMBOL_BYTES, MAX_TEAMS};
pub use pipeline::set_threads;
pub(crate) use pipeline::{Handover, MIN_ITEMS, default_threads, pipelined, pipelined_with};
pub use place::Place;
pub use pp_recorder::log::{
    BinaryWriter, Encoding, MAX_THREADS, TextWriter, binary, check_header, excerpt, is_name,
};
pub use reader::LogReader;
pub(crate) use sorted::{RUN_EVENTS, Sorted, Sorter};
