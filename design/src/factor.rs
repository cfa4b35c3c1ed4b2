//! Factors and their levels, as a user writes them: `p=2,4,8,26` (a list),
//! `n=32..1024:log2` (every power of two in the range), `p=2..26:lin:5` (five evenly spaced
//! levels, rounded to integers when both ends are integers).

use std::fmt;

/// The most levels a factor may have (as many as a plan may have runs).
pub const MAX_LEVELS: usize = crate::plan::MAX_RUNS;

/// How a factor's levels are spaced; interior points of an edge are placed on this scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced logarithms (base 2).
    Log2,
}

/// A factor of the environment space and the levels it may take.
#[derive(Debug, Clone, PartialEq)]
pub struct Factor {
    /// Name (a datafile column, e.g. `p`, `n`).
    pub name: String,
    /// Levels, increasing, distinct.
    pub levels: Vec<f64>,
    /// Spacing used between levels.
    pub scale: Scale,
    /// Every level is an integer (interior points are rounded).
    pub integer: bool,
}

/// A factor specification that cannot be understood; `column` is 1-based in `spec`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--factor '{spec}': column {column}: {message}")]
pub struct FactorError {
    /// The specification as given.
    pub spec: String,
    /// Where the problem is.
    pub column: usize,
    /// What was expected.
    pub message: String,
}

impl Factor {
    /// Parses `name=levels`.
    ///
    /// ```
    /// let n = design::Factor::parse("n=32..1024:log2").unwrap();
    /// assert_eq!(n.levels, [32.0, 64.0, 128.0, 256.0, 512.0, 1024.0]);
    /// let p = design::Factor::parse("p=2..26:lin:5").unwrap();
    /// assert_eq!(p.levels, [2.0, 8.0, 14.0, 20.0, 26.0]);
    /// ```
    pub fn parse(spec: &str) -> Result<Factor, FactorError> {
        let error = |column: usize, message: String| FactorError {
            spec: spec.to_string(),
            column,
            message,
        };
        let Some((name, levels)) = spec.split_once('=') else {
            return Err(error(
                1,
                "expected NAME=LEVELS, like p=2,4,8 or n=32..1024:log2".into(),
            ));
        };
        let name = name.trim();
        let valid_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !valid_name {
            return Err(error(1, format!("'{name}' is not a factor name")));
        }
        let start = name.len() + 2;
        let number = |text: &str, column: usize| -> Result<f64, FactorError> {
            text.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| error(column, format!("'{}' is not a finite number", text.trim())))
        };
        if let Some((range, rest)) = levels.split_once("..") {
            let lo = number(range, start)?;
            let mut parts = rest.split(':');
            let hi_text = parts.next().unwrap_or("");
            let hi_column = start + range.len() + 2;
            let hi = number(hi_text, hi_column)?;
            if hi <= lo {
                return Err(error(
                    hi_column,
                    format!("the range must increase ({lo}..{hi})"),
                ));
            }
            let scale_column = hi_column + hi_text.len() + 1;
            let integer = lo.fract() == 0.0 && hi.fract() == 0.0;
            let (scale_text, count_text) = (parts.next(), parts.next());
            if let Some(extra) = parts.next() {
                return Err(error(
                    scale_column,
                    format!("unexpected ':{extra}' (expected lin, lin:K, log2 or log2:K)"),
                ));
            }
            let scale = match scale_text {
                None | Some("lin") => Scale::Linear,
                Some("log2") => Scale::Log2,
                Some(other) => {
                    return Err(error(
                        scale_column,
                        format!("unknown scale '{other}' (expected lin, lin:K, log2 or log2:K)"),
                    ));
                }
            };
            if scale == Scale::Log2 && lo <= 0.0 {
                return Err(error(start, "a log2 range needs positive ends".into()));
            }
            let count_column = scale_column + scale_text.map_or(0, |t| t.len() + 1);
            let count = count_text
                .map(|k| {
                    let count = k.trim().parse::<f64>().ok().filter(|c| c.fract() == 0.0);
                    match count {
                        Some(c) if c > MAX_LEVELS as f64 => Err(error(
                            count_column,
                            format!("{k} levels; a factor has at most {MAX_LEVELS}"),
                        )),
                        Some(c) if c >= 2.0 => Ok(c as usize),
                        _ => Err(error(
                            count_column,
                            format!("'{k}' is not a level count of at least 2"),
                        )),
                    }
                })
                .transpose()?;
            let levels = match (scale, count) {
                (Scale::Linear, None) => linear(lo, hi, 2, integer),
                (Scale::Log2, None) => powers_of_two(lo, hi),
                (Scale::Linear, Some(k)) => linear(lo, hi, k, integer),
                (Scale::Log2, Some(k)) => log_spaced(lo, hi, k, integer),
            };
            if levels.len() < 2 {
                return Err(error(
                    start,
                    format!("the range {lo}..{hi} holds fewer than 2 levels"),
                ));
            }
            return Ok(Factor {
                name: name.to_string(),
                integer: levels.iter().all(|v| v.fract() == 0.0),
                levels,
                scale,
            });
        }
        let mut values = Vec::new();
        let mut column = start;
        for text in levels.split(',') {
            values.push(number(text, column)?);
            column += text.len() + 1;
        }
        values.sort_by(f64::total_cmp);
        values.dedup();
        if values.len() < 2 {
            return Err(error(
                start,
                "a factor needs at least 2 distinct levels".into(),
            ));
        }
        Ok(Factor {
            name: name.to_string(),
            integer: values.iter().all(|v| v.fract() == 0.0),
            levels: values,
            scale: Scale::Linear,
        })
    }

    /// The smallest and largest level.
    pub fn extremes(&self) -> (f64, f64) {
        (self.levels[0], self.levels[self.levels.len() - 1])
    }

    /// `k` points strictly between the extremes: evenly chosen among the factor's own
    /// interior levels when it has at least `k`, otherwise evenly spaced on its scale
    /// (rounded for an integer factor; duplicates removed).
    pub fn interior(&self, k: usize) -> Vec<f64> {
        let inner = &self.levels[1..self.levels.len() - 1];
        if inner.len() >= k {
            // Indices spread over the interior levels, e.g. 3 of 4 -> 0, 1 or 2, 3.
            let mut picked: Vec<f64> = (0..k)
                .map(|j| {
                    inner[(((j as f64 + 0.5) * inner.len() as f64 / k as f64) as usize)
                        .min(inner.len() - 1)]
                })
                .collect();
            picked.dedup();
            return picked;
        }
        let (lo, hi) = self.extremes();
        let all = match self.scale {
            Scale::Linear => linear(lo, hi, k + 2, self.integer),
            Scale::Log2 => log_spaced(lo, hi, k + 2, self.integer),
        };
        all.into_iter().filter(|&v| v > lo && v < hi).collect()
    }
}

