//! Lines a user types (the README's and the guides', a `--help`'s examples), run as the user
//! would: through `sh -c`, so that redirections and quotes work, with this build's binaries
//! first on `PATH`.

use std::path::Path;
use std::process::{Command, Output};

use crate::repository;

/// The lines `pick` takes from the text of each of `pages` (paths from the repository's root,
/// read in order), each with where it stands: `(page:line, line)`. `pick` returns a page's
/// lines with their line numbers.
///
/// # Panics
/// When a page cannot be read.
pub fn lines_of_pages(
    pages: &[&str],
    pick: impl Fn(&str) -> Vec<(usize, String)>,
) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(repository().join(page)).unwrap();
        lines.extend(
            pick(&text)
                .into_iter()
                .map(|(number, line)| (format!("{page}:{number}"), line)),
        );
    }
    lines
}

/// `sh -c <line>` in `dir` with the folder `bin` (links to the binaries under test) first on
/// `PATH`. The caller sets or clears whatever else the line must not see.
pub fn shell(dir: &Path, bin: &Path, line: &str) -> Command {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("PATH", path);
    command
}

/// Checks that the line `line`, from `origin` (`README.md:12`), ran to success without a
/// panic; its standard output.
///
/// # Panics
/// When it failed or panicked: the message names the origin and the line and holds standard
/// error.
pub fn ran(origin: &str, line: &str, out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{origin}: `{line}` failed ({}):\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{origin}: `{line}`: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_named_by_page_and_line() {
        let lines = lines_of_pages(&["Cargo.toml", "test-support/Cargo.toml"], |text| {
            text.lines()
                .enumerate()
                .filter(|(_, l)| l.starts_with("[workspace]") || l.starts_with("[lib]"))
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect()
        });
        assert_eq!(
            lines,
            [
                ("Cargo.toml:1".to_string(), "[workspace]".to_string()),
                ("test-support/Cargo.toml:9".into(), "[lib]".into()),
            ]
        );
    }

    #[test]
    fn a_line_runs_in_its_folder_with_bin_first_on_the_path() {
        let dir = crate::scratch("shell");
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let out = shell(&dir, &bin, "pwd; echo \"$PATH\" | cut -d: -f1")
            .output()
            .unwrap();
        let stdout = ran("here:1", "pwd", &out);
        let mut lines = stdout.lines();
        let pwd = std::fs::canonicalize(lines.next().unwrap()).unwrap();
        assert_eq!(pwd, std::fs::canonicalize(&dir).unwrap());
        assert_eq!(lines.next().unwrap(), bin.display().to_string());
        let out = shell(&dir, &bin, "exit 3").output().unwrap();
        assert!(std::panic::catch_unwind(|| ran("here:2", "exit 3", &out)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
