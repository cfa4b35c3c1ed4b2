//! Benchmark: ranking every default candidate on a 1,000-row datafile, and `--search` on
//! 100 rows. Prints its figures (minimum and median of repeated runs); run with
//! `cargo bench -p fit --bench ranking`.

use std::hint::black_box;
use std::time::Duration;

use fit::{Datafile, Model, RankBy, Weighting, default_candidates, rank, search};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use test_support::time;

const CATEGORIES: [&str; 6] = ["pc", "li", "ip", "sl", "cl", "rc"];

/// A datafile of `rows` runs at random p in 2..=64, categories from the paper's shapes.
fn datafile(rows: usize) -> String {
    let mut rng = StdRng::seed_from_u64(7);
    let mut text = String::new();
    for _ in 0..rows {
        let p = rng.random_range(2..=64) as f64;
        let noise = |rng: &mut StdRng| 1.0 + rng.random_range(-0.05..0.05);
        let values = [
            ("pc", 10.0 * noise(&mut rng)),
            ("li", 0.02 * p * p.sqrt() * noise(&mut rng)),
            ("ip", 0.1 * p * noise(&mut rng)),
            ("sl", 0.01 * noise(&mut rng)),
            ("cl", 0.05 * p * noise(&mut rng)),
            ("rc", (0.2 * (p - 8.0).max(0.0) + 0.01) * noise(&mut rng)),
        ];
        text.push_str(&format!("impl=dp n=256 p={p}"));
        for (k, v) in values {
            text.push_str(&format!(" {k}={v:.6}"));
        }
        text.push('\n');
    }
    text
}

fn report(what: &str, (min, median): (Duration, Duration)) {
    println!(
        "{what:<58} min {:>9.3} ms   median {:>9.3} ms",
        ms(min),
        ms(median)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let text = datafile(1000);
    report(
        "parse a 1,000-row datafile",
        time(20, || {
            black_box(Datafile::parse("bench.dat", &text).unwrap());
        }),
    );
    let data = Datafile::parse("bench.dat", &text).unwrap();
    let mut total = Duration::ZERO;
    for category in CATEGORIES {
        let obs = data.observations(&["p"], category, &[]).unwrap();
        let models: Vec<Model> = default_candidates(category, "p")
            .iter()
            .map(|m| Model::parse(m).unwrap())
            .collect();
        let timing = time(10, || {
            black_box(rank(&obs, &models, RankBy::R2, Weighting::Absolute));
        });
        total += timing.1;
        let names: Vec<&str> = models.iter().map(Model::text).collect();
        report(
            &format!("rank {category} vs p, 1,000 rows: {}", names.join(", ")),
            timing,
        );
    }
    println!(
        "{:<58} {:>9.3} ms (sum of medians)",
        "rank all default candidates, 1,000 rows",
        ms(total)
    );

    let hundred = Datafile::parse("bench.dat", &datafile(100)).unwrap();
    let obs = hundred.observations(&["p"], "rc", &[]).unwrap();
    let threshold = [Model::parse("max(p-$theta,0)").unwrap()];
    report(
        "fit max(p-$theta,0), 100 rows (exact leave-one-out: 100 refits)",
        time(10, || {
            black_box(rank(&obs, &threshold, RankBy::R2, Weighting::Absolute));
        }),
    );
    let obs = hundred.observations(&["p"], "li", &[]).unwrap();
    report(
        "--search (1,596 candidate models) on 100 rows",
        time(10, || {
            black_box(search(&obs, 0, 5));
        }),
    );
    let obs = data.observations(&["p"], "li", &[]).unwrap();
    report(
        "--search (1,596 candidate models) on 1,000 rows",
        time(3, || {
            black_box(search(&obs, 0, 5));
        }),
    );
}
