//! The first stage of an evaluation (docs/pace.md#evaluation): the template's events at a
//! point, each thread on a processor of its own, as an event log ([`TemplateLog`]). Each step
//! starts when all its members are free and what it waits for has ended; each member is busy
//! for its share of the step's subtask time; the step ends when its last member does. The
//! second stage ([`super::evaluate`]) replays this log on the hardware's cores.

use pp::event::{EventKind, Header, WaitKind};

use super::model::{Activity, PaceModel, Split};
use super::template_log::TemplateLog;

/// The most thread-steps (threads × steps × iterations) an evaluation replays.
pub const MAX_THREAD_STEPS: f64 = 4e6;

/// The subtask's time of every step at a point: processor-seconds per iteration.
#[derive(Debug, Clone)]
pub struct Demands {
    /// One per step of the template, in its order.
    pub per_iteration_s: Vec<f64>,
}

/// What the log of a point is built from, checked.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Threads.
    pub p: u32,
    /// Iterations of the loop in the run.
    pub iterations: f64,
    /// Iterations replayed.
    pub replayed: u32,
}

impl PaceModel {
    /// The threads, iterations and iterations replayed at a point, or why it cannot be
    /// evaluated.
    pub fn shape(&self, point: &[f64]) -> Result<Shape, String> {
        let p = self
            .processors(point)
            .ok_or("no value for p (a factor or a held column)")?;
        if !(p >= 1.0 && p.fract() == 0.0 && p <= 4096.0) {
            return Err(format!(
                "p={}: a template is replayed on a whole number of threads, 1 to 4096",
                files::quote::number(p)
            ));
        }
        let iterations = self
            .value(&self.application.iterations, point)
            .ok_or_else(|| {
                format!(
                    "application.iterations '{}' has no value",
                    files::quote::excerpt(&self.application.iterations, 40)
                )
            })?;
        if !(iterations >= 1.0 && iterations.is_finite()) {
            return Err(format!(
                "{} = {}: the loop needs at least one iteration",
                files::quote::excerpt(&self.application.iterations, 40),
                files::quote::number(iterations)
            ));
        }
        // At most MAX_THREAD_STEPS thread-steps (messages count one each): a large p replays
        // fewer iterations.
        self.check_sizes(point)?;
        let messages = self.messages_per_iteration(p as u32) as f64;
        if messages > MAX_THREAD_STEPS {
            return Err(format!(
                "p={p}: an iteration's {messages} messages are more than a replay takes ({MAX_THREAD_STEPS})"
            ));
        }
        let per_iteration = (p * self.template.len().max(1) as f64 + messages).max(1.0);
        let affordable = (MAX_THREAD_STEPS / per_iteration).floor().max(1.0);
        let replayed = (self.application.replayed.max(1) as f64)
            .min(iterations.ceil())
            .min(affordable) as u32;
        Ok(Shape {
            p: p as u32,
            iterations,
            replayed,
        })
    }

    /// Each step's subtask time per iteration at a point (processor-seconds), on this
    /// hardware's speed.
    pub fn demands(&self, point: &[f64], shape: &Shape) -> Demands {
        let sub: Vec<f64> = self
            .subtask
            .factors
            .iter()
            .map(|f| self.value(f, point).unwrap_or(f64::NAN))
            .collect();
        let per_iteration_s = self
            .template
            .iter()
            .map(|s| {
                if s.activity == Activity::Wait {
                    return 0.0;
                }
                let total: f64 = self
                    .subtask
                    .categories
                    .iter()
                    .filter(|c| subtask_region(&c.category) == Some(s.region.as_str()))
                    .map(|c| c.fit.evaluate(&sub))
                    .sum();
                (total / shape.iterations / self.hardware.speed * self.hardware.stretch(shape.p))
                    .max(0.0)
            })
            .collect();
        Demands { per_iteration_s }
    }

