//! The limits of what a reader takes from a log, so that memory stays bounded whatever a file
//! says: the length of a text line, the symbol table, a binary log read from a pipe.

use crate::event::{Sym, Symbols, TeamRef, ThreadId};

/// The longest line of a text log, in bytes (without its newline): a longer line is an error,
/// so that reading a file without newlines (`/dev/zero`) ends at once in bounded memory.
pub const MAX_LINE: usize = 64 * 1024;

/// The most names a log may define (region names, labels, objects and phases together).
pub const MAX_NAMES: u32 = 1 << 16;

/// The most teams a log may define.
pub const MAX_TEAMS: u32 = 1 << 16;

/// The most bytes of names and team members a log may define in all (a name counts its bytes,
/// a team 4 bytes a thread): with [`MAX_NAMES`] and [`MAX_TEAMS`], this bounds the memory of
/// the symbol table whatever the file says.
pub const MAX_SYMBOL_BYTES: usize = 4 << 20;

/// The largest binary log read from a pipe, FIFO or standard input: such a log is copied to an
/// unlinked temporary file first (its blocks are read out of order), and this bounds the copy.
pub const MAX_PIPED: u64 = 16 << 30;

/// Interns names and teams into a symbol table while counting them against the limits.
#[derive(Debug, Default)]
pub(crate) struct SymbolBudget {
    names: u32,
    teams: u32,
    bytes: usize,
}

impl SymbolBudget {
    /// The symbol of `name`; `Err` says which limit it passes when it is new.
    pub(crate) fn name(&mut self, symbols: &mut Symbols, name: &str) -> Result<Sym, String> {
        let s = symbols.intern(name);
        if s.0 == self.names {
            self.add(self.names, MAX_NAMES, "names", name.len())?;
            self.names += 1;
        }
        Ok(s)
    }

    /// The team of `threads`; `Err` says which limit it passes when it is new.
    pub(crate) fn team(
        &mut self,
        symbols: &mut Symbols,
        threads: &[ThreadId],
    ) -> Result<TeamRef, String> {
        let t = symbols.intern_team(threads);
        if t.0 == self.teams {
            self.add(self.teams, MAX_TEAMS, "teams", 4 * threads.len())?;
            self.teams += 1;
        }
        Ok(t)
    }

    /// Counts one more symbol of `cost` bytes, the `count`-th of its kind.
    fn add(&mut self, count: u32, max: u32, what: &str, cost: usize) -> Result<(), String> {
        if count >= max {
            return Err(format!("more than {max} {what} (the limit of a log)"));
        }
        if self.bytes + cost > MAX_SYMBOL_BYTES {
            return Err(format!(
                "more than {MAX_SYMBOL_BYTES} bytes of names and teams (the limit of a log)"
            ));
        }
        self.bytes += cost;
        Ok(())
    }
}
