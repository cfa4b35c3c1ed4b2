//! [`MeasuredRun`]: a log in memory, its activity graph, and for each event whether its thread
//! computes after it and how much faster that computation goes on the target.

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::{Result, bail};

use crate::event::{Event, EventKind, Header, Sym, Symbols, ThreadId};
use crate::graph::{Builder, Graph};
use crate::log::{Encoding, LogReader};
use crate::profile::Sweep;

/// One event of a thread and what the thread does after it.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The event.
    pub event: Event,
    /// Whether the thread computes until its next event: a `work` or `comm` interval is
    /// innermost. Otherwise it waits, idles (in no interval: a worker waiting for its next
    /// region, say), has not started or has stopped; none of these compete for a processor.
    pub busy: bool,
    /// The speed factor of that stretch (its innermost region's times its phase's).
    pub factor: f64,
    /// The share of a processor the thread had while busy between the `cpu` samples around
    /// this stretch: their CPU clock's growth over the busy time between them, at most 1
    /// (1 where no two samples enclose it).
    pub share: f32,
    /// The thread's run-queue delay between those samples, ns (0 without delays).
    pub queued: f32,
}

/// A log read whole for a replay.
#[derive(Debug)]
pub struct MeasuredRun {
    /// The log's header.
    pub header: Header,
    /// Its names.
    pub symbols: Symbols,
    /// Its encoding (the predicted log gets the same).
    pub encoding: Encoding,
    /// Each thread's events, in time order.
    pub threads: Vec<Vec<Entry>>,
    /// The activity graph (node `k` of a thread is its event `k`).
    pub graph: Graph,
    /// The share of the run's processor time (`p ×` wall) the attribution gives rc.cpu: time
    /// the threads waited for a core (0 without `cpu` samples, or when nothing started);
    /// `None` unless read by [`MeasuredRun::read_attributed`].
    pub rc_cpu: Option<f64>,
}

#[derive(Debug, Default)]
struct State {
    /// Open intervals, innermost last: true for a wait.
    stack: Vec<Interval>,
    started: bool,
    stopped: bool,
    /// Open regions the thread is a member of, innermost last.
    regions: Vec<u64>,
    phase: f64,
    /// The last `cpu` sample: its entry, CPU clock and run-queue delay.
    sample: Option<(usize, u64, Option<u64>)>,
    /// Time busy since that sample, ns.
    busy_since: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interval {
    Work,
    Wait,
    Comm,
}

#[derive(Debug)]
struct Region {
    factor: f64,
    members: Vec<ThreadId>,
    opens: u32,
}

impl MeasuredRun {
    /// Reads every event of `reader` (named `name` in messages), with `speeds` (region or
    /// phase name → factor) applied to the computation in them. A speed for a name that is
    /// neither a region's nor a phase's is an error; damage that ends the log early is an
    /// error too (a replay of part of a run predicts nothing).
    pub fn read(
        reader: LogReader,
        name: &str,
        speeds: &BTreeMap<String, f64>,
    ) -> Result<MeasuredRun> {
        MeasuredRun::read_with(reader, name, speeds, false)
    }

    /// [`MeasuredRun::read`], attributing the log on the way for [`MeasuredRun::rc_cpu`] (the
    /// attribution's pass costs about a tenth of a replay's).
    pub fn read_attributed(
        reader: LogReader,
        name: &str,
        speeds: &BTreeMap<String, f64>,
    ) -> Result<MeasuredRun> {
        MeasuredRun::read_with(reader, name, speeds, true)
    }

