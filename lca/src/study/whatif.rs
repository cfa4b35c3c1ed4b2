//! `[whatif]` in a study file: the points a machine cannot hold are still run on it, and their
//! rows are the runs `pp whatif` predicts from those runs' logs (docs/whatif.md): by default
//! with each computation's demand taken from the CPU time its thread got, so a point with more
//! threads than cores gives the row of the run with a processor per thread. Each such row
//! carries `predicted=...` and `predicted_from=...` (its log's header), so the models built on
//! it, and the verdicts drawn from them, say that they rest on predictions; the measured log
//! stays in the logs folder.

use std::collections::BTreeMap;
use std::path::Path;

use pp::whatif::{MeasuredRun, Target};

use super::file::Whatif;

/// Replays the measured `log` into the predicted log `out` (replaced if there) as `whatif`
/// says, its header naming the measured log's file.
pub fn predict(whatif: &Whatif, log: &Path, out: &Path) -> Result<(), String> {
    let name = log.display().to_string();
    let target = Target {
        demand: whatif.demand,
        ..Target::default()
    };
    let replay = || -> anyhow::Result<()> {
        let run = MeasuredRun::read(pp::log::LogReader::open(log)?, &name, &BTreeMap::new())?;
        let mut prediction = pp::whatif::predict(&run, &target)?;
        if let Some(file) = log.file_name().and_then(|f| f.to_str())
            && pp::log::is_name(file)
        {
            prediction
                .header
                .params
                .push(("predicted_from".to_string(), file.to_string()));
        }
        pp::whatif::write::write(&run, &prediction, "--out", out, true)
    };
    replay().map_err(|e| format!("pp whatif {name}: {e:#}"))
}
