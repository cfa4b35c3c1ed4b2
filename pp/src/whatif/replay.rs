//! [`replay`]: the run simulated on the target configuration, event by event in predicted
//! time.
//!
//! Each thread goes from one event to the next through one *step*: computation (a demand for
//! processor time, the measured time divided by the stretch's speed factor), or a wait held
//! for its measured time when no other thread is known to have ended it (0 when one is),
//! then no earlier than each of its dependencies (another thread's event plus a latency).
//! A processor serves its runnable members fairly: `k` of them each progress at `1/k`
//! ([`Sharing::Processor`]), or one at a time until it blocks or its slice ends, a switch
//! between two ([`Sharing::RunToBlock`], docs/whatif.md#the-sharing-rule), where a waiting
//! thread may spin on its processor instead of blocking ([`Waits::Spin`],
//! docs/whatif.md#waits-that-spin).

use std::collections::VecDeque;

use anyhow::{Result, bail};

use pp_recorder::log::binary::BlockState;

use super::blocks::{Blocks, Direct, Encoder, Written};
use super::load::MeasuredRun;
use super::pending::Pending;
use super::record::{Latency, Record};
use super::sampled::Sampled;
use super::streams::{Cursor, Streams};
use super::target::{Demand, Sharing, Target, Waits};
use super::times::Times;
use crate::event::{EventKind, ThreadId};

/// Remaining demand below this (ns) is done: the float rounding of a completion time.
const EPSILON: f64 = 1e-3;

/// The replay's result: the predicted log's events, each at its predicted time with its
/// `cpu` samples rewritten from its thread's scheduler accounting, encoded in the blocks of a
/// binary log thread by thread (a temporary file past a bounded buffer).
#[derive(Debug)]
pub struct Predicted {
    /// The run's first event, ns: the replay's times count from it (so that they are exact
    /// in a double up to 2^53 ns, 104 days, of run whatever the clock's origin).
    pub origin: u64,
    /// The predicted log's events (none where the replay wrote them to a [`Direct`] log).
    pub(super) blocks: Blocks,
    /// The [`Direct`] log the replay wrote, if any: its writer, to finish, or the first error.
    pub(super) written: Option<std::io::Result<Written>>,
    /// The latest predicted time, ns after the origin.
    pub(super) latest: f64,
    /// The predicted run window: the first `start` to the last event, rounded to the ns.
    pub(super) window: u64,
    /// The first error reading the streams back for the predicted log.
    pub(super) failed: std::sync::Mutex<Option<String>>,
    /// Each thread's events replayed.
    pub(super) replayed: Vec<u64>,
}

impl Predicted {
    /// The first error reading the predicted events back ([`super::PredictedLog::events`]).
    pub fn error(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// `t.round() as u64` (ties away from zero, 0 below zero and for NaN, saturated above), without
/// the call to libm's `round` a baseline x86-64 build makes: a few per event.
pub(super) fn nearest(t: f64) -> u64 {
    let whole = t as u64;
    if t - whole as f64 >= 0.5 {
        whole.saturating_add(1)
    } else {
        whole
    }
}

/// A thread's predicted scheduler accounting at one of its events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Time runnable without a processor so far, ns.
    pub delay: f64,
    /// Processor time received so far, ns.
    pub served: f64,
    /// Demand the speed factors took away so far, ns.
    pub saved: f64,
}

/// What a thread is doing in the simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Thread {
    /// Its next event's index.
    next: u64,
    /// Demand left in its current computation, ns.
    remaining: f64,
    /// No earlier than this, its next event.
    until: f64,
    delay: f64,
    served: f64,
    saved: f64,
}

/// What the replay has read of a thread's records.
#[derive(Debug)]
struct Lane {
    /// The current record was read ahead (the first, for the origin) and is not yet begun.
    ahead: bool,
    records: Cursor,
    state: BlockState,
    shares: Cursor,
    /// The record of its next event, once read.
    current: Option<Record>,
    /// Its share of a processor and run-queue delay after the current event.
    share: (f32, f32),
    /// The previous event: its time, whether the thread computed after it, the speed
    /// factor there, and its share and run-queue delay.
    previous: Option<(u64, bool, f64, f32, f32)>,
    /// The current event's dependencies: (thread, node, latency).
    deps: Vec<(ThreadId, u32, f64)>,
    /// Dependencies already met.
    met: usize,
    /// The last `cpu` sample's CPU clock, measured and predicted.
    clock: Option<(u64, u64)>,
    /// Whether the thread gets a `cpu` sample at its `start` and `stop` (once known).
    added: Option<bool>,
}

#[derive(Debug, Default)]
struct Processor {
    /// Its members computing (processor sharing).
    running: Vec<ThreadId>,
    last: f64,
    /// Run to block: the thread that has it (computing, or at an event between two steps).
    holder: Option<ThreadId>,
    /// Run to block: whether the holder computes.
    busy: bool,
    /// Run to block: when the holder starts to progress (after the switch to it).
    from: f64,
    /// Run to block: when the holder's slice ends.
    slice_end: f64,
    /// Run to block: the runnable threads waiting for it, first come first served.
    queue: VecDeque<ThreadId>,
    /// Run to block: the thread it ran last (a thread it runs again, with no other between,
    /// costs no switch).
    ran: Option<ThreadId>,
}

