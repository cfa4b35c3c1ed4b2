//! Parsing: tokens to [`Expr`] by recursive descent, and the split of a user model into terms
//! at top-level `+`.

use super::lex::{Tok, Token, lex};
use super::{BinOp, Expr, ParseError, UnOp};

/// Deepest nesting of parentheses, unary minus and exponents accepted, so that no input can
/// overflow the stack.
const MAX_DEPTH: usize = 100;
/// Deepest syntax tree accepted (a chain `p*p*..*p` of n factors is n deep): everything that
/// walks the tree (printing, binding, dropping) recurses once per level.
pub(crate) const MAX_TREE_DEPTH: usize = 500;
const EXPECTED: &str = "where a number, name or '(' was expected";
const KNOWN: &str = "(known: sqrt, log, log2, exp, ceil, floor, min, max)";

/// An expression and the depth of its tree.
type Parsed = Result<(Expr, usize), ParseError>;

fn fail<T>(column: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError::new(column, message))
}

enum Func {
    Un(UnOp),
    Bin(BinOp),
}

fn function(name: &str) -> Option<Func> {
    Some(match name {
        "sqrt" => Func::Un(UnOp::Sqrt),
        "ceil" => Func::Un(UnOp::Ceil),
        "floor" => Func::Un(UnOp::Floor),
        "log" => Func::Un(UnOp::Log),
        "log2" => Func::Un(UnOp::Log2),
        "exp" => Func::Un(UnOp::Exp),
        "min" => Func::Bin(BinOp::Min),
        "max" => Func::Bin(BinOp::Max),
        _ => return None,
    })
}

/// Parses one expression.
pub fn parse(src: &str) -> Result<Expr, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let toks = lex(&chars)?;
    parse_tokens(&chars, &toks, chars.len() + 1)
}

/// Parses a user model: terms separated by `+` at the top level (not inside parentheses or
/// function arguments), each with its trimmed source text. `1 + p` gives the terms `1` and `p`;
/// `p - 1` is one term. Columns in errors are relative to the whole `src`.
pub fn parse_terms(src: &str) -> Result<Vec<(String, Expr)>, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let toks = lex(&chars)?;
    let (mut terms, mut depth, mut first) = (Vec::new(), 0i64, 0);
    for i in 0..=toks.len() {
        let next = toks.get(i);
        if let Some(t) = next {
            depth += i64::from(t.is('(')) - i64::from(t.is(')'));
            if depth != 0 || !t.is('+') {
                continue;
            }
        }
        let end_col = next.map_or(chars.len() + 1, Token::col);
        let term = &toks[first..i];
        let (Some(a), Some(b)) = (term.first(), term.last()) else {
            return fail(end_col, "empty term");
        };
        let expr = parse_tokens(&chars, term, end_col)?;
        terms.push((chars[a.start..b.end].iter().collect(), expr));
        first = i + 1;
    }
    Ok(terms)
}

/// Parses `toks` as a whole expression; `end_col` is the column reported when they run out.
fn parse_tokens(src: &[char], toks: &[Token], end_col: usize) -> Result<Expr, ParseError> {
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        end_col,
        depth: 0,
    };
    let e = p.sum()?;
    match p.peek() {
        None => Ok(e),
        Some(t) if t.is(')') => fail(t.col(), "unmatched ')'"),
        Some(t) => fail(
            t.col(),
            format!("expected an operator before '{}'", p.text(t)),
        ),
    }
    .map(|(e, _)| e)
}

