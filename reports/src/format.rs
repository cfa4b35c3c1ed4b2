//! The output formats every report renders: aligned text in the paper's style, one JSON
//! document, or CSV rows. `--format text|json|csv` of every `lca` command that prints a report.

use std::fmt;
use std::str::FromStr;

/// Output formats of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// Aligned lines in the paper's style.
    #[default]
    Text,
    /// One JSON document.
    Json,
    /// One CSV row per item (model, point, side...).
    Csv,
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            _ => Err(format!("unknown format '{s}' (expected text, json or csv)")),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn names_parse_back_and_unknown_ones_say_what_is_expected() {
        for format in [Format::Text, Format::Json, Format::Csv] {
            assert_eq!(format.to_string().parse::<Format>(), Ok(format));
        }
        assert_eq!(
            "xml".parse::<Format>(),
            Err("unknown format 'xml' (expected text, json or csv)".to_string())
        );
    }

    #[cfg(feature = "clap")]
    #[test]
    fn the_command_line_names_are_the_parsed_ones() {
        use clap::ValueEnum;
        for format in Format::value_variants() {
            let name = format.to_possible_value().expect("not skipped");
            assert_eq!(name.get_name(), format.to_string());
        }
    }
}
