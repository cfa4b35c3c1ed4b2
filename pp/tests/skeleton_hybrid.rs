//! The C + MPI + OpenMP skeleton of a hybrid log (docs/skeletons.md#hybrid-skeletons), with the
//! real `mpicc`, clang's OpenMP and `mpirun`: `examples/mpi/hybrid.c` (2 ranks of 2 OpenMP
//! threads, 10 repeats of a parallel region and a late sender) is recorded by
//! `pp run -- mpirun`, `pp skeleton --scale 5` writes its C sources and Makefile,
//! `pp skeleton run` builds the skeleton with make, runs it under `pp run -- mpirun` and records
//! its log, and that log has the application's ranks and threads, 1/5 of its regions on each
//! rank's master and of its parts on each worker, 1/5 of its messages between the same ranks
//! with the same tags and sizes, and about 1/5 of its CPU time. Its wall is printed beside the
//! application's / K, not tested (no test may depend on the machine's load). Without `mpicc`,
//! `mpirun`, clang or libomp the test passes and says on standard error what it skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pp::signature::{self, Op, Signature, Threshold};
use serde_json::Value;
use test_support::{
    NO_MACHINE, compile, make_skeleton, ompt_tool, one_at_a_time, open_mpi, pp, repository,
    scratch, skip, stdout_of, succeeded,
};

const RANKS: u32 = 2;
const THREADS: u32 = 2;
const REPEATS: u64 = 10;
const K: u64 = 5;

/// `examples/mpi/hybrid.c` built as `make -C examples/mpi` builds it (clang's OpenMP under
/// mpicc), into `dir`.
fn build(dir: &Path) -> Result<PathBuf, String> {
    let program = dir.join("hybrid");
    let mut command = Command::new("mpicc");
    command
        .env("OMPI_CC", "clang")
        .env("MPICH_CC", "clang")
        .args(["-std=c11", "-O2", "-Wall", "-fopenmp", "-rdynamic"])
        .arg("-fno-optimize-sibling-calls")
        .arg("-o")
        .arg(&program)
        .arg(repository().join("examples/mpi/hybrid.c"))
        .arg("-lm");
    compile(&mut command).map(|_| program).map_err(|e| {
        format!(
            "OMPI_CC=clang mpicc -fopenmp cannot build hybrid.c (Open MPI, clang, libomp missing?): {}",
            e.first_line()
        )
    })
}

/// The environment both runs share: 2 OpenMP threads that wait passively (this machine is
/// shared), the tool, no machine file.
fn environment(command: &mut Command, tool: &Path) {
    command
        .env("OMP_NUM_THREADS", THREADS.to_string())
        .env("OMP_WAIT_POLICY", "passive")
        .env("PP_OMPT_LIBRARY", tool)
        .env("PP_MACHINE", NO_MACHINE)
        .env("PP_RUN_DELAY", "0")
        .stdin(Stdio::null());
}

#[test]
fn the_skeleton_of_a_hybrid_run_has_its_regions_parts_and_messages_divided_by_k() {
    let test = "the_skeleton_of_a_hybrid_run_has_its_regions_parts_and_messages_divided_by_k";
    let open = match open_mpi() {
        Ok(open) => open,
        Err(why) => return skip(test, why),
    };
    let tool = match ompt_tool(Path::new(env!("CARGO_BIN_EXE_pp"))) {
        Ok(t) => t,
        Err(why) => return skip(test, why),
    };
    let dir = scratch("skeleton-hybrid");
    let program = match build(&dir) {
        Ok(p) => p,
        Err(why) => {
            return skip(
                test,
                format!("{why} (tools/system-packages.sh installs it)"),
            );
        }
    };
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
    run.args(["-np", &RANKS.to_string()])
        .args(["-x", "OMP_NUM_THREADS", "-x", "OMP_WAIT_POLICY"])
        .arg(&program)
        .args(["--ms", "20", "--extra", "10", "--late", "15", "--repeats"])
        .arg(REPEATS.to_string());
    environment(&mut run, &tool);
    succeeded("pp run -- mpirun hybrid", &run.output().unwrap());

    let skel_dir = make_skeleton(pp!(), &app_log, K, &dir.join("skel"));
    for f in ["skeleton.txt", "skeleton.c", "regions.c", "Makefile"] {
        assert!(skel_dir.join(f).is_file(), "{f} missing");
    }

    let skel_log = dir.join("skel.log");
    let _ = std::fs::remove_file(&skel_log);
    let mut run = pp!();
    run.args(["skeleton", "run"])
        .arg(&skel_dir)
        .args(["--", "--bind-to", "none"])
        .env("PP_LOG", &skel_log);
    environment(&mut run, &tool);
    let out = run.output().unwrap();
    succeeded("pp skeleton run", &out);
    assert!(skel_dir.join("skeleton").is_file(), "make built no program");
    compare(&app_log, &skel_log);
}

