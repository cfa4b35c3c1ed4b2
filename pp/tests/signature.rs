//! `pp signature` (docs/skeletons.md): generated logs with known loop nests come back as those
//! nests, exactly; the threshold is raised until the target compression is reached; and the
//! command end to end.

use pp::log::LogReader;
use pp::signature::{self, Entry, Op, Signature, Threshold};
use proptest::prelude::*;
use test_support::{pp, scratch, stdout_of};

/// A loop nest whose leaves are distinct operations (numbered in the order they come).
#[derive(Debug, Clone, PartialEq)]
enum Nest {
    Leaf,
    Loop(u64, Vec<Nest>),
}

/// The same nest with its leaves numbered.
#[derive(Debug, Clone, PartialEq)]
enum Known {
    Leaf(u32),
    Loop(u64, Vec<Known>),
}

fn number(nest: &[Nest], next: &mut u32) -> Vec<Known> {
    nest.iter()
        .map(|n| match n {
            Nest::Leaf => {
                *next += 1;
                Known::Leaf(*next - 1)
            }
            Nest::Loop(c, body) => Known::Loop(*c, number(body, next)),
        })
        .collect()
}

/// A nest: a loop's body is never one loop alone (`[[x]²]³` is `[x]⁶`, which is what it
/// would be recovered as).
fn nest() -> impl Strategy<Value = Nest> {
    Just(Nest::Leaf).prop_recursive(3, 40, 4, |inner| {
        (2u64..5, prop::collection::vec(inner, 1..4))
            .prop_filter("a body of one loop", |(_, b)| {
                !matches!(b[..], [Nest::Loop(..)])
            })
            .prop_map(|(c, b)| Nest::Loop(c, b))
    })
}

/// Leaf `i`'s operation in the log, at `t`, after `compute` ns: a send, a lock wait, a
/// collective or a copy, each distinct by its tag, object, name or size.
fn leaf_events(out: &mut String, t: &mut u64, i: u32, compute: u64) {
    *t += compute;
    let t0 = *t;
    match i % 4 {
        0 => out.push_str(&format!("{t0} 0 send 0 {i} 64\n")),
        1 => {
            out.push_str(&format!("{t0} 0 wait_begin lock l{i}\n"));
            *t += 50;
            out.push_str(&format!("{} 0 wait_end lock l{i}\n", *t));
        }
        2 => {
            out.push_str(&format!("{t0} 0 wait_begin barrier\n{t0} 0 coll c{i} 16\n"));
            *t += 70;
            out.push_str(&format!("{} 0 wait_end barrier\n", *t));
        }
        _ => {
            out.push_str(&format!("{t0} 0 comm_begin {}\n", 1000 + i));
            *t += 30;
            out.push_str(&format!("{} 0 comm_end {}\n", *t, 1000 + i));
        }
    }
}

/// The text log of the nest, each leaf computing about `base(i)` ns (times `1 + jitter`).
fn log_of(nest: &[Known], jitter: &mut impl FnMut() -> f64) -> String {
    fn walk(n: &[Known], out: &mut String, t: &mut u64, jitter: &mut impl FnMut() -> f64) {
        for k in n {
            match k {
                Known::Leaf(i) => {
                    let base = 1000.0 * f64::from(i + 1);
                    leaf_events(out, t, *i, (base * (1.0 + jitter())) as u64)
                }
                Known::Loop(c, body) => {
                    for _ in 0..*c {
                        walk(body, out, t, jitter)
                    }
                }
            }
        }
    }
    let mut out = String::from("pplog 1 p=1\n0 0 start\n");
    let mut t = 0;
    walk(nest, &mut out, &mut t, jitter);
    out.push_str(&format!("{} 0 stop\n", t + 10));
    out
}

/// Which leaf an operation is (the inverse of `leaf_events`).
fn leaf_of(op: &Op, bytes: f64) -> u32 {
    match op {
        Op::Send { tag, .. } => *tag,
        Op::Wait {
            object: Some(o), ..
        } => o[1..].parse().unwrap(),
        Op::Coll { op, .. } => op[1..].parse().unwrap(),
        Op::Copy => bytes as u32 - 1000,
        other => panic!("unexpected operation {other:?}"),
    }
}

