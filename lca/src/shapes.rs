//! A shapes file: each category's shape along each factor, chosen in advance (a paper's table
//! of model forms, or what another implementation's model chose), for `lca model --shapes`.
//!
//! ```toml
//! [li]
//! n = "n*log2(n)"
//! p = "p*sqrt(p)"
//! ```
//!
//! One table per category, one string per factor; anything else is an error naming the file
//! and the entry (with the line for TOML syntax).

use std::path::Path;

use anyhow::{Context, Result, bail};

/// The `(category, factor, expression)` entries of the shapes file at `path`, in file order.
pub fn read(path: &Path) -> Result<Vec<(String, String, String)>> {
    let name = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read"))?;
    parse(&text).with_context(|| format!("{name}"))
}

fn parse(text: &str) -> Result<Vec<(String, String, String)>> {
    let table: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            let what = e.message().to_string();
            match line {
                Some(line) => bail!("line {line}: {what}"),
                None => bail!("{what}"),
            }
        }
    };
    let mut entries = Vec::new();
    for (category, factors) in &table {
        let Some(factors) = factors.as_table() else {
            bail!(
                "'{category}' must be a table of factor = \"shape\" (e.g. [{category}] p = \"p\")"
            );
        };
        for (factor, expr) in factors {
            let Some(expr) = expr.as_str().map(str::trim).filter(|e| !e.is_empty()) else {
                bail!(
                    "[{category}] {factor}: the shape must be a non-empty string, e.g. \"p*sqrt(p)\""
                );
            };
            entries.push((category.clone(), factor.clone(), expr.to_string()));
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn entries_come_in_file_order() {
        let got = parse("[li]\nn = \"n*log2(n)\"\np = \"p*sqrt(p)\"\n[ip]\np = \"p\"\n").unwrap();
        let want = [
            ("li", "n", "n*log2(n)"),
            ("li", "p", "p*sqrt(p)"),
            ("ip", "p", "p"),
        ];
        let got: Vec<_> = got
            .iter()
            .map(|(c, f, e)| (c.as_str(), f.as_str(), e.as_str()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn bad_files_say_where() {
        let e = |text: &str| format!("{:#}", parse(text).unwrap_err());
        assert!(
            e("[li]\nn = 3\n").starts_with("[li] n: the shape must be"),
            "{}",
            e("[li]\nn = 3\n")
        );
        assert!(e("li = \"p\"\n").starts_with("'li' must be a table"));
        assert!(
            e("[li]\n\nn = \n").starts_with("line 3: "),
            "{}",
            e("[li]\n\nn = \n")
        );
    }
}
