//! Datafiles (docs/datafile.md) and the observations selected from them for fitting.
//!
//! A datafile holds one run per line, either as whitespace-separated `key=value` tokens (what
//! `pp -l` appends) or as CSV with a header row. The form is detected from the first line that
//! is neither blank nor a comment: `key=value` if its first token contains `=`, CSV otherwise.
//! A [`Datafile`] keeps every row (replicates included); [`Datafile::observations`] turns it
//! into the [`Observations`] that fitting consumes, checking that nothing else varies.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use crate::condition::Condition;

mod parse;

pub use parse::{MAX_COLUMNS, MAX_LINE};

/// The outputs of a run (docs/datafile.md); columns named so, or so followed by `.` (like
/// `rc.cpu`), are responses and never count as factors that must be held fixed.
pub const RESPONSE_KEYS: [&str; 8] = ["wall", "total", "li", "ip", "sl", "cl", "rc", "pc"];

/// Columns that say which run a row is rather than what it measured: never factors, free to
/// vary between rows. `lca design` writes `run` and `replicate`, `lca study` writes
/// `replicate`; a row profiled from `pp whatif`'s predicted log has `predicted` (what was
/// predicted) and `predicted_from` (from which log), and a model says how many of its rows
/// were predicted ([`PredictedRows`](crate::performance::PredictedRows)).
pub const RUN_COLUMNS: [&str; 4] = ["run", "replicate", "predicted", "predicted_from"];

/// The column that marks a predicted row (`pp whatif` writes it into its log's header).
pub const PREDICTED: &str = "predicted";

/// Whether `name` is a response column: a key of [`RESPONSE_KEYS`] or a sub-category of one.
pub fn is_response_column(name: &str) -> bool {
    let sub = |rest: &str| rest.is_empty() || rest.starts_with('.');
    RESPONSE_KEYS
        .iter()
        .any(|k| name.strip_prefix(k).is_some_and(sub))
}

/// Numbers closer than this relative distance are the same value (`--at`, `--where`, levels).
const TOLERANCE: f64 = 1e-9;

pub(crate) fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOLERANCE * a.abs().max(b.abs())
}

/// Every way a datafile, or a selection from it, can be wrong. Display is one line that starts
/// with `source:line:` where the line is known and `source:` otherwise.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The file cannot be read.
    #[error("{file}: cannot read the file: {message}")]
    Io { file: String, message: String },
    /// Bad content on a line: not `key=value`, an empty key or value, a key given twice, a CSV
    /// row of the wrong width, invalid UTF-8, or a field that is not a finite number.
    #[error("{file}:{line}: {message}")]
    Line {
        file: String,
        line: usize,
        message: String,
    },
    /// A problem with the file as a whole or with a selection from it: no data rows, an unknown
    /// column, a condition that no row meets, a factor that varies, inconsistent vectors.
    #[error("{file}: {message}")]
    File { file: String, message: String },
    /// A condition from the command line that is not `key=value`.
    #[error("condition '{text}': {message}")]
    Condition { text: String, message: String },
}

impl DataError {
    fn line(file: &str, line: usize, message: String) -> Self {
        DataError::Line {
            file: file.into(),
            line,
            message,
        }
    }

    fn file(file: &str, message: String) -> Self {
        DataError::File {
            file: file.into(),
            message,
        }
    }
}

/// One cell of a datafile: a finite number or any other text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// A value that `f64::from_str` accepts and that is finite.
    Number(f64),
    /// Anything else, like `dp` in `impl=dp`.
    Text(&'a str),
}

impl<'a> Cell<'a> {
    /// The number, if this is one.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Cell::Number(x) => Some(*x),
            Cell::Text(_) => None,
        }
    }

    /// A number if the text parses as a finite float, else text (for conditions).
    pub(crate) fn lenient(value: &'a str) -> Cell<'a> {
        match value.parse::<f64>() {
            Ok(x) if x.is_finite() => Cell::Number(x),
            _ => Cell::Text(value),
        }
    }

    /// A cell of the file: NaN and infinities are errors, not text.
    fn parse(file: &str, line: usize, field: &str, value: &'a str) -> Result<Cell<'a>, DataError> {
        match value.parse::<f64>() {
            Ok(x) if !x.is_finite() => Err(DataError::line(
                file,
                line,
                format!(
                    "field '{}': expected a finite number, found '{}'",
                    excerpt(field),
                    excerpt(value)
                ),
            )),
            _ => Ok(Cell::lenient(value)),
        }
    }
}

impl fmt::Display for Cell<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cell::Number(x) => write!(f, "{x}"),
            Cell::Text(s) => f.write_str(s),
        }
    }
}

