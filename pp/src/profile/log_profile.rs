//! The one way from a log to its profile, shared by `pp` (`pp`, `pp -l`, `pp --by`, `pp run`),
//! `pp critical-path`, `lca study` and the tests: every event of the log through a [`Sweep`]
//! (with a machine file's calibration and a sink, when given), the attribution as a
//! [`Profile`], and what the caller needs to say about a log that ended early.

use super::report::Profile;
use super::sweep::{Sink, Sweep, SweepError};
use crate::event::Event;
use crate::log::{LogError, LogReader};
use crate::machine::Machine;

/// A log read to its end (or to the damage that ended it) and attributed.
#[derive(Debug)]
pub struct LogProfile {
    /// The profile, or why there is none (no thread started before the log ended).
    pub profile: Result<Profile, SweepError>,
    /// The damage that ended the log early: the profile covers the events before it.
    pub damage: Option<LogError>,
    /// Whether the log ended with its end marker (always true for a text log): a binary log
    /// without one is a run that did not finish.
    pub finished: bool,
}

/// Profiles the rest of `reader`: its events through a [`Sweep`] with `machine`'s
/// calibration (communication beyond its ideal time is rc.comm) and `sink` (which sees every
/// attributed interval and event), then [`Sweep::finish`] and [`Profile::new`].
pub fn profile_log(
    reader: &mut LogReader,
    machine: Option<Machine>,
    sink: Option<&mut dyn Sink>,
) -> LogProfile {
    profile_log_tapped(reader, machine, sink, None::<fn(&Event)>)
}

/// [`profile_log`], and every event of the log also goes to `tap`, in order: on a thread of
/// its own when the log is decoded on a second one ([`Sweep::read_tapped`]).
pub fn profile_log_tapped(
    reader: &mut LogReader,
    machine: Option<Machine>,
    sink: Option<&mut dyn Sink>,
    tap: Option<impl FnMut(&Event) + Send>,
) -> LogProfile {
    let header = reader.header().clone();
    let mut sweep = Sweep::new(&header, sink);
    if let Some(machine) = machine {
        sweep = sweep.with_machine(machine);
    }
    let damage = sweep.read_tapped(reader, tap).err();
    let profile = sweep
        .finish(reader.symbols())
        .map(|a| Profile::new(header, a, reader.symbols()));
    LogProfile {
        profile,
        damage,
        finished: reader.finished(),
    }
}

impl LogProfile {
    /// The profile of what was read, or the one-line error when there is none: the damage
    /// that came before anything could be attributed (`<damage>; nothing to attribute before
    /// it`), else `<name>: <why>`. `name` names the log in messages.
    pub fn into_profile(self, name: &str) -> Result<Profile, String> {
        match (self.profile, self.damage) {
            (Ok(p), _) => Ok(p),
            // The damage is the cause: the profile's own error would make the line long.
            (Err(_), Some(d)) => Err(format!(
                "{d}; nothing to attribute before it{}",
                recover_hint(name)
            )),
            (Err(e), None) => Err(format!("{name}: {e}")),
        }
    }

    /// Why the profile covers only part of the log, as a warning: the damage that ended it
    /// early, or the missing end marker of a run that did not finish; `None` for a whole log.
    pub fn warning(&self, name: &str) -> Option<String> {
        if let Some(d) = &self.damage {
            Some(format!(
                "{d} (the profile covers the events before it){}",
                recover_hint(name)
            ))
        } else if !self.finished {
            Some(format!(
                "{name}: the log has no end marker (the run did not finish); the profile covers \
                 what was written{}",
                recover_hint(name)
            ))
        } else {
            None
        }
    }

    /// The profile of a whole log, or the one-line error: the log is damaged, it has no end
    /// marker (the run did not finish), or it has nothing to attribute. (`lca study` takes
    /// only whole logs; so do tests.)
    pub fn whole(self, name: &str) -> Result<Profile, String> {
        if let Some(d) = self.damage {
            return Err(format!("the log is damaged: {d}"));
        }
        if !self.finished {
            return Err(format!(
                "{name}: the log has no end marker (the run did not finish)"
            ));
        }
        self.profile.map_err(|e| format!("{name}: {e}"))
    }
}

/// `; <how to finish it>` when `name`, a path, is an unfinished `.tmp` with its threads'
/// buffers beside it; else nothing.
fn recover_hint(name: &str) -> String {
    crate::log::unfinished::buffers_beside(std::path::Path::new(name))
        .map(|h| format!("; {h}"))
        .unwrap_or_default()
}