    /// A predicted log's header: `p`, the model's name as `impl=` where it is a token, and
    /// the point's other factors (docs/event-log.md).
    pub(super) fn log_header(&self, point: &[f64], p: u32) -> Header {
        let mut params = Vec::new();
        if crate::pace::file::is_token(&self.name) {
            params.push(("impl".to_string(), self.name.clone()));
        }
        for (f, v) in self.factors.iter().zip(point) {
            if f != "p" {
                params.push((f.clone(), v.to_string()));
            }
        }
        Header { p, params }
    }

    /// The log of `shape.replayed` iterations at a point, each thread on its own processor
    /// ([module docs](self)).
    pub fn schedule(
        &self,
        point: &[f64],
        shape: &Shape,
        demands: &Demands,
        mpi: Option<&pp::machine::Mpi>,
    ) -> TemplateLog {
        if self.has_messages() {
            return self.schedule_messages(point, shape, demands, mpi);
        }
        let p = shape.p;
        let mut log = TemplateLog::new(self.log_header(point, p));
        let regions: Vec<_> = self.template.iter().map(|s| log.name(&s.region)).collect();
        for t in 0..p {
            log.push(0, t, EventKind::Start);
        }
        let start = (self.application.startup_s * 1e9).round().max(1.0);
        let mut clock = vec![start; p as usize];
        // When each step last ended, by iteration: ends[iteration][step].
        let mut ends: Vec<Vec<f64>> = Vec::with_capacity(shape.replayed as usize);
        let mut id = 0u64;
        let handoff = (self.hardware.handoff(p) * 1e9).max(1.0);
        // Each step's fork and join, half before its members start and half after the last
        // ends; a step whose members outnumber its cores pays a switch per round after the
        // first ([`super::model::Members::rounds`]).
        let forks: Vec<f64> = self
            .template
            .iter()
            .map(|s| {
                let rounds = s.members.rounds(p, self.hardware.cores);
                (self.hardware.fork_join(rounds) * 1e9 / 2.0).max(1.0)
            })
            .collect();
        // Computation lasts its demand times the hardware's stretch (other programs' load,
        // the program's threads outnumbering the cores); each thread's two `cpu` samples, at
        // its start and its stop, show the demand alone and the rest as run-queue delay, so
        // that `pp` attributes the stretch as `rc.cpu`, not `pc`
        // (docs/attribution.md#resource-contention-rccpu): one span per thread, which keeps
        // the log as short as it was without samples.
        let stretch = self.hardware.stretch(p);
        let mut cpu = vec![(0u64, 0u64); p as usize];
        for t in 0..p {
            log.push(0, t, cpu_sample(0, 0));
        }
        for iteration in 0..shape.replayed as usize {
            let mut these = vec![f64::NAN; self.template.len()];
            for (k, step) in self.template.iter().enumerate() {
                let members = step.members.threads(p);
                let fork = forks[k];
                if members.is_empty() {
                    these[k] = 0.0;
                    continue;
                }
                let leader = members.end - 1;
                let free = members
                    .clone()
                    .map(|t| clock[t as usize])
                    .fold(0.0, f64::max);
                // The releasing step's end and the thread that ended it.
                let release = step.waits_for.as_ref().and_then(|h| {
                    let from = self.template.iter().position(|s| s.region == h.after)?;
                    let at = iteration.checked_sub(h.lag as usize)?;
                    let end = if h.lag == 0 {
                        these[from]
                    } else {
                        ends[at][from]
                    };
                    let by = self.template[from].members.threads(p).end.checked_sub(1)?;
                    Some((end, by))
                });
                let begin = free;
                let team = match step.members {
                    super::model::Members::All => None,
                    _ => Some(log.team(&members.clone().collect::<Vec<_>>())),
                };
                let name = regions[k];
                log.push(ns(begin), leader, EventKind::RegionBegin { id, name, team });
                let mut end = begin + 1.0;
                let mut ready = begin;
                if let Some((released, by)) = release
                    && released.is_finite()
                    && released > begin
                {
                    let waiter = members.start;
                    let object = Some(name);
                    log.push(
                        ns(begin).saturating_add(1),
                        waiter,
                        EventKind::WaitBegin {
                            kind: WaitKind::Recv,
                            object,
                        },
                    );
                    let until = released + handoff;
                    log.push(
                        ns(until),
                        waiter,
                        EventKind::WaitEnd {
                            kind: WaitKind::Recv,
                            object,
                            by: Some(by),
                        },
                    );
                    end = end.max(until + 1.0);
                    ready = until;
                }
                let m = members.len() as f64;
                let units = match &step.split {
                    Split::Equal => None,
                    Split::Chunks { units } => self
                        .value(units, point)
                        .filter(|u| *u >= 1.0)
                        .map(f64::floor),
                };
                for (j, t) in members.clone().enumerate() {
                    let share = match units {
                        None => 1.0 / m,
                        Some(u) => {
                            let chunk = (u / m).floor() + f64::from(((j as f64) < u % m) as u8);
                            chunk / u
                        }
                    };
                    let busy = demands.per_iteration_s[k] * share * 1e9;
                    if busy <= 0.0 || step.activity == Activity::Wait {
                        continue;
                    }
                    let (b, e) = intervals(step.activity, name);
                    let from = ready + 1.0 + fork;
                    log.push(ns(from), t, b);
                    log.push(ns(from + busy), t, e);
                    if step.activity == Activity::Work {
                        let length = ns(from + busy) - ns(from);
                        let used = (((length as f64) / stretch).round() as u64).min(length);
                        let (c, d) = &mut cpu[t as usize];
                        *c = c.saturating_add(used);
                        *d = d.saturating_add(length - used);
                    }
                    end = end.max(from + busy + fork);
                }
                log.push(ns(end), leader, EventKind::RegionEnd { id });
                id += 1;
                for t in members {
                    clock[t as usize] = end + 2.0;
                }
                these[k] = end;
            }
            ends.push(these);
        }
        let last = clock.iter().copied().fold(start, f64::max);
        self.close_log(log, &cpu, last)
    }

