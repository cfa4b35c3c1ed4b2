//! Model expressions: terms over factor names as users type them, such as `p*sqrt(p)`,
//! `n^2*log2(n)` or `max(p-$theta,0)`.
//!
//! [`parse`] reads one expression and [`parse_terms`] a user model (terms joined by a top-level
//! `+`). [`Expr::bind`] resolves names to indices and compiles the expression to a flat
//! instruction list, which [`Bound::eval`] and [`Bound::eval_grad`] run without allocating.

mod eval;
mod lex;
mod parse;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::fmt;

pub use eval::Bound;
pub use parse::{parse, parse_terms};

/// Why an expression could not be parsed, with the 1-based column (in characters) of the
/// offending character.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct ParseError {
    /// 1-based column, in characters of the source, of the offending character.
    pub column: usize,
    /// One-line description.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(column: usize, message: impl Into<String>) -> Self {
        ParseError {
            column,
            message: message.into(),
        }
    }
}

/// At most [`EXCERPT`] bytes of `text` as an error quotes it, control characters escaped,
/// with `...` where it was cut: an error stays one short line whatever it quotes.
pub fn excerpt(text: &str) -> String {
    files::quote::excerpt(text, EXCERPT)
}

/// The most bytes of user text an error quotes.
pub const EXCERPT: usize = 40;

/// A name used by an expression that is missing from the names given to [`Expr::bind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {} '{}{}'", if *.is_parameter { "parameter" } else { "factor" },
    if *.is_parameter { "$" } else { "" }, excerpt(.name))]
pub struct UnknownName {
    /// The name, without `$` for parameters.
    pub name: String,
    /// Whether the name is a nonlinear parameter (`$name`) rather than a factor.
    pub is_parameter: bool,
}

/// How a nonlinear parameter enters an expression, for choosing a fitting method. Ordered by
/// priority: a parameter with several roles has the smallest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ParamRole {
    /// Inside an argument of `min` or `max`, like `$theta` in `max(p-$theta,0)`.
    Threshold,
    /// In the right operand of `^` or inside `exp()`, like `$a` in `p^$a`.
    Exponent,
    /// Anywhere else.
    Other,
}

/// Operators with one operand: negation and the one-argument functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `sqrt(x)`
    Sqrt,
    /// `log(x)`, natural logarithm.
    Log,
    /// `log2(x)`
    Log2,
    /// `exp(x)`
    Exp,
    /// `ceil(x)`, the least whole number not below x: steps such as the rounds `ceil(p/c)` in
    /// which p equal threads share c cores.
    Ceil,
    /// `floor(x)`, the greatest whole number not above x.
    Floor,
}

/// Operators with two operands: the arithmetic operators and `min`, `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a / b`
    Div,
    /// `a ^ b`, right-associative.
    Pow,
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
}

impl UnOp {
    /// The operator as written: `-` or the function name.
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Sqrt => "sqrt",
            UnOp::Ceil => "ceil",
            UnOp::Floor => "floor",
            UnOp::Log => "log",
            UnOp::Log2 => "log2",
            UnOp::Exp => "exp",
        }
    }
}

impl BinOp {
    /// The operator as written: the infix symbol or the function name.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Pow => "^",
            BinOp::Min => "min",
            BinOp::Max => "max",
        }
    }
}

/// The syntax tree of an expression. Parsed numbers are finite and never negative (`-2` is
/// `Unary(Neg, Num(2))`).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number literal.
    Num(f64),
    /// A factor name, e.g. `p` or `rc.cpu`.
    Var(String),
    /// A nonlinear parameter `$name`, stored without the `$`.
    Param(String),
    /// Negation or a one-argument function.
    Unary(UnOp, Box<Expr>),
    /// An arithmetic operator or a two-argument function.
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

impl Expr {
    fn names(&self, pick: fn(&Expr) -> Option<&String>, out: &mut BTreeSet<String>) {
        out.extend(pick(self).cloned());
        match self {
            Expr::Unary(_, x) => x.names(pick, out),
            Expr::Binary(_, l, r) => {
                l.names(pick, out);
                r.names(pick, out);
            }
            _ => {}
        }
    }

    /// The factor names used.
    pub fn variables(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        self.names(
            |e| if let Expr::Var(n) = e { Some(n) } else { None },
            &mut names,
        );
        names
    }

    /// The nonlinear parameters used, without the `$`.
    pub fn parameters(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        self.names(
            |e| {
                if let Expr::Param(n) = e {
                    Some(n)
                } else {
                    None
                }
            },
            &mut names,
        );
        names
    }

    /// The role of parameter `name` (without `$`): [`ParamRole::Threshold`] if it appears inside
    /// an argument of `min`/`max`, else [`ParamRole::Exponent`] if it appears in the right operand
    /// of `^` or inside `exp()`, else [`ParamRole::Other`]; `None` if it does not appear.
    pub fn parameter_role(&self, name: &str) -> Option<ParamRole> {
        self.role_in(name, ParamRole::Other)
    }

