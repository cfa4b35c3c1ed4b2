//! Extra-P's input files: its text format and its JSON and JSON Lines formats, as Extra-P's
//! documentation describes them (`docs/file-formats.md` of github.com/extra-p/extrap) and its
//! readers (`extrap/fileio/file_reader/`) read them. An [`Experiment`] holds, per callpath and
//! metric, the measured values (repetitions kept) at each point of the parameters.
//!
//! Which format a file is in is told by its content: JSON when its first character that is not
//! white space is `{` (JSON Lines when the whole is not one JSON value but every line that is
//! not blank is), the text format when its first line that is neither blank nor a `#` comment
//! starts with one of its section names.

mod json;
mod text;

use std::path::Path;

use crate::observations::{Cell, Condition, DataError, Observations};

/// The text format's section names.
pub const SECTIONS: [&str; 5] = ["PARAMETER", "POINTS", "REGION", "METRIC", "DATA"];

/// The largest Extra-P file read, in bytes.
pub const MAX_FILE: u64 = 256 << 20;

/// The measurements of one callpath and metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The callpath (`main->solve`); empty where the file names none.
    pub callpath: String,
    /// The metric (`time`); empty where the file names none.
    pub metric: String,
    /// The points, one coordinate per parameter, in the order first measured.
    pub points: Vec<Vec<f64>>,
    /// The values measured at each point (its repetitions).
    pub values: Vec<Vec<f64>>,
    /// The line (1-based) where each point's values are, 0 where not known (JSON).
    pub lines: Vec<usize>,
}

impl Series {
    /// `callpath [metric]`, or whichever of the two the file names.
    pub fn name(&self) -> String {
        match (self.callpath.is_empty(), self.metric.is_empty()) {
            (_, true) => self.callpath.clone(),
            (true, false) => self.metric.clone(),
            (false, false) => format!("{} [{}]", self.callpath, self.metric),
        }
    }

    /// The observations: one per repetition, the response named as [`Series::name`].
    pub fn observations(&self, source: &str, parameters: &[String]) -> Observations {
        let mut columns = vec![Vec::new(); parameters.len()];
        let (mut y, mut lines) = (Vec::new(), Vec::new());
        for ((point, values), &line) in self.points.iter().zip(&self.values).zip(&self.lines) {
            for &v in values {
                for (column, &x) in columns.iter_mut().zip(point) {
                    column.push(x);
                }
                y.push(v);
                lines.push(line);
            }
        }
        Observations {
            source: source.to_string(),
            factors: parameters.to_vec(),
            response: self.name(),
            columns,
            y,
            lines,
        }
    }

    /// Adds `values` measured at `point` (to the point's repetitions if it was measured).
    fn add(&mut self, point: Vec<f64>, values: &[f64], line: usize) {
        match self.points.iter().position(|p| *p == point) {
            Some(i) => self.values[i].extend_from_slice(values),
            None => {
                self.points.push(point);
                self.values.push(values.to_vec());
                self.lines.push(line);
            }
        }
    }
}

/// An Extra-P experiment: the parameters and every callpath × metric measured over them.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// The file, as named in errors.
    pub source: String,
    /// Which of the formats it was.
    pub format: &'static str,
    /// The parameters (the factors).
    pub parameters: Vec<String>,
    /// Each callpath × metric, in the order first seen.
    pub series: Vec<Series>,
}

impl Experiment {
    fn new(source: &str, format: &'static str) -> Experiment {
        Experiment {
            source: source.to_string(),
            format,
            parameters: Vec::new(),
            series: Vec::new(),
        }
    }

    /// The series of a callpath and metric, added if new.
    fn series(&mut self, callpath: &str, metric: &str) -> &mut Series {
        let at = self
            .series
            .iter()
            .position(|s| s.callpath == callpath && s.metric == metric)
            .unwrap_or_else(|| {
                self.series.push(Series {
                    callpath: callpath.to_string(),
                    metric: metric.to_string(),
                    points: Vec::new(),
                    values: Vec::new(),
                    lines: Vec::new(),
                });
                self.series.len() - 1
            });
        &mut self.series[at]
    }