struct Parser<'a> {
    src: &'a [char],
    toks: &'a [Token],
    pos: usize,
    end_col: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek().is_some_and(|t| t.is(c));
        self.pos += usize::from(found);
        found
    }

    fn col(&self) -> usize {
        self.peek().map_or(self.end_col, Token::col)
    }

    /// The token's text, as an error quotes it (shortened).
    fn text(&self, t: &Token) -> String {
        super::excerpt(&self.src[t.start..t.end].iter().collect::<String>())
    }

    /// `e`, `depth` deep, unless that is deeper than [`MAX_TREE_DEPTH`].
    fn node(&self, e: Expr, depth: usize) -> Parsed {
        if depth > MAX_TREE_DEPTH {
            return fail(
                self.col(),
                format!("expression more than {MAX_TREE_DEPTH} operations deep"),
            );
        }
        Ok((e, depth))
    }

    /// `operand (op operand)*` for two left-associative operators `ops`.
    fn left_assoc(&mut self, ops: [(char, BinOp); 2], operand: fn(&mut Self) -> Parsed) -> Parsed {
        let (mut e, mut depth) = operand(self)?;
        while let Some(&(_, op)) = ops.iter().find(|(c, _)| self.eat(*c)) {
            let (right, d) = operand(self)?;
            (e, depth) = self.node(
                Expr::Binary(op, Box::new(e), Box::new(right)),
                1 + depth.max(d),
            )?;
        }
        Ok((e, depth))
    }

    fn sum(&mut self) -> Parsed {
        self.left_assoc([('+', BinOp::Add), ('-', BinOp::Sub)], Self::product)
    }

    fn product(&mut self) -> Parsed {
        self.left_assoc([('*', BinOp::Mul), ('/', BinOp::Div)], Self::unary)
    }

    /// `'-' unary | atom ('^' unary)?`: `^` binds tighter than unary minus on its left but
    /// accepts one on its right (`2^-1`), and is right-associative.
    fn unary(&mut self) -> Parsed {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return fail(
                self.col(),
                format!("expression nested more than {MAX_DEPTH} levels deep"),
            );
        }
        let e = if self.eat('-') {
            let (x, d) = self.unary()?;
            self.node(Expr::Unary(UnOp::Neg, Box::new(x)), d + 1)?
        } else {
            let (base, d) = self.atom()?;
            if self.eat('^') {
                let (exponent, e) = self.unary()?;
                self.node(
                    Expr::Binary(BinOp::Pow, base.into(), exponent.into()),
                    1 + d.max(e),
                )?
            } else {
                (base, d)
            }
        };
        self.depth -= 1;
        Ok(e)
    }

    /// A number, name, parameter, function call or parenthesised expression.
    fn atom(&mut self) -> Parsed {
        let Some(t) = self.peek() else {
            return fail(self.end_col, format!("expression ends {EXPECTED}"));
        };
        self.pos += 1;
        match &t.tok {
            Tok::Num(v) => Ok((Expr::Num(*v), 1)),
            Tok::Param(n) => Ok((Expr::Param(n.clone()), 1)),
            Tok::Name(n) if self.peek().is_some_and(|t| t.is('(')) => self.call(t, n),
            Tok::Name(n) if function(n).is_some() => {
                fail(t.col(), format!("function '{n}' needs '(' after it"))
            }
            Tok::Name(n) => Ok((Expr::Var(n.clone()), 1)),
            Tok::Sym('(') => {
                let e = self.sum()?;
                self.close(t)?;
                Ok(e)
            }
            Tok::Sym(_) => fail(t.col(), format!("unexpected '{}' {EXPECTED}", self.text(t))),
        }
    }

    fn close(&mut self, open: &Token) -> Result<(), ParseError> {
        match self.eat(')') {
            true => Ok(()),
            false => fail(
                self.col(),
                format!("expected ')' to close '(' at column {}", open.col()),
            ),
        }
    }

    /// The arguments of function `name` (token `t`); the next token is its `(`.
    fn call(&mut self, t: &Token, name: &str) -> Parsed {
        let Some(f) = function(name) else {
            return fail(
                t.col(),
                format!("unknown function '{}' {KNOWN}", super::excerpt(name)),
            );
        };
        let open = &self.toks[self.pos];
        self.pos += 1;
        let mut args = Vec::new();
        if !self.eat(')') {
            args.push(self.sum()?);
            while self.eat(',') {
                args.push(self.sum()?);
            }
            self.close(open)?;
        }
        let (wanted, got) = (if matches!(f, Func::Un(_)) { 1 } else { 2 }, args.len());
        match (f, args.pop(), args.pop(), args.is_empty()) {
            (Func::Un(op), Some((a, d)), None, _) => self.node(Expr::Unary(op, Box::new(a)), d + 1),
            (Func::Bin(op), Some((b, db)), Some((a, da)), true) => {
                self.node(Expr::Binary(op, a.into(), b.into()), 1 + da.max(db))
            }
            _ => {
                let s = if wanted == 1 { "" } else { "s" };
                fail(
                    t.col(),
                    format!("{name} takes {wanted} argument{s}, got {got}"),
                )
            }
        }
    }
}
