//! `tools/skeleton-validation.sh`'s tables from a hand-made `raw.csv` (`TABLE_ONLY=1`: no runs,
//! nothing built): each prediction's error against values worked out by hand, the floor ("the
//! app a round later", docs/skeletons.md#validation) included.

use std::path::Path;
use std::process::Command;

/// The rows of `errors.csv` for `method`, as (round, predicted, error %).
fn rows(errors: &str, method: &str) -> Vec<(u32, f64, f64)> {
    errors
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() == 7 && f[3] == method).then(|| {
                (
                    f[2].parse().expect("a round"),
                    f[4].parse().expect("a prediction"),
                    f[6].parse().expect("an error"),
                )
            })
        })
        .collect()
}

#[test]
fn the_tables_have_each_skeletons_error_and_the_applications_own_floor() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/skeleton-validation.sh");
    let dir = std::env::temp_dir().join(format!("pp-skel-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Two rounds of one application: dedicated 10 and 12 s, beside the hog 20 and 30 s; a
    // skeleton of 1 s that slows 2x in round 1 and 2.4x in round 2.
    std::fs::write(
        dir.join("raw.csv"),
        "app,scenario,round,runner,seconds\n\
         rust,dedicated,1,app,10\n\
         rust,dedicated,1,skel 1 s,1\n\
         rust,hog1,1,app,20\n\
         rust,hog1,1,skel 1 s,2\n\
         rust,dedicated,2,app,12\n\
         rust,dedicated,2,skel 1 s,1\n\
         rust,hog1,2,app,30\n\
         rust,hog1,2,skel 1 s,2.4\n",
    )
    .unwrap();
    let out = Command::new("bash")
        .arg(&script)
        .arg(&dir)
        .env("TABLE_ONLY", "1")
        // No binaries are needed for the tables (a directory without them).
        .env("BIN", &dir)
        .output()
        .expect("bash runs the script");
    assert!(
        out.status.success(),
        "the script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let errors = std::fs::read_to_string(dir.join("errors.csv")).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    // The skeleton: T_app' = T_skel' × T_app / T_skel from its own round.
    let skel = rows(&errors, "skel 1 s");
    assert_eq!(skel.len(), 2, "{errors}");
    assert!(close(skel[0].1, 20.0) && close(skel[0].2, 0.0), "{skel:?}");
    assert!(close(skel[1].1, 28.8) && close(skel[1].2, -4.0), "{skel:?}");
    // The floor: round 1 from round 2 (30 × 10 / 12 = 25 against 20: +25%), the last round
    // from the first (20 × 12 / 10 = 24 against 30: −20%).
    let floor = rows(&errors, "the app a round later");
    assert_eq!(floor.len(), 2, "{errors}");
    assert!(
        close(floor[0].1, 25.0) && close(floor[0].2, 25.0),
        "{floor:?}"
    );
    assert!(
        close(floor[1].1, 24.0) && close(floor[1].2, -20.0),
        "{floor:?}"
    );
    let table = std::fs::read_to_string(dir.join("table.md")).unwrap();
    assert!(
        table.contains("| rust | hog1 | the app a round later | +2.5% | -20.0% to +25.0% | 2 |"),
        "{table}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
