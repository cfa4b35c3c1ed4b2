//! End-to-end test of `lca report`: a self-contained HTML page with inline SVG charts of the
//! bundled fft2d models, every user string escaped, charts also as files.

mod support;

use support::{error_of, lca};
use test_support::scratch;

#[test]
fn report_of_two_models_with_measured_runs() {
    let dir = scratch("report");
    let data = datasets::path("fft2d.dat");
    let data = data.to_str().unwrap();
    for implementation in ["dp", "tp"] {
        let model = dir.join(format!("{implementation}.toml"));
        let _ = std::fs::remove_file(&model);
        let status = lca()
            .args(["model", data, "--where"])
            .arg(format!("impl={implementation},role=model"))
            .arg("--out")
            .arg(&model)
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
    }
    let out = dir.join("report");
    let _ = std::fs::remove_dir_all(&out);
    let (dp, tp) = (dir.join("dp.toml"), dir.join("tp.toml"));
    let run = |extra: &[&str]| {
        lca()
            .arg("report")
            .args([&dp, &tp])
            .args([
                "--data",
                data,
                "--title",
                "FFT <script>alert(1)</script> & co",
                "--out",
            ])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let first = run(&[]);
    assert!(first.status.success(), "{first:?}");
    let printed = String::from_utf8(first.stdout).unwrap();
    assert!(printed.starts_with("report: "), "{printed}");

    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<title>FFT &lt;script&gt;alert(1)&lt;/script&gt; &amp; co</title>"));
    assert!(!html.contains("<script"), "no script, escaped title");
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained"
    );
    let svgs = html.matches("<figure><svg ").count();
    assert!(svgs >= 2 * (2 + 2 + 1 + 12), "{svgs} charts");
    assert!(html.contains("<h2>dp</h2>") && html.contains("<h2>tp</h2>"));
    assert!(
        html.contains("mean relative error of T<sub>p</sub>"),
        "{html}"
    );
    // The verdict and the winner map come first, before the implementations' sections; the
    // map draws the boundary of the means and every measured run of both (16 model runs and
    // 9 validation runs each, at 5 x 5 distinct points of the grid at most).
    // The datafile's validation runs (role=validate) put each model's error into the
    // verdict's intervals, as `lca crossover --data` does.
    let verdict = html.find("<p class=\"verdict\">").unwrap();
    assert!(
        html[verdict..].contains("the models&#39; validated errors included"),
        "{html}"
    );
    let map = html.find("<figure class=\"map\"><svg ").unwrap();
    assert!(
        verdict < map && map < html.find("<h2>dp</h2>").unwrap(),
        "{html}"
    );
    let map_svg = &html[map..map + html[map..].find("</svg>").unwrap()];
    assert!(map_svg.contains("<polyline"), "a boundary line");
    let runs = map_svg.matches("<circle").count() / 2;
    assert!(
        runs >= 50,
        "{runs} measured runs drawn (a white disc and a ring each)"
    );
    assert!(map_svg.contains("n, log scale"), "the axis names its scale");
    let files = std::fs::read_dir(out.join("charts")).unwrap().count();
    assert_eq!(files, 2 * svgs);

    // An existing report is not replaced without --force.
    let e = error_of(&[
        "report",
        dp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(e.contains("index.html: exists; not replaced"), "{e}");
    // Said before anything is read (a model that is not there).
    let e = error_of(&["report", "no-such.toml", "--out", out.to_str().unwrap()]);
    assert!(e.contains("index.html: exists; not replaced"), "{e}");
    assert!(run(&["--force"]).status.success());
}
