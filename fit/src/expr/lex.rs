//! Lexing: source characters to tokens that remember their character positions.

use super::ParseError;

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Num(f64),
    Name(String),
    Param(String),
    /// One of `+ - * / ^ ( ) ,`.
    Sym(char),
}

/// A token and the characters `start..end` (0-based, in characters) it was read from.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

impl Token {
    /// 1-based column of the first character.
    pub fn col(&self) -> usize {
        self.start + 1
    }

    pub fn is(&self, c: char) -> bool {
        self.tok == Tok::Sym(c)
    }
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// Splits `src` into tokens, skipping whitespace.
pub(super) fn lex(src: &[char]) -> Result<Vec<Token>, ParseError> {
    let at = |i: usize| src.get(i).copied().unwrap_or('\0');
    let digits = |mut i: usize| {
        while at(i).is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut toks = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let (c, start) = (src[i], i);
        let tok = if c.is_whitespace() {
            i += 1;
            continue;
        } else if c.is_ascii_digit() || (c == '.' && at(i + 1).is_ascii_digit()) {
            i = digits(i);
            if at(i) == '.' {
                i = digits(i + 1);
            }
            if matches!(at(i), 'e' | 'E') {
                let j = if matches!(at(i + 1), '+' | '-') {
                    i + 2
                } else {
                    i + 1
                };
                if at(j).is_ascii_digit() {
                    i = digits(j);
                }
            }
            let text: String = src[start..i].iter().collect();
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Tok::Num(v),
                _ => {
                    return Err(ParseError::new(
                        start + 1,
                        format!("number {} is out of range", super::excerpt(&text)),
                    ));
                }
            }
        } else if is_name_start(c) || (c == '$' && is_name_start(at(i + 1))) {
            let first = if c == '$' { i + 1 } else { i };
            i = first + 1;
            while is_name_char(at(i)) {
                i += 1;
            }
            let name = src[first..i].iter().collect();
            if c == '$' {
                Tok::Param(name)
            } else {
                Tok::Name(name)
            }
        } else if c == '$' {
            return Err(ParseError::new(
                i + 2,
                "expected a parameter name after '$'",
            ));
        } else if "+-*/^(),".contains(c) {
            i += 1;
            Tok::Sym(c)
        } else {
            return Err(ParseError::new(
                i + 1,
                format!("unexpected character {c:?}"),
            ));
        };
        toks.push(Token { tok, start, end: i });
    }
    Ok(toks)
}