/// At most 40 characters of `text` for a message, `…` marking a cut; control characters are
/// escaped so that a message stays one line.
pub fn excerpt(text: &str) -> String {
    files::quote::excerpt(text, 40)
}

/// A value's bits in a [`Table`] when it is text: a quiet NaN (never a stored number, since
/// numbers are finite) whose low bits index the table's texts.
const TEXT: u64 = 0x7FF8_0000_0000_0000;

/// A column's index in a [`Table`] (there are at most [`MAX_COLUMNS`]).
type Col = u16;

/// Every cell of a datafile, stored once and shared by the selections made from it: for
/// each cell its column and its value (a finite `f64`, or [`TEXT`] and the index of an
/// interned text), rows being ranges of cells. 10 bytes a cell.
#[derive(Debug, Default, PartialEq)]
struct Table {
    columns: Vec<String>,
    texts: Vec<String>,
    cols: Vec<Col>,
    values: Vec<u64>,
}

/// One run: its line in the file and where its cells are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// The 1-based line of the file where the row starts.
    pub line: usize,
    start: usize,
    end: usize,
}

/// A parsed datafile: its source name, column names in first-seen order, and its rows (all of
/// the file's, or those a [`filter`](Self::filter) kept).
#[derive(Debug, Clone, PartialEq)]
pub struct Datafile {
    source: String,
    table: Arc<Table>,
    rows: Vec<Row>,
    /// Text columns the user let take several values ([`filter`](Self::filter) with `in` or
    /// `!=`: `role in model,decide`): they are neither factors nor held to one value.
    mixed: Vec<String>,
}

impl Datafile {
    fn new(source: &str, table: Arc<Table>, rows: Vec<Row>) -> Datafile {
        let source = source.to_string();
        Datafile {
            source,
            table,
            rows,
            mixed: Vec::new(),
        }
    }

    /// Whether `column` is a text column the user's conditions let take several values.
    pub fn is_mixed(&self, column: &str) -> bool {
        self.mixed.iter().any(|c| c == column)
    }

    /// Parses `text`, detecting the form. `source` is the name used in errors (the path as the
    /// user typed it). Never panics.
    pub fn parse(source: &str, text: &str) -> Result<Datafile, DataError> {
        Datafile::from_reader(source, text.as_bytes())
    }

    /// Reads and parses the file at `path` as a stream, a line of at most
    /// [`MAX_LINE`](parse::MAX_LINE) bytes at a time; errors name the path as given.
    pub fn read(path: &Path) -> Result<Datafile, DataError> {
        let file = path.display().to_string();
        let input = std::fs::File::open(path).map_err(|e| DataError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let input = std::io::BufReader::with_capacity(parse::MAX_LINE, input);
        Datafile::from_reader(&file, input)
    }

    /// Reads and parses a datafile from `input`, detecting the form from the first line that is
    /// neither blank nor a comment. A line longer than [`MAX_LINE`](parse::MAX_LINE) bytes, a
    /// last line without a newline (a row cut short), and more than
    /// [`MAX_COLUMNS`](parse::MAX_COLUMNS) columns are errors. Never panics.
    pub fn from_reader(source: &str, input: impl std::io::BufRead) -> Result<Datafile, DataError> {
        let data = parse::read(source, input)?;
        if data.rows.is_empty() {
            return Err(DataError::file(source, "no data rows".into()));
        }
        Ok(data)
    }

    /// The name used in errors.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Column names in the order they were first seen.
    pub fn columns(&self) -> &[String] {
        &self.table.columns
    }

    /// All rows, in file order, replicates kept.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The cell of row `row` (an index into [`rows`](Self::rows)) in the named column.
    pub fn cell(&self, row: usize, column: &str) -> Option<Cell<'_>> {
        self.get(self.rows.get(row)?, self.column(column)?)
    }

