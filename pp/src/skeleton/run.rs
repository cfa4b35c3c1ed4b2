//! Executing a threaded skeleton (docs/skeletons.md#pp-skeleton-run): one `std::thread` per
//! thread of the skeleton, recorded through the Rust recorder into its own log (`pp skeleton
//! run`'s `--log`, else `$PP_LOG`, else `./pp.log`) so that `pp` profiles it as it profiles its application. Computation spins on the
//! thread's CPU clock (never sleeps); barriers are real barriers of the threads that use them,
//! locks real locks (held through the next step's computation), copies real copies of the
//! step's bytes. A `Team`'s skeleton runs its regions on a recorder `Team` ([`super::team`]);
//! any other forks and joins its regions with a counting gate ([`super::gate`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use pp_recorder::event::WaitKind;
use std::sync::PoisonError;

use pp_recorder::{self as recorder, Session, thread_cpu_ns};

use super::gate::{Gate, Point};
use super::lock::{Lock, Order};
use super::partner::{Outcome, Partners};
use super::spinning::{Barrier, Budget, Waits};
use super::{Item, Programs, SkelStep, Skeleton};
use crate::signature::Op;

/// What a skeleton's run wrote.
#[derive(Debug)]
pub struct RunReport {
    /// The log.
    pub log: PathBuf,
    /// Events written.
    pub events: u64,
    /// Regions run without their fork and join, and why.
    pub warnings: Vec<String>,
}

/// The synchronization objects the threads share, by the application's object names.
pub struct Objects {
    barriers: BTreeMap<Option<String>, Barrier>,
    locks: BTreeMap<Option<String>, Lock>,
    /// Per region name, its fork and join (not recorded: the application's threads wait for
    /// them outside any recorded wait) and its participants' threads.
    regions: BTreeMap<String, (Gate, Vec<u32>)>,
    /// The waits' partners (docs/skeletons.md#partners).
    pub partners: Partners,
    /// Object names as the recorder keeps them, made once each.
    names: std::sync::Mutex<HashMap<String, &'static str>>,
}

impl Objects {
    /// `object` as a name the recorder can keep (leaked once per distinct name).
    fn name(&self, object: &Option<String>) -> Option<&'static str> {
        let o = object.as_ref()?;
        let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        Some(*names.entry(o.clone()).or_insert_with(|| leak(o)))
    }
}

/// The region name a step opens (as the opener or as a member), if it opens one.
fn opens(st: &SkelStep) -> Option<&str> {
    match &st.op {
        Op::RegionBegin { name } | Op::PartBegin { name } => Some(name),
        _ => None,
    }
}

/// Per region name, how many times each thread that takes part enters it (as its opener or as
/// a member).
fn region_counts(s: &dyn Programs) -> BTreeMap<String, BTreeMap<u32, u64>> {
    let mut counts: BTreeMap<String, BTreeMap<u32, u64>> = BTreeMap::new();
    for (i, t) in s.threads().into_iter().enumerate() {
        s.each(i, &mut |it| {
            it.each_step(&mut |st, times| {
                if let Some(n) = opens(st) {
                    *counts
                        .entry(n.to_string())
                        .or_default()
                        .entry(t)
                        .or_default() += times;
                }
            });
        });
    }
    counts
}

/// Whether a region's threads enter it different numbers of times.
fn uneven(counts: &BTreeMap<u32, u64>) -> bool {
    counts.values().collect::<BTreeSet<_>>().len() > 1
}

/// `thread T: N, ...`.
fn listed(counts: &BTreeMap<u32, u64>) -> String {
    let c: Vec<String> = counts
        .iter()
        .map(|(t, v)| format!("thread {t}: {v}"))
        .collect();
    c.join(", ")
}

