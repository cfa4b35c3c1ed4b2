//! The HTML report: one self-contained file (charts inline as SVG, no script, no external
//! resource) that opens offline. Every user-supplied string is escaped.

use std::fmt::Write as _;

use fit::crossover::WinnerMap;
use fit::performance::{Description, PerformanceModel};
use fit::validation::Validation;

use crate::chart::{Chart, ChartError, render_svg};
use crate::figures::{
    Runs, category_charts, comparison_charts, speedup_charts, stacked_charts, validation_chart,
};
use crate::file_names::distinct_stems;
use crate::number::significant;
use crate::verdict::human;

/// One implementation in a report.
pub struct Section<'a> {
    /// Its model.
    pub model: &'a PerformanceModel,
    /// Its measured runs (may be empty).
    pub runs: Runs,
    /// Its validation, when measured runs were given.
    pub validation: Option<Validation>,
}

/// A report: the HTML page and its charts (named), to be written beside it as files too.
pub struct Report {
    /// The page.
    pub html: String,
    /// Every chart of the page with a file stem (distinct, bounded: see
    /// [`crate::file_names`]), in page order.
    pub charts: Vec<(String, Chart)>,
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;\
color:#222}h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;\
text-align:left;vertical-align:top}code{font-size:.95em;overflow-wrap:anywhere}\
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(640px,1fr));gap:1em}\
figure{margin:0}figure.map{max-width:1000px}svg{width:100%;height:auto;display:block}p.note{color:#555}p.verdict{font-size:1.15em;background:#f4f7fb;border-left:4px solid #4a90d9;padding:.6em .8em}.warn{color:#a40000}";

/// Builds the report: the title, then `lead` HTML (already escaped: the verdict and the winner
/// map of two implementations), then the sections.
pub fn report(title: &str, lead: &str, sections: &[Section]) -> Result<Report, ChartError> {
    let mut html = String::new();
    let mut charts: Vec<(String, Chart)> = Vec::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{0}</title><style>{STYLE}</style></head><body>\n<h1>{0}</h1>\n\
         <p class=\"note\">Lost cycles analysis: T<sub>p</sub> = (pc + li + ip + sl + cl + rc) / p. \
         Intervals are 90%.</p>\n",
        escape(title)
    );
    html.push_str(lead);
    // The comparison's chart files are `compare-NN`; an implementation named so gets another.
    let mut stems = distinct_stems(
        std::iter::once("compare").chain(sections.iter().map(|s| s.model.name.as_str())),
    );
    let compare = stems.remove(0);
    if let [a, b] = sections {
        let figures = comparison_charts((a.model, &a.runs), (b.model, &b.runs));
        if !figures.is_empty() {
            grid(&mut html, &mut charts, &compare, figures)?;
        }
    }
    for (section, stem) in sections.iter().zip(&stems) {
        let model = section.model;
        let name = escape(&model.name);
        let _ = writeln!(html, "<h2>{name}</h2>");
        match model.evaluator.as_ref().and_then(|e| e.describe()) {
            // A model computed by a program (a PACE model): what it is, not its placeholder
            // categories.
            Some(d) => described(&mut html, &d),
            None => {
                category_table(&mut html, model);
                provenance(&mut html, model);
            }
        }
        if let Some(v) = &section.validation {
            let e = v.model_errors();
            let predicted = (0..v.points.len())
                .filter(|&i| section.runs.is_predicted(i))
                .count();
            let _ = write!(
                html,
                "<p>Against the {} runs of this implementation (those the model was built from \
                 included{}): mean relative error of T<sub>p</sub> {:.1}%, max {:.1}%",
                v.points.len(),
                if predicted == 0 {
                    String::new()
                } else {
                    format!("; {predicted} of them predicted by pp whatif, not measured")
                },
                100.0 * e.mean,
                100.0 * e.max
            );
            if let Some(b) = v.baseline_errors() {
                let _ = write!(
                    html,
                    "; the paper's baseline (plane through the corners) {:.1}%, max {:.1}%",
                    100.0 * b.mean,
                    100.0 * b.max
                );
            }
            html.push_str(".</p>\n");
        }
        let mut figures: Vec<Chart> = stacked_charts(model);
        figures.extend(speedup_charts(model));
        figures.extend(validation_chart(model, &section.runs));
        figures.extend(category_charts(model, &section.runs));
        grid(&mut html, &mut charts, stem, figures)?;
    }
    html.push_str("</body></html>\n");
    Ok(Report { html, charts })
}

