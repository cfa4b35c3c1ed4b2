//! The raw events of the hot path: what a thread's buffer holds until it is written, with
//! names as `&'static str` and teams as an index into the session's team table.

use crate::event::{ThreadId, WaitKind};

/// Region team index meaning "all `p` threads".
pub(crate) const ALL_THREADS: u32 = u32::MAX;

/// What happened, as recorded on the hot path: names are `&'static str` (interned into the
/// log's symbol table only at flush), teams an index into the session's team table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawKind {
    Start,
    Stop,
    RegionBegin {
        id: u64,
        name: &'static str,
        /// [`ALL_THREADS`] or an index into the session's team table.
        team: u32,
    },
    RegionEnd {
        id: u64,
    },
    WorkBegin(Option<&'static str>),
    WorkEnd(Option<&'static str>),
    WaitBegin(WaitKind, Option<&'static str>),
    /// Kind, object and the thread that ended the wait, where known.
    WaitEnd(WaitKind, Option<&'static str>, Option<ThreadId>),
    /// Kind and object released (an unlock, a notify).
    Release(WaitKind, Option<&'static str>),
    CommBegin(u64),
    CommEnd(u64),
    /// Thread CPU time and run-queue delay.
    Cpu(u64, Option<u64>),
    Phase(&'static str),
}

/// A raw event: clock ticks and what happened (40 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Raw {
    pub(crate) ticks: u64,
    pub(crate) kind: RawKind,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_events_are_compact() {
        assert!(
            std::mem::size_of::<Raw>() <= 40,
            "{}",
            std::mem::size_of::<Raw>()
        );
    }
}
