//! The parallel runtimes the OpenMP and MPI tests run programs under: the OMPT tool `cargo`
//! builds beside `pp`, and which `mpirun` is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cargo_build;

/// The OMPT tool `cargo test` built beside the `pp` binary `pp` (built now if it is missing,
/// as when only one test target was asked for), or why there is none.
pub fn ompt_tool(pp: &Path) -> Result<PathBuf, String> {
    let bin = pp.parent().ok_or("pp has no folder")?;
    let deps = bin.join("deps/libpp_ompt.so");
    if !deps.is_file() {
        let _ = cargo_build(bin).args(["-p", "pp-ompt"]).output();
    }
    if deps.is_file() {
        Ok(deps)
    } else {
        Err(format!(
            "no OMPT tool at {} (cargo build -p pp-ompt)",
            deps.display()
        ))
    }
}

/// Whether `mpirun` is Open MPI's (which wants `--oversubscribe` and, as root, the
/// `OMPI_ALLOW_RUN_AS_ROOT*` variables) or another MPI's, or why there is none.
pub fn open_mpi() -> Result<bool, String> {
    let out = Command::new("mpirun")
        .arg("--version")
        .output()
        .map_err(|e| format!("mpirun not found ({e})"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    Ok(text.contains("Open MPI") || text.contains("OpenRTE"))
}