    /// The strongest role of `name` in `self`, which sits in a context of role `context`.
    fn role_in(&self, name: &str, context: ParamRole) -> Option<ParamRole> {
        let exponent = context.min(ParamRole::Exponent);
        match self {
            Expr::Param(n) => (n == name).then_some(context),
            Expr::Num(_) | Expr::Var(_) => None,
            Expr::Unary(UnOp::Exp, x) => x.role_in(name, exponent),
            Expr::Unary(_, x) => x.role_in(name, context),
            Expr::Binary(BinOp::Min | BinOp::Max, l, r) => {
                let threshold = ParamRole::Threshold;
                l.role_in(name, threshold)
                    .or_else(|| r.role_in(name, threshold))
            }
            Expr::Binary(op, l, r) => {
                let right = if *op == BinOp::Pow { exponent } else { context };
                l.role_in(name, context)
                    .into_iter()
                    .chain(r.role_in(name, right))
                    .min()
            }
        }
    }

    /// The factors a threshold parameter is compared with: the variables of every `min`/`max`
    /// call whose arguments hold `$name` (`n` for `max(n-$theta,0)`). Empty when `name` is no
    /// threshold here.
    pub fn threshold_variables(&self, name: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.collect_threshold_variables(name, &mut out);
        out
    }

    fn collect_threshold_variables(&self, name: &str, out: &mut BTreeSet<String>) {
        match self {
            Expr::Binary(BinOp::Min | BinOp::Max, l, r)
                if l.parameters().contains(name) || r.parameters().contains(name) =>
            {
                out.extend(self.variables());
            }
            Expr::Unary(_, x) => x.collect_threshold_variables(name, out),
            Expr::Binary(_, l, r) => {
                l.collect_threshold_variables(name, out);
                r.collect_threshold_variables(name, out);
            }
            _ => {}
        }
    }

    /// Whether the expression can jump: it takes `floor` or `ceil` of something.
    pub fn steps(&self) -> bool {
        match self {
            Expr::Num(_) | Expr::Var(_) | Expr::Param(_) => false,
            Expr::Unary(UnOp::Floor | UnOp::Ceil, _) => true,
            Expr::Unary(_, x) => x.steps(),
            Expr::Binary(_, l, r) => l.steps() || r.steps(),
        }
    }

    /// The value if the expression has no variables and no parameters (e.g. `1`, `0`, `2*3`).
    pub fn constant_value(&self) -> Option<f64> {
        match self {
            Expr::Num(v) => Some(*v),
            Expr::Var(_) | Expr::Param(_) => None,
            Expr::Unary(op, x) => Some(op.apply(x.constant_value()?)),
            Expr::Binary(op, l, r) => Some(op.apply(l.constant_value()?, r.constant_value()?)),
        }
    }

    /// Binding strength when printed: 1 `+ -`, 2 `* /`, 3 unary minus, 4 `^`, 5 atoms and calls.
    fn precedence(&self) -> u8 {
        match self {
            Expr::Num(v) if v.is_sign_negative() => 3,
            Expr::Unary(UnOp::Neg, _) => 3,
            Expr::Binary(BinOp::Add | BinOp::Sub, ..) => 1,
            Expr::Binary(BinOp::Mul | BinOp::Div, ..) => 2,
            Expr::Binary(BinOp::Pow, ..) => 4,
            _ => 5,
        }
    }

    fn fmt_wrapped(&self, f: &mut fmt::Formatter<'_>, parens: bool) -> fmt::Result {
        if parens {
            write!(f, "({self})")
        } else {
            write!(f, "{self}")
        }
    }
}

/// Canonical text with the fewest parentheses; `parse(&e.to_string()) == Ok(e)` for every
/// expression that [`parse`] returns.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Num(v) => {
                let text = format!("{v:?}");
                f.write_str(text.strip_suffix(".0").unwrap_or(&text))
            }
            Expr::Var(n) => f.write_str(n),
            Expr::Param(n) => write!(f, "${n}"),
            Expr::Unary(UnOp::Neg, x) => {
                f.write_str("-")?;
                x.fmt_wrapped(f, x.precedence() < 3)
            }
            Expr::Unary(op, x) => write!(f, "{}({x})", op.symbol()),
            Expr::Binary(op @ (BinOp::Min | BinOp::Max), l, r) => {
                write!(f, "{}({l}, {r})", op.symbol())
            }
            Expr::Binary(op, l, r) => {
                let p = self.precedence();
                let (left, right) = match op {
                    BinOp::Pow => (l.precedence() < 5, r.precedence() < 3),
                    _ => (l.precedence() < p, r.precedence() <= p),
                };
                l.fmt_wrapped(f, left)?;
                match op {
                    BinOp::Add | BinOp::Sub => write!(f, " {} ", op.symbol())?,
                    _ => f.write_str(op.symbol())?,
                }
                r.fmt_wrapped(f, right)
            }
        }
    }
}
