//! The predicate profiler (DESIGN §4): attribution of every thread-instant of a run to one
//! lost-cycles category, and the reports `pp` prints.

pub(crate) mod messages;
pub mod rules;
pub mod sweep;
pub mod totals;
mod violations;

pub use rules::{CATEGORIES, Category, RULES, SUBCATEGORIES};
pub use sweep::{Attribution, Interval, Sink, Sweep, SweepError};
pub use totals::Totals;
pub mod chrome;
pub mod report;

pub use chrome::ChromeTrace;
pub use report::{By, Profile, RowError};
