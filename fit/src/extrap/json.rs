//! Extra-P's JSON formats: the current one (`parameters`, and `measurements` by callpath and
//! metric, each a list of `point` and `values`), the older one with ids (`parameters`,
//! `callpaths`, `metrics`, `coordinates`, `measurements`), and JSON Lines (one object a line:
//! `params`, `value` a number or a list, optional `callpath` and `metric`, which default to
//! `<root>` and `<default>` as in Extra-P). TALPAS files are JSON Lines whose fields are
//! separated by `;` and whose parameters are `parameters` (Extra-P's `--talpas` reader).

use serde_json::{Map, Value};

use super::Experiment;
use crate::observations::{DataError, excerpt};

pub(super) fn parse(source: &str, text: &str) -> Result<Experiment, DataError> {
    let whole: Result<Value, _> = serde_json::from_str(text);
    let value = match whole {
        Ok(value) => value,
        Err(e) => {
            let lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            if lines.clone().count() > 1 && lines.clone().all(|l| l.starts_with('{')) {
                return lines_format(source, text);
            }
            return Err(DataError::Line {
                file: source.to_string(),
                line: e.line().max(1),
                message: format!("not JSON: {e}"),
            });
        }
    };
    let file_error = |message: String| DataError::File {
        file: source.to_string(),
        message,
    };
    let root = value
        .as_object()
        .ok_or_else(|| file_error("expected a JSON object".into()))?;
    if root.contains_key("callpaths") {
        legacy(source, root).map_err(file_error)
    } else {
        current(source, root).map_err(file_error)
    }
}

/// A field of an object, or a message naming it.
fn field<'a>(object: &'a Map<String, Value>, path: &str, name: &str) -> Result<&'a Value, String> {
    object
        .get(name)
        .ok_or_else(|| format!("{path}: no field '{name}'"))
}

fn array<'a>(value: &'a Value, path: &str) -> Result<&'a Vec<Value>, String> {
    value
        .as_array()
        .ok_or_else(|| format!("{path}: expected a list"))
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("{path}: expected an object"))
}

fn string(value: &Value, path: &str) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{path}: expected a string"))
}

/// A finite number (or a string holding one, as Extra-P's examples write coordinates).
fn number(value: &Value, path: &str) -> Result<f64, String> {
    let x = match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match x {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(format!(
            "{path}: expected a finite number, found {}",
            excerpt(&value.to_string())
        )),
    }
}

fn numbers(value: &Value, path: &str) -> Result<Vec<f64>, String> {
    array(value, path)?
        .iter()
        .enumerate()
        .map(|(i, v)| number(v, &format!("{path}[{i}]")))
        .collect()
}

fn parameters(root: &Map<String, Value>) -> Result<Vec<String>, String> {
    array(field(root, "the file", "parameters")?, "parameters")?
        .iter()
        .enumerate()
        .map(|(i, v)| string(v, &format!("parameters[{i}]")))
        .collect()
}

/// `{"parameters": [...], "measurements": {callpath: {metric: [{point, values}]}}}`.
fn current(source: &str, root: &Map<String, Value>) -> Result<Experiment, String> {
    let mut experiment = Experiment::new(source, "Extra-P JSON");
    experiment.parameters = parameters(root)?;
    let measurements = object(field(root, "the file", "measurements")?, "measurements")?;
    for (callpath, metrics) in measurements {
        let path = format!("measurements.{}", excerpt(callpath));
        for (metric, list) in object(metrics, &path)? {
            let path = format!("{path}.{}", excerpt(metric));
            for (i, m) in array(list, &path)?.iter().enumerate() {
                let path = format!("{path}[{i}]");
                let m = object(m, &path)?;
                let point = numbers(field(m, &path, "point")?, &format!("{path}.point"))?;
                let values = numbers(field(m, &path, "values")?, &format!("{path}.values"))?;
                check(&experiment.parameters, &point, &values, &path)?;
                experiment.series(callpath, metric).add(point, &values, 0);
            }
        }
    }
    Ok(experiment)
}

