//! Where a drifting pc lives (docs/modelling.md, "Completeness check"): the logs of a drifting
//! group's runs at its smallest p and at the p furthest from it, profiled by region as
//! `pp --by region` does, and the regions whose pure computation grew the most between them.
//!
//! The logs are found in a study's `logs/` folder by what they say of themselves: a log's
//! header gives its `p` and its run parameters (`n=…`), and its file name starts with the
//! implementation's name (`dp-model-n32-p8-r1.log`, as `lca study` names them). A run that
//! `[whatif]` predicted has its row from `<stem>.predicted.log`, which is used in its place.

use std::path::{Path, PathBuf};

use pp::log::LogReader;
use pp::profile::{Category, profile_log};

use super::Group;

/// Regions named: those that hold this share of the growth, at most [`NAMED`] of them.
const SHARE: f64 = 0.8;
/// The most regions named in a line.
const NAMED: usize = 3;

/// A log of the folder: its path, file name, p and run parameters.
#[derive(Debug, Clone)]
struct Log {
    path: PathBuf,
    name: String,
    p: f64,
    params: Vec<(String, String)>,
}

/// The logs of a folder, read once (headers only), to be matched against drifting groups.
#[derive(Debug, Clone, Default)]
pub struct Logs {
    logs: Vec<Log>,
}

impl Logs {
    /// The logs in `dir` (none when it does not exist or cannot be read). A log whose header
    /// cannot be read is left out: the check names regions where it can and says so where not.
    pub fn scan(dir: &Path) -> Logs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Logs::default();
        };
        let mut logs = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
                continue;
            };
            let Some(stem) = name.strip_suffix(".log") else {
                continue;
            };
            if stem.ends_with(".predicted") || !path.is_file() {
                continue;
            }
            let predicted = dir.join(format!("{stem}.predicted.log"));
            let path = if predicted.is_file() { predicted } else { path };
            let Ok(reader) = LogReader::open(&path) else {
                continue;
            };
            let header = reader.header();
            logs.push(Log {
                path,
                name,
                p: f64::from(header.p),
                params: header.params.clone(),
            });
        }
        logs.sort_by(|a, b| a.name.cmp(&b.name));
        Logs { logs }
    }

    /// The logs of `group`'s runs at `p`: each `key=value` of the group's levels holds (the
    /// implementation by the file name's start, a factor by the header's value, numbers
    /// compared as numbers).
    fn of(&self, group: &Group, p: f64) -> Vec<&Path> {
        let levels: Vec<(&str, &str)> = group
            .levels
            .split_whitespace()
            .filter_map(|t| t.split_once('='))
            .collect();
        self.logs
            .iter()
            .filter(|log| same(log.p, p))
            .filter(|log| {
                levels.iter().all(|&(key, value)| {
                    if key == "impl" {
                        return log.name.starts_with(&format!("{value}-"));
                    }
                    log.params.iter().any(|(k, v)| {
                        k == key
                            && match (v.parse::<f64>(), value.parse::<f64>()) {
                                (Ok(a), Ok(b)) => same(a, b),
                                _ => v == value,
                            }
                    })
                })
            })
            .map(|log| log.path.as_path())
            .collect()
    }
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Where one drifting group's pc grew: per region, mean pc at the drifting p minus mean pc at
/// the smallest, largest growth first.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// The smallest p and the drifting p compared.
    pub from: f64,
    pub to: f64,
    /// Logs profiled at each.
    pub logs: (usize, usize),
    /// Growth of the whole run's mean pc, seconds.
    pub growth: f64,
    /// Per region (`(outside regions)` included), growth of mean pc in seconds, largest first.
    pub regions: Vec<(String, f64)>,
}

