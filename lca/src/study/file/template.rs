//! A command's argument as the study file writes it: text with `{name}` placeholders, filled in
//! for each run (the factors' values, `{lca}`, `{pp}`, `{impl}`, `{replicate}`).

use std::collections::BTreeMap;

/// An argument with `{name}` placeholders (`{{` and `}}` are literal braces).
#[derive(Debug, Clone, PartialEq)]
pub struct Template(Vec<Piece>);

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Placeholder(String),
}

impl Template {
    /// Placeholders are `{name}` with `name` an identifier; other braces (a shell's `{ ..; }`)
    /// are kept as written, and `{{` / `}}` are literal braces.
    pub(super) fn parse(text: &str) -> Template {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if let Some(after) = rest.strip_prefix("{{") {
                literal.push('{');
                rest = after;
                continue;
            }
            if let Some(after) = rest.strip_prefix("}}") {
                literal.push('}');
                rest = after;
                continue;
            }
            if c == '{'
                && let Some(end) = rest.find('}')
                && is_identifier(&rest[1..end])
            {
                if !literal.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut literal)));
                }
                pieces.push(Piece::Placeholder(rest[1..end].to_string()));
                rest = &rest[end + 1..];
                continue;
            }
            literal.push(c);
            rest = &rest[c.len_utf8()..];
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Template(pieces)
    }

    /// The placeholders used.
    pub fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| match p {
            Piece::Placeholder(name) => Some(name.as_str()),
            Piece::Text(_) => None,
        })
    }

    /// The argument as the study file writes it (for messages).
    pub fn written(&self) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.replace('{', "{{").replace('}', "}}"),
                Piece::Placeholder(name) => format!("{{{name}}}"),
            })
            .collect()
    }

    /// The argument with every placeholder replaced (all were checked at load time).
    pub fn expand(&self, values: &BTreeMap<&str, String>) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.as_str(),
                Piece::Placeholder(name) => values.get(name.as_str()).map_or("", |v| v.as_str()),
            })
            .collect()
    }
}

/// Whether `s` can name a placeholder: a letter or `_`, then letters, digits and `_`.
pub(super) fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
