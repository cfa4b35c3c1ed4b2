//! Charts of measured lost cycles and fitted model curves, as SVG or PNG.
//!
//! A [`Chart`] holds the measured observations (drawn as black dots) and the
//! candidate models' curves (drawn as coloured lines with a legend). Text is
//! drawn with a bundled DejaVu Sans font, so no system font library is needed
//! and labels such as `(0.000298 ± 0.000017)·p·√p` render everywhere.

use files::Output;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::fmt::Display;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Width and height of every chart, in pixels.
pub const SIZE: (u32, u32) = (1024, 640);
/// Longest legend line, in characters: a longer label is wrapped onto more lines.
pub const MAX_LABEL_CHARS: usize = 60;

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
pub(crate) const FAMILY: &str = "sans-serif";
const LEGEND_FONT_PX: u32 = 15;
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),  // blue
    RGBColor(255, 127, 14),  // orange
    RGBColor(44, 160, 44),   // green
    RGBColor(214, 39, 40),   // red
    RGBColor(148, 103, 189), // purple
    RGBColor(140, 86, 75),   // brown
    RGBColor(227, 119, 194), // pink
    RGBColor(23, 190, 207),  // cyan
];

/// A chart of measured points against one factor, with fitted curves.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chart {
    /// Caption above the plot.
    pub title: String,
    /// Description of the horizontal axis (the factor).
    pub x_label: String,
    /// Description of the vertical axis (the lost cycles category).
    pub y_label: String,
    /// Measured observations; replicates appear as several points.
    pub points: Vec<(f64, f64)>,
    /// Observations `pp whatif` predicted rather than measured (a study's `[whatif]` rows),
    /// drawn hollow.
    pub predicted_points: Vec<(f64, f64)>,
    /// Fitted models, best first.
    pub curves: Vec<Curve>,
}

/// One fitted model drawn as a line through dense samples, in a colour of its own, with
/// optionally a shaded band and its own measured points in the same colour.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Curve {
    /// Legend text, usually the model with its fitted coefficients.
    pub label: String,
    /// Samples in increasing x; non-finite values break the line.
    pub points: Vec<(f64, f64)>,
    /// A band `(x, low, high)` in increasing x, shaded in the curve's colour: an interval
    /// around it, or the layer under it in a stacked chart.
    pub band: Vec<(f64, f64, f64)>,
    /// The band is a stacked layer (nearly opaque), not an interval (light).
    pub area: bool,
    /// Measured points that belong to this curve, drawn in its colour.
    pub dots: Vec<(f64, f64)>,
    /// Points of this curve that `pp whatif` predicted rather than measured, drawn hollow in
    /// its colour.
    pub predicted_dots: Vec<(f64, f64)>,
}

/// Output format of a chart file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartFormat {
    /// Scalable vector graphics (`.svg`).
    Svg,
    /// Portable network graphics (`.png`).
    Png,
}

impl ChartFormat {
    /// Chooses the format from the extension of `path`, ignoring case.
    pub fn from_path(path: &Path) -> Result<Self, ChartError> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext.to_ascii_lowercase().as_str() {
            "svg" => Ok(Self::Svg),
            "png" => Ok(Self::Png),
            _ => Err(ChartError::UnknownFormat {
                path: path.to_path_buf(),
            }),
        }
    }
}

/// Why a chart could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// The file name has no extension this module can write.
    #[error("cannot tell the chart format of {}: expected extension .svg or .png", .path.display())]
    UnknownFormat {
        /// The rejected file name.
        path: PathBuf,
    },
    /// Drawing failed before any file was involved.
    #[error("cannot draw the chart: {0}")]
    Draw(String),
    /// The file was refused (not a regular file) or could not be put in place.
    #[error("cannot write chart {0}")]
    Output(files::OutputError),
    /// Drawing into or reading a file failed.
    #[error("cannot write chart {}: {cause}", .path.display())]
    Io {
        /// The file that could not be written.
        path: PathBuf,
        /// The underlying failure, in the message (not also a `source()`, which printers of
        /// the error chain would show a second time).
        cause: io::Error,
    },
}

