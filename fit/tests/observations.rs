use fit::observations::{Cell, Condition, DataError, Datafile, Observations, is_response_column};
use proptest::prelude::*;

const KV: &str = "# fig2: dp against sp
impl=dp p=1 n=256 wall=4.0 li=0.0   # serial run

impl=dp p=2 n=256 wall=2.1 li=0.1 rc.cpu=0.01
  # a replicate follows
impl=dp n=256 p=4 wall=1.2 li=0.3
impl=dp p=4 n=256 wall=1.25 li=0.31
impl=sp p=4 n=256 wall=1.0 li=0.2
";

const CSV: &str = "# fig2: dp against sp
impl, p, n, wall, li, rc.cpu

dp,1,256,4.0,0.0,
dp,2,256,2.1,0.1,0.01
# a replicate follows
dp,4,256,1.2,0.3,
dp,4,256,1.25,0.31,
sp,4,256,1.0,0.2,
";

const SIZES: &str = "impl=dp p=1 n=64 wall=1
impl=dp p=2 n=64 wall=0.6
impl=dp p=1 n=256 wall=4
impl=dp p=2 n=256 wall=2.2
impl=dp p=1 n=1024 wall=16
impl=dp p=2 n=1024 wall=8.5
impl=sp p=2 n=1024 wall=7.5
impl=dp p=4 n=1024 wall=abc
impl=dp p=8 n=1024
";

fn parse(text: &str) -> Datafile {
    Datafile::parse("fig2.dat", text).unwrap()
}

fn conditions(list: &str) -> Vec<Condition> {
    list.split_whitespace()
        .map(|c| c.parse().unwrap())
        .collect()
}

/// `text` filtered by `filter` (space-separated `key=value`), then observations of `response`
/// against the space-separated `factors` at the space-separated `at` pairs.
fn select(
    text: &str,
    filter: &str,
    factors: &str,
    response: &str,
    at: &str,
) -> Result<Observations, String> {
    let data = parse(text)
        .filter(&conditions(filter))
        .map_err(|e| e.to_string())?;
    let at: Vec<(String, f64)> = conditions(at).iter().map(|c| c.to_at().unwrap()).collect();
    let factors: Vec<&str> = factors.split_whitespace().collect();
    data.observations(&factors, response, &at)
        .map_err(|e| e.to_string())
}

fn lines(data: &Datafile) -> Vec<usize> {
    data.rows().iter().map(|r| r.line).collect()
}

#[test]
fn parses_key_value_lines() {
    let data = parse(KV);
    assert_eq!(data.source(), "fig2.dat");
    assert_eq!(data.columns(), ["impl", "p", "n", "wall", "li", "rc.cpu"]);
    assert_eq!(lines(&data), [2, 4, 6, 7, 8]);
    assert_eq!(data.cell(0, "impl"), Some(Cell::Text("dp")));
    assert_eq!(data.cell(2, "p"), Some(Cell::Number(4.0)));
    assert_eq!(data.cell(1, "rc.cpu"), Some(Cell::Number(0.01)));
    assert_eq!(data.cell(0, "rc.cpu"), None);
    assert_eq!(data.cell(0, "x"), None);
    assert_eq!(data.cell(9, "p"), None);
    assert_eq!(data.numeric_columns(), ["p", "n", "wall", "li", "rc.cpu"]);
    assert!(
        ["wall", "li", "rc.cpu", "pc.x"]
            .iter()
            .all(|c| is_response_column(c))
    );
    assert!(
        !["p", "rcx", "walls", ".li"]
            .iter()
            .any(|c| is_response_column(c))
    );
}

#[test]
fn csv_and_key_value_give_the_same_observations_with_replicates() {
    let csv = parse(CSV);
    assert_eq!(csv.columns(), parse(KV).columns());
    assert_eq!(lines(&csv), [4, 5, 7, 8, 9]);
    let a = select(KV, "impl=dp", "p", "wall", "").unwrap();
    let b = select(CSV, "impl=dp", "p", "wall", "").unwrap();
    assert_eq!((&a.columns, &a.y), (&b.columns, &b.y));
    assert_eq!(
        (a.source.as_str(), a.response.as_str()),
        ("fig2.dat", "wall")
    );
    assert_eq!(a.factors, ["p"]);
    assert_eq!(a.columns, [[1.0, 2.0, 4.0, 4.0]]);
    assert_eq!(a.y, [4.0, 2.1, 1.2, 1.25]);
    assert_eq!(a.lines, [2, 4, 6, 7]);
    assert_eq!(a.levels(0), [1.0, 2.0, 4.0]);
    let mut point = [0.0];
    a.point(3, &mut point);
    assert_eq!(point, [4.0]);
}

