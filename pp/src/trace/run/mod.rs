//! `pp run`'s launcher: runs an unmodified OpenMP program with the OMPT tool (`libpp_ompt.so`)
//! loaded into LLVM's OpenMP runtime and finds the log it wrote (docs/pp-run.md); or an MPI
//! program's ranks under `mpirun` with the MPI tracer ([`mpi`], docs/mpi.md). Profiling the log
//! is the caller's part.

mod child;
mod failure;
pub mod mpi;

pub use failure::Failure;

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::event::Header;
use crate::log::{LogReader, TextWriter};
use crate::profile::{Profile, RowError};
use failure::fail;

/// The tool's file name.
const TOOL: &str = "libpp_ompt.so";

/// What to run and where its log goes (`pp run`'s options, parsed).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The program and its arguments.
    pub command: Vec<OsString>,
    /// Where the program's log goes (default: $PP_LOG, else ./pp.log).
    pub log: Option<PathBuf>,
    /// Run parameters `key=value` for the log header (checked by [`run`]).
    pub params: Vec<String>,
    /// The program's standard output goes to standard error (standard output holds only the
    /// datafile row that follows).
    pub stdout_to_stderr: bool,
}

/// What the run left behind: the program's status and the log to profile (`<log>.tmp` when
/// the program died before finishing it).
pub struct Ran {
    /// The program's exit status as a shell gives it.
    pub status: u8,
    /// The log to profile.
    pub log: PathBuf,
}

/// Checks the options, runs the program and finds the log it wrote. Argument errors have
/// status 2; a program that cannot be started 127 (not found) or 126; no log: the program's
/// non-zero status, else 1. `warn` receives each warning (one line) when it arises.
pub fn run(args: &RunOptions, warn: &mut dyn FnMut(String)) -> Result<Ran, Failure> {
    let params = check_params(&args.params)?;
    if let Some(var) = ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .into_iter()
        .find(|v| std::env::var_os(v).is_some())
    {
        return Err(fail(
            2,
            format!(
                "pp run is itself a rank of an MPI launch ({var} is set): run `pp run -- mpirun ... PROGRAM` instead, which records every rank into one log"
            ),
        ));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| fail(1, format!("cannot read the current directory: {e}")))?;
    let log = cwd.join(pp_recorder::log_path(args.log.clone()));
    if let Err(e) = files::output::check(&log) {
        return Err(fail(2, format!("--log: {e}")));
    }
    if let Some(parent) = log.parent().filter(|d| !d.is_dir()) {
        return Err(fail(
            2,
            format!("--log {}: no directory {}", log.display(), parent.display()),
        ));
    }
    let tmp = crate::log::unfinished::tmp_of(&log);
    let program = &args.command[0];
    if mpi::is_launcher(program) {
        return run_mpi(args, &log, &params, warn);
    }
    let tool = find_tool()?;

    let before = (identity(&log), identity(&tmp));
    let mut command = Command::new(program);
    command
        .args(&args.command[1..])
        .env("OMP_TOOL_LIBRARIES", &tool)
        .env("LD_PRELOAD", preload(&tool))
        .env("OMP_TOOL", "enabled")
        .env("PP_LOG", &log)
        .env("PP_PARAMS", params.join(" "));
    let ended = child::execute(command, program, args.stdout_to_stderr, warn)?;
    let status = ended.status;

    if identity(&log).is_some_and(|now| Some(now) != before.0) {
        return Ok(Ran { status, log });
    }
    if identity(&tmp).is_some_and(|now| Some(now) != before.1) {
        // The threads' buffers complete the log up to the last event (docs/pp-run.md).
        match crate::trace::recover::recover(&tmp, &log) {
            Ok(Some(r)) => {
                warn(format!(
                    "{} {}: profiled up to its last recorded event ({} events, {} of them from its threads' buffers, recovered into {})",
                    show(program),
                    ended.how,
                    r.from_log + r.from_buffers,
                    r.from_buffers,
                    log.display()
                ));
                return Ok(Ran { status, log });
            }
            Ok(None) => {}
            Err(e) => warn(format!(
                "cannot complete the log from its threads' buffers: {e}"
            )),
        }
        if header_only(&tmp) {
            // Nothing to profile: a header alone (docs/pp-run.md, "Which log is profiled").
            let removed = match std::fs::remove_file(&tmp) {
                Ok(()) => format!("removed {}", tmp.display()),
                Err(e) => format!("cannot remove {}: {e}", tmp.display()),
            };
            return Err(fail(
                if status == 0 { 1 } else { status },
                format!(
                    "{} {} before its log held any event; {removed}",
                    show(program),
                    ended.how
                ),
            ));
        }
        warn(format!(
            "{} left no finished log; profiling {} (what it wrote before it stopped)",
            show(program),
            tmp.display()
        ));
        return Ok(Ran { status, log: tmp });
    }
    let why = diagnose(program, &tool);
    Err(fail(
        if status == 0 { 1 } else { status },
        format!("{} wrote no log {}: {why}", show(program), log.display()),
    ))
}

