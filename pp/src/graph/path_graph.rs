//! [`PathGraph`]: what the critical path needs of the activity graph, in memory bounded
//! whatever the log's length (docs/critical-path.md#cost): each thread's number of events and
//! the times of its first and last, the counts, and a [`Taken`] record (32 bytes) for each
//! event that the longest path reaches through a remote arc, in a [`Spill`] in the order the
//! events happened. The walk back ([`super::CriticalPath::walk`]) reads them last first.

use super::spill::Spill;
use super::{ArcKind, RemoteArc};

/// The critical path's part of the activity graph of a log.
#[derive(Debug, Default)]
pub struct PathGraph {
    /// Threads.
    pub p: u32,
    /// Each thread's number of events.
    pub counts: Vec<u32>,
    /// The time of each thread's first event (0 without one).
    pub first_t: Vec<u64>,
    /// The time of each thread's last event (0 without one).
    pub last_t: Vec<u64>,
    /// The run window as the attribution has it (`None`: no thread started).
    pub window: Option<(u64, u64)>,
    /// Waits (other than barrier waits) whose end has no known cause.
    pub unknown_causes: u64,
    /// Remote arcs of each kind, in [`ArcKind::ALL`] order.
    pub arc_counts: [u64; 5],
    /// [`Taken`] records, in the order their events happened.
    pub taken: Spill,
}

impl PathGraph {
    /// Number of events.
    pub fn events(&self) -> u64 {
        self.counts.iter().map(|&n| u64::from(n)).sum()
    }

    /// Number of remote arcs of each kind, in [`ArcKind::ALL`] order.
    pub fn arc_counts(&self) -> [u64; 5] {
        self.arc_counts
    }
}

/// An event that the longest path into it reaches through a remote arc: the arc, and the
/// event's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taken {
    /// The event's time, ns.
    pub t: u64,
    /// The arc (its target is the event).
    pub arc: RemoteArc,
}

/// Bytes of a [`Taken`] record.
pub const TAKEN: usize = 32;

impl Taken {
    /// Its record: the times, the nodes, the target thread, the source thread with the kind
    /// in its top 3 bits (thread ids are below 2^20).
    pub fn to_bytes(self) -> [u8; TAKEN] {
        let mut b = [0u8; TAKEN];
        b[0..8].copy_from_slice(&self.t.to_le_bytes());
        b[8..16].copy_from_slice(&self.arc.from_t.to_le_bytes());
        b[16..20].copy_from_slice(&self.arc.to_node.to_le_bytes());
        b[20..24].copy_from_slice(&self.arc.from_node.to_le_bytes());
        b[24..28].copy_from_slice(&self.arc.to.to_le_bytes());
        let from = self.arc.from | ((self.arc.kind as u32) << 29);
        b[28..32].copy_from_slice(&from.to_le_bytes());
        b
    }

    /// The record read back.
    pub fn from_bytes(b: &[u8; TAKEN]) -> Taken {
        let u64_at = |k: usize| u64::from_le_bytes(b[k..k + 8].try_into().unwrap_or_default());
        let u32_at = |k: usize| u32::from_le_bytes(b[k..k + 4].try_into().unwrap_or_default());
        let from = u32_at(28);
        Taken {
            t: u64_at(0),
            arc: RemoteArc {
                kind: ArcKind::ALL[((from >> 29) as usize).min(4)],
                from: from & ((1 << 29) - 1),
                from_node: u32_at(20),
                from_t: u64_at(8),
                to: u32_at(24),
                to_node: u32_at(16),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_record_reads_back_as_written() {
        for (k, kind) in ArcKind::ALL.into_iter().enumerate() {
            let taken = Taken {
                t: u64::MAX - k as u64,
                arc: RemoteArc {
                    kind,
                    from: (1 << 20) - 1,
                    from_node: u32::MAX - 1,
                    from_t: 1 << 40,
                    to: 7,
                    to_node: 123_456,
                },
            };
            assert_eq!(Taken::from_bytes(&taken.to_bytes()), taken);
        }
    }
}
