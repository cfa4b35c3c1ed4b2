//! The figures of a report, as [`Chart`]s computed from performance models and measured runs:
//! each category's fitted curves against each factor with the measured points of that edge,
//! lost cycles stacked against each factor, predicted against measured `T_p`, and speedup and
//! efficiency.

use fit::performance::PerformanceModel;

use crate::chart::{Chart, Curve};

/// Samples along a factor's range: on a log scale when it spans more than 8x and is positive.
fn samples(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    let log = lo > 0.0 && hi / lo > 8.0;
    (0..count)
        .map(|i| {
            let t = i as f64 / (count - 1) as f64;
            if log {
                (lo.ln() + t * (hi.ln() - lo.ln())).exp()
            } else {
                lo + t * (hi - lo)
            }
        })
        .collect()
}

/// Measured runs: one point per run, factor values in the model's order, and per category
/// and for `T_p` the measured value (NaN where missing).
#[derive(Debug, Clone, Default)]
pub struct Runs {
    /// Factor values of each run.
    pub points: Vec<Vec<f64>>,
    /// Category values of each run, in the model's category order.
    pub categories: Vec<Vec<f64>>,
    /// Measured `T_p` of each run.
    pub time: Vec<f64>,
    /// Whether each run was predicted by `pp whatif` rather than measured (a `predicted`
    /// column: a study's `[whatif]` rows); empty means none was. Drawn hollow.
    pub predicted: Vec<bool>,
}

impl Runs {
    /// Whether run `i` was predicted rather than measured.
    pub fn is_predicted(&self, i: usize) -> bool {
        self.predicted.get(i).copied().unwrap_or(false)
    }
}

/// The other factors' extremes: each combination of their low and high levels.
fn edges(model: &PerformanceModel, factor: usize) -> Vec<Vec<f64>> {
    let mut combos: Vec<Vec<f64>> = vec![Vec::new()];
    for (g, &(lo, hi)) in model.ranges.iter().enumerate() {
        let levels: Vec<f64> = if g == factor {
            vec![f64::NAN]
        } else if lo == hi {
            vec![lo]
        } else {
            vec![lo, hi]
        };
        combos = combos
            .into_iter()
            .flat_map(|c| {
                levels.iter().map(move |&l| {
                    let mut c = c.clone();
                    c.push(l);
                    c
                })
            })
            .collect();
    }
    combos
}

