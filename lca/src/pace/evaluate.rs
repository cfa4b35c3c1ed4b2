//! The evaluation of a PACE model at a point (docs/pace.md#evaluation): the template's log of a
//! few iterations ([`super::schedule`]), replayed by `pp whatif`'s engine on the hardware's
//! cores (threads dealt round robin onto them; where a core has several, processor sharing or
//! one at a time until each blocks, as the hardware's `sharing` says),
//! attributed by `pp`'s sweep, and scaled from the iterations replayed to the whole loop.

use std::collections::BTreeMap;
use std::path::Path;

use pp::profile::{CATEGORIES, Sweep};
use pp::whatif::{MeasuredRun, Target, predict};

use super::model::{Carrier, PaceModel};
use super::schedule::Shape;

/// The model's prediction at a point.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Predicted run time, seconds.
    pub t_p: f64,
    /// Each category (`li`, `ip`, `sl`, `cl`, `rc`, `pc`, in that order) in processor-seconds;
    /// their sum is `p × T_p`.
    pub categories: Vec<(&'static str, f64)>,
    /// The wall of the iterations replayed, seconds.
    pub replayed_wall_s: f64,
    /// Iterations replayed, of how many.
    pub replayed: u32,
}

/// Where the predicted log of the iterations replayed goes.
#[derive(Debug, Clone, Copy)]
pub struct Trace<'a> {
    /// The file.
    pub path: &'a Path,
    /// Replace an existing file.
    pub force: bool,
}

/// Threads `0..p` dealt round robin onto `cores` processors: each processor's threads.
pub fn sharing(p: u32, cores: u32) -> Vec<Vec<u32>> {
    if p <= cores {
        return Vec::new();
    }
    (0..cores)
        .map(|c| (c..p).step_by(cores as usize).collect())
        .collect()
}

impl PaceModel {
    /// `T_p` and the categories at a point (one value per factor).
    pub fn evaluate(&self, point: &[f64]) -> Result<Evaluation, String> {
        self.evaluate_traced(point, None)
    }

    /// [`PaceModel::evaluate`], writing the predicted log of the iterations replayed to
    /// `trace` (text; `pp` and `pp --chrome` read it).
    pub fn evaluate_traced(
        &self,
        point: &[f64],
        trace: Option<Trace<'_>>,
    ) -> Result<Evaluation, String> {
        let shape = self.shape(point)?;
        let machine = match &self.hardware.machine {
            Some(m) => Some(
                pp::whatif::load_machine(Path::new(m))
                    .map_err(|e| format!("hardware.machine: {e:#}"))?,
            ),
            None => None,
        };
        let r = shape.replayed;
        let full = self.replay(point, &shape, machine.clone(), trace)?;
        let p = f64::from(shape.p);
        // The loop beyond the iterations replayed goes at the pace of the replay's later
        // iterations: the difference between all `r` and the first 2 of them (3 where `r` is
        // odd, 1 where it is 2 or 3), so that what only the first ones do (a pipeline
        // filling, ranks falling into step) counts once, not once every `r` iterations; the
        // span between them is even where it can be, as two threads taking turns on a core
        // repeat every two iterations (docs/pace.md#evaluation).
        let rest = shape.iterations - f64::from(r);
        let first = match r {
            0 | 1 => r,
            2 | 3 => 1,
            _ => 2 + r % 2,
        };
        let pace = if first < r && rest > 0.0 {
            let fewer = Shape {
                replayed: first,
                ..shape
            };
            let first_ones = self.replay(point, &fewer, machine, None)?;
            let span = f64::from(r - first);
            steady(&full, &first_ones, p).map(|(wall, each)| (wall / span, each.map(|c| c / span)))
        } else {
            None
        };
        let (t_p, categories) = match pace {
            Some((wall, each)) => (
                full.wall_s + rest * wall,
                std::array::from_fn::<f64, 6, _>(|c| full.categories[c] + rest * each[c]),
            ),
            None => scaled(self, &shape, &full),
        };
        Ok(Evaluation {
            t_p,
            categories: CATEGORIES
                .iter()
                .zip(categories)
                .map(|(c, v)| (c.key(), v))
                .collect(),
            replayed_wall_s: full.wall_s,
            replayed: r,
        })
    }