/// The signature of thread 0 as a nest, its final `stop` step checked and left out.
fn recovered(s: &Signature) -> Vec<Known> {
    let t = &s.threads[0];
    fn known(t: &pp::signature::ThreadSignature, e: &Entry) -> Known {
        match e {
            Entry::Step(c) => {
                let c = &t.clusters[*c as usize];
                Known::Leaf(leaf_of(&c.op, c.mean_bytes()))
            }
            Entry::Loop { count, body } => {
                Known::Loop(*count, body.iter().map(|b| known(t, b)).collect())
            }
        }
    }
    let (last, rest) = t.entries.split_last().unwrap();
    assert!(matches!(last, Entry::Step(c) if t.clusters[*c as usize].op == Op::Stop));
    rest.iter().map(|e| known(t, e)).collect()
}

fn signature_of(text: &str, threshold: Threshold) -> Signature {
    let reader = LogReader::from_bytes("test.log", text.as_bytes().to_vec()).unwrap();
    signature::from_reader(reader, threshold).unwrap()
}

fn steps_in(n: &[Known]) -> u64 {
    n.iter()
        .map(|k| match k {
            Known::Leaf(_) => 1,
            Known::Loop(c, b) => c * steps_in(b),
        })
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Exact times, threshold 0: the nest comes back as generated, and every step is counted.
    #[test]
    fn known_nests_are_recovered_exactly(top in prop::collection::vec(nest(), 1..4)) {
        let known = number(&top, &mut 0);
        let s = signature_of(&log_of(&known, &mut || 0.0), Threshold::Fixed(0.0));
        prop_assert_eq!(recovered(&s), known.clone());
        prop_assert_eq!(s.threads[0].steps, steps_in(&known) + 1);
    }

    /// Times jittered by up to 1%: at threshold 0.05 the same nest comes back, each cluster's
    /// mean computation within 1% of its leaf's.
    #[test]
    fn jittered_nests_are_recovered_under_the_threshold(
        top in prop::collection::vec(nest(), 1..4),
        seed in any::<u64>(),
    ) {
        let known = number(&top, &mut 0);
        let mut x = seed | 1;
        let mut jitter = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f64 / 1000.0 * 0.01 - 0.01
        };
        let s = signature_of(&log_of(&known, &mut jitter), Threshold::Fixed(0.05));
        prop_assert_eq!(recovered(&s), known);
        for c in &s.threads[0].clusters {
            if c.op != Op::Stop {
                let base = 1000.0 * f64::from(leaf_of(&c.op, c.mean_bytes()) + 1);
                prop_assert!((c.mean_compute_ns() / base - 1.0).abs() <= 0.0101);
            }
        }
    }
}

#[test]
fn the_seeds_example_folds_innermost_first() {
    // αββγββγββγκαα → α[(β)²γ]³κ[α]², the example of seed 003 (Sodhi & Subhlok).
    let (a, b, g, k) = (0, 1, 2, 3);
    let order = [a, b, b, g, b, b, g, b, b, g, k, a, a];
    let mut text = String::from("pplog 1 p=1\n0 0 start\n");
    let mut t = 0;
    for i in order {
        leaf_events(&mut text, &mut t, i, 1000);
    }
    text.push_str(&format!("{} 0 stop\n", t + 1));
    let s = signature_of(&text, Threshold::Fixed(0.0));
    use Known::{Leaf, Loop};
    assert_eq!(
        recovered(&s),
        vec![
            Leaf(a),
            Loop(3, vec![Loop(2, vec![Leaf(b)]), Leaf(g)]),
            Leaf(k),
            Loop(2, vec![Leaf(a)]),
        ]
    );
    // 14 steps (with the stop) in 9 entries.
    assert_eq!(s.threads[0].steps, 14);
    assert_eq!(s.threads[0].size, 9);
}

#[test]
fn the_threshold_is_raised_until_the_target_is_reached() {
    // 100 iterations of one send whose computation alternates 1000 and 1030 ns (101 steps
    // with the stop): at threshold 0 two clusters, a loop of 50 over both (4 entries,
    // compression 25.25); from 0.05 one cluster, a loop of 100 (3 entries, 33.7).
    let mut text = String::from("pplog 1 p=1\n0 0 start\n");
    let mut t = 0;
    for i in 0..100 {
        t += if i % 2 == 0 { 1000 } else { 1030 };
        text.push_str(&format!("{t} 0 send 0 1 8\n"));
    }
    text.push_str(&format!("{} 0 stop\n", t + 1));
    let s = signature_of(&text, Threshold::Target(30.0));
    assert_eq!(s.threshold, 0.05);
    assert_eq!(s.target, Some((30.0, true)));
    assert_eq!(s.threads[0].size, 3);
    let s = signature_of(&text, Threshold::Target(20.0));
    assert_eq!(s.threshold, 0.0);
    assert_eq!(s.threads[0].size, 4);
    let s = signature_of(&text, Threshold::Target(1000.0));
    assert_eq!(s.target, Some((1000.0, false)));
    assert_eq!(s.threshold, *signature::THRESHOLDS.last().unwrap());
}

