//! Evaluation: an [`Expr`] compiled to a flat stack program with names resolved to indices,
//! run without allocating, with forward-mode gradients with respect to the parameters.

use super::{BinOp, Expr, UnOp, UnknownName};

/// Stack entries for values available to [`Bound::eval`] without allocating.
const STACK: usize = 16;
/// Stack entries for values and gradients available to [`Bound::eval_grad`] without allocating.
const GRAD_STACK: usize = 32;

impl UnOp {
    pub(crate) fn apply(self, a: f64) -> f64 {
        match self {
            UnOp::Neg => -a,
            UnOp::Sqrt => a.sqrt(),
            UnOp::Log => a.ln(),
            UnOp::Log2 => a.log2(),
            UnOp::Exp => a.exp(),
            UnOp::Ceil => a.ceil(),
            UnOp::Floor => a.floor(),
        }
    }

    /// Derivative at `a`, where `v` is the value there.
    fn derivative(self, a: f64, v: f64) -> f64 {
        match self {
            UnOp::Neg => -1.0,
            UnOp::Sqrt => 0.5 / v,
            UnOp::Log => 1.0 / a,
            UnOp::Log2 => 1.0 / (a * std::f64::consts::LN_2),
            UnOp::Exp => v,
            // Steps: flat between whole numbers (the jumps have no derivative).
            UnOp::Ceil | UnOp::Floor => 0.0,
        }
    }
}

/// Whether `max` (or `min`) picks its first argument; NaN propagates from either side.
fn picks_first(op: BinOp, a: f64, b: f64) -> bool {
    a.is_nan() || if op == BinOp::Max { a > b } else { a < b }
}

impl BinOp {
    pub(crate) fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            BinOp::Pow => a.powf(b),
            BinOp::Min | BinOp::Max => {
                if picks_first(self, a, b) {
                    a
                } else {
                    b
                }
            }
        }
    }

    /// Partial derivatives with respect to `a` and `b`, where `v` is the value.
    fn partials(self, a: f64, b: f64, v: f64) -> (f64, f64) {
        match self {
            BinOp::Add => (1.0, 1.0),
            BinOp::Sub => (1.0, -1.0),
            BinOp::Mul => (b, a),
            BinOp::Div => (1.0 / b, -v / b),
            BinOp::Pow => (b * a.powf(b - 1.0), v * a.ln()),
            BinOp::Min | BinOp::Max => {
                if picks_first(self, a, b) {
                    (1.0, 0.0)
                } else {
                    (0.0, 1.0)
                }
            }
        }
    }
}

/// `g * d`, but zero where `g` is zero, so that a factor that does not depend on a parameter
/// contributes nothing even where `d` is infinite or NaN (e.g. the `ln` part of `p^2`, p <= 0).
fn chain(g: f64, d: f64) -> f64 {
    if g == 0.0 { 0.0 } else { g * d }
}

/// Applies the chain rule for a one-operand operation with derivative `d` to `slot`.
fn scale(dep: bool, slot: &mut [f64], d: f64) {
    if dep {
        slot.iter_mut().for_each(|g| *g = chain(*g, d));
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Const(f64),
    Var(usize),
    Param(usize),
    Un(UnOp),
    /// `x ^ c` with a constant exponent.
    PowConst(f64),
    /// `x ^ 2`
    Square,
    Bin(BinOp),
}

/// An expression with names resolved to indices, compiled for fast evaluation over many rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// Instructions, each with whether its result depends on a parameter.
    code: Vec<(Op, bool)>,
    /// Largest stack depth the program reaches.
    depth: usize,
}

impl Expr {
    /// Resolves factor and parameter names (without `$`) to their indices in `variables` and
    /// `parameters`, which fix the layout of the slices given to [`Bound::eval`]. Names may be
    /// given that the expression does not use. Constant subexpressions are folded.
    pub fn bind(&self, variables: &[&str], parameters: &[&str]) -> Result<Bound, UnknownName> {
        let mut code = Vec::new();
        compile(self, variables, parameters, &mut code)?;
        let (mut n, mut depth) = (0usize, 0);
        for (op, _) in &code {
            match op {
                Op::Const(_) | Op::Var(_) | Op::Param(_) => n += 1,
                Op::Bin(_) => n -= 1,
                Op::Un(_) | Op::PowConst(_) | Op::Square => {}
            }
            depth = depth.max(n);
        }
        Ok(Bound { code, depth })
    }
}

/// Appends the program for `e`; returns whether its value depends on a parameter.
fn compile(
    e: &Expr,
    vars: &[&str],
    params: &[&str],
    code: &mut Vec<(Op, bool)>,
) -> Result<bool, UnknownName> {
    let index = |names: &[&str], name: &str, is_parameter: bool| {
        let unknown = || UnknownName {
            name: name.to_string(),
            is_parameter,
        };
        names.iter().position(|n| *n == name).ok_or_else(unknown)
    };
    let (op, dep) = match (e, e.constant_value()) {
        (_, Some(c)) | (&Expr::Num(c), None) => (Op::Const(c), false),
        (Expr::Var(n), None) => (Op::Var(index(vars, n, false)?), false),
        (Expr::Param(n), None) => (Op::Param(index(params, n, true)?), true),
        (Expr::Unary(op, x), None) => (Op::Un(*op), compile(x, vars, params, code)?),
        (Expr::Binary(op, l, r), None) => {
            let left = compile(l, vars, params, code)?;
            match (op, r.constant_value()) {
                (BinOp::Pow, Some(2.0)) => (Op::Square, left),
                (BinOp::Pow, Some(c)) => (Op::PowConst(c), left),
                _ => (Op::Bin(*op), compile(r, vars, params, code)? || left),
            }
        }
    };
    code.push((op, dep));
    Ok(dep)
}

