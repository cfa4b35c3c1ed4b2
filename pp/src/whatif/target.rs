//! [`Target`]: the configuration a run is replayed on — processor groups, a network and
//! speed factors — from `pp whatif`'s options or a target file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;

use crate::event::ThreadId;
use crate::machine::Machine;

/// The target configuration. The default is the identity: every thread on a processor of its
/// own, the measured message times, every speed 1.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// Threads that share one processor each (LBF's process groups); threads in none keep a
    /// processor of their own.
    pub groups: Vec<Vec<ThreadId>>,
    /// The target network: its `[mpi]` model gives every matched message's time.
    pub machine: Option<Machine>,
    /// Region or phase name → factor that divides the demand of computation in it.
    pub speeds: BTreeMap<String, f64>,
    /// What a computation demands of its processor: its measured time, or the CPU time it
    /// received (for a source run that itself shared its processors).
    pub demand: Demand,
    /// How a processor serves the threads it holds (docs/whatif.md#the-sharing-rule).
    pub sharing: Sharing,
}

/// How a shared processor serves its threads (docs/whatif.md#the-sharing-rule).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Sharing {
    /// Processor sharing: `k` runnable threads each progress at `1/k` at once.
    #[default]
    Processor,
    /// One thread at a time, until it blocks or its slice ends, then the next runnable one
    /// (first come, first served); a thread that becomes runnable takes an idle processor of
    /// the shared ones if there is one (its own first), else queues on the one it last ran on.
    RunToBlock {
        /// The longest a thread runs while others queue for its processor, ns.
        slice_ns: f64,
        /// What a shared processor spends each time it goes from one thread to the next
        /// queued one, and, without `wake_ns`, each time it starts a thread other than the one
        /// it ran last, woken onto it while idle, ns.
        switch_ns: f64,
        /// What a shared processor spends starting a thread other than the one it ran last,
        /// woken onto it while idle (a wake-up onto an idle core), ns; `None`: `switch_ns`.
        wake_ns: Option<f64>,
        /// Whether a waiting thread gives up its processor or spins on it.
        waits: Waits,
        /// With [`Waits::Spin`]: messages of at least this many bytes go by rendezvous, their
        /// sender's next receive ending only once the receiver has held a processor since the
        /// send (docs/whatif.md#rendezvous).
        rendezvous_bytes: Option<u64>,
    },
}

/// The settings of [`Sharing::RunToBlock`] as `pp whatif`'s options and a target file give
/// them, each unset where not given ([`Target::set_run_to_block`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunToBlockSettings {
    /// Microseconds.
    pub slice_us: Option<f64>,
    /// Microseconds.
    pub switch_us: Option<f64>,
    /// Microseconds.
    pub wake_us: Option<f64>,
    /// Whether waits block or spin.
    pub waits: Option<Waits>,
    /// Bytes: messages of at least this size go by rendezvous (with waits that spin).
    pub rendezvous_bytes: Option<u64>,
}

/// What a waiting thread does with its processor under [`Sharing::RunToBlock`]
/// (docs/whatif.md#waits-that-spin).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Waits {
    /// It gives the processor up: the next runnable thread gets it.
    #[default]
    Block,
    /// It keeps the processor, polling, until its wait ends or its slice does while others
    /// queue; a wait ends only while its thread holds a processor (an MPI library's progress
    /// loop on a core it shares, where nothing tells it to yield).
    Spin,
}

impl std::str::FromStr for Waits {
    type Err = String;

    /// `block` or `spin`, as `--waits` and the target file write it.
    fn from_str(s: &str) -> Result<Waits, String> {
        match s {
            "block" => Ok(Waits::Block),
            "spin" => Ok(Waits::Spin),
            _ => Err(format!("'{s}': expected block or spin")),
        }
    }
}

impl Sharing {
    /// Linux's slice, assumed (docs/whatif.md#the-sharing-rule): 3 ms.
    pub const DEFAULT_SLICE_NS: f64 = 3e6;