#[test]
fn computations_that_vary_tenfold_fold_by_their_operations_alone() {
    // 100 sends whose computation is 50 or 1000 ns in an order without repeats (an LCG's bits) (a rayon worker's share
    // of a region): up to 0.9 two clusters in an order with no repeats to fold; at the last
    // rung, 1, one cluster and a loop of 100 (3 entries with the stop).
    let mut text = String::from("pplog 1 p=1\n0 0 start\n");
    let (mut t, mut x) = (0, 1u64);
    for _ in 0..100 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        t += if (x >> 40) & 1 == 0 { 50 } else { 1000 };
        text.push_str(&format!("{t} 0 send 0 1 8\n"));
    }
    text.push_str(&format!("{} 0 stop\n", t + 1));
    let at = |threshold| signature_of(&text, Threshold::Fixed(threshold)).threads[0].size;
    assert!(at(0.9) > 20, "at 0.9: {} entries", at(0.9));
    assert_eq!(at(1.0), 3);
    let s = signature_of(&text, Threshold::Target(30.0));
    assert_eq!(s.threshold, 1.0);
    assert_eq!(s.target, Some((30.0, true)));
}

#[test]
fn one_barrier_in_two_regions_is_two_clusters_even_by_operations_alone() {
    // Every pass: region a, 100 ns of work and its closing barrier; region b, 10,000 ns and a
    // barrier of the same name (OpenMP's `implicit_barrier`). Each region's barrier keeps its
    // own computation at every threshold, 1 and 2 included.
    let mut text = String::from("pplog 1 p=1\n0 0 start\n");
    let mut t = 0u64;
    for i in 0..20u64 {
        for (name, work) in [("a", 100), ("b", 10_000)] {
            let id = 2 * i + u64::from(name == "b");
            text.push_str(&format!("{} 0 region_begin {id} {name}\n", t + 10));
            text.push_str(&format!(
                "{} 0 wait_begin barrier implicit_barrier\n",
                t + 10 + work
            ));
            text.push_str(&format!(
                "{} 0 wait_end barrier implicit_barrier\n",
                t + 20 + work
            ));
            text.push_str(&format!("{} 0 region_end {id}\n", t + 30 + work));
            t += 30 + work;
        }
    }
    text.push_str(&format!("{} 0 stop\n", t + 1));
    for threshold in [0.05, 1.0, signature::RUNS] {
        let s = signature_of(&text, Threshold::Fixed(threshold));
        let barriers: Vec<f64> = s.threads[0]
            .clusters
            .iter()
            .filter(|c| matches!(&c.op, Op::Wait { kind, .. } if kind == "barrier"))
            .map(|c| c.mean_compute_ns())
            .collect();
        assert_eq!(barriers, [100.0, 10_000.0], "at {threshold}");
        // And the passes still fold: a loop of 20 and the stop.
        assert!(
            matches!(s.threads[0].entries[0], Entry::Loop { count: 20, .. }),
            "at {threshold}: {:?}",
            s.threads[0].entries
        );
    }
}

#[test]
fn passes_that_take_a_lock_a_varying_number_of_times_fold_at_the_last_rung() {
    // 60 passes, each 1 to 4 acquisitions of a lock (in an order without repeats: an LCG's
    // bits) and a barrier: up to 1 no stretch repeats; at the last rung, 2, one loop of 60
    // passes whose lock is a run of its mean length (5 entries with the stop).
    let mut text = String::from("pplog 1 p=1\n0 0 start\n");
    let (mut t, mut x, mut locks) = (0u64, 1u64, 0u64);
    for _ in 0..60 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let k = 1 + (x >> 40) % 4;
        locks += k;
        for _ in 0..k {
            text.push_str(&format!("{} 0 wait_begin lock L\n", t + 100));
            text.push_str(&format!("{} 0 wait_end lock L\n", t + 110));
            t += 110;
        }
        text.push_str(&format!("{} 0 wait_begin barrier B\n", t + 100));
        text.push_str(&format!("{} 0 wait_end barrier B\n", t + 110));
        t += 110;
    }
    text.push_str(&format!("{} 0 stop\n", t + 1));
    let at = |threshold| signature_of(&text, Threshold::Fixed(threshold)).threads[0].clone();
    assert!(at(1.0).size > 20, "at 1: {} entries", at(1.0).size);
    let runs = at(signature::RUNS);
    assert_eq!(runs.size, 5, "{:?}", runs.entries);
    let mean = (locks as f64 / 60.0).round() as u64;
    let Entry::Loop { count: 60, body } = &runs.entries[0] else {
        panic!("{:?}", runs.entries)
    };
    assert!(
        matches!(&body[0], Entry::Loop { count, .. } if *count == mean),
        "{body:?}"
    );
    let s = signature_of(&text, Threshold::Target(30.0));
    assert_eq!(s.threshold, signature::RUNS);
    assert_eq!(s.target, Some((30.0, true)));
}