/// The older format: lists of objects with ids that the measurements refer to.
fn legacy(source: &str, root: &Map<String, Value>) -> Result<Experiment, String> {
    let mut experiment = Experiment::new(source, "Extra-P JSON (with ids)");
    // Each list sorted by id, as Extra-P sorts them; a measurement's id is its 1-based rank.
    let named = |list: &str, key: &str| -> Result<Vec<(i64, Value)>, String> {
        let mut items = Vec::new();
        for (i, item) in array(field(root, "the file", list)?, list)?
            .iter()
            .enumerate()
        {
            let path = format!("{list}[{i}]");
            let item = object(item, &path)?;
            let id = field(item, &path, "id")?
                .as_i64()
                .ok_or_else(|| format!("{path}.id: expected a whole number"))?;
            items.push((id, field(item, &path, key)?.clone()));
        }
        items.sort_by_key(|item| item.0);
        Ok(items)
    };
    let names = |list: &str| -> Result<Vec<String>, String> {
        named(list, "name")?
            .iter()
            .enumerate()
            .map(|(i, (_, v))| string(v, &format!("{list}[{i}].name")))
            .collect()
    };
    experiment.parameters = names("parameters")?;
    let callpaths = names("callpaths")?;
    let metrics = names("metrics")?;
    let mut coordinates = Vec::new();
    for (i, (_, pairs)) in named("coordinates", "parameter_value_pairs")?
        .iter()
        .enumerate()
    {
        let path = format!("coordinates[{i}].parameter_value_pairs");
        let mut pairs: Vec<(i64, f64)> = array(pairs, &path)?
            .iter()
            .enumerate()
            .map(|(j, pair)| {
                let path = format!("{path}[{j}]");
                let pair = object(pair, &path)?;
                let id = field(pair, &path, "parameter_id")?
                    .as_i64()
                    .ok_or_else(|| format!("{path}.parameter_id: expected a whole number"))?;
                let value = number(
                    field(pair, &path, "parameter_value")?,
                    &format!("{path}.parameter_value"),
                )?;
                Ok((id, value))
            })
            .collect::<Result<_, String>>()?;
        pairs.sort_by_key(|p| p.0);
        coordinates.push(pairs.into_iter().map(|p| p.1).collect::<Vec<f64>>());
    }
    let list = array(field(root, "the file", "measurements")?, "measurements")?;
    for (i, m) in list.iter().enumerate() {
        let path = format!("measurements[{i}]");
        let m = object(m, &path)?;
        let index = |key: &str, count: usize| -> Result<usize, String> {
            let id = field(m, &path, key)?.as_i64().unwrap_or(0);
            usize::try_from(id - 1)
                .ok()
                .filter(|&i| i < count)
                .ok_or_else(|| format!("{path}.{key}: {id} is not an id between 1 and {count}"))
        };
        let coordinate = &coordinates[index("coordinate_id", coordinates.len())?];
        let callpath = &callpaths[index("callpath_id", callpaths.len())?];
        let metric = &metrics[index("metric_id", metrics.len())?];
        let value = number(field(m, &path, "value")?, &format!("{path}.value"))?;
        check(&experiment.parameters, coordinate, &[value], &path)?;
        experiment
            .series(callpath, metric)
            .add(coordinate.clone(), &[value], 0);
    }
    Ok(experiment)
}

/// A point has one coordinate per parameter, and at least one value.
fn check(parameters: &[String], point: &[f64], values: &[f64], path: &str) -> Result<(), String> {
    if point.len() != parameters.len() {
        return Err(format!(
            "{path}: {} coordinates for the {} parameters ({})",
            point.len(),
            parameters.len(),
            parameters.join(", ")
        ));
    }
    if values.is_empty() {
        return Err(format!("{path}: no value"));
    }
    Ok(())
}

/// JSON Lines: one measurement (or a list of repetitions) a line.
fn lines_format(source: &str, text: &str) -> Result<Experiment, DataError> {
    let mut experiment = Experiment::new(source, "Extra-P JSON Lines");
    let mut order: Option<Vec<String>> = None;
    let mut talpas = false;
    for (i, line) in text.lines().enumerate() {
        let error = |message: String| DataError::Line {
            file: source.to_string(),
            line: i + 1,
            message,
        };
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            // TALPAS: `;` between the fields.
            Err(e) => match serde_json::from_str(&commas(line)) {
                Ok(value) if line.contains(';') => {
                    talpas = true;
                    value
                }
                _ => return Err(error(format!("not JSON: {e}"))),
            },
        };
        let m = object(&value, "the line").map_err(error)?;
        let key = if m.contains_key("parameters") && !m.contains_key("params") {
            "parameters"
        } else {
            "params"
        };
        let params = object(field(m, "the line", key).map_err(error)?, key).map_err(error)?;
        let order = order.get_or_insert_with(|| params.keys().cloned().collect());
        if params.len() != order.len() || params.keys().any(|k| !order.contains(k)) {
            let names: Vec<&str> = params.keys().map(String::as_str).collect();
            return Err(error(format!(
                "params: {} where the first line has {}",
                names.join(", "),
                order.join(", ")
            )));
        }
        let point = order
            .iter()
            .map(|p| number(&params[p], &format!("params.{}", excerpt(p))))
            .collect::<Result<Vec<f64>, String>>()
            .map_err(error)?;
        let value = field(m, "the line", "value").map_err(error)?;
        let values = match value {
            Value::Array(_) => numbers(value, "value"),
            _ => number(value, "value").map(|x| vec![x]),
        }
        .map_err(error)?;
        if values.is_empty() {
            return Err(error("value: no value".into()));
        }
        let name = |key: &str, default: &str| match m.get(key) {
            None => Ok(default.to_string()),
            Some(v) => string(v, key),
        };
        let callpath = name("callpath", "<root>").map_err(error)?;
        let metric = name("metric", "<default>").map_err(error)?;
        experiment
            .series(&callpath, &metric)
            .add(point, &values, i + 1);
    }
    experiment.parameters = order.unwrap_or_default();
    if talpas {
        experiment.format = "TALPAS";
    }
    Ok(experiment)
}

/// A TALPAS line with its `;` between fields as `,` (those inside strings kept).
fn commas(line: &str) -> String {
    let (mut in_string, mut escaped) = (false, false);
    line.chars()
        .map(|c| {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                ';' if !in_string => return ',',
                _ => {}
            }
            c
        })
        .collect()
}