#[test]
fn csv_empty_cells_are_missing_and_quotes_work() {
    let data = parse("p,impl,li\n1,\"d,p\",\n  # indented comment\n2,sp,0.5\n");
    assert_eq!(data.cell(0, "impl"), Some(Cell::Text("d,p")));
    assert_eq!(data.cell(0, "li"), None);
    assert_eq!(lines(&data), [2, 4]);
}

#[test]
fn filter_compares_numbers_as_numbers_and_text_as_text() {
    let filter = |c: &str| parse(KV).filter(&conditions(c)).map_err(|e| e.to_string());
    assert_eq!(lines(&filter("n=256.0").unwrap()), [2, 4, 6, 7, 8]);
    assert_eq!(lines(&filter("p=4e0 impl=dp").unwrap()), [6, 7]);
    assert_eq!(lines(&filter("impl=sp").unwrap()), [8]);
}

#[test]
fn at_selects_rows() {
    let obs = select(SIZES, "impl=dp", "p", "wall", "n=256.0000000001").unwrap();
    assert_eq!(
        (obs.columns, obs.y, obs.lines),
        (vec![vec![1.0, 2.0]], vec![4.0, 2.2], vec![3, 4])
    );
    let both = select(SIZES, "impl=dp", "n p", "wall", "p=1").unwrap();
    assert_eq!(both.columns, [vec![64.0, 256.0, 1024.0], vec![1.0; 3]]);
}

#[test]
fn conditions_parse() {
    let c: Condition = " impl = dp ".parse().unwrap();
    assert_eq!((c.key.as_str(), c.value.as_str()), ("impl", "dp"));
    assert_eq!(
        conditions("n=256")[0].to_at().unwrap(),
        ("n".to_string(), 256.0)
    );
    let at = c.to_at().unwrap_err().to_string();
    assert_eq!(
        at,
        "condition 'impl=dp': expected a finite number after '='"
    );
    let err = |s: &str| s.parse::<Condition>().unwrap_err().to_string();
    assert_eq!(
        err("impl"),
        "condition 'impl': expected key=value, like impl=dp (or !=, <, <=, >, >=, or impl in dp,tp)"
    );
    assert_eq!(err("=dp"), "condition '=dp': the key before '=' is empty");
    assert_eq!(
        err("impl="),
        "condition 'impl=': the value after '=' is empty"
    );
}

/// (data, --where, factors, response, --at) and the error.
#[rustfmt::skip]
const SELECTION_ERRORS: &[(&str, &str, &str, &str, &str, &str)] = &[
    (SIZES, "impl=dp", "p", "wall", "",
     "fig2.dat: factor 'n' varies in the selected rows (n = 64, 256, 1024); fix it with --at n=VALUE"),
    (SIZES, "impl=dp", "p", "wall", "n=512", "fig2.dat: no rows with n = 512 (--at); n takes 64, 256, 1024"),
    (SIZES, "impl=dp", "p", "wall", "m=1", "fig2.dat: unknown --at key 'm'; the columns are: impl, p, n, wall"),
    (SIZES, "impl=dp", "p", "wall", "n=1024", "fig2.dat:8: field 'wall': expected a number, found 'abc'"),
    (SIZES, "p=8", "p", "wall", "", "fig2.dat:9: field 'wall' is missing"),
    (KV, "", "p", "wall", "",
     "fig2.dat: factor 'impl' varies in the selected rows (impl = dp, sp); fix it with --where impl=VALUE, or mix its values with --where 'impl in A,B'"),
    (KV, "", "q", "wall", "", "fig2.dat: unknown factor 'q'; the numeric columns are: p, n, wall, li, rc.cpu"),
    (KV, "", "p", "impl", "", "fig2.dat:2: field 'impl': expected a number, found 'dp'"),
    (KV, "", "p p", "wall", "", "fig2.dat: 'p' is named twice among the factors and the response"),
    (KV, "imp=dp", "p", "wall", "",
     "fig2.dat: unknown --where key 'imp'; the columns are: impl, p, n, wall, li, rc.cpu"),
    (KV, "impl=xx", "p", "wall", "", "fig2.dat: no rows with impl = xx (--where); impl takes dp, sp"),
    (KV, "impl=sp p=2", "p", "wall", "", "fig2.dat: no rows with p = 2 (--where); p takes 4"),
    ("impl=dp\n", "", "p", "wall", "", "fig2.dat: unknown factor 'p'; there are no numeric columns"),
    ("p=1 wall=2 seed=1\np=2 wall=1\n", "", "p", "wall", "",
     "fig2.dat: factor 'seed' varies in the selected rows (seed = 1, (missing)); fix it with --at seed=VALUE"),
];