/// Draws `chart` as an SVG document.
pub fn render_svg(chart: &Chart) -> Result<String, ChartError> {
    let mut svg = String::new();
    draw(
        chart,
        SVGBackend::with_string(&mut svg, SIZE).into_drawing_area(),
    )
    .map_err(ChartError::Draw)?;
    Ok(svg)
}

/// Draws `chart` as encoded PNG bytes.
///
/// The bitmap is encoded through a short-lived file in the temporary directory,
/// because plotters encodes PNG only into files.
pub fn render_png(chart: &Chart) -> Result<Vec<u8>, ChartError> {
    let tmp = TempFile(std::env::temp_dir().join(unique_name("lca-chart", "png")));
    draw_png_file(chart, &tmp.0)?;
    fs::read(&tmp.0).map_err(|cause| io_error(&tmp.0, cause))
}

/// Writes `chart` to `path` in the format its extension names.
///
/// Writes to a temporary file beside `path` and renames it over `path`, so a failure never
/// leaves a half-written or destroyed file; `path` must be absent or a regular file.
pub fn write(chart: &Chart, path: &Path) -> Result<(), ChartError> {
    let format = ChartFormat::from_path(path)?;
    // A PNG is drawn into a file by name.
    let mut out = match format {
        ChartFormat::Png => Output::create_named(path),
        ChartFormat::Svg => Output::create(path),
    }
    .map_err(ChartError::Output)?;
    let written = match format {
        ChartFormat::Svg => {
            let svg = render_svg(chart)?;
            out.write_all(svg.as_bytes())
        }
        ChartFormat::Png => draw_png_file(chart, out.temp_path()).map_err(|e| match e {
            ChartError::Io { cause, .. } => cause,
            other => io::Error::other(other.to_string()),
        }),
    };
    written.map_err(|cause| io_error(path, cause))?;
    out.commit().map_err(ChartError::Output)
}

/// A file removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

fn unique_name(prefix: &str, ext: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}.{}-{n}.tmp.{ext}", std::process::id())
}

fn io_error(path: &Path, cause: io::Error) -> ChartError {
    ChartError::Io {
        path: path.to_path_buf(),
        cause,
    }
}

fn draw_png_file(chart: &Chart, path: &Path) -> Result<(), ChartError> {
    draw(chart, BitMapBackend::new(path, SIZE).into_drawing_area())
        .map_err(|e| io_error(path, os_error_in(&e).unwrap_or_else(|| io::Error::other(e))))
}

/// The operating system's error that plotters' PNG encoder reports only as text (its errors
/// have no `source()`; the message nests `... IoError(Custom { ... "File too large (os error
/// 27)" })`), so that a failed PNG says its cause plainly, once.
fn os_error_in(text: &str) -> Option<io::Error> {
    let (_, rest) = text.rsplit_once("(os error ")?;
    let code = rest.split(')').next()?.parse().ok()?;
    Some(io::Error::from_raw_os_error(code))
}

/// Registers the bundled font under the family name plotters uses by default.
pub(crate) fn ensure_font() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    ok.then_some(())
        .ok_or_else(|| "the bundled font is invalid".to_string())
}

fn text<E: Display>(e: E) -> String {
    e.to_string()
}

