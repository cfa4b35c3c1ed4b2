//! A TOML writer for model files: tables in the order given, plain values before sub-tables,
//! and every float in the shortest text that reads back to the same number (`2.5e-9`, not
//! `0.0000000025`), so that reading a file and writing it again gives the same bytes.

use std::fmt::Write as _;

use toml::Value;

/// The document for a root table.
pub fn document(root: &Value) -> String {
    let mut out = String::new();
    if let Value::Table(table) = root {
        write_table(&mut out, &[], table);
    }
    out
}

fn is_table_array(value: &Value) -> bool {
    matches!(value, Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_table))
}

fn write_table(out: &mut String, path: &[String], table: &toml::Table) {
    for (key, value) in table {
        if !value.is_table() && !is_table_array(value) {
            let _ = writeln!(out, "{} = {}", key_text(key), inline(value));
        }
    }
    for (key, value) in table {
        let mut sub = path.to_vec();
        sub.push(key_text(key));
        match value {
            Value::Table(t) => {
                let _ = writeln!(out, "\n[{}]", sub.join("."));
                write_table(out, &sub, t);
            }
            Value::Array(items) if is_table_array(value) => {
                for item in items {
                    let _ = writeln!(out, "\n[[{}]]", sub.join("."));
                    if let Value::Table(t) = item {
                        write_table(out, &sub, t);
                    }
                }
            }
            _ => {}
        }
    }
}

fn key_text(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { key.to_string() } else { string(key) }
}

fn inline(value: &Value) -> String {
    match value {
        Value::String(s) => string(s),
        Value::Integer(i) => i.to_string(),
        Value::Float(x) => float(*x),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => d.to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Table(t) => {
            let items: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{} = {}", key_text(k), inline(v)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
    }
}

/// A TOML basic string.
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The shortest text that reads back to `x` exactly, as a TOML float.
pub fn float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let magnitude = x.abs();
    if x == 0.0 || (1e-4..1e16).contains(&magnitude) {
        let text = x.to_string();
        if text.contains('.') {
            text
        } else {
            text + ".0"
        }
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn floats_are_short() {
        assert_eq!(float(2.5e-9), "2.5e-9");
        assert_eq!(float(0.30000000000000004), "0.30000000000000004");
        assert_eq!(float(3.0), "3.0");
        assert_eq!(float(-0.0), "-0.0");
        assert_eq!(float(1e300), "1e300");
        assert_eq!(float(f64::NAN), "nan");
    }

    proptest! {
        #[test]
        fn floats_read_back_exactly(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            let text = format!("x = {}", float(x));
            let back: toml::Table = toml::from_str(&text).unwrap();
            let y = back["x"].as_float().unwrap();
            prop_assert!(y.to_bits() == x.to_bits() || (x.is_nan() && y.is_nan()));
        }
    }
}
