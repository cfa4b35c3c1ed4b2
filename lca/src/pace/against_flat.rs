//! The hierarchical model beside the flat one (docs/pace.md#against-the-flat-model): for an
//! implementation with both a PACE model and a model of formulas among `lca report`'s models,
//! each validation run's measured `T_p` against both predictions, which is closer, and where.

use std::fmt::Write;

use anyhow::Result;
use fit::observations::Cell;
use fit::performance::PerformanceModel;
use fit::{Condition, Datafile};

use crate::validated_error::implementation_rows;

/// One validation run.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The datafile line.
    pub line: usize,
    /// The hierarchical model's factors' values.
    pub point: Vec<f64>,
    /// Measured `T_p` (the `wall` column), seconds.
    pub measured: f64,
    /// The hierarchical model's `T_p`.
    pub hierarchical: f64,
    /// The flat model's `T_p`.
    pub flat: f64,
}

impl Run {
    /// `|predicted - measured| / measured` of the hierarchical and of the flat model.
    pub fn errors(&self) -> (f64, f64) {
        let e = |x: f64| ((x - self.measured) / self.measured).abs();
        (e(self.hierarchical), e(self.flat))
    }
}

/// One implementation's two models on its validation runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The implementation.
    pub implementation: String,
    /// The hierarchical model's factors (the runs' points).
    pub factors: Vec<String>,
    /// Its validation runs, in the datafile's order.
    pub runs: Vec<Run>,
}

/// The implementation a model is of: its `--where impl=...`, else its name.
fn implementation(model: &PerformanceModel) -> String {
    model
        .provenance
        .conditions
        .iter()
        .filter_map(|c| c.parse::<Condition>().ok())
        .find(|c| c.key == "impl" && c.op == fit::condition::Op::Eq)
        .map(|c| c.value)
        .unwrap_or_else(|| model.name.clone())
}

/// Every implementation with a hierarchical (PACE) and a flat model among `models`, compared on
/// the rows of `data` that meet `validation` within its own rows. An implementation without
/// such rows is left out.
pub fn compare(
    models: &[&PerformanceModel],
    data: &Datafile,
    validation: &[Condition],
) -> Result<Vec<Comparison>> {
    let mut out = Vec::new();
    for h in models.iter().filter(|m| m.evaluator.is_some()) {
        let name = implementation(h);
        let Some(f) = models
            .iter()
            .find(|m| m.evaluator.is_none() && implementation(m) == name)
        else {
            continue;
        };
        let Some(rows) = implementation_rows(h, data) else {
            continue;
        };
        let Ok(rows) = rows.filter(validation) else {
            continue;
        };
        let number = |row: usize, column: &str| match rows.cell(row, column) {
            Some(Cell::Number(x)) => Some(x),
            _ => None,
        };
        let mut runs = Vec::new();
        for (row, r) in rows.rows().iter().enumerate() {
            let at = |model: &PerformanceModel| -> Option<Vec<f64>> {
                model.factors.iter().map(|x| number(row, x)).collect()
            };
            let (Some(point), Some(flat_point), Some(measured)) =
                (at(h), at(f), number(row, "wall"))
            else {
                continue;
            };
            if measured <= 0.0 {
                continue;
            }
            runs.push(Run {
                line: r.line,
                measured,
                hierarchical: h.predict(&point).time.value,
                flat: f.predict(&flat_point).time.value,
                point,
            });
        }
        if !runs.is_empty() {
            out.push(Comparison {
                implementation: name,
                factors: h.factors.clone(),
                runs,
            });
        }
    }
    Ok(out)
}

impl Comparison {
    /// Mean relative error of the hierarchical and of the flat model.
    pub fn mean_errors(&self) -> (f64, f64) {
        let n = self.runs.len() as f64;
        self.runs.iter().fold((0.0, 0.0), |(a, b), r| {
            let (h, f) = r.errors();
            (a + h / n, b + f / n)
        })
    }

    /// Runs the hierarchical model predicts more closely than the flat one.
    pub fn hierarchical_closer(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| {
                let (h, f) = r.errors();
                h < f
            })
            .count()
    }

    /// Per value of the last factor (`p` in a PACE model), the mean error of each model:
    /// (value, hierarchical, flat, runs).
    pub fn by_last_factor(&self) -> Vec<(f64, f64, f64, usize)> {
        let mut out: Vec<(f64, f64, f64, usize)> = Vec::new();
        for r in &self.runs {
            let Some(&v) = r.point.last() else { continue };
            let (h, f) = r.errors();
            match out.iter_mut().find(|o| o.0 == v) {
                Some(o) => {
                    o.1 += h;
                    o.2 += f;
                    o.3 += 1;
                }
                None => out.push((v, h, f, 1)),
            }
        }
        for o in &mut out {
            o.1 /= o.3 as f64;
            o.2 /= o.3 as f64;
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    /// Which model predicts the validation runs better, and where, in one sentence.
    pub fn sentence(&self) -> String {
        let (h, f) = self.mean_errors();
        let better = if h < f { "hierarchical" } else { "flat" };
        let last = self.factors.last().map_or("", String::as_str);
        let wins: Vec<String> = self
            .by_last_factor()
            .iter()
            .filter(|o| o.1 < o.2)
            .map(|o| format!("{last} = {}", o.0))
            .collect();
        let where_ = if wins.is_empty() {
            format!("the flat model is closer on average at every {last}")
        } else {
            format!(
                "the hierarchical model is closer on average at {}",
                wins.join(", ")
            )
        };
        format!(
            "{}: the {better} model predicts the {} validation runs better (mean T_p error {:.1}% hierarchical, {:.1}% flat; the hierarchical one is closer on {} of them); {where_}.",
            self.implementation,
            self.runs.len(),
            100.0 * h,
            100.0 * f,
            self.hierarchical_closer()
        )
    }

    /// The table and the sentence as text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = write!(out, "{:>6}", "line");
        for f in &self.factors {
            let _ = write!(out, " {f:>8}");
        }
        let _ = writeln!(
            out,
            " {:>10} {:>12} {:>7} {:>10} {:>7}  closer",
            "measured", "hierarchical", "error", "flat", "error"
        );
        for r in &self.runs {
            let (h, f) = r.errors();
            let _ = write!(out, "{:>6}", r.line);
            for v in &r.point {
                let _ = write!(out, " {v:>8}");
            }
            let _ = writeln!(
                out,
                " {:>10.4} {:>12.4} {:>6.1}% {:>10.4} {:>6.1}%  {}",
                r.measured,
                r.hierarchical,
                100.0 * h,
                r.flat,
                100.0 * f,
                if h < f { "hierarchical" } else { "flat" }
            );
        }
        out
    }

    /// The section of the HTML report.
    pub fn html(&self) -> String {
        use reports::html::escape;
        format!(
            "<h2>Hierarchical against flat: {}</h2>\n<p class=\"verdict\">{}</p>\n<pre>{}</pre>\n",
            escape(&self.implementation),
            escape(&self.sentence()),
            escape(&self.text())
        )
    }
}
