//! End-to-end tests of the `pp` command on hand-written logs.

use std::path::Path;

use assert_cmd::assert::OutputAssertExt;
use test_support::{pp, scratch, write};

const LOG: &str = "# two threads: a serial section, then an imbalanced loop
pplog 1 p=2 impl=dp n=256
0 0 start
0 1 start
0 0 phase serial
0 0 work_begin
40 0 work_end
40 0 phase loop
40 1 phase loop
40 0 region_begin 1 loop
40 0 work_begin
40 1 work_begin
60 1 work_end
100 0 work_end
100 0 region_end 1
100 0 stop
100 1 stop
";

fn stdout_of(args: &[&str], dir: &Path) -> String {
    test_support::stdout_of(pp!().args(args).current_dir(dir))
}

#[test]
fn figure_1_table() {
    let dir = scratch("fig1");
    write(&dir, "pp.log", LOG);
    let text = stdout_of(&[], &dir);
    let expected = "\
Processors:                                2
Load Imbalance:                  0.000000040 s   20.0%
Insufficient Parallelism:        0.000000040 s   20.0%
Synchronization Loss:            0.000000000 s    0.0%
Communication Loss:              0.000000000 s    0.0%
Resource Contention:             0.000000000 s    0.0%
Total Time:                      0.000000200 s          (2 x 0.000000100 s wall)
Remaining Time:                  0.000000120 s   60.0%
";
    assert_eq!(text, expected);
}

#[test]
fn datafile_row_and_breakdowns() {
    let dir = scratch("row");
    let log = write(&dir, "run.log", LOG);
    let log = log.to_str().unwrap();
    let row = stdout_of(&["-l", log], &dir);
    assert_eq!(
        row,
        "impl=dp n=256 p=2 wall=0.000000100 total=0.000000200 li=0.000000040 ip=0.000000040 \
         sl=0.000000000 cl=0.000000000 rc=0.000000000 pc=0.000000120 rc.cpu=0.000000000 \
         rc.comm=0.000000000\n"
    );
    let by_phase = stdout_of(&["--by", "phase", log], &dir);
    assert!(
        by_phase.lines().any(|l| l.starts_with("serial ")),
        "{by_phase}"
    );
    assert!(
        by_phase.lines().any(|l| l.starts_with("loop ")),
        "{by_phase}"
    );
    let by_thread = stdout_of(&["--by", "thread", log], &dir);
    assert_eq!(by_thread.lines().count(), 3, "{by_thread}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout_of(&["--format", "json", log], &dir)).unwrap();
    assert_eq!(json["p"], 2);
    assert_eq!(json["params"]["impl"], "dp");
    assert!((json["categories"]["li"].as_f64().unwrap() - 4e-8).abs() < 1e-15);
}

#[test]
fn pp_log_environment_variable_names_the_log() {
    let dir = scratch("env");
    write(&dir, "elsewhere.log", LOG);
    let out = pp!()
        .arg("-l")
        .env("PP_LOG", dir.join("elsewhere.log"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("impl=dp ")
    );
    // Empty, it is unset, as for the recorder, which then wrote ./pp.log (pp read a file named
    // "": ": cannot open").
    write(&dir, "pp.log", LOG);
    let out = pp!()
        .arg("-l")
        .env("PP_LOG", "")
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("impl=dp "));
}

#[test]
fn chrome_trace_is_written() {
    let dir = scratch("chrome");
    let log = write(&dir, "run.log", LOG);
    let trace = dir.join("trace.json");
    pp!()
        .arg(&log)
        .arg("--chrome")
        .arg(&trace)
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let li: Vec<_> = events.iter().filter(|e| e["name"] == "li").collect();
    assert_eq!(li.len(), 1);
    assert_eq!(li[0]["tid"], 1);
    assert_eq!(li[0]["dur"], 0.04);
    assert_eq!(li[0]["args"]["region"], "loop");
}

#[test]
fn convert_round_trips() {
    let dir = scratch("convert");
    let text = write(&dir, "run.txt", LOG);
    let binary = dir.join("run.bin");
    let back = dir.join("back.txt");
    pp!()
        .arg("convert")
        .arg(&text)
        .arg(&binary)
        .assert()
        .success();
    pp!()
        .arg("convert")
        .arg(&binary)
        .arg(&back)
        .assert()
        .success();
    let rows: Vec<String> = [&text, &binary, &back]
        .iter()
        .map(|p| stdout_of(&["-l", p.to_str().unwrap()], &dir))
        .collect();
    assert_eq!(rows[0], rows[1]);
    assert_eq!(rows[0], rows[2]);
}

#[test]
fn truncated_log_prints_what_it_can_and_names_what_was_open() {
    let dir = scratch("cut");
    let cut: String = LOG.lines().take(13).map(|l| format!("{l}\n")).collect();
    let log = write(&dir, "cut.log", &cut);
    let out = pp!().arg("-l").arg(&log).output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("never stopped"), "{stderr}");
    assert!(
        stderr.contains(
            "intervals still open at the end of the log (1 of them, first thread 0's work"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("regions still open at the end of the log (1 of them, first region 1)"),
        "{stderr}"
    );
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains(" wall=0.000000060 ")
    );
}