struct Sim<'a> {
    records: &'a Streams,
    shares: &'a Streams,
    sampled: &'a Sampled,
    target: &'a Target,
    of: Vec<u32>,
    threads: Vec<Thread>,
    lanes: Vec<Lane>,
    processors: Vec<Processor>,
    /// The run's first event ([`Predicted::origin`]).
    origin: u64,
    /// Each thread's events' predicted times after the origin (a dependency's source is read
    /// back from them).
    times: Times,
    /// The latest predicted time after the origin.
    latest: f64,
    /// The predicted log's events, encoded as they happen.
    encoder: Encoder<'a>,
    /// The first predicted `start` and the last event, rounded.
    first_start: Option<u64>,
    last: u64,
    /// Each thread's next event (slot: the thread) and each processor's next completion
    /// (slot: `p` + the processor), once their times are known.
    pending: Pending,
    /// Per thread: (node, waiting thread) for threads blocked on one of its events.
    waiters: Vec<Vec<(u32, ThreadId)>>,
    /// Demand from CPU time ([`Demand::Cpu`]).
    cpu: bool,
    /// Threads woken or finished by the latest event, reused (no allocation an event).
    woken: Vec<ThreadId>,
    /// No processor is shared: each thread's times follow from its own and its
    /// dependencies' alone, whatever the order the events are simulated in, so threads go on
    /// until a dependency stops them, from `ready`, without the pending tree (docs/whatif.md#cost).
    alone: bool,
    /// Threads whose next event is due (at their `until`), when `alone`.
    ready: Vec<ThreadId>,
    /// Run to block: (slice, switch, wake), ns; `None` for processor sharing.
    run_to_block: Option<(f64, f64, f64)>,
    /// Run to block: the processors shared by several threads, among which a thread that
    /// becomes runnable may move to an idle one.
    pool: Vec<u32>,
    /// Run to block with [`Waits::Spin`]: a waiting thread keeps its processor.
    spin: bool,
    /// Per thread, with `spin`: it waits for its next event, holding a processor or queued
    /// for one, and its event happens only while it holds one.
    spinning: Vec<bool>,
    /// With `spin`: messages of at least this many bytes go by rendezvous
    /// (docs/whatif.md#rendezvous).
    rendezvous: Option<u64>,
    /// Per thread: its sends by rendezvous whose receiver has not held a processor since.
    owed: Vec<u32>,
    /// Per thread: the latest time a receiver of its sends by rendezvous took them (held a
    /// processor after the send); its next receive is no earlier.
    taken: Vec<f64>,
    /// Per thread: the senders (one entry a send) waiting for it to hold a processor.
    owing: Vec<Vec<ThreadId>>,
    /// Per thread: its next event, a receive, waits only for its sends to be taken.
    parked: Vec<bool>,
}

/// What the replay leaves of its simulation besides the predicted log's blocks.
struct Ends {
    origin: u64,
    latest: f64,
    window: u64,
    replayed: Vec<u64>,
    written: Option<std::io::Result<Written>>,
}

/// Replays `run` on `target`.
pub fn replay(run: &MeasuredRun, target: &Target) -> Result<Predicted> {
    let predicted = replay_streams(&run.records, &run.shares, &run.sampled, target, None)?;
    complete(&predicted, &run.counts)?;
    Ok(predicted)
}

/// Whether every thread's events were replayed (`counts` of them), within the log's clock.
pub(super) fn complete(predicted: &Predicted, counts: &[u64]) -> Result<()> {
    super::predict::within_clock(predicted)?;
    for (i, &n) in counts.iter().enumerate() {
        let replayed = predicted.replayed.get(i).copied().unwrap_or(0);
        if replayed != n {
            bail!(
                "the replay stopped at thread {i}'s event {} of {n}: a dependency was never met",
                replayed + 1,
            );
        }
    }
    Ok(())
}

/// Replays the run whose records and shares a reading writes (or has written) to `records`
/// and `shares` ([`super::load::read_into`]), on `target`, reading each thread's records as
/// they come, and writing the predicted log to `direct` when given; [`complete`] says whether
/// every event was replayed.
pub(super) fn replay_streams(
    records: &Streams,
    shares: &Streams,
    sampled: &Sampled,
    target: &Target,
    direct: Option<Direct<'_>>,
) -> Result<Predicted> {
    // Ended however the simulation ends: the reading no longer waits for chunks to be taken.
    let _reading = (records.reading(), shares.reading());
    let p = records.len();
    let blocks = Blocks::new(p);
    let ends = simulate(records, shares, sampled, target, &blocks, direct).inspect_err(|_| {
        // The reading need not go on past the error (docs/whatif.md#cost).
        records.abandon();
    })?;
    if let Some(e) = blocks.error() {
        bail!("{e}");
    }
    Ok(Predicted {
        origin: ends.origin,
        blocks,
        latest: ends.latest,
        window: ends.window,
        failed: Default::default(),
        replayed: ends.replayed,
        written: ends.written,
    })
}

