//! Validation of a performance model against measured runs: per point measured and predicted
//! `T_p`, the relative error, whether the measurement falls in the 90% prediction interval,
//! and the same for the paper's baseline (the corner plane) on the same points.

use crate::observations::{Cell, DataError, Datafile, Observations};
use crate::performance::{PerformanceModel, TimePrediction};

/// One measured run against the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationPoint {
    /// The datafile line.
    pub line: usize,
    /// Measured `T_p` (the `wall` column, else the sum of the categories over `p`).
    pub measured: f64,
    /// The model's prediction at the run's point.
    pub predicted: TimePrediction,
    /// The corner plane's value there, when the model has one.
    pub baseline: Option<f64>,
}

impl ValidationPoint {
    /// The model's prediction (and its baseline's) for a run at `point` that measured `time`.
    pub fn new(model: &PerformanceModel, line: usize, point: &[f64], time: f64) -> Self {
        ValidationPoint {
            line,
            measured: time,
            predicted: model.predict(point),
            baseline: model.baseline.as_ref().map(|b| b.evaluate(point)),
        }
    }

    /// `|predicted - measured| / measured`.
    pub fn relative_error(&self) -> f64 {
        ((self.predicted.time.value - self.measured) / self.measured).abs()
    }

    /// The baseline's relative error.
    pub fn baseline_error(&self) -> Option<f64> {
        self.baseline
            .map(|b| ((b - self.measured) / self.measured).abs())
    }

    /// Whether the measurement lies in the 90% prediction interval (None without one).
    pub fn within_interval(&self) -> Option<bool> {
        let t = &self.predicted.time;
        t.half_width
            .is_finite()
            .then(|| (self.measured - t.value).abs() <= t.half_width)
    }
}

/// A model checked against a datafile.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    /// Every run, in datafile order.
    pub points: Vec<ValidationPoint>,
}

/// Mean and maximum of some relative errors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorSummary {
    /// Mean relative error.
    pub mean: f64,
    /// Largest relative error.
    pub max: f64,
}

impl ErrorSummary {
    fn of(errors: impl Iterator<Item = f64>) -> Option<ErrorSummary> {
        let errors: Vec<f64> = errors.collect();
        (!errors.is_empty()).then(|| ErrorSummary {
            mean: errors.iter().sum::<f64>() / errors.len() as f64,
            max: errors.iter().copied().fold(0.0, f64::max),
        })
    }
}

impl Validation {
    /// The model's errors.
    pub fn model_errors(&self) -> ErrorSummary {
        ErrorSummary::of(self.points.iter().map(ValidationPoint::relative_error))
            .expect("a validation has at least one point")
    }

    /// The baseline's errors, when the model has a baseline.
    pub fn baseline_errors(&self) -> Option<ErrorSummary> {
        ErrorSummary::of(
            self.points
                .iter()
                .filter_map(ValidationPoint::baseline_error),
        )
    }

    /// Share of the points inside their 90% prediction interval (None without intervals).
    pub fn coverage(&self) -> Option<f64> {
        let inside: Vec<bool> = self
            .points
            .iter()
            .filter_map(ValidationPoint::within_interval)
            .collect();
        (!inside.is_empty())
            .then(|| inside.iter().filter(|&&i| i).count() as f64 / inside.len() as f64)
    }
}

impl Validation {
    /// The model's error on the means of its points: the runs at one point (its replicates)
    /// averaged, the root mean square of `(predicted − mean) / mean` over the points. None
    /// with fewer than 2 points.
    pub fn validated_error(&self) -> Option<crate::crossover::ValidatedError> {
        let mut points: Vec<(Vec<u64>, f64, f64, usize)> = Vec::new();
        for p in &self.points {
            let key: Vec<u64> = p.predicted.point.iter().map(|v| v.to_bits()).collect();
            match points.iter_mut().find(|q| q.0 == key) {
                Some(q) => {
                    q.2 += p.measured;
                    q.3 += 1;
                }
                None => points.push((key, p.predicted.time.value, p.measured, 1)),
            }
        }
        let errors: Vec<f64> = points
            .iter()
            .map(|(_, predicted, sum, n)| {
                let mean = sum / *n as f64;
                (predicted - mean) / mean
            })
            .filter(|e| e.is_finite())
            .collect();
        (errors.len() >= 2).then(|| crate::crossover::ValidatedError {
            relative_sd: (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt(),
            points: errors.len(),
        })
    }
}

/// Checks `model` against every row of `data` (already filtered to the implementation).
pub fn validate(model: &PerformanceModel, data: &Datafile) -> Result<Validation, DataError> {
    let names: Vec<&str> = model.factors.iter().map(String::as_str).collect();
    let file_error = |message: String| DataError::File {
        file: data.source().to_string(),
        message,
    };
    // A value the model held (p = 26, iters = 10) must be the same in the runs.
    for (key, &value) in &model.held {
        if !data.columns().iter().any(|c| c == key) {
            continue;
        }
        for (row, r) in data.rows().iter().enumerate() {
            if let Some(Cell::Number(x)) = data.cell(row, key)
                && x != value
            {
                return Err(DataError::Line {
                    file: data.source().to_string(),
                    line: r.line,
                    message: format!("{key}={x}, but the model was built with {key}={value} held"),
                });
            }
        }
    }
    let measured: Observations = if model.kind == crate::performance::Kind::Response {
        // A response model is checked against its response column, other columns free.
        match model.categories.as_slice() {
            [one] => data.response_observations(&names, &one.category)?,
            many => {
                let names: Vec<&str> = many.iter().map(|c| c.category.as_str()).collect();
                return Err(file_error(format!(
                    "the model has {} responses ({}); validate a model of one",
                    names.len(),
                    names.join(", ")
                )));
            }
        }
    } else if data.columns().iter().any(|c| c == "wall") {
        data.observations(&names, "wall", &[])?
    } else {
        let categories: Vec<Observations> = model
            .categories
            .iter()
            .map(|c| data.observations(&names, &c.category, &[]))
            .collect::<Result<_, _>>()
            .map_err(|e| file_error(format!("no 'wall' column, and {e}")))?;
        let mut sum = categories[0].clone();
        let mut point = vec![0.0; names.len()];
        for row in 0..sum.len() {
            sum.point(row, &mut point);
            let total: f64 = categories.iter().map(|c| c.y[row]).sum();
            sum.y[row] = total / model.processors(&point);
        }
        sum
    };
    let field = match model.categories.as_slice() {
        [one] if model.kind == crate::performance::Kind::Response => one.category.as_str(),
        _ if data.columns().iter().any(|c| c == "wall") => "wall",
        _ => "T_p",
    };
    let mut point = vec![0.0; names.len()];
    let points = (0..measured.len())
        .map(|row| {
            measured.point(row, &mut point);
            let line = measured.lines[row];
            // The error is relative to the measured value: of 0 it would be infinite.
            let y = measured.y[row];
            if !(y.is_finite() && y != 0.0) {
                return Err(DataError::Line {
                    file: data.source().to_string(),
                    line,
                    message: format!(
                        "{field} = {y}: a prediction is checked against a measured value other \
                         than 0 (its relative error is divided by it)"
                    ),
                });
            }
            // A run outside the model's domain (n=0 under a log) is an error, not a NaN.
            model.try_predict(&point).map_err(|e| DataError::Line {
                file: data.source().to_string(),
                line,
                message: e.to_string(),
            })?;
            Ok(ValidationPoint::new(model, line, &point, measured.y[row]))
        })
        .collect::<Result<_, DataError>>()?;
    Ok(Validation { points })
}
