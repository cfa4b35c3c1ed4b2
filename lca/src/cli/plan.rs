//! `lca design --factor p=2,26 --factor n=32..1024:log2 --edges 3`: the run plan of an
//! experiment, as CSV (default) or TOML.

use anyhow::{Result, bail};
use design::{Design, Factor, Generator};

/// Plan the runs of an experiment over factors.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Factors: p=2,4,8,26 (levels), n=32..1024:log2 (powers of two in the range),\n\
p=2..26:lin:5 (five evenly spaced levels), n=32..1024:log2:4 (four log-spaced levels).\n\
A plan has at most 1000000 runs (points x replicates), a factor at most 1000000 levels.\n\n\
Example:\n  lca design --factor p=2,26 --factor n=32..1024:log2 --edges 3 > plan.csv"
)]
pub struct Args {
    /// A factor and its levels (repeatable).
    #[arg(long = "factor", value_name = "NAME=LEVELS", required = true)]
    factors: Vec<String>,
    /// Every combination of every level.
    #[arg(long, conflicts_with_all = ["two_k", "edges", "fractional"])]
    full: bool,
    /// The 2^k corners (every combination of the factors' extremes).
    #[arg(long = "2k", conflicts_with_all = ["edges", "fractional"])]
    two_k: bool,
    /// A 2^(k-q) fraction of the corners: one generator per generated factor, e.g.
    /// `--fractional D=A*B*C` (repeatable or comma separated). The alias structure and the
    /// resolution are printed on stderr.
    #[arg(
        long,
        value_name = "F=A*B*..",
        value_delimiter = ',',
        conflicts_with = "edges"
    )]
    fractional: Vec<String>,
    /// The paper's design: the corners plus K points along each edge [default: 3].
    #[arg(long, value_name = "K")]
    edges: Option<usize>,
    /// Runs per point.
    #[arg(long, default_value_t = 1, value_name = "R")]
    replicates: usize,
    /// Randomize the run order with this seed (the same seed gives the same order).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Output format: csv or toml.
    #[arg(long, value_enum, default_value_t, hide_possible_values = true)]
    format: PlanFormat,
}

/// Runs the command and returns the plan to print.
pub fn run(args: &Args) -> Result<String> {
    let factors = args
        .factors
        .iter()
        .map(|f| Factor::parse(f))
        .collect::<Result<Vec<_>, _>>()?;
    let plan = if args.fractional.is_empty() {
        let design = match (args.full, args.two_k, args.edges) {
            (true, _, _) => Design::Full,
            (_, true, _) => Design::TwoK,
            (_, _, Some(0)) => bail!("--edges: K must be at least 1 (points along each edge)"),
            (_, _, k) => Design::Edges(k.unwrap_or(3)),
        };
        design::plan(&factors, design, args.replicates, args.seed)?
    } else {
        let names: Vec<&str> = factors.iter().map(|f| f.name.as_str()).collect();
        let generators = args
            .fractional
            .iter()
            .map(|g| Generator::parse(g, &names))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, g) in generators.iter().enumerate() {
            if generators[..i].iter().any(|h| h.target == g.target) {
                bail!("--fractional: {} is generated twice", names[g.target]);
            }
            if let Some(h) = generators.iter().find(|h| g.word >> h.target & 1 == 1) {
                bail!(
                    "--fractional: {} is generated, so it cannot appear in the product for {}",
                    names[h.target],
                    names[g.target]
                );
            }
        }
        // The design's aliasing is part of the answer: on stderr, so the plan stays a file.
        eprint!("{}", design::fractional::describe(&generators, &names));
        design::fractional_plan(&factors, &generators, args.replicates, args.seed)?
    };
    Ok(match args.format {
        PlanFormat::Csv => plan.to_csv(),
        PlanFormat::Toml => plan.to_toml(),
    })
}

/// How `lca design` writes its plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
enum PlanFormat {
    /// One run per row, with a header.
    #[default]
    Csv,
    /// `[[run]]` tables.
    Toml,
}

impl std::fmt::Display for PlanFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PlanFormat::Csv => "csv",
            PlanFormat::Toml => "toml",
        })
    }
}
