//! Reading a datafile as a stream of lines, each at most [`MAX_LINE`] bytes, into a [`Table`]:
//! memory grows with the rows kept, never with a line, and an input that never ends a line
//! (`/dev/zero`) stops at the first one.

use super::{Cell, Col, DataError, Datafile, Row, Table, excerpt};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{BufRead, ErrorKind};

/// The longest line, in bytes, without its newline: a row of `pp -l` is about 200.
pub const MAX_LINE: usize = 64 * 1024;

/// The most columns a datafile may have: a row of `pp -l` has about 15.
pub const MAX_COLUMNS: usize = 10_000;
const _: () = assert!(MAX_COLUMNS <= Col::MAX as usize + 1);

/// Reads rows from `input`; `source` names it in errors.
pub(super) fn read(source: &str, mut input: impl BufRead) -> Result<Datafile, DataError> {
    let mut table = Builder::default();
    let mut form = None;
    let mut buf = Vec::new();
    for line in 1.. {
        let error = |message: String| DataError::line(source, line, message);
        let ended = match next_line(&mut input, &mut buf) {
            Ok(Some(ended)) => ended,
            Ok(None) => break,
            Err(Next::TooLong) => {
                return Err(error(format!(
                    "the line is longer than {MAX_LINE} bytes (a datafile holds one run per line)"
                )));
            }
            Err(Next::Io(e)) => {
                return Err(DataError::Io {
                    file: source.into(),
                    message: format!("line {line}: {e}"),
                });
            }
        };
        let mut bytes = buf.as_slice();
        if line == 1 {
            // A UTF-8 byte-order mark (editors on some systems write one) is not part of a name.
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let text = std::str::from_utf8(bytes).map_err(|_| error("not valid UTF-8 text".into()))?;
        let content = text.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if !ended {
            return Err(error(
                "the last line has no newline at its end, so it may be a row cut short (an \
                 append that did not finish); it was not read: remove it, or end it with a \
                 newline if it is whole"
                    .into(),
            ));
        }
        let form = form.get_or_insert_with(|| match content.split_whitespace().next() {
            Some(token) if token.contains('=') => Form::KeyValue,
            _ => Form::Csv(Vec::new()),
        });
        match form {
            Form::KeyValue => key_value(source, line, text, &mut table)?,
            Form::Csv(header) => csv(source, line, text, header, &mut table)?,
        }
    }
    Ok(table.finish(source))
}

/// The cells of `rows` (rows of `data`) read again into a table of their own.
pub(super) fn subset<'a>(data: &Datafile, rows: impl Iterator<Item = &'a Row>) -> Datafile {
    let mut table = Builder::default();
    for row in rows {
        table.start(row.line);
        for &col in &data.table.cols[row.start..row.end] {
            let Some(cell) = data.get(row, col as usize) else {
                continue;
            };
            let name = &data.table.columns[col as usize];
            let col = table
                .column(name)
                .expect("no more columns than its datafile");
            table.push(col, cell);
        }
        table.end();
    }
    table.finish(data.source())
}

/// The two forms; a CSV file's header (column indices) once read.
enum Form {
    KeyValue,
    Csv(Vec<Col>),
}

/// Why no line came back.
enum Next {
    TooLong,
    Io(std::io::Error),
}

/// Reads one line into `buf` without its newline: `Some(true)` for a line ended by a newline,
/// `Some(false)` for a last line without one, `None` at the end of the input.
fn next_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> Result<Option<bool>, Next> {
    buf.clear();
    loop {
        let available = match input.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Next::Io(e)),
        };
        if available.is_empty() {
            return Ok((!buf.is_empty()).then_some(false));
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let chunk = &available[..newline.unwrap_or(available.len())];
        if buf.len() + chunk.len() > MAX_LINE {
            return Err(Next::TooLong);
        }
        buf.extend_from_slice(chunk);
        let used = chunk.len() + usize::from(newline.is_some());
        input.consume(used);
        if newline.is_some() {
            return Ok(Some(true));
        }
    }
}

