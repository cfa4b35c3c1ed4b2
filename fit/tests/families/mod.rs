//! Synthetic families with a known truth, for the coverage of intervals beyond the data
//! (docs/modelling.md#beyond-the-data): sums of PMNF terms, thresholds and plateaus, each
//! measured with 5% relative noise, 3 replicates at p = 2..16, modelled as a response over
//! `p`, and predicted at 2x, 4x and 8x beyond the largest p. Shared by `tests/calibration.rs`
//! (which asserts) and `benches/coverage.rs` (which prints the table).

#![allow(dead_code)]

use fit::Observations;
use fit::performance::PerformanceModel;
use fit::repetitions::Repetitions;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, Normal};

/// The levels of `p` the models are fitted on.
pub const LEVELS: [f64; 9] = [2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0];

/// How far beyond the largest level each prediction is.
pub const RATIOS: [f64; 3] = [2.0, 4.0, 8.0];

/// Replicates per level.
pub const REPLICATES: usize = 3;

/// Relative noise of a run.
pub const NOISE: f64 = 0.05;

/// A truth: `T` as a function of `p`.
pub type Truth = fn(f64) -> f64;

/// A family of truths, each named by its formula.
pub struct Family {
    pub name: &'static str,
    pub truths: Vec<(&'static str, Truth)>,
}

fn log2(p: f64) -> f64 {
    p.log2()
}

/// The three families of the issue: sums of PMNF terms, thresholds, plateaus.
pub fn families() -> Vec<Family> {
    vec![
        Family {
            name: "PMNF sums",
            truths: vec![
                ("5 + 1000/p + 2*log2(p)", |p| {
                    5.0 + 1000.0 / p + 2.0 * log2(p)
                }),
                ("2 + 0.5*p*log2(p)", |p| 2.0 + 0.5 * p * log2(p)),
                ("10 + 0.2*p^1.5 + 3*log2(p)", |p| {
                    10.0 + 0.2 * p.powf(1.5) + 3.0 * log2(p)
                }),
                ("1 + 4*sqrt(p) + 0.05*p^2", |p| {
                    1.0 + 4.0 * p.sqrt() + 0.05 * p * p
                }),
            ],
        },
        Family {
            name: "thresholds",
            truths: vec![
                ("4 + 0.5*max(0, p-6)", |p| 4.0 + 0.5 * (p - 6.0).max(0.0)),
                ("1 + 0.05*p + 0.4*max(0, p-10)", |p| {
                    1.0 + 0.05 * p + 0.4 * (p - 10.0).max(0.0)
                }),
                ("2 + 0.1*max(0, p-4)^1.5", |p| {
                    2.0 + 0.1 * (p - 4.0).max(0.0).powf(1.5)
                }),
            ],
        },
        Family {
            name: "plateaus",
            truths: vec![
                ("3 + 2*min(p, 10)", |p| 3.0 + 2.0 * p.min(10.0)),
                ("8 + 40/p", |p| 8.0 + 40.0 / p),
                ("5 + 6*(1 - exp(-p/4))", |p| {
                    5.0 + 6.0 * (1.0 - (-p / 4.0).exp())
                }),
            ],
        },
    ]
}

/// Runs of `truth` with relative normal noise, modelled as the response `t` over `p`.
pub fn model(truth: Truth, rng: &mut StdRng) -> PerformanceModel {
    model_of(observations(truth, rng))
}

/// Runs of `truth` with relative normal noise at [`LEVELS`], [`REPLICATES`] each.
pub fn observations(truth: Truth, rng: &mut StdRng) -> Observations {
    let noise = Normal::new(0.0, NOISE).unwrap();
    let (mut p, mut t) = (Vec::new(), Vec::new());
    for &x in &LEVELS {
        for _ in 0..REPLICATES {
            p.push(x);
            t.push(truth(x) * (1.0 + noise.sample(rng)));
        }
    }
    Observations::new("synthetic", vec!["p".into()], "t", vec![p], t).unwrap()
}

/// The response model of `obs`, calibrated.
pub fn model_of(obs: Observations) -> PerformanceModel {
    fit::response::from_observations(
        "synthetic",
        vec![obs],
        Repetitions::All,
        &Default::default(),
        Default::default(),
    )
    .unwrap()
}

/// Coverage and widths at one ratio: calibrated (today's rule), by the union of forward
/// validation's `κ` and the rivals' mixture (the rule before it, stop 41), by `κ` alone (the
/// rivals off), and as before (no calibration).
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub trials: usize,
    pub covered: usize,
    pub covered_union: usize,
    pub covered_kappa: usize,
    pub covered_before: usize,
    /// Half-widths relative to the truth.
    pub widths: Vec<f64>,
    pub widths_union: Vec<f64>,
    pub widths_kappa: Vec<f64>,
    pub widths_before: Vec<f64>,
    /// Every trial, for the bench's oracle bounds and rival rules.
    pub details: Vec<Trial>,
}

