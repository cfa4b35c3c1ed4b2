//! Extra-P's input formats read to known values: two parameters, several callpaths and
//! metrics, repetitions; and their errors, one line naming file, line or field.

use fit::extrap::{Experiment, Series, detect, parse};

/// The same experiment in every format: parameters p and n, points (2,10) (4,10) (2,20),
/// callpaths main and main->solve, metrics time and bytes (bytes for main only).
type Table = Vec<(String, String, Vec<Vec<f64>>, Vec<Vec<f64>>)>;

fn expected() -> Table {
    let points = vec![vec![2.0, 10.0], vec![4.0, 10.0], vec![2.0, 20.0]];
    vec![
        (
            "main".into(),
            "time".into(),
            points.clone(),
            vec![vec![1.0, 1.5], vec![2.0, 2.5], vec![3.0, 3.5]],
        ),
        (
            "main".into(),
            "bytes".into(),
            points.clone(),
            vec![vec![10.0], vec![20.0], vec![30.0]],
        ),
        (
            "main->solve".into(),
            "time".into(),
            points,
            vec![
                vec![0.5, 0.25, 0.75],
                vec![1.0, 1.0, 1.0],
                vec![2.0, 2.0, 2.0],
            ],
        ),
    ]
}

fn summary(e: &Experiment) -> Table {
    let out: Vec<_> = e
        .series
        .iter()
        .map(|s: &Series| {
            // Points in a fixed order, so that formats that order them differently compare.
            let mut pairs: Vec<(Vec<f64>, Vec<f64>)> = s
                .points
                .iter()
                .cloned()
                .zip(s.values.iter().cloned())
                .collect();
            pairs.sort_by(|a, b| (a.0[1], a.0[0]).partial_cmp(&(b.0[1], b.0[0])).unwrap());
            let (points, values) = pairs.into_iter().unzip();
            (s.callpath.clone(), s.metric.clone(), points, values)
        })
        .collect();
    sorted(out)
}

/// By callpath, then metric.
fn sorted(mut v: Table) -> Table {
    v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    v
}

const TEXT: &str = "\
# an Extra-P text file written by hand
PARAMETER p
PARAMETER n

POINTS ( 2 10 ) ( 4 10 )
POINTS (2 20)
REGION main
METRIC time
DATA 1 1.5
DATA 2 2.5
DATA 3 3.5
METRIC bytes
DATA 10
DATA 20
DATA 30
REGION main->solve
METRIC time
DATA 0.5 0.25 0.75
DATA 1 1 1
DATA 2 2 2
";