/// One line of the `key=value` form: a row if it has tokens.
fn key_value(source: &str, line: usize, text: &str, table: &mut Builder) -> Result<(), DataError> {
    let error = |message: String| Err(DataError::line(source, line, message));
    table.start(line);
    for token in text.split('#').next().unwrap_or("").split_whitespace() {
        let Some((key, value)) = token.split_once('=') else {
            return error(format!("token '{}' is not key=value", excerpt(token)));
        };
        if key.is_empty() {
            return error(format!("token '{}' has an empty key", excerpt(token)));
        }
        if value.is_empty() {
            return error(format!("field '{}' has an empty value", excerpt(key)));
        }
        let col = table
            .column(key)
            .map_err(|m| DataError::line(source, line, m))?;
        if !table.mark(col) {
            return error(format!("field '{}' is given twice", excerpt(key)));
        }
        let cell = Cell::parse(source, line, key, value)?;
        table.push(col, cell);
    }
    table.end();
    Ok(())
}

/// One line of the CSV form: the header if `header` is empty, else a row as wide as it.
fn csv(
    source: &str,
    line: usize,
    text: &str,
    header: &mut Vec<Col>,
    table: &mut Builder,
) -> Result<(), DataError> {
    let error = |message: String| Err(DataError::line(source, line, message));
    let fields = match fields(text) {
        Ok(fields) => fields,
        Err(column) => {
            return error(format!(
                "column {column} has a line break (one run per line)"
            ));
        }
    };
    if fields.iter().all(|f| f.is_empty()) {
        return Ok(());
    }
    if header.is_empty() {
        for (j, name) in fields.iter().enumerate() {
            if name.is_empty() {
                return error(format!("column {} of the header has no name", j + 1));
            }
            let col = table
                .column(name)
                .map_err(|m| DataError::line(source, line, m))?;
            if header.contains(&col) {
                let name = excerpt(name);
                return error(format!("column '{name}' appears twice in the header"));
            }
            header.push(col);
        }
        return Ok(());
    }
    if fields.len() != header.len() {
        let (want, found) = (header.len(), fields.len());
        return error(format!(
            "expected {want} fields as in the header, found {found}"
        ));
    }
    table.start(line);
    for (value, &col) in fields.iter().zip(header.iter()) {
        if !value.is_empty() {
            let cell = Cell::parse(source, line, &table.columns[col as usize], value)?;
            table.push(col, cell);
        }
    }
    table.end();
    Ok(())
}

/// The trimmed fields of a CSV line: `,` separates them, a field that starts with `"` is quoted
/// (`""` is a quote inside it). A quote still open at the end of the line is an error naming
/// its (1-based) column: the field would go on past the line break.
fn fields(text: &str) -> Result<Vec<Cow<'_, str>>, usize> {
    let mut fields = Vec::new();
    let mut rest = text;
    loop {
        let column = fields.len() + 1;
        let start = rest.trim_start();
        let field = if let Some(quoted) = start.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let after = loop {
                match chars.next() {
                    None => return Err(column),
                    Some((i, '"')) if quoted[i + 1..].starts_with('"') => {
                        value.push('"');
                        chars.next();
                    }
                    Some((i, '"')) => break &quoted[i + 1..],
                    Some((_, c)) => value.push(c),
                }
            };
            // Anything between the closing quote and the comma belongs to the field.
            let end = after.find(',').unwrap_or(after.len());
            value.push_str(&after[..end]);
            rest = &after[end..];
            Cow::Owned(value.trim().to_string())
        } else {
            let end = start.find(',').unwrap_or(start.len());
            rest = &start[end..];
            Cow::Borrowed(start[..end].trim())
        };
        fields.push(field);
        match rest.strip_prefix(',') {
            Some(next) => rest = next,
            None => return Ok(fields),
        }
    }
}

/// The table as it is read: columns and interned texts by name, and which columns the
/// current row has.
#[derive(Default)]
struct Builder {
    columns: Vec<String>,
    index: HashMap<String, Col>,
    texts: HashMap<String, u64>,
    table: Table,
    rows: Vec<Row>,
    /// For each column, the number (1-based) of the last row that has it.
    seen: Vec<usize>,
    row: Row,
}

