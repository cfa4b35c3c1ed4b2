//! The four layers of a PACE model (docs/pace.md): the application (the dominant loop and what
//! comes before it), the parallel template (one step per region: who takes part, how the work
//! splits, what it waits for), the subtask (each region's computation over the factors, an
//! `lca` model of formulas) and the hardware (cores and speed).

use std::collections::BTreeMap;

use fit::performance::PerformanceModel;

/// A hierarchical performance model of one implementation.
#[derive(Debug, Clone)]
pub struct PaceModel {
    /// The implementation's name.
    pub name: String,
    /// The factors a point gives, in order (`n`, `p`).
    pub factors: Vec<String>,
    /// Each factor's range in the runs the model was built from.
    pub ranges: Vec<(f64, f64)>,
    /// Columns that held one value in every run (`iters`).
    pub held: BTreeMap<String, f64>,
    /// The application layer.
    pub application: Application,
    /// The parallel template: one step per region of an iteration of the loop, in an order
    /// where every step comes after the steps it waits for within the same iteration.
    pub template: Vec<Step>,
    /// The subtask layer: each region's busy time (processor-seconds over the whole run) as a
    /// category `pc.<region>` (computation) or `cl.<region>` (copies).
    pub subtask: PerformanceModel,
    /// The hardware layer.
    pub hardware: Hardware,
    /// How far the model's `T_p` was from the runs it was built from, when known.
    pub error: Option<Error>,
    /// What the builder assumed rather than saw, one sentence each.
    pub notes: Vec<String>,
}

/// The application layer: what the run does around its dominant loop.
#[derive(Debug, Clone, PartialEq)]
pub struct Application {
    /// How many times the loop runs: a factor's or held column's name, or a number.
    pub iterations: String,
    /// Seconds from the run's start to its first region (thread creation), the runs' mean.
    pub startup_s: f64,
    /// Seconds from the last region's end to the run's end, the runs' mean.
    pub teardown_s: f64,
    /// Iterations replayed at a point; the rest are scaled from them.
    pub replayed: u32,
}

/// Which threads take part in a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Members {
    /// Every thread `0..p`.
    All,
    /// Group `group` of `groups` consecutive blocks of threads, the first `floor` ones of
    /// `floor(p/groups)` threads and the rest `ceil(p/groups)` (or the other way round).
    Group {
        /// Which group, from 0, in thread order.
        group: u32,
        /// How many groups.
        groups: u32,
        /// Whether the smaller groups come first.
        smaller_first: bool,
    },
}

/// What a step's threads do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Computation (`work` intervals).
    Work,
    /// Copies (`comm` intervals).
    Comm,
    /// Waiting for another step (a channel, a lock hand-off): no busy time of its own.
    Wait,
}

/// How a step's work splits among its members.
#[derive(Debug, Clone, PartialEq)]
pub enum Split {
    /// Each member gets `1/m` of it.
    Equal,
    /// `units` indivisible units (rows) dealt in contiguous chunks: the first `units mod m`
    /// members get one more than `floor(units/m)`.
    Chunks {
        /// A factor's or held column's name, or a number.
        units: String,
    },
}

/// A step waits until another step of its own or an earlier iteration has ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Handoff {
    /// The region whose end releases the wait.
    pub after: String,
    /// How many iterations earlier that region ran (0: the same iteration).
    pub lag: u32,
}

/// One region of the loop's iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The region's name in the logs.
    pub region: String,
    /// Who takes part.
    pub members: Members,
    /// What they do.
    pub activity: Activity,
    /// How the work splits.
    pub split: Split,
    /// What the step waits for, if anything.
    pub waits_for: Option<Handoff>,
    /// The messages it exchanges between ranks, if it is an exchange (an MPI template;
    /// docs/pace.md#mpi-programs-messages).
    pub messages: Option<super::messages::Messages>,
}

