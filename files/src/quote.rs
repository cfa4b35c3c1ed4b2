//! How an error quotes what a file or an option holds: a short excerpt on one line, so that a
//! megabyte-long value or a newline inside it never makes a long or multi-line message.

/// At most `max` bytes of `text` (whole characters), control characters escaped (`\n`,
/// `\u{7}`), and `…` where it was cut.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let before = out.len();
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        if out.len() > max {
            out.truncate(before);
            out.push('…');
            break;
        }
    }
    out
}

/// A number as an error quotes it: as Rust writes it where that is short (`0.5`, `1000`), else
/// in exponent form (`1e-300`, not three hundred zeros), exactly either way.
pub fn number(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() <= 24 {
        plain
    } else {
        format!("{v:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::{excerpt, number};

    #[test]
    fn numbers_are_short_and_exact() {
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(3000.0), "3000");
        assert_eq!(number(-1.25), "-1.25");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::INFINITY), "inf");
        assert_eq!(number(1e-300), "1e-300");
        assert_eq!(number(1.5e300), "1.5e300");
        for v in [1e-300, 1.5e300, 0.1 + 0.2, 7.105427357601002e-15, -2.5e-20] {
            assert_eq!(number(v).parse::<f64>().unwrap(), v);
            assert!(number(v).len() <= 24, "{}", number(v));
        }
    }

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(excerpt("p=4", 40), "p=4");
        assert_eq!(excerpt("", 40), "");
    }

    #[test]
    fn long_text_is_cut_at_a_character_with_a_mark() {
        assert_eq!(
            excerpt(&"x".repeat(100), 40),
            format!("{}…", "x".repeat(40))
        );
        assert_eq!(excerpt(&"é€".repeat(50), 10), "é€é€…");
    }

    #[test]
    fn control_characters_are_escaped_so_the_message_stays_one_line() {
        assert_eq!(excerpt("a\nb\u{7}", 40), "a\\nb\\u{7}");
        assert_eq!(excerpt("ab\ncd", 3), "ab…");
    }
}
