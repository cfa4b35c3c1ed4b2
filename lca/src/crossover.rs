//! `lca crossover A.toml B.toml --var n --at p=26 [--range n=32..1024]`: where two
//! implementations' predicted run times cross along a factor, who wins on each side and by how
//! much, with 90% bands; without `--var`, a winner map over the two factors left free. Both
//! name a winner by one rule, `fit::crossover::compare` (the 90% confidence interval of
//! `E[T_A] - E[T_B]` excludes zero).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use fit::crossover::{Axis, Pair, SAMPLES};
use fit::performance::PerformanceModel;
use reports::ranking::Format;

/// The most samples along a factor: as many as a plan may have runs.
const MAX_SAMPLES: usize = design::plan::MAX_RUNS;

/// The most cells of the winner map along a factor (its square is `MAX_SAMPLES`).
const MAX_CELLS: usize = 1000;

/// Where two implementations' predicted run times cross. A model wins where the 90%
/// confidence interval of E[T_A] - E[T_B] excludes zero (both models' mean intervals,
/// Welch-Satterthwaite); elsewhere the two cannot be told apart. A range that reaches a point
/// outside a model's domain (log2(0), p <= 0) is an error naming it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The first implementation's model file (A).
    a: PathBuf,
    /// The second implementation's model file (B).
    b: PathBuf,
    /// The factor to solve along; without it, a winner map over the two factors left free.
    #[arg(long, value_name = "FACTOR")]
    var: Option<String>,
    /// The other factors' values, e.g. `--at p=26` or `--at p=26,iters=10` (repeatable).
    #[arg(long, value_name = "FACTOR=VALUE,...")]
    at: Vec<String>,
    /// A range to explore, as `lca design` takes a factor (only the extremes count), e.g.
    /// `--range n=32..1024`; default: the union of the two models' fitted ranges (repeatable).
    #[arg(long, value_name = "FACTOR=LOW..HIGH")]
    range: Vec<String>,
    /// Samples along the factor (at least 512, at most 1000000).
    #[arg(long, default_value_t = SAMPLES, value_name = "N")]
    samples: usize,
    /// Cells of the winner map along each factor (at most 1000).
    #[arg(long, default_value_t = 41, value_name = "N")]
    cells: usize,
    /// Output format: text, csv or json.
    #[arg(long, default_value = "text", value_name = "FORMAT")]
    format: String,
}

/// Runs the command and returns what to print.
pub fn run(args: &Args) -> Result<String> {
    let format: Format = args.format.parse().map_err(|e| anyhow!("--format: {e}"))?;
    if args.samples > MAX_SAMPLES {
        bail!("--samples {}: at most {MAX_SAMPLES}", args.samples);
    }
    if args.cells > MAX_CELLS {
        bail!(
            "--cells {}: at most {MAX_CELLS} (a map of cells x cells)",
            args.cells
        );
    }
    let mut a = fit::model_file::read(&args.a)?;
    let mut b = fit::model_file::read(&args.b)?;
    name_models(&mut a, &args.a, &mut b, &args.b);
    let pair = Pair::new(&a, &b)?;
    let fixed = fixed_values(&args.at)?;
    let ranges = ranges(&args.range)?;
    let free = pair.free(&fixed)?;
    if let Some((name, _)) = ranges.iter().find(|(f, _)| !free.contains(f)) {
        if pair.factors().contains(name) {
            bail!("--range {name}: '{name}' is fixed with --at; give it one or the other");
        }
        bail!(
            "--range {name}: '{name}' is not a factor of the models ({})",
            pair.factors().join(", ")
        );
    }
    let axis = |factor: &str| -> Result<Axis> {
        match ranges.iter().rev().find(|(f, _)| f == factor) {
            Some((_, (lo, hi))) => Ok(Axis::new(factor, *lo, *hi)?),
            None => Ok(pair.default_axis(factor)?),
        }
    };
    let var = match (&args.var, free.len()) {
        (Some(var), _) => Some(var.clone()),
        (None, 1) => Some(free[0].clone()),
        (None, 2) => None,
        (None, _) => bail!(
            "give --var FACTOR, or fix all but two factors with --at for a winner map \
             (free: {})",
            if free.is_empty() {
                "none".to_string()
            } else {
                free.join(", ")
            }
        ),
    };
    match var {
        Some(var) => {
            if !pair.factors().contains(&var) {
                bail!(
                    "--var {var}: '{var}' is not a factor of the models ({})",
                    pair.factors().join(", ")
                );
            }
            if let Some((name, _)) = ranges.iter().find(|(f, _)| *f != var) {
                bail!("--range {name}: only --var {var} is varied; fix {name} with --at");
            }
            let c = pair.crossover(&axis(&var)?, &fixed, args.samples)?;
            Ok(reports::crossover::crossover(&c, format))
        }
        None => {
            let (u, v) = (axis(&free[0])?, axis(&free[1])?);
            let map = pair.winner_map(&u, &v, &fixed, args.cells)?;
            Ok(reports::crossover::winner_map(&map, format))
        }
    }
}

/// Names each model after its `name`, or its file when it has none or both have the same.
fn name_models(a: &mut PerformanceModel, pa: &Path, b: &mut PerformanceModel, pb: &Path) {
    let stem = |p: &Path| {
        p.file_stem()
            .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into())
    };
    if a.name.is_empty() || b.name.is_empty() || a.name == b.name {
        a.name = stem(pa);
        b.name = stem(pb);
        if a.name == b.name {
            a.name = pa.display().to_string();
            b.name = pb.display().to_string();
        }
    }
}

fn fixed_values(specs: &[String]) -> Result<Vec<(String, f64)>> {
    let mut values = Vec::new();
    for spec in specs {
        values.extend(crate::specs::values(spec)?);
    }
    Ok(values)
}

/// `--range n=32..1024` (any `lca design` factor; its extremes) by factor.
fn ranges(specs: &[String]) -> Result<Vec<(String, (f64, f64))>> {
    let factors = crate::specs::factors(specs, "--range")?;
    Ok(factors
        .iter()
        .map(|f| (f.name.clone(), f.extremes()))
        .collect())
}
