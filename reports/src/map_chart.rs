//! The winner map as a chart: each cell of the grid coloured by who is faster there (full
//! colour where the 90% interval decides it, a light tint of the lower mean where it does not),
//! the point-estimate boundary `T_A = T_B` drawn as a line, the measured runs overlaid, and
//! the axes in the factors' units and scales.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use fit::crossover::{Axis, Scale, Winner, WinnerMap};

use crate::chart::{ChartError, FAMILY, PALETTE, ensure_font};
use crate::verdict::human;

/// Width and height of the map, in pixels.
pub const SIZE: (u32, u32) = (1000, 440);

/// The winner map as an SVG document, with `runs` overlaid as `(u, v, predicted)`: measured
/// points as circles, points `pp whatif` predicted (a study's `[whatif]` rows) as squares.
pub fn svg(map: &WinnerMap, runs: &[(f64, f64, bool)]) -> Result<String, ChartError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let (u, v) = (&map.u, &map.v);
        let drawn = match (u.scale, v.scale) {
            (Scale::Linear, Scale::Linear) => draw(map, runs, &root, u.lo..u.hi, v.lo..v.hi),
            (Scale::Log, Scale::Linear) => {
                draw(map, runs, &root, (u.lo..u.hi).log_scale(), v.lo..v.hi)
            }
            (Scale::Linear, Scale::Log) => {
                draw(map, runs, &root, u.lo..u.hi, (v.lo..v.hi).log_scale())
            }
            (Scale::Log, Scale::Log) => draw(
                map,
                runs,
                &root,
                (u.lo..u.hi).log_scale(),
                (v.lo..v.hi).log_scale(),
            ),
        };
        drawn.map_err(ChartError::Draw)?;
    }
    Ok(svg)
}

/// The cell edges around grid values: halfway between neighbours (on the axis' scale), the
/// axis' ends outside.
fn edges(values: &[f64], axis: &Axis) -> Vec<f64> {
    let mid = |a: f64, b: f64| match axis.scale {
        Scale::Linear => (a + b) / 2.0,
        Scale::Log => (a * b).sqrt(),
    };
    let mut e = vec![axis.lo];
    e.extend(values.windows(2).map(|w| mid(w[0], w[1])));
    e.push(axis.hi);
    e
}

/// The colour of a cell: full where the interval decides, a tint of the lower mean where it
/// does not, grey where the means are equal.
fn colour(map: &WinnerMap, i: usize, j: usize) -> RGBColor {
    let tint = |c: RGBColor| {
        let t = |x: u8| (f64::from(x) * 0.3 + 255.0 * 0.7) as u8;
        RGBColor(t(c.0), t(c.1), t(c.2))
    };
    match map.cells[j][i] {
        Winner::A => PALETTE[0],
        Winner::B => PALETTE[1],
        Winner::Tie => {
            let c = &map.comparisons[j][i];
            if c.t_a < c.t_b {
                tint(PALETTE[0])
            } else if c.t_b < c.t_a {
                tint(PALETTE[1])
            } else {
                RGBColor(221, 221, 221)
            }
        }
    }
}

/// How many labels an axis asks for: on a whole-number axis with few values, one a value
/// (p from 2 to 3 is labelled 2 and 3, not 2.1 ... 2.9); else plotters' default.
fn labels(a: &Axis) -> usize {
    let whole = a.hi - a.lo + 1.0;
    if a.integer && matches!(a.scale, Scale::Linear) && whole <= 10.0 {
        whole as usize
    } else {
        10
    }
}

/// A tick's label: none between whole numbers on a whole-number axis.
fn tick(a: &Axis, v: f64) -> String {
    if a.integer && v.fract() != 0.0 {
        String::new()
    } else {
        human(v)
    }
}

