//! Lost cycles analysis (Crovella & LeBlanc 1994) as a library: what `lca`'s commands share,
//! and `lca study`, a whole analysis end to end. The `lca` binary (`src/main.rs`) parses the
//! command line, calls this library and prints; nothing here reads the command line or writes
//! to standard output (a study's progress goes to standard error).
//!
//! * [`study`]: a whole analysis in phases: plan, measure, fit, decide, report.
//! * [`completeness`]: measured pc(p)/pc(p_min) per level of the other factors, the check
//!   that the categories miss no overhead, and the regions where a drifting pc grew.
//! * [`compare`]: two implementations' models compared: the winner map, and the points over
//!   which the runs that would decide most are weighed.
//! * [`html_report`]: the HTML report of models and their measured runs.
//! * [`validated_error`]: the models' own error on runs they were not built from, which
//!   verdicts hold beside the coefficients' uncertainty.
//! * [`shapes`]: the shapes file of `lca model --shapes`.
//! * [`pace`]: PACE's hierarchical models (seed 004): built from a study's logs, evaluated by
//!   replaying their template on the hardware (docs/pace.md).

pub mod compare;
pub mod completeness;
pub mod html_report;
pub mod pace;
pub mod shapes;
pub mod study;
pub mod validated_error;