impl Bound {
    /// The value at factor values `variables` and parameter values `parameters`, laid out as the
    /// names given to [`Expr::bind`]. IEEE semantics: callers check finiteness.
    ///
    /// # Panics
    /// If a slice is shorter than the names given to [`Expr::bind`] that the expression uses.
    #[inline]
    pub fn eval(&self, variables: &[f64], parameters: &[f64]) -> f64 {
        if self.depth <= STACK {
            self.run(variables, parameters, &mut [0.0; STACK])
        } else {
            self.run(variables, parameters, &mut vec![0.0; self.depth])
        }
    }

    fn run(&self, x: &[f64], theta: &[f64], s: &mut [f64]) -> f64 {
        let mut n = 0;
        for &(op, _) in &self.code {
            match op {
                Op::Const(c) => (s[n], n) = (c, n + 1),
                Op::Var(i) => (s[n], n) = (x[i], n + 1),
                Op::Param(i) => (s[n], n) = (theta[i], n + 1),
                Op::Un(u) => s[n - 1] = u.apply(s[n - 1]),
                Op::PowConst(c) => s[n - 1] = s[n - 1].powf(c),
                Op::Square => s[n - 1] *= s[n - 1],
                Op::Bin(b) => {
                    n -= 1;
                    s[n - 1] = b.apply(s[n - 1], s[n]);
                }
            }
        }
        s[0]
    }

    /// The value, as [`Bound::eval`], and in `grad` its exact gradient with respect to the
    /// parameters (forward mode). `grad.len()` must equal `parameters.len()`; it is overwritten.
    /// `max`/`min` take the gradient of the argument they pick; a factor whose gradient is zero
    /// contributes zero even where its derivative is not finite.
    pub fn eval_grad(&self, variables: &[f64], parameters: &[f64], grad: &mut [f64]) -> f64 {
        debug_assert_eq!(grad.len(), parameters.len());
        let np = grad.len();
        if np == 0 {
            return self.eval(variables, parameters);
        }
        let need = self.depth * (np + 1);
        if need <= GRAD_STACK {
            self.run_grad(variables, parameters, &mut [0.0; GRAD_STACK], grad)
        } else {
            self.run_grad(variables, parameters, &mut vec![0.0; need], grad)
        }
    }

    /// Stack machine over values and, after them in `buf`, one gradient of `out.len()` entries
    /// per value. Slots of results that depend on no parameter always hold a zero gradient.
    fn run_grad(&self, x: &[f64], theta: &[f64], buf: &mut [f64], out: &mut [f64]) -> f64 {
        let (s, g) = buf.split_at_mut(self.depth);
        let np = out.len();
        let mut n = 0;
        for &(op, dep) in &self.code {
            let (v, d) = match op {
                Op::Const(c) => (c, None),
                Op::Var(i) => (x[i], None),
                Op::Param(i) => (theta[i], Some(i)),
                Op::Un(u) => {
                    let v = u.apply(s[n - 1]);
                    scale(dep, &mut g[(n - 1) * np..n * np], u.derivative(s[n - 1], v));
                    s[n - 1] = v;
                    continue;
                }
                Op::Square => {
                    let a = s[n - 1];
                    scale(dep, &mut g[(n - 1) * np..n * np], 2.0 * a);
                    s[n - 1] = a * a;
                    continue;
                }
                Op::PowConst(c) => {
                    let a = s[n - 1];
                    scale(dep, &mut g[(n - 1) * np..n * np], c * a.powf(c - 1.0));
                    s[n - 1] = a.powf(c);
                    continue;
                }
                Op::Bin(b) => {
                    n -= 1;
                    let (a, bv) = (s[n - 1], s[n]);
                    s[n - 1] = b.apply(a, bv);
                    if dep {
                        let (da, db) = b.partials(a, bv, s[n - 1]);
                        let (ga, gb) = g[(n - 1) * np..(n + 1) * np].split_at_mut(np);
                        for (ga, gb) in ga.iter_mut().zip(gb.iter()) {
                            *ga = chain(*ga, da) + chain(*gb, db);
                        }
                    }
                    continue;
                }
            };
            // A leaf: push its value and gradient (a unit vector for a parameter).
            s[n] = v;
            let slot = &mut g[n * np..(n + 1) * np];
            slot.fill(0.0);
            if let Some(i) = d {
                slot[i] = 1.0;
            }
            n += 1;
        }
        out.copy_from_slice(&g[..np]);
        s[0]
    }
}
