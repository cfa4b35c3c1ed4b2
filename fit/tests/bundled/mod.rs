//! Models of the bundled runs, shared by the integration tests.

use fit::Datafile;
use fit::performance::{BuildOptions, PerformanceModel};

/// The bundled edges runs of the 2D FFT, one implementation's model (as `lca model
/// datasets/data/fft2d.dat --where impl=..,role=model` builds it).
pub fn fft2d(implementation: &str) -> PerformanceModel {
    let conditions: Vec<fit::Condition> = [format!("impl={implementation}"), "role=model".into()]
        .iter()
        .map(|c| c.parse().unwrap())
        .collect();
    let data = Datafile::read(&datasets::path("fft2d.dat"))
        .unwrap()
        .filter(&conditions)
        .unwrap();
    let options = BuildOptions {
        name: implementation.into(),
        conditions,
        ..Default::default()
    };
    PerformanceModel::build(&data, &options).unwrap()
}
