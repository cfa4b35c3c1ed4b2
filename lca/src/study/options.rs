//! How a study is carried out: the checked study file and what the command line added.

use super::file::Study;

/// A study to carry out, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The checked study, its `dispatch` as the command line chose.
    pub study: Study,
    /// The study as messages name it: its file, or [`super::DEFAULT_NAME`].
    pub named: String,
    /// The command that resumes the study (`lca study my.toml --jobs 2`), for the line that a
    /// stopped study prints.
    pub resume: String,
    /// Local runs made at the same time.
    pub jobs: usize,
}
