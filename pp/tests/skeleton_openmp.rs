//! The skeleton of an OpenMP run (docs/skeletons.md#spinning-waits), with clang's OpenMP:
//! `examples/openmp/fft2d.c` (p = 2) is recorded by `pp run` with libomp's blocktime set, the
//! skeleton file (`pp skeleton --scale 5`) carries that blocktime, and `pp skeleton run` runs it
//! with waits that poll as libomp's: its log has the application's threads, 1/5 of its regions
//! and of its barrier waits, with the same names. Its wall is printed beside the application's
//! / K, not tested (no test may depend on the machine's load). Without clang or libomp the test
//! passes and says on standard error what it skipped.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use pp::event::{EventKind, WaitKind};
use pp::log::LogReader;
use test_support::{
    NO_MACHINE, Toolchain, make_skeleton, ompt_tool, pp, repository, scratch, skip, succeeded,
};

const ITERATIONS: u64 = 100;
const K: u64 = 5;
/// A blocktime other than libomp's default, so that the file is seen to carry the run's.
const BLOCKTIME_MS: u64 = 3;

/// Per thread: its regions by name, and its barrier waits.
#[derive(Debug, Default, PartialEq)]
struct Shape {
    regions: BTreeMap<String, u64>,
    barriers: u64,
}

fn shapes(log: &Path) -> (BTreeMap<u32, Shape>, u32) {
    let mut reader = LogReader::open(log).unwrap();
    let p = reader.header().p;
    let mut out: BTreeMap<u32, Shape> = BTreeMap::new();
    reader
        .for_each_event(|e, symbols| {
            let s = out.entry(e.thread).or_default();
            match e.kind {
                EventKind::RegionBegin { name, .. } => {
                    *s.regions.entry(symbols.name(name).to_owned()).or_default() += 1;
                }
                EventKind::WaitBegin {
                    kind: WaitKind::Barrier,
                    ..
                } => s.barriers += 1,
                _ => {}
            }
        })
        .unwrap();
    (out, p)
}

#[test]
fn the_skeleton_of_an_openmp_run_keeps_its_blocktime_regions_and_barriers() {
    let test = "the_skeleton_of_an_openmp_run_keeps_its_blocktime_regions_and_barriers";
    let tool = match ompt_tool(Path::new(env!("CARGO_BIN_EXE_pp"))) {
        Ok(t) => t,
        Err(why) => return skip(test, why),
    };
    let dir = scratch("skeleton-openmp");
    let program = dir.join("fft2d");
    let source = repository().join("examples/openmp/fft2d.c");
    if let Err(why) = Toolchain::OPENMP.example(&source, &program) {
        return skip(
            test,
            format!("{why} (tools/system-packages.sh installs it)"),
        );
    }
    let env = |c: &mut Command| {
        c.env("KMP_BLOCKTIME", BLOCKTIME_MS.to_string())
            .env_remove("OMP_WAIT_POLICY")
            .env("PP_OMPT_LIBRARY", &tool)
            .env("PP_MACHINE", NO_MACHINE)
            .env("PP_RUN_DELAY", "0");
    };
    let app_log = dir.join("app.log");
    let mut run = pp!();
    run.args(["run", "--log"])
        .arg(&app_log)
        .arg("--")
        .arg(&program)
        .args(["-p", "2", "-n", "64", "--iters", &ITERATIONS.to_string()]);
    env(&mut run);
    succeeded("pp run fft2d", &run.output().unwrap());

    let skel_dir = make_skeleton(pp!(), &app_log, K, &dir.join("skel"));
    let text = std::fs::read_to_string(skel_dir.join("skeleton.txt")).unwrap();
    assert!(
        text.lines()
            .any(|l| l == format!("omp_blocktime_ms {BLOCKTIME_MS}")),
        "the skeleton file does not carry the run's blocktime:\n{}",
        text.lines().take(12).collect::<Vec<_>>().join("\n")
    );

    let skel_log = dir.join("skel.log");
    let _ = std::fs::remove_file(&skel_log);
    let mut run = pp!();
    run.args(["skeleton", "run"])
        .arg(&skel_dir)
        .env("PP_LOG", &skel_log);
    env(&mut run);
    succeeded("pp skeleton run", &run.output().unwrap());

    let (app, p) = shapes(&app_log);
    let (skel, skel_p) = shapes(&skel_log);
    assert_eq!((p, skel_p), (2, 2));
    assert_eq!(
        app.keys().collect::<Vec<_>>(),
        skel.keys().collect::<Vec<_>>()
    );
    for (t, a) in &app {
        let s = &skel[t];
        let divided: BTreeMap<String, u64> =
            a.regions.iter().map(|(n, c)| (n.clone(), c / K)).collect();
        assert_eq!(s.regions, divided, "thread {t}'s regions");
        assert_eq!(s.barriers, a.barriers / K, "thread {t}'s barrier waits");
    }
    let wall = |log: &Path| {
        let mut r = LogReader::open(log).unwrap();
        let p = pp::profile::profile_log(&mut r, None, None)
            .whole("log")
            .unwrap();
        p.wall_ns() as f64 / 1e9
    };
    eprintln!(
        "{test}: application {:.4} s / K = {:.4} s, skeleton {:.4} s (not tested: load)",
        wall(&app_log),
        wall(&app_log) / K as f64,
        wall(&skel_log)
    );
}