/// Each category's model, combination, fit and trust, as a table.
fn category_table(html: &mut String, model: &PerformanceModel) {
    html.push_str(
        "<table><tr><th>category</th><th>model</th><th>combination</th><th>R²</th>\
         <th>LOO error</th><th>trust</th></tr>\n",
    );
    for c in &model.categories {
        let combination = c
            .combination
            .map_or("written by hand".into(), |c| c.to_string());
        let warnings = crate::model::warnings(c);
        let trust = if warnings.is_empty() {
            "ok".to_string()
        } else {
            format!(
                "<span class=\"warn\">{}</span>",
                escape(&warnings.join("; "))
            )
        };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{trust}</td></tr>",
            escape(&c.category),
            escape(c.fit.model.text()),
            escape(&combination),
            significant(c.fit.r2, 4),
            significant(c.fit.cv, 3)
        );
    }
    html.push_str("</table>\n");
}

/// The runs a model was built from, their conditions, and factors that varied together in them.
fn provenance(html: &mut String, model: &PerformanceModel) {
    for line in crate::model::together(model) {
        let _ = writeln!(html, "<p class=\"warn\">{}</p>", escape(&line));
    }
    let p = &model.provenance;
    if !p.datafile.is_empty() {
        let _ = writeln!(
            html,
            "<p class=\"note\">Built from {} runs of <code>{}</code>{}.</p>",
            p.lines.len(),
            escape(&p.datafile),
            if p.conditions.is_empty() {
                String::new()
            } else {
                format!(" where <code>{}</code>", escape(&p.conditions.join(", ")))
            }
        );
    }
}

/// A model computed by a program, as it describes itself: its sentences, its tables, the
/// models of formulas it is made of, and its builder's notes.
fn described(html: &mut String, d: &Description) {
    for sentence in &d.sentences {
        let _ = writeln!(html, "<p>{}</p>", escape(sentence));
    }
    for (title, rows) in &d.tables {
        let _ = writeln!(html, "<h3>{}</h3>\n<table>", escape(title));
        for (i, row) in rows.iter().enumerate() {
            let cell = if i == 0 { "th" } else { "td" };
            html.push_str("<tr>");
            for c in row {
                let _ = write!(html, "<{cell}>{}</{cell}>", escape(c));
            }
            html.push_str("</tr>\n");
        }
        html.push_str("</table>\n");
    }
    for (title, part) in &d.parts {
        let _ = writeln!(html, "<h3>{}</h3>", escape(title));
        category_table(html, part);
        provenance(html, part);
    }
    if !d.notes.is_empty() {
        html.push_str("<p class=\"note\">The builder's notes:</p>\n<ul class=\"note\">");
        for n in &d.notes {
            let _ = write!(html, "<li>{}</li>", escape(n));
        }
        html.push_str("</ul>\n");
    }
}

/// The figures as a grid of inline SVG charts, each also kept to be written as `stem-NN`.
fn grid(
    html: &mut String,
    charts: &mut Vec<(String, Chart)>,
    stem: &str,
    figures: Vec<Chart>,
) -> Result<(), ChartError> {
    html.push_str("<div class=\"charts\">\n");
    for (i, chart) in figures.into_iter().enumerate() {
        let svg = render_svg(&chart)?;
        let _ = writeln!(
            html,
            "<figure>{}</figure>",
            scalable(svg.trim_start_matches(|c| c != '<'))
        );
        charts.push((format!("{stem}-{:02}", i + 1), chart));
    }
    html.push_str("</div>\n");
    Ok(())
}

