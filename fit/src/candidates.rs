//! The default candidate models per (category, factor), from the paper, as data.
//!
//! A category with a sub-category suffix (`rc.cpu`) uses its parent's row. A factor or
//! response without a row gets the generic set, written over the factor `{x}`.

/// (category, factor, candidate models), in the order the paper lists them.
const DEFAULTS: &[(&str, &str, &[&str])] = &[
    ("pc", "p", &["1"]),
    ("li", "p", &["p*sqrt(p)", "p", "1"]),
    ("ip", "p", &["p", "1"]),
    ("sl", "p", &["0", "1", "p"]),
    ("cl", "p", &["p", "1"]),
    ("rc", "p", &["max(p-$theta,0)", "p", "1"]),
    ("pc", "n", &["n^2*log2(n)"]),
    ("li", "n", &["n*log2(n)"]),
    ("ip", "n", &["1"]),
    ("sl", "n", &["0"]),
    ("cl", "n", &["n^2", "n"]),
    ("rc", "n", &["n^2", "n"]),
];

/// Candidates for any other factor or response; `{x}` stands for the factor's name.
const GENERIC: &[&str] = &[
    "1",
    "{x}",
    "{x}*log2({x})",
    "{x}^2",
    "{x}^2*log2({x})",
    "{x}^3",
    "log2({x})",
    "sqrt({x})",
    "1/{x}",
];

/// The exponents of Extra-P's default search space (Calotoiu et al.; `extrap` 4.2.5) that the
/// search's own set ([`crate::search::EXPONENTS`]) lacks: shapes may take them too.
const EXTRA_P_EXPONENTS: [(i32, i32); 3] = [(4, 5), (7, 3), (11, 4)];

/// Whether the paper gives default shapes for `category` (or its parent, `rc` for `rc.cpu`)
/// along `factor`.
///
/// ```
/// assert!(fit::candidates::has_paper_defaults("rc.cpu", "p"));
/// assert!(!fit::candidates::has_paper_defaults("time", "p"));
/// ```
pub fn has_paper_defaults(category: &str, factor: &str) -> bool {
    let parent = category.split('.').next().unwrap_or(category);
    DEFAULTS
        .iter()
        .any(|(c, f, _)| *c == parent && *f == factor)
}

/// The default candidate models (as text) for modelling `category` against `factor`.
///
/// ```
/// assert_eq!(fit::default_candidates("li", "p"), ["p*sqrt(p)", "p", "1"]);
/// assert_eq!(fit::default_candidates("rc.cpu", "n"), ["n^2", "n"]);
/// assert_eq!(fit::default_candidates("wall", "m")[2], "m*log2(m)");
/// ```
pub fn default_candidates(category: &str, factor: &str) -> Vec<String> {
    let parent = category.split('.').next().unwrap_or(category);
    match DEFAULTS
        .iter()
        .find(|(c, f, _)| *c == parent && *f == factor)
    {
        Some((_, _, models)) => models.iter().map(|m| m.to_string()).collect(),
        None => GENERIC.iter().map(|m| m.replace("{x}", factor)).collect(),
    }
}

/// Shapes a category may take along a factor, for multi-factor models: the paper's defaults
/// first, then the generic set and a threshold `max({x}-$theta,0)` (contention that starts
/// at some number of processors, say), without repeats. Ranking on the design's edges picks
/// among them; the defaults win ties. A (category, factor) pair the paper has no row for
/// (any factor of an Extra-P file, a response model's) may also take any single term
/// `{x}^i log2({x})^j` of the search's normal form ([`crate::search::EXPONENTS`] and
/// [`EXTRA_P_EXPONENTS`]: every exponent of Extra-P's modeler): the generic set is only nine
/// of them.
///
/// ```
/// let shapes = fit::candidates::shape_candidates("li", "n");
/// assert_eq!(shapes[0], "n*log2(n)");
/// assert!(shapes.contains(&"n^2*log2(n)".to_string()));
/// assert!(shapes.contains(&"max(n-$theta,0)".to_string()));
/// assert!(!shapes.contains(&"n^(5/4)*log2(n)".to_string()));
/// let wider = fit::candidates::shape_candidates("time", "x");
/// assert!(wider.contains(&"x^(5/4)*log2(x)".to_string()));
/// ```
pub fn shape_candidates(category: &str, factor: &str) -> Vec<String> {
    let mut shapes = default_candidates(category, factor);
    let threshold = format!("max({factor}-$theta,0)");
    let generic = GENERIC.iter().map(|m| m.replace("{x}", factor));
    let paper = has_paper_defaults(category, factor);
    let exponents = crate::search::EXPONENTS.iter().chain(&EXTRA_P_EXPONENTS);
    let terms = exponents.flat_map(|&e| {
        crate::search::LOG_POWERS
            .iter()
            .filter_map(move |&j| crate::search::term_text(factor, e, j))
    });
    let terms: Vec<String> = if paper { Vec::new() } else { terms.collect() };
    for shape in generic.chain([threshold]).chain(terms) {
        if !shapes.contains(&shape) {
            shapes.push(shape);
        }
    }
    shapes
}

/// The integer terms offered to a category's model along `factor` once the residual test
/// (docs/modelling.md#integer-structure, [`crate::integer`]) finds one of `groupings`: each
/// grouping's terms on their own, then each scaled by every other factor's shape in `others`
/// (a pattern whose size grows with the problem, as an odd thread's share of the work does).
/// Shapes that are sums are parenthesised; constants (`1`) are skipped.
///
/// ```
/// use fit::integer::Grouping;
/// let terms = fit::candidates::integer_candidates("p", &[Grouping::Modulo(3)], &["n^2"]);
/// assert_eq!(terms[3..], ["n^2*floor(p/3)", "n^2*ceil(p/3)", "n^2*p/(3*floor(p/3))"]);
/// let odd = fit::candidates::integer_candidates("p", &[Grouping::Modulo(2)], &["n + n^2"]);
/// assert_eq!(odd[4], "(n + n^2)*(p-2*floor(p/2))");
/// ```
pub fn integer_candidates(
    factor: &str,
    groupings: &[crate::integer::Grouping],
    others: &[&str],
) -> Vec<String> {
    let wrap = |s: &str| {
        let mut depth = 0i32;
        let sum = s.chars().any(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            depth == 0 && (c == '+' || c == '-')
        });
        if sum { format!("({s})") } else { s.to_string() }
    };
    let terms: Vec<String> = groupings.iter().flat_map(|g| g.terms(factor)).collect();
    let mut out = terms.clone();
    for shape in others.iter().filter(|s| **s != "1") {
        for term in &terms {
            out.push(format!("{}*{}", wrap(shape), wrap(term)));
        }
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Model;

    #[test]
    fn every_default_parses_over_its_factor() {
        for (_, factor, models) in DEFAULTS {
            for m in *models {
                let model = Model::parse(m).unwrap();
                assert!(model.variables().iter().all(|v| v == factor), "{m}");
            }
        }
        for m in default_candidates("wall", "threads") {
            Model::parse(&m).unwrap();
        }
    }

    #[test]
    fn generic_set_for_unknown_pairs() {
        assert_eq!(default_candidates("li", "iters").len(), GENERIC.len());
        assert_eq!(default_candidates("sl", "p"), ["0", "1", "p"]);
    }
}
