//! Long lists of sides and crossovers made short for people: a model that steps with a
//! whole-number factor (a PACE model's chunks of `n` rows) can change its verdict at every
//! value, hundreds of times along an axis. The text reports and verdicts say such stretches
//! together; CSV and JSON keep every one (docs/comparing.md).

use fit::crossover::{Axis, Basis, Scale, Side, Winner};

/// At most this many sides, or crossings, of one level are written out one by one. A model
/// that steps with a whole-number factor (a PACE model's chunks of `n` rows) can change its
/// verdict at every value: its short sides are said together, and its crossings that are not
/// significant counted (the CSV and JSON keep every one).
pub(crate) const LEVEL_ITEMS: usize = 6;

/// The sides along `u` as they are said: each on its own, or, where there are more than
/// [`LEVEL_ITEMS`], two or more sides of the models (or of the difference model) that follow
/// one another, each shorter than a quarter of the axis (on its scale), together.
pub(crate) fn side_groups<'s>(u: &Axis, sides: &'s [Side]) -> Vec<&'s [Side]> {
    if sides.len() <= LEVEL_ITEMS {
        return sides.chunks(1).collect();
    }
    let span = |a: f64, b: f64| match u.scale {
        Scale::Log if a > 0.0 && b > 0.0 => b.ln() - a.ln(),
        _ => b - a,
    };
    let short = |s: &Side| s.basis != Basis::Runs && span(s.from, s.to) < span(u.lo, u.hi) / 4.0;
    let mut out = Vec::new();
    let mut k = 0;
    while k < sides.len() {
        let basis = sides[k].basis;
        let run = sides[k..]
            .iter()
            .take_while(|s| short(s) && s.basis == basis)
            .count()
            .max(1);
        out.push(&sides[k..k + run]);
        k += run;
    }
    out
}

/// The verdicts of a group of sides, each once, in the order they first come.
pub(crate) fn winners(group: &[Side]) -> Vec<Winner> {
    let mut out: Vec<Winner> = Vec::new();
    for s in group {
        if !out.contains(&s.winner) {
            out.push(s.winner);
        }
    }
    out
}
