//! `lca crossover A.toml B.toml --var n --at p=26 [--range n=32..1024]`: where two
//! implementations' predicted run times cross along a factor, who wins on each side and by how
//! much, with 90% bands; without `--var`, a winner map over the two factors left free. Both
//! name a winner by one rule, `fit::crossover::compare` (the 90% confidence interval of
//! `E[T_A] - E[T_B]` excludes zero).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use fit::crossover::{Axis, Pair, SAMPLES};
use fit::performance::PerformanceModel;
use reports::Format;

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
    /// Cells of the winner map along each factor (2 to 1000).
    #[arg(long, default_value_t = 41, value_name = "N")]
    cells: usize,
    /// Output format: text, csv or json.
    #[arg(
        long,
        value_enum,
        default_value_t,
        value_name = "FORMAT",
        hide_possible_values = true
    )]
    format: Format,
    /// Also propose the K runs that would most shrink the region where the two cannot be told
    /// apart, per second of run: a run of one implementation at a point narrows the 90%
    /// intervals of E[T_A] - E[T_B] everywhere as one more observation updates its fits'
    /// covariance (rank one, the means kept); its gain is the drop of the mean relative
    /// amount by which the intervals straddle zero over the region (101 points along --var,
    /// 21 x 21 over a map; candidates 21, or 9 x 9, whole numbers on whole-number axes); its
    /// cost its predicted T_p plus --run-overhead. Chosen one after another (text or json).
    #[arg(long, value_name = "K")]
    suggest: Option<usize>,
    /// What a run costs beyond its predicted T_p, in seconds (starting, recording and
    /// profiling it), for --suggest.
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "SECONDS",
        requires = "suggest"
    )]
    run_overhead: f64,
    /// Measured runs that check the models: each model's error on its own implementation's
    /// validation runs among them (`role=validate`, as `lca study` writes, or
    /// --validate-where) widens the intervals, so that a verdict holds the models' error and
    /// not only their coefficients' uncertainty. Where both implementations ran the same
    /// point (every row, any role), their runs decide who is faster there (Welch t, or paired
    /// t on runs with the same replicate index); the models decide between those points.
    #[arg(long, value_name = "DATAFILE")]
    data: Option<PathBuf>,
    /// The rows of --data that check the models [default: role=validate] (repeatable, comma
    /// separated).
    #[arg(
        long,
        value_name = "CONDITION",
        value_delimiter = ',',
        requires = "data"
    )]
    validate_where: Vec<String>,
}

/// Runs the command and returns what to print.
pub fn run(args: &Args) -> Result<String> {
    let format = args.format;
    if args.samples > MAX_SAMPLES {
        bail!("--samples {}: at most {MAX_SAMPLES}", args.samples);
    }
    if args.cells > MAX_CELLS {
        bail!(
            "--cells {}: at most {MAX_CELLS} (a map of cells x cells)",
            args.cells
        );
    }
    if args.cells < 2 {
        bail!(
            "--cells {}: at least 2 (a map has both ends of each factor)",
            args.cells
        );
    }
    let mut a = lca::pace::read_model(&args.a)?;
    let mut b = lca::pace::read_model(&args.b)?;
    name_models(&mut a, &args.a, &mut b, &args.b);
    for m in [&a, &b] {
        // Said once a model: the map and the crossovers go where its runs did not.
        if let Some(t) = m.categories.iter().flat_map(|c| &c.vary_together).next() {
            eprintln!(
                "note: {}'s model: {} varied together in every run it was built from, and it \
                 follows {} alone: its answers where they do not go together as in those runs \
                 rest on no run (docs/modelling.md#factors-that-vary-together)",
                m.name,
                t.factors.join(" and "),
                t.factors[0]
            );
        }
    }
    let data = args.data.as_deref().map(fit::Datafile::read).transpose()?;
    let errors = match &data {
        Some(data) => {
            let validation =
                lca::validated_error::validation_rows_noted(data, &args.validate_where)?;
            lca::validated_error::model_errors([&a, &b], data, validation.as_deref())?
        }
        None => [None, None],
    };
    // Measured points decide first: where both ran, their runs say who is faster there.
    let measured = data
        .as_ref()
        .map_or_else(Vec::new, |d| lca::compare::measured(&a, &b, d));
    // Between them, the difference model where it is tighter than the two models.
    let difference = data
        .as_ref()
        .and_then(|d| lca::compare::difference(&a, &b, d));
    let pair = Pair::new(&a, &b)?
        .with_validated_errors(errors)
        .with_measured(&measured)
        .with_difference(difference.as_ref().map(|d| &d.model));
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
            let axis = axis(&var)?;
            let c = pair.crossover(&axis, &fixed, args.samples)?;
            let out = reports::verdict::with_predictions(
                reports::crossover::crossover(&c, format),
                format,
                &[&a, &b],
            )?;
            let out = with_difference(out, difference.as_ref(), format);
            with_suggestions(out, &pair, &[axis], &fixed, args, format, "the range")
        }
        None => {
            let (u, v) = (axis(&free[0])?, axis(&free[1])?);
            let map = pair.winner_map(&u, &v, &fixed, args.cells)?;
            let out = reports::verdict::with_predictions(
                reports::crossover::winner_map(&map, format),
                format,
                &[&a, &b],
            )?;
            let out = with_difference(out, difference.as_ref(), format);
            with_suggestions(out, &pair, &[u, v], &fixed, args, format, "the map")
        }
    }
}

/// `out` (text) with the difference model's line after its first line.
fn with_difference(
    out: String,
    difference: Option<&lca::compare::Difference>,
    format: Format,
) -> String {
    match (difference, format) {
        (Some(d), Format::Text) => match out.split_once('\n') {
            Some((first, rest)) => {
                format!("{first}\n{}{rest}", lca::compare::difference_line(d))
            }
            None => out,
        },
        _ => out,
    }
}

/// `out` with the suggested runs after it (text), or inside it (JSON).
fn with_suggestions(
    out: String,
    pair: &Pair,
    axes: &[Axis],
    fixed: &[(String, f64)],
    args: &Args,
    format: Format,
    region: &str,
) -> Result<String> {
    let Some(k) = args.suggest else {
        return Ok(out);
    };
    if k == 0 || k > 100 {
        bail!("--suggest {k}: give a number of runs from 1 to 100");
    }
    if !(args.run_overhead >= 0.0 && args.run_overhead.is_finite()) {
        bail!(
            "--run-overhead {}: give seconds, 0 or more",
            args.run_overhead
        );
    }
    let (points, candidates) = lca::compare::grids(axes, fixed);
    let decision = fit::decision::suggest(pair, &points, &candidates, k, args.run_overhead)?;
    match format {
        Format::Text => Ok(format!(
            "{out}{}",
            reports::decision::text(&decision, region)
        )),
        Format::Json => Ok(reports::decision::into_json(&out, &decision)?),
        Format::Csv => bail!("--suggest: give --format text or json (CSV has no place for runs)"),
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
        values.extend(super::specs::values(spec)?);
    }
    Ok(values)
}

/// `--range n=32..1024` (any `lca design` factor; its extremes) by factor.
fn ranges(specs: &[String]) -> Result<Vec<(String, (f64, f64))>> {
    let factors = super::specs::factors(specs, "--range")?;
    Ok(factors
        .iter()
        .map(|f| (f.name.clone(), f.extremes()))
        .collect())
}
