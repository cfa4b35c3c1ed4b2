//! The C + MPI skeleton of an MPI log (docs/skeletons.md#mpi-skeletons), with the real `mpicc`
//! and `mpirun`: the MPI fft2d (point-to-point transpose, 4 ranks) is recorded by
//! `pp run -- mpirun`, `pp skeleton --scale 4` writes its C source and Makefile, `pp skeleton run`
//! builds the skeleton, runs it under `pp run -- mpirun` and records its log, and that log's
//! signature is the application's with the loop counts divided by 4 (so 1/4 of the messages and
//! bytes between each pair of ranks). Without `mpicc`
//! or `mpirun` the test passes and says on standard error what it skipped and why. No timing is
//! tested: the machine is shared.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use pp::signature::{self, Entry, Op, Signature, ThreadSignature, Threshold};
use test_support::{
    Toolchain, make_skeleton, one_at_a_time, open_mpi, pp, repository, scratch, skip, succeeded,
};

const RANKS: u32 = 4;
const ITERS: u64 = 24;
const K: u64 = 4;

/// The top-level loop of `t` that holds its messages: its count and its body's operations.
fn message_loop(t: &ThreadSignature) -> (u64, Vec<Op>) {
    t.entries
        .iter()
        .find_map(|e| match e {
            Entry::Loop { count, body } => {
                let ops: Vec<Op> = body
                    .iter()
                    .map(|b| match b {
                        Entry::Step(c) => t.clusters[*c as usize].op.clone(),
                        Entry::Loop { .. } => panic!("thread {}: a nested loop", t.thread),
                    })
                    .collect();
                ops.iter()
                    .any(|o| matches!(o, Op::Send { .. }))
                    .then_some((*count, ops))
            }
            Entry::Step(_) => None,
        })
        .unwrap_or_else(|| panic!("thread {}: no loop of messages: {t:?}", t.thread))
}

/// Per thread, per (peer, tag) of its sends: how many and their mean bytes.
fn sends(s: &Signature) -> BTreeMap<(u32, u32, u32), (u64, f64)> {
    let mut out = BTreeMap::new();
    for t in &s.threads {
        for c in &t.clusters {
            if let Op::Send { peer, tag } = c.op {
                let e = out.entry((t.thread, peer, tag)).or_insert((0, 0.0));
                e.1 = (e.1 * e.0 as f64 + c.mean_bytes() * c.count as f64) / (e.0 + c.count) as f64;
                e.0 += c.count;
            }
        }
    }
    out
}

#[test]
fn the_skeleton_of_the_mpi_fft_runs_and_its_signature_is_the_fft_divided_by_k() {
    let test = "the_skeleton_of_the_mpi_fft_runs_and_its_signature_is_the_fft_divided_by_k";
    let open = match open_mpi() {
        Ok(open) => open,
        Err(why) => return skip(test, why),
    };
    let dir = scratch("skeleton-mpi");
    let fft = dir.join("fft2d");
    if let Err(why) = Toolchain::MPI.example(&repository().join("examples/mpi/fft2d.c"), &fft) {
        return skip(test, why);
    }
    let _serial = one_at_a_time();
    let app_log = dir.join("app.log");
    let mut run = pp!();
    run.arg("run")
        .arg("--log")
        .arg(&app_log)
        .args(["--", "mpirun"]);
    if open {
        run.args(["--oversubscribe", "--bind-to", "none"]);
    }
    let out = run
        .args(["-np", &RANKS.to_string()])
        .arg(&fft)
        .args([
            "-n",
            "128",
            "--iters",
            &ITERS.to_string(),
            "--transpose",
            "p2p",
        ])
        .env("PP_RUN_DELAY", "0")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    succeeded("pp run -- mpirun fft2d", &out);

    let skel_dir = make_skeleton(pp!(), &app_log, K, &dir.join("skel"));
    for f in ["skeleton.txt", "skeleton.c", "Makefile"] {
        assert!(skel_dir.join(f).is_file(), "{f} missing");
    }

    let skel_log = dir.join("skel.log");
    let _ = std::fs::remove_file(&skel_log);
    let out = pp!()
        .args(["skeleton", "run"])
        .arg(&skel_dir)
        .args(["--", "--bind-to", "none"])
        .env("PP_LOG", &skel_log)
        .env("PP_RUN_DELAY", "0")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    succeeded("pp skeleton run", &out);
    assert!(skel_dir.join("skeleton").is_file(), "make built no program");
    compare(&app_log, &skel_log);
}

/// The skeleton's signature against the application's: the same ranks, the same loop of
/// messages (the same operations to the same peers) with ITERS / K iterations, and each rank
/// sending each peer 1/K as many messages of the same size.
fn compare(app_log: &Path, skel_log: &Path) {
    // Folded by operations alone: the application's computations vary (4 ranks share 2 cores).
    let app = signature::read(app_log, Threshold::Fixed(1.0)).unwrap();
    let skel = signature::read(skel_log, Threshold::Fixed(1.0)).unwrap();
    assert_eq!(skel.p, RANKS);
    assert_eq!(skel.threads.len(), app.threads.len());
    for (a, s) in app.threads.iter().zip(&skel.threads) {
        let (app_count, app_ops) = message_loop(a);
        let (skel_count, skel_ops) = message_loop(s);
        assert_eq!(app_count, ITERS, "rank {}", a.thread);
        assert_eq!(skel_count, ITERS / K, "rank {}", s.thread);
        assert_eq!(skel_ops, app_ops, "rank {}", s.thread);
        // Each rank sends to and receives from each other rank once an iteration.
        let peers = |ops: &[Op], send: bool| -> Vec<u32> {
            ops.iter()
                .filter_map(|o| match (o, send) {
                    (Op::Send { peer, .. }, true) | (Op::Recv { peer, .. }, false) => Some(*peer),
                    _ => None,
                })
                .collect()
        };
        let others: Vec<u32> = (0..RANKS).filter(|&r| r != a.thread).collect();
        let mut to = peers(&app_ops, true);
        to.sort_unstable();
        assert_eq!(to, others, "rank {}", a.thread);
        let mut from = peers(&app_ops, false);
        from.sort_unstable();
        assert_eq!(from, others, "rank {}", a.thread);
    }
    let (app_sends, skel_sends) = (sends(&app), sends(&skel));
    assert_eq!(
        app_sends.keys().collect::<Vec<_>>(),
        skel_sends.keys().collect::<Vec<_>>()
    );
    for (key, &(n, bytes)) in &app_sends {
        let (m, skel_bytes) = skel_sends[key];
        assert_eq!(m, n / K, "{key:?}: messages");
        // n = 128 over 4 ranks: blocks of 2 × 32 × 32 doubles, 16384 bytes. The loop keeps
        // whole iterations, so each message keeps its size and the skeleton sends 1/K of the
        // bytes in all.
        assert_eq!(bytes, 16384.0, "{key:?}");
        assert_eq!(skel_bytes, bytes, "{key:?}: bytes");
        assert_eq!(
            m as f64 * skel_bytes,
            n as f64 * bytes / K as f64,
            "{key:?}: bytes in all"
        );
    }
}
