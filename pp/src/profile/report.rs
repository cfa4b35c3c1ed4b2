//! What `pp` prints: the paper's Figure 1 table, a datafile row (docs/datafile.md), breakdowns by
//! thread, region or phase, and JSON.

use std::fmt::Write as _;

use super::rules::{CATEGORIES, Category, SUBCATEGORIES};
use super::sweep::Attribution;
use super::totals::Totals;
use crate::event::{Header, Symbols};

/// The name [`Profile::by_region`] gives the time outside every region.
pub const OUTSIDE_REGIONS: &str = "(outside regions)";

/// A finished profile with names resolved.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The log header (p and run parameters).
    pub header: Header,
    /// Run window, ns.
    pub window: (u64, u64),
    /// Events attributed.
    pub events: u64,
    /// Whole-run totals.
    pub totals: Totals,
    /// Per thread.
    pub by_thread: Vec<Totals>,
    /// Per innermost region name (`(outside regions)` for time outside every region).
    pub by_region: Vec<(String, Totals)>,
    /// Per phase (`(no phase)` before a thread's first phase).
    pub by_phase: Vec<(String, Totals)>,
    /// Oddities and what was missing (truncated logs).
    pub warnings: Vec<String>,
}

/// Why a profile gives no datafile row ([`Profile::checked_datafile_row`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    /// The run window has no length: nothing was measured.
    #[error("the run window is empty (it starts and ends at {0} ns, wall = 0): no row to write")]
    EmptyWindow(u64),
    /// A run parameter has the name of a computed field.
    #[error(
        "header key '{0}' is a field pp computes (p, wall, total, li, ip, sl, cl, rc, pc, \
         rc.cpu, rc.comm): rename the run parameter"
    )]
    ComputedKey(String),
}

/// A breakdown dimension (`--by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum By {
    /// Per thread.
    Thread,
    /// Per innermost region.
    Region,
    /// Per phase.
    Phase,
}

impl std::str::FromStr for By {
    type Err = String;
    fn from_str(s: &str) -> Result<By, String> {
        match s {
            "thread" => Ok(By::Thread),
            "region" => Ok(By::Region),
            "phase" => Ok(By::Phase),
            _ => Err(format!(
                "unknown breakdown '{s}' (expected thread, region or phase)"
            )),
        }
    }
}

/// Seconds from nanoseconds, printed exactly (9 decimals).
fn seconds(ns: u128) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

