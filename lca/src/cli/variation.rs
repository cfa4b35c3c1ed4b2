//! `lca variation DATAFILE --factors A,B --response y`: allocation of variation — the 2^k r
//! sign table when every factor has two levels, else a two-factor full factorial ANOVA, else
//! (a design that is not a full factorial, such as the paper's edges) the sign table of its
//! 2^k corners, saying which rows it used and which levels it left out.

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
    /// Keep only rows that meet a condition: `impl=dp`, `role!=validate`, `p<512` (`<=`, `>`, `>=`), `impl in dp,tp`.
    #[arg(long = "where", value_name = "CONDITION", value_delimiter = ',')]
    filter: Vec<String>,
}

/// Runs the command and returns the table to print.
pub fn run(args: &Args) -> Result<String> {
    let conditions = Condition::parse_all(&args.filter)?;
    let data = Datafile::read(&args.datafile)?.filter(&conditions)?;
    let factors: Vec<&str> = args.factors.iter().map(String::as_str).collect();
    let obs = data.observations(&factors, &args.response, &[])?;
    let levels: Vec<usize> = (0..factors.len()).map(|f| obs.levels(f).len()).collect();
    let cells = levels.iter().fold(1usize, |c, &l| c.saturating_mul(l));
    let measured = measured_cells(&obs);
    // Rows pp whatif predicted (a study's [whatif] points) are analysed too; say so first.
    let predicted = fit::performance::PredictedRows::describe_in(&data, &args.factors).map_or_else(
        String::new,
        |rows| {
            format!("predicted, not measured: {rows}; they are analysed as the measured rows are\n")
        },
    );
    Ok(predicted + &table(args, &factors, &obs, &levels, cells, measured)?)
}

/// The allocation of variation, by the design's shape.
fn table(
    args: &Args,
    factors: &[&str],
    obs: &fit::Observations,
    levels: &[usize],
    cells: usize,
    measured: usize,
) -> Result<String> {
    if measured < cells {
        // Not a full factorial (the paper's edges design): its corners still are a 2^k r one
        // when they were all measured; else the error names a missing corner.
        let corners = fit::variation::corners(obs)?;
        let table = fit::variation::sign_table(&corners.observations)?;
        Ok(reports::variation::corners_note(&corners, cells, measured)
            + &reports::variation::sign_table(&args.response, &table))
    } else if levels.iter().all(|&l| l == 2) {
        let table = fit::variation::sign_table(obs)?;
        Ok(reports::variation::sign_table(&args.response, &table))
    } else if factors.len() == 2 {
        let rows = fit::variation::two_factor_anova(obs)?;
        Ok(reports::variation::anova(&args.response, &rows))
    } else {
        bail!(
            "--factors: a full factorial with more than two levels is analysed over two factors \
             only (got {}); choose two, or measure only the extremes",
            factors.len()
        )
    }
}

/// How many distinct points (cells of the full factorial) have observations.
fn measured_cells(obs: &fit::Observations) -> usize {
    let mut point = vec![0.0; obs.factors.len()];
    let cells: std::collections::BTreeSet<Vec<u64>> = (0..obs.len())
        .map(|row| {
            obs.point(row, &mut point);
            point.iter().map(|v| v.to_bits()).collect()
        })
        .collect();
    cells.len()
}
