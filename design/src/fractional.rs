//! Fractional factorial 2^(k−q) designs (Jain ch. 19): q factors are generated from products
//! of the others (`D=A*B*C`), the runs are the 2^(k−q) sign combinations of the rest, and the
//! price is aliasing — effects that the design cannot tell apart — summarized by the
//! resolution (the length of the shortest word of the defining relation).

use std::fmt::Write as _;

/// A set of factors as a bit mask (bit i = factor i); a product of effects is the XOR.
pub type Word = u32;

/// The most factors a fractional design may have: one bit of a [`Word`] each, with room
/// for `1 << k`.
pub const MAX_FACTORS: usize = Word::BITS as usize - 1;

/// One generator: `target = product of the factors in word`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generator {
    /// The generated factor.
    pub target: usize,
    /// The factors whose product gives its sign.
    pub word: Word,
}

/// A generator that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--fractional '{text}': {message}")]
pub struct GeneratorError {
    /// The generator as given.
    pub text: String,
    /// What is wrong.
    pub message: String,
}

impl Generator {
    /// Parses `D=A*B*C` (or `D=ABC` when every factor name is one character) against the
    /// factor names.
    pub fn parse(text: &str, names: &[&str]) -> Result<Generator, GeneratorError> {
        let error = |message: String| GeneratorError {
            text: text.to_string(),
            message,
        };
        if names.len() > MAX_FACTORS {
            return Err(error(format!(
                "{} factors; a fractional design has at most {MAX_FACTORS}",
                names.len()
            )));
        }
        let index = |name: &str| {
            names.iter().position(|n| *n == name).ok_or_else(|| {
                error(format!(
                    "'{name}' is not a factor (factors: {})",
                    names.join(", ")
                ))
            })
        };
        let (target, product) = text
            .split_once('=')
            .ok_or_else(|| error("expected FACTOR=PRODUCT, like D=A*B*C".into()))?;
        let target = index(target.trim())?;
        let product = product.trim();
        let parts: Vec<String> = if product.contains('*') {
            product.split('*').map(|s| s.trim().to_string()).collect()
        } else if names.iter().all(|n| n.chars().count() == 1) {
            product.chars().map(String::from).collect()
        } else {
            vec![product.to_string()]
        };
        let mut word: Word = 0;
        for part in &parts {
            let bit = 1 << index(part)?;
            if word & bit != 0 {
                return Err(error(format!("'{part}' appears twice in the product")));
            }
            word |= bit;
        }
        if word & (1 << target) != 0 {
            return Err(error("a factor cannot generate itself".into()));
        }
        if word.count_ones() < 2 {
            return Err(error(
                "the product needs at least two factors (else it aliases two main effects)".into(),
            ));
        }
        Ok(Generator { target, word })
    }
}

/// The defining relation: every product of the generators' words `target·word` (2^q − 1).
pub fn defining_relation(generators: &[Generator]) -> Vec<Word> {
    let base: Vec<Word> = generators.iter().map(|g| g.word | 1 << g.target).collect();
    let mut words: Vec<Word> = (1..1u32 << base.len())
        .map(|subset| {
            (0..base.len())
                .filter(|i| subset >> i & 1 == 1)
                .fold(0, |w, i| w ^ base[i])
        })
        .collect();
    words.sort_by_key(|w| (w.count_ones(), *w));
    words
}

/// The resolution: the length of the shortest word of the defining relation.
pub fn resolution(generators: &[Generator]) -> u32 {
    defining_relation(generators)
        .iter()
        .map(|w| w.count_ones())
        .min()
        .unwrap_or(u32::MAX)
}

/// An effect's name: its factors joined by `*` (`I` for none).
pub fn effect_name(word: Word, names: &[&str]) -> String {
    if word == 0 {
        return "I".into();
    }
    (0..names.len())
        .filter(|i| word >> i & 1 == 1)
        .map(|i| names[i])
        .collect::<Vec<_>>()
        .join("*")
}

/// The alias structure of main effects and two-factor interactions, and the resolution, as
/// lines for the user.
pub fn describe(generators: &[Generator], names: &[&str]) -> String {
    let relation = defining_relation(generators);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "fractional design 2^({}-{}): {} runs, resolution {}",
        names.len(),
        generators.len(),
        1u64 << names.len().saturating_sub(generators.len()).min(63),
        roman(resolution(generators))
    );
    let words: Vec<String> = relation.iter().map(|&w| effect_name(w, names)).collect();
    let _ = writeln!(out, "defining relation: I = {}", words.join(" = "));
    let k = names.len();
    let mut effects: Vec<Word> = (0..k).map(|i| 1 << i).collect();
    for i in 0..k {
        for j in i + 1..k {
            effects.push(1 << i | 1 << j);
        }
    }
    for e in effects {
        let aliases: Vec<String> = relation
            .iter()
            .map(|&w| effect_name(e ^ w, names))
            .collect();
        let _ = writeln!(out, "  {} = {}", effect_name(e, names), aliases.join(" = "));
    }
    out
}