#[test]
fn selection_errors_say_what_to_fix() {
    for &(text, filter, factors, response, at, message) in SELECTION_ERRORS {
        assert_eq!(
            select(text, filter, factors, response, at).unwrap_err(),
            message
        );
    }
    let many: String = (0..20).map(|i| format!("p=1 wall=1 n={i}\n")).collect();
    let message = select(&many, "", "p", "wall", "").unwrap_err();
    assert!(
        message.contains("(n = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... (20 values));"),
        "{message}"
    );
}

/// A text column the conditions let take several values (`in`, `!=`) is the user's choice to
/// mix those rows: it is neither a factor nor held to one value; `=` still selects one.
#[test]
fn a_text_column_chosen_with_in_may_vary() {
    let text = "role=model p=2 wall=4\nrole=decide p=4 wall=2\nrole=validate p=8 wall=1\n";
    let chosen: Condition = "role in model,decide".parse().unwrap();
    let data = parse(text).filter(std::slice::from_ref(&chosen)).unwrap();
    assert_eq!(
        data.observations(&["p"], "wall", &[]).unwrap().y,
        [4.0, 2.0]
    );
    let not_validate = select(text, "role!=validate", "p", "wall", "").unwrap();
    assert_eq!(not_validate.y, [4.0, 2.0]);
    assert_eq!(
        select(text, "", "p", "wall", "").unwrap_err(),
        "fig2.dat: factor 'role' varies in the selected rows (role = decide, model, validate); \
         fix it with --where role=VALUE, or mix its values with --where 'role in A,B'"
    );
    assert!(data.is_mixed("role") && !data.is_mixed("p"));
    let (factors, held) = fit::performance::factors_of(&data).unwrap();
    assert_eq!(factors, ["p"]);
    assert!(held.is_empty());
}

#[rustfmt::skip]
const BAD_INPUT: &[(&str, &str)] = &[
    ("", "fig2.dat: no data rows"),
    ("# only\n\n   # comments\n", "fig2.dat: no data rows"),
    ("a,b,c\n# no rows\n", "fig2.dat: no data rows"),
    ("p=1 wall=2\n\np=2 abc wall=1\n", "fig2.dat:3: token 'abc' is not key=value"),
    ("p=1 =2\n", "fig2.dat:1: token '=2' has an empty key"),
    ("p=1\np= wall=1\n", "fig2.dat:2: field 'p' has an empty value"),
    ("p=1 wall=2 p=3\n", "fig2.dat:1: field 'p' is given twice"),
    ("p=1 li=nan\n", "fig2.dat:1: field 'li': expected a finite number, found 'nan'"),
    ("p=1 li=-inf\n", "fig2.dat:1: field 'li': expected a finite number, found '-inf'"),
    ("p=1 li=1e999\n", "fig2.dat:1: field 'li': expected a finite number, found '1e999'"),
    ("p,li\n1,NaN\n", "fig2.dat:2: field 'li': expected a finite number, found 'NaN'"),
    ("# c\np,li\n1,2\n\n1,2,3\n", "fig2.dat:5: expected 2 fields as in the header, found 3"),
    ("p,li\n1\n", "fig2.dat:2: expected 2 fields as in the header, found 1"),
    ("p,,li\n1,2,3\n", "fig2.dat:1: column 2 of the header has no name"),
    ("p,li,p\n1,2,3\n", "fig2.dat:1: column 'p' appears twice in the header"),
    ("p,\"l\ni\"\n1,2\n", "fig2.dat:1: column 2 has a line break (one run per line)"),
];

#[test]
fn bad_input_gets_one_line_naming_file_line_and_field() {
    for &(text, message) in BAD_INPUT {
        let error = Datafile::parse("fig2.dat", text).unwrap_err().to_string();
        assert_eq!(error, message, "{text:?}");
    }
}

