//! The contention example through the toolkit. Its `busy` phase shares a fixed amount of
//! computation W among p threads on c cores, so the work not backed by CPU time is
//! (W/c)·(p − c) once p exceeds c, and fitting the paper's `max(p-$theta,0)` to rc finds the
//! threshold at the number of cores.
//!
//! How much time a run loses depends on the machine and on what else runs on it, so no test
//! here puts a threshold on a fresh measurement: a real run is checked for what must hold
//! whatever the load (the structure of its rows), and the threshold-finding claim is checked
//! on rows recorded once (`tests/data/contention.dat`, whose header says how and when).

use fit::{Datafile, Model, fit_model};
use test_support::{example, pp, record, stdout_of, temp_path};

/// One datafile row per p, as `pp -l >> datafile` writes them (no machine file: all
/// communication is cl).
fn measure(ps: &[u32]) -> String {
    let mut rows = String::new();
    for &p in ps {
        let log = temp_path(&format!("contention-{p}.log"));
        record(&example("pp", "contention"), p, &log);
        rows.push_str(&stdout_of(pp!().arg("-l").arg(&log)));
        let _ = std::fs::remove_file(&log);
    }
    rows
}

/// The fields of a `pp -l` row; seconds (printed with 9 decimals, exactly) as nanoseconds.
struct Row {
    fields: Vec<(String, String)>,
}

impl Row {
    fn parse(line: &str) -> Row {
        let fields = line
            .split_whitespace()
            .map(|tok| {
                let (k, v) = tok
                    .split_once('=')
                    .unwrap_or_else(|| panic!("{tok} in {line}"));
                (k.to_string(), v.to_string())
            })
            .collect();
        Row { fields }
    }

    fn get(&self, key: &str) -> &str {
        let found = self
            .fields
            .iter()
            .filter(|(k, _)| k == key)
            .collect::<Vec<_>>();
        assert_eq!(found.len(), 1, "{key} once in the row");
        &found[0].1
    }

    fn ns(&self, key: &str) -> u64 {
        let v = self.get(key);
        let (s, frac) = v.split_once('.').unwrap_or_else(|| panic!("{key}={v}"));
        assert_eq!(frac.len(), 9, "{key}={v}: nanoseconds");
        s.parse::<u64>().unwrap() * 1_000_000_000 + frac.parse::<u64>().unwrap()
    }
}

/// A real run at several p, whatever the machine's load: one row per run, in order, with the
/// run's parameters, and the identities of docs/datafile.md exactly (to the nanosecond).
#[test]
fn rows_of_real_runs_are_complete_and_consistent() {
    let ps = [1, 2, 3];
    let rows = measure(&ps);
    let lines: Vec<&str> = rows.lines().collect();
    assert_eq!(lines.len(), ps.len(), "{rows}");
    for (line, &p) in lines.iter().zip(&ps) {
        let row = Row::parse(line);
        assert_eq!(row.get("p"), p.to_string(), "{line}");
        assert_eq!(row.get("prog"), "contention", "{line}");
        assert!(row.get("cores").parse::<u32>().unwrap() >= 1, "{line}");
        let wall = row.ns("wall");
        assert!(wall > 0, "{line}");
        assert_eq!(
            row.ns("total"),
            u64::from(p) * wall,
            "total = p * wall: {line}"
        );
        let categories: u64 = ["li", "ip", "sl", "cl", "rc", "pc"]
            .iter()
            .map(|k| row.ns(k))
            .sum();
        assert_eq!(
            categories,
            row.ns("total"),
            "categories sum to total: {line}"
        );
        assert_eq!(row.ns("rc.cpu") + row.ns("rc.comm"), row.ns("rc"), "{line}");
        // Without a machine file no communication is contention; and the example copies
        // (cl) and computes (pc) at every p.
        assert_eq!(row.ns("rc.comm"), 0, "{line}");
        assert!(row.ns("cl") > 0 && row.ns("pc") > 0, "{line}");
    }
    // What lca reads of them.
    let data = Datafile::parse("contention.dat", &rows).unwrap();
    assert_eq!(
        data.observations(&["p"], "rc", &[]).unwrap().len(),
        ps.len()
    );
}

/// Rows recorded once with the real example (see the fixture's header): resource contention
/// grows linearly past a threshold at the number of cores, with slope W/c.
#[test]
fn resource_contention_grows_past_the_number_of_cores_in_recorded_rows() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/contention.dat");
    let text = std::fs::read_to_string(path).unwrap();
    let rows: Vec<Row> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(Row::parse)
        .collect();
    let ps: Vec<String> = rows.iter().map(|r| r.get("p").to_string()).collect();
    assert_eq!(ps, ["1", "2", "3", "4", "6", "8"]);
    let cores: f64 = rows[0].get("cores").parse().unwrap();
    assert!(rows.iter().all(|r| r.get("cores") == rows[0].get("cores")));

    let data = Datafile::parse(path, &text).unwrap();
    let obs = data.observations(&["p"], "rc", &[]).unwrap();
    let fit = fit_model(&Model::parse("max(p-$theta,0)").unwrap(), &obs).unwrap();
    let theta = fit.parameters[0].value;
    let slope = fit.coefficients[0].value;
    // W = 0.6 s of computation: the slope is W/c.
    assert!(
        (theta - cores).abs() < 0.75,
        "theta {theta:.2} vs {cores} cores (slope {slope:.3}, R2 {:.3})",
        fit.r2
    );
    assert!(
        (slope - 0.6 / cores).abs() < 0.2 * 0.6 / cores,
        "slope {slope:.3} vs W/c = {:.3}",
        0.6 / cores
    );
    assert!(fit.r2 > 0.9, "R2 {:.3}", fit.r2);
}
