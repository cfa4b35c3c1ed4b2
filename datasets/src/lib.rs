//! Bundled data files, for tests, benchmarks and the README's walkthrough.
//!
//! | file | what it is |
//! |---|---|
//! | `data/fig2.dat` | datafile shaped like the paper's Figure 2 (li at p = 2..8); generated, see its header |
//! | `data/fft2d.dat` | measured 2D FFT runs (dp and tp) on this VM: an edges design (`role=model`) and interior points (`role=validate`); see its header |
//! | `data/fft2d-study.dat` | the larger fft2d study (`studies/fft2d-full.toml`), 306 runs with 3 replicates; see its header |
//! | `data/fft2d-full-16core.dat` | the same study on 16 dedicated cores (measured, never oversubscribed); see its header |
//! | `data/fft2d-16core.dat` | every n = 32..512 by every p = 2..16 on 16 dedicated cores (`studies/fft2d-16core.toml`), 570 runs; see its header |
//! | `data/paper/table2-dp.toml`, `table2-tp.toml` | the paper's Table 2 (Crovella & LeBlanc 1994): data-parallel and task-parallel 2D FFT on the KSR1, models of `n` at p = 26, as hand-written model files |
//! | `data/paper/table1-shapes.toml` | the paper's Table 1: each category's model form along `n` and `p`, a shapes file for `lca model --shapes` |
//! | `data/nist/norris.csv` | NIST StRD Norris linear regression data (certified values in `fit/tests/nist.rs`) |
//! | `data/nist/longley.csv` | NIST StRD Longley linear regression data |

use std::path::PathBuf;

/// Absolute path of a bundled file, e.g. `path("fig2.dat")`.
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

/// Contents of `data/fig2.dat`.
pub const FIG2: &str = include_str!("../data/fig2.dat");
/// Contents of `data/nist/norris.csv`.
pub const NORRIS: &str = include_str!("../data/nist/norris.csv");
/// Contents of `data/nist/longley.csv`.
pub const LONGLEY: &str = include_str!("../data/nist/longley.csv");