#[test]
fn pp_signature_prints_the_loops_of_a_log() {
    let dir = scratch("signature-cli");
    let mut text = String::from("pplog 1 p=2\n0 0 start\n0 1 start\n");
    for i in 1..=10 {
        let t = 2000 * i;
        text.push_str(&format!("{t} 0 send 1 5 4096\n"));
        text.push_str(&format!("{} 1 wait_begin recv\n", t + 100));
        text.push_str(&format!(
            "{0} 1 recv 0 5 4096\n{0} 1 wait_end recv\n",
            t + 110
        ));
    }
    text.push_str("20200 0 stop\n20200 1 stop\n");
    let log = test_support::write(&dir, "run.log", &text);
    let out = stdout_of(pp!().arg("signature").arg(&log));
    assert!(
        out.starts_with("signature: p=2, threshold 0.05, compression "),
        "{out}"
    );
    assert!(
        out.contains("thread 0: 11 steps, 2 clusters, 3 entries"),
        "{out}"
    );
    assert!(
        out.contains("  loop 10 {\n    compute 2.000 us  send to 1 tag 5 4096 B\n  }"),
        "{out}"
    );
    assert!(out.contains("recv from 0 tag 5 4096 B (10 ns)"), "{out}");
    let json: serde_json::Value = serde_json::from_str(&stdout_of(
        pp!().args(["signature", "--format", "json"]).arg(&log),
    ))
    .unwrap();
    assert_eq!(json["threads"][0]["structure"][0]["loop"], 10);
    let err = test_support::error_of(pp!().args(["signature", "--threshold", "1.5"]).arg(&log));
    assert_eq!(
        err.trim_end(),
        "Error: --threshold: 1.5 is not in [0, 1] or 2"
    );
}

#[test]
fn every_receive_a_waitall_completes_is_a_step() {
    // One wait completing three receives (MPI_Waitall after three MPI_Irecv): the first names
    // the wait (its 500 ns), the other two follow with no computation and no duration.
    let text = "pplog 1 p=4\n0 0 start\n1000 0 wait_begin recv\n1200 0 recv 1 0 64\n\
                1300 0 recv 2 0 64\n1500 0 recv 3 0 64\n1500 0 wait_end recv\n1600 0 stop\n";
    let s = signature_of(text, Threshold::Fixed(0.0));
    let t = &s.threads[0];
    let ops: Vec<(Op, f64, f64)> = t
        .entries
        .iter()
        .map(|e| match e {
            Entry::Step(c) => {
                let c = &t.clusters[*c as usize];
                (c.op.clone(), c.mean_compute_ns(), c.mean_op_ns())
            }
            Entry::Loop { .. } => panic!("no loop expected: {e:?}"),
        })
        .collect();
    let recv = |peer| Op::Recv { peer, tag: 0 };
    assert_eq!(
        ops,
        vec![
            (recv(1), 1000.0, 500.0),
            (recv(2), 0.0, 0.0),
            (recv(3), 0.0, 0.0),
            (Op::Stop, 100.0, 0.0),
        ]
    );
}

