//! What `lca` writes goes only to regular files: a device node, FIFO, directory or link to a
//! node given as an output is refused in one line and left as it was, with no temporary file
//! behind; chart files made from model names are distinct and short.

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use support::{error_of, lca};
use test_support::{IsKind, assert_untouched, hostile_targets, scratch};

/// One line on standard error (checked by `error_of`), the target unchanged, no temporary
/// file in its folder.
fn refused(args: &[&str], target: &Path, kind: IsKind) {
    let stderr = error_of(args);
    assert!(stderr.contains("regular files"), "{args:?}: {stderr}");
    assert_untouched(&format!("{args:?}"), target, kind);
}

fn model(dir: &Path, name: &str, file: &str) -> PathBuf {
    let data = datasets::path("fft2d.dat");
    let path = dir.join(file);
    let out = lca()
        .arg("model")
        .arg(&data)
        .args([
            "--where",
            "impl=dp,role=model",
            "--name",
            name,
            "--force",
            "--out",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    path
}

#[test]
fn model_files_and_charts_onto_devices_fifos_folders_and_links_are_refused() {
    let dir = scratch("outputs-hostile");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("model")).unwrap();
    fs::create_dir_all(dir.join("plot")).unwrap();
    let data = datasets::path("fft2d.dat");
    let data = data.to_str().unwrap();
    for (target, kind) in hostile_targets(&dir.join("model"), "") {
        let target_text = target.to_str().unwrap();
        let args = [
            "model",
            data,
            "--where",
            "impl=dp,role=model",
            "-o",
            target_text,
        ];
        refused(&[&args[..], &["--force"]].concat(), &target, kind);
    }
    for (target, kind) in hostile_targets(&dir.join("plot"), ".svg") {
        let args = plot(&target);
        refused(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            &target,
            kind,
        );
    }
}

/// `lca datasets/data/fig2.dat --var p --cat li --plot CHART`'s arguments.
fn plot(chart: &Path) -> Vec<String> {
    let fig2 = datasets::path("fig2.dat");
    [
        fig2.to_str().unwrap(),
        "--var",
        "p",
        "--cat",
        "li",
        "--plot",
    ]
    .into_iter()
    .chain(chart.to_str())
    .map(String::from)
    .collect()
}

#[test]
fn an_existing_chart_is_replaced_only_with_force() {
    let dir = scratch("outputs-existing");
    let chart = dir.join("li.svg");
    fs::write(&chart, "mine").unwrap();
    let args = plot(&chart);
    let stderr = error_of(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(stderr.contains("exists; not replaced"), "{stderr}");
    assert_eq!(fs::read_to_string(&chart).unwrap(), "mine");
    let out = lca().args(args).arg("--force").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(fs::read_to_string(&chart).unwrap().contains("<svg"));
}

#[test]
fn a_dash_sends_the_model_to_standard_output() {
    let data = datasets::path("fft2d.dat");
    let out = lca()
        .arg("model")
        .arg(&data)
        .args(["--where", "impl=dp,role=model", "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("# lca performance model"), "{text}");
    assert!(!Path::new("-").exists());
}

#[test]
fn chart_files_of_names_alike_or_long_are_distinct() {
    let dir = scratch("outputs-names");
    let long = "m".repeat(300);
    let models = [
        model(&dir, "a b", "1.toml"),
        model(&dir, "a_b", "2.toml"),
        model(&dir, "a_b", "3.toml"),
        model(&dir, &long, "4.toml"),
    ];
    let out = dir.join("report");
    let _ = fs::remove_dir_all(&out);
    let run = lca()
        .arg("report")
        .args(&models)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    let figures = html.matches("<figure><svg ").count();
    let names: Vec<String> = fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2 * figures, "no chart overwrote another");
    assert!(names.iter().all(|n| n.len() < 80), "{names:?}");
    for stem in ["a_b-01.svg", "a_b-2-01.svg"] {
        assert!(names.iter().any(|n| n == stem), "{stem} in {names:?}");
    }
}

#[test]
fn a_full_disk_is_said_once() {
    // /dev/full fails every write with ENOSPC; the message said the cause twice for charts.
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full");
        return;
    };
    let out = lca()
        .args([
            "design",
            "--factor",
            "p=2,26",
            "--factor",
            "n=32..1024:log2",
        ])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "Error: standard output: cannot write: No space left on device (os error 28)\n"
    );
}