/// Per thread: its regions by name (a master's), its parts by name (a worker's), its sends by
/// (peer, tag) with their mean bytes, its collectives.
#[derive(Debug, Default, PartialEq)]
struct Shape {
    regions: BTreeMap<String, u64>,
    parts: BTreeMap<String, u64>,
    sends: BTreeMap<(u32, u32), (u64, u64)>,
    receives: BTreeMap<(u32, u32), u64>,
    collectives: BTreeMap<String, u64>,
}

fn shapes(s: &Signature) -> BTreeMap<u32, Shape> {
    s.threads
        .iter()
        .map(|t| {
            let mut shape = Shape::default();
            for c in &t.clusters {
                match &c.op {
                    Op::RegionBegin { name } if name != "mpi" => {
                        *shape.regions.entry(name.clone()).or_default() += c.count
                    }
                    Op::PartBegin { name } => {
                        *shape.parts.entry(name.clone()).or_default() += c.count
                    }
                    Op::Send { peer, tag } => {
                        let e = shape.sends.entry((*peer, *tag)).or_default();
                        e.0 += c.count;
                        e.1 = c.mean_bytes().round() as u64;
                    }
                    Op::Recv { peer, tag } => {
                        *shape.receives.entry((*peer, *tag)).or_default() += c.count
                    }
                    Op::Coll { op, .. } => {
                        *shape.collectives.entry(op.clone()).or_default() += c.count
                    }
                    _ => {}
                }
            }
            (t.thread, shape)
        })
        .collect()
}

/// `pp --format json`'s profile of `log`.
fn profile(log: &Path) -> Value {
    serde_json::from_str(&stdout_of(pp!().args(["--format", "json"]).arg(log))).unwrap()
}

fn compare(app_log: &Path, skel_log: &Path) {
    let app = signature::read(app_log, Threshold::Fixed(1.0)).unwrap();
    let skel = signature::read(skel_log, Threshold::Fixed(1.0)).unwrap();
    assert_eq!(app.p, RANKS * THREADS);
    assert_eq!(skel.p, app.p);
    let (a, s) = (shapes(&app), shapes(&skel));
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        s.keys().collect::<Vec<_>>(),
        "the same threads"
    );
    let k = |n: u64| n / K;
    for r in 0..RANKS {
        let master = r * THREADS;
        let (am, sm) = (&a[&master], &s[&master]);
        // The example's region is its function compute; the skeleton's is named after it.
        assert_eq!(am.regions, BTreeMap::from([("compute".into(), REPEATS)]));
        assert_eq!(
            sm.regions,
            am.regions.iter().map(|(n, &c)| (n.clone(), k(c))).collect(),
            "rank {r}'s master: regions"
        );
        assert_eq!(sm.collectives, am.collectives, "rank {r}: collectives");
        for w in 1..THREADS {
            let (aw, sw) = (&a[&(master + w)], &s[&(master + w)]);
            assert_eq!(aw.parts, BTreeMap::from([("compute".into(), REPEATS)]));
            assert_eq!(
                sw.parts,
                aw.parts.iter().map(|(n, &c)| (n.clone(), k(c))).collect(),
                "rank {r}'s thread {w}: parts"
            );
            assert_eq!(sw.sends, BTreeMap::new());
        }
    }
    // Ranks 1.. send rank 0 an 8-byte message a repeat (thread 2 to thread 0, tag 1).
    assert_eq!(a[&2].sends, BTreeMap::from([((0, 1), (REPEATS, 8))]));
    assert_eq!(s[&2].sends, BTreeMap::from([((0, 1), (k(REPEATS), 8))]));
    assert_eq!(a[&0].receives, BTreeMap::from([((2, 1), REPEATS)]));
    assert_eq!(s[&0].receives, BTreeMap::from([((2, 1), k(REPEATS))]));

    // The skeleton spins 1/K of the application's CPU time: the CPU time its threads worked
    // (`pc`, which a busy machine does not stretch) is about 1/K of the application's.
    let (pa, ps) = (profile(app_log), profile(skel_log));
    let pc = |p: &Value| -> f64 {
        (0..(RANKS * THREADS) as usize)
            .map(|t| p["by_thread"][t]["pc"].as_f64().unwrap())
            .sum()
    };
    let (app_pc, skel_pc) = (pc(&pa), pc(&ps));
    assert!(
        (skel_pc - app_pc / K as f64).abs() < 0.25 * app_pc / K as f64,
        "pc: skeleton {skel_pc} s, application {app_pc} s / {K}"
    );
    let wall = |p: &Value| p["wall"].as_f64().unwrap_or(f64::NAN);
    eprintln!(
        "{}: wall {:.3} s, the application's {:.3} s / {K} = {:.3} s (not tested: it depends on the machine's load)",
        skel_log.display(),
        wall(&ps),
        wall(&pa),
        wall(&pa) / K as f64
    );
}
