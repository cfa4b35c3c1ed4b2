//! Fitting lost-cycles models: observations read from datafiles, model expressions, linear
//! and nonlinear least squares with confidence intervals, and the ranking of candidate models.
//!
//! Data flows `Datafile -> Observations -> Model -> Fit -> Ranking`. Nothing here prints,
//! exits or reads the command line.
