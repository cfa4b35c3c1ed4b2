//! [`MeasuredRun`]: a log read once, in time order, into one stream of [`Record`]s per thread
//! (in a temporary file past a bounded buffer): each event, whether its thread computes after
//! it and how much faster that computation goes on the target, and its dependencies in the
//! [activity graph](crate::graph) with what was measured of them (docs/whatif.md#cost).

use std::collections::{BTreeMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Mutex;

use anyhow::{Result, bail};
use pp_recorder::log::binary::BlockState;

use super::record::{Group, Latency, Record};
use super::sampled::{Finish, Sampled};
use super::streams::{Streams, Writer};
use crate::event::{EventKind, Header, Sym, Symbols, TeamRef, ThreadId};
use crate::graph::{ArcKind, Builder};
use crate::log::{Encoding, LogReader};
use crate::profile::Sweep;
use crate::profile::sweep::{IdHasher, IdMap};

/// Sets looked up at region and phase events, hashed by [`IdHasher`] as [`IdMap`]s are.
type IdSet<K> = HashSet<K, BuildHasherDefault<IdHasher>>;

/// A log read for a replay: its header, names and encoding, and each thread's records.
#[derive(Debug)]
pub struct MeasuredRun {
    /// The log's header.
    pub header: Header,
    /// Its names.
    pub symbols: Symbols,
    /// Its encoding (the predicted log gets the same).
    pub encoding: Encoding,
    /// The share of the run's processor time (`p ×` wall) the attribution gives rc.cpu: time
    /// the threads waited for a core (0 without `cpu` samples, or when nothing started);
    /// `None` unless read by [`MeasuredRun::read_attributed`].
    pub rc_cpu: Option<f64>,
    /// At most that share, from the reading alone: what the two steps of
    /// docs/attribution.md#resource-contention-rccpu could move at most (each span's busy time
    /// not backed by CPU time, and every growth of a run-queue delay) over `p ×` the window.
    /// Where it is below a share, the attribution need not run to know that rc.cpu's is too
    /// (allowing for a window the attribution draws up to a tenth shorter).
    pub rc_cpu_bound: f64,
    /// Each thread's records, in time order.
    pub(super) records: Streams,
    /// Each thread's share of a processor and run-queue delay between two consecutive `cpu`
    /// samples (two `f32`s, one pair from its second sample on).
    pub(super) shares: Streams,
    /// Which threads have `cpu` samples.
    pub(super) sampled: Sampled,
    /// Each thread's events.
    pub(super) counts: Vec<u64>,
    /// The run window: the first `start` to the last event (0 without a `start`).
    pub(super) window: u64,
}

#[derive(Debug, Default)]
struct State {
    /// Open intervals, innermost last: true for a wait.
    stack: Vec<Interval>,
    started: bool,
    stopped: bool,
    /// Open regions the thread is a member of, innermost last, with their speed factors.
    regions: Vec<(u64, f64)>,
    phase: f64,
    /// The last `cpu` sample's CPU clock and run-queue delay.
    sample: Option<(u64, Option<u64>)>,
    /// Time busy since that sample, ns.
    busy_since: u64,
    /// The latest run-queue delay any of its samples gave.
    delay: Option<u64>,
    /// Whether it has had a sample.
    sampled: bool,
    /// The previous event's time in the log and whether the thread computed after it.
    previous: Option<(u64, bool)>,
    /// Events so far, and the time in the graph of the latest.
    count: u64,
    last_t: u64,
    /// While the thread's `start` (its first event) may still follow a fork: its time in the
    /// log and in the graph, and its records so far (written once that is known).
    start: Option<(u64, u64)>,
    held: Vec<Record>,
    written: Written,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interval {
    Work,
    Wait,
    Comm,
}

#[derive(Debug)]
struct Region {
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

    /// The number of events replayed (those of threads below `p`).
    pub fn events(&self) -> u64 {
        self.counts.iter().sum()
    }

    fn read_with(
        reader: LogReader,
        name: &str,
        speeds: &BTreeMap<String, f64>,
        attribute: bool,
    ) -> Result<MeasuredRun> {
        let p = reader.header().p as usize;
        let (records, shares, sampled) = (Streams::new(p), Streams::new(p), Sampled::new(p));
        let reading = read_into(
            reader,
            name,
            speeds,
            attribute,
            &records,
            Some(&shares),
            &sampled,
            None,
        )?;
        Ok(reading.run(records, shares, sampled))
    }
}

/// What reading a log gives besides its streams ([`read_into`]).
#[derive(Debug)]
pub(super) struct Reading {
    header: Header,
    symbols: Symbols,
    encoding: Encoding,
    rc_cpu: Option<f64>,
    /// Each thread's events.
    pub counts: Vec<u64>,
    window: u64,
    /// At most the rc.cpu the attribution can find, ns (its share: [`MeasuredRun::rc_cpu_bound`]).
    contention_ns: u64,
}

impl Reading {
    /// The run, with the streams its reading wrote.
    pub fn run(self, records: Streams, shares: Streams, sampled: Sampled) -> MeasuredRun {
        let rc_cpu_bound = if self.contention_ns == 0 {
            0.0
        } else {
            self.contention_ns as f64 / (self.window as f64 * f64::from(self.header.p))
        };
        MeasuredRun {
            header: self.header,
            symbols: self.symbols,
            encoding: self.encoding,
            rc_cpu: self.rc_cpu,
            rc_cpu_bound,
            records,
            shares,
            sampled,
            counts: self.counts,
            window: self.window,
        }
    }
}

/// Copies the names and teams of `symbols` past the `published` ones (names, teams) to `out`,
/// where they get the same ids (both tables only grow, and `symbols` holds no name or team
/// twice).
fn publish(symbols: &Symbols, out: &Mutex<Symbols>, published: &mut (usize, u32)) {
    if symbols.len() == published.0 && symbols.get_team(TeamRef(published.1)).is_none() {
        return;
    }
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    for k in published.0..symbols.len() {
        out.intern(symbols.name(Sym(k as u32)));
    }
    published.0 = symbols.len();
    while let Some(team) = symbols.get_team(TeamRef(published.1)) {
        out.intern_team(team);
        published.1 += 1;
    }
}

/// [`MeasuredRun::read`] into `records`, `shares` (each of `reader`'s header's `p` streams;
/// no shares when `None`: only a demand from CPU time reads them) and `sampled`, which a
/// replay may read meanwhile on another thread: each record is there for it once its chunk is
/// published, and the streams and `sampled` end when this returns, with an error or without.
/// The log's names and teams go to `symbols`, when given, before the first record that may
/// reference them (a [`super::blocks::Direct`] log defines them from there).
#[allow(clippy::too_many_arguments)]
pub(super) fn read_into(
    mut reader: LogReader,
    name: &str,
    speeds: &BTreeMap<String, f64>,
    attribute: bool,
    records: &Streams,
    shares: Option<&Streams>,
    sampled: &Sampled,
    symbols_out: Option<&Mutex<Symbols>>,
) -> Result<Reading> {
    let _finish = Finish(sampled);
    let header = reader.header().clone();
    let encoding = reader.encoding();
    let p = header.p as usize;
    let mut builder = Builder::streaming(&header);
    let mut sweep = attribute.then(|| Sweep::new(&header, None));
    let (records_in, shares_in) = (records, shares);
    let mut records = records_in.writer();
    let mut shares = shares_in.map(Streams::writer);
    let mut states: Vec<State> = (0..p)
        .map(|_| State {
            phase: 1.0,
            ..State::default()
        })
        .collect();
    let mut regions: IdMap<u64, Region> = IdMap::default();
    let mut factors: IdMap<Sym, f64> = IdMap::default();
    let mut seen: IdSet<Sym> = IdSet::default();
    let (mut last_t, mut first_start, mut last_event) = (0u64, None::<u64>, 0u64);
    let mut contention_ns = 0u64;
    let mut scratch = Record::default();
    let mut published = (0usize, 0u32);
    let mut read = 0u64;
    while let Some(e) = reader.next_event() {
        let e = e?;
        read += 1;
        // A replay that stopped (an error, which it reports) needs no more records.
        if read.is_multiple_of(4096) && records_in.abandoned() {
            break;
        }
        let symbols = reader.symbols();
        if let Some(out) = symbols_out {
            publish(symbols, out, &mut published);
        }
        if let Some(sweep) = &mut sweep {
            sweep.event(&e, symbols);
        }
        let i = e.thread as usize;
        if i >= p {
            continue;
        }
        // The event's time in the graph: a thread's time going back is the time before it.
        let t = e.t.max(last_t);
        last_t = t;
        if matches!(e.kind, EventKind::Start) {
            first_start = Some(first_start.map_or(e.t, |f| f.min(e.t)));
        }
        last_event = last_event.max(e.t);
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
                    let factor = factor_of(name);
                    for &m in &members {
                        if let Some(s) = states.get_mut(m as usize) {
                            s.regions.push((id, factor));
                        }
                    }
                    regions.insert(id, Region { members, opens: 1 });
                }
            },
            EventKind::RegionEnd { id } => {
                if let Some(r) = regions.get_mut(&id) {
                    r.opens -= 1;
                    if r.opens == 0 {
                        for &m in &r.members {
                            let s = &mut states[m as usize];
                            if let Some(k) = s.regions.iter().rposition(|&x| x.0 == id) {
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
        if let Some((previous, true)) = states[i].previous {
            states[i].busy_since += e.t.saturating_sub(previous);
        }
        if let EventKind::Cpu {
            thread_cpu_ns,
            run_delay_ns,
        } = e.kind
        {
            let s = &mut states[i];
            if let Some((cpu, _)) = s.sample {
                contention_ns = contention_ns.saturating_add(
                    s.busy_since
                        .saturating_sub(thread_cpu_ns.saturating_sub(cpu)),
                );
            }
            if let Some(b) = run_delay_ns {
                if let Some(a) = s.delay {
                    contention_ns = contention_ns.saturating_add(b.saturating_sub(a));
                }
                s.delay = Some(b);
            }
            if let Some((cpu, delay)) = s.sample {
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
                let mut pair = [0u8; 8];
                pair[..4].copy_from_slice(&share.to_le_bytes());
                pair[4..].copy_from_slice(&queued.to_le_bytes());
                if let Some(shares) = &mut shares {
                    shares.push(i, &pair);
                }
            }
            s.sample = Some((thread_cpu_ns, run_delay_ns));
            s.busy_since = 0;
            if !s.sampled {
                s.sampled = true;
                sampled.found(i);
            }
        }
        let s = &states[i];
        let busy = s.started
            && !s.stopped
            && matches!(s.stack.last(), Some(Interval::Work | Interval::Comm));
        let region = s.regions.last().map_or(1.0, |r| r.1);
        let factor = region * s.phase;
        record(&mut scratch, &builder, &states, e, t, busy, factor);
        let s = &mut states[i];
        s.previous = Some((e.t, busy));
        s.count += 1;
        s.last_t = t;
        if s.count == 1 && matches!(e.kind, EventKind::Start) {
            s.start = Some((e.t, t));
        }
        match s.start {
            None => write(&mut records, i, &mut s.written, &scratch),
            Some((start, t0)) => {
                // The first fork into the thread from at or before its start ties the
                // start to it; none can come once the thread has gone past that time.
                let fork = builder
                    .added()
                    .arcs
                    .iter()
                    .find(|a| a.kind == ArcKind::Fork && a.from_t <= start);
                let decided = fork.is_some() || (t > t0 && !matches!(e.kind, EventKind::Start));
                if let Some(a) = fork
                    && let Some(first) = s.held.first_mut()
                {
                    first.released = true;
                    first.deps.push(Group {
                        how: Latency::Fork,
                        ns: t0 - a.from_t,
                        sources: vec![(a.from, a.from_node)],
                    });
                }
                s.held.push(scratch.clone());
                if decided {
                    s.start = None;
                    for r in std::mem::take(&mut s.held) {
                        write(&mut records, i, &mut s.written, &r);
                    }
                }
            }
        }
    }
    if !reader.finished() {
        bail!(
            "{name}: the log has no end marker (the run did not finish); a replay needs the whole run"
        );
    }
    for (i, s) in states.iter_mut().enumerate() {
        for r in std::mem::take(&mut s.held) {
            write(&mut records, i, &mut s.written, &r);
        }
    }
    records.finish();
    drop(shares);
    if let Some(e) = records_in.error().or(shares_in.and_then(Streams::error)) {
        bail!("{name}: {e}");
    }
    let symbols = reader.symbols().clone();
    let rc_cpu = sweep.map(|sweep| rc_share(sweep, &symbols));
    for speed in speeds.keys() {
        if !seen.iter().any(|&s| symbols.get_name(s) == Some(speed)) {
            let speed = crate::log::excerpt(speed);
            bail!("--speed {speed}: {name} has no region or phase of that name");
        }
    }
    Ok(Reading {
        header,
        symbols,
        encoding,
        rc_cpu,
        counts: states.iter().map(|s| s.count).collect(),
        window: first_start.map_or(0, |f| last_event.saturating_sub(f)),
        contention_ns,
    })
}

/// The share of rc.cpu in the attribution of the log `reader` reads ([`MeasuredRun::rc_cpu`]),
/// on its own: `pp whatif` runs it on another thread beside [`MeasuredRun::read`], on a second
/// reader of the same file. `None` when the log cannot be read to its end (the replay's own
/// reading says why).
pub(crate) fn rc_cpu(mut reader: LogReader) -> Option<f64> {
    let mut sweep = Sweep::new(reader.header(), None);
    while let Some(e) = reader.next_event() {
        sweep.event(&e.ok()?, reader.symbols());
    }
    reader.finished().then(|| rc_share(sweep, reader.symbols()))
}

/// rc.cpu's share of a finished sweep's processor time (0 when it has none).
fn rc_share(sweep: Sweep, symbols: &Symbols) -> f64 {
    sweep.finish(symbols).map_or(0.0, |a| {
        let all = a.totals.sum();
        let rc = a.totals.sub("rc.cpu").unwrap_or(0);
        if all == 0 {
            0.0
        } else {
            rc as f64 / all as f64
        }
    })
}

/// The record of event `e` (at `t` in the graph), which `builder` has just added, into `r`
/// (its vectors reused: no allocation an event).
fn record(
    r: &mut Record,
    builder: &Builder,
    states: &[State],
    e: crate::event::Event,
    t: u64,
    busy: bool,
    factor: f64,
) {
    let added = builder.added();
    // Where an arc leaves from: its source node's time (a cause arc's `from_t` is the
    // wait's end; its source is the releasing thread's latest event then).
    let source_t = |a: &crate::graph::RemoteArc| match a.kind {
        ArcKind::Cause => states[a.from as usize].last_t,
        _ => a.from_t,
    };
    let mut used = 0;
    let mut group = |how: Latency, ns: u64, sources: &mut dyn Iterator<Item = (ThreadId, u32)>| {
        r.group(used, how, ns).sources.extend(sources);
        used += 1;
    };
    for (k, a) in added.arcs.iter().enumerate() {
        let how = Latency::Arc {
            binding: added.taken == Some(k),
            message: a.kind == ArcKind::Message,
        };
        group(
            how,
            t.saturating_sub(source_t(a)),
            &mut std::iter::once((a.from, a.from_node)),
        );
    }
    // A region's end waits for every other member's last event in it, not only the latest
    // (the join's arc, above): replayed on other processors another may finish last. Order
    // only: 0 or 1 ns, no more than each measured gap, so that the identity replay is exact.
    if !added.joined.is_empty() {
        let gap = added
            .joined
            .iter()
            .map(|j| t.saturating_sub(j.2))
            .min()
            .unwrap_or(0);
        group(
            Latency::Arc {
                binding: false,
                message: false,
            },
            gap.min(1),
            &mut added.joined.iter().map(|j| (j.0, j.1)),
        );
    }
    if let Some(arrivals) = added.departed {
        let last = arrivals.iter().map(|a| a.2).max().unwrap_or(0);
        // Held by something later than the barrier (an OpenMP worker's barrier wait ends at
        // the next region's fork): the barrier only orders.
        let later = added
            .taken
            .map(|k| &added.arcs[k])
            .is_some_and(|a| a.kind != ArcKind::Barrier && source_t(a) > last);
        group(
            Latency::Barrier,
            t.saturating_sub(last).min(if later { 1 } else { u64::MAX }),
            &mut arrivals.iter().map(|a| (a.0, a.1)),
        );
    }
    r.keep(used);
    r.event = crate::event::Event { t, ..e };
    r.busy = busy;
    r.released = added.taken.is_some();
    r.factor = factor;
}

/// Appends thread `i`'s next record (its `written`th).
fn write(records: &mut Writer, i: usize, s: &mut Written, r: &Record) {
    records.push_with(i, |buf| r.encode(buf, s.count as u32, &mut s.encoding));
    s.count += 1;
}

/// What has been written of a thread's records: how many, and the encoding's state.
#[derive(Debug, Default)]
struct Written {
    count: u64,
    encoding: BlockState,
}

/// Closes the innermost open interval of this type and those inside it (none: nothing).
fn pop(stack: &mut Vec<Interval>, what: Interval) {
    if let Some(at) = stack.iter().rposition(|&o| o == what) {
        stack.truncate(at);
    }
}