fn draw<DB, X, Y>(
    map: &WinnerMap,
    runs: &[(f64, f64, bool)],
    root: &DrawingArea<DB, plotters::coord::Shift>,
    x: X,
    y: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let text = |e: &dyn std::fmt::Display| e.to_string();
    ensure_font()?;
    root.fill(&WHITE).map_err(|e| text(&e))?;
    let scale = |a: &Axis| match a.scale {
        Scale::Linear => "",
        Scale::Log => ", log scale",
    };
    let mut ctx = ChartBuilder::on(root)
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y)
        .map_err(|e| text(&e))?;
    ctx.configure_mesh()
        .disable_mesh()
        .x_desc(format!("{}{}", map.u.factor, scale(&map.u)))
        .y_desc(format!("{}{}", map.v.factor, scale(&map.v)))
        .label_style((FAMILY, 17))
        .axis_desc_style((FAMILY, 18))
        .x_labels(labels(&map.u))
        .y_labels(labels(&map.v))
        .x_label_formatter(&|v| tick(&map.u, *v))
        .y_label_formatter(&|v| tick(&map.v, *v))
        .draw()
        .map_err(|e| text(&e))?;
    let (ue, ve) = (edges(&map.us, &map.u), edges(&map.vs, &map.v));
    let mut cells = Vec::with_capacity(map.us.len() * map.vs.len());
    for j in 0..map.vs.len() {
        for i in 0..map.us.len() {
            cells.push(Rectangle::new(
                [(ue[i], ve[j]), (ue[i + 1], ve[j + 1])],
                colour(map, i, j).filled(),
            ));
        }
    }
    ctx.draw_series(cells).map_err(|e| text(&e))?;
    // The boundary: a line through the crossings of neighbouring levels that have one each,
    // broken where a level has none or several (there the cells say it); lone points as dots.
    let level = |v: f64| map.vs.iter().position(|&x| x == v);
    let mut per_level: Vec<Vec<f64>> = vec![Vec::new(); map.vs.len()];
    for b in &map.boundary {
        if let Some(j) = level(b.v) {
            per_level[j].push(b.u);
        }
    }
    let mut lines: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut dots: Vec<(f64, f64)> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    for (j, us) in per_level.iter().enumerate() {
        if let [u] = us[..] {
            current.push((u, map.vs[j]));
            continue;
        }
        dots.extend(us.iter().map(|&u| (u, map.vs[j])));
        match current.len() {
            0 => {}
            1 => dots.append(&mut current),
            _ => lines.push(std::mem::take(&mut current)),
        }
    }
    match current.len() {
        0 => {}
        1 => dots.append(&mut current),
        _ => lines.push(current),
    }
    ctx.draw_series(
        lines
            .into_iter()
            .map(|l| PathElement::new(l, BLACK.stroke_width(3))),
    )
    .map_err(|e| text(&e))?;
    ctx.draw_series(dots.into_iter().map(|p| Circle::new(p, 3, BLACK.filled())))
        .map_err(|e| text(&e))?;
    let inside = |&&(u, v, _): &&(f64, f64, bool)| {
        (map.u.lo..=map.u.hi).contains(&u) && (map.v.lo..=map.v.hi).contains(&v)
    };
    let measured = runs.iter().filter(inside).filter(|r| !r.2);
    ctx.draw_series(measured.map(|&(u, v, _)| {
        EmptyElement::at((u, v))
            + Circle::new((0, 0), 5, WHITE.filled())
            + Circle::new((0, 0), 5, BLACK.stroke_width(2))
    }))
    .map_err(|e| text(&e))?;
    let predicted = runs.iter().filter(inside).filter(|r| r.2);
    ctx.draw_series(predicted.map(|&(u, v, _)| {
        EmptyElement::at((u, v))
            + Rectangle::new([(-5, -5), (5, 5)], WHITE.filled())
            + Rectangle::new([(-5, -5), (5, 5)], BLACK.stroke_width(2))
    }))
    .map_err(|e| text(&e))?;
    root.present().map_err(|e| text(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fit::crossover::Axis;

    #[test]
    fn cell_edges_lie_between_grid_values_on_the_axis_scale() {
        let log = Axis::new("n", 1.0, 100.0).unwrap();
        assert_eq!(log.scale, Scale::Log);
        let e = edges(&[1.0, 10.0, 100.0], &log);
        assert_eq!(e.len(), 4);
        assert_eq!((e[0], e[3]), (1.0, 100.0));
        assert!((e[1] - 10f64.sqrt()).abs() < 1e-12 && (e[2] - 1000f64.sqrt()).abs() < 1e-12);
        let linear = Axis::new("p", 2.0, 8.0).unwrap();
        assert_eq!(linear.scale, Scale::Linear);
        assert_eq!(edges(&[2.0, 5.0, 8.0], &linear), [2.0, 3.5, 6.5, 8.0]);
    }
}