    /// Run to block with the default slice and no switch cost.
    pub fn run_to_block() -> Sharing {
        Sharing::RunToBlock {
            slice_ns: Sharing::DEFAULT_SLICE_NS,
            switch_ns: 0.0,
            wake_ns: None,
            waits: Waits::Block,
            rendezvous_bytes: None,
        }
    }
}

impl std::str::FromStr for Sharing {
    type Err = String;

    /// `processor` or `run-to-block` (the default slice, no switch cost), as `--sharing` and
    /// the target file write it.
    fn from_str(s: &str) -> Result<Sharing, String> {
        match s {
            "processor" => Ok(Sharing::Processor),
            "run-to-block" => Ok(Sharing::run_to_block()),
            _ => Err(format!("'{s}': expected processor or run-to-block")),
        }
    }
}

/// What a computation's demand for a processor is taken from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Demand {
    /// Its measured (elapsed) time: the source run had a processor per thread.
    #[default]
    Elapsed,
    /// The CPU time its thread received over it (the `cpu` samples around it), and every
    /// wait's measured time less the run-queue delay around its end: what the run would take
    /// with the processors it did not have (an oversubscribed source run).
    Cpu,
}

impl std::str::FromStr for Demand {
    type Err = String;

    /// `elapsed` or `cpu`, as `--demand` and the target and study files write it.
    fn from_str(s: &str) -> Result<Demand, String> {
        match s {
            "elapsed" => Ok(Demand::Elapsed),
            "cpu" => Ok(Demand::Cpu),
            _ => Err(format!("'{s}': expected elapsed or cpu")),
        }
    }
}

/// A target file's fields (docs/whatif.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    machine: Option<PathBuf>,
    #[serde(default)]
    speed: BTreeMap<String, f64>,
    #[serde(default)]
    demand: Option<Demand>,
    #[serde(default)]
    sharing: Option<String>,
    #[serde(default)]
    slice_us: Option<f64>,
    #[serde(default)]
    switch_us: Option<f64>,
    #[serde(default)]
    wake_us: Option<f64>,
    #[serde(default)]
    waits: Option<String>,
    #[serde(default)]
    rendezvous_bytes: Option<u64>,
}