    /// Ends a predicted log: each thread's last `cpu` sample (`cpu[t]`) and its `stop` at the
    /// model's teardown after `last`.
    pub(super) fn close_log(
        &self,
        mut log: TemplateLog,
        cpu: &[(u64, u64)],
        last: f64,
    ) -> TemplateLog {
        let stop = ns(last + (self.application.teardown_s * 1e9).max(1.0));
        for (t, &(c, d)) in (0u32..).zip(cpu) {
            log.push(stop, t, cpu_sample(c, d));
            log.push(stop, t, EventKind::Stop);
        }
        log
    }
}

/// A `cpu` sample: the thread's CPU clock and run-queue delay, ns.
pub(super) fn cpu_sample(thread_cpu_ns: u64, run_delay_ns: u64) -> EventKind {
    EventKind::Cpu {
        thread_cpu_ns,
        run_delay_ns: Some(run_delay_ns),
    }
}

/// The begin and end of a member's interval in a step: a copy (`comm`, of 0 bytes) or work
/// labelled with the step's region (`name`).
pub(super) fn intervals(activity: Activity, name: pp::event::Sym) -> (EventKind, EventKind) {
    match activity {
        Activity::Comm => (
            EventKind::CommBegin { bytes: 0 },
            EventKind::CommEnd { bytes: 0 },
        ),
        _ => (
            EventKind::WorkBegin { label: Some(name) },
            EventKind::WorkEnd { label: Some(name) },
        ),
    }
}

/// The region a subtask category is of: `pc.rows` → `rows`.
pub fn subtask_region(category: &str) -> Option<&str> {
    category
        .strip_prefix("pc.")
        .or_else(|| category.strip_prefix("cl."))
}

/// Nanoseconds of a predicted log from a time in (fractional) nanoseconds.
pub(super) fn ns(t: f64) -> u64 {
    t.round().max(0.0) as u64
}
