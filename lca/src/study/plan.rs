//! The plan phase: the runs a study asks for. Each [`Point`] is an implementation at factor
//! values with a role and a replicate; its [`Key`] names its row in the datafile. The plan is the
//! design's points and the validation points, every replicate, then what an earlier start of
//! the study added (`[precision]`'s replicates, `[decide]`'s chosen runs), read from the
//! datafile; later rounds add to it as the study goes ([`super::precision`], [`super::decide`]).

use std::collections::BTreeMap;

use anyhow::{Result, anyhow};

use super::file::{Study, format_value};
use super::{decide, precision};

/// Why a point is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// A point of the design the models are built from.
    Model,
    /// An extra point, measured only to check the models.
    Validate,
    /// A run `[decide]` chose to settle the crossover: a model run too.
    Decide,
}

impl Role {
    /// The datafile's `role` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Model => "model",
            Role::Validate => "validate",
            Role::Decide => "decide",
        }
    }
}

/// One run to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Index into the study's implementations.
    pub implementation: usize,
    /// Model or validation point.
    pub role: Role,
    /// One value per factor, in the study's factor order.
    pub values: Vec<f64>,
    /// 1-based replicate.
    pub replicate: usize,
}

/// What identifies a run in the datafile: `impl`, `role`, the factor values and `replicate`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    implementation: String,
    role: Role,
    values: Vec<String>,
    replicate: usize,
}

impl Key {
    /// The run this key names, when its implementation is one of the study's and its values
    /// are numbers.
    pub fn point(&self, study: &Study) -> Option<Point> {
        Some(Point {
            implementation: study
                .implementations
                .iter()
                .position(|i| i.name == self.implementation)?,
            role: self.role,
            values: self
                .values
                .iter()
                .map(|v| v.parse().ok())
                .collect::<Option<Vec<f64>>>()?,
            replicate: self.replicate,
        })
    }
}

impl Point {
    /// The point's key.
    pub fn key(&self, study: &Study) -> Key {
        Key {
            implementation: study.implementations[self.implementation].name.clone(),
            role: self.role,
            values: self.values.iter().map(|&v| format_value(v)).collect(),
            replicate: self.replicate,
        }
    }

    /// `dp n=256 p=4` (with `validate` or `decide`), the same for every replicate.
    pub fn place(&self, study: &Study) -> String {
        let mut label = study.implementations[self.implementation].name.clone();
        for (f, v) in study.factors.iter().zip(&self.values) {
            label += &format!(" {}={}", f.name, format_value(*v));
        }
        match self.role {
            Role::Validate => label += " (validate)",
            Role::Decide => label += " (decide)",
            Role::Model => {}
        }
        label
    }

    /// `dp n=256 p=4` (with `validate` and the replicate when they matter).
    pub fn label(&self, study: &Study) -> String {
        let mut label = self.place(study);
        if study.replicates > 1 || self.replicate > 1 {
            label += &format!(" #{}", self.replicate);
        }
        label
    }

    /// The file name stem of the run's log and output: `dp-model-n256-p4-r1`.
    pub fn stem(&self, study: &Study) -> String {
        let mut stem = format!(
            "{}-{}",
            study.implementations[self.implementation].name,
            self.role.as_str()
        );
        for (f, v) in study.factors.iter().zip(&self.values) {
            stem += &format!("-{}{}", f.name, format_value(*v));
        }
        stem + &format!("-r{}", self.replicate)
    }
}

/// Every run of the study: the design's points, then the validation points, each for every
/// implementation in turn (so a partial study has comparable runs of each); then all of them
/// again for each further replicate.
pub fn points(study: &Study) -> Result<Vec<Point>, design::PlanError> {
    let plan = design::plan(&study.factors, study.design, study.replicates, None)?;
    let mut points = Vec::new();
    for run in &plan.runs {
        for implementation in 0..study.implementations.len() {
            points.push(Point {
                implementation,
                role: Role::Model,
                values: run.values.clone(),
                replicate: run.replicate,
            });
        }
    }
    for values in &study.validate {
        for replicate in 1..=study.replicates {
            for implementation in 0..study.implementations.len() {
                points.push(Point {
                    implementation,
                    role: Role::Validate,
                    values: values.clone(),
                    replicate,
                });
            }
        }
    }
    // Replicate by replicate: every point once, then every point again, so that the spread
    // between a point's runs spans the whole study (the machine's drift over it too), not
    // only back-to-back repeats, and a study stopped early has every point once.
    points.sort_by_key(|p| p.replicate);
    Ok(points)
}

/// The plan phase: every run of [`points`], then the runs an earlier start of the study added
/// for `[precision]` and chose for `[decide]` (its datafile's rows).
pub fn plan(study: &Study) -> Result<Vec<Point>> {
    let mut points = points(study)?;
    if study.precision.is_some() || study.decide.is_some() {
        let times = precision::times(study).map_err(|e| anyhow!(e))?;
        let more = precision::earlier(study, &points, &times);
        points.extend(more);
        if study.decide.is_some() {
            points.extend(decide::earlier(study, &times));
        }
    }
    Ok(points)
}

/// The key of a datafile line written by a study over `factors`, if it is one.
pub fn key_of_line(line: &str, factors: &[&str]) -> Option<Key> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let fields: BTreeMap<&str, &str> = line
        .split_whitespace()
        .filter_map(|t| t.split_once('='))
        .collect();
    let role = match *fields.get("role")? {
        "model" => Role::Model,
        "validate" => Role::Validate,
        "decide" => Role::Decide,
        _ => return None,
    };
    let values = factors
        .iter()
        .map(|f| fields.get(f)?.parse::<f64>().ok().map(format_value))
        .collect::<Option<Vec<String>>>()?;
    Some(Key {
        implementation: fields.get("impl")?.to_string(),
        role,
        values,
        replicate: fields.get("replicate")?.parse().ok()?,
    })
}
