//! C programs compiled for a test, or the test skipped. The OpenMP, MPI and OTF2 tests need
//! compilers and libraries that `tools/system-packages.sh` installs; where one is missing a
//! test passes and says on standard error, in one line `skipped: <test>: <why>`, what it
//! skipped and why (CI's log is read for these lines).

use std::fmt::Display;
use std::path::Path;
use std::process::Command;

use crate::repository;

/// Why a C program was not built.
#[derive(Debug)]
pub enum NotBuilt {
    /// The compiler did not start (it is not installed).
    NoCompiler(std::io::Error),
    /// It ran and failed; what it wrote on standard error.
    Failed(String),
}

impl NotBuilt {
    /// The first line of what the compiler said (empty when it did not start): enough for a
    /// one-line `skipped:` message.
    pub fn first_line(&self) -> &str {
        match self {
            NotBuilt::NoCompiler(_) => "",
            NotBuilt::Failed(stderr) => stderr.lines().next().unwrap_or(""),
        }
    }
}

/// Runs `command`, a compiler's command line; what it wrote on standard error (warnings)
/// when it succeeded.
pub fn compile(command: &mut Command) -> Result<String, NotBuilt> {
    let out = command.output().map_err(NotBuilt::NoCompiler)?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(stderr)
    } else {
        Err(NotBuilt::Failed(stderr))
    }
}

/// Says on standard error that `test` is skipped and why: `skipped: <test>: <why>`.
pub fn skip(test: &str, why: impl Display) {
    eprintln!("skipped: {test}: {why}");
}

/// A compiler of this repository's example programs (`examples/openmp`, `examples/mpi`) and
/// what its absence is called.
#[derive(Clone, Copy, Debug)]
pub struct Toolchain {
    /// The compiler's command.
    pub compiler: &'static str,
    /// The compiler as messages name it (`clang -fopenmp`).
    pub named: &'static str,
    /// Its options before `-o`.
    pub options: &'static [&'static str],
    /// Whether the options name `ompt/include` (`-I`) for `omp-tools.h`.
    pub ompt_include: bool,
    /// Words of the compiler's error that mean the library is missing from the system, not
    /// that the example is wrong (`omp.h`, `-lomp`).
    pub missing: [&'static str; 2],
    /// The system package that is likely missing then.
    pub package: &'static str,
}

impl Toolchain {
    /// `clang` with LLVM's OpenMP, as docs/openmp.md advises (regions named after their
    /// functions) and `pp run` expects.
    pub const OPENMP: Toolchain = Toolchain {
        compiler: "clang",
        named: "clang -fopenmp",
        options: &[
            "-std=c11",
            "-O2",
            "-fopenmp",
            "-rdynamic",
            "-fno-optimize-sibling-calls",
        ],
        ompt_include: true,
        missing: ["omp.h", "-lomp"],
        package: "libomp-dev",
    };

    /// Open MPI's `mpicc`, warnings on.
    pub const MPI: Toolchain = Toolchain {
        compiler: "mpicc",
        named: "mpicc",
        options: &["-std=c11", "-O2", "-Wall", "-Wextra"],
        ompt_include: false,
        missing: ["mpi.h", "-lmpi"],
        package: "libopenmpi-dev",
    };

    /// The command that compiles `source` into `program` (with `-lm`).
    pub fn command(&self, source: &Path, program: &Path) -> Command {
        let mut command = Command::new(self.compiler);
        command.args(self.options);
        if self.ompt_include {
            command.arg("-I").arg(repository().join("ompt/include"));
        }
        command.arg("-o").arg(program).arg(source).arg("-lm");
        command
    }

    /// Compiles the example `source` into `program`: what the compiler said (its warnings),
    /// or why the system cannot build it (`<compiler> not found (...)`, `<named> cannot build
    /// <file> (<package> missing?): <first line>`).
    ///
    /// # Panics
    /// When the compiler runs and fails for another reason than a missing library: the
    /// example does not compile.
    pub fn example(&self, source: &Path, program: &Path) -> Result<String, String> {
        let name = source.file_name().unwrap_or_default().to_string_lossy();
        match compile(&mut self.command(source, program)) {
            Ok(stderr) => Ok(stderr),
            Err(NotBuilt::NoCompiler(e)) => Err(format!("{} not found ({e})", self.compiler)),
            Err(NotBuilt::Failed(stderr)) => {
                // A missing header or library is the system's; anything else is the example's.
                if self.missing.iter().any(|m| stderr.contains(m)) {
                    return Err(format!(
                        "{} cannot build {name} ({} missing?): {}",
                        self.named,
                        self.package,
                        stderr.lines().next().unwrap_or("")
                    ));
                }
                panic!("{name} does not compile:\n{stderr}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_compiler_and_a_failure_are_told_apart() {
        let missing = compile(&mut Command::new("/nonexistent/cc")).unwrap_err();
        assert!(matches!(missing, NotBuilt::NoCompiler(_)));
        assert_eq!(missing.first_line(), "");
        let failed = compile(Command::new("sh").args(["-c", "echo one >&2; echo two >&2; false"]))
            .unwrap_err();
        assert_eq!(failed.first_line(), "one");
        assert_eq!(
            compile(Command::new("sh").args(["-c", "echo w >&2"])).unwrap(),
            "w\n"
        );
    }

    #[test]
    fn the_example_command_line_is_the_documented_one() {
        let command = Toolchain::MPI.command(Path::new("a.c"), Path::new("a"));
        let args: Vec<_> = command.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(command.get_program(), "mpicc");
        assert_eq!(
            args,
            [
                "-std=c11", "-O2", "-Wall", "-Wextra", "-o", "a", "a.c", "-lm"
            ]
        );
        let command = Toolchain::OPENMP.command(Path::new("a.c"), Path::new("a"));
        let args: Vec<_> = command.get_args().map(|a| a.to_string_lossy()).collect();
        assert_eq!(args[..5], Toolchain::OPENMP.options[..]);
        assert_eq!(args[5], "-I");
        assert!(args[6].ends_with("ompt/include"));
        assert_eq!(args[7..], ["-o", "a", "a.c", "-lm"]);
    }
}
