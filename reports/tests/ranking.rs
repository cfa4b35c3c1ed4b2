//! Snapshots of the ranking report on the bundled Figure-2-shaped data.

use fit::{Datafile, Model, RankBy, Weighting, rank};
use reports::Format;
use reports::ranking::RankingReport;

fn render(format: Format, predict_at: &[Vec<f64>]) -> String {
    let data = Datafile::parse("fig2.dat", datasets::FIG2).unwrap();
    let obs = data.observations(&["p"], "li", &[]).unwrap();
    let models: Vec<Model> = ["p*sqrt(p)", "p", "1", "max(p-$theta,0)", "p + 2*p"]
        .iter()
        .map(|m| Model::parse(m).unwrap())
        .collect();
    let ranking = rank(&obs, &models, RankBy::R2, Weighting::Absolute);
    RankingReport {
        observations: &obs,
        rank_by: RankBy::R2,
        ranking: &ranking,
        predict_at,
    }
    .render(format)
}

#[test]
fn text_report() {
    insta::assert_snapshot!(render(Format::Text, &[vec![16.0]]), @r"
    li against p: 12 observations from fig2.dat, ranked by R2
    (0.0003041 +/- 0.0000059) *p*sqrt(p)       R2: 0.995  adjR2: 0.995  CV: 0.000184
        at p=16: 0.01946 +/- 0.00090 (90% prediction interval, with the other models' spread)
    (0.001009 +/- 0.000058) *max(p-$theta,0)   R2: 0.990  adjR2: 0.989  CV: 0.000274
        $theta = 1.38 +/- 0.24
        at p=16: 0.0148 +/- 0.0085 (90% prediction interval, with the other models' spread)
    (0.000778 +/- 0.000060) *p                 R2: 0.928  adjR2: 0.928  CV: 0.000662
        at p=16: 0.0124 (0 .. 0.0251) (90% prediction interval, with the other models' spread)
    (0.0037 +/- 0.0012)                        R2: 0.000  adjR2: 0.000  CV: 0.00247
        at p=16: 0.00366 (0 .. 0.0323) (90% prediction interval, with the other models' spread)
    skipped: model `p + 2*p`: terms `2*p`, `p` are collinear on these observations (cannot be told apart); drop one
    ");
}

#[test]
fn csv_report() {
    let csv = render(Format::Csv, &[]);
    let header = csv.lines().next().unwrap();
    assert_eq!(header, "rank,model,formula,r2,adj_r2,cv,residual_sd,n,dof");
    assert_eq!(csv.lines().count(), 5);
    assert!(
        csv.contains(",p*sqrt(p),(0.0003041 +/- 0.0000059) *p*sqrt(p),"),
        "{csv}"
    );
}
