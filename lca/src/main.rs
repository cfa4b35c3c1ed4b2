//! `lca`: lost cycles analysis from the command line. Parses, validates, calls the
//! libraries (`lca`'s own among them), prints. See `lca --help`.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use cli::{crossover, model, pace, plan, predict, rank, report, study, validate, variation};

/// Lost cycles analysis: which simple model explains the measured lost cycles?
#[derive(Debug, Parser)]
#[command(
    name = "lca",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  lca datasets/data/fig2.dat --var p --cat li --predict p=16 --plot li.png\n  lca design --factor p=2,26 --factor n=32..1024:log2 --edges 3 > plan.csv"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    rank: rank::Args,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Plan the runs of an experiment over factors (CSV or TOML).
    Design(plan::Args),
    /// Allocation of variation: how much each factor and interaction explains (a design that
    /// is not a full factorial, such as the edges, at its 2^k corners).
    Variation(variation::Args),
    /// Build a performance model of every category over every factor (a TOML model file).
    Model(model::Args),
    /// Predict T_p and every category, with 90% prediction intervals, from a model file (a
    /// point outside the model's domain, such as log2(0) or p <= 0, is an error naming it).
    Predict(predict::Args),
    /// Compare a model's predicted T_p with measured runs, beside the corner-plane baseline.
    Validate(validate::Args),
    /// Write an HTML report with charts of models and measured runs.
    Report(report::Args),
    /// Where two implementations' predicted run times cross, who wins where and by how much
    /// (a winner only where the 90% confidence interval of E[T_A] - E[T_B] excludes zero).
    Crossover(crossover::Args),
    /// Run a study end to end: measure (resuming), model, validate [default: the bundled one].
    Study(study::Args),
    /// Hierarchical (PACE) models from a study's logs: build, predict (with a predicted log),
    /// choose; `lca predict`, `validate` and `crossover` take them too (docs/pace.md).
    Pace(pace::Args),
}

fn main() -> ExitCode {
    if let Some(code) = study::workload() {
        return code;
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match cli_support::value_error(&e) {
            Some(line) => {
                eprintln!("Error: {line}");
                return ExitCode::FAILURE;
            }
            None => e.exit(),
        },
    };
    let output = match &cli.command {
        Some(Command::Design(args)) => plan::run(args),
        Some(Command::Variation(args)) => variation::run(args),
        Some(Command::Model(args)) => model::run(args),
        Some(Command::Predict(args)) => predict::run(args),
        Some(Command::Validate(args)) => validate::run(args),
        Some(Command::Report(args)) => report::run(args),
        Some(Command::Crossover(args)) => crossover::run(args),
        Some(Command::Study(args)) => study::run(args),
        Some(Command::Pace(args)) => pace::run(args),
        None => rank::run(&cli.rank),
    };
    match output.and_then(|text| write_stdout(&text)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<lca::study::Stopped>() {
            // The line that says how to resume, and status 128 + the signal.
            Some(stopped) => {
                eprintln!("{stopped}");
                ExitCode::from(u8::try_from(128 + stopped.signal).unwrap_or(u8::MAX))
            }
            None => {
                eprintln!("Error: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Writes the report with one write: a file that standard output appends to gets it whole or
/// is cut back to its old length (a full disk); a closed pipe (`lca ... | head`) is not an
/// error.
pub(crate) fn write_stdout(text: &str) -> anyhow::Result<()> {
    Ok(files::append::report(text.as_bytes())?)
}
