//! `pp calibrate` on this machine, with the quick settings. What it measures depends on the
//! machine and its load, so only what holds for any measurement is checked.

use pp::calibrate::{Settings, calibrate, table};
use pp::machine::Machine;

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
