//! Multi-factor performance models recover known models from an edges design (issue 5):
//! category data generated from known functions of (n, p) — some multiplicative, some
//! additive, one with a threshold in p — with 1% noise; the combination of every category is
//! recovered and `T_p` is predicted over the whole grid within 2% on average.

use design::{Design, Factor, plan};
use fit::Datafile;
use fit::combination::Combination;
use fit::performance::{BuildOptions, PerformanceModel};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, Normal};

/// The generating model of each category, and its combination where two factors matter.
fn truth(category: &str, n: f64, p: f64) -> f64 {
    let nlogn = n * n.log2();
    match category {
        "pc" => 3e-8 * n * nlogn + 0.002,
        "li" => 2e-9 * nlogn * p * p.sqrt(),
        "ip" => 0.004 + 0.003 * p,
        "sl" => 0.0005 * p,
        "cl" => 4e-9 * n * n + 0.002 * p,
        "rc" => 1e-4 + 1e-9 * n * n * (p - 6.0).max(0.0),
        _ => unreachable!(),
    }
}

const EXPECTED: [(&str, Combination); 2] = [
    ("li", Combination::Multiplicative),
    ("cl", Combination::Additive),
];

fn time(n: f64, p: f64) -> f64 {
    ["pc", "li", "ip", "sl", "cl", "rc"]
        .iter()
        .map(|c| truth(c, n, p))
        .sum::<f64>()
        / p
}

/// A datafile of the edges design (3 interior points per edge), each category with 1%
/// Gaussian multiplicative noise.
fn measured(seed: u64) -> Datafile {
    Datafile::parse("synthetic.dat", &measured_text(seed)).unwrap()
}

/// The text of [`measured`].
fn measured_text(seed: u64) -> String {
    let factors = [
        Factor::parse("n=32..1024:log2").unwrap(),
        Factor::parse("p=2..16:lin:8").unwrap(),
    ];
    let plan = plan(&factors, Design::Edges(3), 1, None).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let noise = Normal::new(1.0, 0.01).unwrap();
    let mut text = String::new();
    for run in &plan.runs {
        let (n, p) = (run.values[0], run.values[1]);
        text += &format!("impl=syn n={n} p={p}");
        for c in ["pc", "li", "ip", "sl", "cl", "rc"] {
            text += &format!(" {c}={}", truth(c, n, p) * noise.sample(&mut rng));
        }
        text += "\n";
    }
    text
}

fn mean_relative_error(f: impl Fn(f64, f64) -> f64) -> (f64, f64) {
    let mut errors = Vec::new();
    for n in [32.0, 64.0, 128.0, 256.0, 512.0, 1024.0] {
        for p in 2..=16 {
            let p = p as f64;
            errors.push(((f(n, p) - time(n, p)) / time(n, p)).abs());
        }
    }
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    (mean, errors.iter().cloned().fold(0.0, f64::max))
}

#[test]
fn known_models_are_recovered_from_an_edges_design() {
    let mut baseline_errors = Vec::new();
    for seed in 0..20 {
        let data = measured(seed);
        let model = PerformanceModel::build(&data, &BuildOptions::default()).unwrap();
        for (category, expected) in EXPECTED {
            let c = model
                .categories
                .iter()
                .find(|c| c.category == category)
                .unwrap();
            assert_eq!(
                c.combination,
                Some(expected),
                "seed {seed}: {category}: {:?}",
                c.variation
            );
        }
        let rc = model
            .categories
            .iter()
            .find(|c| c.category == "rc")
            .unwrap();
        assert_eq!(rc.shapes[1].expr, "max(p-$theta_p,0)", "seed {seed}");
        assert_eq!(rc.shapes[0].expr, "n^2", "seed {seed}");
        let theta = &rc.fit.parameters[0];
        assert!(
            (theta.value - 6.0).abs() < 1.0,
            "seed {seed}: theta {theta:?}"
        );

        let (mean, max) = mean_relative_error(|n, p| model.predict(&[n, p]).time.value);
        assert!(
            mean < 0.02,
            "seed {seed}: mean relative error of T_p {mean} (max {max})"
        );
        let plane = model.baseline.as_ref().expect("every corner was measured");
        let (baseline_mean, _) = mean_relative_error(|n, p| plane.evaluate(&[n, p]));
        baseline_errors.push(baseline_mean);
        println!(
            "seed {seed}: model mean {:.2}% max {:.2}%; corner plane mean {:.0}%",
            100.0 * mean,
            100.0 * max,
            100.0 * baseline_mean
        );
        assert!(baseline_mean > 5.0 * mean);
    }
}

#[test]
fn run_and_replicate_columns_are_not_factors() {
    let text: String = measured_text(1)
        .lines()
        .enumerate()
        .map(|(i, line)| format!("run={i} replicate={} {line}\n", i % 3 + 1))
        .collect();
    let data = Datafile::parse("replicated.dat", &text).unwrap();
    let model = PerformanceModel::build(&data, &BuildOptions::default()).unwrap();
    assert_eq!(model.factors, ["n", "p"]);
}
