//! Two implementations' models compared: the points both implementations ran, decided by
//! their runs (docs/comparing.md#measured-points-decide-first), the winner map over the two
//! factors they vary, and the points over which `fit::decision::suggest` weighs the runs that
//! would decide most (`lca crossover --suggest`, the study's `[decide]`).

use fit::Datafile;
use fit::crossover::measured::{Run, measured_points};
use fit::crossover::{
    Axis, CrossoverError, DifferenceModel, MeasuredPoint, Pair, ValidatedError, WinnerMap,
};
use fit::observations::Cell;
use fit::performance::{Kind, PerformanceModel};

/// The points of `data` where both implementations ran (each model's rows are its own
/// implementation's, [`crate::validated_error::implementation_rows`]), each decided by its
/// runs. Empty when the two models cannot be told to different rows (no `impl`), or their
/// factors differ. A run's value is what the model predicts: the response for a response
/// model; else `wall`, or the categories' sum over `p` where there is no `wall`. A row that
/// `pp whatif` predicted (a `predicted` cell: a study's `[whatif]` points) is not a measured
/// run, so its point is left to the models, whose verdict says it rests on predicted rows.
pub fn measured(a: &PerformanceModel, b: &PerformanceModel, data: &Datafile) -> Vec<MeasuredPoint> {
    match shared_runs(a, b, data, Rows::Measured) {
        Some((factors, ra, rb)) => measured_points(&factors, &ra, &rb),
        None => Vec::new(),
    }
}

/// The difference model, and how many of the points it was fitted over hold no measured run of
/// one side or the other (a study's `[whatif]` points: `pp whatif`'s predicted rows).
pub struct Difference {
    /// The model.
    pub model: DifferenceModel,
    /// Its points that rest on predicted rows.
    pub predicted: usize,
}

/// The difference model of the two implementations over the points both ran in `data`
/// (docs/comparing.md#the-difference-model), predicted rows included as the two models
/// include them: None where [`measured`] finds no runs of both, or too few shared points.
pub fn difference(
    a: &PerformanceModel,
    b: &PerformanceModel,
    data: &Datafile,
) -> Option<Difference> {
    let (factors, ra, rb) = shared_runs(a, b, data, Rows::All)?;
    let model = DifferenceModel::fit(&factors, &ra, &rb)?;
    let measured = shared_runs(a, b, data, Rows::Measured).map_or(0, |(_, ma, mb)| {
        fit::crossover::difference::shared_points(&ma, &mb)
    });
    Some(Difference {
        predicted: model.points.saturating_sub(measured),
        model,
    })
}

/// The factors and each implementation's runs in `data`, for [`measured`] and [`difference`]:
/// None when the two models cannot be told to different rows (no `impl`), or their factors
/// differ.
fn shared_runs(
    a: &PerformanceModel,
    b: &PerformanceModel,
    data: &Datafile,
    rows: Rows,
) -> Option<(Vec<String>, Vec<Run>, Vec<Run>)> {
    let own = |m: &PerformanceModel| {
        m.provenance
            .conditions
            .iter()
            .any(|c| c.starts_with("impl"))
            || data.columns().iter().any(|c| c == "impl")
    };
    if !own(a) || !own(b) || a.factors.len() != b.factors.len() {
        return None;
    }
    let factors = a.factors.clone();
    let ra = runs(a, &factors, data, rows)?;
    let rb = runs(b, &factors, data, rows)?;
    Some((factors, ra, rb))
}

/// One line on the difference model: its form, points and validated error, and where it decides.
pub fn difference_line(d: &Difference) -> String {
    let predicted = if d.predicted > 0 {
        format!(
            " ({} of them predicted by pp whatif, not measured)",
            d.predicted
        )
    } else {
        String::new()
    };
    let m = &d.model;
    format!(
        "difference model: {} over {} points both ran{predicted}, validated error ±{:.1}% \
         (leave-one-out RMS of the log ratio); it decides wherever its 90% interval is narrower \
         than the two models' (\"rests on difference model\")\n",
        m.text(),
        m.points,
        100.0 * m.validated_error
    )
}

/// Which rows [`runs`] takes: every row (the difference model is a model, fitted to the rows
/// the implementations' models are), or the measured ones only (the points the runs decide).
#[derive(Clone, Copy, PartialEq)]
enum Rows {
    All,
    Measured,
}

