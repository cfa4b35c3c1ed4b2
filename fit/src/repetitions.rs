//! Repetitions: observations with the same factor values are replicates of one point. They are
//! fitted as they are (every run a row, the default: the residual variance, and so every
//! interval, then holds their spread), or summarised by their median (as Extra-P does by
//! default) or their mean, one row per point.

use std::fmt;
use std::str::FromStr;

use crate::observations::Observations;

/// How replicates of a point enter a fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Repetitions {
    /// Every run is an observation.
    #[default]
    All,
    /// One observation per point: the median of its runs.
    Median,
    /// One observation per point: the mean of its runs.
    Mean,
}

impl FromStr for Repetitions {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Repetitions::All),
            "median" => Ok(Repetitions::Median),
            "mean" => Ok(Repetitions::Mean),
            _ => Err(format!("'{s}': expected all, median or mean")),
        }
    }
}

impl fmt::Display for Repetitions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Repetitions::All => "all",
            Repetitions::Median => "median",
            Repetitions::Mean => "mean",
        })
    }
}

/// The median of `values` (the mean of the middle two for an even count); NaN for none.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The observations with each point's replicates summarised as `how` says (points in the order
/// of their first run, which gives its line); [`Repetitions::All`] returns them unchanged.
pub fn summarise(obs: Observations, how: Repetitions) -> Observations {
    if how == Repetitions::All {
        return obs;
    }
    // Points by their exact factor values, in first-seen order.
    let mut points: Vec<(Vec<u64>, usize, Vec<f64>)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for row in 0..obs.len() {
        let key: Vec<u64> = obs.columns.iter().map(|c| c[row].to_bits()).collect();
        let at = *index.entry(key.clone()).or_insert_with(|| {
            points.push((key, row, Vec::new()));
            points.len() - 1
        });
        points[at].2.push(obs.y[row]);
    }
    let summary = |values: &[f64]| match how {
        Repetitions::Median => median(values),
        _ => values.iter().sum::<f64>() / values.len() as f64,
    };
    Observations {
        source: obs.source.clone(),
        factors: obs.factors.clone(),
        response: obs.response.clone(),
        columns: obs
            .columns
            .iter()
            .map(|c| points.iter().map(|p| c[p.1]).collect())
            .collect(),
        y: points.iter().map(|p| summary(&p.2)).collect(),
        lines: points.iter().map(|p| obs.lines[p.1]).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "clap")]
    #[test]
    fn the_command_line_names_are_the_parsed_ones() {
        use clap::ValueEnum;
        for how in Repetitions::value_variants() {
            let name = how.to_possible_value().expect("not skipped");
            assert_eq!(name.get_name(), how.to_string());
            assert_eq!(name.get_name().parse::<Repetitions>(), Ok(*how));
        }
    }

    fn obs() -> Observations {
        let p = vec![2.0, 2.0, 2.0, 4.0, 4.0, 2.0];
        let y = vec![1.0, 9.0, 2.0, 5.0, 7.0, 4.0];
        Observations::new("t", vec!["p".into()], "y", vec![p], y).unwrap()
    }

    #[test]
    fn median_and_mean_of_hand_values() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
        // p=2: runs 1, 9, 2, 4 -> median 3, mean 4; p=4: runs 5, 7 -> 6 either way.
        let m = summarise(obs(), Repetitions::Median);
        assert_eq!(
            (m.columns[0].clone(), m.y.clone()),
            (vec![2.0, 4.0], vec![3.0, 6.0])
        );
        assert_eq!(m.lines, vec![1, 4]);
        let m = summarise(obs(), Repetitions::Mean);
        assert_eq!(m.y, vec![4.0, 6.0]);
        assert_eq!(summarise(obs(), Repetitions::All), obs());
    }

    #[test]
    fn parses_the_three_names() {
        assert_eq!("median".parse(), Ok(Repetitions::Median));
        assert_eq!("mean".parse(), Ok(Repetitions::Mean));
        assert_eq!("all".parse(), Ok(Repetitions::All));
        assert!("avg".parse::<Repetitions>().is_err());
    }
}
