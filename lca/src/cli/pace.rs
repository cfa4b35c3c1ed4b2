//! `lca pace build | predict | choose`: PACE's hierarchical models (docs/pace.md).

use std::fmt::Write;
use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use fit::Condition;
use lca::pace::model::Carrier;
use lca::pace::{BuildRequest, PaceModel, Trace};

/// Hierarchical (PACE) models: build one from a study folder, predict with it, choose between.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Build a PACE model of one implementation from a study folder (its logs/).
    Build(BuildArgs),
    /// T_p and the predicted lost cycles at points; --trace writes the predicted log.
    Predict(PredictArgs),
    /// Which model is fastest at a point.
    Choose(ChooseArgs),
}

#[derive(Debug, clap::Args)]
struct BuildArgs {
    /// The study folder, as `lca study` writes it (logs/ inside).
    study: PathBuf,
    /// The implementation (the logs' impl=).
    #[arg(long = "impl", value_name = "NAME")]
    implementation: String,
    /// Keep only the logs whose parameters meet these conditions (`p<=4`, `role=model`).
    #[arg(long = "where", value_name = "CONDITION", value_delimiter = ',')]
    filter: Vec<String>,
    /// The hardware layer's cores [default: this machine's].
    #[arg(long, value_name = "N")]
    cores: Option<u32>,
    /// Iterations of the loop replayed at each point.
    #[arg(long, default_value_t = 6, value_name = "N")]
    replayed: u32,
    /// What a busy core spends going from one thread to the next, µs [default: measured
    /// here, two threads pinned to one CPU passing a byte back and forth].
    #[arg(long, value_name = "US")]
    core_switch_us: Option<f64>,
    /// The model file to write.
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// Replace an existing FILE.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, clap::Args)]
struct PredictArgs {
    /// The PACE model file.
    model: PathBuf,
    /// A point: every factor's value, e.g. `--at n=512,p=6` (repeatable).
    #[arg(long, value_name = "FACTOR=VALUE,...", required = true)]
    at: Vec<String>,
    /// Swap the hardware layer's cores.
    #[arg(long, value_name = "N")]
    cores: Option<u32>,
    /// Swap the hardware layer for a machine file's (`pp calibrate`): its cores, and its
    /// `[mpi]` times messages.
    #[arg(long, value_name = "FILE")]
    machine: Option<PathBuf>,
    /// Swap the hardware layer's switches (`switch_s`, and `core_switch_s` with it), in µs: a
    /// core's switch from one member of a step to the next on the target (on one core, half
    /// of `taskset -c 0 perf bench sched pipe`'s round trip).
    #[arg(long, value_name = "US")]
    switch_us: Option<f64>,
    /// Swap how a waiting rank or thread uses its core past the cores: `spin`, it polls on it
    /// (run to block with waits that spin: Open MPI's ranks on cores that `taskset` shares),
    /// or `block` (docs/whatif.md#waits-that-spin).
    #[arg(long, value_name = "block|spin", value_parser = parse_waits)]
    waits: Option<pp::whatif::Waits>,
    /// With waits that spin: messages of at least BYTES go by rendezvous (the MPI library's
    /// eager limit; docs/whatif.md#rendezvous).
    #[arg(long, value_name = "BYTES")]
    rendezvous_bytes: Option<u64>,
    /// Swap the slice of run to block, µs (a task that never sleeps runs until the scheduler
    /// tick after its slice: 4000 at 250 Hz).
    #[arg(long, value_name = "US")]
    slice_us: Option<f64>,
    /// Write the predicted log of the iterations replayed at the (single) point.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Replace an existing trace file.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, clap::Args)]
struct ChooseArgs {
    /// The PACE model files, one per implementation.
    #[arg(required = true, num_args = 2..)]
    models: Vec<PathBuf>,
    /// The point, e.g. `--at n=512,p=6`.
    #[arg(long, value_name = "FACTOR=VALUE,...")]
    at: String,
}

/// Runs the command and returns what to print.
pub fn run(args: &Args) -> Result<String> {
    match &args.command {
        Command::Build(a) => build(a),
        Command::Predict(a) => predict(a),
        Command::Choose(a) => choose(a),
    }
}

fn build(a: &BuildArgs) -> Result<String> {
    let conditions = Condition::parse_all(&a.filter)?;
    let cores = match a.cores {
        Some(0) => bail!("--cores 0: at least 1"),
        Some(c) => c,
        None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    if !(1..=lca::pace::file::MAX_REPLAYED).contains(&a.replayed) {
        bail!(
            "--replayed {}: replay 1 to {} iterations",
            a.replayed,
            lca::pace::file::MAX_REPLAYED
        );
    }
    let core_switch_s = match a.core_switch_us {
        Some(us) if !(us.is_finite() && us >= 0.0) => {
            bail!(
                "--core-switch-us {}: a number of µs >= 0",
                files::quote::number(us)
            )
        }
        Some(us) => Some(us * 1e-6),
        None => lca::pace::core_switch::core_switch_s(),
    };
    files::output::check_new(&a.out, a.force)
        .map_err(|e| anyhow!("-o {}: {}", a.out.display(), e.reason()))?;
    let model = lca::pace::build(&BuildRequest {
        study: a.study.clone(),
        implementation: a.implementation.clone(),
        conditions,
        cores,
        replayed: a.replayed,
        core_switch_s,
    })?;
    let text = lca::pace::file::write(&model);
    files::output::write(&a.out, text.as_bytes())
        .map_err(|e| anyhow!("-o {}: {}", a.out.display(), e.reason()))?;
    let mut out = format!(
        "wrote {} ({} steps, {} regions' subtask, {} cores)\n",
        a.out.display(),
        model.template.len(),
        model.subtask.categories.len(),
        model.hardware.cores
    );
    if let Some(e) = model.error {
        let _ = writeln!(
            out,
            "T_p against its {} runs: {:.1}% (RMS of ln(measured/predicted))",
            e.runs,
            e.relative_sd * 100.0
        );
    }
    for n in &model.notes {
        let _ = writeln!(out, "note: {n}");
    }
    Ok(out)
}

fn parse_waits(s: &str) -> Result<pp::whatif::Waits, String> {
    s.parse()
}

/// Reads a PACE model, its hardware layer swapped as `predict`'s options ask.
fn load(a: &PredictArgs) -> Result<PaceModel> {
    let (cores, machine, switch_us) = (a.cores, a.machine.as_deref(), a.switch_us);
    let mut model = lca::pace::file::read(&a.model)?;
    let h = &mut model.hardware;
    if let Some(w) = a.waits {
        // Waits mean something one thread at a time.
        h.sharing = lca::pace::model::CoreSharing::RunToBlock;
        h.waits = w;
        if w == pp::whatif::Waits::Block {
            h.rendezvous_bytes = None;
        }
    }
    if let Some(b) = a.rendezvous_bytes {
        if h.waits != pp::whatif::Waits::Spin {
            bail!("--rendezvous-bytes: needs waits that spin (--waits spin)");
        }
        h.rendezvous_bytes = Some(b);
    }
    if let Some(us) = a.slice_us {
        if !(us.is_finite() && (1e-3..=1e9).contains(&us)) {
            bail!(
                "--slice-us {}: a number of µs from 0.001 to 1e9",
                files::quote::number(us)
            );
        }
        h.slice_s = us * 1e-6;
    }
    if let Some(us) = switch_us {
        if !(us.is_finite() && us >= 0.0) {
            bail!(
                "--switch-us {}: a number of µs >= 0",
                files::quote::number(us)
            );
        }
        // Every switch of the layer: the target's is one figure.
        model.hardware.switch_s = us * 1e-6;
        model.hardware.core_switch_s = None;
    }
    if let Some(m) = machine {
        let file = pp::machine::Machine::load(m).map_err(|e| anyhow!("--machine {e}"))?;
        model.hardware.cores = file.about.cores.max(1);
        model.hardware.machine = file.mpi.is_some().then(|| m.display().to_string());
    }
    match cores {
        Some(0) => bail!("--cores 0: at least 1"),
        Some(c) => model.hardware.cores = c,
        None => {}
    }
    Ok(model)
}

fn point(model: &PaceModel, spec: &str) -> Result<Vec<f64>> {
    let values = super::specs::values(spec)?;
    fit::performance::point_by_name(&model.factors, &values)
        .map_err(|e| anyhow!("--at '{spec}': {e}"))
}

fn predict(a: &PredictArgs) -> Result<String> {
    let model = load(a)?;
    if a.trace.is_some() && a.at.len() > 1 {
        bail!("--trace writes the log of one point: give one --at");
    }
    if let Some(t) = &a.trace {
        pp::whatif::write::check("--trace", t, a.force)?;
    }
    let mut out = format!("{:<24} {:>12}", "point", "T_p (s)");
    for c in lca::pace::seam::CATEGORY_NAMES {
        let _ = write!(out, " {c:>10}");
    }
    out.push('\n');
    for spec in &a.at {
        let p = point(&model, spec)?;
        let trace = a.trace.as_ref().map(|t| Trace {
            path: t,
            force: a.force,
        });
        let e = model
            .evaluate_traced(&p, trace)
            .map_err(|e| anyhow!("--at '{spec}': {e}"))?;
        let _ = write!(out, "{spec:<24} {:>12.6}", e.t_p);
        for (_, v) in &e.categories {
            let _ = write!(out, " {v:>10.6}");
        }
        out.push('\n');
    }
    if model.has_messages() {
        // Which network timed the messages (docs/pace.md#mpi-programs-messages).
        let by = match (&model.hardware.machine, model.hardware.network) {
            (Some(m), _) => format!("{m}'s [mpi]"),
            (None, Some(n)) => format!(
                "the model's network, fitted from its logs: {:.2} us + bytes / {:.1} MB/s",
                n.alpha_s * 1e6,
                n.bytes_per_s * 1e-6
            ),
            (None, None) => {
                "nothing: no machine file with [mpi] and no network in the model, each takes 1 ns"
                    .into()
            }
        };
        let carried = match model.hardware.carrier {
            Carrier::Network => "in flight on the network",
            Carrier::Processors => "copied by the receiving ranks' processors",
        };
        let _ = writeln!(out, "messages timed by {by}, {carried}");
    }
    if let Some(t) = &a.trace {
        let _ = writeln!(out, "wrote {} (the iterations replayed)", t.display());
    }
    Ok(out)
}

fn choose(a: &ChooseArgs) -> Result<String> {
    let models = a
        .models
        .iter()
        .map(|m| lca::pace::file::read(m).map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()?;
    let at = super::specs::values(&a.at)?;
    let (best, times) =
        lca::pace::choose(&models, &at).map_err(|e| anyhow!("--at '{}': {e}", a.at))?;
    let mut out = String::new();
    for (m, t) in models.iter().zip(&times) {
        let _ = writeln!(out, "{:<12} T_p {t:.6} s", m.name);
    }
    let _ = writeln!(
        out,
        "choose {} ({})",
        models[best].name,
        a.models[best].display()
    );
    if let Some((next, ahead, significant)) = lca::pace::choose::margin(&models, best, &times) {
        let _ = writeln!(
            out,
            "{} takes {:.1}% longer: {}, the models' errors on the runs they were built from \
             included",
            models[next].name,
            100.0 * ahead,
            if significant {
                format!("{} is faster at 90%", models[best].name)
            } else {
                "the two cannot be told apart at 90% (the choice is the lower prediction)"
                    .to_string()
            }
        );
    }
    Ok(out)
}
