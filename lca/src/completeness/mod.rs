//! The completeness check of lost cycles analysis (Crovella & LeBlanc 1994; docs/modelling.md,
//! "Completeness check"): the pure computation `pc` of a fixed problem should not grow with the
//! number of processors p. Where pc(p)/pc(p_min) drifts, the categories miss an overhead that
//! hides in pc. This computes, per level of the other factors, the mean measured pc at each p
//! and its ratio to the mean at the smallest p, and flags drift over [`DRIFT`]; where the runs'
//! logs are at hand, [`regions`] says in which regions the drifting pc grew.

pub mod regions;

use std::path::Path;

use fit::Datafile;
use fit::observations::{RUN_COLUMNS, is_response_column};

/// Relative drift of pc(p)/pc(p_min) from 1 beyond which a point is flagged.
pub const DRIFT: f64 = 0.10;

/// Columns that say which run or which part of a study a row is, not a factor level.
const NOT_LEVELS: [&str; 2] = ["p", "role"];

/// Per p of a group: (p, sum of pc, rows, rows predicted by `pp whatif`).
type Sums = Vec<(f64, f64, usize, usize)>;

/// One p of a group: measured means over its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub p: f64,
    /// Rows (replicates) averaged.
    pub runs: usize,
    /// Mean measured pc, seconds.
    pub pc: f64,
    /// pc / pc at the group's smallest p.
    pub ratio: f64,
    /// |ratio - 1| > [`DRIFT`].
    pub drifts: bool,
    /// Whether every row of it is `pp whatif`'s prediction (a `predicted` cell, as a study's
    /// `[whatif]` points are): its pc is the replay's, which keeps the measured run's CPU time.
    pub predicted: bool,
}

/// The points of one level of the other factors (e.g. `impl=dp n=32`), by increasing p.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// `key=value` of the other factors, space-separated, in column order (empty: none).
    pub levels: String,
    pub points: Vec<Point>,
}

impl Group {
    /// Whether any point drifts.
    pub fn drifts(&self) -> bool {
        self.points.iter().any(|p| p.drifts)
    }

    /// The drifting point furthest from 1 (the first of equals), if any drifts.
    pub fn worst(&self) -> Option<&Point> {
        self.points
            .iter()
            .filter(|p| p.drifts)
            .fold(None, |best: Option<&Point>, p| match best {
                Some(b) if (b.ratio - 1.0).abs() >= (p.ratio - 1.0).abs() => Some(b),
                _ => Some(p),
            })
    }
}

/// The check of `data` as [`render`] prints it, then for each drifting group a line saying in
/// which regions its pc grew, from the runs' logs in `logs` (a study's `logs/` folder) where
/// they are (docs/modelling.md, "Completeness check"). Empty when the data has no group.
pub fn report(data: &Datafile, logs: Option<&Path>) -> String {
    let groups = check(data);
    let mut out = render(&groups);
    let Some(dir) = logs else {
        return out;
    };
    let found = regions::Logs::scan(dir);
    for g in groups.iter().filter(|g| g.drifts()) {
        if let Some(located) = regions::locate(g, &found) {
            out += &format!("  {}: {}\n", name(g), located.describe());
        }
    }
    out
}

/// The logs folder beside a datafile (`<study>/logs` for `<study>/fft2d.dat`), when there is
/// one: where `lca study` keeps its runs' logs.
pub fn logs_beside(datafile: &Path) -> Option<std::path::PathBuf> {
    let dir = datafile.parent()?.join("logs");
    dir.is_dir().then_some(dir)
}

/// A group's name in the check's lines.
fn name(g: &Group) -> &str {
    if g.levels.is_empty() {
        "all runs"
    } else {
        &g.levels
    }
}

/// The completeness check of `data`: groups with runs at two or more p and a positive pc at
/// the smallest, in order of first appearance. Empty when the data has no `p` or `pc` column.
/// Rows without a numeric p or pc are left out.
pub fn check(data: &Datafile) -> Vec<Group> {
    let levels: Vec<&str> = data
        .columns()
        .iter()
        .map(String::as_str)
        .filter(|c| !is_response_column(c) && !RUN_COLUMNS.contains(c) && !NOT_LEVELS.contains(c))
        .collect();
    let mut groups: Vec<(String, Sums)> = Vec::new();
    for row in 0..data.rows().len() {
        let number = |c: &str| data.cell(row, c).and_then(|x| x.as_number());
        let (Some(p), Some(pc)) = (number("p"), number("pc")) else {
            continue;
        };
        let predicted = usize::from(data.cell(row, "predicted").is_some());
        let key = levels
            .iter()
            .filter_map(|c| data.cell(row, c).map(|v| format!("{c}={v}")))
            .collect::<Vec<_>>()
            .join(" ");
        let at = match groups.iter().position(|g| g.0 == key) {
            Some(at) => at,
            None => {
                groups.push((key, Vec::new()));
                groups.len() - 1
            }
        };
        let sums = &mut groups[at].1;
        match sums.iter_mut().find(|s| s.0 == p) {
            Some(s) => {
                s.1 += pc;
                s.2 += 1;
                s.3 += predicted;
            }
            None => sums.push((p, pc, 1, predicted)),
        }
    }
    groups
        .into_iter()
        .filter_map(|(levels, mut sums)| {
            sums.sort_by(|a, b| a.0.total_cmp(&b.0));
            let base = sums.first().map(|s| s.1 / s.2 as f64)?;
            if sums.len() < 2 || base <= 0.0 {
                return None;
            }
            let points = sums
                .into_iter()
                .map(|(p, sum, runs, predicted)| {
                    let pc = sum / runs as f64;
                    let ratio = pc / base;
                    Point {
                        p,
                        runs,
                        pc,
                        ratio,
                        drifts: (ratio - 1.0).abs() > DRIFT,
                        predicted: predicted == runs,
                    }
                })
                .collect();
            Some(Group { levels, points })
        })
        .collect()
}

/// The check as text, one line per group: `levels: p=2 1.000, p=8 1.262 (drift), ...`, and a
/// last line that names the drifting groups or says none drifts. Empty when `groups` is.
pub fn render(groups: &[Group]) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let predicted = groups.iter().flat_map(|g| &g.points).any(|x| x.predicted);
    let mut out = String::from("completeness check: measured pc(p)/pc(p_min) per level");
    if predicted {
        out += " (at a p marked predicted, pp whatif's replay of the run made there, which keeps \
                its measured CPU time)";
    }
    out.push('\n');
    for g in groups {
        let points: Vec<String> = g
            .points
            .iter()
            .map(|x| {
                let flag = match (x.drifts, x.predicted) {
                    (true, true) => " (drift, predicted)",
                    (true, false) => " (drift)",
                    (false, true) => " (predicted)",
                    (false, false) => "",
                };
                format!("p={} {:.3}{flag}", x.p, x.ratio)
            })
            .collect();
        out += &format!("  {}: {}\n", name(g), points.join(", "));
    }
    let drifting: Vec<&str> = groups.iter().filter(|g| g.drifts()).map(name).collect();
    if drifting.is_empty() {
        out += &format!(
            "  pc stays within {:.0}% of pc(p_min): no hidden overhead\n",
            DRIFT * 100.0
        );
    } else {
        out += &format!(
            "  pc drifts over {:.0}% in {}: an overhead the categories miss hides in pc (see `pp --by region` of those runs)\n",
            DRIFT * 100.0,
            drifting.join("; ")
        );
    }
    out
}
