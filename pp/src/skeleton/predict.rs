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

/// How far, as a fraction, a skeleton's dedicated run may be from 1/K of its application's
/// before `pp skeleton predict` warns (docs/skeletons.md#pp-skeleton-predict). The validation's
/// skeletons were within about 7% except the hybrid's of 3 to 6 repeats (+10%), whose application
/// changes its pace in runs of tens of repeats that they are too short to see
/// (docs/results.md#the-floor-each-application-against-itself-a-round-later).
pub const FAITHFUL: f64 = 0.10;

/// The prediction from the runs' profiles.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// T_app / T_skel.
    pub ratio: f64,
    /// K, as the skeleton's log says it was made (`k` in its header), where it does.
    pub k: Option<f64>,
    /// `wall` first, then the categories in report order.
    pub rows: Vec<Row>,
}

fn wall(p: &Profile) -> f64 {
    p.window.1.saturating_sub(p.window.0) as f64
}

/// Which of [`predict`]'s runs an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// The application's dedicated run.
    App,
    /// The skeleton's dedicated run.
    Skeleton,
    /// The skeleton's run under the condition.
    Under,
}

/// Predicts the application under the condition from its dedicated run `app`, the skeleton's
/// dedicated run `skel` and the skeleton's run under the condition `under`; `app_under`, the
/// application's measured run there, is shown beside it. A run of no length has no time to
/// scale or to scale by: the error says which.
pub fn predict(
    app: &Profile,
    skel: &Profile,
    under: &Profile,
    app_under: Option<&Profile>,
) -> Result<Prediction, (Run, String)> {
    for (run, p, what) in [
        (Run::Skeleton, skel, "the skeleton's dedicated run"),
        (Run::App, app, "the application's dedicated run"),
        (Run::Under, under, "the skeleton's run under the condition"),
    ] {
        if wall(p) <= 0.0 {
            return Err((run, format!("{what} has no length (wall = 0)")));
        }
    }
    let ratio = wall(app) / wall(skel);
    let k = skel
        .header
        .params
        .iter()
        .find(|(key, _)| key == "k")
        .and_then(|(_, v)| v.parse::<f64>().ok())
        .filter(|k| k.is_finite() && *k >= 1.0);
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
    Ok(Prediction { ratio, k, rows })
}

impl Prediction {
    /// The predicted application time under the condition (ns).
    pub fn wall(&self) -> f64 {
        self.rows[0].predicted
    }

    /// How far the skeleton's dedicated run is from 1/K of the application's, T_skel × K / T_app
    /// − 1 (none where the skeleton's log has no K).
    pub fn off(&self) -> Option<f64> {
        // Finite: [`predict`] refuses runs of no length.
        self.k.map(|k| k / self.ratio - 1.0)
    }

    /// The warning where the skeleton's dedicated run is further than [`FAITHFUL`] from 1/K of
    /// the application's.
    pub fn warning(&self) -> Option<String> {
        let off = self.off()?;
        (off.abs() > FAITHFUL).then(|| {
            format!(
                "the skeleton's dedicated run is {:.1}% {} than 1/K of the application's (K = {:.3}): it does not run as its application does, and may not follow it under the condition either (docs/skeletons.md#pp-skeleton-predict)",
                100.0 * off.abs(),
                if off > 0.0 { "longer" } else { "shorter" },
                self.k.unwrap_or(1.0)
            )
        })
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
        if let (Some(k), Some(off)) = (self.k, self.off()) {
            let _ = writeln!(
                out,
                "K = {k:.3} (the skeleton's header): its dedicated run is {:+.1}% off 1/K of the application's",
                100.0 * off
            );
        }
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
