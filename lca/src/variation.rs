//! `lca variation DATAFILE --factors A,B --response y`: allocation of variation — the 2^k r
//! sign table when every factor has two levels, else a two-factor full factorial ANOVA.

use std::path::PathBuf;

use anyhow::{Result, bail};
use fit::{Condition, Datafile};

/// How much of a response's variation each factor and interaction explains.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Datafile (key=value lines or CSV).
    datafile: PathBuf,
    /// The factors, comma separated (e.g. `p,n`).
    #[arg(long, value_delimiter = ',', required = true, value_name = "A,B,...")]
    factors: Vec<String>,
    /// The response column (e.g. `li`, `wall`).
    #[arg(long, value_name = "COLUMN")]
    response: String,
    /// Keep only rows where a column has a value, e.g. `--where impl=dp`.
    #[arg(long = "where", value_name = "KEY=VALUE", value_delimiter = ',')]
    filter: Vec<String>,
}

/// Runs the command and returns the table to print.
pub fn run(args: &Args) -> Result<String> {
    let conditions = args
        .filter
        .iter()
        .map(|c| c.parse::<Condition>())
        .collect::<Result<Vec<_>, _>>()?;
    let data = Datafile::read(&args.datafile)?.filter(&conditions)?;
    let factors: Vec<&str> = args.factors.iter().map(String::as_str).collect();
    let obs = data.observations(&factors, &args.response, &[])?;
    let two_levels = (0..factors.len()).all(|f| obs.levels(f).len() == 2);
    if two_levels {
        let table = fit::variation::sign_table(&obs)?;
        Ok(reports::variation::sign_table(&args.response, &table))
    } else if factors.len() == 2 {
        let rows = fit::variation::two_factor_anova(&obs)?;
        Ok(reports::variation::anova(&args.response, &rows))
    } else {
        bail!(
            "--factors: with more than two levels only two factors can be analysed (got {})",
            factors.len()
        )
    }
}
