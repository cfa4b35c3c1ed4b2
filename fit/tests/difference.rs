//! The difference model (docs/comparing.md#the-difference-model) on synthetic pairs: a known
//! constant ratio and a known p-dependent one are recovered and decided where the separate
//! models cannot; identical truths name a false winner over more than half the range in at
//! most 10% of 60 seeds.

use fit::crossover::measured::Run;
use fit::crossover::{Basis, Comparison, DifferenceModel, Winner};

/// A small deterministic generator: uniform by a 64-bit LCG, normal by Box-Muller.
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Runs of A and B at p = 2..=16, 3 paired replicates each: T_B = 1 + 0.05 p, T_A = T_B
/// e^{r(p)}, each run with 5% noise of its own and 5% shared by the round.
fn pair(r: impl Fn(f64) -> f64, seed: u64) -> (Vec<Run>, Vec<Run>) {
    let mut noise = Noise(seed);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for p in 2..=16 {
        let p = f64::from(p);
        for k in 0..3u64 {
            let shared = 1.0 + 0.05 * noise.normal();
            let tb = (1.0 + 0.05 * p) * shared;
            let ta = tb * r(p).exp();
            let run = |t: f64, noise: &mut Noise| Run {
                point: vec![p],
                value: t * (1.0 + 0.05 * noise.normal()),
                replicate: Some(k),
            };
            a.push(run(ta, &mut noise));
            b.push(run(tb, &mut noise));
        }
    }
    (a, b)
}

/// The separate models' comparison at a point: the truth's means with a 30% half-width, too
/// wide to tell a 10-20% difference.
fn separate(ta: f64, tb: f64) -> Comparison {
    Comparison {
        t_a: ta,
        t_b: tb,
        half_width: 0.3 * (ta * tb).sqrt(),
        winner: Winner::Tie,
        significant: Some(false),
        basis: Basis::Models,
    }
}

fn at(p: f64) -> Vec<(String, f64)> {
    vec![("p".to_string(), p)]
}

#[test]
fn a_constant_ratio_is_recovered_and_decided() {
    let r = (0.85f64).ln();
    let (a, b) = pair(|_| r, 7);
    let m = DifferenceModel::fit(&["p".into()], &a, &b).expect("15 shared points");
    assert_eq!(m.points, 15);
    let (rhat, h) = m.predict(&at(9.0)).unwrap();
    assert!((rhat - r).abs() < 0.04, "{} against {r}", m.text());
    assert!(h < 0.1, "half-width {h}");
    for p in 2..=16 {
        let tb = 1.0 + 0.05 * f64::from(p);
        let c = m.decide(separate(tb * 0.85, tb), &at(f64::from(p)));
        assert_eq!(c.basis, Basis::Difference);
        assert_eq!(c.winner, Winner::A, "p={p}: {}", m.text());
    }
}

#[test]
fn a_p_dependent_ratio_is_recovered_and_decides_where_it_differs() {
    // A is 20% slower at p = 2 and 20% faster at p = 16: ln ratio linear in p.
    let r = |p: f64| 0.2 - 0.4 * (p - 2.0) / 14.0;
    let (a, b) = pair(r, 11);
    let m = DifferenceModel::fit(&["p".into()], &a, &b).unwrap();
    for p in [2.0, 5.0, 9.0, 12.0, 16.0] {
        let (rhat, _) = m.predict(&at(p)).unwrap();
        assert!(
            (rhat - r(p)).abs() < 0.05,
            "p={p}: {} against {}",
            rhat,
            r(p)
        );
    }
    let tb = |p: f64| 1.0 + 0.05 * p;
    let decide = |p: f64| m.decide(separate(tb(p) * r(p).exp(), tb(p)), &at(p));
    assert_eq!(decide(2.0).winner, Winner::B);
    assert_eq!(decide(16.0).winner, Winner::A);
    assert_eq!(decide(9.0).winner, Winner::Tie, "r = 0 near p = 9");
    assert!(m.predict(&at(17.0)).is_none(), "no extrapolation");
}

#[test]
fn identical_truths_rarely_name_a_winner() {
    let mut false_winners = 0;
    for seed in 0..60 {
        let (a, b) = pair(|_| 0.0, 1000 + seed);
        let m = DifferenceModel::fit(&["p".into()], &a, &b).unwrap();
        let won = (2..=16)
            .filter(|&p| {
                let t = 1.0 + 0.05 * f64::from(p);
                m.decide(separate(t, t), &at(f64::from(p))).winner != Winner::Tie
            })
            .count();
        if won > 15 / 2 {
            false_winners += 1;
        }
    }
    assert!(false_winners <= 6, "{false_winners} of 60 seeds");
}
