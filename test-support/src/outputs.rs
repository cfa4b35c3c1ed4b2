//! Files an output must never replace: the tests of every command that writes a file give
//! it these as its output and check that it refused them and left them as they were.

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether a file type is still the kind a target was made as.
pub type IsKind = fn(&fs::FileType) -> bool;

/// The kinds of file an output must never replace, made in `dir`, each named `<kind><suffix>`:
/// a FIFO (`fifo`), a directory (`folder`) and, only as root, a character device with the
/// numbers of /dev/null (`node`) and a link to it (`link`). Returns them with a check that
/// each is still what it was.
///
/// # Panics
/// When the FIFO or the directory cannot be made.
pub fn hostile_targets(dir: &Path, suffix: &str) -> Vec<(PathBuf, IsKind)> {
    let made = |args: &[&str]| {
        Command::new(args[0])
            .args(&args[1..])
            .status()
            .is_ok_and(|s| s.success())
    };
    let path = |name: &str| dir.join(format!("{name}{suffix}"));
    let mut targets: Vec<(PathBuf, IsKind)> = Vec::new();
    assert!(made(&["mkfifo", path("fifo").to_str().unwrap()]));
    targets.push((path("fifo"), |t| t.is_fifo()));
    fs::create_dir(path("folder")).unwrap();
    targets.push((path("folder"), |t| t.is_dir()));
    if made(&["mknod", path("node").to_str().unwrap(), "c", "1", "3"]) {
        std::os::unix::fs::symlink(path("node"), path("link")).unwrap();
        targets.push((path("node"), |t| t.is_char_device()));
        targets.push((path("link"), |t| t.is_symlink()));
    } else {
        eprintln!("skipped the device node and the link to it: mknod needs root");
    }
    targets
}

/// Checks that `target`, one of [`hostile_targets`], is what it was after `what` (the
/// command) was given it as an output: still of its `kind`, the link still naming the
/// device node, and no temporary file (`.tmp`) left in its folder.
///
/// # Panics
/// When any of that does not hold.
pub fn assert_untouched(what: &str, target: &Path, kind: IsKind) {
    let now = fs::symlink_metadata(target).unwrap().file_type();
    assert!(kind(&now), "{what} changed {}", target.display());
    if now.is_symlink() {
        let named = fs::metadata(target).unwrap().file_type();
        assert!(
            named.is_char_device(),
            "{what}: the link still names the node"
        );
    }
    for entry in fs::read_dir(target.parent().unwrap()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".tmp"), "{what} left {name}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_is_what_it_was_made_as() {
        let dir = crate::scratch("hostile");
        let targets = hostile_targets(&dir, ".svg");
        assert!(targets.len() >= 2);
        assert!(dir.join("fifo.svg").exists());
        for (target, kind) in targets {
            assert_untouched("nothing", &target, kind);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
