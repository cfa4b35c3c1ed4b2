//! The attribution alone: a realistic log (see `tests/log_support`) is decoded into memory
//! first, then the sweep runs over the events; prints ns per event and events/s (best of
//! rounds; wall time, and the thread's CPU time, which a busy machine does not inflate).
//! `PP_SWEEP_BENCH_EVENTS` (default 5·10⁶) sets the size.
//!
//! Then it counts the log's events by where a sweep split by thread would take them
//! ([`Meeting`], docs/event-log.md#reading-on-several-cores), and times a lower bound of the
//! combining pass on the events it would get; `PP_SWEEP_BENCH_LOG=FILE` does the same for `FILE`
//! too (a log of `pp run`, say).
//! Run: `cargo bench -p pp --bench sweep`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::hint::black_box;
use std::time::Instant;

use pp::event::{EventKind, Symbols, WaitKind};
use pp::log::{BinaryWriter, LogReader};
use pp::profile::{Meeting, Sweep};

use test_support::setting;

/// Nanoseconds this thread has run on a CPU (`/proc/thread-self/schedstat`, Linux).
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The least wall and the least CPU seconds of `rounds` runs of `f`.
fn best_of(rounds: usize, mut f: impl FnMut()) -> (f64, f64) {
    let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..rounds {
        let (start, cpu_start) = (Instant::now(), cpu_ns());
        f();
        wall = wall.min(start.elapsed().as_secs_f64());
        cpu = cpu.min((cpu_ns() - cpu_start) as f64 / 1e9);
    }
    (wall, cpu)
}

/// Region ids hashed with one multiplication, as the sweep does.
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

fn main() {
    let target: u64 = setting("PP_SWEEP_BENCH_EVENTS", 5_000_000);
    let threads = 8;
    let header = log_support::header(threads);
    let mut writer = BinaryWriter::new(Vec::new(), &header).expect("header");
    let mut symbols = Symbols::default();
    log_support::realistic(threads, target, 4096, 1, &mut symbols, |th, evs, s| {
        writer.write_block(th, evs, s).expect("write a block");
    });
    let bytes = writer.finish().expect("finish");
    let mut reader = LogReader::from_bytes("bench", bytes.clone()).expect("a log");
    let Classes {
        counts: generated,
        meeting,
        teams,
    } = classes(&mut reader);
    let reader = LogReader::from_bytes("bench", bytes).expect("a log");
    let symbols = reader.symbols().clone();
    let events: Vec<_> = reader.map(|e| e.expect("valid")).collect();

    let (best, cpu) = best_of(5, || {
        let mut sweep = Sweep::new(&header, None);
        for e in &events {
            sweep.event(e, &symbols);
        }
        black_box(sweep.finish(&symbols).expect("a window"));
    });
    println!(
        "sweep alone over {} events: best {:.3} s => {:.1} ns/event, {:.1} M events/s; CPU {:.3} s => {:.1} ns/event",
        events.len(),
        best,
        best * 1e9 / events.len() as f64,
        events.len() as f64 / best / 1e6,
        cpu,
        cpu * 1e9 / events.len() as f64,
    );
    print_classes("the bench's log", &generated);
    let mut handed = 0;
    let (best, cpu) = best_of(5, || {
        handed = black_box(combine(threads as usize, &meeting, &teams));
    });
    println!(
        "  the combining pass's floor over its {} events: best {:.3} s, CPU {:.3} s => {:.1} ns of CPU each, {:.1} ns per event of the log ({} situation changes handed to the threads)",
        meeting.len(),
        best,
        cpu,
        cpu * 1e9 / meeting.len() as f64,
        cpu * 1e9 / events.len() as f64,
        handed
    );
    if let Some(path) = std::env::var_os("PP_SWEEP_BENCH_LOG") {
        let path = std::path::PathBuf::from(path);
        let mut log = LogReader::open(&path).expect("PP_SWEEP_BENCH_LOG: a log");
        let header = log.header().clone();
        let found = classes(&mut log);
        let log = LogReader::open(&path).expect("PP_SWEEP_BENCH_LOG: a log");
        let symbols = log.symbols().clone();
        let events: Vec<_> = log.map(|e| e.expect("a readable log")).collect();
        // Each timing goes over 10⁷ events or more: the CPU clock of schedstat moves in ticks.
        let reps = (10_000_000 / events.len().max(1)).max(1);
        let (_, cpu) = best_of(5, || {
            for _ in 0..reps {
                let mut sweep = Sweep::new(&header, None);
                for e in &events {
                    sweep.event(e, &symbols);
                }
                black_box(sweep.finish(&symbols).ok());
            }
        });
        let per_event = |cpu: f64| cpu * 1e9 / (events.len() * reps) as f64;
        println!(
            "{}: the sweep alone, CPU {:.3} s for {reps} rounds => {:.1} ns/event",
            path.display(),
            cpu,
            per_event(cpu)
        );
        print_classes(&path.display().to_string(), &found.counts);
        let (_, cpu) = best_of(5, || {
            for _ in 0..reps {
                black_box(combine(header.p as usize, &found.meeting, &found.teams));
            }
        });
        println!(
            "  the combining pass's floor: CPU {:.3} s for {reps} rounds => {:.1} ns per event of the log",
            cpu,
            per_event(cpu)
        );
    }
}

