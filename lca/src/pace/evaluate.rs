//! The evaluation of a PACE model at a point (docs/pace.md#evaluation): the template's log of a
//! few iterations ([`super::schedule`]), replayed by `pp whatif`'s engine on the hardware's
//! cores (threads dealt round robin onto them; where a core has several, processor sharing or
//! one at a time until each blocks, as the hardware's `sharing` says),
//! attributed by `pp`'s sweep, and scaled from the iterations replayed to the whole loop.

use std::collections::BTreeMap;
use std::path::Path;

use pp::log::LogReader;
use pp::profile::{CATEGORIES, Sweep};
use pp::whatif::{MeasuredRun, Target, predict};

use super::model::{Carrier, PaceModel};

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
        let demands = self.demands(point, &shape);
        let machine = match &self.hardware.machine {
            Some(m) => Some(
                pp::whatif::load_machine(Path::new(m))
                    .map_err(|e| format!("hardware.machine: {e:#}"))?,
            ),
            None => None,
        };
        // Messages the processors carry are copies in the template's log, timed by the
        // machine file there: the replay then keeps them as written.
        let copied = self.hardware.carrier == Carrier::Processors && self.has_messages();
        let mpi = machine.as_ref().and_then(|m| m.mpi.as_ref());
        let text = self.schedule(point, &shape, &demands, mpi.filter(|_| copied));
        let reader = LogReader::from_bytes("template", text.into_bytes())
            .map_err(|e| format!("the template's log: {e}"))?;
        let run = MeasuredRun::read(reader, "template", &BTreeMap::new())
            .map_err(|e| format!("the template's log: {e:#}"))?;
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
        let replayed_wall_s = (attribution.window.1 - attribution.window.0) as f64 * 1e-9;
        // The replayed iterations stand for all of them: the loop's part of the wall and of
        // every category scales by iterations / replayed; the start and the end (idle
        // threads outside every region: ip) do not. They are no more than the replayed log's
        // `ip` over p: the template's log may hold a ns or so less of it than the model's
        // startup and teardown (its region opens a ns early), and scaled by `k` (10^18 and
        // more) that ns would drive the loop's part of `ip` below zero.
        let a = &self.application;
        let idle = attribution.totals.get(pp::profile::Category::Ip) as f64 * 1e-9;
        let fixed = (a.startup_s + a.teardown_s)
            .min(replayed_wall_s)
            .min(idle / f64::from(shape.p));
        let k = shape.iterations / f64::from(shape.replayed);
        let t_p = fixed + (replayed_wall_s - fixed) * k;
        let fixed_ip = f64::from(shape.p) * fixed;
        let categories = CATEGORIES
            .iter()
            .map(|c| {
                let v = attribution.totals.get(*c) as f64 * 1e-9;
                // At least the fixed part (above), so that the categories sum to p × T_p.
                let v = if *c == pp::profile::Category::Ip {
                    (fixed_ip + (v - fixed_ip) * k).max(0.0)
                } else {
                    v * k
                };
                (c.key(), v)
            })
            .collect();
        Ok(Evaluation {
            t_p,
            categories,
            replayed_wall_s,
            replayed: shape.replayed,
        })
    }
}