#[test]
fn a_members_barrier_that_the_regions_end_releases_is_inside_its_part() {
    // OpenMP's implicit barrier: thread 0 opens region r, both threads wait at its barrier, and
    // thread 1's wait ends after thread 0's region_end (the end released it). Thread 1, which
    // records no region, has its part begin at its first sample in the region and end after
    // that wait, so that its skeleton joins after the barrier, as thread 0's region_end does
    // (a part_end before it would wait at the join while thread 0 waits at the barrier).
    let text = "pplog 1 p=2\n0 0 start\n0 1 start\n\
        1000 0 region_begin 1 r\n1010 1 cpu 0\n\
        4990 1 cpu 3980\n5000 0 wait_begin barrier\n5000 1 wait_begin barrier\n\
        6000 0 wait_end barrier\n6010 0 region_end 1\n6050 1 wait_end barrier\n\
        7000 0 stop\n7000 1 cpu 4000\n7000 1 stop\n";
    let s = signature_of(text, Threshold::Fixed(0.0));
    let t = &s.threads[1];
    let ops: Vec<Op> = t
        .entries
        .iter()
        .map(|e| match e {
            Entry::Step(c) => t.clusters[*c as usize].op.clone(),
            Entry::Loop { .. } => panic!("no loop expected: {e:?}"),
        })
        .collect();
    let barrier = Op::Wait {
        kind: "barrier".into(),
        object: None,
        by: None,
    };
    assert_eq!(
        ops,
        vec![
            Op::PartBegin { name: "r".into() },
            barrier,
            Op::PartEnd,
            Op::Stop
        ]
    );
}

/// Each step of thread `t` (a signature at threshold 0 of a log without repeats): its operation,
/// computation, CPU time, operation time and the operation's CPU time.
fn steps_of(s: &Signature, t: usize) -> Vec<(Op, f64, f64, f64, f64)> {
    let t = &s.threads[t];
    t.entries
        .iter()
        .map(|e| match e {
            Entry::Step(c) => {
                let c = &t.clusters[*c as usize];
                (
                    c.op.clone(),
                    c.mean_compute_ns(),
                    c.mean_cpu_ns(),
                    c.mean_op_ns(),
                    c.mean_op_cpu_ns(),
                )
            }
            Entry::Loop { .. } => panic!("no loop expected: {e:?}"),
        })
        .collect()
}

#[test]
fn a_regions_end_after_the_openers_last_sample_is_its_join() {
    // A `Team`'s region: thread 0 opens it, both sample their CPU clocks where their parts begin
    // and end; thread 0's part ends at 3000, the region at 5000 (it waited for thread 1's part,
    // spinning for 500 ns of it). The region_end's computation is the part (2000 ns, all CPU),
    // its operation the join (2000 ns, 500 of them CPU).
    let text = "pplog 1 p=2\n0 0 start\n0 1 start\n\
        1000 0 region_begin 1 r\n1000 0 cpu 1000\n1000 1 cpu 0\n\
        3000 0 cpu 3000\n4900 1 cpu 3900\n5000 0 region_end 1\n5000 0 cpu 3500\n\
        6000 0 stop\n6000 1 stop\n";
    let s = signature_of(text, Threshold::Fixed(0.0));
    let steps = steps_of(&s, 0);
    assert_eq!(steps[1].0, Op::RegionEnd);
    assert_eq!(
        (steps[1].1, steps[1].2, steps[1].3, steps[1].4),
        (2000.0, 2000.0, 2000.0, 500.0)
    );
    // Without a sample after the region's last operation, the end is a point, as before.
    let text = "pplog 1 p=1\n0 0 start\n1000 0 region_begin 1 r\n\
        2000 0 wait_begin barrier\n2500 0 wait_end barrier\n3000 0 region_end 1\n4000 0 stop\n";
    let s = signature_of(text, Threshold::Fixed(0.0));
    let steps = steps_of(&s, 0);
    assert_eq!(steps[2].0, Op::RegionEnd);
    assert_eq!((steps[2].1, steps[2].3), (500.0, 0.0));
}

#[test]
fn a_wait_that_spun_used_its_processor_and_one_that_blocked_did_not() {
    // Thread 0's barrier wait: its CPU clock advanced through it (a spinning wait); thread 1's
    // wait of the same length: its clock stood still (it slept).
    let text = "pplog 1 p=2\n0 0 start\n0 1 start\n0 0 cpu 0\n0 1 cpu 0\n\
        1000 0 cpu 1000\n1000 1 cpu 1000\n1000 0 wait_begin barrier\n1000 1 wait_begin barrier\n\
        5000 0 wait_end barrier\n5000 1 wait_end barrier\n5000 0 cpu 5000\n5000 1 cpu 1000\n\
        6000 0 stop\n6000 1 stop\n";
    let s = signature_of(text, Threshold::Fixed(0.0));
    let (spun, slept) = (&steps_of(&s, 0)[0], &steps_of(&s, 1)[0]);
    assert!(matches!(spun.0, Op::Wait { .. }));
    assert_eq!((spun.3, spun.4), (4000.0, 4000.0));
    assert_eq!((slept.3, slept.4), (4000.0, 0.0));
    // The computations before them were CPU both.
    assert_eq!((spun.2, slept.2), (1000.0, 1000.0));
}