    /// The template's `shape.replayed` iterations at a point replayed on the hardware, and
    /// attributed; the predicted log written to `trace` when given.
    fn replay(
        &self,
        point: &[f64],
        shape: &Shape,
        machine: Option<pp::machine::Machine>,
        trace: Option<Trace<'_>>,
    ) -> Result<Replayed, String> {
        let demands = self.demands(point, shape);
        // Messages the processors carry are copies in the template's log, timed by the
        // machine file there: the replay then keeps them as written.
        let copied = self.hardware.carrier == Carrier::Processors && self.has_messages();
        let mpi = machine.as_ref().and_then(|m| m.mpi.as_ref());
        let reader = self
            .schedule(point, shape, &demands, mpi.filter(|_| copied))
            .reader()?;
        let mut run = MeasuredRun::read(reader, "template", &BTreeMap::new())
            .map_err(|e| format!("the template's log: {e:#}"))?;
        // The trace is a text log, whatever the template's encoding (docs/pace.md).
        run.encoding = pp::log::Encoding::Text;
        let mut target = Target {
            groups: sharing(shape.p, self.hardware.cores),
            sharing: self.hardware.whatif_sharing(),
            ..Target::default()
        };
        if !copied {
            target.machine = machine;
        }
        // The replay's hint names `pp whatif`'s option; here the model's own layers set the
        // times.
        let prediction = predict(&run, &target).map_err(|e| {
            format!("the replay: {e:#}").replace(
                "is a --speed factor too small?",
                "is the point too large, hardware.speed too small, or a cost or latency too large?",
            )
        })?;
        if let Some(t) = trace {
            pp::whatif::write::write(&run, &prediction, "--trace", t.path, t.force)
                .map_err(|e| format!("{e:#}"))?;
        }
        let mut events: Vec<pp::event::Event> = (0..run.header.p as usize)
            .flat_map(|i| prediction.events(&run, i))
            .collect();
        events.sort_by_key(|e| (e.t, e.thread));
        let mut sweep = Sweep::new(&prediction.header, None);
        for e in &events {
            sweep.event(e, &run.symbols);
        }
        let attribution = sweep
            .finish(&run.symbols)
            .map_err(|e| format!("the replayed log: {e}"))?;
        Ok(Replayed {
            wall_s: (attribution.window.1 - attribution.window.0) as f64 * 1e-9,
            categories: CATEGORIES.map(|c| attribution.totals.get(c) as f64 * 1e-9),
        })
    }
}

/// A replay's wall and categories (`li`, `ip`, `sl`, `cl`, `rc`, `pc`), seconds.
struct Replayed {
    wall_s: f64,
    categories: [f64; 6],
}

/// What the later iterations of `full` add over `first` (a replay of fewer of them), wall and
/// categories; `None` where it adds no time. A category's part that shrank (a ns of rounding,
/// or time moved to another category) adds nothing, and the others' parts are scaled to
/// keep their sum at `p` times the wall's, so that the categories still sum to `p × T_p`.
fn steady(full: &Replayed, first: &Replayed, p: f64) -> Option<(f64, [f64; 6])> {
    let wall = full.wall_s - first.wall_s;
    let each: [f64; 6] =
        std::array::from_fn(|c| (full.categories[c] - first.categories[c]).max(0.0));
    let sum: f64 = each.iter().sum();
    if !(wall > 0.0 && sum > 0.0) {
        return None;
    }
    let scale = p * wall / sum;
    Some((wall, each.map(|c| c * scale)))
}

/// The iterations replayed scaled to the loop's (one iteration replayed, or a replay whose
/// later iterations added no time): the loop's part of the wall and of every category scales
/// by iterations / replayed; the start and the end (idle threads outside every region: ip) do
/// not. They are no more than the replayed log's `ip` over p: the template's log may hold a
/// ns or so less of it than the model's startup and teardown (its region opens a ns early),
/// and scaled by `k` (10^18 and more) that ns would drive the loop's part of `ip` below zero.
fn scaled(model: &PaceModel, shape: &Shape, full: &Replayed) -> (f64, [f64; 6]) {
    let a = &model.application;
    let p = f64::from(shape.p);
    let ip = pp::profile::Category::Ip.index();
    let fixed = (a.startup_s + a.teardown_s)
        .min(full.wall_s)
        .min(full.categories[ip] / p);
    let k = shape.iterations / f64::from(shape.replayed);
    let fixed_ip = p * fixed;
    let categories = std::array::from_fn(|c| {
        let v = full.categories[c];
        // At least the fixed part (above), so that the categories sum to p × T_p.
        if c == ip {
            (fixed_ip + (v - fixed_ip) * k).max(0.0)
        } else {
            v * k
        }
    });
    (fixed + (full.wall_s - fixed) * k, categories)
}