    /// The cell of `row` in column `col` (an index into [`columns`](Self::columns)).
    fn get(&self, row: &Row, col: usize) -> Option<Cell<'_>> {
        let table = &*self.table;
        let cols = table.cols.get(row.start..row.end)?;
        // Rows mostly hold the columns in order: look where the column would be first.
        let at = match cols.get(col) {
            Some(&c) if c as usize == col => col,
            _ => cols.iter().position(|&c| c as usize == col)?,
        };
        let bits = table.values[row.start + at];
        let x = f64::from_bits(bits);
        if x.is_finite() {
            return Some(Cell::Number(x));
        }
        let index = usize::try_from(bits & !TEXT).ok()?;
        table.texts.get(index).map(|t| Cell::Text(t))
    }

    /// The rows at `rows` (indices into [`rows`](Self::rows)), in that order, as a datafile of
    /// their own, as if the file had held only their lines: its columns are those these rows
    /// have, in the order first seen among them, and each row keeps its line.
    pub fn subset(&self, rows: &[usize]) -> Datafile {
        let mut data = parse::subset(self, rows.iter().filter_map(|&r| self.rows.get(r)));
        data.mixed = self.mixed.clone();
        data
    }

    /// The columns that hold at least one number.
    pub fn numeric_columns(&self) -> Vec<&str> {
        let mut numeric = vec![false; self.table.columns.len()];
        for row in &self.rows {
            for (&col, &bits) in self.table.cols[row.start..row.end]
                .iter()
                .zip(&self.table.values[row.start..row.end])
            {
                if f64::from_bits(bits).is_finite() {
                    numeric[col as usize] = true;
                }
            }
        }
        let columns = self.table.columns.iter().zip(numeric);
        columns.filter(|c| c.1).map(|c| c.0.as_str()).collect()
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.table.columns.iter().position(|c| c == name)
    }

    /// The index of a column, or an error naming `what` and listing the candidates.
    fn find(&self, what: &str, name: &str, numeric: bool) -> Result<usize, DataError> {
        self.column(name).ok_or_else(|| {
            let known = match (numeric, self.numeric_columns()) {
                (true, list) if list.is_empty() => "there are no numeric columns".to_string(),
                (true, list) => format!("the numeric columns are: {}", names(&list)),
                (false, _) => format!("the columns are: {}", names(self.columns())),
            };
            let name = excerpt(name);
            DataError::file(&self.source, format!("unknown {what} '{name}'; {known}"))
        })
    }

    /// Keeps the `rows` whose cell in column `key` satisfies `keep`; none left is an error that
    /// lists the values the key takes in `rows`.
    fn select<'a>(
        &self,
        rows: Vec<&'a Row>,
        option: &str,
        condition: &Condition,
        keep: impl Fn(Cell<'_>) -> bool,
    ) -> Result<(usize, Vec<&'a Row>), DataError> {
        let key = &condition.key;
        let col = self.find(&format!("{option} key"), key, false)?;
        let kept: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|r| self.get(r, col).is_some_and(&keep))
            .collect();
        if kept.is_empty() {
            let values = self.values(&rows, col).2;
            let (key, wanted) = (excerpt(key), excerpt(&condition.spaced()));
            let message = format!("no rows with {wanted} ({option}); {key} takes {values}");
            return Err(DataError::file(&self.source, message));
        }
        Ok((col, kept))
    }

    /// Keeps the rows where every condition holds (`--where impl=dp`): equal as numbers if both
    /// sides are numbers (so `n=256` matches `256.0`), else as text. An unknown key is an error
    /// listing the columns; a condition that no row meets is an error listing the key's values.
    /// The rows' cells are shared with `self`, not copied.
    pub fn filter(&self, conditions: &[Condition]) -> Result<Datafile, DataError> {
        let mut rows: Vec<&Row> = self.rows.iter().collect();
        for condition in conditions {
            rows = self
                .select(rows, "--where", condition, |cell| condition.holds(cell))?
                .1;
        }
        let rows = rows.into_iter().cloned().collect();
        let mut data = Datafile::new(&self.source, Arc::clone(&self.table), rows);
        data.mixed = self.mixed.clone();
        for c in conditions {
            if matches!(c.op, crate::condition::Op::In | crate::condition::Op::Ne)
                && !data.is_mixed(&c.key)
            {
                data.mixed.push(c.key.clone());
            }
        }
        Ok(data)
    }

    /// Selects the observations of `response` against `factors`. `at` first keeps the rows where
    /// each named column equals the value (relative tolerance 1e-9). Every other column that is
    /// not a response column must then take a single value among the kept rows, and every kept
    /// row must hold numbers for the factors and the response.
    pub fn observations(
        &self,
        factors: &[&str],
        response: &str,
        at: &[(String, f64)],
    ) -> Result<Observations, DataError> {
        self.select_observations(factors, response, at, true)
    }

    /// The observations of `response` against `factors` in every row, whatever the other
    /// columns hold (`lca model --response`: the caller has said which columns matter). Every
    /// row must hold numbers for the factors and the response.
    pub fn response_observations(
        &self,
        factors: &[&str],
        response: &str,
    ) -> Result<Observations, DataError> {
        self.select_observations(factors, response, &[], false)
    }

    fn select_observations(
        &self,
        factors: &[&str],
        response: &str,
        at: &[(String, f64)],
        others_fixed: bool,
    ) -> Result<Observations, DataError> {
        let factor_cols: Vec<usize> = factors
            .iter()
            .map(|f| self.find("factor", f, true))
            .collect::<Result<_, _>>()?;
        let response_col = self.find("response", response, true)?;
        let mut names = [factors, &[response]].concat();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            let name = excerpt(w[0]);
            let message = format!("'{name}' is named twice among the factors and the response");
            return Err(DataError::file(&self.source, message));
        }

        let mut rows: Vec<&Row> = self.rows.iter().collect();
        let mut fixed = Vec::with_capacity(at.len());
        for (key, value) in at {
            let keep = |cell: Cell<'_>| matches!(cell, Cell::Number(x) if same(x, *value));
            let wanted = Condition::equals(key, &value.to_string());
            let (col, kept) = self.select(rows, "--at", &wanted, keep)?;
            rows = kept;
            fixed.push(col);
        }

        for (col, name) in self.columns().iter().enumerate().filter(|_| others_fixed) {
            let used = factor_cols.contains(&col) || col == response_col || fixed.contains(&col);
            if used || is_response_column(name) || RUN_COLUMNS.contains(&name.as_str()) {
                continue;
            }
            let (count, numeric, values) = self.values(&rows, col);
            if count > 1 && (numeric || !self.is_mixed(name)) {
                let name = excerpt(name);
                let fix = if numeric {
                    format!("fix it with --at {name}=VALUE")
                } else {
                    format!(
                        "fix it with --where {name}=VALUE, or mix its values with --where \
                         '{name} in A,B'"
                    )
                };
                let message = format!(
                    "factor '{name}' varies in the selected rows ({name} = {values}); {fix}"
                );
                return Err(DataError::file(&self.source, message));
            }
        }

        let number = |row: &Row, col: usize| {
            let field = excerpt(&self.columns()[col]);
            let message = match self.get(row, col) {
                Some(Cell::Number(x)) => return Ok(x),
                Some(Cell::Text(value)) => {
                    let value = excerpt(value);
                    format!("field '{field}': expected a number, found '{value}'")
                }
                None => format!("field '{field}' is missing"),
            };
            Err(DataError::line(&self.source, row.line, message))
        };
        let mut columns = vec![Vec::with_capacity(rows.len()); factors.len()];
        let mut y = Vec::with_capacity(rows.len());
        for row in &rows {
            for (column, &col) in columns.iter_mut().zip(&factor_cols) {
                column.push(number(row, col)?);
            }
            y.push(number(row, response_col)?);
        }
        if y.is_empty() {
            return Err(DataError::file(&self.source, "no rows selected".into()));
        }
        Ok(Observations {
            source: self.source.clone(),
            factors: factors.iter().map(|f| f.to_string()).collect(),
            response: response.into(),
            columns,
            y,
            lines: rows.iter().map(|r| r.line).collect(),
        })
    }

    /// The distinct values of a column among some rows, for messages: how many, whether all
    /// are numbers (or missing), and the list: numbers ascending, then text, then `(missing)`.
    fn values(&self, rows: &[&Row], col: usize) -> (usize, bool, String) {
        let (mut numbers, mut texts, mut missing) = (Vec::new(), Vec::new(), false);
        for row in rows {
            match self.get(row, col) {
                Some(Cell::Number(x)) => numbers.push(x),
                Some(Cell::Text(s)) => texts.push(s),
                None => missing = true,
            }
        }
        numbers.sort_by(f64::total_cmp);
        numbers.dedup_by(|a, b| same(*a, *b));
        texts.sort_unstable();
        texts.dedup();
        let numbers = numbers.iter().map(f64::to_string);
        let mut items: Vec<String> = numbers.chain(texts.iter().map(|s| excerpt(s))).collect();
        if missing {
            items.push("(missing)".into());
        }
        let count = items.len();
        (count, texts.is_empty(), list(items))
    }
}

