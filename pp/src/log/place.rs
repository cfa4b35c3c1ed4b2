//! [`Place`]: where in its file an event of a log was read.

use std::fmt;

/// Where the event most recently returned by a [`super::LogReader`] is in its file: a line of a
/// text log (counted from 1), the byte offset of a binary record (counted from 0), or
/// [`Place::Start`] before any event. Displays as `line 12`, `byte 4096`, `the start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Place {
    /// No event returned yet.
    #[default]
    Start,
    /// A line of a text log.
    Line(u64),
    /// The offset of a binary record.
    Byte(u64),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Start => f.write_str("the start"),
            Place::Line(n) => write!(f, "line {n}"),
            Place::Byte(n) => write!(f, "byte {n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_read_as_the_messages_write_them() {
        assert_eq!(Place::Line(12).to_string(), "line 12");
        assert_eq!(Place::Byte(4096).to_string(), "byte 4096");
        assert_eq!(Place::default().to_string(), "the start");
    }
}
