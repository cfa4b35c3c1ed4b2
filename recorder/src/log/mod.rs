//! Writing the event log of a run (docs/event-log.md): the normative text encoding ([`TextWriter`])
//! and the compact binary encoding ([`BinaryWriter`], layout in [`binary`]), and what both check (a
//! header's fields, names). Reading a log is `pp::log`'s job.
//!
//! # Text encoding
//!
//! UTF-8 lines; `#` starts a comment (a whole line, or after the last field); blank lines are
//! ignored. The first other line is the header `pplog 1 p=<threads> [key=value ..]`, then one
//! event per line, `<t_ns> <thread> <event> [args]` (see [`crate::event::EventKind`]). The
//! [`TextWriter`] writes a canonical form: single spaces, no comments, events in the order given.
//!
//! # Binary encoding
//!
//! The default for speed, about 4-6 bytes per event. A header, then items in the order the
//! writer flushed them: blocks of events of one thread, symbol definitions, and a final end
//! marker; see [`binary`] for the byte-level layout.

pub mod binary;
mod binary_writer;
mod text_writer;
pub mod varint;

pub use binary_writer::BinaryWriter;
pub use text_writer::TextWriter;

use std::fmt;

/// How a log is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// The normative line-oriented text encoding.
    Text,
    /// The compact binary encoding (see [`binary`]).
    Binary,
}

impl Encoding {
    /// The other encoding (what `pp convert` produces by default).
    pub fn other(self) -> Encoding {
        match self {
            Encoding::Text => Encoding::Binary,
            Encoding::Binary => Encoding::Text,
        }
    }

    /// The encoding of a log that starts with these bytes: binary when they start with
    /// [`binary::MAGIC`] or are a non-empty part of it (a binary log cut in its magic), text
    /// otherwise.
    pub fn detect(first_bytes: &[u8]) -> Encoding {
        let n = first_bytes.len().min(binary::MAGIC.len());
        if n > 0 && first_bytes[..n] == binary::MAGIC[..n] {
            Encoding::Binary
        } else {
            Encoding::Text
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Encoding::Text => "text",
            Encoding::Binary => "binary",
        })
    }
}

/// True when `s` can be a name of the log (region name, work label, wait object, phase name,
/// header key or value): a non-empty single token without whitespace, control characters or
/// `#`. Both writers refuse other names, so that every log converts losslessly to text.
pub fn is_name(s: &str) -> bool {
    !s.is_empty()
        && !s
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '#')
}

/// The most threads a log may have: the profiler keeps state for every thread of the team,
/// so a corrupt or absurd `p` gets an error instead of exhausting memory.
pub const MAX_THREADS: u32 = 1 << 20;

/// At most 40 characters of `s` for a message: control characters escaped, `…` where cut.
pub fn excerpt(s: &str) -> String {
    files::quote::excerpt(s, 40)
}

/// True when `value` reads as a number but not a finite one (`nan`, `inf`, `-infinity`, `1e999`):
/// a run parameter the fit could not use.
fn non_finite(value: &str) -> bool {
    value.parse::<f64>().is_ok_and(|v| !v.is_finite())
}

/// Checks a header as both encodings require (the writers here, the readers of `pp::log`):
/// `1 <= p <= MAX_THREADS`, keys and values are names, keys have no `=`, no key is `p`, no key
/// repeats and no value is a non-finite number. The message names the offending field.
pub fn check_header(header: &crate::event::Header) -> Result<(), String> {
    if header.p == 0 {
        return Err("header: p: expected a positive integer, found 0".to_string());
    }
    if header.p > MAX_THREADS {
        return Err(format!(
            "header: p: {} threads is more than pp profiles (at most {MAX_THREADS})",
            header.p
        ));
    }
    for (i, (key, value)) in header.params.iter().enumerate() {
        if !is_name(key) || key.contains('=') {
            return Err(format!(
                "header: parameter key '{}' is not a token (non-empty, no '=', whitespace or '#')",
                excerpt(key)
            ));
        }
        if key == "p" {
            return Err("header: p given twice".to_string());
        }
        let repeated = header.params[..i].iter().any(|(k, _)| k == key);
        let key = excerpt(key);
        if !is_name(value) {
            return Err(format!(
                "header: {key}: value '{}' is not a token (non-empty, no whitespace or '#')",
                excerpt(value)
            ));
        }
        if non_finite(value) {
            return Err(format!(
                "header: {key}: value '{}' is not a finite number",
                excerpt(value)
            ));
        }
        if repeated {
            return Err(format!("header: {key} given twice"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_tokens() {
        assert!(is_name("fft_rows"));
        assert!(is_name("a=b"));
        assert!(is_name("über"));
        for bad in ["", "a b", "a#b", "tab\there", "nl\n", "nul\0"] {
            assert!(!is_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn excerpts_are_short_and_escaped() {
        assert_eq!(excerpt("p=2"), "p=2");
        let long = excerpt(&"x".repeat(1000));
        assert_eq!(long, format!("{}…", "x".repeat(40)));
        assert_eq!(
            excerpt(&"\0".repeat(100)),
            format!("{}…", "\\u{0}".repeat(8))
        );
    }

    #[test]
    fn non_finite_header_values_are_refused() {
        let header = |v: &str| crate::event::Header {
            p: 1,
            params: vec![("n".into(), v.into())],
        };
        for bad in ["nan", "NaN", "inf", "-inf", "+Infinity", "1e999"] {
            let e = check_header(&header(bad)).unwrap_err();
            assert_eq!(
                e,
                format!("header: n: value '{bad}' is not a finite number")
            );
        }
        for good in ["256", "1e300", "-0.5", "dp", "info"] {
            assert_eq!(check_header(&header(good)), Ok(()));
        }
    }

    #[test]
    fn detection_looks_at_the_magic() {
        assert_eq!(Encoding::detect(b"pplog 1 p=2\n"), Encoding::Text);
        assert_eq!(Encoding::detect(binary::MAGIC), Encoding::Binary);
        assert_eq!(Encoding::detect(b"PPLO"), Encoding::Binary);
        assert_eq!(Encoding::detect(b"PPLX"), Encoding::Text);
        assert_eq!(Encoding::detect(b""), Encoding::Text);
        assert_eq!(Encoding::Text.other(), Encoding::Binary);
    }
}
