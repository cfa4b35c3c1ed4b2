//! Plans too large to make are refused before any point is allocated, the error naming how
//! many points (or runs) were asked and the limit; so are factors with too many levels.

use design::fractional::MAX_FACTORS;
use design::plan::MAX_RUNS;
use design::{Design, Factor, Generator, plan};

fn factors(specs: &[&str]) -> Vec<Factor> {
    specs.iter().map(|s| Factor::parse(s).unwrap()).collect()
}

fn refused(factors: &[Factor], design: Design, replicates: usize) -> String {
    plan(factors, design, replicates, None)
        .unwrap_err()
        .to_string()
}

#[test]
fn level_counts_are_bounded() {
    let e = Factor::parse("n=1..1000000000000:lin:1000000000000").unwrap_err();
    assert_eq!(
        e.to_string(),
        "--factor 'n=1..1000000000000:lin:1000000000000': column 24: \
         1000000000000 levels; a factor has at most 1000000"
    );
    let e = Factor::parse("p=1..2:lin:4294967295")
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("4294967295 levels; a factor has at most 1000000"),
        "{e}"
    );
    let e = Factor::parse("p=1..2:log2:99999999999999999999999")
        .unwrap_err()
        .to_string();
    assert!(e.contains("levels; a factor has at most 1000000"), "{e}");
    assert_eq!(
        Factor::parse("x=0.5..1.5:lin:1000000")
            .unwrap()
            .levels
            .len(),
        MAX_RUNS
    );
}

#[test]
fn full_designs_are_counted_first() {
    let thousand = factors(&[
        "a=0.5..1:lin:1000",
        "b=0.5..1:lin:1000",
        "c=0.5..1:lin:1000",
    ]);
    assert_eq!(
        refused(&thousand, Design::Full, 1),
        "the design has 1000000000 points; the limit is 1000000"
    );
    let big: Vec<Factor> = (0..8)
        .map(|i| Factor::parse(&format!("f{i}=0.5..1:lin:1000")).unwrap())
        .collect();
    assert_eq!(
        refused(&big, Design::Full, 1),
        "the design has 1e+24 points; the limit is 1000000"
    );
    assert_eq!(
        refused(&thousand[..2], Design::Full, 2),
        "the design has 2000000 runs (1000000 points x 2 replicates); the limit is 1000000"
    );
    // At the limit, the plan is made.
    assert_eq!(
        plan(&thousand[..2], Design::Full, 1, None)
            .unwrap()
            .runs
            .len(),
        MAX_RUNS
    );
}

#[test]
fn corners_edges_and_replicates_are_counted_first() {
    let many: Vec<Factor> = (0..64)
        .map(|i| Factor::parse(&format!("f{i}=1,2")).unwrap())
        .collect();
    assert_eq!(
        refused(&many, Design::TwoK, 1),
        "the design has 1.8446744073709552e+19 points; the limit is 1000000"
    );
    assert!(
        refused(&many, Design::Edges(3), 1).starts_with("the design has 1.8446744073709552e+19")
    );
    let two = factors(&["p=2,26", "n=0.5..1024"]);
    let e = refused(&two, Design::Edges(usize::MAX), 1);
    assert!(e.ends_with("points; the limit is 1000000"), "{e}");
    let e = refused(&two, Design::TwoK, usize::MAX);
    assert_eq!(
        e,
        "the design has 7.378697629483821e+19 runs (4 points x 18446744073709551615 replicates); \
         the limit is 1000000"
    );
    // An integer factor's edge holds as many points as it has integers, whatever K asks.
    let p = factors(&["p=2,26", "q=1,2"]);
    assert_eq!(
        plan(&p, Design::Edges(MAX_RUNS), 1, None)
            .unwrap()
            .runs
            .len(),
        4 + 2 * 23
    );
}

#[test]
fn fractional_designs_are_bounded() {
    let names: Vec<String> = (0..=MAX_FACTORS).map(|i| format!("f{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let e = Generator::parse("f31=f0*f1", &names)
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("32 factors; a fractional design has at most 31"),
        "{e}"
    );
    let thirty: Vec<Factor> = (0..30)
        .map(|i| Factor::parse(&format!("f{i}=1,2")).unwrap())
        .collect();
    let g = Generator::parse("f29=f0*f1", &names[..30]).unwrap();
    assert_eq!(
        design::fractional_plan(&thirty, &[g], 1, None)
            .unwrap_err()
            .to_string(),
        "the design has 536870912 points; the limit is 1000000"
    );
    assert!(design::fractional::signs(40, &[]).is_empty());
}

#[test]
fn extreme_ranges_give_finite_increasing_levels() {
    for spec in [
        "p=-1e308..1e308",
        "p=-1e308..1e308:lin:5",
        "p=1e-320..1e-310:log2",
        "p=1e-320..1e308:log2",
        "p=5e-324..1.7e308:log2:7",
    ] {
        let f = Factor::parse(spec).unwrap();
        assert!(
            f.levels.iter().all(|v| v.is_finite()),
            "{spec}: {:?}",
            f.levels
        );
        assert!(
            f.levels.windows(2).all(|w| w[0] < w[1]),
            "{spec}: {:?}",
            f.levels
        );
        let interior = f.interior(3);
        assert!(
            interior.iter().all(|&v| v > f.levels[0] && v.is_finite()),
            "{spec}"
        );
    }
    assert_eq!(
        Factor::parse("p=-1e308..1e308:lin:3").unwrap().levels,
        [-1e308, 0.0, 1e308]
    );
}