/// `pp run -- mpirun ...`: the tracer preloaded into the ranks, their logs merged into `log`.
fn run_mpi(
    args: &RunOptions,
    log: &Path,
    params: &[String],
    warn: &mut dyn FnMut(String),
) -> Result<Ran, Failure> {
    let program = &args.command[0];
    let dir = mpi::scratch(log)?;
    let result = (|| {
        let tracer = mpi::build_tracer(&dir)?;
        let mut command = Command::new(program);
        command
            .args(&args.command[1..])
            .env("PP_MPI_LOG", dir.join("rank"));
        // The OMPT tool too, so that a hybrid MPI + OpenMP program's threads are recorded
        // (docs/mpi.md, "Hybrid MPI + OpenMP"); each rank's tool writes a log of its own.
        match find_tool() {
            Ok(tool) => {
                let mut both = tracer.as_os_str().to_owned();
                both.push(":");
                both.push(preload(&tool));
                command
                    .env("LD_PRELOAD", both)
                    .env("OMP_TOOL_LIBRARIES", &tool)
                    .env("OMP_TOOL", "enabled");
            }
            Err(e) => {
                warn(format!(
                    "OpenMP threads are not recorded, only each rank's MPI calls: {}",
                    e.message
                ));
                command.env("LD_PRELOAD", preload(&tracer));
            }
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            crate::trace::mpicc::allow_root(&mut command);
        }
        let ended = child::execute(command, program, args.stdout_to_stderr, warn)?;
        let status = ended.status;
        let merged = mpi::merge(&dir, log, params, warn)?;
        if merged.is_some() && status != 0 {
            warn(format!(
                "{} {}: the log holds what the ranks that reached MPI_Finalize recorded",
                show(program),
                ended.how
            ));
        }
        match merged {
            Some(_) => Ok(Ran {
                status,
                log: log.to_path_buf(),
            }),
            None if status != 0 => Err(fail(
                status,
                format!(
                    "{} {}, and no rank wrote its log {}: every rank stopped before MPI_Finalize (a crash, a signal), or none had the tracer",
                    show(program),
                    ended.how,
                    log.display()
                ),
            )),
            None => Err(fail(
                1,
                format!(
                    "{} wrote no log {}: no rank reached MPI_Finalize with the tracer (is the program built with this MPI's mpicc, and dynamically linked?)",
                    show(program),
                    log.display()
                ),
            )),
        }
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Checks `--param` tokens as the log header and `pp -l` would: `key=value`, both tokens, the
/// key not `p` nor a field `pp` computes, no key twice, no non-finite number.
fn check_params(given: &[String]) -> Result<Vec<String>, Failure> {
    let mut header = Header {
        p: 1,
        params: Vec::new(),
    };
    for token in given {
        let bad = |why: String| fail(2, format!("--param '{token}': {why}"));
        let Some((key, value)) = token.split_once('=') else {
            return Err(bad("expected key=value".into()));
        };
        if Profile::computed_keys().any(|c| c == key) {
            return Err(bad(RowError::ComputedKey(key.into()).to_string()));
        }
        header.params.push((key.into(), value.into()));
        if let Err(e) = TextWriter::new(std::io::sink(), &header) {
            let e = e.to_string();
            return Err(bad(e.strip_prefix("header: ").unwrap_or(&e).to_string()));
        }
    }
    Ok(given.to_vec())
}

/// The tool: `$PP_OMPT_LIBRARY`, else `libpp_ompt.so` beside this executable, else
/// `deps/libpp_ompt.so` beside it (where `cargo test` leaves it), as an absolute path.
fn find_tool() -> Result<PathBuf, Failure> {
    if let Some(given) = std::env::var_os("PP_OMPT_LIBRARY").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&given);
        return match std::fs::canonicalize(&path) {
            Ok(abs) if abs.is_file() => Ok(abs),
            Ok(_) => Err(fail(
                1,
                format!("PP_OMPT_LIBRARY={}: not a file", path.display()),
            )),
            Err(e) => Err(fail(1, format!("PP_OMPT_LIBRARY={}: {e}", path.display()))),
        };
    }
    let exe = std::env::current_exe().and_then(std::fs::canonicalize);
    let dir = exe
        .as_ref()
        .ok()
        .and_then(|e| e.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let candidates = [dir.join(TOOL), dir.join("deps").join(TOOL)];
    candidates
        .iter()
        .find(|c| c.is_file())
        .cloned()
        .ok_or_else(|| {
            fail(
                1,
                format!(
                    "cannot find the OMPT tool {TOOL} (not in {} nor {}): build it with `cargo build --release -p pp-ompt` or set PP_OMPT_LIBRARY",
                    candidates[0].parent().unwrap_or(&dir).display(),
                    candidates[1].parent().unwrap_or(&dir).display()
                ),
            )
        })
}

/// `LD_PRELOAD` with the tool first: loaded at program start, the tool takes the run's time 0
/// there, so serial code before the first OpenMP call counts (docs/openmp.md).
fn preload(tool: &Path) -> OsString {
    let mut value = tool.as_os_str().to_owned();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        value.push(":");
        value.push(old);
    }
    value
}

/// Whether a log reads as a header and no event: a text log with no event line, or a binary
/// log that ends (cleanly, without its end marker) before its first block, as a `.tmp` log of
/// a program stopped before its first flush does. A log damaged elsewhere is not (its profile
/// says what is wrong with it).
fn header_only(log: &Path) -> bool {
    let Ok(mut reader) = LogReader::open(log) else {
        return false;
    };
    match reader.next_event() {
        None => true,
        Some(Err(crate::log::LogError::Binary { offset, .. })) => {
            std::fs::metadata(log).is_ok_and(|m| m.len() == offset)
        }
        Some(_) => false,
    }
}

/// A file's identity: device, inode, modification time and size. A log the recorder renamed
/// into place, or rewrote, has another.
fn identity(path: &Path) -> Option<(u64, u64, i64, i64, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.size()))
}

