//! Extra-P's text format: `PARAMETER` names, `POINTS` coordinates, then per `REGION` (callpath)
//! and `METRIC` one `DATA` line of repetitions per point, in the order of the points; `#`
//! starts a comment line. A `DATA` line before any `METRIC` or `REGION` has an empty metric
//! or callpath, as in Extra-P.

use super::{Experiment, number};
use crate::observations::{DataError, excerpt};

/// Where `DATA` lines go: the current callpath and metric, and the next point's index.
struct Block {
    callpath: String,
    metric: String,
    next: usize,
    /// The line of the `REGION` or `METRIC` that started the block (0: the file's start).
    line: usize,
}

pub(super) fn parse(source: &str, text: &str) -> Result<Experiment, DataError> {
    let mut experiment = Experiment::new(source, "Extra-P text");
    let mut points: Vec<Vec<f64>> = Vec::new();
    let mut block = Block {
        callpath: String::new(),
        metric: String::new(),
        next: 0,
        line: 0,
    };
    let mut last = 0;
    for (i, line) in text.lines().enumerate() {
        let number_of_line = i + 1;
        let error = |message: String| DataError::Line {
            file: source.to_string(),
            line: number_of_line,
            message,
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        last = number_of_line;
        let (field, value) = match line.split_once(char::is_whitespace) {
            Some((field, value)) => (field, value.trim()),
            None => (line, ""),
        };
        match field {
            "PARAMETER" => {
                if !points.is_empty() {
                    return Err(error(
                        "PARAMETER after POINTS: name the parameters first".into(),
                    ));
                }
                if value.is_empty() {
                    return Err(error("PARAMETER: no parameter name".into()));
                }
                for name in value.split_whitespace() {
                    if experiment.parameters.iter().any(|p| p == name) {
                        let name = excerpt(name);
                        return Err(error(format!("PARAMETER: '{name}' is named twice")));
                    }
                    experiment.parameters.push(name.to_string());
                }
            }
            "POINTS" => {
                let dims = experiment.parameters.len();
                if dims == 0 {
                    return Err(error("POINTS before any PARAMETER".into()));
                }
                for point in coordinates(value, dims).map_err(error)? {
                    if points.contains(&point) {
                        let at: Vec<String> = point.iter().map(f64::to_string).collect();
                        let at = at.join(" ");
                        return Err(error(format!("POINTS: the point ({at}) is given twice")));
                    }
                    points.push(point);
                }
            }
            "REGION" | "METRIC" => {
                end(&block, points.len()).map_err(|m| DataError::Line {
                    file: source.to_string(),
                    line: block.line.max(1),
                    message: m,
                })?;
                if value.is_empty() {
                    return Err(error(format!("{field}: no name")));
                }
                if field == "REGION" {
                    block.callpath = value.to_string();
                } else {
                    block.metric = value.to_string();
                }
                block.next = 0;
                block.line = number_of_line;
            }
            "DATA" => {
                let Some(point) = points.get(block.next) else {
                    let count = points.len();
                    return Err(error(format!(
                        "DATA: more DATA lines than the {count} POINTS (one DATA line per point, \
                         in their order)"
                    )));
                };
                let values = value
                    .split_whitespace()
                    .map(|v| number("DATA", v))
                    .collect::<Result<Vec<f64>, String>>()
                    .map_err(error)?;
                if values.is_empty() {
                    return Err(error("DATA: no value".into()));
                }
                let point = point.clone();
                let (callpath, metric) = (block.callpath.clone(), block.metric.clone());
                experiment
                    .series(&callpath, &metric)
                    .add(point, &values, number_of_line);
                block.next += 1;
            }
            other => {
                return Err(error(format!(
                    "'{}' is not a section of Extra-P's text format (PARAMETER, POINTS, REGION, \
                     METRIC, DATA)",
                    excerpt(other)
                )));
            }
        }
    }
    end(&block, points.len()).map_err(|m| DataError::Line {
        file: source.to_string(),
        line: if block.line > 0 {
            block.line
        } else {
            last.max(1)
        },
        message: m,
    })?;
    Ok(experiment)
}

/// A block of `DATA` lines must have one per point (or none).
fn end(block: &Block, points: usize) -> Result<(), String> {
    if block.next == 0 || block.next == points {
        return Ok(());
    }
    let what = match (block.callpath.is_empty(), block.metric.is_empty()) {
        (true, true) => "the DATA lines".to_string(),
        (false, true) => format!("REGION {}", excerpt(&block.callpath)),
        (true, false) => format!("METRIC {}", excerpt(&block.metric)),
        (false, false) => format!(
            "REGION {} METRIC {}",
            excerpt(&block.callpath),
            excerpt(&block.metric)
        ),
    };
    Err(format!(
        "{what}: {} DATA lines for {points} POINTS (one DATA line per point, in their order)",
        block.next
    ))
}

/// The points of a `POINTS` line: `(4 10) (8 10)`, or with one parameter also `4 8 16`.
fn coordinates(value: &str, dims: usize) -> Result<Vec<Vec<f64>>, String> {
    let mut points = Vec::new();
    if !value.contains('(') {
        if dims != 1 {
            return Err(format!(
                "POINTS: with {dims} parameters each point is written in parentheses, like \
                 ({})",
                vec!["1"; dims].join(" ")
            ));
        }
        for v in value.split_whitespace() {
            points.push(vec![number("POINTS", v)?]);
        }
    } else {
        let mut rest = value.trim();
        while !rest.is_empty() {
            let Some(inner) = rest.strip_prefix('(') else {
                return Err(format!("POINTS: expected '(' at '{}'", excerpt(rest)));
            };
            let Some(close) = inner.find(')') else {
                return Err("POINTS: a '(' is not closed".into());
            };
            let point = inner[..close]
                .split_whitespace()
                .map(|v| number("POINTS", v))
                .collect::<Result<Vec<f64>, String>>()?;
            if point.len() != dims {
                return Err(format!(
                    "POINTS: the point ({}) has {} coordinates for {dims} parameters",
                    excerpt(inner[..close].trim()),
                    point.len()
                ));
            }
            points.push(point);
            rest = inner[close + 1..].trim_start();
        }
    }
    if points.is_empty() {
        return Err("POINTS: no point".into());
    }
    Ok(points)
}
