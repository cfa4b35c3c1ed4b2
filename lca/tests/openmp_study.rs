//! `{pp}` in a study's command (the `pp` beside the running `lca`), and the OpenMP 2D FFT
//! study (`datasets/studies/fft2d-openmp.toml`) end to end on a tiny space: `examples/openmp/
//! fft2d.c` compiled with `clang -fopenmp`, each run `pp run` under the OMPT tool.
//!
//! The end-to-end test needs clang with LLVM's OpenMP runtime, `pp` beside `lca` and the tool
//! (`deps/libpp_ompt.so` beside them, where `pp run` finds it under `cargo test`), which it
//! builds (`cargo build -p pp -p pp-ompt`); without one of them it passes and says on standard
//! error what was skipped and why.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use test_support::{NotBuilt, Toolchain, cargo_build, compile, repository, scratch, skip, write};

/// This build's `lca` in `dir/bin`, hard-linked (copied across file systems), so that the
/// folder `{pp}` is looked for in is one the test controls (`current_exe` resolves links).
fn lca_in(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let lca = bin.join("lca");
    let _ = std::fs::remove_file(&lca);
    let built = env!("CARGO_BIN_EXE_lca");
    if std::fs::hard_link(built, &lca).is_err() {
        std::fs::copy(built, &lca).unwrap();
    }
    lca
}

/// A fake `pp`: appends its arguments to `calls` beside it and writes a valid text log to
/// `$PP_LOG` for p = $5 and n = $7 (as `{pp} run -- prog -p P -n N` passes them).
const FAKE_PP: &str = r#"#!/bin/sh
echo "$0 $*" >> "$(dirname "$0")/calls"
p=$5; n=$7; w=$(( n * p + 10 * n )); end=$(( w + 7 ))
{ printf 'pplog 1 p=%s\n0 0 start\n0 0 work_begin\n%s 0 work_end\n%s 0 stop\n' $p $w $end
  i=1; while [ $i -lt $p ]; do printf '0 %s start\n0 %s work_begin\n%s %s work_end\n%s %s stop\n' $i $i $n $i $end $i; i=$((i+1)); done
} > "$PP_LOG"
"#;

const PP_STUDY: &str = r#"name = "pp"
design = "edges:1"

[factors]
n = "32..512:log2"
p = "2..8:lin:7"

[[implementation]]
name = "a"
command = ["{pp}", "run", "--", "prog", "-p", "{p}", "-n", "{n}"]
"#;