    fn read_with(
        mut reader: LogReader,
        name: &str,
        speeds: &BTreeMap<String, f64>,
        attribute: bool,
    ) -> Result<MeasuredRun> {
        let header = reader.header().clone();
        let encoding = reader.encoding();
        let p = header.p as usize;
        let mut builder = Builder::new(&header);
        let mut sweep = attribute.then(|| Sweep::new(&header, None));
        let mut threads: Vec<Vec<Entry>> = vec![Vec::new(); p];
        let mut states: Vec<State> = (0..p)
            .map(|_| State {
                phase: 1.0,
                ..State::default()
            })
            .collect();
        let mut regions: HashMap<u64, Region> = HashMap::new();
        let mut factors: HashMap<Sym, f64> = HashMap::new();
        let mut seen: HashSet<Sym> = HashSet::new();
        while let Some(e) = reader.next_event() {
            let e = e?;
            let symbols = reader.symbols();
            if let Some(sweep) = &mut sweep {
                sweep.event(&e, symbols);
            }
            let i = e.thread as usize;
            if i >= p {
                continue;
            }
            builder.event(&e, symbols);
            let mut factor_of = |s: Sym| {
                seen.insert(s);
                *factors.entry(s).or_insert_with(|| {
                    symbols
                        .get_name(s)
                        .and_then(|n| speeds.get(n))
                        .copied()
                        .unwrap_or(1.0)
                })
            };
            match e.kind {
                EventKind::Start => states[i].started = true,
                EventKind::Stop => {
                    states[i].stopped = true;
                    states[i].stack.clear();
                }
                EventKind::WorkBegin { .. } => states[i].stack.push(Interval::Work),
                EventKind::CommBegin { .. } => states[i].stack.push(Interval::Comm),
                EventKind::WaitBegin { .. } => states[i].stack.push(Interval::Wait),
                EventKind::WorkEnd { .. } => pop(&mut states[i].stack, Interval::Work),
                EventKind::CommEnd { .. } => pop(&mut states[i].stack, Interval::Comm),
                EventKind::WaitEnd { .. } => pop(&mut states[i].stack, Interval::Wait),
                EventKind::Phase { name } => states[i].phase = factor_of(name),
                EventKind::RegionBegin { id, name, team } => match regions.get_mut(&id) {
                    Some(r) => r.opens += 1,
                    None => {
                        let members: Vec<ThreadId> = match team.and_then(|t| symbols.get_team(t)) {
                            Some(team) => team.to_vec(),
                            None if team.is_some() => Vec::new(),
                            None => (0..header.p).collect(),
                        };
                        for &m in &members {
                            if let Some(s) = states.get_mut(m as usize) {
                                s.regions.push(id);
                            }
                        }
                        let factor = factor_of(name);
                        regions.insert(
                            id,
                            Region {
                                factor,
                                members,
                                opens: 1,
                            },
                        );
                    }
                },
                EventKind::RegionEnd { id } => {
                    if let Some(r) = regions.get_mut(&id) {
                        r.opens -= 1;
                        if r.opens == 0 {
                            for &m in &r.members {
                                let s = &mut states[m as usize];
                                if let Some(k) = s.regions.iter().rposition(|&x| x == id) {
                                    s.regions.remove(k);
                                }
                            }
                            regions.remove(&id);
                        }
                    }
                }
                EventKind::Cpu { .. }
                | EventKind::Send { .. }
                | EventKind::Recv { .. }
                | EventKind::Coll { .. }
                | EventKind::Release { .. } => {}
            }
            // The busy time since the thread's last sample; at a sample, its share of a
            // processor over the stretches since the last one.
            if let Some(last) = threads[i].last()
                && last.busy
            {
                states[i].busy_since += e.t.saturating_sub(last.event.t);
            }
            if let EventKind::Cpu {
                thread_cpu_ns,
                run_delay_ns,
            } = e.kind
            {
                let s = &mut states[i];
                if let Some((from, cpu, delay)) = s.sample {
                    let grown = thread_cpu_ns.saturating_sub(cpu) as f64;
                    let share = if s.busy_since > 0 {
                        (grown / s.busy_since as f64).min(1.0) as f32
                    } else {
                        1.0
                    };
                    let queued = match (delay, run_delay_ns) {
                        (Some(a), Some(b)) => b.saturating_sub(a) as f32,
                        _ => 0.0,
                    };
                    for entry in &mut threads[i][from..] {
                        entry.share = share;
                        entry.queued = queued;
                    }
                }
                s.sample = Some((threads[i].len(), thread_cpu_ns, run_delay_ns));
                s.busy_since = 0;
            }
            let s = &states[i];
            let busy = s.started
                && !s.stopped
                && matches!(s.stack.last(), Some(Interval::Work | Interval::Comm));
            let region = s
                .regions
                .last()
                .and_then(|id| regions.get(id))
                .map_or(1.0, |r| r.factor);
            threads[i].push(Entry {
                event: e,
                busy,
                factor: region * s.phase,
                share: 1.0,
                queued: 0.0,
            });
        }
        if !reader.finished() {
            bail!(
                "{name}: the log has no end marker (the run did not finish); a replay needs the whole run"
            );
        }
        let symbols = reader.symbols().clone();
        let rc_cpu = sweep.map(|sweep| {
            sweep.finish(&symbols).map_or(0.0, |a| {
                let all = a.totals.sum();
                let rc = a.totals.sub("rc.cpu").unwrap_or(0);
                if all == 0 {
                    0.0
                } else {
                    rc as f64 / all as f64
                }
            })
        });
        for speed in speeds.keys() {
            if !seen.iter().any(|&s| symbols.get_name(s) == Some(speed)) {
                let speed = crate::log::excerpt(speed);
                bail!("--speed {speed}: {name} has no region or phase of that name");
            }
        }
        Ok(MeasuredRun {
            header,
            symbols,
            encoding,
            threads,
            graph: builder.finish(),
            rc_cpu,
        })
    }
}

/// Closes the innermost open interval of this type and those inside it (none: nothing).
fn pop(stack: &mut Vec<Interval>, what: Interval) {
    if let Some(at) = stack.iter().rposition(|&o| o == what) {
        stack.truncate(at);
    }
}