/// Names for a message, each cut to an excerpt, at most a dozen.
fn names<S: AsRef<str>>(names: &[S]) -> String {
    list(names.iter().map(|n| excerpt(n.as_ref())).collect())
}

/// Items joined for a message: at most 12, else the first 10 and how many there are.
fn list(mut items: Vec<String>) -> String {
    let count = items.len();
    if count > 12 {
        items.truncate(10);
        items.push(format!("... ({count} values)"));
    }
    items.join(", ")
}

/// What fitting consumes: one response against one or more factors, with provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct Observations {
    /// The datafile the observations come from.
    pub source: String,
    /// The factor names, in the order of `columns`.
    pub factors: Vec<String>,
    /// The response name.
    pub response: String,
    /// One column per factor, each of length [`len`](Self::len).
    pub columns: Vec<Vec<f64>>,
    /// The response values.
    pub y: Vec<f64>,
    /// The datafile line of each observation.
    pub lines: Vec<usize>,
}

impl Observations {
    /// The number of observations.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Whether there are no observations.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Builds observations directly from vectors, checking that there is one column per factor,
    /// that all have the length of `y`, and that every value is finite. `lines` are `1..=len`.
    pub fn new(
        source: &str,
        factors: Vec<String>,
        response: &str,
        columns: Vec<Vec<f64>>,
        y: Vec<f64>,
    ) -> Result<Self, DataError> {
        let error = |message: String| Err(DataError::file(source, message));
        if columns.len() != factors.len() {
            let (f, c) = (factors.len(), columns.len());
            return error(format!("{f} factor names but {c} factor columns"));
        }
        let response_name = response.to_string();
        for (name, column) in factors.iter().zip(&columns).chain([(&response_name, &y)]) {
            if column.len() != y.len() {
                let (n, m) = (column.len(), y.len());
                let message = format!("'{name}' has {n} values but response '{response}' has {m}");
                return error(message);
            }
            if let Some(i) = column.iter().position(|x| !x.is_finite()) {
                let (x, i) = (column[i], i + 1);
                return error(format!(
                    "'{name}' value {x} at observation {i} is not finite"
                ));
            }
        }
        let (source, response, lines) = (source.into(), response.into(), (1..=y.len()).collect());
        Ok(Observations {
            source,
            factors,
            response,
            columns,
            y,
            lines,
        })
    }

