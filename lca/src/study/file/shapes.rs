//! `[shapes]`: a category's shape along a factor, fixed by the study instead of the best of
//! the defaults, as `lca model --shape CAT:FACTOR=EXPR` fixes it (docs/study-file.md).
//!
//! ```toml
//! [shapes]
//! li = { p = "p*sqrt(p)", n = "n*log2(n)" }
//! rc = { p = "p" }
//! ```
//!
//! Each entry is checked here, so that a bad one is refused before any run: the category is
//! one of the six modelled, the factor one of the study's, the shape an expression of that
//! factor alone.

use fit::performance::CATEGORIES;
use toml::Spanned;

use super::raw::{Ordered, RawShapes};
use super::source::Source;
use super::{StudyError, excerpt};

/// One entry of `[shapes]`: the category, the factor and the shape, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeChoice {
    /// The category (`li`).
    pub category: String,
    /// The factor (`p`).
    pub factor: String,
    /// The shape (`p*sqrt(p)`).
    pub expr: String,
}

/// The entries of `[shapes]`, in the file's order; an error names the line and the field.
pub(super) fn shapes(
    src: &Source,
    raw: Option<&Spanned<Ordered<Spanned<RawShapes>>>>,
    factors: &[&str],
) -> Result<Vec<ShapeChoice>, StudyError> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    let mut choices = Vec::new();
    for (category, entries) in &raw.get_ref().0 {
        if !CATEGORIES.contains(&category.as_str()) {
            return Err(src.at(
                entries,
                format!(
                    "[shapes] {}: not a modelled category ({})",
                    excerpt(category),
                    CATEGORIES.join(", ")
                ),
            ));
        }
        let RawShapes::Table(entries_) = entries.get_ref() else {
            return Err(src.at(
                entries,
                format!(
                    "[shapes] {category}: expected a table of factor = \"shape\", like \
                     {category} = {{ p = \"p\" }}"
                ),
            ));
        };
        for (factor, value) in entries_ {
            let field = format!("[shapes] {category}.{}", excerpt(factor));
            if !factors.contains(&factor.as_str()) {
                return Err(src.at(
                    value,
                    format!(
                        "{field}: not a factor of the study ({})",
                        factors.join(", ")
                    ),
                ));
            }
            let Some(expr) = value
                .get_ref()
                .as_str()
                .map(str::trim)
                .filter(|e| !e.is_empty())
            else {
                return Err(src.at(
                    value,
                    format!("{field}: the shape must be a non-empty string, like \"{factor}\""),
                ));
            };
            let model = fit::Model::parse(expr)
                .map_err(|e| src.at(value, format!("{field} = \"{}\": {e}", excerpt(expr))))?;
            if let Some(other) = model.variables().into_iter().find(|v| v != factor) {
                return Err(src.at(
                    value,
                    format!(
                        "{field} = \"{}\": a shape along {factor} may use only {factor}, not \
                         '{}'",
                        excerpt(expr),
                        excerpt(&other)
                    ),
                ));
            }
            choices.push(ShapeChoice {
                category: category.clone(),
                factor: factor.clone(),
                expr: expr.to_string(),
            });
        }
    }
    Ok(choices)
}
