//! Explicit region teams of a session (`region_begin ... team=0,1`): interned once into a small
//! table so that a raw `region_begin` carries a `u32` index instead of a list of threads.

use std::collections::HashMap;

use crate::event::ThreadId;

/// The teams a session's regions named, by index.
#[derive(Debug, Default)]
pub(crate) struct TeamTable {
    teams: Vec<Vec<ThreadId>>,
    index: HashMap<Vec<ThreadId>, u32>,
}

impl TeamTable {
    /// The index of the team of these threads (sorted, deduplicated), interning it if new,
    /// and whether it is new.
    pub(crate) fn intern(&mut self, threads: &[ThreadId]) -> (u32, bool) {
        let mut team = threads.to_vec();
        team.sort_unstable();
        team.dedup();
        if let Some(&i) = self.index.get(&team) {
            return (i, false);
        }
        let i = self.teams.len() as u32;
        self.teams.push(team.clone());
        self.index.insert(team, i);
        (i, true)
    }

    /// The threads of an interned team.
    pub(crate) fn threads(&self, index: u32) -> &[ThreadId] {
        &self.teams[index as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_sorted_teams() {
        let mut t = TeamTable::default();
        let (a, new) = t.intern(&[2, 0, 2]);
        assert!(new);
        assert_eq!(t.intern(&[0, 2]), (a, false));
        assert_ne!(t.intern(&[1]).0, a);
        assert_eq!(t.threads(a), [0, 2]);
    }
}