/// Per region name with more than one thread in it, those threads; a warning for each whose
/// threads enter it different numbers of times (their i-th parts are paired, and the extra ones
/// run alone).
fn region_plan(s: &Skeleton) -> (BTreeMap<String, Vec<u32>>, Vec<String>) {
    let mut plan = BTreeMap::new();
    let mut warnings = Vec::new();
    for (n, counts) in region_counts(s) {
        if counts.len() < 2 {
            continue;
        }
        if uneven(&counts) {
            warnings.push(format!(
                "region {n}: its threads enter it different numbers of times ({}): their i-th parts are paired, the extra ones run alone",
                listed(&counts)
            ));
        }
        plan.insert(n, counts.into_keys().collect());
    }
    (plan, warnings)
}

/// A name the recorder can keep: the recorder takes `&'static str` names, and a skeleton has few.
pub fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

fn leak_opt(s: &Option<String>) -> Option<&'static str> {
    s.as_deref().map(leak)
}

/// The regions whose threads enter them different numbers of times in `s` (as their opener
/// or as members), each with its threads' counts: their parts no longer pair up with the
/// regions they belonged to (docs/skeletons.md#pp-skeleton-run).
pub fn uneven_regions(s: &dyn Programs) -> Vec<String> {
    region_counts(s)
        .into_iter()
        .filter(|(_, c)| uneven(c))
        .map(|(n, c)| format!("{n} ({})", listed(&c)))
        .collect()
}