impl Builder {
    /// The index of the column `name`, added if new.
    fn column(&mut self, name: &str) -> Result<Col, String> {
        if let Some(&col) = self.index.get(name) {
            return Ok(col);
        }
        if self.columns.len() >= MAX_COLUMNS {
            return Err(format!(
                "'{}' would be column {}; a datafile has at most {MAX_COLUMNS}",
                excerpt(name),
                MAX_COLUMNS + 1
            ));
        }
        let col = self.columns.len() as Col;
        self.columns.push(name.to_string());
        self.index.insert(name.to_string(), col);
        self.seen.push(0);
        Ok(col)
    }

    fn start(&mut self, line: usize) {
        let at = self.table.cols.len();
        self.row = Row {
            line,
            start: at,
            end: at,
        };
    }

    /// Marks `col` as given in the current row; false if it already was.
    fn mark(&mut self, col: Col) -> bool {
        let number = self.rows.len() + 1;
        let seen = &mut self.seen[col as usize];
        std::mem::replace(seen, number) != number
    }

    fn push(&mut self, col: Col, cell: Cell<'_>) {
        let bits = match cell {
            Cell::Number(x) => x.to_bits(),
            Cell::Text(text) => {
                let next = self.table.texts.len() as u64;
                let index = *self.texts.entry(text.to_string()).or_insert(next);
                if index == next {
                    self.table.texts.push(text.to_string());
                }
                super::TEXT | index
            }
        };
        self.table.cols.push(col);
        self.table.values.push(bits);
    }

    /// Ends the current row: kept if it has cells.
    fn end(&mut self) {
        self.row.end = self.table.cols.len();
        if self.row.end > self.row.start {
            self.rows.push(self.row.clone());
        }
    }

    fn finish(mut self, source: &str) -> Datafile {
        self.table.columns = self.columns;
        self.table.cols.shrink_to_fit();
        self.table.values.shrink_to_fit();
        self.rows.shrink_to_fit();
        Datafile::new(source, std::sync::Arc::new(self.table), self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subset_is_its_rows_read_alone() {
        let data = Datafile::parse("t", "a=1 b=x\nb=y c=2 a=3\n# note\nc=4 a=5 b=x\n").unwrap();
        let alone = Datafile::parse("t", "\nb=y c=2 a=3\n\nc=4 a=5 b=x\n").unwrap();
        assert_eq!(data.subset(&[1, 2]), alone);
        assert_eq!(data.subset(&[1, 2]).columns(), ["b", "c", "a"]);
    }

    #[test]
    fn csv_fields_trim_and_unquote() {
        let f = |text: &str| fields(text).map(|v| v.iter().map(|s| s.to_string()).collect());
        let ok = |v: &[&str]| Ok::<Vec<String>, usize>(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(f(" a , b,c "), ok(&["a", "b", "c"]));
        assert_eq!(f("1,\"d,p\","), ok(&["1", "d,p", ""]));
        assert_eq!(f("\"say \"\"hi\"\"\" ,x"), ok(&["say \"hi\"", "x"]));
        assert_eq!(f(""), ok(&[""]));
        assert_eq!(f("p,\"l"), Err(2));
    }

    #[test]
    fn lines_are_bounded_and_the_last_may_lack_a_newline() {
        let mut input: &[u8] = b"ab\r\ncd";
        let mut buf = Vec::new();
        assert!(matches!(next_line(&mut input, &mut buf), Ok(Some(true))));
        assert_eq!(buf, b"ab\r");
        assert!(matches!(next_line(&mut input, &mut buf), Ok(Some(false))));
        assert_eq!(buf, b"cd");
        assert!(matches!(next_line(&mut input, &mut buf), Ok(None)));
        let long = vec![b'x'; MAX_LINE + 1];
        let mut input = std::io::BufReader::with_capacity(1000, long.as_slice());
        assert!(matches!(
            next_line(&mut input, &mut buf),
            Err(Next::TooLong)
        ));
        assert!(buf.len() <= MAX_LINE);
    }
}