#[test]
fn the_text_format_reads_to_known_values() {
    assert!(detect(TEXT));
    let e = parse("t.txt", TEXT).unwrap();
    assert_eq!(e.parameters, ["p", "n"]);
    assert_eq!(summary(&e), sorted(expected()));
    // The DATA lines' own line numbers.
    assert_eq!(e.series[0].lines, vec![9, 10, 11]);
    // Repetitions become one observation each, the response named `callpath [metric]`.
    let obs = e.series[2].observations("t.txt", &e.parameters);
    assert_eq!(obs.response, "main->solve [time]");
    assert_eq!(obs.y, vec![0.5, 0.25, 0.75, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    assert_eq!(
        obs.columns[0],
        vec![2.0, 2.0, 2.0, 4.0, 4.0, 4.0, 2.0, 2.0, 2.0]
    );
    assert_eq!(
        obs.columns[1],
        vec![10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 20.0, 20.0, 20.0]
    );
}

#[test]
fn one_parameter_points_may_go_without_parentheses() {
    let text = "PARAMETER p\nPOINTS 1 2 4\nDATA 1\nDATA 2\nDATA 4 4.5\n";
    let e = parse("one.txt", text).unwrap();
    assert_eq!(e.series.len(), 1);
    let s = &e.series[0];
    assert_eq!((s.callpath.as_str(), s.metric.as_str()), ("", ""));
    assert_eq!(s.points, vec![vec![1.0], vec![2.0], vec![4.0]]);
    assert_eq!(s.values, vec![vec![1.0], vec![2.0], vec![4.0, 4.5]]);
}

const JSON: &str = r#"{
  "parameters": ["p", "n"],
  "measurements": {
    "main": {
      "time": [
        {"point": [2, 10], "values": [1, 1.5]},
        {"point": [4, 10], "values": [2, 2.5]},
        {"point": [2, 20], "values": [3, 3.5]}
      ],
      "bytes": [
        {"point": [2, 10], "values": [10]},
        {"point": [4, 10], "values": [20]},
        {"point": [2, 20], "values": [30]}
      ]
    },
    "main->solve": {
      "time": [
        {"point": [2, 10], "values": [0.5, 0.25, 0.75]},
        {"point": [4, 10], "values": [1, 1, 1]},
        {"point": ["2", "20"], "values": [2, 2, 2]}
      ]
    }
  }
}"#;

#[test]
fn the_json_format_reads_to_known_values() {
    assert!(detect(JSON));
    let e = parse("t.json", JSON).unwrap();
    assert_eq!(e.parameters, ["p", "n"]);
    assert_eq!(summary(&e), sorted(expected()));
}

#[test]
fn the_older_json_format_with_ids_reads_to_known_values() {
    let mut measurements = Vec::new();
    // (coordinate id, callpath id, metric id, value); coordinates 1..3, callpaths main and
    // main->solve, metrics time and bytes. Ids out of order on purpose: Extra-P sorts by id.
    let rows = [
        (1, 1, 1, 1.0),
        (1, 1, 1, 1.5),
        (2, 1, 1, 2.0),
        (2, 1, 1, 2.5),
        (3, 1, 1, 3.0),
        (3, 1, 1, 3.5),
        (1, 1, 2, 10.0),
        (2, 1, 2, 20.0),
        (3, 1, 2, 30.0),
        (1, 2, 1, 0.5),
        (1, 2, 1, 0.25),
        (1, 2, 1, 0.75),
        (2, 2, 1, 1.0),
        (2, 2, 1, 1.0),
        (2, 2, 1, 1.0),
        (3, 2, 1, 2.0),
        (3, 2, 1, 2.0),
        (3, 2, 1, 2.0),
    ];
    for (i, (c, k, m, v)) in rows.iter().enumerate() {
        measurements.push(format!(
            r#"{{"id": {}, "coordinate_id": {c}, "callpath_id": {k}, "metric_id": {m}, "value": {v}}}"#,
            i + 1
        ));
    }
    let text = format!(
        r#"{{
  "parameters": [{{"id": 2, "name": "n"}}, {{"id": 1, "name": "p"}}],
  "callpaths": [{{"id": 2, "name": "main->solve"}}, {{"id": 1, "name": "main"}}],
  "metrics": [{{"id": 1, "name": "time"}}, {{"id": 2, "name": "bytes"}}],
  "coordinates": [
    {{"id": 1, "parameter_value_pairs": [{{"parameter_id": 2, "parameter_value": 10}}, {{"parameter_id": 1, "parameter_value": 2}}]}},
    {{"id": 2, "parameter_value_pairs": [{{"parameter_id": 1, "parameter_value": 4}}, {{"parameter_id": 2, "parameter_value": 10}}]}},
    {{"id": 3, "parameter_value_pairs": [{{"parameter_id": 1, "parameter_value": 2}}, {{"parameter_id": 2, "parameter_value": 20}}]}}
  ],
  "measurements": [{}]
}}"#,
        measurements.join(",\n")
    );
    let e = parse("old.json", &text).unwrap();
    assert_eq!(e.parameters, ["p", "n"]);
    assert_eq!(summary(&e), sorted(expected()));
}