#[test]
fn nothing_meaningful_is_an_error() {
    let dir = scratch("empty");
    let log = write(
        &dir,
        "nostart.log",
        "pplog 1 p=2\n5 0 work_begin\n9 0 work_end\n",
    );
    let out = pp!().arg(&log).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no thread has a start event"), "{stderr}");
    let missing = dir.join("missing.log");
    let out = pp!().arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("missing.log")
    );
}

/// `pp -l` on `text`: (exit code, stdout, stderr).
fn row_of(dir: &Path, name: &str, text: &str) -> (Option<i32>, String, String) {
    let log = write(dir, name, text);
    let out = pp!().arg("-l").arg(&log).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn an_empty_run_window_writes_no_row() {
    let dir = scratch("wall0");
    for (name, text) in [
        // Started and stopped at the same instant.
        (
            "instant.log",
            "pplog 1 p=2 n=8\n5 0 start\n5 1 start\n5 0 stop\n5 1 stop\n",
        ),
        // Work of no length, and a start with nothing after it.
        (
            "nothing.log",
            "pplog 1 p=1\n7 0 start\n7 0 work_begin\n7 0 work_end\n",
        ),
        ("start.log", "pplog 1 p=3\n# only a start\n0 2 start\n"),
    ] {
        let (code, stdout, stderr) = row_of(&dir, name, text);
        assert_eq!(code, Some(1), "{name}: {stdout}{stderr}");
        assert_eq!(stdout, "", "{name}: no row");
        let error: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Error")).collect();
        assert_eq!(error.len(), 1, "{stderr}");
        assert!(
            error[0].contains(name) && error[0].contains("wall = 0"),
            "{stderr}"
        );
        // Every report refuses it the same way (`--by thread` printed a table of zeros).
        let log = dir.join(name);
        for args in [
            &[][..],
            &["--by", "thread"],
            &["--by", "region"],
            &["--by", "phase"],
            &["--format", "json"],
            &["--chrome", "empty.json"],
            &["-l", "--chrome", "empty.json"],
        ] {
            let out = pp!()
                .current_dir(&dir)
                .args(args)
                .arg(&log)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
            let error: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Error")).collect();
            assert_eq!(error.len(), 1, "{args:?}: {stderr}");
            assert!(
                error[0].contains(name) && error[0].contains("wall = 0)"),
                "{args:?}: {stderr}"
            );
            assert!(out.stdout.is_empty(), "{args:?}");
            // A refused log leaves no trace file behind (it was written before the refusal).
            assert!(!dir.join("empty.json").exists(), "{args:?}");
        }
    }
    // One nanosecond is a row.
    let (code, stdout, _) = row_of(&dir, "one.log", "pplog 1 p=1\n5 0 start\n6 0 stop\n");
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains(" wall=0.000000001 total=0.000000001 "),
        "{stdout}"
    );
}

