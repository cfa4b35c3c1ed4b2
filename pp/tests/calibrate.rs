//! `pp calibrate` on this machine, with the quick settings.

use std::time::Instant;

use pp::calibrate::{Settings, calibrate, table};
use pp::machine::Machine;

#[test]
fn quick_calibration_gives_a_usable_machine() {
    let settings = Settings::quick();
    let mut lines = Vec::new();
    let start = Instant::now();
    let machine = calibrate(&settings, &mut |line: &str| lines.push(line.to_string()));
    let took = start.elapsed();

    assert!(!lines.is_empty());
    assert!(lines.iter().all(|l| !l.contains('\n')), "{lines:?}");
    assert_eq!(machine.copy.points.len(), settings.sizes.len());
    assert!(!machine.copy.segments.is_empty());
    assert!(machine.handoff.min_ns > 0.0, "{:?}", machine.handoff);
    assert!(machine.about.cores >= 1);

    // Positive, and increasing in size (by a factor 16 apart, well above timing noise).
    for &bytes in &settings.sizes {
        assert!(machine.ideal_copy_ns(bytes) > 0, "{bytes} B: {machine:#?}");
    }
    for w in settings.sizes.windows(3).step_by(2) {
        let (small, large) = (w[0], w[2]);
        assert!(
            machine.ideal_copy_ns(large) > machine.ideal_copy_ns(small),
            "{small} B vs {large} B:\n{}",
            table(&machine)
        );
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
    // Loose: the quick settings aim at about a second.
    assert!(took.as_secs_f64() < 10.0, "took {took:?}");
}