/// One prediction beyond the data and the fresh run it is checked against.
#[derive(Debug, Clone)]
pub struct Trial {
    /// Where: `ratio` times the largest level.
    pub x: f64,
    pub truth: f64,
    pub run: f64,
    /// The calibrated model, its runs, and its uncalibrated prediction at `x`.
    pub model: PerformanceModel,
    pub obs: Observations,
    pub before: fit::Prediction,
}

impl Tally {
    pub fn coverage(&self) -> f64 {
        self.covered as f64 / self.trials as f64
    }
    pub fn coverage_union(&self) -> f64 {
        self.covered_union as f64 / self.trials as f64
    }
    pub fn median_width_union(&self) -> f64 {
        median(&self.widths_union)
    }
    pub fn coverage_kappa(&self) -> f64 {
        self.covered_kappa as f64 / self.trials as f64
    }
    pub fn median_width_kappa(&self) -> f64 {
        median(&self.widths_kappa)
    }
    pub fn coverage_before(&self) -> f64 {
        self.covered_before as f64 / self.trials as f64
    }
    pub fn median_width(&self) -> f64 {
        median(&self.widths)
    }
    pub fn median_width_before(&self) -> f64 {
        median(&self.widths_before)
    }
}

pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One tally per ratio of [`RATIOS`], over `seeds` seeds of every truth of `family`: does a
/// fresh run at `ratio * 16` fall in the 90% prediction interval?
pub fn coverage(family: &Family, seeds: u64) -> Vec<Tally> {
    let mut tallies = vec![Tally::default(); RATIOS.len()];
    for k in 0..family.truths.len() {
        for (all, one) in tallies.iter_mut().zip(truth_coverage(family, k, seeds)) {
            all.trials += one.trials;
            all.covered += one.covered;
            all.covered_union += one.covered_union;
            all.covered_kappa += one.covered_kappa;
            all.covered_before += one.covered_before;
            all.widths.extend(one.widths);
            all.widths_union.extend(one.widths_union);
            all.widths_kappa.extend(one.widths_kappa);
            all.widths_before.extend(one.widths_before);
            all.details.extend(one.details);
        }
    }
    tallies
}

/// [`coverage`] of the `k`-th truth of `family` alone.
pub fn truth_coverage(family: &Family, k: usize, seeds: u64) -> Vec<Tally> {
    let mut tallies = vec![Tally::default(); RATIOS.len()];
    let noise = Normal::new(0.0, NOISE).unwrap();
    let truth = family.truths[k].1;
    for seed in 0..seeds {
        let mut rng = StdRng::seed_from_u64(1000 * k as u64 + seed);
        let obs = observations(truth, &mut rng);
        let calibrated = model_of(obs.clone());
        let mut before = calibrated.clone();
        before.calibration = None;
        let mut kappa = calibrated.clone();
        for c in kappa.calibration.iter_mut().flatten() {
            c.rivals.clear();
        }
        for (tally, ratio) in tallies.iter_mut().zip(RATIOS) {
            let x = ratio * LEVELS[LEVELS.len() - 1];
            let run = truth(x) * (1.0 + noise.sample(&mut rng));
            let inside = |m: &PerformanceModel| {
                let t = m.predict(&[x]).time;
                (t.lower <= run && run <= t.upper, t.half_width / truth(x))
            };
            let (now, width) = inside(&calibrated);
            let (then, width_before) = inside(&before);
            let (by_kappa, width_kappa) = inside(&kappa);
            // The rule before: κ's widening and the rivals' mixture together.
            let union = {
                let t = kappa.predict(&[x]).time;
                let rivals = calibrated
                    .calibration
                    .iter()
                    .flatten()
                    .flat_map(|c| &c.rivals);
                let rivals: Vec<_> = rivals.cloned().collect();
                match fit::rivals::mixture(&rivals, &[x]) {
                    Some(mix) => fit::rivals::hold(&t, &mix, f64::NEG_INFINITY),
                    None => t,
                }
            };
            tally.covered_union += usize::from(union.lower <= run && run <= union.upper);
            tally.widths_union.push(union.half_width / truth(x));
            tally.trials += 1;
            tally.covered += now as usize;
            tally.covered_kappa += by_kappa as usize;
            tally.widths_kappa.push(width_kappa);
            tally.covered_before += then as usize;
            tally.widths.push(width);
            tally.widths_before.push(width_before);
            tally.details.push(Trial {
                x,
                truth: truth(x),
                run,
                model: calibrated.clone(),
                obs: obs.clone(),
                before: before.predict(&[x]).time,
            });
        }
    }
    tallies
}