/// Checks that `s` can run here: no message operations (an MPI skeleton), and every barrier
/// reached the same number of times by each thread that uses it.
pub fn check(s: &dyn Programs) -> Result<()> {
    let mpi = |st: &SkelStep| matches!(st.op, Op::Send { .. } | Op::Recv { .. } | Op::Coll { .. });
    let threads = s.threads();
    // Per thread, how many times it reaches each barrier.
    let mut reached: Vec<BTreeMap<Option<String>, u64>> = Vec::with_capacity(threads.len());
    for i in 0..threads.len() {
        let mut any_mpi = false;
        let mut mine: BTreeMap<Option<String>, u64> = BTreeMap::new();
        s.each(i, &mut |it| {
            any_mpi = any_mpi || it.count(&mpi) > 0;
            let mut objects = BTreeSet::new();
            collect_barriers(it, &mut objects);
            for o in objects {
                *mine.entry(o.clone()).or_default() += it.count(&|st| is_barrier(st, &o));
            }
        });
        if any_mpi {
            bail!(
                "the skeleton has message operations (send, recv, coll): it is an MPI skeleton, which runs as MPI ranks (skeleton::mpi::run; docs/skeletons.md#mpi-skeletons)"
            );
        }
        reached.push(mine);
    }
    let objects: BTreeSet<&Option<String>> = reached.iter().flat_map(|m| m.keys()).collect();
    for o in objects {
        let counts: Vec<(u32, u64)> = threads
            .iter()
            .zip(&reached)
            .map(|(&t, m)| (t, m.get(o).copied().unwrap_or(0)))
            .filter(|&(_, c)| c > 0)
            .collect();
        if counts.windows(2).any(|w| w[0].1 != w[1].1) {
            bail!(
                "barrier {}: its threads reach it different numbers of times ({}), so the skeleton would deadlock",
                o.as_deref().unwrap_or("(unnamed)"),
                counts
                    .iter()
                    .map(|(t, c)| format!("thread {t}: {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(())
}

fn is_barrier(st: &SkelStep, o: &Option<String>) -> bool {
    matches!(&st.op, Op::Wait { kind, object, .. } if kind == "barrier" && object == o)
}

fn collect_barriers(i: &Item, out: &mut BTreeSet<Option<String>>) {
    match i {
        Item::Step(SkelStep {
            op: Op::Wait { kind, object, .. },
            ..
        }) if kind == "barrier" => {
            out.insert(object.clone());
        }
        Item::Step(_) => {}
        Item::Loop { body, .. } => body.iter().for_each(|b| collect_barriers(b, out)),
    }
}

fn collect_locks(i: &Item, out: &mut BTreeSet<Option<String>>) {
    match i {
        Item::Step(SkelStep {
            op: Op::Wait { kind, object, .. },
            ..
        }) if kind == "lock" => {
            out.insert(object.clone());
        }
        Item::Step(_) => {}
        Item::Loop { body, .. } => body.iter().for_each(|b| collect_locks(b, out)),
    }
}

/// Runs `s`, recording its log into `log` through a recorder session of `s.p` threads.
pub fn run(s: &Skeleton, log: &Path) -> Result<RunReport> {
    check(s)?;
    let (regions, region_warnings) = region_plan(s);
    let (partners, mut warnings) = Partners::plan(s);
    let waits = Waits::of(s.p, s.omp_blocktime_ms);
    // libomp's locks are queues; the Rust recorder's `Mutex` is std's (skeleton/lock.rs).
    let order = match waits {
        Waits::Libomp { .. } => Order::Queue,
        Waits::Measured => Order::Barging,
    };
    let mut barriers = BTreeSet::new();
    let mut locks = BTreeSet::new();
    for t in &s.threads {
        for i in &t.items {
            collect_barriers(i, &mut barriers);
            collect_locks(i, &mut locks);
        }
    }
    let objects = Objects {
        barriers: barriers
            .into_iter()
            .map(|o| {
                let n = s
                    .threads
                    .iter()
                    .filter(|t| {
                        t.items
                            .iter()
                            .any(|i| i.count(&|st| is_barrier(st, &o)) > 0)
                    })
                    .count();
                let b = Barrier::new(leak_opt(&o), n);
                (o, b)
            })
            .collect(),
        locks: locks
            .into_iter()
            .map(|o| {
                let name = leak_opt(&o);
                (o, Lock::new(name, order))
            })
            .collect(),
        regions: regions
            .iter()
            .map(|(n, threads)| (n.clone(), (Gate::new(threads.len()), threads.clone())))
            .collect(),
        partners,
        names: Default::default(),
    };
    let k = s.k.to_string();
    let session = Session::builder(s.p)
        .param("skeleton", "1")
        .param("k", k)
        .path(log)
        .start()
        .context("cannot start the skeleton's recording session")?;
    let log = session.path().to_path_buf();
    // A Team's skeleton runs on a rayon pool, whose idle workers wait as rayon's do; libomp's
    // workers poll at the fork for the blocktime, as the gate's waits then do.
    let opener = super::team::opener(s).filter(|_| waits == Waits::Measured);
    if let Some(opener) = opener {
        super::team::run(s, opener, &objects).context("cannot run the skeleton's team")?;
        let report = session
            .finish()
            .context("cannot finish the skeleton's log")?;
        return Ok(RunReport {
            log,
            events: report.events,
            warnings,
        });
    }
    // The gate's pairing (the team runs its regions as the application did).
    warnings.extend(region_warnings);
    std::thread::scope(|scope| {
        for t in &s.threads {
            let objects = &objects;
            scope.spawn(move || {
                let _thread = recorder::thread(t.thread);
                let mut state = State::new(t.thread, objects, &t.items, waits);
                for i in &t.items {
                    state.item(i);
                }
                for (gate, threads) in objects.regions.values() {
                    if let Some(me) = threads.iter().position(|&u| u == t.thread) {
                        gate.finish(me);
                    }
                }
                objects.partners.finish(t.thread);
                state.release();
            });
        }
    });
    let report = session
        .finish()
        .context("cannot finish the skeleton's log")?;
    Ok(RunReport {
        log,
        events: report.events,
        warnings,
    })
}

fn max_bytes(items: &[Item]) -> u64 {
    items
        .iter()
        .map(|i| match i {
            Item::Step(s) if s.op == Op::Copy => s.bytes,
            Item::Step(_) => 0,
            Item::Loop { body, .. } => max_bytes(body),
        })
        .max()
        .unwrap_or(0)
}

/// How a thread waits at its regions' forks and joins, which its log does not record as waits
/// (docs/skeletons.md#spinning-waits): with libomp's waits as any of its waits; else as it
/// waited between its parts (the computation before each `part_begin` is its idle time), else
/// as it waited at its regions' joins (a `region_end`'s operation).
fn gate_budget(items: &[Item], waits: Waits) -> Budget {
    if waits != Waits::Measured {
        return waits.budget(0, 0);
    }
    let sums = |f: &dyn Fn(&SkelStep) -> Option<(u64, u64)>| {
        let (mut wall, mut cpu, mut n) = (0u128, 0u128, 0u128);
        for i in items {
            i.each_step(&mut |st, times| {
                if let Some((w, c)) = f(st) {
                    wall += u128::from(w) * u128::from(times);
                    cpu += u128::from(c) * u128::from(times);
                    n += u128::from(times);
                }
            });
        }
        (n > 0).then(|| ((wall / n) as u64, (cpu / n) as u64))
    };
    let idle = sums(&|st| matches!(st.op, Op::PartBegin { .. }).then_some((st.wall_ns, st.cpu_ns)));
    let join = || sums(&|st| (st.op == Op::RegionEnd).then_some((st.op_ns, st.op_cpu_ns)));
    match idle.or_else(join) {
        Some((wall, cpu)) => Budget::of(wall, cpu),
        None => Budget::ns(0),
    }
}

/// One thread's state while it runs its program.
pub struct State<'a> {
    thread: u32,
    objects: &'a Objects,
    /// The lock taken by the previous step, released after this step's computation.
    held: Option<&'a Lock>,
    /// The regions this thread opened and has not closed (with their names).
    regions: Vec<(Option<u64>, String)>,
    /// The parts of regions this thread is in.
    parts: Vec<String>,
    buffer: Vec<u8>,
    copy: Vec<u8>,
    /// How the thread's waits poll (docs/skeletons.md#spinning-waits).
    waits: Waits,
    /// How the thread waits at a region's fork and join.
    gate: Budget,
}

impl<'a> State<'a> {
    /// Thread `thread`'s state for running `items`.
    pub fn new(thread: u32, objects: &'a Objects, items: &[Item], waits: Waits) -> Self {
        State {
            thread,
            objects,
            held: None,
            regions: Vec::new(),
            parts: Vec::new(),
            buffer: vec![0u8; max_bytes(items) as usize],
            copy: vec![0u8; max_bytes(items) as usize],
            waits,
            gate: gate_budget(items, waits),
        }
    }

    /// Releases the lock held and ends the regions left open.
    pub fn release(&mut self) {
        if let Some(l) = self.held.take() {
            l.release();
        }
        while let Some((id, _)) = self.regions.pop() {
            if let Some(id) = id {
                recorder::region_end(id);
            }
        }
    }

    fn item(&mut self, i: &Item) {
        match i {
            Item::Step(s) => self.step(s),
            Item::Loop { count, body } => {
                for _ in 0..*count {
                    for b in body {
                        self.item(b);
                    }
                }
            }
        }
    }

    /// Spins for a step's computation, then releases the lock that the previous step took: a
    /// lock is held through the computation after its wait (docs/skeletons.md#pp-skeleton-run).
    /// Every step's computation goes through here, those that a `Team`'s skeleton runs without
    /// their operation too (a part's last, `team.rs`), or the lock would stay held past the
    /// part while its region waits for it.
    pub fn compute(&mut self, cpu_ns: u64) {
        spin(cpu_ns);
        if let Some(l) = self.held.take() {
            l.release();
        }
    }

    /// Spins for the step's computation, then does its operation.
    pub fn step(&mut self, s: &SkelStep) {
        self.compute(s.cpu_ns);
        match &s.op {
            Op::Wait { kind, object, .. } if kind == "barrier" => {
                self.objects.barriers[object].wait(self.waits.budget(s.op_ns, s.op_cpu_ns));
            }
            Op::Wait { kind, object, .. } if kind == "lock" => {
                let l = &self.objects.locks[object];
                l.acquire(self.waits.budget(s.op_ns, s.op_cpu_ns), self.thread);
                self.held = Some(l);
            }
            Op::Wait { kind, object, by } => {
                // A condition variable, a channel or anything else: ended by its partner's
                // release where it has one, else it lasts what the application's did (divided
                // by K).
                let wk = WaitKind::parse(kind).unwrap_or(WaitKind::Other);
                let began = Instant::now();
                let mut w = recorder::wait(wk, self.objects.name(object));
                let key = (kind.clone(), object.clone());
                let outcome = match by {
                    Some(p) => self.objects.partners.wait(self.thread, &key, *p),
                    None => Outcome::Unpaired,
                };
                match outcome {
                    Outcome::Signalled(p) => w.ended_by(Some(p)),
                    Outcome::Unpaired => std::thread::sleep(Duration::from_nanos(s.op_ns)),
                    Outcome::Gone => std::thread::sleep(
                        Duration::from_nanos(s.op_ns).saturating_sub(began.elapsed()),
                    ),
                }
            }
            Op::Release { kind, object } => {
                let wk = WaitKind::parse(kind).unwrap_or(WaitKind::Other);
                recorder::release(wk, self.objects.name(object));
                let key = (kind.clone(), object.clone());
                self.objects.partners.release(self.thread, &key);
            }
            Op::Copy => {
                // The copy keeps the processor as long as the application's did (a transpose
                // is slower than a memcpy of its bytes).
                let n = s.bytes as usize;
                let _c = recorder::comm(s.bytes);
                let began = thread_cpu_ns();
                self.copy[..n].copy_from_slice(&self.buffer[..n]);
                black_box(&mut self.copy);
                if let Some(c) = began {
                    let used = thread_cpu_ns().map_or(0, |now| now.saturating_sub(c));
                    burn(s.op_cpu_ns.saturating_sub(used));
                }
            }
            Op::RegionBegin { name } => {
                let id = recorder::region_begin(leak(name), None);
                self.regions.push((id, name.clone()));
                self.fork(name);
            }
            Op::RegionEnd => {
                if let Some((id, name)) = self.regions.pop() {
                    self.join(&name);
                    if let Some(id) = id {
                        recorder::region_end(id);
                    }
                }
            }
            Op::PartBegin { name } => {
                self.parts.push(name.clone());
                self.fork(name);
            }
            Op::PartEnd => {
                if let Some(name) = self.parts.pop() {
                    self.join(&name);
                }
            }
            Op::Stop => {}
            Op::Send { .. } | Op::Recv { .. } | Op::Coll { .. } => {
                unreachable!("check() refuses message operations")
            }
        }
    }
}

impl State<'_> {
    /// Waits for the region's fork, then samples the CPU clock as a `Team` member does where its
    /// part begins.
    fn fork(&self, name: &str) {
        if let Some((gate, threads)) = self.objects.regions.get(name) {
            gate.arrive(self.me(threads), Point::Fork, self.gate);
            recorder::cpu_sample();
        }
    }

    /// This thread's place among a region's participants.
    fn me(&self, threads: &[u32]) -> usize {
        threads
            .iter()
            .position(|&u| u == self.thread)
            .expect("a thread with a region step takes part in it")
    }

    /// Samples the CPU clock where the part ends, then waits for the region's join.
    fn join(&self, name: &str) {
        if let Some((gate, threads)) = self.objects.regions.get(name) {
            recorder::cpu_sample();
            gate.arrive(self.me(threads), Point::Join, self.gate);
        }
    }
}

/// Busy-waits until this thread has used `ns` more nanoseconds of CPU, recorded as work.
pub fn spin(ns: u64) {
    if ns == 0 {
        return;
    }
    let _w = recorder::work(None);
    burn(ns);
}

/// Busy-waits until this thread has used `ns` more nanoseconds of CPU, recording nothing.
fn burn(ns: u64) {
    if ns == 0 {
        return;
    }
    // Where the thread CPU clock cannot be read, the wall clock stands in for it.
    let wall = std::time::Instant::now();
    let now = || thread_cpu_ns().unwrap_or_else(|| wall.elapsed().as_nanos() as u64);
    let start = now();
    while now().saturating_sub(start) < ns {
        std::hint::spin_loop();
    }
}
