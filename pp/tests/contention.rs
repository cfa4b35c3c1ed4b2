//! The contention example end to end, through the toolkit: its `busy` phase shares a fixed
//! amount of computation W among p threads on c cores, so the work not backed by CPU time is
//! (W/c)·(p − c) once p exceeds c. Profiling runs at several p and fitting the paper's
//! `max(p-$theta,0)` to their rc must find the threshold at the number of cores.

mod examples_support;

use std::path::PathBuf;
use std::process::Command;

use fit::{Datafile, Model, fit_model};

fn example() -> PathBuf {
    examples_support::example("contention")
}

/// One datafile row per p, as `pp -l >> datafile` writes them.
fn measure(ps: &[u32]) -> String {
    let mut rows = String::new();
    for &p in ps {
        let log =
            std::env::temp_dir().join(format!("pp-contention-{}-{p}.log", std::process::id()));
        let run = Command::new(example())
            .args(["-p", &p.to_string()])
            .env("PP_LOG", &log)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let row = Command::new(env!("CARGO_BIN_EXE_pp"))
            .env("PP_MACHINE", "/nonexistent/machine.toml")
            .arg("-l")
            .arg(&log)
            .output()
            .unwrap();
        assert!(row.status.success());
        rows.push_str(&String::from_utf8(row.stdout).unwrap());
        let _ = std::fs::remove_file(&log);
    }
    rows
}

/// A measurement on a shared machine: up to three attempts, one must find the threshold.
#[test]
fn resource_contention_grows_past_the_number_of_cores() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let mut attempts = Vec::new();
    for _ in 0..3 {
        let rows = measure(&[1, 2, 3, 4, 6, 8]);
        let data = Datafile::parse("contention.dat", &rows).unwrap();
        let obs = data.observations(&["p"], "rc", &[]).unwrap();
        let fit = fit_model(&Model::parse("max(p-$theta,0)").unwrap(), &obs).unwrap();
        let theta = fit.parameters[0].value;
        let slope = fit.coefficients[0].value;
        // W = 0.6 s of computation: the slope is W/c.
        if (theta - cores).abs() < 0.75 && (slope - 0.6 / cores).abs() < 0.2 * 0.6 / cores {
            return;
        }
        attempts.push(format!(
            "theta {theta:.2}, slope {slope:.3}, R2 {:.3}",
            fit.r2
        ));
    }
    panic!(
        "expected theta near {cores} and slope near {:.2}: {attempts:?}",
        0.6 / cores
    );
}