/// Splits `s` into lines of at most `max` characters so that a formula is shown whole:
/// between the parts of a legend (`"   "`) or before a term's ` + `, and only where a part is
/// longer than a line at its other spaces (a word longer than `max` stays whole).
fn wrap(s: &str, max: usize) -> Vec<String> {
    let len = |s: &str| s.chars().count();
    // The parts, each with its separator from the previous one.
    let mut parts: Vec<(&str, String)> = Vec::new();
    for (k, piece) in s.split("   ").enumerate() {
        for (t, term) in piece.split(" + ").enumerate() {
            let (sep, text) = match (k, t) {
                (0, 0) => ("", term.to_string()),
                (_, 0) => ("   ", term.to_string()),
                _ => (" ", format!("+ {term}")),
            };
            parts.push((sep, text));
        }
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for (sep, part) in parts {
        if !line.is_empty() && len(&line) + len(sep) + len(&part) <= max {
            line.push_str(sep);
            line.push_str(&part);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        // A part longer than a line: at its spaces.
        for word in part.split(' ') {
            if !line.is_empty() && len(&line) + 1 + len(word) > max {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.push(line);
    lines
}

/// Cuts `s` to at most `max` characters, marking a cut with an ellipsis.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut cut: String = s.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// Smallest and largest of `values`, or `None` when there is none.
fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// Widens `(lo, hi)` by 5% on each side; a degenerate range gets a visible width.
fn pad((lo, hi): (f64, f64)) -> (f64, f64) {
    let span = hi - lo;
    let (lo, hi) = if span > 0.0 {
        (lo - 0.05 * span, hi + 0.05 * span)
    } else {
        let half = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        (lo - half, hi + half)
    };
    if lo.is_finite() && hi.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (-1.0, 1.0)
    }
}

fn finite((x, y): &(f64, f64)) -> bool {
    x.is_finite() && y.is_finite()
}

/// Axis ranges: all finite data, the y range clamped to 1.5 measured spans beyond
/// the measurements, and starting at 0 when the measurements are non-negative.
fn ranges(chart: &Chart) -> ((f64, f64), (f64, f64)) {
    let dots = chart
        .curves
        .iter()
        .flat_map(|c| c.dots.iter().chain(&c.predicted_dots));
    let measured: Vec<(f64, f64)> = chart
        .points
        .iter()
        .chain(&chart.predicted_points)
        .chain(dots)
        .copied()
        .filter(finite)
        .collect();
    let all = || {
        let samples = chart.curves.iter().flat_map(|c| c.points.iter());
        measured.iter().chain(samples.filter(|p| finite(p)))
    };
    let x = bounds(all().map(|p| p.0)).unwrap_or((0.0, 1.0));
    let mut y = bounds(all().map(|p| p.1)).unwrap_or((0.0, 1.0));
    if let Some((lo, hi)) = bounds(measured.iter().map(|p| p.1)) {
        let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
        y = (y.0.max(lo - 1.5 * span), y.1.min(hi + 1.5 * span));
        if lo >= 0.0 {
            y.0 = 0.0; // lost cycles are non-negative: start at 0, clip curves below
        }
    }
    (pad(x), pad(y))
}

/// Splits a curve into polylines of finite samples, clipped to `lo..=hi` in y.
fn clip(points: &[(f64, f64)], (lo, hi): (f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = vec![];
    for seg in points.windows(2) {
        let (q, p) = (seg[0], seg[1]);
        if !finite(&q) || !finite(&p) {
            continue;
        }
        // Parameter interval of q→p that lies within the y bounds.
        let (t0, t1) = if q.1 == p.1 {
            if (lo..=hi).contains(&q.1) {
                (0.0, 1.0)
            } else {
                (1.0, 0.0)
            }
        } else {
            let (a, b) = ((lo - q.1) / (p.1 - q.1), (hi - q.1) / (p.1 - q.1));
            (a.min(b).max(0.0), a.max(b).min(1.0))
        };
        if t0 > t1 {
            continue;
        }
        let at = |t: f64| match t {
            0.0 => q,
            1.0 => p,
            _ => (q.0 + t * (p.0 - q.0), q.1 + t * (p.1 - q.1)),
        };
        let (start, end) = (at(t0), at(t1));
        match runs.last_mut() {
            Some(run) if run.last() == Some(&start) => run.push(end),
            _ => runs.push(vec![start, end]),
        }
    }
    runs
}

/// A band as polygons: its stretches of finite samples, each the upper edge forwards and the
/// lower edge back, clamped to `lo..=hi` in y (the plot's own limits).
fn bands(band: &[(f64, f64, f64)], (lo, hi): (f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new()];
    for &(x, a, b) in band {
        if x.is_finite() && a.is_finite() && b.is_finite() {
            if let Some(r) = runs.last_mut() {
                r.push((x, a.clamp(lo, hi), b.clamp(lo, hi)));
            }
        } else if runs.last().is_some_and(|r| !r.is_empty()) {
            runs.push(Vec::new());
        }
    }
    runs.into_iter()
        .filter(|r| r.len() > 1)
        .map(|r| {
            let upper = r.iter().map(|&(x, _, b)| (x, b));
            let lower = r.iter().rev().map(|&(x, a, _)| (x, a));
            upper.chain(lower).collect()
        })
        .collect()
}

/// The corner whose legend box would cover the least data, upper left on ties.
fn legend_corner(
    chart: &Chart,
    labels: &[String],
    x: (f64, f64),
    y: (f64, f64),
) -> SeriesLabelPosition {
    // Rough legend size as a fraction of the plotting area (about 880x520 pixels).
    let chars = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    let w = ((40.0 + chars * 0.55 * f64::from(LEGEND_FONT_PX)) / 880.0).min(1.0);
    let h = ((10.0 + labels.len() as f64 * 1.6 * f64::from(LEGEND_FONT_PX)) / 520.0).min(1.0);
    let norm = |(px, py): (f64, f64)| ((px - x.0) / (x.1 - x.0), (py - y.0) / (y.1 - y.0));
    let covers = |left: bool, top: bool, (u, v): (f64, f64)| {
        let in_x = if left { u <= w + 0.02 } else { u >= 0.98 - w };
        let in_y = if top { v >= 0.98 - h } else { v <= h + 0.02 };
        in_x && in_y
    };
    let corners = [
        (true, true, SeriesLabelPosition::UpperLeft),
        (false, true, SeriesLabelPosition::UpperRight),
        (false, false, SeriesLabelPosition::LowerRight),
        (true, false, SeriesLabelPosition::LowerLeft),
    ];
    let score = |left: bool, top: bool| {
        let dots = chart
            .points
            .iter()
            .filter(|p| finite(p) && covers(left, top, norm(**p)));
        let lines = chart.curves.iter().map(|c| {
            let hit = c
                .points
                .iter()
                .filter(|p| finite(p) && covers(left, top, norm(**p)));
            hit.count() as f64 / c.points.len().max(1) as f64
        });
        dots.count() as f64 + lines.sum::<f64>()
    };
    let best = corners.into_iter().map(|(l, t, pos)| (score(l, t), pos));
    best.fold((f64::INFINITY, SeriesLabelPosition::UpperLeft), |a, b| {
        if b.0 < a.0 { b } else { a }
    })
    .1
}

/// Draws `chart` onto `root` and presents it.
fn draw<DB: DrawingBackend>(chart: &Chart, root: DrawingArea<DB, Shift>) -> Result<(), String> {
    ensure_font()?;
    root.fill(&WHITE).map_err(text)?;
    let (x, y) = ranges(chart);
    let mut ctx = ChartBuilder::on(&root)
        .caption(truncate(&chart.title, 90), (FAMILY, 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(text)?;
    ctx.configure_mesh()
        .x_desc(truncate(&chart.x_label, 100))
        .y_desc(truncate(&chart.y_label, 60))
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .x_label_formatter(&|v| tick(*v, x.1 - x.0))
        .y_label_formatter(&|v| tick(*v, y.1 - y.0))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(text)?;

    let mut labels = vec![];
    for (i, curve) in chart.curves.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut lines = match curve.label.trim() {
            "" => vec![format!("curve {}", i + 1)],
            l => wrap(l, MAX_LABEL_CHARS),
        }
        .into_iter();
        let label = lines.next().unwrap_or_default();
        if !curve.band.is_empty() {
            let opacity = if curve.area { 0.75 } else { 0.2 };
            for run in bands(&curve.band, y) {
                ctx.draw_series(std::iter::once(Polygon::new(
                    run,
                    color.mix(opacity).filled(),
                )))
                .map_err(text)?;
            }
        }
        let paths = clip(&curve.points, y).into_iter();
        ctx.draw_series(paths.map(|run| PathElement::new(run, color.stroke_width(2))))
            .map_err(text)?
            .label(label.clone())
            .legend(move |(lx, ly)| {
                PathElement::new([(lx, ly), (lx + 20, ly)], color.stroke_width(2))
            });
        labels.push(label);
        // A long label goes on in legend lines of its own, without a marker.
        for more in lines {
            ctx.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(text)?
                .label(format!("  {more}"))
                .legend(|(lx, ly)| EmptyElement::at((lx, ly)));
            labels.push(more);
        }
    }
    for (i, curve) in chart.curves.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let dots = curve
            .dots
            .iter()
            .filter(|p| finite(p) && (y.0..=y.1).contains(&p.1));
        ctx.draw_series(dots.map(|&p| {
            EmptyElement::at(p)
                + Circle::new((0, 0), 5, color.filled())
                + Circle::new((0, 0), 5, BLACK.stroke_width(1))
        }))
        .map_err(text)?;
        let hollow = curve
            .predicted_dots
            .iter()
            .filter(|p| finite(p) && (y.0..=y.1).contains(&p.1));
        ctx.draw_series(hollow.map(|&p| {
            EmptyElement::at(p)
                + Circle::new((0, 0), 5, WHITE.filled())
                + Circle::new((0, 0), 5, color.stroke_width(2))
        }))
        .map_err(text)?;
    }
    if !chart.points.is_empty() {
        let dots = chart
            .points
            .iter()
            .filter(|p| finite(p) && (y.0..=y.1).contains(&p.1));
        ctx.draw_series(dots.map(|&p| Circle::new(p, 4, BLACK.filled())))
            .map_err(text)?
            .label("measured")
            .legend(|(lx, ly)| Circle::new((lx + 10, ly), 4, BLACK.filled()));
        labels.push("measured".into());
    }
    let hollow = chart
        .predicted_points
        .iter()
        .filter(|p| finite(p) && (y.0..=y.1).contains(&p.1));
    ctx.draw_series(hollow.map(|&p| Circle::new(p, 4, BLACK.stroke_width(2))))
        .map_err(text)?;
    if !chart.predicted_points.is_empty()
        || chart.curves.iter().any(|c| !c.predicted_dots.is_empty())
    {
        let label = "hollow: predicted by pp whatif, not measured";
        ctx.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(text)?
            .label(label)
            .legend(|(lx, ly)| Circle::new((lx + 10, ly), 4, BLACK.stroke_width(2)));
        labels.push(label.into());
    }

    ctx.configure_series_labels()
        .position(legend_corner(chart, &labels, x, y))
        .margin(12)
        .legend_area_size(30)
        .label_font((FAMILY, LEGEND_FONT_PX))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(text)?;
    root.present().map_err(text)
}

/// Short tick label on an axis `span` long: plain for moderate magnitudes,
/// scientific otherwise, and exactly 0 for rounding noise around 0.
fn tick(v: f64, span: f64) -> String {
    let a = v.abs();
    if a <= 1e-9 * span {
        "0".into()
    } else if !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.2e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        format!("{mantissa}e{exp}")
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_labels_wrap_at_spaces_whole() {
        let label = "(0.000298 ± 0.000017)·p·√p + (1.5 ± 0.2)·n   R2 0.991";
        assert_eq!(
            wrap(label, 30),
            ["(0.000298 ± 0.000017)·p·√p", "+ (1.5 ± 0.2)·n   R2 0.991"]
        );
        assert_eq!(
            wrap(label, 24),
            [
                "(0.000298 ±",
                "0.000017)·p·√p",
                "+ (1.5 ± 0.2)·n",
                "R2 0.991"
            ]
        );
        assert_eq!(wrap(label, 200), [label]);
        assert_eq!(wrap("", 10), [""]);
        // Nothing is lost: the words come back in order.
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(words(&wrap(label, 10).join(" ")), words(label));
    }

    #[test]
    fn a_band_is_a_polygon_per_finite_stretch_clamped_to_the_plot() {
        let band = [
            (0.0, 1.0, 2.0),
            (1.0, 1.0, 9.0),
            (2.0, f64::NAN, 2.0),
            (3.0, 0.0, 1.0),
            (4.0, 0.5, 1.5),
        ];
        let polygons = bands(&band, (0.0, 5.0));
        assert_eq!(
            polygons,
            [
                vec![(0.0, 2.0), (1.0, 5.0), (1.0, 1.0), (0.0, 1.0)],
                vec![(3.0, 1.0), (4.0, 1.5), (4.0, 0.5), (3.0, 0.0)],
            ]
        );
    }

    #[test]
    fn truncate_counts_characters_not_bytes() {
        assert_eq!(truncate("√p", 2), "√p");
        assert_eq!(truncate("√√√", 2), "√…");
        assert_eq!(
            truncate(&"é".repeat(100), MAX_LABEL_CHARS).chars().count(),
            60
        );
    }

    #[test]
    fn clip_breaks_at_non_finite_values_and_bounds() {
        let nan = f64::NAN;
        let pts = [
            (0.0, 0.0),
            (1.0, 1.0),
            (2.0, nan),
            (3.0, 1.0),
            (4.0, 3.0),
            (5.0, 1.0),
        ];
        let runs = clip(&pts, (0.0, 2.0));
        assert_eq!(
            runs,
            vec![
                vec![(0.0, 0.0), (1.0, 1.0)],
                vec![(3.0, 1.0), (3.5, 2.0)],
                vec![(4.5, 2.0), (5.0, 1.0)],
            ]
        );
        assert!(clip(&[(0.0, 5.0), (1.0, 6.0)], (0.0, 2.0)).is_empty());
    }

    #[test]
    fn y_range_starts_at_zero_and_ignores_exploding_curves() {
        let chart = Chart {
            points: vec![(1.0, 1.0), (2.0, 2.0)],
            curves: vec![Curve {
                label: "exp".into(),
                points: vec![(1.0, 1.0), (2.0, 1e12)],
                ..Curve::default()
            }],
            ..Chart::default()
        };
        let (x, y) = ranges(&chart);
        assert!(x.0 < 1.0 && x.1 > 2.0);
        assert!(y.0 < 0.0 && y.0 > -0.5, "{y:?}");
        assert!(y.1 > 2.0 && y.1 < 4.0, "{y:?}");
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(-2.78e-17, 0.5), "0");
        assert_eq!(tick(0.25, 1.0), "0.25");
        assert_eq!(tick(12_000_000.0, 1e7), "1.2e7");
        assert_eq!(tick(0.000_15, 1e-3), "1.5e-4");
    }

    #[test]
    fn legend_avoids_the_measured_points() {
        let chart = Chart {
            // A column of points along the left edge, one point at the lower right.
            points: (0..20)
                .map(|i| (0.0, f64::from(i)))
                .chain([(10.0, 0.0)])
                .collect(),
            ..Chart::default()
        };
        let (x, y) = ranges(&chart);
        let pos = legend_corner(&chart, &["measured".into()], x, y);
        assert!(matches!(pos, SeriesLabelPosition::UpperRight), "{pos:?}");
    }
}

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn a_png_encoder_failure_says_the_os_error_plainly() {
        let text = "backend error: Drawing backend error: ImageError(IoError(Custom { kind: Other, error: \"File too large (os error 27)\" }))";
        let e = os_error_in(text).unwrap();
        assert_eq!(e.raw_os_error(), Some(27));
        assert!(os_error_in("the bundled font is invalid").is_none());
    }

    #[test]
    fn an_io_failure_is_said_once_in_the_error_chain() {
        // `lca` prints errors with their chain (`{:#}`): the cause must not come twice.
        let e = io_error(
            Path::new("li.svg"),
            io::Error::from_raw_os_error(28), // ENOSPC
        );
        let chain = format!("{:#}", anyhow::Error::from(e));
        assert_eq!(
            chain.matches("No space left on device").count(),
            1,
            "{chain}"
        );
    }
}
