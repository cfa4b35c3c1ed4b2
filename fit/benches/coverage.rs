//! Coverage of 90% prediction intervals beyond the data on synthetic families: calibrated
//! (today's rule), by the union of forward validation's `κ` and the rival forms' mixture (the
//! rule before it), by `κ` alone, and as before, uncalibrated; then the oracle bound: the
//! smallest widening of the uncalibrated interval that would hold 85% of the runs, about the
//! model's own value and about other centres (docs/results.md#intervals-beyond-the-data).
//! Prints the tables; `cargo bench -p fit --bench coverage [-- SEEDS]`.

#[path = "../tests/families/mod.rs"]
mod families;

use families::Trial;

fn main() {
    let seeds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20);
    let tallies: Vec<(&str, Vec<families::Tally>)> = families::families()
        .iter()
        .map(|f| (f.name, families::coverage(f, seeds)))
        .collect();
    println!("coverage of a fresh run by the 90% interval");
    println!(
        "{:<11} {:>5} {:>6} {:>7} {:>7} {:>7} {:>7}",
        "family", "ratio", "trials", "now", "union", "κ only", "before"
    );
    for (name, tallies) in &tallies {
        for (t, ratio) in tallies.iter().zip(families::RATIOS) {
            println!(
                "{:<11} {:>4}x {:>6} {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}%",
                name,
                ratio,
                t.trials,
                100.0 * t.coverage(),
                100.0 * t.coverage_union(),
                100.0 * t.coverage_kappa(),
                100.0 * t.coverage_before()
            );
        }
    }
    println!();
    println!("median 90% half-width relative to the truth, and its ratio to before's");
    println!(
        "{:<11} {:>5} {:>15} {:>15} {:>15} {:>7}",
        "family", "ratio", "now", "union", "κ only", "before"
    );
    for (name, tallies) in &tallies {
        for (t, ratio) in tallies.iter().zip(families::RATIOS) {
            let b = t.median_width_before();
            let cell = |w: f64| format!("{:.1}% {:.1}x", 100.0 * w, w / b);
            println!(
                "{:<11} {:>4}x {:>15} {:>15} {:>15} {:>6.1}%",
                name,
                ratio,
                cell(t.median_width()),
                cell(t.median_width_union()),
                cell(t.median_width_kappa()),
                100.0 * b
            );
        }
    }
    println!();
    println!(
        "oracle bound: the least multiple of the uncalibrated half-width that holds 85% of the \
         runs, centred on"
    );
    let centres = centres();
    let names: Vec<&str> = centres.iter().map(|c| c.0).collect();
    println!("{:<11} {:>5} {}", "family", "ratio", names.join(" | "));
    for (name, tallies) in &tallies {
        for (t, ratio) in tallies.iter().zip(families::RATIOS) {
            let cells: Vec<String> = centres
                .iter()
                .map(|(_, c)| format!("{:.2}", oracle(&t.details, c, 0.85)))
                .collect();
            println!("{:<11} {:>4}x {}", name, ratio, cells.join(" | "));
        }
    }
    if std::env::var_os("COVERAGE_BY_TRUTH").is_some() {
        println!();
        println!("per truth: coverage now/before, width now/before, at 2x | 4x | 8x");
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
}

/// The least multiplier `m` of each trial's uncalibrated half-width such that a share `share`
/// of the trials have `|run - centre| <= m * half-width`: no interval that widens the
/// uncalibrated one by a constant factor about `centre` holds that share with less.
fn oracle(trials: &[Trial], centre: &dyn Fn(&Trial) -> f64, share: f64) -> f64 {
    let mut m: Vec<f64> = trials
        .iter()
        .map(|t| (t.run - centre(t)).abs() / t.before.half_width)
        .collect();
    m.sort_by(f64::total_cmp);
    let k = ((share * m.len() as f64).ceil() as usize).clamp(1, m.len());
    m[k - 1]
}

fn rivals_of(t: &Trial) -> &[fit::rivals::Rival] {
    t.model
        .calibration
        .as_ref()
        .and_then(|c| c.first())
        .map_or(&[], |c| &c.rivals[..])
}

type Centre = Box<dyn Fn(&Trial) -> f64>;

/// The centres weighed: the model's own value, the rivals' mixture median, the best rival by
/// leave-one-out error, and the rival (or own form) closest to the run, which is what a
/// perfect choice among the forms would give (not a rule: it knows the run). Without rivals,
/// the model's own value.
fn centres() -> Vec<(&'static str, Centre)> {
    vec![
        ("own", Box::new(|t: &Trial| t.before.value)),
        (
            "mixture median",
            Box::new(|t: &Trial| {
                fit::rivals::mixture(rivals_of(t), &[t.x]).map_or(t.before.value, |m| m.value)
            }),
        ),
        (
            "best rival",
            Box::new(|t: &Trial| {
                rivals_of(t)
                    .first()
                    .map_or(t.before.value, |r| r.fit.predict(&[t.x]).value)
            }),
        ),
        (
            "closest form",
            Box::new(|t: &Trial| {
                rivals_of(t)
                    .iter()
                    .map(|r| r.fit.predict(&[t.x]).value)
                    .chain([t.before.value])
                    .min_by(|a, b| (a - t.run).abs().total_cmp(&(b - t.run).abs()))
                    .expect("the own value at least")
            }),
        ),
    ]
}