#[test]
fn a_header_key_that_pp_computes_is_refused() {
    let dir = scratch("clash");
    for key in ["wall", "total", "li", "pc", "rc.cpu", "rc.comm"] {
        let text = format!("# a run\n\npplog 1 p=1 impl=dp {key}=3\n0 0 start\n9 0 stop\n");
        let (code, stdout, stderr) = row_of(&dir, "clash.log", &text);
        assert_eq!(code, Some(1), "{key}: {stdout}");
        assert_eq!(stdout, "");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("Error: ")
                && stderr.contains("clash.log:3: ")
                && stderr.contains(&format!("header key '{key}'")),
            "{stderr}"
        );
    }
    // Other keys, even close ones, are run parameters.
    let (code, stdout, stderr) = row_of(
        &dir,
        "fine.log",
        "pplog 1 p=1 walltime=3 rc.io=1 li2=0\n0 0 start\n9 0 stop\n",
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.starts_with("walltime=3 rc.io=1 li2=0 p=1 wall="),
        "{stdout}"
    );
    // A binary log names the file (it has no lines).
    let text = dir.join("clash.txt");
    std::fs::write(&text, "pplog 1 p=1 total=3\n0 0 start\n9 0 stop\n").unwrap();
    let binary = dir.join("clash.bin");
    let _ = std::fs::remove_file(&binary);
    pp!()
        .arg("convert")
        .arg(&text)
        .arg(&binary)
        .assert()
        .success();
    let out = pp!().arg("-l").arg(&binary).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("clash.bin: header key 'total'") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
fn calibrate_writes_a_machine_file_that_pp_uses() {
    let dir = scratch("calibrate");
    let machine = dir.join("machine.toml");
    let _ = std::fs::remove_file(&machine);
    let out = pp!()
        .args(["calibrate", "--quick", "--out"])
        .arg(&machine)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("wrote "), "{table}");
    // What holds whatever the machine measured: the segments tile the sizes from 0, with no
    // negative latency and a positive, finite bandwidth.
    let m = pp::machine::Machine::load(&machine).unwrap();
    let segments = &m.copy.segments;
    assert!(!segments.is_empty());
    assert_eq!(segments[0].from_bytes, 0);
    for (k, s) in segments.iter().enumerate() {
        assert!(s.from_bytes < s.to_bytes, "{segments:?}");
        assert!(
            k == 0 || s.from_bytes == segments[k - 1].to_bytes,
            "{segments:?}"
        );
        assert!(s.alpha_ns >= 0.0 && s.alpha_ns.is_finite(), "{segments:?}");
        assert!(
            s.beta_bytes_per_ns > 0.0 && s.beta_bytes_per_ns.is_finite(),
            "{segments:?}"
        );
    }

    // Calibrating again does not replace it without --force.
    let again = pp!()
        .args(["calibrate", "--quick", "--out"])
        .arg(&machine)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8(again.stderr).unwrap().contains("--force"));

    // Moving 1 byte took 1 ms: with the machine file, its ideal time is cl and the rest
    // rc.comm; without it, all cl.
    let log = write(
        &dir,
        "comm.log",
        "pplog 1 p=1
0 0 start
0 0 comm_begin 1
1000000 0 comm_end 1
1000000 0 stop
",
    );
    let with = stdout_of(
        &[
            "-l",
            "--machine",
            machine.to_str().unwrap(),
            log.to_str().unwrap(),
        ],
        &dir,
    );
    let field = |row: &str, key: &str| -> f64 {
        row.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
            .unwrap()
            .parse()
            .unwrap()
    };
    let ideal = m.ideal_copy_ns(1).min(1_000_000);
    let ns = |row: &str, key: &str| (field(row, key) * 1e9).round() as u64;
    assert_eq!(ns(&with, "cl"), ideal, "{with}");
    assert_eq!(ns(&with, "rc.comm"), 1_000_000 - ideal, "{with}");
    let without = stdout_of(&["-l", log.to_str().unwrap()], &dir);
    assert_eq!(field(&without, "cl"), 0.001);
    assert_eq!(field(&without, "rc.comm"), 0.0);

    let bad = write(&dir, "bad.toml", "[about]\nhost = 3\n");
    let out = pp!()
        .args(["--machine", bad.to_str().unwrap(), log.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("Error: --machine: ") && stderr.contains("bad.toml"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}