/// The simulation of [`replay_streams`], encoding the predicted log's events into `blocks`, or
/// `direct`.
fn simulate<'a>(
    records: &'a Streams,
    shares: &'a Streams,
    sampled: &'a Sampled,
    target: &'a Target,
    blocks: &'a Blocks,
    direct: Option<Direct<'a>>,
) -> Result<Ends> {
    let p = records.len();
    let of = target.processors(p as u32)?;
    let n_processors = of.iter().max().map_or(0, |&m| m as usize + 1);
    let mut members = vec![0u32; n_processors];
    for &m in &of {
        members[m as usize] += 1;
    }
    let alone = members.iter().all(|&k| k <= 1);
    // The groups named are the machine's processors: where one is shared, a thread that
    // becomes runnable may move to any of them that is idle.
    let pool = if alone {
        Vec::new()
    } else {
        (0..target.groups.len() as u32).collect()
    };
    let spin = matches!(
        target.sharing,
        Sharing::RunToBlock {
            waits: Waits::Spin,
            ..
        }
    ) && !alone;
    let rendezvous = match target.sharing {
        Sharing::RunToBlock {
            rendezvous_bytes, ..
        } if spin => rendezvous_bytes,
        _ => None,
    };
    let run_to_block = match target.sharing {
        Sharing::Processor => None,
        Sharing::RunToBlock {
            slice_ns,
            switch_ns,
            wake_ns,
            ..
        } => Some((
            slice_ns.max(1.0),
            switch_ns.max(0.0),
            wake_ns.unwrap_or(switch_ns).max(0.0),
        )),
    };
    let mut sim = Sim {
        records,
        shares,
        sampled,
        target,
        of,
        threads: vec![
            Thread {
                next: 0,
                remaining: 0.0,
                until: 0.0,
                delay: 0.0,
                served: 0.0,
                saved: 0.0,
            };
            p
        ],
        lanes: (0..p)
            .map(|i| Lane {
                ahead: false,
                records: records.cursor(i),
                state: BlockState::default(),
                shares: shares.cursor(i),
                current: None,
                share: (1.0, 0.0),
                previous: None,
                deps: Vec::new(),
                met: 0,
                clock: None,
                added: None,
            })
            .collect(),
        processors: (0..n_processors).map(|_| Processor::default()).collect(),
        origin: 0,
        times: Times::new(p),
        latest: 0.0,
        encoder: blocks.encoder(direct),
        first_start: None,
        last: 0,
        pending: Pending::new(p + n_processors),
        waiters: vec![Vec::new(); p],
        cpu: target.demand == Demand::Cpu,
        woken: Vec::new(),
        alone,
        ready: Vec::new(),
        run_to_block,
        pool,
        spin,
        spinning: vec![false; p],
        rendezvous,
        owed: vec![0; p],
        taken: vec![0.0; p],
        owing: vec![Vec::new(); p],
        parked: vec![false; p],
    };
    // The times count from the run's first event: the earliest of the threads' first.
    let mut origin = None::<u64>;
    for i in 0..p {
        if sim.read(i)? {
            sim.lanes[i].ahead = true;
            let t = sim.lanes[i].current.as_ref().map_or(0, |r| r.event.t);
            origin = Some(origin.map_or(t, |o| o.min(t)));
        }
    }
    sim.origin = origin.unwrap_or(0);
    for i in 0..p {
        sim.begin(i, 0.0)?;
    }
    while let Some(i) = sim.ready.pop() {
        let t = sim.threads[i as usize].until;
        sim.event(i as usize, t)?;
    }
    while let Some((t, slot)) = sim.pending.pop() {
        match (slot as usize).checked_sub(p) {
            None => sim.event(slot as usize, t)?,
            Some(processor) => sim.done(processor, t)?,
        }
    }
    if let Some(e) = sim.times.error() {
        bail!("{e}");
    }
    let written = sim.encoder.finish().map(Direct::finish);
    Ok(Ends {
        origin: sim.origin,
        latest: sim.latest,
        window: sim.first_start.map_or(0, |f| sim.last.saturating_sub(f)),
        replayed: sim.threads.iter().map(|t| t.next).collect(),
        written,
    })
}

