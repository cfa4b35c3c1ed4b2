//! The command line's enumerations that are not the library's: what clap parses `--format`
//! and `--to` into (its errors name the option, the bad value and the possible values).

use pp::log::Encoding;

/// `--format` of `pp` and `pp critical-path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// `--to` of `pp convert` and `pp import`: a log's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum To {
    Text,
    Binary,
}

impl From<To> for Encoding {
    fn from(to: To) -> Encoding {
        match to {
            To::Text => Encoding::Text,
            To::Binary => Encoding::Binary,
        }
    }
}
