//! A model: a sum of terms, each with its own fitted coefficient, optionally with nonlinear
//! parameters (docs/model-file.md). `1 + p` means `c0 + c1*p`; `0` is the model that predicts
//! nothing.

use std::collections::BTreeSet;
use std::fmt;

use crate::expr::{self, Expr, ParamRole, ParseError};

/// One term of a model: `c * expr`.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// The term as the user wrote it (trimmed).
    pub text: String,
    /// The parsed expression.
    pub expr: Expr,
}

/// A model as written: the terms and the names of its nonlinear parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    text: String,
    terms: Vec<Term>,
    parameters: Vec<String>,
}

/// A model that cannot be written as a sum of terms.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("model `{}`: {error}", expr::excerpt(.text))]
pub struct ModelError {
    /// The model text.
    pub text: String,
    /// What is wrong, with its column.
    pub error: ParseError,
}

impl Model {
    /// Parses a model such as `1 + p*sqrt(p)` or `max(p-$theta,0)`.
    ///
    /// ```
    /// let m = fit::Model::parse("1 + p*sqrt(p)").unwrap();
    /// assert_eq!(m.terms().len(), 2);
    /// assert!(fit::Model::parse("0").unwrap().is_zero());
    /// ```
    pub fn parse(text: &str) -> Result<Model, ModelError> {
        let terms = expr::parse_terms(text).map_err(|error| ModelError {
            text: text.trim().to_string(),
            error,
        })?;
        // Terms that are the constant zero contribute nothing: `0` is the empty model.
        let terms: Vec<Term> = terms
            .into_iter()
            .filter(|(_, e)| e.constant_value() != Some(0.0))
            .map(|(text, expr)| Term { text, expr })
            .collect();
        let parameters: BTreeSet<String> = terms.iter().flat_map(|t| t.expr.parameters()).collect();
        Ok(Model {
            text: text.trim().to_string(),
            terms,
            parameters: parameters.into_iter().collect(),
        })
    }

    /// The model as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The terms, each with one coefficient.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Names of the nonlinear parameters (without `$`), sorted.
    pub fn parameters(&self) -> &[String] {
        &self.parameters
    }

    /// True for the model `0`: no terms, nothing fitted.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// Number of fitted quantities: one coefficient per term plus each nonlinear parameter.
    pub fn fitted_count(&self) -> usize {
        self.terms.len() + self.parameters.len()
    }

    /// Factor names the model uses.
    pub fn variables(&self) -> BTreeSet<String> {
        self.terms.iter().flat_map(|t| t.expr.variables()).collect()
    }

    /// The factors threshold `name` is compared with, over every term (see
    /// [`Expr::threshold_variables`](crate::expr::Expr::threshold_variables)).
    pub fn threshold_variables(&self, name: &str) -> BTreeSet<String> {
        self.terms
            .iter()
            .flat_map(|t| t.expr.threshold_variables(name))
            .collect()
    }

    /// How the parameter is used (threshold, exponent, other), from the first term that has it.
    pub fn parameter_role(&self, name: &str) -> Option<ParamRole> {
        self.terms.iter().find_map(|t| t.expr.parameter_role(name))
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_and_parameters() {
        let m = Model::parse(" 1 + max(p-$theta,0) ").unwrap();
        assert_eq!(m.text(), "1 + max(p-$theta,0)");
        assert_eq!(m.terms().len(), 2);
        assert_eq!(m.terms()[1].text, "max(p-$theta,0)");
        assert_eq!(m.parameters(), ["theta"]);
        assert_eq!(m.fitted_count(), 3);
        assert_eq!(m.parameter_role("theta"), Some(ParamRole::Threshold));
        assert_eq!(m.variables().into_iter().collect::<Vec<_>>(), ["p"]);
    }

    #[test]
    fn zero_model_has_no_terms() {
        let m = Model::parse("0").unwrap();
        assert!(m.is_zero());
        assert_eq!(m.fitted_count(), 0);
    }

    #[test]
    fn parse_errors_name_the_model_and_column() {
        let err = Model::parse("1 + p*(").unwrap_err();
        assert_eq!(err.text, "1 + p*(");
        assert!(err.to_string().starts_with("model `1 + p*(`: column "));
    }
}