#[test]
fn read_names_the_path() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let missing = dir.join("observations-no-such-file.dat");
    let message = Datafile::read(&missing).unwrap_err().to_string();
    let expected = format!("{}: cannot read the file: ", missing.display());
    assert!(message.starts_with(&expected), "{message}");
    let bad = dir.join("observations-not-utf8.dat");
    std::fs::write(&bad, b"p=1 wall=2\np=2 wall=\xff\n").unwrap();
    let message = Datafile::read(&bad).unwrap_err().to_string();
    assert_eq!(
        message,
        format!("{}:2: not valid UTF-8 text", bad.display())
    );
    let good = dir.join("observations-good.dat");
    std::fs::write(&good, KV).unwrap();
    assert_eq!(
        Datafile::read(&good).unwrap().source(),
        good.display().to_string()
    );
}

#[test]
fn observations_new_checks_shapes() {
    let new = |c, y| Observations::new("t", vec!["p".into()], "wall", c, y);
    let obs = new(vec![vec![1.0, 2.0, 2.0]], vec![3.0, 2.0, 1.0]).unwrap();
    assert_eq!((obs.len(), obs.is_empty()), (3, false));
    assert_eq!((obs.levels(0), obs.lines), (vec![1.0, 2.0], vec![1, 2, 3]));
    let err = |c, y| new(c, y).unwrap_err().to_string();
    assert_eq!(
        err(vec![], vec![]),
        "t: 1 factor names but 0 factor columns"
    );
    let short = err(vec![vec![1.0]], vec![1.0, 2.0]);
    assert_eq!(short, "t: 'p' has 1 values but response 'wall' has 2");
    let nan = err(vec![vec![1.0, f64::NAN]], vec![1.0, 2.0]);
    assert_eq!(nan, "t: 'p' value NaN at observation 2 is not finite");
    let inf = err(vec![vec![1.0]], vec![f64::INFINITY]);
    assert_eq!(inf, "t: 'wall' value inf at observation 1 is not finite");
}

/// Parses, then selects every column against up to two others; errors must be one line.
fn never_panics(text: &str) {
    let one_line = |e: DataError| assert!(!e.to_string().contains('\n'), "{e}");
    match Datafile::parse("x.dat", text) {
        Err(e) => one_line(e),
        Ok(data) => {
            let names: Vec<&str> = data.columns().iter().map(String::as_str).collect();
            for (i, response) in names.iter().enumerate() {
                let factors = [&names[..i], &names[i + 1..]].concat();
                let factors = &factors[..factors.len().min(2)];
                if let Err(e) = data.observations(factors, response, &[]) {
                    one_line(e);
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        never_panics(&text);
    }

    #[test]
    fn key_value_like_text_never_panics(text in "([a-c.]{0,2}=?[0-9a-c.e#-]{0,4}[ \n]){0,24}") {
        never_panics(&text);
    }

    #[test]
    fn csv_like_text_never_panics(text in "([a-c0-9.# \"]{0,3}[,\n]){0,30}") {
        never_panics(&text);
    }
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_name() {
    for text in [
        "\u{feff}p=2 li=0.1\np=4 li=0.2\n",
        "\u{feff}p,li\n2,0.1\n4,0.2\n",
    ] {
        let data = Datafile::parse("bom.dat", text).unwrap();
        let obs = data.observations(&["p"], "li", &[]).unwrap();
        assert_eq!(obs.factors, ["p"]);
        assert_eq!(obs.columns[0], [2.0, 4.0]);
    }
}

/// A weak-scaling series (n grows with p) varies its factors together; a grid, a cross and a
/// factor that never changes do not (docs/modelling.md#without-every-corner).
#[test]
fn factors_that_vary_together_are_found() {
    let obs = |p: &[f64], n: &[f64], q: &[f64]| {
        Observations::new(
            "t",
            vec!["p".into(), "n".into(), "q".into()],
            "wall",
            vec![p.to_vec(), n.to_vec(), q.to_vec()],
            vec![1.0; p.len()],
        )
        .unwrap()
    };
    let weak = obs(
        &[2.0, 4.0, 8.0, 2.0],
        &[20.0, 40.0, 80.0, 20.0],
        &[1.0, 2.0, 1.0, 2.0],
    );
    assert_eq!(weak.vary_together(), vec![(0, 1)]);
    let grid = obs(&[2.0, 4.0, 2.0, 4.0], &[20.0, 20.0, 40.0, 40.0], &[7.0; 4]);
    assert!(grid.vary_together().is_empty());
    let cross = obs(&[2.0, 4.0, 8.0, 2.0], &[20.0, 20.0, 20.0, 40.0], &[7.0; 4]);
    assert!(cross.vary_together().is_empty());
    // n follows p, but p does not follow n: not together.
    let folded = obs(&[2.0, 4.0, 8.0], &[20.0, 40.0, 20.0], &[7.0; 3]);
    assert!(folded.vary_together().is_empty());
}
