//! What every case must satisfy besides not panicking: error messages and warnings are one
//! short line, and a datafile row's arithmetic holds (`total = p × wall`, the categories sum to
//! `total`, the sub-categories to their parent, nothing negative or NaN), also when the row is
//! read back as a datafile.

use std::fmt;

/// The longest error message or warning accepted, in bytes.
pub const MAX_MESSAGE: usize = 300;

/// Relative tolerance of the row arithmetic.
const TOLERANCE: f64 = 1e-9;

/// Why a case failed: a kind (what the summary groups by) and the details of this case.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// `panic`, `multiline-error`, `long-error`, `row-arithmetic`, ...
    pub kind: String,
    /// What happened, one line, at most a few hundred bytes.
    pub detail: String,
}

impl Failure {
    /// A failure of `kind`; `detail` is cut to one short line.
    pub fn new(kind: impl Into<String>, detail: impl AsRef<str>) -> Failure {
        Failure {
            kind: kind.into(),
            detail: excerpt(detail.as_ref()),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

/// The first 160 characters of `s` with control characters escaped.
pub fn excerpt(s: &str) -> String {
    let mut out: String = s.chars().take(160).flat_map(char::escape_debug).collect();
    if s.chars().count() > 160 {
        out.push_str(&format!("... ({} bytes)", s.len()));
    }
    out
}

/// An error message or warning (`what`) must be one line of at most [`MAX_MESSAGE`] bytes.
pub fn one_line(what: &str, message: &str) -> Result<(), Failure> {
    if message.trim_end_matches('\n').contains('\n') {
        return Err(Failure::new(format!("multiline-{what}"), message));
    }
    if message.len() > MAX_MESSAGE {
        return Err(Failure::new(format!("long-{what}"), message));
    }
    if message.trim().is_empty() {
        return Err(Failure::new(format!("empty-{what}"), message));
    }
    Ok(())
}

/// A report printed with exit 0 has no `inf` or `NaN` in it (issue 37, item 5): a word that
/// reads as a non-finite number, or that says `inf` or `nan`, is a failure of `kind`.
pub fn finite_numbers(kind: &str, report: &str) -> Result<(), Failure> {
    let bad = report
        .split(|c: char| c.is_whitespace() || "(),;:=%±[]".contains(c))
        .find(|w| {
            let lower = w.to_ascii_lowercase();
            let bare = lower.trim_start_matches(['+', '-']);
            bare == "inf"
                || bare == "nan"
                || bare == "infinity"
                || w.parse::<f64>().is_ok_and(|v| !v.is_finite())
        });
    match bad {
        Some(w) => Err(Failure::new(kind, format!("'{w}' in: {report}"))),
        None => Ok(()),
    }
}

/// `S.NNNNNNNNN` seconds as integer nanoseconds (how `pp` prints them).
fn nanoseconds(value: &str) -> Option<u128> {
    let (s, ns) = value.split_once('.')?;
    if ns.len() != 9 || !s.bytes().chain(ns.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.parse::<u128>().ok()? * 1_000_000_000 + ns.parse::<u128>().ok()?)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOLERANCE * a.abs().max(b.abs())
}

/// The computed fields of a `pp -l` row, its categories and sub-categories with their parent.
const CATEGORIES: [&str; 6] = ["li", "ip", "sl", "cl", "rc", "pc"];
const SUBCATEGORIES: [(&str, &str); 2] = [("rc.cpu", "rc"), ("rc.comm", "rc")];

/// Checks a datafile row printed by `pp -l`, then reads it back as a datafile and checks that
/// every field comes back with the value written.
pub fn row(row: &str) -> Result<(), Failure> {
    if row.contains('\n') {
        return Err(Failure::new("row-multiline", row));
    }
    let fields: Vec<(&str, &str)> = row
        .split(' ')
        .map(|f| f.split_once('=').unwrap_or((f, "")))
        .collect();
    let get = |key: &str| fields.iter().rev().find(|(k, _)| *k == key).map(|f| f.1);
    let ns = |key: &str| {
        get(key)
            .and_then(nanoseconds)
            .ok_or_else(|| Failure::new("row-value", format!("{key}: {:?} in {row}", get(key))))
    };
    let p: u128 = get("p")
        .and_then(|p| p.parse().ok())
        .filter(|&p| p > 0)
        .ok_or_else(|| Failure::new("row-value", format!("p in {row}")))?;
    let (wall, total) = (ns("wall")?, ns("total")?);
    let mismatch = |what: &str, a: u128, b: u128| {
        if close(a as f64, b as f64) {
            Ok(())
        } else {
            Err(Failure::new(
                "row-arithmetic",
                format!("{what}: {a} ns != {b} ns in {row}"),
            ))
        }
    };
    mismatch("total vs p*wall", total, p * wall)?;
    let mut sum = 0;
    for c in CATEGORIES {
        sum += ns(c)?;
    }
    mismatch("sum of categories vs total", sum, total)?;
    for parent in CATEGORIES {
        let subs: Vec<&str> = SUBCATEGORIES
            .iter()
            .filter(|(_, p)| *p == parent)
            .map(|(k, _)| *k)
            .collect();
        if !subs.is_empty() {
            let mut sum = 0;
            for s in subs {
                sum += ns(s)?;
            }
            mismatch(&format!("sub-categories vs {parent}"), sum, ns(parent)?)?;
        }
    }
    reread(row, &fields)
}

/// The row read by `fit`'s datafile reader gives back every field as written.
fn reread(row: &str, fields: &[(&str, &str)]) -> Result<(), Failure> {
    let data = fit::Datafile::parse("row.dat", &format!("{row}\n"))
        .map_err(|e| Failure::new("row-reread", format!("{e} for {row}")))?;
    let [_] = data.rows() else {
        return Err(Failure::new("row-reread", format!("not one row: {row}")));
    };
    for (key, value) in fields {
        let cell = data.cell(0, key).map(|c| c.to_string());
        let same = match (&cell, value.parse::<f64>()) {
            (Some(c), Ok(v)) => c.parse::<f64>().is_ok_and(|c| close(c, v)),
            (Some(c), Err(_)) => c == value,
            (None, _) => false,
        };
        if !same {
            return Err(Failure::new(
                "row-reread",
                format!("{key}={value} reads back as {cell:?} in {row}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "prog=x p=2 wall=1.000000000 total=2.000000000 li=0.500000000 \
        ip=0.000000000 sl=0.000000000 cl=0.000000000 rc=0.250000000 pc=1.250000000 \
        rc.cpu=0.200000000 rc.comm=0.050000000";

    #[test]
    fn a_consistent_row_passes() {
        assert_eq!(row(GOOD), Ok(()));
    }

    #[test]
    fn each_broken_sum_is_caught() {
        for (from, to) in [
            ("total=2.000000000", "total=2.000010000"),
            ("li=0.500000000", "li=0.400000000"),
            ("rc.cpu=0.200000000", "rc.cpu=0.100000000"),
        ] {
            let bad = GOOD.replace(from, to);
            assert_eq!(row(&bad).unwrap_err().kind, "row-arithmetic", "{bad}");
        }
        assert_eq!(
            row(&GOOD.replace("pc=1.250000000", "pc=NaN"))
                .unwrap_err()
                .kind,
            "row-value"
        );
        assert_eq!(
            row(&GOOD.replace("prog=x", "prog=inf")).unwrap_err().kind,
            "row-reread"
        );
    }

    #[test]
    fn messages_are_one_short_line() {
        assert!(one_line("error", "f:1: bad").is_ok());
        assert_eq!(
            one_line("error", "a\nb").unwrap_err().kind,
            "multiline-error"
        );
        assert_eq!(
            one_line("error", &"x".repeat(301)).unwrap_err().kind,
            "long-error"
        );
    }
}