/// The runs of one model's implementation in `data`, over `factors`; rows at another value of
/// a value the model holds (its `p = 26`) are not its runs.
fn runs(
    model: &PerformanceModel,
    factors: &[String],
    data: &Datafile,
    rows: Rows,
) -> Option<Vec<Run>> {
    let data = crate::validated_error::implementation_rows(model, data)?;
    let number = |row: usize, column: &str| match data.cell(row, column) {
        Some(Cell::Number(x)) => Some(x),
        _ => None,
    };
    let mut runs = Vec::new();
    for row in 0..data.rows().len() {
        let held = model
            .held
            .iter()
            .all(|(f, v)| number(row, f).is_none_or(|x| (x - v).abs() <= 1e-9 * v.abs().max(1.0)));
        let point: Option<Vec<f64>> = factors.iter().map(|f| number(row, f)).collect();
        let predicted = data.cell(row, fit::observations::PREDICTED).is_some();
        let (true, Some(point), false) = (held, point, rows == Rows::Measured && predicted) else {
            continue;
        };
        let value = match model.kind {
            Kind::Response => model
                .categories
                .first()
                .and_then(|c| number(row, &c.category)),
            Kind::LostCycles => number(row, "wall").or_else(|| {
                let sum: Option<f64> = model
                    .categories
                    .iter()
                    .map(|c| number(row, &c.category))
                    .sum();
                let mut at = vec![0.0; model.factors.len()];
                for (k, f) in model.factors.iter().enumerate() {
                    at[k] = number(row, f)?;
                }
                Some(sum? / model.divisor(&at))
            }),
        };
        let Some(value) = value.filter(|v| v.is_finite()) else {
            continue;
        };
        let replicate = number(row, "replicate")
            .filter(|r| *r >= 0.0 && r.fract() == 0.0)
            .map(|r| r as u64);
        runs.push(Run {
            point,
            value,
            replicate,
        });
    }
    Some(runs)
}

/// The winner map of two models over their two factors (41 x 41 cells), the models' validated
/// errors (when given) in its intervals, the measured points deciding the cells nearest them.
pub fn winner_map(
    a: &PerformanceModel,
    b: &PerformanceModel,
    errors: [Option<ValidatedError>; 2],
    measured: &[MeasuredPoint],
) -> Result<WinnerMap, CrossoverError> {
    winner_map_with(a, b, errors, measured, None)
}

/// [`winner_map`], the difference model (when given) deciding where it is tighter.
pub fn winner_map_with(
    a: &PerformanceModel,
    b: &PerformanceModel,
    errors: [Option<ValidatedError>; 2],
    measured: &[MeasuredPoint],
    difference: Option<&DifferenceModel>,
) -> Result<WinnerMap, CrossoverError> {
    let pair = Pair::new(a, b)?
        .with_validated_errors(errors)
        .with_measured(measured)
        .with_difference(difference);
    let free = pair.free(&[])?;
    let [u, v] = &free[..] else {
        return Err(CrossoverError(format!(
            "a winner map needs two factors; the models vary {}",
            free.join(", ")
        )));
    };
    pair.winner_map(&pair.default_axis(u)?, &pair.default_axis(v)?, &[], 41)
}

/// A point: every factor by name.
pub type Point = Vec<(String, f64)>;

/// The region's points over the axes (101 along one, 21 x 21 over two) and the candidate
/// runs (21 along one, 9 x 9 over two; only whole numbers on a whole-number axis,
/// [`Axis::integer`], as processor counts are: runnable points), each with the fixed values.
pub fn grids(axes: &[Axis], fixed: &[(String, f64)]) -> (Vec<Point>, Vec<Point>) {
    let (region, candidates) = if axes.len() == 1 { (101, 21) } else { (21, 9) };
    let levels = |a: &Axis, count: usize, whole: bool| -> Vec<f64> {
        let mut values = a.samples(count);
        if whole && a.integer {
            values.iter_mut().for_each(|v| *v = v.round());
            values.dedup();
        }
        values
    };
    let grid = |count: usize, whole: bool| {
        let mut points: Vec<Point> = vec![fixed.to_vec()];
        for a in axes {
            let values = levels(a, count, whole);
            points = points
                .into_iter()
                .flat_map(|p| {
                    values.iter().map(move |&v| {
                        let mut p = p.clone();
                        p.push((a.factor.clone(), v));
                        p
                    })
                })
                .collect();
        }
        points
    };
    (grid(region, false), grid(candidates, true))
}