/// A thread's state as far as its teammates see it: innermost work or comm (busy), live with
/// an open interval (active), innermost a barrier wait.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct Seen {
    busy: bool,
    active: bool,
    barrier: bool,
}

/// What the combining pass gets of an event that meets other threads.
#[derive(Clone, Copy)]
enum Meet {
    Start,
    Stop,
    /// `team`: an index into the members lists.
    RegionBegin {
        id: u64,
        team: u32,
    },
    RegionEnd {
        id: u64,
    },
    /// A begin or end changing what teammates see.
    Own(Seen),
    /// A send, recv, release or wait ended `by=`: filed or looked up.
    Partner,
}

/// Events per [`Meeting`] class of `log` (docs/event-log.md#reading-on-several-cores), and
/// the events the combining pass would get (each thread's nesting replayed for what its
/// teammates see after it) with the teams they name.
/// What [`classes`] finds: events per class; the combining pass's events, with its members lists.
struct Classes {
    counts: [u64; Meeting::ALL.len()],
    meeting: Vec<(u64, u32, Meet)>,
    teams: Vec<Vec<u32>>,
}

fn classes(log: &mut LogReader) -> Classes {
    let header = log.header().clone();
    let p = header.p as usize;
    let mut sweep = Sweep::new(&header, None);
    // Per thread: open intervals (busy, a barrier wait), live.
    let mut stacks: Vec<Vec<(bool, bool)>> = vec![Vec::new(); p];
    let mut live = vec![false; p];
    let mut teams: Vec<Vec<u32>> = Vec::new();
    let mut team_of = std::collections::HashMap::new();
    let mut meeting = Vec::new();
    let mut counts = [0u64; Meeting::ALL.len()];
    log.for_each_event(|e, symbols| {
        let class = sweep.meeting(e);
        sweep.event(e, symbols);
        counts[Meeting::ALL.iter().position(|&m| m == class).unwrap_or(0)] += 1;
        let i = e.thread as usize;
        if i >= p {
            return;
        }
        match e.kind {
            EventKind::Start | EventKind::Stop => live[i] = e.kind == EventKind::Start,
            EventKind::WorkBegin { .. } | EventKind::CommBegin { .. } => {
                stacks[i].push((true, false))
            }
            EventKind::WaitBegin { kind, .. } => stacks[i].push((false, kind == WaitKind::Barrier)),
            EventKind::WorkEnd { .. } | EventKind::CommEnd { .. } | EventKind::WaitEnd { .. } => {
                stacks[i].pop();
            }
            _ => {}
        }
        if !class.combined() {
            return;
        }
        let meet = match e.kind {
            EventKind::Start => Meet::Start,
            EventKind::Stop => Meet::Stop,
            EventKind::RegionBegin { id, team, .. } => {
                let team = *team_of.entry(team.map(|t| t.0)).or_insert_with(|| {
                    teams.push(match team.and_then(|t| symbols.get_team(t)) {
                        Some(team) => team.iter().copied().filter(|&m| (m as usize) < p).collect(),
                        None => (0..p as u32).collect(),
                    });
                    teams.len() as u32 - 1
                });
                Meet::RegionBegin { id, team }
            }
            EventKind::RegionEnd { id } => Meet::RegionEnd { id },
            _ if class == Meeting::Partner => Meet::Partner,
            _ => Meet::Own(Seen {
                busy: stacks[i].last().is_some_and(|o| o.0),
                active: live[i] && !stacks[i].is_empty(),
                barrier: stacks[i].last().is_some_and(|o| o.1),
            }),
        };
        meeting.push((e.t, e.thread, meet));
    })
    .expect("a readable log");
    Classes {
        counts,
        meeting,
        teams,
    }
}

