//! The MPI helpers `pp` carries as C sources — the ping-pong of `pp calibrate --mpi`, the
//! tracer of `pp run -- mpirun` — built with the MPI compiler wrapper of the MPI at hand
//! (`pp` does not link MPI, and MPI implementations differ in their binary interface), in a
//! scratch folder of their own.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles the C text `source` (saved as `dir/<output>.c`) into `dir/<output>` with `mpicc`
/// and `flags`. The error is one line: `mpicc` missing (naming `purpose`, what needs it, and
/// what installs it), or its first line of complaint about `what`.
pub fn build(
    mpicc: &str,
    flags: &[&str],
    source: &str,
    dir: &Path,
    output: &str,
    what: &str,
    purpose: &str,
) -> Result<PathBuf, String> {
    let file = dir.join(format!("{output}.c"));
    let built = dir.join(output);
    std::fs::write(&file, source).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let out = Command::new(mpicc)
        .args(flags)
        .arg("-o")
        .arg(&built)
        .arg(&file)
        .output()
        .map_err(|e| missing(mpicc, &e, purpose))?;
    if !out.status.success() {
        return Err(format!(
            "{mpicc} could not compile {what}: {}",
            first_line(&out.stderr)
        ));
    }
    Ok(built)
}

/// Why `tool` could not be run, in one line; `purpose` says what needs it.
pub fn missing(tool: &str, e: &std::io::Error, purpose: &str) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        format!(
            "{tool} not found: {purpose} needs MPI (tools/system-packages.sh installs Open MPI)"
        )
    } else {
        format!("cannot run {tool}: {e}")
    }
}

/// Lets Open MPI's launcher run as root, which it refuses without both variables; they change
/// nothing for another user, and MPICH ignores them.
pub fn allow_root(command: &mut Command) -> &mut Command {
    command
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
}

/// The first non-blank line of a tool's output, trimmed.
pub fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// A fresh folder `<base>/<prefix>-<pid>-<k>` (the first `k` free).
pub fn scratch(base: &Path, prefix: &str) -> Result<PathBuf, String> {
    for k in 0..100 {
        let dir = base.join(format!("{prefix}-{}-{k}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
        }
    }
    Err(format!("cannot create a folder in {}", base.display()))
}