impl Sim<'_> {
    /// Reads thread `i`'s next record, and works out its dependencies' latencies on the
    /// target: a message's from the target's network when it has one; the latency measured
    /// when the arc is what ended the thread's wait, else 1 ns (the order); a barrier's release
    /// as measured; with [`Demand::Cpu`] a measured latency loses the run-queue delay around
    /// the event it leads to (the thread, released, waited for a core).
    /// Returns false at the end of the thread's records (the current one stays).
    fn read(&mut self, i: usize) -> Result<bool> {
        let lane = &mut self.lanes[i];
        if lane.ahead {
            lane.ahead = false;
            return Ok(true);
        }
        let data = lane.records.bytes(self.records)?;
        if data.is_empty() {
            return Ok(false);
        }
        if let Some(r) = &lane.current {
            lane.previous = Some((r.event.t, r.busy, r.factor, lane.share.0, lane.share.1));
        }
        // Decoded in place (the record is large: moved out and back, it cost a stall).
        let record = lane.current.get_or_insert_with(Record::default);
        let node = self.threads[i].next as u32;
        let damaged = || anyhow::anyhow!("thread {i}'s records in the temporary file are damaged");
        let head = record
            .decode_head(data, i as ThreadId, &mut lane.state)
            .ok_or_else(damaged)?;
        let queued = match (self.cpu, lane.previous) {
            (true, Some(p)) => f64::from(p.4),
            _ => 0.0,
        };
        let unqueued = |ns: u64| (ns as f64 - queued).max(0.0);
        let mpi = self.target.machine.as_ref().and_then(|m| m.mpi.as_ref());
        // Only what the latencies and the shares need of the event, read field by field: a
        // copy of the whole kind, just written by the decoding, stalled on its stores.
        let (received, sample) = match &record.event.kind {
            EventKind::Recv { bytes, .. } => (Some(*bytes), false),
            EventKind::Cpu { .. } => (None, true),
            _ => (None, false),
        };
        let latency = |how: Latency, ns: u64| match how {
            Latency::Arc { binding, message } => match (message, mpi, received) {
                (true, Some(mpi), Some(bytes)) => (mpi.ideal_message_ns(bytes) as f64).max(1.0),
                _ if binding => unqueued(ns),
                _ => ns.min(1) as f64,
            },
            Latency::Barrier => unqueued(ns),
            Latency::Fork => ns as f64,
        };
        lane.deps.clear();
        lane.met = 0;
        let n =
            Record::decode_deps(data, head, node, latency, &mut lane.deps).ok_or_else(damaged)?;
        lane.records.consume(n);
        if sample {
            lane.share = (1.0, 0.0);
            // A sample's share is known at the next sample (none after the last); only the
            // demand from CPU time uses it.
            if self.cpu {
                let pair = lane.shares.bytes(self.shares)?;
                if let Some(pair) = pair.get(..8) {
                    let f =
                        |k: usize| f32::from_le_bytes(pair[k..k + 4].try_into().unwrap_or([0; 4]));
                    lane.share = (f(0), f(4));
                    lane.shares.consume(8);
                }
            }
        }
        Ok(true)
    }

    /// The predicted time of node `node` of thread `from`, once it has happened.
    fn time(&self, from: ThreadId, node: u32) -> Result<Option<f64>> {
        if self.threads[from as usize].next <= u64::from(node) {
            return Ok(None);
        }
        Ok(Some(self.times.get(from as usize, u64::from(node))?))
    }

    /// Thread `i` has had its previous event (or the run begins) at `t`: its next step.
    fn begin(&mut self, i: usize, t: f64) -> Result<()> {
        if !self.read(i)? {
            // Its last event: a processor it still holds goes to the next (run to block).
            let p = self.of[i] as usize;
            if self.run_to_block.is_some() && self.processors[p].holder == Some(i as ThreadId) {
                self.advance(p, t);
                self.release(p, t)?;
            }
            return Ok(());
        }
        let lane = &self.lanes[i];
        let Some(current) = &lane.current else {
            return Ok(());
        };
        let released = current.released;
        let first = lane.previous.is_none();
        let (prev, computes, factor, share) = match lane.previous {
            None => (self.origin, false, 1.0, 1.0),
            Some((t, busy, factor, share, _)) => {
                let share = if self.cpu { f64::from(share) } else { 1.0 };
                (t, busy, factor, share)
            }
        };
        let measured = current.event.t.saturating_sub(prev) as f64;
        if computes && measured > 0.0 {
            // What it demands: its time, or the part of it its thread ran (Demand::Cpu).
            let measured = measured * share;
            let th = &mut self.threads[i];
            th.remaining = measured / factor;
            th.saved += measured - th.remaining;
            th.served += th.remaining;
            if self.alone {
                // Alone on its processor: done when its demand is, as `done` would find.
                th.until = t + th.remaining.max(0.0);
                return self.resolve(i);
            }
            if self.run_to_block.is_some() {
                return self.runnable(i, t);
            }
            let p = self.of[i] as usize;
            self.advance(p, t);
            self.processors[p].running.push(i as ThreadId);
            self.reschedule(p);
            Ok(())
        } else {
            // A wait that no dependency ended keeps its measured length: its partner is not
            // known, so neither is how its timing changed (with Demand::Cpu, the run-queue
            // delay around it may have accrued while it spun, and is not taken out).
            let hold = if computes || released { 0.0 } else { measured };
            // Spinning, a thread between two events keeps its processor too (a computation of
            // no length waiting for another thread's event would otherwise hold it idle, and
            // starve its queue).
            if self.spin && !first {
                return self.spin_wait(i, t, hold);
            }
            if self.run_to_block.is_some() && !computes {
                // It blocks (a computation of no length, two events at one time inside a
                // `work`, does not): the next runnable thread gets its processor.
                let p = self.of[i] as usize;
                if self.processors[p].holder == Some(i as ThreadId) {
                    self.advance(p, t);
                    self.release(p, t)?;
                }
            }
            self.threads[i].until = t + hold;
            self.resolve(i)
        }
    }

    /// Thread `i` waits for the dependencies of its next event: once all have happened, the
    /// event is due at the latest of them (plus latencies) and of its own hold.
    fn resolve(&mut self, i: usize) -> Result<()> {
        let mut until = self.threads[i].until;
        while let Some(&(from, node, latency)) = self.lanes[i].deps.get(self.lanes[i].met) {
            match self.time(from, node)? {
                Some(s) => until = until.max(s + latency),
                None => {
                    self.threads[i].until = until;
                    self.waiters[from as usize].push((node, i as ThreadId));
                    return Ok(());
                }
            }
            self.lanes[i].met += 1;
        }
        if self.rendezvous.is_some() && self.receives(i) {
            if self.owed[i] > 0 {
                // Its sends by rendezvous not yet taken: [`Sim::ran`] resolves it again.
                self.threads[i].until = until;
                self.parked[i] = true;
                return Ok(());
            }
            until = until.max(self.taken[i]);
        }
        self.threads[i].until = until;
        if self.alone {
            self.ready.push(i as ThreadId);
        } else if !self.spinning[i] {
            self.pending.set(i as u32, until);
        } else {
            let proc = &self.processors[self.of[i] as usize];
            // A spinning thread sees its wait end only on its processor, after the switch to
            // it; queued, once it gets one ([`Sim::release`]).
            if proc.holder == Some(i as ThreadId) {
                self.pending.set(i as u32, until.max(proc.from));
            }
        }
        Ok(())
    }

    /// Thread `i`'s next event happens at `t`.
    fn event(&mut self, i: usize, t: f64) -> Result<()> {
        if self.spinning[i] {
            // Its wait ends on the processor it holds, which it keeps, between two steps.
            self.spinning[i] = false;
            let p = self.of[i] as usize;
            self.advance(p, t);
            self.processors[p].busy = false;
            self.reschedule(p);
        }
        let k = self.threads[i].next;
        self.times.push(i, t);
        self.latest = self.latest.max(t);
        let rounded = self.origin.saturating_add(nearest(t));
        self.last = self.last.max(rounded);
        if let Some(r) = &self.lanes[i].current {
            let kind = r.event.kind;
            if let (
                Some(least),
                EventKind::Send {
                    peer,
                    bytes,
                    comm: None,
                    ..
                },
            ) = (self.rendezvous, kind)
                && bytes >= least
            {
                self.sent(i, peer, t);
            }
            if matches!(kind, EventKind::Start) {
                self.first_start = Some(self.first_start.map_or(rounded, |f| f.min(rounded)));
            }
            self.output(i, rounded, kind);
            if let Some(e) = self.encoder.failure() {
                bail!("{e}");
            }
        }
        self.threads[i].next += 1;
        if !self.waiters[i].is_empty() {
            let mut woken = std::mem::take(&mut self.woken);
            woken.clear();
            self.waiters[i].retain(|&(node, w)| {
                let due = u64::from(node) <= k;
                if due {
                    woken.push(w);
                }
                !due
            });
            for &w in &woken {
                self.resolve(w as usize)?;
            }
            self.woken = woken;
        }
        self.begin(i, t)
    }

    /// Thread `i`'s event of `kind` at `t` (its predicted time, rounded) into the predicted log: a `cpu`
    /// sample rewritten, the CPU clock less the demand the speed factors took away, the
    /// run-queue delay plus the time the thread was runnable without a processor (without the
    /// measured delay when the demand is the CPU time: the sharing it came from is gone). A
    /// thread without samples gets one at its `start` and one at its `stop` where a processor
    /// is shared, so that the profile of the predicted log shows the sharing as `rc.cpu`.
    fn output(&mut self, i: usize, t: u64, kind: EventKind) {
        let th = &self.threads[i];
        let sample = Sample {
            delay: th.delay,
            served: th.served,
            saved: th.saved,
        };
        let lane = &mut self.lanes[i];
        match kind {
            EventKind::Cpu {
                thread_cpu_ns,
                run_delay_ns,
            } => {
                // The predicted clock does not go back where the measured one did not (the
                // speed factors' savings can outgrow a stretch's CPU time), and goes back
                // where it did (rule 16 of docs/event-log.md: the attribution ignores such a
                // sample, in the predicted log as in the measured one).
                let cpu = nearest(thread_cpu_ns as f64 - sample.saved);
                let cpu = match lane.clock {
                    Some((measured, predicted)) if thread_cpu_ns < measured => {
                        cpu.min(predicted.saturating_sub(1))
                    }
                    Some((_, predicted)) => {
                        let cpu = cpu.max(predicted);
                        lane.clock = Some((thread_cpu_ns, cpu));
                        cpu
                    }
                    None => {
                        lane.clock = Some((thread_cpu_ns, cpu));
                        cpu
                    }
                };
                let delay = nearest(sample.delay);
                let kind = EventKind::Cpu {
                    thread_cpu_ns: cpu,
                    run_delay_ns: match run_delay_ns {
                        Some(_) if self.cpu => Some(delay),
                        Some(d) => Some(d.saturating_add(delay)),
                        None if delay > 0 => Some(delay),
                        None => None,
                    },
                };
                self.encoder.push(i, t, &kind);
            }
            EventKind::Start | EventKind::Stop if !self.alone => {
                let sampled = self.sampled;
                let added = *lane.added.get_or_insert_with(|| !sampled.has(i));
                let cpu = added.then_some(EventKind::Cpu {
                    thread_cpu_ns: nearest(sample.served),
                    run_delay_ns: Some(nearest(sample.delay)),
                });
                let start = matches!(kind, EventKind::Start);
                if start {
                    self.encoder.push(i, t, &kind);
                }
                if let Some(cpu) = cpu {
                    self.encoder.push(i, t, &cpu);
                }
                if !start {
                    self.encoder.push(i, t, &kind);
                }
            }
            _ => self.encoder.push(i, t, &kind),
        }
    }

    /// Processor `p`'s members have progressed up to `t`.
    fn advance(&mut self, p: usize, t: f64) {
        if self.run_to_block.is_some() {
            return self.advance_one(p, t);
        }
        let proc = &mut self.processors[p];
        let k = proc.running.len() as f64;
        let dt = t - proc.last;
        if k > 0.0 && dt > 0.0 {
            for &r in &proc.running {
                let th = &mut self.threads[r as usize];
                th.remaining -= dt / k;
                th.delay += dt - dt / k;
            }
        }
        proc.last = proc.last.max(t);
    }

    fn reschedule(&mut self, p: usize) {
        if self.run_to_block.is_some() {
            return self.reschedule_one(p);
        }
        let proc = &mut self.processors[p];
        let k = proc.running.len() as f64;
        let least = proc
            .running
            .iter()
            .map(|&r| self.threads[r as usize].remaining)
            .min_by(f64::total_cmp);
        // Its completion moves (or goes, with no member left).
        let slot = (self.threads.len() + p) as u32;
        match least {
            Some(least) => self.pending.set(slot, proc.last + least.max(0.0) * k),
            None => self.pending.remove(slot),
        }
    }

    /// Processor `p`'s earliest computation ends at `t`.
    fn done(&mut self, p: usize, t: f64) -> Result<()> {
        if self.run_to_block.is_some() {
            return self.done_one(p, t);
        }
        self.advance(p, t);
        let mut finished = std::mem::take(&mut self.woken);
        finished.clear();
        let threads = &self.threads;
        // Far from the origin a double's step exceeds EPSILON: what is left below a few of
        // its steps (times the sharers) is done too, or the replay would never end.
        let k = self.processors[p].running.len() as f64;
        let tolerance = EPSILON.max(4.0 * k * t.abs() * f64::EPSILON);
        self.processors[p].running.retain(|&r| {
            let done = threads[r as usize].remaining <= tolerance;
            if done {
                finished.push(r);
            }
            !done
        });
        self.reschedule(p);
        for &r in &finished {
            self.threads[r as usize].until = t;
            self.resolve(r as usize)?;
        }
        self.woken = finished;
        Ok(())
    }
}