/// A lower bound of the combining pass's cost: the events it gets, in time order, keeping the
/// teams' busy and active counts and barrier arrivals, and handing each member the changes of
/// its situation (team busy, everyone idle, barrier released, context, fork) in per-thread
/// queues emptied every 4,096 events (as batches handed over would be). The exact pass does
/// more (messages, releases, rules of the log broken), so it cannot be faster than this.
fn combine(p: usize, meeting: &[(u64, u32, Meet)], teams: &[Vec<u32>]) -> u64 {
    #[derive(Clone, Default)]
    struct Member {
        seen: Seen,
        live: bool,
        released: bool,
        regions: Vec<u32>,
    }
    struct Team {
        members: u32,
        busy: u32,
        active: u32,
        opens: u32,
    }
    const TEAM_BUSY: u8 = 0;
    const ALL_IDLE: u8 = 1;
    const RELEASED: u8 = 2;
    const CONTEXT: u8 = 3;
    const FORK: u8 = 4;
    let mut threads = vec![Member::default(); p];
    let mut regions: Vec<Team> = Vec::new();
    let mut slots: std::collections::HashMap<u64, u32, std::hash::BuildHasherDefault<IdHasher>> =
        Default::default();
    // The region last looked up, as the sweep keeps it (members record their parts in turn).
    let mut recent: Option<(u64, u32)> = None;
    let mut free: Vec<u32> = Vec::new();
    let mut out: Vec<Vec<(u64, u8)>> = vec![Vec::new(); p];
    let mut handed = 0u64;
    let all: Vec<u32> = (0..p as u32).collect();
    for (n, &(t, thread, meet)) in meeting.iter().enumerate() {
        let i = thread as usize;
        if n % 4096 == 0 {
            for q in &mut out {
                handed += q.len() as u64;
                q.clear();
            }
        }
        let mut now = threads[i].seen;
        match meet {
            Meet::Partner => continue,
            Meet::Own(seen) => now = seen,
            Meet::Start => threads[i].live = true,
            Meet::Stop => {
                threads[i].live = false;
                now = Seen::default();
            }
            Meet::RegionBegin { id, team } => {
                let found = match recent {
                    Some((r, slot)) if r == id => Some(slot),
                    _ => slots.get(&id).copied(),
                };
                if let Some(slot) = found {
                    recent = Some((id, slot));
                    regions[slot as usize].opens += 1;
                    continue;
                }
                let slot = free.pop().unwrap_or_else(|| {
                    regions.push(Team {
                        members: 0,
                        busy: 0,
                        active: 0,
                        opens: 0,
                    });
                    regions.len() as u32 - 1
                });
                let members = &teams[team as usize];
                let (mut busy, mut active) = (0, 0);
                for &m in members {
                    let th = &mut threads[m as usize];
                    busy += th.seen.busy as u32;
                    active += th.seen.active as u32;
                    th.regions.push(slot);
                    out[m as usize].push((t, CONTEXT));
                    if m != thread {
                        out[m as usize].push((t, FORK));
                    }
                }
                regions[slot as usize] = Team {
                    members: team,
                    busy,
                    active,
                    opens: 1,
                };
                slots.insert(id, slot);
                recent = Some((id, slot));
                continue;
            }
            Meet::RegionEnd { id } => {
                let found = match recent {
                    Some((r, slot)) if r == id => Some(slot),
                    _ => slots.get(&id).copied(),
                };
                let Some(slot) = found else {
                    continue;
                };
                recent = Some((id, slot));
                let region = &mut regions[slot as usize];
                region.opens -= 1;
                if region.opens == 0 {
                    slots.remove(&id);
                    recent = None;
                    free.push(slot);
                    for &m in &teams[region.members as usize] {
                        threads[m as usize].regions.retain(|&r| r != slot);
                        out[m as usize].push((t, CONTEXT));
                    }
                }
                continue;
            }
        }
        let was = threads[i].seen;
        threads[i].seen = now;
        let th = &threads[i];
        for k in 0..th.regions.len() {
            let slot = threads[i].regions[k] as usize;
            let region = &mut regions[slot];
            let (busy, active) = (region.busy, region.active);
            region.busy = busy + now.busy as u32 - was.busy as u32;
            region.active = active + now.active as u32 - was.active as u32;
            let flips = (busy > 0) != (region.busy > 0) || (busy > 1) != (region.busy > 1);
            let finished = (active == 0) != (region.active == 0);
            if flips || finished {
                for &m in &teams[region.members as usize] {
                    if m != thread {
                        out[m as usize].push((t, if flips { TEAM_BUSY } else { ALL_IDLE }));
                    }
                }
            }
        }
        if now.barrier && !was.barrier {
            let members = match threads[i].regions.last() {
                Some(&slot) => &teams[regions[slot as usize].members as usize],
                None => &all,
            };
            let arrived = members.iter().all(|&m| {
                let m = &threads[m as usize];
                !m.live || (m.seen.barrier && !m.released)
            });
            if arrived {
                for &m in members {
                    threads[m as usize].released = true;
                    out[m as usize].push((t, RELEASED));
                }
            }
        } else if !now.barrier {
            threads[i].released = false;
        }
    }
    handed + out.iter().map(|q| q.len() as u64).sum::<u64>()
}

fn print_classes(name: &str, counts: &[u64; Meeting::ALL.len()]) {
    let all: u64 = counts.iter().sum();
    let combined: u64 = Meeting::ALL
        .iter()
        .zip(counts)
        .filter(|(m, _)| m.combined())
        .map(|(_, n)| n)
        .sum();
    println!(
        "{name}: {all} events, {:.1}% to the combining pass, {:.1}% to their thread's pass alone",
        100.0 * combined as f64 / all as f64,
        100.0 * (all - combined) as f64 / all as f64
    );
    for (class, n) in Meeting::ALL.iter().zip(counts) {
        if *n > 0 {
            println!(
                "  {:5.1}%  {n:>10}  {class:?}",
                100.0 * *n as f64 / all as f64
            );
        }
    }
}