/// The hardware layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Hardware {
    /// Cores the threads share: `p` above it is replayed with `ceil(p/cores)` threads on some
    /// cores, served in turn (processor sharing).
    pub cores: u32,
    /// How fast a core computes relative to the one the subtask was measured on.
    pub speed: f64,
    /// What a region costs beyond its busiest member's work: the fork and the join, seconds.
    pub fork_join_s: f64,
    /// From a releasing thread's hand-off to the waiting thread's going on, seconds.
    pub handoff_s: f64,
    /// What each member of a step that starts behind another of the step's members on its
    /// core adds to the step's fork and join, seconds: the core's switch from the one that
    /// finished to the one woken, which waited for it (`rounds - 1` per step,
    /// [`Members::rounds`]; docs/pace.md#the-four-layers).
    pub switch_s: f64,
    /// What a hand-off costs more where threads share the cores, per unit of [`sharing`]
    /// (`(p - cores) / cores`, at most 1), seconds.
    pub handoff_shared_s: f64,
    /// Other programs' runnable threads on the cores while the runs were measured (PACE's
    /// hardware parameters that follow a changing system): every thread's computation
    /// stretches by `max(1, (p + load)/cores) / max(1, p/cores)` beyond the sharing among the
    /// program's own threads. 0: the machine to itself.
    pub load: f64,
    /// How much longer computation takes, per unit of [`sharing`], when the program's threads
    /// outnumber the cores, beyond the processor sharing the replay does: a scheduler that
    /// keeps a woken thread on its busy core while the other runs something else gives the
    /// program fewer cores than it has. Fitted to the `T_p` of the runs that shared their
    /// cores (docs/pace.md#how-the-template-is-derived); 0 without such runs.
    pub compute_shared: f64,
    /// The share of a core a thread used while it waited or sat idle between its work, from
    /// the logs' `cpu` samples: 0 when waits block, 1 when they spin. The replay takes waits
    /// as blocking; the builder notes a share above one half.
    pub wait_cpu: f64,
    /// A machine file (`pp calibrate`) whose `[mpi]` times messages, if any.
    pub machine: Option<String>,
    /// The network fitted from the logs' own messages, which times them where no machine
    /// file does (an MPI template).
    pub network: Option<super::messages::Network>,
    /// How a core serves the threads dealt onto it past the cores (docs/pace.md#evaluation).
    pub sharing: CoreSharing,
    /// What moves an MPI template's messages: the network while the ranks' processors are
    /// free, or the receiving rank's processor, which copies each one
    /// (docs/pace.md#mpi-programs-messages).
    pub carrier: Carrier,
    /// With [`CoreSharing::RunToBlock`]: the longest a thread runs while others wait for its
    /// core, seconds (Linux's slice, assumed 3 ms).
    pub slice_s: f64,
    /// With [`CoreSharing::RunToBlock`]: what a busy core spends going from one thread to
    /// the next queued one, seconds, measured by a ping-pong of two threads on one core; the
    /// fitted `switch_s` is then what a core spends on a thread woken onto it idle. `None`
    /// (a file without it): `switch_s` for both.
    pub core_switch_s: Option<f64>,
    /// With [`CoreSharing::RunToBlock`]: whether a waiting rank gives its core up or polls on
    /// it (docs/whatif.md#waits-that-spin); a file without `waits` blocks.
    pub waits: pp::whatif::Waits,
    /// With waits that spin: messages of at least this many bytes go by rendezvous
    /// (docs/whatif.md#rendezvous).
    pub rendezvous_bytes: Option<u64>,
}

/// How a core serves the threads dealt onto it (`pp whatif`'s sharing rule,
/// docs/whatif.md#the-sharing-rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CoreSharing {
    /// All at once, each at `1/k` of the core; a step pays `switch_s` per round of its
    /// members after the first ([`Members::rounds`]). A file without `sharing` has this.
    #[default]
    Processor,
    /// One at a time, each until it blocks or its slice ends, the core spending `switch_s`
    /// going from one to the next; a woken thread takes an idle core if there is one, else
    /// queues on its own.
    RunToBlock,
}

/// What moves an MPI template's messages (`hardware.messages` in the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Carrier {
    /// The network, from the send to the receive, while the ranks' processors are free
    /// (`"network"`). A file without `messages` has this.
    #[default]
    Network,
    /// The receiving rank's processor (`"processors"`, as on one node, over shared memory or
    /// TCP loopback): its receive wait ends at the send, and it then copies each message for
    /// the message's time, a computation that shares its core past the cores.
    Processors,
}

impl Carrier {
    /// The name in the file.
    pub fn name(self) -> &'static str {
        match self {
            Carrier::Network => "network",
            Carrier::Processors => "processors",
        }
    }
}

/// [`Hardware::slice_s`] when a file leaves it out: 3 ms.
pub const DEFAULT_SLICE_S: f64 = 3e-3;

/// How far `p` threads share `cores`: `(p - cores) / cores`, at most 1 (a thread woken on a
/// shared core waits about one scheduler slice, however many share it).
pub fn sharing(p: u32, cores: u32) -> f64 {
    ((f64::from(p) - f64::from(cores)).max(0.0) / f64::from(cores)).min(1.0)
}

