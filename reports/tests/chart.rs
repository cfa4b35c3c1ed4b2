//! Tests of chart rendering and writing.

use reports::chart::{Chart, ChartError, ChartFormat, Curve, render_png, render_svg, write};
use std::fs;
use std::path::Path;

use test_support::scratch;

/// Samples `f` densely over `lo..=hi`.
fn sample(label: &str, lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> Curve {
    let points = (0..=200)
        .map(|i| lo + (hi - lo) * f64::from(i) / 200.0)
        .map(|x| (x, f(x)))
        .collect();
    Curve {
        label: label.into(),
        points,
        ..Curve::default()
    }
}

/// A chart like `lca DATAFILE --var p --cat li --plot li.png` draws.
fn example() -> Chart {
    let a = 0.000298;
    let mut points = vec![];
    for (k, p) in [1.0f64, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        .into_iter()
        .enumerate()
    {
        for r in [-1.0, 0.0, 1.0] {
            let noise = 1.0 + 0.04 * r * (k as f64 + 1.0).sin();
            points.push((p, a * p * p.sqrt() * noise));
        }
    }
    Chart {
        title: "Lost cycles li against p".into(),
        x_label: "p (processors)".into(),
        y_label: "li (seconds)".into(),
        points,
        predicted_points: Vec::new(),
        curves: vec![
            sample("(0.000298 ± 0.000017)·p·√p", 1.0, 64.0, |p| {
                a * p * p.sqrt()
            }),
            sample("(0.00231 ± 0.00012)·p·log₂ p", 1.0, 64.0, |p| {
                0.00231 * p * p.log2()
            }),
            sample("(0.0389 ± 0.0021)·p", 1.0, 64.0, |p| 0.0389 * p),
            sample("(3.9e-5 ± 2e-6)·p²", 1.0, 64.0, |p| 3.9e-5 * p * p),
            sample("(0.0123 ± 0.004) + (0.031 ± 0.002)·p", 1.0, 64.0, |p| {
                0.0123 + 0.031 * p
            }),
            sample("(1.2e-9 ± 3e-10)·eᵖ  <explodes>", 1.0, 64.0, |p| {
                1.2e-9 * p.exp()
            }),
            sample("(0.25 ± 0.03)·log₂ p", 0.0, 64.0, |p| 0.25 * p.log2()),
            sample(&"very long label ".repeat(10), 1.0, 64.0, |p| {
                0.01 * p + 0.3
            }),
            sample("ninth model, palette cycles", 1.0, 64.0, |p| {
                0.15 * p.sqrt()
            }),
        ],
    }
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR", "first chunk is IHDR");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn svg_names_title_axes_and_every_curve_escaped() {
    let mut chart = example();
    chart.title = "Lost cycles <li> & friends".into();
    let svg = render_svg(&chart).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
    assert!(svg.contains("Lost cycles &lt;li&gt; &amp; friends"));
    assert!(svg.contains("p (processors)"));
    assert!(svg.contains("li (seconds)"));
    assert!(svg.contains("measured"));
    assert!(svg.contains("(0.000298 ± 0.000017)·p·√p"));
    assert!(svg.contains("&lt;explodes&gt;"));
    assert!(!svg.contains("<explodes>"));
    // The long label (159 characters) is wrapped whole onto legend lines of at most 60: 57,
    // 59 and 41 characters, every word kept.
    let first = "very long label very long label very long label very long";
    assert!(svg.contains(&format!(">\n{first}\n<")), "missing {first}");
    let second = "label very long label very long label very long label very";
    assert!(
        svg.contains(&format!(">\n  {second}\n<")),
        "missing {second}"
    );
    assert!(svg.contains(">\n  long label very long label very long label\n<"));
    assert!(!svg.contains('…'));
}

#[test]
fn png_has_signature_and_size() {
    let bytes = render_png(&example()).unwrap();
    assert_eq!(png_size(&bytes), (1024, 640));
    assert!(bytes.len() > 10_000, "{} bytes", bytes.len());
}

#[test]
fn edge_cases_still_render() {
    let curve = |label: &str, points: Vec<(f64, f64)>| Curve {
        label: label.into(),
        points,
        ..Curve::default()
    };
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let cases = vec![
        Chart::default(),
        Chart {
            points: vec![(3.0, 7.0)],
            ..Chart::default()
        },
        Chart {
            points: vec![(0.0, 0.0)],
            curves: vec![curve("", vec![(0.0, 0.0)])],
            ..Chart::default()
        },
        Chart {
            points: vec![(5.0, 1.0), (5.0, 2.0), (5.0, 3.0)],
            curves: vec![curve("flat", vec![(5.0, 2.0), (5.0, 2.0)])],
            ..Chart::default()
        },
        Chart {
            title: "t".repeat(500),
            x_label: "x".repeat(500),
            y_label: "y".repeat(500),
            points: vec![(1.0, 1.0), (nan, 2.0), (2.0, inf), (3.0, 3.0)],
            predicted_points: vec![(2.0, nan), (inf, 1.0), (1.5, 1.5)],
            curves: vec![
                curve("nan", vec![(nan, nan), (inf, -inf)]),
                curve("", vec![(1.0, nan), (2.0, 1.0), (2.5, inf), (3.0, 2.0)]),
                curve(&"é√".repeat(400), vec![(1.0, -1e300), (3.0, 1e300)]),
                curve("empty", vec![]),
            ],
        },
        Chart {
            points: vec![(-1e300, -1e300), (1e300, 1e300)],
            ..Chart::default()
        },
        Chart {
            points: vec![(1e-300, 1e-300), (2e-300, 3e-300)],
            ..Chart::default()
        },
    ];
    for chart in &cases {
        let svg = render_svg(chart).unwrap();
        // The legend names the measured points only when there are some.
        assert_eq!(svg.contains("measured"), !chart.points.is_empty());
        assert_eq!(png_size(&render_png(chart).unwrap()), (1024, 640));
    }
}

#[test]
fn format_from_extension() {
    let f = |p: &str| ChartFormat::from_path(Path::new(p));
    assert_eq!(f("li.png").unwrap(), ChartFormat::Png);
    assert_eq!(f("dir/LI.PNG").unwrap(), ChartFormat::Png);
    assert_eq!(f("li.Svg").unwrap(), ChartFormat::Svg);
    for bad in ["li.pdf", "li", "svg", "/"] {
        let err = f(bad).unwrap_err();
        assert!(matches!(err, ChartError::UnknownFormat { .. }));
        let msg = err.to_string();
        assert!(
            msg.contains(bad) && msg.contains(".svg") && msg.contains(".png"),
            "{msg}"
        );
    }
}

#[test]
fn write_replaces_existing_file_and_leaves_no_temporaries() {
    for name in ["chart.svg", "chart.png"] {
        let path = scratch(name).join(name);
        fs::write(&path, "old contents").unwrap();
        write(&example(), &path).unwrap();
        let bytes = fs::read(&path).unwrap();
        assert_ne!(bytes, b"old contents");
        if name.ends_with(".png") {
            assert_eq!(png_size(&bytes), (1024, 640));
        } else {
            assert!(bytes.starts_with(b"<svg"));
        }
        let dir = path.parent().unwrap();
        let leftovers: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

#[test]
fn write_into_missing_directory_names_the_path() {
    for name in ["li.svg", "li.png"] {
        let path = scratch("missing").join("no-such-dir").join(name);
        let err = write(&example(), &path).unwrap_err();
        assert!(matches!(err, ChartError::Output(_)), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        assert!(!path.exists());
    }
}

#[test]
fn write_failure_keeps_the_old_file() {
    // A directory in place of the file: refused, and the directory survives.
    let path = scratch("occupied").join("occupied.svg");
    fs::create_dir_all(path.join("inside")).unwrap();
    let err = write(&example(), &path).unwrap_err();
    assert!(err.to_string().contains("occupied.svg"), "{err}");
    assert!(path.join("inside").is_dir());
}

#[test]
fn example_chart_png() {
    let path = std::env::temp_dir().join("chart_example.png");
    write(&example(), &path).unwrap();
    assert_eq!(png_size(&fs::read(&path).unwrap()), (1024, 640));
    let svg = std::env::temp_dir().join("chart_example.svg");
    write(&example(), &svg).unwrap();
}
