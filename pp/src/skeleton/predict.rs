//! The seed's prediction (docs/skeletons.md#pp-skeleton-predict): the application's time under
//! a condition is the skeleton's time under it times the ratio of their dedicated times,
//! T_app' = T_skel' × (T_app / T_skel); each lost-cycles category is the skeleton's under the
//! condition times the same ratio.

use std::fmt::Write;

use crate::profile::{CATEGORIES, Profile};

/// One row: a figure of each run (ns), and the prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `wall` or a category's key.
    pub name: &'static str,
    /// The application, dedicated (measured).
    pub app: f64,
    /// The skeleton, dedicated (measured).
    pub skel: f64,
    /// The skeleton under the condition (measured).
    pub skel_under: f64,
    /// The application under the condition (predicted).
    pub predicted: f64,
    /// The application under the condition (measured), where given.
    pub measured: Option<f64>,
}

/// The prediction from the runs' profiles.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// T_app / T_skel.
    pub ratio: f64,
    /// `wall` first, then the categories in report order.
    pub rows: Vec<Row>,
}

fn wall(p: &Profile) -> f64 {
    p.window.1.saturating_sub(p.window.0) as f64
}

/// Predicts the application under the condition from its dedicated run `app`, the skeleton's
/// dedicated run `skel` and the skeleton's run under the condition `under`; `app_under`, the
/// application's measured run there, is shown beside it.
pub fn predict(
    app: &Profile,
    skel: &Profile,
    under: &Profile,
    app_under: Option<&Profile>,
) -> Result<Prediction, String> {
    if wall(skel) <= 0.0 {
        return Err("the skeleton's dedicated run has no length (wall = 0)".into());
    }
    let ratio = wall(app) / wall(skel);
    let mut rows = vec![Row {
        name: "wall",
        app: wall(app),
        skel: wall(skel),
        skel_under: wall(under),
        predicted: wall(under) * ratio,
        measured: app_under.map(wall),
    }];
    for c in CATEGORIES {
        let get = |p: &Profile| p.totals.get(c) as f64;
        rows.push(Row {
            name: c.key(),
            app: get(app),
            skel: get(skel),
            skel_under: get(under),
            predicted: get(under) * ratio,
            measured: app_under.map(get),
        });
    }
    Ok(Prediction { ratio, rows })
}

impl Prediction {
    /// The predicted application time under the condition (ns).
    pub fn wall(&self) -> f64 {
        self.rows[0].predicted
    }

    /// The table: seconds, `(m)` measured, `(p)` predicted; the error where the application's
    /// run under the condition was given.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "T_app / T_skel = {:.3} (dedicated runs, measured); categories are processor-seconds summed over threads",
            self.ratio
        );
        let _ = writeln!(
            out,
            "{:<5} {:>12} {:>12} {:>12} {:>13} {:>13} {:>8}",
            "", "app (m)", "skel (m)", "skel' (m)", "app' (p)", "app' (m)", "error"
        );
        for r in &self.rows {
            let (measured, error) = match r.measured {
                Some(m) => (
                    format!("{:.4}", m / 1e9),
                    if m > 0.0 {
                        format!("{:+.1}%", 100.0 * (r.predicted - m) / m)
                    } else {
                        "-".into()
                    },
                ),
                None => ("-".into(), "-".into()),
            };
            let _ = writeln!(
                out,
                "{:<5} {:>12.4} {:>12.4} {:>12.4} {:>13.4} {:>13} {:>8}",
                r.name,
                r.app / 1e9,
                r.skel / 1e9,
                r.skel_under / 1e9,
                r.predicted / 1e9,
                measured,
                error
            );
        }
        out
    }
}