fn roman(n: u32) -> String {
    match n {
        1 => "I".into(),
        2 => "II".into(),
        3 => "III".into(),
        4 => "IV".into(),
        5 => "V".into(),
        6 => "VI".into(),
        7 => "VII".into(),
        8 => "VIII".into(),
        n => n.to_string(),
    }
}

/// The runs' signs (±1 per factor): every combination of the base factors (those not
/// generated; the first varies slowest), each generated factor the product of its word.
/// `k` is at most [`MAX_FACTORS`] (more gives no runs).
pub fn signs(k: usize, generators: &[Generator]) -> Vec<Vec<f64>> {
    if k > MAX_FACTORS {
        return Vec::new();
    }
    let generated: Word = generators.iter().fold(0, |m, g| m | 1 << g.target);
    let base: Vec<usize> = (0..k).filter(|i| generated >> i & 1 == 0).collect();
    (0..1usize << base.len())
        .map(|combo| {
            let mut sign = vec![0.0; k];
            for (b, &f) in base.iter().enumerate() {
                sign[f] = if combo >> (base.len() - 1 - b) & 1 == 1 {
                    1.0
                } else {
                    -1.0
                };
            }
            for g in generators {
                sign[g.target] = (0..k)
                    .filter(|i| g.word >> i & 1 == 1)
                    .map(|i| sign[i])
                    .product();
            }
            sign
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 4] = ["A", "B", "C", "D"];

    #[test]
    fn a_half_fraction_of_four_factors() {
        // Jain's 2^(4-1) with D = ABC: I = ABCD, resolution IV; A = BCD, AB = CD.
        let g = Generator::parse("D=ABC", &NAMES).unwrap();
        assert_eq!(g.target, 3);
        assert_eq!(resolution(&[g]), 4);
        let text = describe(&[g], &NAMES);
        assert!(text.contains("2^(4-1): 8 runs, resolution IV"), "{text}");
        assert!(text.contains("defining relation: I = A*B*C*D"), "{text}");
        assert!(text.contains("  A = B*C*D\n"), "{text}");
        assert!(text.contains("  A*B = C*D\n"), "{text}");
        let runs = signs(4, &[g]);
        assert_eq!(runs.len(), 8);
        for r in &runs {
            assert_eq!(r[3], r[0] * r[1] * r[2]);
        }
        // Every column is balanced and orthogonal to every other.
        for i in 0..4 {
            assert_eq!(runs.iter().map(|r| r[i]).sum::<f64>(), 0.0);
            for j in i + 1..4 {
                assert_eq!(runs.iter().map(|r| r[i] * r[j]).sum::<f64>(), 0.0);
            }
        }
    }

    #[test]
    fn two_generators() {
        // 2^(5-2), D = AB, E = AC: I = ABD = ACE = BCDE, resolution III.
        let names = ["A", "B", "C", "D", "E"];
        let g = [
            Generator::parse("D=A*B", &names).unwrap(),
            Generator::parse("E=A*C", &names).unwrap(),
        ];
        assert_eq!(resolution(&g), 3);
        let relation: Vec<String> = defining_relation(&g)
            .iter()
            .map(|&w| effect_name(w, &names))
            .collect();
        assert_eq!(relation, ["A*B*D", "A*C*E", "B*C*D*E"]);
        assert_eq!(signs(5, &g).len(), 8);
    }

    #[test]
    fn bad_generators() {
        let e = |t: &str| {
            Generator::parse(t, &["p", "n", "iters"])
                .unwrap_err()
                .to_string()
        };
        assert!(e("iters").contains("expected FACTOR=PRODUCT"));
        assert!(e("iters=p*q").contains("'q' is not a factor (factors: p, n, iters)"));
        assert!(e("iters=p*iters").contains("cannot generate itself"));
        assert!(e("iters=p").contains("at least two factors"));
        assert!(e("iters=p*p").contains("appears twice"));
        assert_eq!(
            Generator::parse("iters=p*n", &["p", "n", "iters"])
                .unwrap()
                .word,
            0b011
        );
    }
}
