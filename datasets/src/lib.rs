//! Bundled data files.
