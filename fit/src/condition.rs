//! A condition on a datafile column, as `--where` takes it: `impl=dp`, `p<512`, `n>=6000`,
//! `role!=validate`, `impl in dp,tp`. Equal and not-equal compare as numbers when both sides
//! are numbers (so `n=256` matches `256.0`), else as text; `<`, `<=`, `>`, `>=` take a number and
//! hold only for cells that are numbers; `in` holds when the cell equals one of its values.

use std::fmt;
use std::str::FromStr;

use crate::observations::{Cell, DataError, excerpt, same};

/// How a cell is compared with a condition's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// ` in ` a comma-separated list
    In,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::In => " in ",
        }
    }
}

/// A condition on one column, as given to `--where`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// The column name.
    pub key: String,
    /// The comparison.
    pub op: Op,
    /// The value compared with (for [`Op::In`], the values, separated by commas).
    pub value: String,
}

impl Condition {
    /// `key=value`.
    pub fn equals(key: &str, value: &str) -> Condition {
        Condition {
            key: key.into(),
            op: Op::Eq,
            value: value.into(),
        }
    }

    /// The value of a `key=value` condition (None for any other comparison).
    pub fn equal_value(&self) -> Option<&str> {
        (self.op == Op::Eq).then_some(self.value.as_str())
    }

    /// The condition as an `--at` pair: `key=value` with a finite number.
    pub fn to_at(&self) -> Result<(String, f64), DataError> {
        match (self.op, Cell::lenient(&self.value)) {
            (Op::Eq, Cell::Number(x)) => Ok((self.key.clone(), x)),
            (op, _) => Err(DataError::Condition {
                text: excerpt(&self.to_string()),
                message: if op == Op::Eq {
                    "expected a finite number after '='".into()
                } else {
                    "expected key=number".into()
                },
            }),
        }
    }

    /// Whether a cell meets the condition.
    pub fn holds(&self, cell: Cell<'_>) -> bool {
        let equal = |wanted: &str| match (cell, Cell::lenient(wanted)) {
            (Cell::Number(a), Cell::Number(b)) => same(a, b),
            (Cell::Text(a), Cell::Text(b)) => a == b,
            _ => false,
        };
        let number = |f: fn(f64, f64) -> bool| match (cell, Cell::lenient(&self.value)) {
            (Cell::Number(a), Cell::Number(b)) => f(a, b),
            _ => false,
        };
        match self.op {
            Op::Eq => equal(&self.value),
            Op::Ne => !equal(&self.value),
            Op::Lt => number(|a, b| a < b && !same(a, b)),
            Op::Le => number(|a, b| a <= b || same(a, b)),
            Op::Gt => number(|a, b| a > b && !same(a, b)),
            Op::Ge => number(|a, b| a >= b || same(a, b)),
            Op::In => self.value.split(',').any(|v| equal(v.trim())),
        }
    }

    /// The conditions of `--where` options as the command line split them at commas: a piece
    /// without a comparison goes on the list of the `in` before it (`impl in dp,tp` arrives
    /// as `impl in dp` and `tp`).
    pub fn parse_all(pieces: &[String]) -> Result<Vec<Condition>, DataError> {
        let mut conditions: Vec<Condition> = Vec::new();
        for piece in pieces {
            match conditions.last_mut() {
                Some(last) if last.op == Op::In && comparison(piece).is_none() => {
                    let value = piece.trim();
                    if value.is_empty() {
                        return Err(DataError::Condition {
                            text: excerpt(&last.to_string()),
                            message: "an empty value in the list after 'in'".into(),
                        });
                    }
                    last.value = format!("{},{value}", last.value);
                }
                _ => conditions.push(piece.parse()?),
            }
        }
        Ok(conditions)
    }
}

/// The comparison in `text` and where it is: (start, end, op); `in` as a word between spaces
/// first, then the first of `!=`, `<=`, `>=`, `<`, `>`, `=`.
fn comparison(text: &str) -> Option<(usize, usize, Op)> {
    if let Some(at) = text.find(" in ") {
        return Some((at, at + 4, Op::In));
    }
    let at = text.find(['<', '>', '=', '!'])?;
    let rest = &text[at..];
    let two = |s: &str| rest.starts_with(s);
    Some(if two("!=") {
        (at, at + 2, Op::Ne)
    } else if two("<=") {
        (at, at + 2, Op::Le)
    } else if two(">=") {
        (at, at + 2, Op::Ge)
    } else if two("<") {
        (at, at + 1, Op::Lt)
    } else if two(">") {
        (at, at + 1, Op::Gt)
    } else if two("=") {
        (at, at + 1, Op::Eq)
    } else {
        return None;
    })
}

impl FromStr for Condition {
    type Err = DataError;