#[test]
fn json_lines_read_to_known_values() {
    let text = r#"{"params": {"p": 2, "n": 10}, "callpath": "main", "metric": "time", "value": [1, 1.5]}
{"params": {"p": 4, "n": 10}, "callpath": "main", "metric": "time", "value": [2, 2.5]}
{"params": {"p": 2, "n": 20}, "callpath": "main", "metric": "time", "value": 3}
{"params": {"n": 20, "p": 2}, "callpath": "main", "metric": "time", "value": 3.5}
{"params": {"p": 2, "n": 10}, "callpath": "main", "metric": "bytes", "value": 10}
{"params": {"p": 4, "n": 10}, "callpath": "main", "metric": "bytes", "value": 20}
{"params": {"p": 2, "n": 20}, "callpath": "main", "metric": "bytes", "value": 30}

{"params": {"p": 2, "n": 10}, "callpath": "main->solve", "metric": "time", "value": [0.5, 0.25, 0.75]}
{"params": {"p": 4, "n": 10}, "callpath": "main->solve", "metric": "time", "value": [1, 1, 1]}
{"params": {"p": 2, "n": 20}, "callpath": "main->solve", "metric": "time", "value": [2, 2, 2]}
"#;
    assert!(detect(text));
    let e = parse("t.jsonl", text).unwrap();
    // The parameters as the first line's keys: JSON objects' keys are read in sorted order.
    let mut parameters = e.parameters.clone();
    parameters.sort();
    assert_eq!(parameters, ["n", "p"]);
    let p = e.parameters.iter().position(|x| x == "p").unwrap();
    let mut e = e;
    if p == 1 {
        for s in &mut e.series {
            for point in &mut s.points {
                point.swap(0, 1);
            }
        }
    }
    assert_eq!(summary(&e), sorted(expected()));
    assert_eq!(e.series[2].lines, vec![9, 10, 11]);
    // Without callpath and metric: Extra-P's defaults.
    let e = parse(
        "d.jsonl",
        "{\"params\": {\"p\": 1}, \"value\": 1}\n{\"params\": {\"p\": 2}, \"value\": 2}\n",
    )
    .unwrap();
    assert_eq!(
        (e.series[0].callpath.as_str(), e.series[0].metric.as_str()),
        ("<root>", "<default>")
    );
}

#[test]
fn a_datafile_is_not_taken_for_an_extrap_file() {
    assert!(!detect("p=2 n=10 wall=1\n"));
    assert!(!detect("# comment\np,n,wall\n2,10,1\n"));
    assert!(detect("# comment\n\nPARAMETER p\n"));
}

#[test]
fn bad_input_is_one_line_naming_file_line_and_field() {
    let cases: [(&str, &str); 11] = [
        (
            "PARAMETER p\nPOINTS 1 2\nDATA 1\nDATA x\n",
            "t.txt:4: DATA: expected a finite number, found 'x'",
        ),
        (
            "PARAMETER p\nPOINTS 1 2\nDATA 1\nDATA 2\nDATA 3\n",
            "t.txt:5: DATA: more DATA lines than the 2 POINTS",
        ),
        (
            "PARAMETER p\nPOINTS 1 2\nREGION a\nDATA 1\nREGION b\nDATA 1\nDATA 2\n",
            "t.txt:3: REGION a: 1 DATA lines for 2 POINTS",
        ),
        (
            "PARAMETER p n\nPOINTS (1 2) (3)\n",
            "t.txt:2: POINTS: the point (3) has 1 coordinates for 2 parameters",
        ),
        (
            "PARAMETER p n\nPOINTS 1 2\n",
            "t.txt:2: POINTS: with 2 parameters each point is written in parentheses",
        ),
        (
            "PARAMETER p\nPOINTS 1\nVALUE 3\n",
            "t.txt:3: 'VALUE' is not a section of Extra-P's text format",
        ),
        ("POINTS 1 2\n", "t.txt:1: POINTS before any PARAMETER"),
        ("PARAMETER p\nPOINTS 1 2\n", "t.txt: no measurements"),
        (
            "{\"parameters\": [\"p\"], \"measurements\": {\"main\": {\"time\": [{\"point\": [1, 2], \"values\": [1]}]}}}",
            "t.txt: measurements.main.time[0]: 2 coordinates for the 1 parameters (p)",
        ),
        (
            "{\"parameters\": [\"p\"], \"measurements\": {\"main\": {\"time\": [{\"point\": [1]}]}}}",
            "t.txt: measurements.main.time[0]: no field 'values'",
        ),
        (
            "{\"params\": {\"p\": 1}, \"value\": 1}\n{\"params\": {\"q\": 1}, \"value\": 1}\n",
            "t.txt:2: params: q where the first line has p",
        ),
    ];
    for (text, wanted) in cases {
        let e = parse("t.txt", text).unwrap_err().to_string();
        assert!(e.starts_with(wanted), "{e}\nwanted: {wanted}");
        assert!(!e.contains('\n'), "{e}");
    }
}
