//! Fitting lost-cycles models: observations read from datafiles, model expressions, linear
//! and nonlinear least squares with confidence intervals, and the ranking of candidate models.
//!
//! Data flows `Datafile -> Observations -> Model -> Fit -> Ranking`. Nothing here prints,
//! exits or reads the command line.

pub mod calibration;
pub mod candidates;
pub mod combination;
pub mod condition;
mod constrained;
pub mod crossover;
pub mod decision;
pub mod domain;
pub mod expr;
pub mod extrap;
pub mod fit;
pub mod integer;
pub mod linear;
pub mod model;
pub mod model_file;
mod nonlinear;
pub mod observations;
pub mod performance;
mod problem;
pub mod ranking;
pub mod repetitions;
pub mod response;
pub mod rivals;
pub mod search;
pub mod stats;
mod threshold_fit;
pub mod validation;
pub mod variation;

pub use crate::candidates::default_candidates;
pub use crate::fit::{
    Estimate, Fit, FitError, Method, Prediction, Weighting, fit_model, fit_weighted,
};
pub use crate::model::{Model, ModelError};
pub use crate::observations::{Condition, DataError, Datafile, Observations};
pub use crate::ranking::{RankBy, Ranking, rank};
pub use crate::search::search;
