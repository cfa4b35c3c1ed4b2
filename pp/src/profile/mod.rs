//! The predicate profiler (docs/attribution.md): attribution of every thread-instant of a run to
//! one lost-cycles category ([`Sweep`]), the [`Profile`] `pp` prints, and [`profile_log`], which
//! takes a log to its profile.

mod log_profile;
pub mod report;
pub mod rules;
pub mod sweep;
pub mod totals;
mod violations;

pub use log_profile::{LogProfile, profile_log, profile_log_tapped};
pub use report::{By, OUTSIDE_REGIONS, Profile, RowError};
pub use rules::{CATEGORIES, Category, RULES, SUBCATEGORIES};
pub use sweep::{Attribution, Interval, Meeting, Sink, Sweep, SweepError};
pub use totals::Totals;
