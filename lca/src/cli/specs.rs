//! Factor values and factor levels as options take them: `--at n=512,p=12` and
//! `--grid n=32..1024:log2,p=2,4,8` (or `--range`), shared by the commands that read them.

use anyhow::{Result, anyhow};
use design::Factor;

/// The `FACTOR=VALUE` pairs of one `--at` value, e.g. `n=512,p=12`.
pub fn values(spec: &str) -> Result<Vec<(String, f64)>> {
    spec.split(',')
        .map(|pair| {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| anyhow!("--at '{spec}': expected FACTOR=VALUE, found '{pair}'"))?;
            let value: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| anyhow!("--at '{spec}': '{}' is not a number", value.trim()))?;
            Ok((name.trim().to_string(), value))
        })
        .collect()
}

/// Factors as `lca design --factor` takes them, given to `option`: comma separated within a
/// value (`n=32..1024:log2,p=2,4,8`, where a piece without '=' continues the previous
/// factor's list) or repeated. Errors name `option`.
pub fn factors(specs: &[String], option: &str) -> Result<Vec<Factor>> {
    let mut factor_specs: Vec<String> = Vec::new();
    for piece in specs.iter().flat_map(|s| s.split(',')) {
        match factor_specs.last_mut() {
            Some(last) if !piece.contains('=') => {
                last.push(',');
                last.push_str(piece);
            }
            _ => factor_specs.push(piece.trim().to_string()),
        }
    }
    factor_specs
        .iter()
        .map(|s| {
            // A grid may hold a factor at one value (`--grid n=256`); a design may not.
            if option == "--grid"
                && let Some((name, value)) = s.split_once('=')
                && let Ok(value) = value.trim().parse::<f64>()
                && value.is_finite()
            {
                return Ok(Factor {
                    name: name.trim().to_string(),
                    levels: vec![value],
                    scale: design::Scale::Linear,
                    integer: value.fract() == 0.0,
                });
            }
            Factor::parse(s).map_err(|e| anyhow!("{}", e.to_string().replace("--factor", option)))
        })
        .collect()
}
