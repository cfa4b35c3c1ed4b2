//! The file being checked, so that an error names the line of the value at fault, and the
//! checks of single values that several tables share (names, factors, timeouts).

use design::Factor;
use toml::Spanned;

use super::{StudyError, excerpt};

/// The longest run a study waits for (30 days): beyond it a timeout is a typo, and a
/// `Duration` of 1e300 s cannot be made.
const MAX_TIMEOUT_S: f64 = 30.0 * 24.0 * 3600.0;

/// The file being checked: what an error needs to name its line.
pub(super) struct Source<'a> {
    /// The file as named to the user.
    pub file: &'a str,
    /// Its text.
    pub text: &'a str,
}

impl Source<'_> {
    /// The 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        1 + self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
    }

    /// The error `message` at the line of `offset`.
    pub fn error(&self, offset: usize, message: String) -> StudyError {
        StudyError {
            file: self.file.to_string(),
            line: self.line_of(offset),
            message,
        }
    }

    /// The error at the place of a value of the file.
    pub fn at<T>(&self, value: &Spanned<T>, message: String) -> StudyError {
        self.error(value.span().start, message)
    }
}

/// A `timeout_s`, the study's or an implementation's.
pub(super) fn timeout(src: &Source, t: &Spanned<f64>) -> Result<f64, StudyError> {
    let v = *t.get_ref();
    if v.is_finite() && v > 0.0 && v <= MAX_TIMEOUT_S {
        Ok(v)
    } else {
        Err(src.at(
            t,
            format!(
                "timeout_s = {}: expected a positive number of seconds, at most \
                 {MAX_TIMEOUT_S} (30 days)",
                // 1e300 as written, not its 301 digits.
                if v.abs() >= 1e9 {
                    format!("{v:e}")
                } else {
                    v.to_string()
                }
            ),
        ))
    }
}

/// Whether `s` can name a study or an implementation (it names files).
pub(super) fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A factor as `lca design --factor` takes it.
pub(super) fn parse_factor(name: &str, spec: &str) -> Result<Factor, String> {
    Factor::parse(&format!("{name}={spec}"))
        .map_err(|e| format!("factor {name} = \"{}\": {}", excerpt(spec), e.message))
}