    /// Parses `key=value`, `key!=value`, `key<number` (`<=`, `>`, `>=`) or `key in a,b,c`;
    /// blanks around either side are dropped, neither may be empty.
    fn from_str(text: &str) -> Result<Condition, DataError> {
        let error = |message: &str| DataError::Condition {
            text: excerpt(text),
            message: message.into(),
        };
        let (start, end, op) = comparison(text).ok_or_else(|| {
            error("expected key=value, like impl=dp (or !=, <, <=, >, >=, or impl in dp,tp)")
        })?;
        let (key, value) = (text[..start].trim(), text[end..].trim());
        if key.is_empty() {
            return Err(error(&format!(
                "the key before '{}' is empty",
                op.as_str().trim()
            )));
        }
        if value.is_empty() {
            return Err(error(&format!(
                "the value after '{}' is empty",
                op.as_str().trim()
            )));
        }
        if matches!(op, Op::Lt | Op::Le | Op::Gt | Op::Ge)
            && !matches!(Cell::lenient(value), Cell::Number(_))
        {
            return Err(error(&format!("expected a number after '{}'", op.as_str())));
        }
        if op == Op::In && value.split(',').any(|v| v.trim().is_empty()) {
            return Err(error("an empty value in the list after 'in'"));
        }
        Ok(Condition {
            key: key.into(),
            op,
            value: value.into(),
        })
    }
}

impl Condition {
    /// As messages quote it: `n = 512`, `p < 512`, `impl in dp,tp`.
    pub fn spaced(&self) -> String {
        format!("{} {} {}", self.key, self.op.as_str().trim(), self.value)
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.key, self.op.as_str(), self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str) -> Condition {
        text.parse().unwrap()
    }

    #[test]
    fn each_comparison_parses_and_prints_back() {
        for (text, op) in [
            ("impl=dp", Op::Eq),
            ("role!=validate", Op::Ne),
            ("p<512", Op::Lt),
            ("p <= 512", Op::Le),
            ("n>6000", Op::Gt),
            ("n>=6000", Op::Ge),
            ("impl in dp,tp", Op::In),
        ] {
            let cond = c(text);
            assert_eq!(cond.op, op, "{text}");
            assert_eq!(c(&cond.to_string()), cond, "{text}");
        }
        assert_eq!(c(" p <= 512 ").to_string(), "p<=512");
    }

    #[test]
    fn cells_meet_conditions_as_numbers_or_text() {
        let n = Cell::Number;
        assert!(c("n=256").holds(n(256.0)) && c("n=256.0").holds(n(256.0)));
        assert!(c("p<512").holds(n(256.0)) && !c("p<512").holds(n(512.0)));
        assert!(c("p<=512").holds(n(512.0)) && !c("p<=512").holds(n(513.0)));
        assert!(c("p>2").holds(n(3.0)) && !c("p>2").holds(n(2.0)));
        assert!(c("p>=2").holds(n(2.0)) && !c("p>=2").holds(n(1.0)));
        assert!(!c("p<512").holds(Cell::Text("many")), "text is no number");
        assert!(c("impl!=dp").holds(Cell::Text("tp")) && !c("impl!=dp").holds(Cell::Text("dp")));
        assert!(c("impl in dp, tp").holds(Cell::Text("tp")));
        assert!(!c("impl in dp,tp").holds(Cell::Text("ep")));
        assert!(c("p in 2,4").holds(n(4.0)) && !c("p in 2,4").holds(n(3.0)));
    }

    #[test]
    fn an_in_list_split_by_the_command_line_is_joined_again() {
        let pieces: Vec<String> = ["impl in dp", "tp", "p<512", "n=32"]
            .map(String::from)
            .to_vec();
        let all = Condition::parse_all(&pieces).unwrap();
        let shown: Vec<String> = all.iter().map(|c| c.to_string()).collect();
        assert_eq!(shown, ["impl in dp,tp", "p<512", "n=32"]);
    }

    #[test]
    fn bad_conditions_say_why() {
        let e = |t: &str| t.parse::<Condition>().unwrap_err().to_string();
        assert!(
            e("impl").contains("expected key=value, like impl=dp (or"),
            "{}",
            e("impl")
        );
        assert!(
            e("p<many").contains("expected a number after '<'"),
            "{}",
            e("p<many")
        );
        assert!(
            e("=3").contains("the key before '=' is empty"),
            "{}",
            e("=3")
        );
        assert!(
            e("p>=").contains("the value after '>=' is empty"),
            "{}",
            e("p>=")
        );
        assert!(
            e("impl in dp,,tp").contains("an empty value"),
            "{}",
            e("impl in dp,,tp")
        );
        assert!(c("p<8").to_at().is_err() && c("p=8").to_at().is_ok());
    }
}
