//! `[validate]`: the points measured only to check the models, a full grid and single points,
//! each with a value for every factor, distinct, in the file's order.

use std::collections::BTreeMap;

use toml::Spanned;

use super::check::{Source, parse_factor};
use super::raw::{Ordered, RawValidate};
use super::{StudyError, excerpt};

/// The most points a validation grid may have, counted before any is made.
const MAX_GRID_POINTS: usize = 100_000;

/// The validation points (values in the order of `names`, the factors): the grid's, then the
/// single points, each once.
pub(super) fn points(
    src: &Source,
    raw: Option<&RawValidate>,
    names: &[&str],
) -> Result<Vec<Vec<f64>>, StudyError> {
    let mut validate: Vec<Vec<f64>> = Vec::new();
    if let Some(v) = raw {
        if let Some(grid) = &v.grid {
            validate.extend(grid_points(src, grid, names)?);
        }
        for point in &v.points {
            validate.push(single(src, point, names)?);
        }
    }
    let mut seen = Vec::new();
    validate.retain(|v| {
        let new = !seen.contains(v);
        seen.push(v.clone());
        new
    });
    Ok(validate)
}

/// Every point of `grid`: the full factorial of its levels, at most [`MAX_GRID_POINTS`].
fn grid_points(
    src: &Source,
    grid: &Spanned<Ordered<Spanned<String>>>,
    names: &[&str],
) -> Result<Vec<Vec<f64>>, StudyError> {
    let mut axes: Vec<Option<Vec<f64>>> = vec![None; names.len()];
    for (key, spec) in &grid.get_ref().0 {
        let Some(i) = names.iter().position(|n| n == key) else {
            return Err(src.at(
                spec,
                format!(
                    "validate.grid: '{}' is not a factor ({})",
                    excerpt(key),
                    names.join(", ")
                ),
            ));
        };
        axes[i] = Some(grid_levels(key, spec.get_ref()).map_err(|m| src.at(spec, m))?);
    }
    if let Some(i) = axes.iter().position(Option::is_none) {
        return Err(src.at(
            grid,
            format!("validate.grid: no levels for factor '{}'", names[i]),
        ));
    }
    let count = axes
        .iter()
        .flatten()
        .try_fold(1usize, |n, axis| n.checked_mul(axis.len()));
    if count.is_none_or(|n| n > MAX_GRID_POINTS) {
        let asked = count.map_or_else(
            || {
                let n: f64 = axes.iter().flatten().map(|a| a.len() as f64).product();
                format!("{n:e}")
            },
            |n| n.to_string(),
        );
        return Err(src.at(
            grid,
            format!("validate.grid has {asked} points; the limit is {MAX_GRID_POINTS}"),
        ));
    }
    let mut grid_points: Vec<Vec<f64>> = vec![Vec::new()];
    for axis in axes.into_iter().flatten() {
        grid_points = grid_points
            .into_iter()
            .flat_map(|point| {
                axis.iter().map(move |&v| {
                    let mut point = point.clone();
                    point.push(v);
                    point
                })
            })
            .collect();
    }
    Ok(grid_points)
}

/// One of `points`: a finite value for every factor, and no other key.
fn single(
    src: &Source,
    point: &Spanned<BTreeMap<String, f64>>,
    names: &[&str],
) -> Result<Vec<f64>, StudyError> {
    let map = point.get_ref();
    if let Some(key) = map.keys().find(|k| !names.contains(&k.as_str())) {
        return Err(src.at(
            point,
            format!(
                "validate.points: '{}' is not a factor ({})",
                excerpt(key),
                names.join(", ")
            ),
        ));
    }
    names
        .iter()
        .map(|n| match map.get(*n) {
            None => Err(src.at(point, format!("validate.points: no value for factor '{n}'"))),
            Some(v) if !v.is_finite() => Err(src.at(
                point,
                format!("validate.points: {n} = {v}: expected a finite number"),
            )),
            Some(v) => Ok(*v),
        })
        .collect()
}

/// A validation grid's levels: a factor specification, or a list that may have one level.
fn grid_levels(name: &str, spec: &str) -> Result<Vec<f64>, String> {
    if spec.contains("..") {
        return Ok(parse_factor(name, spec)?.levels);
    }
    spec.split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    format!(
                        "validate.grid: {name} = \"{}\": '{}' is not a number",
                        excerpt(spec),
                        excerpt(v.trim())
                    )
                })
        })
        .collect()
}