/// Mean pc per region (seconds) over `logs`, each profiled whole; `None` when one cannot be.
fn mean_by_region(logs: &[&Path]) -> Option<(f64, Vec<(String, f64)>)> {
    let mut total = 0.0;
    let mut regions: Vec<(String, f64)> = Vec::new();
    for path in logs {
        let mut reader = LogReader::open(path).ok()?;
        let profile = profile_log(&mut reader, None, None).whole("").ok()?;
        total += profile.totals.get(Category::Pc) as f64 * 1e-9;
        for (name, totals) in &profile.by_region {
            let pc = totals.get(Category::Pc) as f64 * 1e-9;
            match regions.iter_mut().find(|r| &r.0 == name) {
                Some(r) => r.1 += pc,
                None => regions.push((name.clone(), pc)),
            }
        }
    }
    let n = logs.len() as f64;
    Some((
        total / n,
        regions.into_iter().map(|(r, pc)| (r, pc / n)).collect(),
    ))
}

/// Where `group`'s pc grew between its smallest p and its worst drifting point, from the logs
/// of those runs in `logs`; `None` when the group does not drift or either p has no log that
/// can be profiled.
pub fn locate(group: &Group, logs: &Logs) -> Option<Located> {
    let from = group.points.first()?.p;
    let to = group.worst()?.p;
    let (base, drift) = (logs.of(group, from), logs.of(group, to));
    if base.is_empty() || drift.is_empty() {
        return None;
    }
    let (base_total, base_regions) = mean_by_region(&base)?;
    let (drift_total, drift_regions) = mean_by_region(&drift)?;
    let mut regions: Vec<(String, f64)> = drift_regions
        .iter()
        .map(|(name, pc)| {
            let before = base_regions
                .iter()
                .find(|r| &r.0 == name)
                .map_or(0.0, |r| r.1);
            (name.clone(), pc - before)
        })
        .collect();
    for (name, pc) in &base_regions {
        if !regions.iter().any(|r| &r.0 == name) {
            regions.push((name.clone(), -pc));
        }
    }
    regions.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Some(Located {
        from,
        to,
        logs: (base.len(), drift.len()),
        growth: drift_total - base_total,
        regions,
    })
}

/// Milliseconds, signed, for a line: `+12.3 ms`.
fn ms(seconds: f64) -> String {
    format!("{:+.1} ms", seconds * 1e3)
}

impl Located {
    /// The regions that hold [`SHARE`] of the growth (at most [`NAMED`]), with their growth
    /// and share of it; empty when pc did not grow or the logs have no regions.
    pub fn named(&self) -> Vec<(&str, f64, f64)> {
        let grown: f64 = self.regions.iter().map(|r| r.1.max(0.0)).sum();
        if grown <= 0.0
            || self
                .regions
                .iter()
                .all(|r| r.0 == pp::profile::OUTSIDE_REGIONS)
        {
            return Vec::new();
        }
        let mut named = Vec::new();
        let mut held = 0.0;
        for (name, g) in self.regions.iter().filter(|r| r.1 > 0.0).take(NAMED) {
            named.push((name.as_str(), *g, g / grown));
            held += g;
            if held >= SHARE * grown {
                break;
            }
        }
        named
    }

    /// One line: how much pc grew from the smallest p to the drifting one, and in which
    /// regions (or that the logs have none to tell).
    pub fn describe(&self) -> String {
        let base = format!(
            "pc {} from p={} to p={}",
            ms(self.growth),
            self.from,
            self.to
        );
        let named = self.named();
        let source = format!("pp --by region of {} + {} logs", self.logs.0, self.logs.1);
        if named.is_empty() {
            if self
                .regions
                .iter()
                .all(|r| r.0 == pp::profile::OUTSIDE_REGIONS)
            {
                return format!("{base}; the logs have no regions to locate it ({source})");
            }
            return format!("{base}; no region's pc grew ({source})");
        }
        let parts: Vec<String> = named
            .iter()
            .map(|(name, g, share)| format!("{name} {} ({:.0}%)", ms(*g), share * 100.0))
            .collect();
        format!("{base}, mostly in {} ({source})", parts.join(", "))
    }
}