/// The model's error on the runs it was built from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Error {
    /// Root mean square of `ln(measured / predicted)` of `T_p`.
    pub relative_sd: f64,
    /// Over how many runs.
    pub runs: u32,
}

impl Members {
    /// The threads of this step at `p` threads, as a range of thread ids; empty where the
    /// group has no thread (`p` below the number of groups).
    pub fn threads(&self, p: u32) -> std::ops::Range<u32> {
        match *self {
            Members::All => 0..p,
            Members::Group {
                group,
                groups,
                smaller_first,
            } => {
                let (small, extra) = (p / groups, p % groups);
                // Group sizes: `extra` groups of small + 1, the others small.
                let size = |g: u32| {
                    let big = if smaller_first {
                        g >= groups - extra
                    } else {
                        g < extra
                    };
                    small + u32::from(big)
                };
                let start: u32 = (0..group).map(size).sum();
                start..start + size(group)
            }
        }
    }

    /// How many of this step's members at `p` threads the busiest of `cores` cores runs one
    /// after another: 1 with a core per thread, else `ceil(m * groups / cores)` for `m`
    /// members (every group is taken to run at once, as a pipeline's stages do, on its
    /// `cores / groups` of the cores; `groups` is 1 for `all`).
    pub fn rounds(&self, p: u32, cores: u32) -> u32 {
        if p <= cores || cores == 0 {
            return 1;
        }
        let m = self.threads(p).len() as u32;
        let groups = match *self {
            Members::All => 1,
            Members::Group { groups, .. } => groups,
        };
        (m * groups).div_ceil(cores).max(1)
    }
}

impl Hardware {
    /// How much longer computation takes at `p` threads because of other programs' load,
    /// beyond the program's own threads' sharing of the cores.
    pub fn stretch(&self, p: u32) -> f64 {
        let shared = 1.0 + self.compute_shared * sharing(p, self.cores);
        let c = f64::from(self.cores);
        let p = f64::from(p);
        shared * (1.0f64).max((p + self.load) / c) / (1.0f64).max(p / c)
    }

    /// The fork-and-join latency of a step whose busiest core runs `rounds` of its members
    /// one after another ([`Members::rounds`]), seconds. Run to block, the switches are the
    /// replay's, on the cores: `fork_join_s` alone. On one core each round after the first
    /// starts as the member before it blocks, on a busy core: `core_switch_s` where it is
    /// known, not the fitted `switch_s`, which is mostly a wake-up onto another, idle core.
    pub fn fork_join(&self, rounds: u32) -> f64 {
        if self.sharing == CoreSharing::RunToBlock {
            return self.fork_join_s;
        }
        let switch = match self.core_switch_s {
            Some(c) if self.cores == 1 => c,
            _ => self.switch_s,
        };
        self.fork_join_s + f64::from(rounds.saturating_sub(1)) * switch
    }

    /// How `pp whatif`'s replay shares a core among the threads dealt onto it.
    pub fn whatif_sharing(&self) -> pp::whatif::Sharing {
        match self.sharing {
            CoreSharing::Processor => pp::whatif::Sharing::Processor,
            CoreSharing::RunToBlock => pp::whatif::Sharing::RunToBlock {
                slice_ns: self.slice_s * 1e9,
                switch_ns: self.core_switch_s.unwrap_or(self.switch_s) * 1e9,
                wake_ns: Some(self.switch_s * 1e9),
                waits: self.waits,
                rendezvous_bytes: self.rendezvous_bytes,
            },
        }
    }

    /// The hand-off latency at `p` threads, seconds.
    pub fn handoff(&self, p: u32) -> f64 {
        self.handoff_s + sharing(p, self.cores) * self.handoff_shared_s
    }
}

impl PaceModel {
    /// The value of a name (a factor or a held column) or a number at a point.
    pub fn value(&self, what: &str, point: &[f64]) -> Option<f64> {
        if let Some(i) = self.factors.iter().position(|f| f == what) {
            return point.get(i).copied();
        }
        if let Some(v) = self.held.get(what) {
            return Some(*v);
        }
        what.parse::<f64>().ok().filter(|v| v.is_finite())
    }

    /// The number of threads at a point.
    pub fn processors(&self, point: &[f64]) -> Option<f64> {
        self.value("p", point)
    }
}

/// Whether `what` names a factor, a held column or is a number (what `iterations` and
/// `units` may be).
pub fn known(what: &str, factors: &[String], held: &BTreeMap<String, f64>) -> bool {
    factors.iter().any(|f| f == what)
        || held.contains_key(what)
        || what.parse::<f64>().is_ok_and(|v| v.is_finite() && v >= 0.0)
}