fn show(program: &OsString) -> String {
    program.to_string_lossy().into_owned()
}

/// Why a program wrote no log, from the OpenMP runtime it loads (as `ldd` lists it).
fn diagnose(program: &OsString, tool: &Path) -> String {
    let Some(path) = resolve(program) else {
        return "pp run could not find it again to see which OpenMP runtime it uses".into();
    };
    let libs = Command::new("ldd")
        .arg(&path)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let libs = match libs {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        Ok(_) => {
            return "it is not a dynamically linked program, so pp run cannot tell which OpenMP runtime it uses (the tool needs LLVM's libomp: clang -fopenmp)".into();
        }
        Err(e) => return format!("cannot run ldd to see which OpenMP runtime it uses ({e})"),
    };
    let has = |lib: &str| libs.lines().any(|l| l.trim_start().starts_with(lib));
    if has("libomp.so") || has("libiomp5.so") {
        format!(
            "the OpenMP runtime did not load the tool, or the tool could not write (its messages start with pp-ompt:; OMP_TOOL_LIBRARIES={}, and OMP_TOOL_VERBOSE_INIT=stderr shows what libomp did)",
            tool.display()
        )
    } else if has("libgomp.so") {
        "it uses GCC's OpenMP runtime (libgomp), which has no tools interface (OMPT): build it with clang -fopenmp".into()
    } else {
        "it loaded no OpenMP runtime (pp run measures programs built with clang -fopenmp)".into()
    }
}

/// The file a program name runs: itself when it has a `/`, else the first match on `$PATH`.
fn resolve(program: &OsString) -> Option<PathBuf> {
    let path = Path::new(program);
    if program.to_string_lossy().contains('/') {
        return Some(path.to_path_buf());
    }
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|d| d.join(path))
        .find(|p| p.is_file())
}