    /// The experiment with only the measurement points that meet every condition (`lca model
    /// FILE --where 'p<512'`, docs/extrap.md); a condition on a name that is not a parameter,
    /// or one that leaves no point, is an error naming the file.
    pub fn filter(mut self, conditions: &[Condition]) -> Result<Experiment, DataError> {
        let error = |message: String| DataError::File {
            file: self.source.clone(),
            message,
        };
        let mut at = Vec::with_capacity(conditions.len());
        for c in conditions {
            match self.parameters.iter().position(|p| *p == c.key) {
                Some(i) => at.push(i),
                None => {
                    return Err(error(format!(
                        "--where {c}: '{}' is not a parameter (the parameters are {})",
                        crate::observations::excerpt(&c.key),
                        self.parameters.join(", ")
                    )));
                }
            }
        }
        for s in &mut self.series {
            let keep: Vec<bool> = s
                .points
                .iter()
                .map(|point| {
                    conditions
                        .iter()
                        .zip(&at)
                        .all(|(c, &i)| c.holds(Cell::Number(point[i])))
                })
                .collect();
            let mut k = keep.iter();
            s.points.retain(|_| *k.next().unwrap_or(&false));
            let mut k = keep.iter();
            s.values.retain(|_| *k.next().unwrap_or(&false));
            let mut k = keep.iter();
            s.lines.retain(|_| *k.next().unwrap_or(&false));
        }
        if self.series.iter().all(|s| s.points.is_empty()) {
            let all: Vec<String> = conditions.iter().map(|c| c.to_string()).collect();
            return Err(error(format!(
                "--where {}: no measurement point is left",
                all.join(",")
            )));
        }
        self.series.retain(|s| !s.points.is_empty());
        Ok(self)
    }

    /// An experiment without parameters or measurements is an error.
    fn checked(self) -> Result<Experiment, DataError> {
        let error = |message: &str| DataError::File {
            file: self.source.clone(),
            message: message.to_string(),
        };
        if self.parameters.is_empty() {
            return Err(error("no parameters (PARAMETER)"));
        }
        if self.series.iter().all(|s| s.points.is_empty()) {
            return Err(error("no measurements"));
        }
        Ok(self)
    }
}

/// Whether `text` is an Extra-P file (by its content, as the module says).
pub fn detect(text: &str) -> bool {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    match first {
        Some(line) if line.starts_with('{') => true,
        Some(line) => {
            let word = line.split_whitespace().next().unwrap_or("");
            SECTIONS.contains(&word)
        }
        None => false,
    }
}

/// Whether the file at `path` is an Extra-P file, from its first 64 KiB (false if unreadable:
/// reading it properly then reports why). An experiment Extra-P saved is one too, so that
/// [`read`] says it is not read.
pub fn detect_file(path: &Path) -> bool {
    head(path).is_some_and(|head| saved(&head) || detect(&String::from_utf8_lossy(&head)))
}

/// The first 64 KiB of the file at `path`, if it can be read.
fn head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(64 << 10).read_to_end(&mut head));
    read.ok().map(|_| head)
}

/// Whether `head` begins an experiment Extra-P saved: its `.extra-p` files are ZIP archives
/// holding `experiment.json`, and Extra-P 3's binary experiments carry `EXTRAP_EXPERIMENT`
/// in their first bytes.
fn saved(head: &[u8]) -> bool {
    let holds = |bytes: &[u8], name: &[u8]| bytes.windows(name.len()).any(|w| w == name);
    (head.starts_with(b"PK\x03\x04") && holds(head, b"experiment.json"))
        || holds(&head[..head.len().min(64)], b"EXTRAP_EXPERIMENT")
}

/// Parses an Extra-P file's text in whichever format it is; `source` names it in errors.
pub fn parse(source: &str, text: &str) -> Result<Experiment, DataError> {
    let experiment = if text.trim_start().starts_with('{') {
        json::parse(source, text)?
    } else {
        text::parse(source, text)?
    };
    experiment.checked()
}

/// Reads and parses the Extra-P file at `path`.
pub fn read(path: &Path) -> Result<Experiment, DataError> {
    let file = path.display().to_string();
    if head(path).is_some_and(|head| saved(&head)) {
        return Err(DataError::File {
            file,
            message: "an experiment saved by Extra-P (its own format) is not read: give lca the \
                      measurement files it was made from (Extra-P's text, JSON, JSON Lines or \
                      TALPAS input, docs/extrap.md)"
                .into(),
        });
    }
    let text =
        files::input::read_text(path, "Extra-P file", MAX_FILE).map_err(|e| DataError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
    parse(&file, &text)
}

/// A finite number from text, or a message naming the field.
fn number(field: &str, text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(format!(
            "{field}: expected a finite number, found '{}'",
            crate::observations::excerpt(text)
        )),
    }
}