impl Target {
    /// Reads a target file; a relative `machine` is taken from the file's folder.
    pub fn load(path: &Path) -> Result<Target> {
        let name = path.display().to_string();
        let text = files::input::read_text(path, "target file", files::input::MAX_SMALL_FILE)
            .map_err(|e| anyhow!("{name}: {e}"))?;
        let file: File = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            // toml's message may quote a key or value whole (thousands of bytes): cut short.
            let message = files::quote::excerpt(&e.message().replace('\n', " "), MAX_MESSAGE);
            match line {
                Some(line) => anyhow!("{name}:{line}: {message}"),
                None => anyhow!("{name}: {message}"),
            }
        })?;
        let mut target = Target::default();
        if let Some(g) = &file.group {
            target.groups = parse_groups(g).with_context(|| format!("{name}: group"))?;
        }
        if let Some(m) = &file.machine {
            let m = path.parent().map_or(m.clone(), |dir| dir.join(m));
            // The machine's errors quote its path, which the file may make long: an excerpt.
            let machine = load_machine(&m).map_err(|e| {
                let path = m.display().to_string();
                let message = format!("{e:#}").replace(&path, &crate::log::excerpt(&path));
                anyhow!(
                    "{name}: machine: {}",
                    files::quote::excerpt(&message, MAX_MESSAGE)
                )
            })?;
            target.machine = Some(machine);
        }
        if let Some(d) = file.demand {
            target.demand = d;
        }
        if let Some(s) = &file.sharing {
            target.sharing = s.parse().map_err(|e: String| {
                anyhow!(
                    "{name}: sharing: {}",
                    files::quote::excerpt(&e, MAX_MESSAGE)
                )
            })?;
        }
        let waits = match &file.waits {
            Some(w) => Some(w.parse().map_err(|e: String| {
                anyhow!("{name}: waits: {}", files::quote::excerpt(&e, MAX_MESSAGE))
            })?),
            None => None,
        };
        target
            .set_run_to_block(&RunToBlockSettings {
                slice_us: file.slice_us,
                switch_us: file.switch_us,
                wake_us: file.wake_us,
                waits,
                rendezvous_bytes: file.rendezvous_bytes,
            })
            .with_context(|| name.clone())?;
        for (region, factor) in file.speed {
            let factor = check_factor(factor)
                .with_context(|| format!("{name}: speed.{}", crate::log::excerpt(&region)))?;
            target.speeds.insert(region, factor);
        }
        Ok(target)
    }

    /// `--speed NAME=FACTOR`.
    pub fn add_speed(&mut self, arg: &str) -> Result<()> {
        // Messages quote at most 40 characters of what the user wrote.
        let shown = crate::log::excerpt(arg);
        let (name, factor) = arg
            .split_once('=')
            .ok_or_else(|| anyhow!("--speed '{shown}': expected REGION_OR_PHASE=FACTOR"))?;
        let factor = factor
            .parse::<f64>()
            .map_err(|_| {
                anyhow!(
                    "--speed '{shown}': '{}' is not a number",
                    crate::log::excerpt(factor)
                )
            })
            .and_then(check_factor)
            .with_context(|| format!("--speed '{shown}'"))?;
        if name.is_empty() {
            bail!("--speed '{shown}': no region or phase name before '='");
        }
        self.speeds.insert(name.to_string(), factor);
        Ok(())
    }

    /// Sets the slice, the switch and wake-up costs of [`Sharing::RunToBlock`] (microseconds,
    /// as `--slice-us`, `--switch-us` and `--wake-us` and the target file give them), its
    /// [`Waits`] and the rendezvous; any of them without that sharing is an error, and so is
    /// a rendezvous without waits that spin.
    pub fn set_run_to_block(&mut self, settings: &RunToBlockSettings) -> Result<()> {
        let RunToBlockSettings {
            slice_us,
            switch_us,
            wake_us,
            waits,
            rendezvous_bytes,
        } = *settings;
        let check = |what: &str, v: f64, least: f64| -> Result<f64> {
            if !(v.is_finite() && v >= least && v <= 1e9) {
                bail!(
                    "{what} = {}: not a number of microseconds from {least} to 1e9",
                    files::quote::number(v)
                );
            }
            Ok(v * 1e3)
        };
        match &mut self.sharing {
            Sharing::RunToBlock {
                slice_ns,
                switch_ns,
                wake_ns,
                waits: how,
                rendezvous_bytes: rendezvous,
            } => {
                if let Some(w) = waits {
                    *how = w;
                }
                if let Some(b) = rendezvous_bytes {
                    *rendezvous = Some(b);
                }
                if rendezvous.is_some() && *how != Waits::Spin {
                    bail!("rendezvous_bytes is for waits = spin")
                }
                if let Some(s) = slice_us {
                    *slice_ns = check("slice_us", s, 1e-3)?;
                }
                if let Some(s) = switch_us {
                    *switch_ns = check("switch_us", s, 0.0)?;
                }
                if let Some(s) = wake_us {
                    *wake_ns = Some(check("wake_us", s, 0.0)?);
                }
                Ok(())
            }
            Sharing::Processor
                if slice_us.is_some()
                    || switch_us.is_some()
                    || wake_us.is_some()
                    || waits.is_some()
                    || rendezvous_bytes.is_some() =>
            {
                bail!(
                    "slice_us, switch_us, wake_us, waits and rendezvous_bytes are for sharing = run-to-block"
                )
            }
            Sharing::Processor => Ok(()),
        }
    }

    /// True when nothing changes: the replay reproduces the run.
    pub fn is_identity(&self) -> bool {
        self.groups.iter().all(|g| g.len() < 2)
            && self.machine.is_none()
            && self.speeds.is_empty()
            && self.demand == Demand::Elapsed
    }

    /// Checks the groups against a run of `p` threads: every thread below `p`, none in two
    /// groups. Returns each thread's processor.
    pub fn processors(&self, p: u32) -> Result<Vec<u32>> {
        let mut of: Vec<Option<u32>> = vec![None; p as usize];
        for (k, g) in self.groups.iter().enumerate() {
            for &t in g {
                let slot = of.get_mut(t as usize).ok_or_else(|| {
                    anyhow!("--group: thread {t} is not in the log (its threads are 0..{p})")
                })?;
                if *slot == Some(k as u32) {
                    bail!("--group: thread {t} is named twice in group {}", k + 1);
                }
                if let Some(other) = *slot {
                    bail!(
                        "--group: thread {t} is in two groups ({} and {})",
                        other + 1,
                        k + 1
                    );
                }
                *slot = Some(k as u32);
            }
        }
        let mut next = self.groups.len() as u32;
        Ok(of
            .into_iter()
            .map(|g| {
                g.unwrap_or_else(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect())
    }

    /// A short description for the predicted log's header: `groups=0,1/2,3 speed:fft=2 mpi`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        // Where a processor is shared, every group named is one of the machine's processors
        // (a group of one too: others may move onto it); else none of them changes anything.
        let shared = self.groups.iter().any(|g| g.len() > 1);
        let groups: Vec<&Vec<ThreadId>> = self.groups.iter().filter(|_| shared).collect();
        if !groups.is_empty() {
            let g: Vec<String> = groups
                .iter()
                .map(|g| {
                    g.iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect();
            parts.push(format!("group:{}", g.join("/")));
        }
        if !groups.is_empty()
            && let Sharing::RunToBlock {
                slice_ns,
                switch_ns,
                wake_ns,
                waits,
                rendezvous_bytes,
            } = self.sharing
        {
            let wake = wake_ns.map_or(String::new(), |w| format!(":wake={}us", w / 1e3));
            let spin = match (waits, rendezvous_bytes) {
                (Waits::Spin, Some(b)) => format!(":spin:rendezvous={b}B"),
                (Waits::Spin, None) => ":spin".to_string(),
                (Waits::Block, _) => String::new(),
            };
            parts.push(format!(
                "sharing:run-to-block:slice={}us:switch={}us{wake}{spin}",
                slice_ns / 1e3,
                switch_ns / 1e3
            ));
        }
        if self.demand == Demand::Cpu {
            parts.push("demand:cpu".to_string());
        }
        if self.machine.is_some() {
            parts.push("network:mpi".to_string());
        }
        for (name, f) in &self.speeds {
            parts.push(format!("speed:{name}={f}"));
        }
        if parts.is_empty() {
            "identity".to_string()
        } else {
            parts.join(";")
        }
    }
}

/// `0,1/2,3`: groups separated by `/`, threads by `,`.
pub fn parse_groups(spec: &str) -> Result<Vec<Vec<ThreadId>>> {
    spec.split('/')
        .map(|g| {
            g.split(',')
                .map(|t| {
                    t.trim().parse::<ThreadId>().map_err(|_| {
                        anyhow!(
                            "'{}': '{}' is not a thread number",
                            crate::log::excerpt(spec),
                            crate::log::excerpt(t)
                        )
                    })
                })
                .collect()
        })
        .collect()
}

/// A machine file with an `[mpi]` table.
pub fn load_machine(path: &Path) -> Result<Machine> {
    let m = Machine::load(path)?;
    if m.mpi.is_none() {
        bail!(
            "{}: no [mpi] table (pp calibrate --mpi writes one)",
            path.display()
        );
    }
    Ok(m)
}

fn check_factor(f: f64) -> Result<f64> {
    if !(f.is_finite() && f > 0.0) {
        // `{f}` writes -1e300 as 301 digits: far from 1, the exponent form.
        let shown = if f == 0.0 || (1e-6..1e15).contains(&f.abs()) {
            f.to_string()
        } else {
            format!("{f:e}")
        };
        bail!("the factor must be a positive number, not {shown}")
    }
    // Below 2^-128, a nanosecond of computation would outlast the log's clock (2^64 ns) many
    // times over, and the replay's times, doubles, could overflow to infinity (it never
    // ended): refused here. Above it, a run past the clock is refused by the replay.
    if f < MIN_FACTOR {
        bail!(
            "the factor {f:e} is below 2^-128 (2.9e-39): a nanosecond of computation would outlast the log's clock"
        )
    }
    Ok(f)
}

/// The most bytes of a target file's TOML or machine error.
const MAX_MESSAGE: usize = 200;

/// The smallest speed factor: 2^-128.
const MIN_FACTOR: f64 = 2.938_735_877_055_719e-39;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_parse_and_threads_in_none_get_their_own_processor() {
        let t = Target {
            groups: parse_groups("0,1/3").unwrap(),
            ..Target::default()
        };
        assert_eq!(t.groups, [vec![0, 1], vec![3]]);
        assert_eq!(t.processors(5).unwrap(), [0, 0, 2, 1, 3]);
        assert!(parse_groups("0,x").is_err());
        assert!(parse_groups("").is_err());
        let e = t.processors(3).unwrap_err().to_string();
        assert_eq!(
            e,
            "--group: thread 3 is not in the log (its threads are 0..3)"
        );
        let two = Target {
            groups: parse_groups("0,1/1,2").unwrap(),
            ..Target::default()
        };
        let e = two.processors(3).unwrap_err().to_string();
        assert_eq!(e, "--group: thread 1 is in two groups (1 and 2)");
        let twice = Target {
            groups: parse_groups("0,1,0").unwrap(),
            ..Target::default()
        };
        let e = twice.processors(3).unwrap_err().to_string();
        assert_eq!(e, "--group: thread 0 is named twice in group 1");
    }

    #[test]
    fn speeds_need_a_positive_factor() {
        let mut t = Target::default();
        assert!(t.is_identity());
        t.add_speed("fft=2").unwrap();
        assert_eq!(t.speeds["fft"], 2.0);
        assert!(!t.is_identity());
        for bad in ["fft", "fft=0", "fft=-1", "fft=nan", "=2", "fft=x"] {
            assert!(t.add_speed(bad).is_err(), "{bad}");
        }
    }

    /// A target file's errors quote an excerpt of what it holds (found by the whatif-target
    /// fuzz target: a mutated key, speed name, factor or machine path was quoted whole).
    #[test]
    fn target_file_errors_are_one_short_line() {
        let dir = std::env::temp_dir().join(format!("pp-target-errors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let long = "x".repeat(6000);
        let cases = [
            (format!("{long} = 1\n"), "unknown field"),
            (format!("[speed]\n{long} = 0\n"), "speed.xxx"),
            ("[speed]\nfft = -1e300\n".to_string(), "not -1e300"),
            ("[speed]\nfft = -0.5\n".to_string(), "not -0.5"),
            (format!("group = \"{long}\"\n"), "is not a thread number"),
            (format!("machine = \"{long}\"\n"), "machine: "),
            (format!("demand = \"{long}\"\n"), "unknown variant"),
        ];
        for (k, (text, expected)) in cases.iter().enumerate() {
            let path = dir.join(format!("{k}.toml"));
            std::fs::write(&path, text).unwrap();
            let e = format!("{:#}", Target::load(&path).unwrap_err());
            assert!(e.contains(expected), "{k}: {e}");
            assert!(!e.contains('\n'), "{k}: {e}");
            let own = e.len() - path.display().to_string().len();
            assert!(own <= 300, "{k}: {} bytes: {e}", e.len());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