/// Run to block: the fewest rounds of slices [`Sim::skip_rounds`] skips at once.
const SKIPPED_ROUNDS: f64 = 64.0;

/// Run to block: the least demand left among a processor's holder `h` and its queued threads.
fn least_left(threads: &[Thread], proc: &Processor, h: ThreadId) -> f64 {
    proc.queue
        .iter()
        .chain([&h])
        .map(|&i| threads[i as usize].remaining)
        .fold(f64::INFINITY, f64::min)
}

/// Run to block (docs/whatif.md#the-sharing-rule): a processor runs one thread at a time.
impl Sim<'_> {
    /// Thread `i`, whose demand is set, computes from `t`: on the processor it holds (no
    /// switch), else on its own processor if idle, else on an idle one of the shared
    /// processors, else it queues on its own (the one it last ran on); a shared processor
    /// spends the switch before it runs.
    fn runnable(&mut self, i: usize, t: f64) -> Result<()> {
        let own = self.of[i] as usize;
        let me = i as ThreadId;
        if self.processors[own].holder == Some(me) {
            self.advance(own, t);
            let proc = &mut self.processors[own];
            proc.busy = true;
            proc.from = proc.from.max(t);
            self.reschedule(own);
            return Ok(());
        }
        let idle = |p: usize, procs: &[Processor]| procs[p].holder.is_none();
        let shared = self.pool.binary_search(&(own as u32)).is_ok();
        let target = if idle(own, &self.processors) {
            Some(own)
        } else if shared {
            self.pool
                .iter()
                .map(|&k| k as usize)
                .find(|&k| idle(k, &self.processors))
        } else {
            None
        };
        match target {
            Some(k) => {
                self.of[i] = k as u32;
                self.advance(k, t);
                let slice = self.slice();
                // A shared processor switches to it even from idle: past the cores the cores
                // are seldom idle (docs/whatif.md#the-sharing-rule).
                let wake = match self.run_to_block {
                    Some((_, _, wake))
                        if self.pool.binary_search(&(k as u32)).is_ok()
                            && self.processors[k].ran != Some(me) =>
                    {
                        wake
                    }
                    _ => 0.0,
                };
                let proc = &mut self.processors[k];
                proc.holder = Some(me);
                proc.ran = Some(me);
                proc.busy = true;
                proc.from = t + wake;
                proc.slice_end = t + wake + slice;
                self.reschedule(k);
                self.ran(i, t + wake)
            }
            None => {
                self.advance(own, t);
                self.processors[own].queue.push_back(me);
                // Its slice now counts: a thread waits.
                self.reschedule(own);
                Ok(())
            }
        }
    }

    fn slice(&self) -> f64 {
        self.run_to_block
            .map_or(f64::INFINITY, |(slice, _, _)| slice)
    }

    /// Processor `p`'s holder stops holding it at `t` (it blocks, or its slice ended and it
    /// queued again): the first queued thread gets it after a switch.
    fn release(&mut self, p: usize, t: f64) -> Result<()> {
        let switch = self.run_to_block.map_or(0.0, |(_, switch, _)| switch);
        let slice = self.slice();
        let proc = &mut self.processors[p];
        proc.holder = proc.queue.pop_front();
        proc.busy = proc.holder.is_some();
        if proc.holder.is_some() {
            proc.ran = proc.holder;
        }
        proc.from = t + switch;
        proc.slice_end = proc.from + slice;
        let from = proc.from;
        if let Some(h) = proc.holder {
            self.of[h as usize] = p as u32;
            self.spin_on(h as usize);
            self.ran(h as usize, from)?;
        }
        self.reschedule(p);
        Ok(())
    }

    /// Whether thread `i`'s next event is a receive.
    fn receives(&self, i: usize) -> bool {
        matches!(
            self.lanes[i].current.as_ref().map(|r| &r.event.kind),
            Some(EventKind::Recv { .. })
        )
    }

    /// Thread `i` sends `peer` a message by rendezvous at `t`: taken at once if `peer` holds
    /// its processor, else once it does.
    fn sent(&mut self, i: usize, peer: ThreadId, t: f64) {
        let Some(holder) = self
            .of
            .get(peer as usize)
            .map(|&q| self.processors[q as usize].holder)
        else {
            return;
        };
        if peer as usize == i || holder == Some(peer) {
            self.taken[i] = self.taken[i].max(t);
        } else {
            self.owed[i] += 1;
            self.owing[peer as usize].push(i as ThreadId);
        }
    }

    /// Thread `r` holds a processor from `from`: it takes the messages sent it by rendezvous,
    /// and a sender whose receive waited only for that goes on.
    fn ran(&mut self, r: usize, from: f64) -> Result<()> {
        if self.owing[r].is_empty() {
            return Ok(());
        }
        let senders = std::mem::take(&mut self.owing[r]);
        for &s in &senders {
            let s = s as usize;
            self.owed[s] -= 1;
            self.taken[s] = self.taken[s].max(from);
            if self.owed[s] == 0 && self.parked[s] {
                self.parked[s] = false;
                self.resolve(s)?;
            }
        }
        Ok(())
    }

    /// Thread `i`, spinning, has got its processor: its event happens once its wait has
    /// ended, from the switch to it on.
    fn spin_on(&mut self, i: usize) {
        if self.spinning[i] && self.lanes[i].met >= self.lanes[i].deps.len() && !self.parked[i] {
            let from = self.processors[self.of[i] as usize].from;
            self.pending.set(i as u32, self.threads[i].until.max(from));
        }
    }

    /// Thread `i` waits from `t` for its next event, held at least `hold`, spinning: on the
    /// processor it holds, else on one it becomes runnable for as a computation would.
    fn spin_wait(&mut self, i: usize, t: f64, hold: f64) -> Result<()> {
        self.spin(i, t)?;
        self.threads[i].until = t + hold;
        self.resolve(i)
    }

    /// Thread `i` spins from `t`: a computation without end, on the processor it holds or
    /// the one it becomes runnable for ([`Sim::runnable`]), until its next event.
    fn spin(&mut self, i: usize, t: f64) -> Result<()> {
        self.spinning[i] = true;
        self.threads[i].remaining = f64::INFINITY;
        self.runnable(i, t)
    }

    /// Processor `p`'s holder has progressed up to `t` (not before the switch to it), and its
    /// queued threads waited.
    fn advance_one(&mut self, p: usize, t: f64) {
        let proc = &mut self.processors[p];
        let dt = t - proc.last;
        if dt > 0.0 {
            if let (Some(h), true) = (proc.holder, proc.busy) {
                let ran = (t - proc.last.max(proc.from)).max(0.0);
                let th = &mut self.threads[h as usize];
                th.remaining -= ran;
                th.delay += dt - ran;
            }
            for &q in &proc.queue {
                self.threads[q as usize].delay += dt;
            }
        }
        proc.last = proc.last.max(t);
    }

    /// Processor `p`'s next completion: its holder's demand done, or its slice's end while
    /// others queue.
    fn reschedule_one(&mut self, p: usize) {
        let slot = (self.threads.len() + p) as u32;
        let proc = &self.processors[p];
        match (proc.holder, proc.busy) {
            (Some(h), true) => {
                let begin = proc.last.max(proc.from);
                let mut end = begin + self.threads[h as usize].remaining.max(0.0);
                if !proc.queue.is_empty() {
                    end = end.min(proc.slice_end.max(begin));
                }
                // A thread spinning alone on its processor: no end until its wait's.
                if end.is_finite() {
                    self.pending.set(slot, end);
                } else {
                    self.pending.remove(slot);
                }
            }
            _ => self.pending.remove(slot),
        }
    }

    /// Processor `p`'s holder's slice has ended at `t` while others queue: whole rounds of
    /// slices, each thread of the processor one slice after a switch, skipped at once where at
    /// least [`SKIPPED_ROUNDS`] would pass with every slice full and no event that could touch
    /// it (one step a slice, a computation a speed factor made 10^9 times longer took minutes
    /// of replay).
    /// A thread spinning whose wait has not ended spins a whole slice a round, as though it
    /// computed: its wait ends only at another thread's event, before which no round is skipped.
    /// Returns the time after them: the same state, each thread that much further on; `None`
    /// when every thread of the processor spins and nothing anywhere can end a wait (a
    /// dependency never met).
    fn skip_rounds(&mut self, p: usize, t: f64) -> Option<f64> {
        let (Some((slice, switch, _)), Some(h)) = (self.run_to_block, self.processors[p].holder)
        else {
            return Some(t);
        };
        let proc = &self.processors[p];
        // A spinning thread whose wait has ended runs its event at its next turn, and a turn
        // takes the messages sent a thread by rendezvous, which may end another's wait.
        // A spinning thread whose dependencies are met but whose wait holds on (a measured
        // stretch with no partner) spins until then: rounds are skipped up to it.
        let met = |i: usize| {
            self.spinning[i] && self.lanes[i].met >= self.lanes[i].deps.len() && !self.parked[i]
        };
        let ended = |i: ThreadId| {
            let i = i as usize;
            (met(i) && self.threads[i].until <= t) || !self.owing[i].is_empty()
        };
        if proc.queue.iter().chain([&h]).any(|&i| ended(i)) {
            return Some(t);
        }
        let k = proc.queue.len() + 1;
        let least = least_left(&self.threads, proc, h);
        // Each slice full: every thread still has more than a slice left after the rounds.
        let round = k as f64 * (switch + slice);
        let mut rounds = (least / slice).floor() - 2.0;
        if rounds < SKIPPED_ROUNDS {
            return Some(t);
        }
        // Nothing else happens meanwhile, nor in the round after: no thread's event, and no
        // computation ending on another processor. Their own rounds of slices do not touch this
        // one, and a thread there needs at least its remaining demand of running time.
        let n = self.threads.len();
        let mut next = (0..n)
            .filter_map(|i| self.pending.time_of(i as u32))
            .chain(
                (0..n)
                    .filter(|&i| met(i) && self.threads[i].until > t)
                    .map(|i| self.threads[i].until),
            )
            .fold(f64::INFINITY, f64::min);
        for (q, other) in self.processors.iter().enumerate() {
            let end = match (other.holder, other.busy) {
                _ if q == p => continue,
                // Its next turn may run a spinning thread's event.
                (Some(h), _) if other.queue.iter().chain([&h]).any(|&i| ended(i)) => self
                    .pending
                    .time_of((n + q) as u32)
                    .unwrap_or(f64::INFINITY),
                (Some(h), true) => {
                    other.last.max(other.from) + least_left(&self.threads, other, h).max(0.0)
                }
                _ => self
                    .pending
                    .time_of((n + q) as u32)
                    .unwrap_or(f64::INFINITY),
            };
            next = next.min(end);
        }
        if least.is_infinite() && next.is_infinite() {
            return None;
        }
        rounds = rounds.min(((next - t) / round).floor() - 1.0);
        if rounds < SKIPPED_ROUNDS {
            return Some(t);
        }
        let (span, ran) = (rounds * round, rounds * slice);
        let proc = &mut self.processors[p];
        for &i in proc.queue.iter().chain([&h]) {
            let th = &mut self.threads[i as usize];
            th.remaining -= ran;
            th.delay += span - ran;
        }
        let now = t + span;
        proc.last = now;
        proc.from = now - slice;
        proc.slice_end = now;
        Some(now)
    }

    /// Processor `p`'s holder's computation ends, or its slice, at `t`.
    fn done_one(&mut self, p: usize, t: f64) -> Result<()> {
        self.advance(p, t);
        let Some(h) = self.processors[p].holder else {
            return Ok(());
        };
        let tolerance = EPSILON.max(4.0 * t.abs() * f64::EPSILON);
        if self.threads[h as usize].remaining > tolerance {
            // Its slice ended: to the back of the queue.
            if !self.processors[p].queue.is_empty() && t >= self.processors[p].slice_end {
                let Some(t) = self.skip_rounds(p, t) else {
                    // Its threads spin for ever: the replay stops, its dependencies unmet.
                    self.pending.remove((self.threads.len() + p) as u32);
                    return Ok(());
                };
                if self.spinning[h as usize] {
                    // Queued, its wait's end waits for its next turn.
                    self.pending.remove(h);
                }
                self.processors[p].queue.push_back(h);
                self.release(p, t)?;
            } else {
                self.reschedule(p);
            }
            return Ok(());
        }
        // It keeps the processor until its next event: computing again at once, it goes on.
        self.processors[p].busy = false;
        self.reschedule(p);
        let h = h as usize;
        self.threads[h].until = t;
        self.resolve(h)?;
        let due = self.lanes[h].met >= self.lanes[h].deps.len()
            && !self.parked[h]
            && self.threads[h].until <= t;
        if !due && self.processors[p].holder == Some(h as ThreadId) {
            if self.spin {
                // Its event waits for another thread: it spins.
                self.spin(h, t)?;
            } else {
                // Its event waits for another thread: it blocks.
                self.release(p, t)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::nearest;
    use proptest::prelude::*;

    #[test]
    fn nearest_rounds_as_round_does_at_the_edges() {
        for t in [
            0.0,
            0.5,
            1.5,
            2.5,
            0.499_999_999_999_999_94,
            -0.5,
            -3.7,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            (1u64 << 53) as f64 - 0.5,
            18_446_744_073_709_549_568.0,
            18_446_744_073_709_551_616.0,
            1e300,
        ] {
            assert_eq!(nearest(t), t.round() as u64, "{t}");
        }
    }

    proptest! {
        #[test]
        fn nearest_is_round(bits in any::<u64>(), t in 0.0..1e12f64) {
            let any = f64::from_bits(bits);
            prop_assert_eq!(nearest(any), any.round() as u64);
            prop_assert_eq!(nearest(t), t.round() as u64);
        }
    }
}