#[test]
fn pp_is_the_pp_beside_lca_and_its_absence_is_one_line() {
    let dir = scratch("openmp-pp-placeholder");
    let _ = std::fs::remove_dir_all(dir.join("study-pp"));
    let lca = lca_in(&dir);
    let pp = dir.join("bin/pp");
    write(&dir.join("bin"), "pp", FAKE_PP);
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pp, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let _ = std::fs::remove_file(dir.join("bin/calls"));
    write(&dir, "pp.toml", PP_STUDY);
    let out = Command::new(&lca)
        .current_dir(&dir)
        .args(["study", "pp.toml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    let calls = std::fs::read_to_string(dir.join("bin/calls")).unwrap();
    // edges:1 over two factors: the four corners and one point in the middle of each edge.
    assert_eq!(calls.lines().count(), 8, "{calls}");
    let first = format!("{} run -- prog -p ", pp.display());
    assert!(calls.lines().all(|l| l.starts_with(&first)), "{calls}");
    assert!(calls.contains(" run -- prog -p 2 -n 32\n"), "{calls}");
    let data = std::fs::read_to_string(dir.join("study-pp/pp.dat")).unwrap();
    assert_eq!(data.lines().count(), 8, "{data}");

    // Without a pp beside lca: one line before any run, naming the study file and the path.
    std::fs::remove_file(&pp).unwrap();
    let _ = std::fs::remove_dir_all(dir.join("study-pp"));
    let out = Command::new(&lca)
        .current_dir(&dir)
        .args(["study", "pp.toml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("Error: pp.toml: the commands use {pp}, but there is no pp beside lca"),
        "{stderr}"
    );
    assert!(stderr.contains(&pp.display().to_string()), "{stderr}");
    assert!(!dir.join("study-pp/pp.dat").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Why the OpenMP study cannot run here, if it cannot: clang cannot build an OpenMP program,
/// or `pp` or the tool is not beside this `lca`.
fn missing(dir: &Path) -> Option<String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_lca")).parent().unwrap();
    // `cargo test -p lca` builds neither pp nor the tool: build them (same profile), so that
    // the pp beside lca is this source's, not an older build's.
    let _ = cargo_build(bin)
        .args(["-p", "pp", "-p", "pp-ompt"])
        .output();
    if !bin.join("pp").is_file() {
        return Some(format!(
            "no pp beside lca in {} (cargo build -p pp)",
            bin.display()
        ));
    }
    if !bin.join("deps/libpp_ompt.so").is_file() && !bin.join("libpp_ompt.so").is_file() {
        return Some(format!(
            "no OMPT tool (libpp_ompt.so) in {} (cargo build -p pp-ompt)",
            bin.display()
        ));
    }
    let probe = write(
        dir,
        "probe.c",
        "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n",
    );
    let built = compile(
        Command::new("clang")
            .args(["-fopenmp", "-o"])
            .arg(dir.join("probe"))
            .arg(&probe),
    );
    match built {
        Err(NotBuilt::NoCompiler(e)) => Some(format!("clang not found ({e})")),
        Err(failed) => Some(format!(
            "clang -fopenmp cannot build a program (libomp-dev missing?): {}",
            failed.first_line()
        )),
        Ok(_) => None,
    }
}

/// The bundled OpenMP study's commands on a tiny space (n = 16, 32, 64; p = 2, 3, 4; a full
/// design and one validation point: 20 runs of 3 iterations), with `fft2d` compiled into the
/// scratch folder: every planned row is in the datafile, and the models, the crossover and
/// the report are written.
#[test]
fn the_openmp_fft2d_study_runs_end_to_end() {
    let dir = scratch("openmp-fft2d-study");
    let _ = std::fs::remove_dir_all(dir.join("study"));
    if let Some(why) = missing(&dir) {
        skip(
            "the_openmp_fft2d_study_runs_end_to_end",
            format!("{why} (tools/system-packages.sh installs it)"),
        );
        return;
    }
    let program = dir.join("fft2d");
    let out = Toolchain::OPENMP
        .command(&repository().join("examples/openmp/fft2d.c"), &program)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bundled =
        std::fs::read_to_string(repository().join("datasets/studies/fft2d-openmp.toml")).unwrap();
    let text = bundled
        .replace("out = \"target/study-fft2d-openmp\"", "out = \"study\"")
        .replace(
            "examples/openmp/build/fft2d",
            &program.display().to_string(),
        )
        .replace("32..512:log2", "16,32,64")
        .replace("2..8:lin:7", "2,3,4")
        .replace("design = \"edges:3\"", "design = \"full\"")
        .replace("n = \"64,128,256\", p = \"3,5,7\"", "n = \"16\", p = \"3\"")
        .replace("replicates = 2", "replicates = 1")
        .replace("\"--iters\", \"500\"", "\"--iters\", \"3\"");
    assert_ne!(text, bundled);
    assert_eq!(text.matches(&*program.display().to_string()).count(), 2);
    write(&dir, "tiny.toml", &text);
    let out = support::lca()
        .current_dir(&dir)
        .args(["study", "tiny.toml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("study fft2d-openmp: 20 runs, 20 made now"),
        "{stdout}"
    );
    let data = std::fs::read_to_string(dir.join("study/fft2d-openmp.dat")).unwrap();
    assert_eq!(data.lines().count(), 20, "{data}");
    for (implementation, want) in [("dp", 10), ("tp", 10)] {
        let rows = data
            .lines()
            .filter(|l| l.starts_with(&format!("impl={implementation} ")))
            .count();
        assert_eq!(rows, want, "{data}");
    }
    for n in ["16", "32", "64"] {
        for p in ["2", "3", "4"] {
            for implementation in ["dp", "tp"] {
                let planned = data.lines().any(|l| {
                    l.starts_with(&format!("impl={implementation} "))
                        && l.contains(&format!(" n={n} "))
                        && l.contains(&format!(" p={p} "))
                        && l.contains(" role=model ")
                });
                assert!(planned, "impl={implementation} n={n} p={p}: {data}");
            }
        }
    }
    for file in ["dp.toml", "tp.toml", "crossover.txt", "report/index.html"] {
        assert!(dir.join("study").join(file).is_file(), "{file}: {stdout}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