fn at_text(model: &PerformanceModel, point: &[f64], skip: usize) -> String {
    model
        .factors
        .iter()
        .zip(point)
        .enumerate()
        .filter(|(g, _)| *g != skip)
        .map(|(_, (f, v))| format!("{f}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One chart per (category, factor): the model along the factor at each extreme of the
/// other factors, with the runs measured on those edges.
pub fn category_charts(model: &PerformanceModel, runs: &Runs) -> Vec<Chart> {
    let mut charts = Vec::new();
    for (c, category) in model.categories.iter().enumerate() {
        for (f, factor) in model.factors.iter().enumerate() {
            let (lo, hi) = model.ranges[f];
            if !(lo.is_finite() && hi.is_finite()) || lo == hi {
                continue;
            }
            let mut chart = Chart {
                title: format!(
                    "{} ({}): {} against {factor}",
                    category.category,
                    model.name,
                    category.fit.model.text()
                ),
                x_label: factor.clone(),
                y_label: format!("{} (processor-seconds)", category.category),
                ..Chart::default()
            };
            for edge in edges(model, f) {
                let curve = samples(lo, hi, 200)
                    .into_iter()
                    .map(|x| {
                        let mut point = edge.clone();
                        point[f] = x;
                        (x, category.fit.evaluate(&point))
                    })
                    .collect();
                let (mut dots, mut predicted_dots) = (Vec::new(), Vec::new());
                for (i, (point, values)) in runs.points.iter().zip(&runs.categories).enumerate() {
                    let on_edge = point
                        .iter()
                        .zip(&edge)
                        .enumerate()
                        .all(|(g, (v, e))| g == f || v == e);
                    if on_edge && values[c].is_finite() {
                        let to = if runs.is_predicted(i) {
                            &mut predicted_dots
                        } else {
                            &mut dots
                        };
                        to.push((point[f], values[c]));
                    }
                }
                chart.curves.push(Curve {
                    label: format!("model at {}", at_text(model, &edge, f)),
                    points: curve,
                    dots,
                    predicted_dots,
                    ..Curve::default()
                });
            }
            charts.push(chart);
        }
    }
    charts
}

/// Lost cycles stacked against each factor (the other factors at their highest level): one
/// filled layer per category, pc at the bottom, its top the running sum pc, pc + li, ... .
pub fn stacked_charts(model: &PerformanceModel) -> Vec<Chart> {
    let mut charts = Vec::new();
    for (f, factor) in model.factors.iter().enumerate() {
        let (lo, hi) = model.ranges[f];
        if !(lo.is_finite() && hi.is_finite()) || lo == hi {
            continue;
        }
        let at: Vec<f64> = model.ranges.iter().map(|r| r.1).collect();
        let xs = samples(lo, hi, 200);
        let mut sums = vec![0.0; xs.len()];
        let mut curves = Vec::new();
        for category in &model.categories {
            let below = sums.clone();
            for (x, sum) in xs.iter().zip(sums.iter_mut()) {
                let mut point = at.clone();
                point[f] = *x;
                *sum += category.fit.evaluate(&point);
            }
            curves.push(Curve {
                label: category.category.clone(),
                points: xs.iter().copied().zip(sums.iter().copied()).collect(),
                band: (0..xs.len()).map(|i| (xs[i], below[i], sums[i])).collect(),
                area: true,
                ..Curve::default()
            });
        }
        charts.push(Chart {
            title: format!(
                "{}: lost cycles stacked against {factor} ({})",
                model.name,
                at_text(model, &at, f)
            ),
            x_label: factor.clone(),
            y_label: "processor-seconds (stacked)".into(),
            curves,
            ..Chart::default()
        });
    }
    charts
}

/// Predicted against measured `T_p`, with the line where they are equal.
pub fn validation_chart(model: &PerformanceModel, runs: &Runs) -> Option<Chart> {
    let (mut points, mut predicted_points) = (Vec::new(), Vec::new());
    for (i, (p, t)) in runs.points.iter().zip(&runs.time).enumerate() {
        if t.is_finite() {
            let to = if runs.is_predicted(i) {
                &mut predicted_points
            } else {
                &mut points
            };
            to.push((*t, model.predict(p).time.value));
        }
    }
    let hi = points
        .iter()
        .chain(&predicted_points)
        .map(|p| p.0.max(p.1))
        .fold(0.0, f64::max);
    (!points.is_empty() || !predicted_points.is_empty()).then(|| Chart {
        title: format!("{}: predicted against measured T_p", model.name),
        x_label: "measured T_p (s)".into(),
        y_label: "predicted T_p (s)".into(),
        points,
        predicted_points,
        curves: vec![Curve {
            label: "predicted = measured".into(),
            points: vec![(0.0, 0.0), (hi, hi)],
            ..Curve::default()
        }],
    })
}

/// Speedup `pc / T_p` (the pure computation over the run time) and efficiency `pc / (p T_p)`
/// against `p`, one curve per extreme of the other factors. None without a factor `p`.
pub fn speedup_charts(model: &PerformanceModel) -> Vec<Chart> {
    let Some(f) = model.factors.iter().position(|x| x == "p") else {
        return Vec::new();
    };
    let Some(pc) = model.categories.iter().position(|c| c.category == "pc") else {
        return Vec::new();
    };
    let (lo, hi) = model.ranges[f];
    if !(lo.is_finite() && hi.is_finite()) || lo == hi {
        return Vec::new();
    }
    let mut speedup = Chart {
        title: format!("{}: speedup pc / T_p", model.name),
        x_label: "p".into(),
        y_label: "speedup".into(),
        ..Chart::default()
    };
    let mut efficiency = Chart {
        title: format!("{}: efficiency pc / (p T_p)", model.name),
        x_label: "p".into(),
        y_label: "efficiency".into(),
        ..Chart::default()
    };
    for edge in edges(model, f) {
        let label = format!("at {}", at_text(model, &edge, f));
        let (mut s, mut e) = (Vec::new(), Vec::new());
        for x in samples(lo, hi, 200) {
            let mut point = edge.clone();
            point[f] = x;
            let t = model.predict(&point);
            let computation = t.categories[pc].value;
            s.push((x, computation / t.time.value));
            e.push((x, computation / (x * t.time.value)));
        }
        speedup.curves.push(Curve {
            label: label.clone(),
            points: s,
            ..Curve::default()
        });
        efficiency.curves.push(Curve {
            label,
            points: e,
            ..Curve::default()
        });
    }
    vec![speedup, efficiency]
}

/// Both implementations' `T_p` against each factor they share, at the lowest and the highest
/// level of the other factors (the first model's ranges), each with the 90% confidence band
/// of its mean and its measured runs at that level as dots in its colour. None unless the
/// two models have the same factors.
pub fn comparison_charts(
    a: (&PerformanceModel, &Runs),
    b: (&PerformanceModel, &Runs),
) -> Vec<Chart> {
    let (ma, mb) = (a.0, b.0);
    let mut same = ma.factors.clone();
    let mut theirs = mb.factors.clone();
    same.sort();
    theirs.sort();
    if same != theirs {
        return Vec::new();
    }
    let mut charts = Vec::new();
    for (f, factor) in ma.factors.iter().enumerate() {
        // The two models' ranges of the factor together (the same factors, by name).
        let theirs = mb.factors.iter().position(|x| x == factor).unwrap_or(f);
        let lo = ma.ranges[f].0.min(mb.ranges[theirs].0);
        let hi = ma.ranges[f].1.max(mb.ranges[theirs].1);
        if !(lo.is_finite() && hi.is_finite()) || lo == hi {
            continue;
        }
        let mut chart = Chart {
            title: format!("T_p of {} and {} against {factor}", ma.name, mb.name),
            x_label: factor.clone(),
            y_label: "T_p (s), 90% band of the mean".into(),
            ..Chart::default()
        };
        for edge in edges(ma, f) {
            let at = at_text(ma, &edge, f);
            for (model, runs) in [a, b] {
                // This model's point for a value of the factor at this edge (factors by name).
                let point = |x: f64| -> Vec<f64> {
                    model
                        .factors
                        .iter()
                        .map(|g| {
                            let k = ma.factors.iter().position(|h| h == g).unwrap_or(0);
                            if k == f { x } else { edge[k] }
                        })
                        .collect()
                };
                let (mut curve, mut band) = (Vec::new(), Vec::new());
                for x in samples(lo, hi, 200) {
                    let t = model.predict(&point(x)).time;
                    curve.push((x, t.value));
                    if t.mean_half_width.is_finite() {
                        band.push((x, t.value - t.mean_half_width, t.value + t.mean_half_width));
                    }
                }
                let g = model.factors.iter().position(|h| h == factor).unwrap_or(0);
                let (mut dots, mut predicted_dots) = (Vec::new(), Vec::new());
                for (i, (p, t)) in runs.points.iter().zip(&runs.time).enumerate() {
                    let on_edge = p
                        .iter()
                        .enumerate()
                        .all(|(k, v)| k == g || point(p[g])[k] == *v);
                    if t.is_finite() && on_edge {
                        let to = if runs.is_predicted(i) {
                            &mut predicted_dots
                        } else {
                            &mut dots
                        };
                        to.push((p[g], *t));
                    }
                }
                chart.curves.push(Curve {
                    label: format!("{} at {at}", model.name),
                    points: curve,
                    band,
                    dots,
                    predicted_dots,
                    ..Curve::default()
                });
            }
        }
        charts.push(chart);
    }
    charts
}
