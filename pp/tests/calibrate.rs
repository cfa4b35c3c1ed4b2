//! `pp calibrate` on this machine, with the quick settings. What it measures depends on the
//! machine and its load, so only what holds for any measurement is checked.

use pp::calibrate::{Settings, calibrate, table};
use pp::machine::Machine;

use test_support::{one_line_error, pp, scratch, skip};

#[test]
fn quick_calibration_gives_a_usable_machine() {
    let settings = Settings::quick();
    let mut lines = Vec::new();
    let machine = calibrate(&settings, &mut |line: &str| lines.push(line.to_string()));

    assert!(!lines.is_empty());
    assert!(lines.iter().all(|l| !l.contains('\n')), "{lines:?}");
    assert_eq!(machine.copy.points.len(), settings.sizes.len());
    assert!(!machine.copy.segments.is_empty());
    assert!(machine.handoff.min_ns > 0.0, "{:?}", machine.handoff);
    assert!(machine.about.cores >= 1);

    // Every segment a fixed cost >= 0 and a finite positive bandwidth, tiling the sizes from
    // 0: so no ideal time is negative, and within a segment it grows with size. (That the
    // fitted times grow across segments too is a property of the data, checked on known data
    // in the fit's unit tests, not of a fresh measurement.)
    let segments = &machine.copy.segments;
    assert_eq!(segments[0].from_bytes, 0);
    for (k, s) in segments.iter().enumerate() {
        assert!(
            s.alpha_ns >= 0.0 && s.alpha_ns.is_finite(),
            "{}",
            table(&machine)
        );
        assert!(
            s.beta_bytes_per_ns > 0.0 && s.beta_bytes_per_ns.is_finite(),
            "{}",
            table(&machine)
        );
        assert!(s.from_bytes < s.to_bytes);
        assert!(k == 0 || s.from_bytes == segments[k - 1].to_bytes);
    }

    let text = machine.to_toml();
    assert_eq!(Machine::parse("machine.toml", &text).unwrap(), machine);
    let shown = table(&machine);
    for bytes in &settings.sizes {
        let row = format!("{bytes} ");
        assert!(
            shown.lines().any(|l| l.trim_start().starts_with(&row)),
            "{bytes}: {shown}"
        );
    }
}

/// `pp calibrate --mpi --quick` on this node: an `[mpi]` table with a point per size and
/// segments tiling the sizes from 0. Without Open MPI (mpicc and mpirun), it passes and says
/// it skipped.
#[test]
fn mpi_calibration_adds_the_message_model() {
    use pp::calibrate::mpi::{MpiSettings, measure};
    let found = |tool: &str| {
        std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !(found("mpicc") && found("mpirun")) {
        skip(
            "mpi_calibration_adds_the_message_model",
            "no mpicc or mpirun (tools/system-packages.sh installs Open MPI)",
        );
        return;
    }
    let settings = MpiSettings::quick();
    let mpi = measure(&settings, &mut |_| {}).unwrap();
    assert_eq!(mpi.locality, "node");
    assert!(!mpi.library.is_empty());
    let sizes: Vec<u64> = mpi.points.iter().map(|p| p.bytes).collect();
    assert_eq!(sizes, settings.sizes);
    for p in &mpi.points {
        assert_eq!(p.time.reps, settings.reps);
        assert!(p.time.min_ns > 0.0 && p.time.min_ns <= p.time.median_ns);
    }
    let segments = &mpi.segments;
    assert_eq!(segments[0].from_bytes, 0);
    for (k, s) in segments.iter().enumerate() {
        assert!(s.alpha_ns >= 0.0 && s.beta_bytes_per_ns > 0.0, "{s:?}");
        assert!(k == 0 || s.from_bytes == segments[k - 1].to_bytes);
    }
    assert!(mpi.ideal_message_ns(1 << 20) > mpi.ideal_message_ns(8));
}

/// Without the MPI compiler `pp calibrate --mpi` says so in one line and writes nothing.
#[test]
fn mpi_calibration_without_mpicc_is_one_line_and_writes_nothing() {
    let dir = scratch("mpi-calibration");
    let out = dir.join("machine.toml");
    let run = pp!()
        .args([
            "calibrate",
            "--quick",
            "--mpi",
            "--mpicc",
            "/nonexistent/mpicc",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    one_line_error(
        &run,
        Some(1),
        &["/nonexistent/mpicc not found", "nothing written"],
    );
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
