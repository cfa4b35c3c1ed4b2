//! The calibration table for the screen.

use std::fmt::Write as _;

use super::segments::END_BYTES;
use crate::machine::{CV_LIMIT, CopyPoint, Machine, Measurement, Segment};

/// The calibration table: provenance; one line per copy size (bytes, size, reps, min, median,
/// CV, bandwidth of the minimum, `FLAG` where the CV stayed above 5%); the fitted segments;
/// the hand-off latency; how many figures were flagged.
pub fn table(machine: &Machine) -> String {
    let mut out = String::new();
    let about = &machine.about;
    let _ = writeln!(
        out,
        "machine {} ({} cores), pp {}, measured at {} s since the epoch",
        about.host, about.cores, about.pp_version, about.measured_at
    );
    let _ = writeln!(
        out,
        "\nsingle-thread copy (minimum of reps; differential timing of short copies):"
    );
    points(&mut out, &machine.copy.points);
    let _ = writeln!(out, "\ncopy model t = alpha + bytes / beta:");
    segments(&mut out, &machine.copy.segments);

    let h = &machine.handoff;
    let _ = writeln!(
        out,
        "\nhand-off latency (half a channel round trip): min {:.1} ns, median {:.1} ns, CV {:.1}%, {} reps{}",
        h.min_ns,
        h.median_ns,
        100.0 * h.cv,
        h.reps,
        flag(h)
    );

    let mut figures = machine.copy.points.len() + 1;
    let mut flagged = machine
        .copy
        .points
        .iter()
        .filter(|p| p.time.flagged)
        .count()
        + usize::from(machine.handoff.flagged);
    if let Some(mpi) = &machine.mpi {
        let _ = writeln!(
            out,
            "\nMPI half round trip, 2 ranks on this {} ({}; minimum of reps):",
            mpi.locality, mpi.library
        );
        points(&mut out, &mpi.points);
        let _ = writeln!(out, "\nMPI message model t = alpha + bytes / beta:");
        segments(&mut out, &mpi.segments);
        figures += mpi.points.len();
        flagged += mpi.points.iter().filter(|p| p.time.flagged).count();
    }
    let _ = writeln!(
        out,
        "flagged: {flagged} of {figures} figures (CV above {:.0}%; copies and the hand-off after measuring again)",
        100.0 * CV_LIMIT
    );
    out
}

/// One line per size: bytes, size, reps, min, median, CV, bandwidth of the minimum, `FLAG`.
fn points(out: &mut String, points: &[CopyPoint]) {
    let _ = writeln!(
        out,
        "{:>12} {:>9} {:>5} {:>14} {:>14} {:>7} {:>8}",
        "bytes", "size", "reps", "min ns", "median ns", "CV", "GB/s"
    );
    for point in points {
        let m = &point.time;
        let gbps = if m.min_ns > 0.0 {
            format!("{:.2}", point.bytes as f64 / m.min_ns)
        } else {
            "-".into()
        };
        let _ = writeln!(
            out,
            "{:>12} {:>9} {:>5} {:>14.1} {:>14.1} {:>6.1}% {:>8}{}",
            point.bytes,
            human_bytes(point.bytes),
            m.reps,
            m.min_ns,
            m.median_ns,
            100.0 * m.cv,
            gbps,
            flag(m)
        );
    }
}

/// One line per fitted interval.
fn segments(out: &mut String, segments: &[Segment]) {
    let last = segments.len().saturating_sub(1);
    for (k, s) in segments.iter().enumerate() {
        let to = if k == last && s.to_bytes >= END_BYTES {
            "∞".to_string()
        } else {
            human_bytes(s.to_bytes)
        };
        let _ = writeln!(
            out,
            "  {:<24} alpha {:>12.1} ns   beta {:>8.2} GB/s",
            format!("[{}, {})", human_bytes(s.from_bytes), to),
            s.alpha_ns,
            s.beta_bytes_per_ns
        );
    }
}

fn flag(m: &Measurement) -> &'static str {
    if m.flagged { "  FLAG" } else { "" }
}

/// `64 B`, `1.5 KiB`, `256 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::tests::example;

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(64), "64 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(256 << 20), "256 MiB");
        assert_eq!(human_bytes(1 << 40), "1 TiB");
    }

    #[test]
    fn table_shows_every_figure_and_flags() {
        let mut m = example();
        m.copy.points[0].time.cv = 0.08;
        m.copy.points[0].time.flagged = true;
        let text = table(&m);
        assert!(text.contains("4096"), "{text}");
        assert!(text.contains("FLAG"), "{text}");
        assert!(text.contains("[64 KiB, 1 GiB)"), "{text}");
        assert!(text.contains("flagged: 1 of 2 figures"), "{text}");
        assert!(text.contains("hand-off latency"), "{text}");
    }
}