fn percent(part: u128, whole: u128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

impl Profile {
    /// Resolves the names of an attribution.
    pub fn new(header: Header, a: Attribution, symbols: &Symbols) -> Profile {
        let name = |s: Option<crate::event::Sym>, none: &str| match s {
            Some(s) => symbols.name(s).to_string(),
            None => none.to_string(),
        };
        Profile {
            header,
            window: a.window,
            events: a.events,
            totals: a.totals,
            by_thread: a.by_thread,
            by_region: a
                .by_region
                .into_iter()
                .map(|(s, t)| (name(s, OUTSIDE_REGIONS), t))
                .collect(),
            by_phase: a
                .by_phase
                .into_iter()
                .map(|(s, t)| (name(s, "(no phase)"), t))
                .collect(),
            warnings: a.warnings,
        }
    }

    /// Wall-clock length of the run window, ns.
    pub fn wall_ns(&self) -> u64 {
        self.window.1 - self.window.0
    }

    /// `p × wall`, ns: the sum of every category (128 bits: it may exceed 2^64 ns).
    pub fn total_ns(&self) -> u128 {
        self.totals.sum()
    }

    /// The paper's Figure 1: processors, each category in processor-seconds with its share
    /// of Total Time, Total Time, and Remaining Time (pure computation).
    pub fn figure1(&self) -> String {
        let total = self.total_ns();
        let mut out = String::new();
        let _ = writeln!(out, "{:<28}{:>16}", "Processors:", self.header.p);
        let line = |out: &mut String, label: &str, ns: u128| {
            let _ = writeln!(
                out,
                "{label:<28}{:>16} s {:>6.1}%",
                seconds(ns),
                percent(ns, total)
            );
        };
        for c in CATEGORIES.iter().filter(|&&c| c != Category::Pc) {
            line(&mut out, &format!("{}:", c.title()), self.totals.get(*c));
            for (k, (key, parent)) in SUBCATEGORIES.iter().enumerate() {
                if parent == c && self.totals.sub[k] > 0 {
                    line(&mut out, &format!("  {key}"), self.totals.sub[k]);
                }
            }
        }
        let _ = writeln!(
            out,
            "{:<28}{:>16} s          ({} x {} s wall)",
            "Total Time:",
            seconds(total),
            self.header.p,
            seconds(self.wall_ns().into())
        );
        line(&mut out, "Remaining Time:", self.totals.get(Category::Pc));
        out
    }

    /// The keys of a datafile row that `pp` computes (and `p`, which the header sets): a run
    /// parameter of the same name would make the row say two things.
    pub fn computed_keys() -> impl Iterator<Item = &'static str> {
        ["p", "wall", "total"]
            .into_iter()
            .chain(CATEGORIES.iter().map(|c| c.key()))
            .chain(SUBCATEGORIES.iter().map(|(k, _)| *k))
    }

    /// One datafile row, or why there is none worth writing: the run window is empty
    /// (`wall = 0`: every field would be zero), or a run parameter has the name of a field
    /// `pp` computes (`wall`, `total`, a category or sub-category).
    pub fn checked_datafile_row(&self) -> Result<String, RowError> {
        if let Some((key, _)) = self
            .header
            .params
            .iter()
            .find(|(k, _)| Profile::computed_keys().any(|c| c == k))
        {
            return Err(RowError::ComputedKey(key.clone()));
        }
        if self.wall_ns() == 0 {
            return Err(RowError::EmptyWindow(self.window.0));
        }
        Ok(self.datafile_row())
    }

    /// One datafile row (docs/datafile.md): every run parameter, `p`, `wall`, `total`, each
    /// category and sub-category, in seconds. Unchecked: see
    /// [`Profile::checked_datafile_row`].
    pub fn datafile_row(&self) -> String {
        let mut fields: Vec<String> = self
            .header
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        fields.push(format!("p={}", self.header.p));
        fields.push(format!("wall={}", seconds(self.wall_ns().into())));
        fields.push(format!("total={}", seconds(self.total_ns())));
        for c in CATEGORIES {
            fields.push(format!("{}={}", c.key(), seconds(self.totals.get(c))));
        }
        for (k, (key, _)) in SUBCATEGORIES.iter().enumerate() {
            fields.push(format!("{key}={}", seconds(self.totals.sub[k])));
        }
        fields.join(" ")
    }

    /// The categories broken down by thread, region or phase, in processor-seconds.
    pub fn breakdown(&self, by: By) -> String {
        let rows: Vec<(String, Totals)> = match by {
            By::Thread => self
                .by_thread
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("thread {i}"), *t))
                .collect(),
            By::Region => self.by_region.clone(),
            By::Phase => self.by_phase.clone(),
        };
        let width = rows
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0)
            .max(6);
        let mut out = format!("{:<width$}", "");
        let columns: Vec<&str> = CATEGORIES
            .iter()
            .map(|c| c.key())
            .chain(SUBCATEGORIES.iter().map(|(k, _)| *k))
            .chain(["total"])
            .collect();
        for c in &columns {
            let _ = write!(out, " {c:>13}");
        }
        out.push('\n');
        for (key, t) in rows {
            let _ = write!(out, "{key:<width$}");
            let values = t.ns.iter().chain(t.sub.iter()).copied().chain([t.sum()]);
            for ns in values {
                let _ = write!(out, " {:>13.6}", ns as f64 * 1e-9);
            }
            out.push('\n');
        }
        out
    }

    /// The whole profile as JSON (seconds as numbers).
    pub fn json(&self) -> String {
        use serde_json::{Map, Value, json};
        let categories = |t: &Totals| -> Value {
            let mut m = Map::new();
            for c in CATEGORIES {
                m.insert(c.key().into(), json!(t.get(c) as f64 * 1e-9));
            }
            for (k, (key, _)) in SUBCATEGORIES.iter().enumerate() {
                m.insert((*key).into(), json!(t.sub[k] as f64 * 1e-9));
            }
            Value::Object(m)
        };
        let keyed = |rows: &[(String, Totals)]| -> Value {
            Value::Object(
                rows.iter()
                    .map(|(k, t)| (k.clone(), categories(t)))
                    .collect(),
            )
        };
        let params: Map<String, Value> = self
            .header
            .params
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let doc = json!({
            "p": self.header.p,
            "params": params,
            "window_ns": [self.window.0, self.window.1],
            "wall": self.wall_ns() as f64 * 1e-9,
            "total": self.total_ns() as f64 * 1e-9,
            "categories": categories(&self.totals),
            "by_thread": self.by_thread.iter().map(categories).collect::<Vec<_>>(),
            "by_region": keyed(&self.by_region),
            "by_phase": keyed(&self.by_phase),
            "events": self.events,
            "warnings": self.warnings,
        });
        let mut text = serde_json::to_string_pretty(&doc).expect("plain data serializes");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact() {
        assert_eq!(seconds(2_465_100_000), "2.465100000");
        assert_eq!(seconds(7), "0.000000007");
    }

    #[test]
    fn by_parses() {
        assert_eq!("phase".parse::<By>(), Ok(By::Phase));
        assert!("core".parse::<By>().is_err());
    }
}
