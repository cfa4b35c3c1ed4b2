//! The repository's root.

use std::path::{Path, PathBuf};

/// The workspace's root folder (where `README.md`, `datasets/` and `examples/` are).
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_root_holds_the_workspace_manifest() {
        let root = super::repository();
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("[workspace]"), "{manifest}");
    }
}
