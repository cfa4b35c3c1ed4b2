//! Parsing the two forms of a datafile into cells, with the line of each row.

use super::{Cell, DataError, Datafile, Row};
use std::collections::HashMap;

/// Parses the `key=value` form: one row per line that has tokens.
pub(super) fn key_value(source: &str, text: &str) -> Result<Datafile, DataError> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let (mut columns, mut rows) = (Vec::new(), Vec::new());
    for (line, raw) in (1..).zip(text.lines()) {
        let error = |message: String| Err(DataError::line(source, line, message));
        let mut cells: Vec<Option<Cell>> = Vec::new();
        for token in raw.split('#').next().unwrap_or("").split_whitespace() {
            let Some((key, value)) = token.split_once('=') else {
                return error(format!("token '{token}' is not key=value"));
            };
            if key.is_empty() {
                return error(format!("token '{token}' has an empty key"));
            }
            if value.is_empty() {
                return error(format!("field '{key}' has an empty value"));
            }
            let col = *index.entry(key).or_insert_with(|| {
                columns.push(key.to_string());
                columns.len() - 1
            });
            cells.resize(cells.len().max(col + 1), None);
            if cells[col].is_some() {
                return error(format!("field '{key}' is given twice"));
            }
            cells[col] = Some(Cell::parse(source, line, key, value)?);
        }
        if !cells.is_empty() {
            rows.push(Row { line, cells });
        }
    }
    Ok(Datafile::new(source, columns, rows))
}

/// Parses the CSV form: the first record is the header.
pub(super) fn csv(source: &str, text: &str) -> Result<Datafile, DataError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let (mut columns, mut rows) = (Vec::<String>::new(), Vec::new());
    let bytes = text.as_bytes();
    let newlines: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == b'\n').collect();
    let line_of = |p: &csv::Position| record_line(bytes, &newlines, p.byte());
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(1, line_of);
            DataError::line(source, line, format!("invalid CSV: {e}"))
        })?;
        let line = record.position().map_or(1, line_of);
        let error = |message: String| Err(DataError::line(source, line, message));
        // Blank lines, and comments that csv does not see because of leading blanks.
        if record.iter().all(str::is_empty) || record.get(0).is_some_and(|f| f.starts_with('#')) {
            continue;
        }
        if let Some(j) = record.iter().position(|f| f.contains(['\n', '\r'])) {
            let column = j + 1;
            return error(format!(
                "column {column} has a line break (one run per line)"
            ));
        }
        if columns.is_empty() {
            for (j, name) in record.iter().enumerate() {
                if name.is_empty() {
                    return error(format!("column {} of the header has no name", j + 1));
                }
                if columns.iter().any(|c| c == name) {
                    return error(format!("column '{name}' appears twice in the header"));
                }
                columns.push(name.to_string());
            }
        } else if record.len() != columns.len() {
            let (want, found) = (columns.len(), record.len());
            return error(format!(
                "expected {want} fields as in the header, found {found}"
            ));
        } else {
            let cell = |(value, name): (&str, &String)| {
                (!value.is_empty())
                    .then(|| Cell::parse(source, line, name, value))
                    .transpose()
            };
            let cells = record.iter().zip(&columns).map(cell);
            let cells = cells.collect::<Result<_, _>>()?;
            rows.push(Row { line, cells });
        }
    }
    Ok(Datafile::new(source, columns, rows))
}

/// The 1-based line where a CSV record starts. csv reports where the previous record ended,
/// before the blank and comment lines that it skips; skip them the same way.
fn record_line(bytes: &[u8], newlines: &[usize], start: u64) -> usize {
    let line_of = |at: usize| newlines.partition_point(|&n| n < at);
    let mut at = usize::try_from(start).map_or(bytes.len(), |s| s.min(bytes.len()));
    loop {
        match bytes.get(at) {
            Some(b'\r' | b'\n') => at += 1,
            Some(b'#') => at = newlines.get(line_of(at)).map_or(bytes.len(), |n| n + 1),
            _ => return 1 + line_of(at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_record_lines_skip_blank_and_comment_lines() {
        let text = b"p\n\n# c\n\r\n1\n2";
        let newlines: Vec<usize> = (0..text.len()).filter(|&i| text[i] == b'\n').collect();
        let lines: Vec<usize> = [0, 2, 9, 11, 99]
            .map(|b| record_line(text, &newlines, b))
            .into();
        assert_eq!(lines, [1, 5, 5, 6, 6]);
    }
}
