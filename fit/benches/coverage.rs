//! Coverage of 90% prediction intervals beyond the data on synthetic families: calibrated (the
//! rival forms' mixture), by forward validation's `κ` alone, and as before, uncalibrated
//! (docs/results.md#intervals-beyond-the-data). Prints the table;
//! `cargo bench -p fit --bench coverage [-- SEEDS]`.

#[path = "../tests/families/mod.rs"]
mod families;

fn main() {
    let seeds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20);
    println!(
        "{:<11} {:>5} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6}",
        "family",
        "ratio",
        "trials",
        "coverage",
        "κ only",
        "before",
        "width",
        "κ only",
        "before",
        "x"
    );
    for family in families::families() {
        for (tally, ratio) in families::coverage(&family, seeds)
            .iter()
            .zip(families::RATIOS)
        {
            let (w, b) = (tally.median_width(), tally.median_width_before());
            println!(
                "{:<11} {:>4}x {:>7} {:>8.1}% {:>8.1}% {:>8.1}% {:>8.1}% {:>8.1}% {:>8.1}% {:>6.2}",
                family.name,
                ratio,
                tally.trials,
                100.0 * tally.coverage(),
                100.0 * tally.coverage_kappa(),
                100.0 * tally.coverage_before(),
                100.0 * w,
                100.0 * tally.median_width_kappa(),
                100.0 * b,
                w / b
            );
        }
    }
    if std::env::var_os("COVERAGE_BY_TRUTH").is_some() {
        for family in families::families() {
            for (k, (name, _)) in family.truths.iter().enumerate() {
                let tallies = families::truth_coverage(&family, k, seeds);
                let cells: Vec<String> = tallies
                    .iter()
                    .map(|t| {
                        format!(
                            "{:.0}%/{:.0}% w {:.0}%/{:.0}%",
                            100.0 * t.coverage(),
                            100.0 * t.coverage_before(),
                            100.0 * t.median_width(),
                            100.0 * t.median_width_before()
                        )
                    })
                    .collect();
                println!("{name:<32} {}", cells.join("  |  "));
            }
        }
    }
    println!(
        "(width: median 90% half-width relative to the truth; x: the calibrated width's ratio \
         to before)"
    );
}