/// The verdict and the winner map of two implementations as a coloured grid (the second factor
/// upwards), with the crossover boundary's points folded under it.
pub fn winner_map(map: &WinnerMap, runs: &[(f64, f64, bool)], predicted: Option<&str>) -> String {
    let swatch = |colour: &str, text: &str| {
        format!(
            "<span style=\"background:{colour};padding:0 .5em;margin-right:.3em\">&nbsp;</span>{text}"
        )
    };
    let (a, b) = (escape(&map.a), escape(&map.b));
    let decided = if map.intervals {
        "faster at 90%"
    } else {
        "faster (no intervals: untested)"
    };
    let mut legend = vec![
        swatch("#1f77b4", &format!("{a} {decided}")),
        swatch("#ff7f0e", &format!("{b} {decided}")),
        swatch("#bbd6e8", &format!("{a}'s mean lower, undecided")),
        swatch("#ffd8b6", &format!("{b}'s mean lower, undecided")),
        "<b>&mdash;</b> T<sub>A</sub> = T<sub>B</sub> (means)".to_string(),
        "&#9675; measured runs".to_string(),
    ];
    if runs.iter().any(|r| r.2) {
        legend.push("&#9633; runs predicted by pp whatif, not measured".to_string());
    }
    let mut html = format!(
        "<h2>Which is faster: {a} (A) or {b} (B)</h2>\n<p class=\"verdict\">{}</p>\n\
         <p>{} across, {} up{}: {}.</p>\n",
        escape(&match predicted {
            Some(note) => format!("{} {note}", crate::verdict::map(map)),
            None => crate::verdict::map(map),
        }),
        escape(&map.u.factor),
        escape(&map.v.factor),
        if map.fixed.is_empty() {
            String::new()
        } else {
            let fixed: Vec<String> = map
                .fixed
                .iter()
                .map(|(f, v)| format!("{f} = {}", human(*v)))
                .collect();
            format!(" at {}", escape(&fixed.join(", ")))
        },
        legend.join(", ")
    );
    match crate::map_chart::svg(map, runs) {
        Ok(svg) => {
            let _ = writeln!(
                html,
                "<figure class=\"map\">{}</figure>",
                scalable_map(&svg)
            );
        }
        Err(e) => {
            let _ = writeln!(html, "<p class=\"warn\">{}</p>", escape(&e.to_string()));
        }
    }
    if map.boundary.is_empty() {
        html.push_str("<p>No crossover inside the map.</p>\n");
    } else {
        let points: Vec<String> = map
            .boundary
            .iter()
            .map(|b| {
                let what = match b.significant {
                    Some(true) => " (the winner changes at 90%)",
                    Some(false) => " (not significant at 90%)",
                    None => "",
                };
                format!(
                    "{}={} at {}={}{what}",
                    escape(&map.u.factor),
                    significant(b.u, 4),
                    escape(&map.v.factor),
                    significant(b.v, 4)
                )
            })
            .collect();
        let _ = writeln!(
            html,
            "<details><summary>Boundary (T<sub>A</sub> = T<sub>B</sub>): {} points</summary>\
             <p>{}.</p></details>",
            points.len(),
            points.join("; ")
        );
    }
    html
}

/// The map's SVG with a viewBox of its own size.
fn scalable_map(svg: &str) -> String {
    let svg = svg
        .trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .trim_start();
    let (w, h) = crate::map_chart::SIZE;
    svg.replacen("<svg ", &format!("<svg viewBox=\"0 0 {w} {h}\" "), 1)
}

/// Gives an SVG a viewBox so that CSS can scale it to its container.
fn scalable(svg: &str) -> String {
    let svg = svg
        .trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .trim_start();
    if svg.contains("viewBox") {
        return svg.to_string();
    }
    let (w, h) = crate::chart::SIZE;
    svg.replacen("<svg ", &format!("<svg viewBox=\"0 0 {w} {h}\" "), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<b a=\"x\">&'"),
            "&lt;b a=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn svgs_get_a_view_box() {
        let s = scalable("<svg width=\"1024\" height=\"640\">");
        assert!(s.starts_with("<svg viewBox=\"0 0 1024 640\" "), "{s}");
    }
}
