//! What the `pp` and `lca` command lines share. Every error either binary prints is one line
//! (`Error: ...`, status 1); clap's refusal of a value outside an option's choices is turned
//! into such a line here, so that `--format xml` reads like the binaries' own errors.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// A value clap refused for an option of fixed choices (`--format xml`), as one line in the
/// form of the other errors: `--format: invalid value 'xml' (expected text, json or csv)`.
/// None for every other error clap reports.
pub fn value_error(e: &clap::Error) -> Option<String> {
    if e.kind() != ErrorKind::InvalidValue {
        return None;
    }
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let option = text(ContextKind::InvalidArg)?;
    let option = option.split_whitespace().next()?;
    let value = text(ContextKind::InvalidValue)?;
    let Some(ContextValue::Strings(valid)) = e.get(ContextKind::ValidValue) else {
        return None;
    };
    let expected = match valid.as_slice() {
        [] => return None,
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    };
    Some(format!(
        "{option}: invalid value '{value}' (expected {expected})"
    ))
}

#[cfg(test)]
mod tests {
    use clap::{Parser, ValueEnum};

    use super::value_error;

    #[derive(Debug, Clone, Copy, ValueEnum)]
    enum Shape {
        Round,
        Square,
        Flat,
    }

    #[derive(Debug, Parser)]
    struct Cli {
        #[arg(long, value_enum, value_name = "SHAPE", hide_possible_values = true)]
        shape: Option<Shape>,
        #[arg(long)]
        count: Option<u32>,
    }

    fn error(args: &[&str]) -> clap::Error {
        Cli::try_parse_from(std::iter::once("t").chain(args.iter().copied())).unwrap_err()
    }

    #[test]
    fn a_refused_choice_is_one_line_naming_the_option_the_value_and_the_choices() {
        assert_eq!(
            value_error(&error(&["--shape", "oval"])).as_deref(),
            Some("--shape: invalid value 'oval' (expected round, square or flat)")
        );
    }

    #[test]
    fn other_errors_are_left_to_clap() {
        assert_eq!(value_error(&error(&["--colour", "red"])), None);
        // Not a number: a value error without choices to name.
        assert_eq!(value_error(&error(&["--count", "many"])), None);
    }
}
