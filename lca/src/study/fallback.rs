//! A model that these runs cannot build falls back to simpler shapes, and says so
//! (docs/study-file.md, "When a model cannot be built").
//!
//! A category whose fit fails (its terms collinear on the runs, say: a threshold
//! `max(p-$theta,0)` and its coefficient cannot be told apart on two levels of p) is refitted
//! with simpler shapes along the factors the study did not fix in `[shapes]`, one step at a
//! time, until it can be estimated:
//! 1. each factor's first default shape without a fitted parameter (`p` for
//!    `max(p-$theta,0)`);
//! 2. a factor with fewer than three levels: linear (`p`), all that two levels can show;
//! 3. a factor with fewer than three levels: constant (`1`), the category taken not to depend
//!    on it;
//! 4. every factor constant.
//!
//! Each step taken is a line of the study's summary; a category that no step can estimate
//! gives the first error.

use std::collections::BTreeMap;

use fit::Datafile;
use fit::combination::{Choices, CombineError};
use fit::observations::Cell;
use fit::performance::{BuildError, BuildOptions, PerformanceModel, factors_of};

/// The most refits: every category through every step.
const MAX_REFITS: usize = 6 * 4;

/// Builds the model from `data` with `options`' shapes; a category that cannot be estimated is
/// refitted with simpler shapes (the module's steps). Returns the model and a line per
/// fallback taken, `category: ...`.
pub(super) fn build(
    data: &Datafile,
    options: &BuildOptions,
) -> Result<(PerformanceModel, Vec<String>), BuildError> {
    let user = &options.choices;
    let mut options = options.clone();
    let mut steps: BTreeMap<String, usize> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut first_error = None;
    for _ in 0..=MAX_REFITS {
        let error = match PerformanceModel::build(data, &options) {
            Ok(model) => return Ok((model, notes)),
            Err(e) => e,
        };
        let BuildError::Category(CombineError::Fit {
            category,
            error: why,
        }) = &error
        else {
            return Err(first_error.unwrap_or(error));
        };
        let (category, why) = (category.clone(), why.to_string());
        let Ok((factors, _)) = factors_of(data) else {
            return Err(first_error.unwrap_or(error));
        };
        let fixed = user.get(&category).cloned().unwrap_or_default();
        let now = options.choices.get(&category).cloned().unwrap_or_default();
        let step = steps.entry(category.clone()).or_insert(0);
        let next = loop {
            let Some(shapes) = simpler(data, &category, &factors, &fixed, *step) else {
                break None;
            };
            *step += 1;
            if shapes != now.shapes {
                break Some(shapes);
            }
        };
        let Some(shapes) = next else {
            return Err(first_error.unwrap_or(error));
        };
        let described: Vec<String> = shapes
            .iter()
            .filter(|(f, _)| !fixed.shapes.contains_key(*f))
            .map(|(f, e)| format!("{f}: {e}"))
            .collect();
        notes.push(format!(
            "{category}: fell back to simpler shapes ({}) because these runs cannot estimate \
             the first ones: {why}",
            described.join(", ")
        ));
        first_error.get_or_insert(error);
        options.choices.insert(
            category,
            Choices {
                shapes,
                combination: fixed.combination,
            },
        );
    }
    Err(first_error.expect("a refit failed"))
}

/// The shapes of `category` at fallback `step` (0-based, the module's list), the study's own
/// (`fixed`) kept; `None` past the last step.
fn simpler(
    data: &Datafile,
    category: &str,
    factors: &[String],
    fixed: &Choices,
    step: usize,
) -> Option<BTreeMap<String, String>> {
    if step > 3 {
        return None;
    }
    let mut shapes = fixed.shapes.clone();
    for factor in factors.iter().filter(|f| !fixed.shapes.contains_key(*f)) {
        let few = levels(data, factor) < 3;
        let shape = match step {
            0 => fit::default_candidates(category, factor)
                .into_iter()
                .find(|c| !c.contains('$'))
                .unwrap_or_else(|| factor.clone()),
            1 if few => factor.clone(),
            2 if few => "1".to_string(),
            3 => "1".to_string(),
            _ => simpler(data, category, factors, fixed, 0)?
                .remove(factor)
                .unwrap_or_else(|| factor.clone()),
        };
        shapes.insert(factor.clone(), shape);
    }
    Some(shapes)
}

/// The distinct numbers of `column` in `data`.
fn levels(data: &Datafile, column: &str) -> usize {
    let mut values: Vec<f64> = (0..data.rows().len())
        .filter_map(|row| match data.cell(row, column) {
            Some(Cell::Number(x)) => Some(x),
            _ => None,
        })
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    values.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fit::Condition;

    /// The bundled study with p = "2,3" (replicates 1, --iters 50), measured on a 2-core
    /// machine: dp's model runs.
    fn two_levels() -> Datafile {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/two-levels.dat");
        let conditions: Vec<Condition> = ["impl=dp", "role=model"]
            .iter()
            .map(|c| c.parse().unwrap())
            .collect();
        Datafile::read(std::path::Path::new(path))
            .unwrap()
            .filter(&conditions)
            .unwrap()
    }

    fn options(choices: BTreeMap<String, Choices>) -> BuildOptions {
        BuildOptions {
            name: "dp".into(),
            choices,
            ..Default::default()
        }
    }

    fn shape(model: &PerformanceModel, category: &str, factor: &str) -> String {
        let c = model.categories.iter().find(|c| c.category == category);
        let s = c.unwrap().shapes.iter().find(|s| s.factor == factor);
        s.unwrap().expr.clone()
    }

    #[test]
    fn two_levels_of_p_fall_back_from_the_threshold_and_say_so() {
        let data = two_levels();
        let plain = PerformanceModel::build(&data, &options(BTreeMap::new()));
        let e = plain.unwrap_err().to_string();
        assert!(e.contains("`$theta_p` are collinear"), "{e}");
        let (model, notes) = build(&data, &options(BTreeMap::new())).unwrap();
        assert_eq!(shape(&model, "rc", "p"), "p");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("rc: fell back to simpler shapes (n: n^2, p: p) because")
                && notes[0].contains("collinear"),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn a_model_that_builds_takes_no_fallback() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../datasets/data/fft2d.dat");
        let data = Datafile::read(std::path::Path::new(path)).unwrap();
        let conditions: Vec<Condition> = ["impl=dp", "role=model"]
            .iter()
            .map(|c| c.parse().unwrap())
            .collect();
        let data = data.filter(&conditions).unwrap();
        let (model, notes) = build(&data, &options(BTreeMap::new())).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        let direct = PerformanceModel::build(&data, &options(BTreeMap::new())).unwrap();
        let shapes = |m: &PerformanceModel| -> Vec<String> {
            m.categories
                .iter()
                .flat_map(|c| c.shapes.iter().map(|s| s.expr.clone()))
                .collect()
        };
        assert_eq!(shapes(&model), shapes(&direct));
    }

    #[test]
    fn the_studys_own_shape_is_kept_and_its_error_given() {
        let data = two_levels();
        let mut choices = BTreeMap::new();
        choices.insert(
            "rc".to_string(),
            Choices {
                shapes: BTreeMap::from([("p".to_string(), "max(p-$theta,0)".to_string())]),
                combination: None,
            },
        );
        let e = build(&data, &options(choices)).unwrap_err().to_string();
        assert!(
            e.starts_with("category 'rc': ") && e.contains("`$theta_p` are collinear"),
            "{e}"
        );
    }
}
