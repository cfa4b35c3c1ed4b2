//! The completeness check (docs/modelling.md, "Completeness check") on the recorded fft2d
//! study: ratios computed by hand (awk over the file) from the rows' pc.

use lca::completeness::{DRIFT, check, render};
use std::path::Path;

fn study() -> fit::Datafile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/data/fft2d-study.dat");
    fit::Datafile::read(&path).unwrap()
}

#[test]
fn fft2d_study_ratios_match_the_hand_computed_ones() {
    let groups = check(&study());
    let group = |levels: &str| {
        groups
            .iter()
            .find(|g| g.levels == levels)
            .unwrap_or_else(|| panic!("no group {levels}: {groups:?}"))
    };
    // Means of 3 replicates: dp n=32 pc(2) = 0.004660002 s, pc(8) = 0.005718911 s.
    let dp = group("impl=dp n=32 iters=500");
    assert_eq!(dp.points.first().unwrap().p, 2.0);
    assert!(dp.points.iter().all(|x| x.runs == 3));
    let at =
        |g: &lca::completeness::Group, p: f64| g.points.iter().find(|x| x.p == p).unwrap().clone();
    assert!((at(dp, 2.0).ratio - 1.0).abs() < 1e-12);
    assert!((at(dp, 8.0).ratio - 0.005718911 / 0.004660002).abs() < 1e-6);
    assert!((at(dp, 5.0).ratio - 0.005078178 / 0.004660002).abs() < 1e-6);
    assert!(at(dp, 8.0).drifts && at(dp, 7.0).drifts && !at(dp, 5.0).drifts);
    // tp n=512 stays within 10%: pc(8)/pc(2) = 1.478304443 / 1.394775042 = 1.060.
    let tp = group("impl=tp n=512 iters=500");
    assert!((at(tp, 8.0).ratio - 1.478304443 / 1.394775042).abs() < 1e-6);
    assert!(!tp.drifts());
    let text = render(&groups);
    assert!(text.contains("impl=dp n=32 iters=500: p=2 1.000, p=3 1.027, p=5 1.090, p=7 1.173 (drift), p=8 1.227 (drift)"), "{text}");
    assert!(
        text.contains(&format!("pc drifts over {:.0}% in ", DRIFT * 100.0)),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .last()
            .unwrap()
            .contains("impl=tp n=512 iters=500;"),
        "{text}"
    );
}

#[test]
fn one_p_or_no_pc_gives_no_check() {
    let one = fit::Datafile::parse("one.dat", "p=2 pc=1\np=2 pc=1.1\n").unwrap();
    assert!(check(&one).is_empty());
    assert_eq!(render(&check(&one)), "");
    let no_pc = fit::Datafile::parse("w.dat", "p=2 wall=1\np=4 wall=2\n").unwrap();
    assert!(check(&no_pc).is_empty());
    let flat = fit::Datafile::parse("f.dat", "p=1 pc=2\np=4 pc=2.1\n").unwrap();
    let g = check(&flat);
    assert_eq!(g.len(), 1);
    assert!(!g[0].drifts());
    assert!(render(&g).contains("all runs: p=1 1.000, p=4 1.050"));
    assert!(render(&g).contains("no hidden overhead"));
}

/// A study's `[whatif]` rows (a `predicted` cell) are `pp whatif`'s replay, not a measurement:
/// the check marks a p whose rows are all predicted, and says what such a pc is.
#[test]
fn a_p_whose_rows_are_predicted_is_marked_so() {
    let text = "p=1 pc=1\np=2 pc=1.05\n\
                p=4 pc=1.5 predicted=demand:cpu predicted_from=a.log\n\
                p=8 pc=1.02 predicted=demand:cpu predicted_from=b.log\n";
    let data = fit::Datafile::parse("w.dat", text).unwrap();
    let groups = check(&data);
    let flags: Vec<bool> = groups[0].points.iter().map(|x| x.predicted).collect();
    assert_eq!(flags, [false, false, true, true]);
    let said = render(&groups);
    assert!(
        said.starts_with(
            "completeness check: measured pc(p)/pc(p_min) per level (at a p marked predicted, \
             pp whatif's replay of the run made there, which keeps its measured CPU time)\n"
        ),
        "{said}"
    );
    assert!(
        said.contains(
            "all runs: p=1 1.000, p=2 1.050, p=4 1.500 (drift, predicted), p=8 1.020 (predicted)"
        ),
        "{said}"
    );
    // Measured rows only: the header as before.
    let measured = fit::Datafile::parse("m.dat", "p=1 pc=1\np=2 pc=1.05\n").unwrap();
    assert!(
        render(&check(&measured))
            .starts_with("completeness check: measured pc(p)/pc(p_min) per level\n")
    );
}
