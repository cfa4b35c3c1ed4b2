//! Datafiles that are endless, cut short, too wide or full of long fields: each ends with a
//! one-line error naming the file and line that quotes at most a short excerpt, and no row
//! with missing fields is ever read as data.

use std::io::{BufReader, Read};

use fit::observations::{Cell, Datafile, MAX_COLUMNS, MAX_LINE, excerpt};

fn error(text: &str) -> String {
    Datafile::parse("d.dat", text).unwrap_err().to_string()
}

#[test]
fn an_endless_line_stops_at_the_limit() {
    // Zero bytes without end, as from /dev/zero.
    let endless = BufReader::new(std::io::repeat(0));
    let e = Datafile::from_reader("/dev/zero", endless)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "/dev/zero:1: the line is longer than {MAX_LINE} bytes (a datafile holds one run per line)"
        )
    );
    // A long line after good ones names its line.
    let text = format!("p=1 li=2\np=2 li=3\n{}\n", "x".repeat(MAX_LINE + 1));
    assert!(error(&text).starts_with("d.dat:3: the line is longer than"));
    // A line of exactly the limit is read.
    let pad = "#".repeat(MAX_LINE - 9);
    let data = Datafile::parse("d.dat", &format!("p=1 li=2 {pad}\np=2 li=3\n")).unwrap();
    assert_eq!(data.rows().len(), 2);
}

#[test]
fn a_last_line_without_newline_is_reported_not_read() {
    let e = error("p=1 li=0.5\np=2 li=0.25\np=4 li=0.1");
    assert!(
        e.starts_with("d.dat:3: the last line has no newline at its end"),
        "{e}"
    );
    assert!(e.contains("it was not read"), "{e}");
    assert_eq!(error("p,li\n1,0.5\n2,0"), e);
    // Cut anywhere, the row is never data, even where what is left parses.
    let row = "impl=dp p=4 wall=1.5 total=6 li=0.5 rc=0.25 pc=5.25\n";
    for cut in 1..row.len() - 1 {
        let text = format!("{row}{}", &row[..cut]);
        let e = error(&text);
        if row[..cut].trim().is_empty() {
            continue;
        }
        assert!(
            e.starts_with("d.dat:2: the last line has no newline"),
            "{cut}: {e}"
        );
    }
    // Blank or comment lines without newline are no rows: nothing is lost.
    for end in ["", "   ", "# end", "\r"] {
        let data = Datafile::parse("d.dat", &format!("{row}{end}")).unwrap();
        assert_eq!(data.rows().len(), 1);
    }
}

#[test]
fn a_torn_file_on_disk_names_the_path() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("hostile-torn.dat");
    std::fs::write(&path, "p=1 rc=0.5\np=2 rc=0.00").unwrap();
    let e = Datafile::read(&path).unwrap_err().to_string();
    assert!(e.starts_with(&format!(
        "{}:2: the last line has no newline",
        path.display()
    )));
}

#[test]
fn errors_quote_a_short_excerpt() {
    let long = "y".repeat(5000);
    for text in [
        format!("p=1 {long}\n"),
        format!("p=1 {long}=nan\n"),
        format!("p=1 li={long}\np=2 li=1\n"),
        format!("p=1 =={long}\n"),
    ] {
        let e = match Datafile::parse("d.dat", &text) {
            Err(e) => e.to_string(),
            Ok(data) => data
                .observations(&["p"], "li", &[])
                .unwrap_err()
                .to_string(),
        };
        assert!(e.len() < 160, "{} bytes: {e}", e.len());
        assert!(e.contains("yyyy…"), "{e}");
    }
    assert_eq!(excerpt("a\u{1b}[2Jb\nc"), "a\\u{1b}[2Jb\\nc");
    // 40 bytes, whole characters: twenty two-byte é.
    assert_eq!(excerpt(&"é".repeat(41)), format!("{}…", "é".repeat(20)));
    assert_eq!(excerpt("short"), "short");
}

#[test]
fn columns_are_bounded() {
    // A thousand new columns a row: the eleventh row passes the limit.
    let wide: String = (0..=MAX_COLUMNS)
        .map(|i| format!("c{i}=1{}", if i % 1000 == 999 { "\n" } else { " " }))
        .collect();
    let e = error(&format!("{wide}\n"));
    let (limit, next) = (MAX_COLUMNS, MAX_COLUMNS + 1);
    assert_eq!(
        e,
        format!("d.dat:11: 'c{limit}' would be column {next}; a datafile has at most {limit}")
    );
    // One new column a row reaches the limit too, whatever the rows' widths.
    let tall: String = (0..=MAX_COLUMNS).map(|i| format!("k{i}=1\n")).collect();
    assert!(error(&tall).starts_with(&format!("d.dat:{}: 'k{MAX_COLUMNS}'", MAX_COLUMNS + 1)));
}

#[test]
fn rows_of_different_keys_keep_their_own_cells() {
    let data = Datafile::parse("d.dat", "a=1 b=x\nb=y c=2 a=3\n\nc=4\n").unwrap();
    assert_eq!(data.columns(), ["a", "b", "c"]);
    let cells: Vec<Vec<Option<Cell<'_>>>> = (0..3)
        .map(|r| ["a", "b", "c"].iter().map(|c| data.cell(r, c)).collect())
        .collect();
    use Cell::{Number as N, Text as T};
    assert_eq!(
        cells,
        [
            [Some(N(1.0)), Some(T("x")), None],
            [Some(N(3.0)), Some(T("y")), Some(N(2.0))],
            [None, None, Some(N(4.0))],
        ]
    );
    let lines: Vec<usize> = data.rows().iter().map(|r| r.line).collect();
    assert_eq!(lines, [1, 2, 4]);
    // A filter shares the cells and keeps the lines.
    let kept = data.filter(&["b=y".parse().unwrap()]).unwrap();
    assert_eq!(kept.cell(0, "c"), Some(N(2.0)));
    assert_eq!(kept.rows()[0].line, 2);
}

#[test]
fn a_read_error_names_the_file() {
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let e = Datafile::from_reader("d.dat", BufReader::new(Failing)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "d.dat: cannot read the file: line 1: disk on fire"
    );
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let e = Datafile::read(dir).unwrap_err().to_string();
    assert!(e.contains("Is a directory"), "{e}");
}