impl fmt::Display for Factor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let levels: Vec<String> = self.levels.iter().map(|v| v.to_string()).collect();
        write!(f, "{}={}", self.name, levels.join(","))
    }
}

fn round(v: f64, integer: bool) -> f64 {
    if integer { v.round() } else { v }
}

fn dedup(mut v: Vec<f64>) -> Vec<f64> {
    v.dedup();
    v
}

fn linear(lo: f64, hi: f64, count: usize, integer: bool) -> Vec<f64> {
    dedup(
        (0..count)
            .map(|i| {
                // Weighted ends, not lo + (hi - lo) t: hi - lo overflows on -1e308..1e308.
                let t = i as f64 / (count - 1) as f64;
                round(lo * (1.0 - t) + hi * t, integer)
            })
            .collect(),
    )
}

fn log_spaced(lo: f64, hi: f64, count: usize, integer: bool) -> Vec<f64> {
    let (a, b) = (lo.log2(), hi.log2());
    dedup(
        (0..count)
            .map(|i| {
                round(
                    (a + (b - a) * i as f64 / (count - 1) as f64).exp2(),
                    integer,
                )
            })
            .collect(),
    )
}

/// The ends and every power of two strictly between them.
fn powers_of_two(lo: f64, hi: f64) -> Vec<f64> {
    let mut levels = vec![lo];
    // exp2, not powi: 2^-1062 is a subnormal, which powi rounds to zero.
    let mut e = lo.log2().floor() + 1.0;
    while e.exp2() < hi {
        levels.push(e.exp2());
        e += 1.0;
    }
    levels.push(hi);
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(
            Factor::parse("p=26,2,8,4").unwrap().levels,
            [2.0, 4.0, 8.0, 26.0]
        );
        assert_eq!(Factor::parse("x=0.5..2").unwrap().levels, [0.5, 2.0]);
        assert_eq!(
            Factor::parse("n=100..1000:log2").unwrap().levels,
            [100.0, 128.0, 256.0, 512.0, 1000.0]
        );
        assert_eq!(
            Factor::parse("n=32..1024:log2:3").unwrap().levels,
            [32.0, 181.0, 1024.0]
        );
        let f = Factor::parse("p=2..26:lin:5").unwrap();
        assert!(f.integer);
        assert_eq!(f.scale, Scale::Linear);
    }

    #[test]
    fn interior_points_of_an_edge() {
        // Only the extremes: interpolate on the scale.
        assert_eq!(
            Factor::parse("p=2,26").unwrap().interior(3),
            [8.0, 14.0, 20.0]
        );
        // Own levels are preferred: 3 of 64..512.
        assert_eq!(
            Factor::parse("n=32..1024:log2").unwrap().interior(3),
            [64.0, 256.0, 512.0]
        );
        assert_eq!(
            Factor::parse("n=32..1024:log2").unwrap().interior(4),
            [64.0, 128.0, 256.0, 512.0]
        );
    }

    #[test]
    fn errors_point_at_the_column() {
        let e = |s: &str| Factor::parse(s).unwrap_err().to_string();
        assert_eq!(
            e("p"),
            "--factor 'p': column 1: expected NAME=LEVELS, like p=2,4,8 or n=32..1024:log2"
        );
        assert_eq!(
            e("p=2,x,8"),
            "--factor 'p=2,x,8': column 5: 'x' is not a finite number"
        );
        assert_eq!(
            e("p=8..2"),
            "--factor 'p=8..2': column 6: the range must increase (8..2)"
        );
        assert!(e("n=1..8:cubic").contains("column 8: unknown scale 'cubic'"));
        assert!(e("p=2..26:lin:1").contains("column 13: '1' is not a level count of at least 2"));
        assert!(e("p=2..26:lin:4:9").contains("unexpected ':9'"));
        assert!(e("p=3").contains("at least 2 distinct levels"));
        assert!(e("n=0..8:log2").contains("positive ends"));
        assert!(e("2p=1,2").contains("is not a factor name"));
    }
}