    /// Writes the factor values of observation `row` into `out` (one per factor, in order).
    ///
    /// # Panics
    /// If `row >= len()`.
    pub fn point(&self, row: usize, out: &mut [f64]) {
        for (o, column) in out.iter_mut().zip(&self.columns) {
            *o = column[row];
        }
    }

    /// The pairs of factors (indices, the first the smaller) that vary together in every
    /// observation: each takes two levels or more, and each value of one comes with one value
    /// of the other (a weak-scaling series whose `n` grows with `p`, say). Their effects cannot
    /// be told apart on these observations.
    pub fn vary_together(&self) -> Vec<(usize, usize)> {
        // By the values' bits (`+ 0.0` makes -0 the 0 it equals): linear in the observations.
        let determines = |a: &[f64], b: &[f64]| {
            let mut seen: std::collections::HashMap<u64, f64> = std::collections::HashMap::new();
            a.iter()
                .zip(b)
                .all(|(&x, &y)| *seen.entry((x + 0.0).to_bits()).or_insert(y) == y)
        };
        let k = self.factors.len();
        let mut pairs = Vec::new();
        for f in 0..k {
            for g in f + 1..k {
                let (a, b) = (&self.columns[f], &self.columns[g]);
                if self.levels(f).len() >= 2
                    && self.levels(g).len() >= 2
                    && determines(a, b)
                    && determines(b, a)
                {
                    pairs.push((f, g));
                }
            }
        }
        pairs
    }

    /// The distinct values of factor `factor`, ascending.
    ///
    /// # Panics
    /// If `factor` is not an index into `factors`.
    pub fn levels(&self, factor: usize) -> Vec<f64> {
        let mut values = self.columns[factor].clone();
        values.sort_by(f64::total_cmp);
        values.dedup();
        values
    }
}
