//! `pp` on hostile and unusual log inputs: files without newlines (`/dev/zero`, a sparse 1 GiB
//! file of zeros) and binary logs with too many definitions end with a short one-line error in
//! bounded memory (the child runs under `RLIMIT_AS`); pipes, FIFOs and standard input give the
//! same row as the file; a byte order mark is skipped; non-finite header values are refused;
//! [`LogReader::place`] says where each event is.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pp::log::{LogReader, MAX_LINE, MAX_NAMES, MAX_SYMBOL_BYTES, Place};

use test_support::{limit, one_line_error, pp, scratch};

/// The address space the child `pp` may use: far below what the inputs would take unbounded.
const CAP: u64 = 200 << 20;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// `pp` limited to [`CAP`] bytes of address space.
fn capped() -> Command {
    let mut cmd = pp!();
    limit(&mut cmd, libc::RLIMIT_AS, CAP);
    cmd
}

/// The run failed with one short line on stderr (no panic, no abort); returns the line.
fn short_error(out: &Output) -> String {
    let line = one_line_error(out, Some(1), &[]);
    assert!(out.stderr.len() < 300, "{} bytes: {line}", out.stderr.len());
    line
}

/// The datafile row of a successful run.
fn row(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// A binary log header (p = 1, no parameters), then definition items of `per_item` names of
/// `len` bytes each, `items` times; no blocks, no end marker.
fn binary_with_names(items: usize, per_item: usize, len: usize) -> Vec<u8> {
    let mut log = b"PPLOG\0\x01\x01\x00".to_vec();
    let mut id = 0u64;
    for _ in 0..items {
        let mut defs = Vec::new();
        for _ in 0..per_item {
            defs.push(0x01);
            varint(&mut defs, id);
            varint(&mut defs, len as u64);
            let name = format!("{id:0len$}");
            defs.extend_from_slice(name.as_bytes());
            id += 1;
        }
        log.push(b'D');
        varint(&mut log, defs.len() as u64);
        log.extend_from_slice(&defs);
    }
    log
}

#[test]
fn dev_zero_ends_with_a_short_error_in_bounded_memory() {
    let out = capped().args(["-l", "/dev/zero"]).output().unwrap();
    let line = short_error(&out);
    assert!(
        line.starts_with(&format!(
            "Error: /dev/zero:1: line longer than the limit of {MAX_LINE} bytes (it starts '\\u{{0}}\\u{{0}}"
        )),
        "{line}"
    );
    assert!(line.ends_with("…')"), "{line}");
}

#[test]
fn a_sparse_gib_of_zeros_ends_with_a_short_error_in_bounded_memory() {
    let dir = scratch("zeros");
    let path = dir.join("zeros.log");
    File::create(&path).unwrap().set_len(1 << 30).unwrap();
    let out = capped().arg("-l").arg(&path).output().unwrap();
    let line = short_error(&out);
    assert!(
        line.contains("zeros.log:1: line longer than the limit"),
        "{line}"
    );
    // A long line after a good start ends the log at that line, quoting only its start.
    let long = format!(
        "pplog 1 p=1\n0 0 start\n1 0 phase {}\n",
        "y".repeat(MAX_LINE)
    );
    std::fs::write(&path, long).unwrap();
    let out = capped().arg("-l").arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "zeros.log:3: line longer than the limit of {MAX_LINE} bytes (it starts '1 0 phase yyy"
        )),
        "{stderr}"
    );
    assert!(stderr.lines().all(|l| l.len() < 300), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_line_of_exactly_the_limit_is_read() {
    let name = "n".repeat(MAX_LINE - "1 0 phase ".len());
    let log = format!("pplog 1 p=1\n0 0 start\n1 0 phase {name}\n2 0 stop\n");
    let mut reader = LogReader::from_bytes("x.log", log.into_bytes()).unwrap();
    assert_eq!(reader.by_ref().filter_map(Result::ok).count(), 3);
}

#[test]
fn binary_definitions_past_the_byte_bound_are_refused() {
    let dir = scratch("defs-bytes");
    let path = dir.join("names.bin");
    // 1000-byte names, about 1 MiB an item: the byte bound is passed in the fifth item.
    let per_item = (1 << 20) / 1010;
    std::fs::write(
        &path,
        binary_with_names(MAX_SYMBOL_BYTES / (1 << 20) + 1, per_item, 1000),
    )
    .unwrap();
    let out = capped().arg("-l").arg(&path).output().unwrap();
    let line = short_error(&out);
    let first_refused = MAX_SYMBOL_BYTES / 1000;
    assert!(
        line.contains(&format!(
            "name definition {first_refused}: more than {MAX_SYMBOL_BYTES} bytes of names and teams"
        )),
        "{line}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn binary_definitions_past_the_count_bound_are_refused() {
    let dir = scratch("defs-count");
    let path = dir.join("names.bin");
    std::fs::write(&path, binary_with_names(3, 30_000, 8)).unwrap();
    let out = capped().arg("-l").arg(&path).output().unwrap();
    let line = short_error(&out);
    assert!(
        line.contains(&format!(
            "name definition {MAX_NAMES}: more than {MAX_NAMES} names"
        )),
        "{line}"
    );
    // The text reader has the same bound.
    let mut text = String::from("pplog 1 p=1\n0 0 start\n");
    for k in 0..=MAX_NAMES {
        text.push_str(&format!("{k} 0 phase n{k}\n"));
    }
    let reader = LogReader::from_bytes("many.log", text.into_bytes()).unwrap();
    let err = reader.filter_map(Result::err).next().unwrap();
    assert_eq!(
        err.to_string(),
        format!(
            "many.log:{}: phase: more than {MAX_NAMES} names (the limit of a log)",
            MAX_NAMES + 3
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The text log and its binary form, in `dir`.
fn logs(dir: &Path) -> [PathBuf; 2] {
    let text = dir.join("run.log");
    std::fs::copy(data("categories-p2.log"), &text).unwrap();
    let binary = dir.join("run.bin");
    let out = pp!()
        .arg("convert")
        .arg(&text)
        .arg(&binary)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    [text, binary]
}

#[test]
fn pipes_fifos_and_stdin_give_the_same_row_as_the_file() {
    let dir = scratch("pipes");
    for log in logs(&dir) {
        let expected = row(pp!().arg("-l").arg(&log).output().unwrap());
        assert!(expected.contains("total="), "{expected}");
        // Standard input redirected from the file (seekable), as `-` and as /dev/stdin.
        for arg in ["-", "/dev/stdin"] {
            let out = pp!()
                .args(["-l", arg])
                .stdin(File::open(&log).unwrap())
                .output()
                .unwrap();
            assert_eq!(row(out), expected, "{} < {}", arg, log.display());
        }
        // A pipe (`cat log | pp -l -`), as `-` and as /dev/stdin.
        for arg in ["-", "/dev/stdin"] {
            let mut child = pp!()
                .args(["-l", arg])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let bytes = std::fs::read(&log).unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let writer = std::thread::spawn(move || stdin.write_all(&bytes));
            let out = child.wait_with_output().unwrap();
            writer.join().unwrap().unwrap();
            assert_eq!(row(out), expected, "cat {} | pp -l {arg}", log.display());
        }
        // A FIFO.
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (from, to) = (log.clone(), fifo.clone());
        let writer = std::thread::spawn(move || {
            let bytes = std::fs::read(from)?;
            File::options().write(true).open(to)?.write_all(&bytes)
        });
        let out = pp!().arg("-l").arg(&fifo).output().unwrap();
        writer.join().unwrap().unwrap();
        assert_eq!(row(out), expected, "fifo of {}", log.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_empty_pipe_is_an_empty_log() {
    let out = pp!()
        .args(["-l", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let line = short_error(&out);
    assert!(line.starts_with("Error: stdin:1: empty log"), "{line}");
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = scratch("bom");
    let plain = data("categories-p2.log");
    let bom = dir.join("bom.log");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(&plain).unwrap());
    std::fs::write(&bom, bytes).unwrap();
    let expected = row(pp!().arg("-l").arg(&plain).output().unwrap());
    assert_eq!(row(pp!().arg("-l").arg(&bom).output().unwrap()), expected);
    // Straight into the header line too.
    let log = "\u{feff}pplog 1 p=1 n=4\n0 0 start\n10 0 stop\n";
    let reader = LogReader::from_bytes("x.log", log.as_bytes().to_vec()).unwrap();
    assert_eq!(reader.header().params, [("n".to_string(), "4".to_string())]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn non_finite_header_values_are_refused() {
    for value in ["nan", "inf", "-Infinity", "1e400"] {
        let log = format!("# a run\npplog 1 p=1 n={value}\n0 0 start\n1 0 stop\n");
        let err = LogReader::from_bytes("x.log", log.into_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("x.log:2: header: n: value '{value}' is not a finite number")
        );
    }
}

#[test]
fn place_says_where_each_event_is() {
    let text = "pplog 1 p=2\n# comment\n5 1 start\n0 0 start\n\n9 0 stop\n9 1 stop\n";
    let mut reader = LogReader::from_bytes("x.log", text.as_bytes().to_vec()).unwrap();
    assert_eq!(reader.place(), Place::Start);
    let mut places = Vec::new();
    while let Some(e) = reader.next_event() {
        e.unwrap();
        places.push(reader.place().to_string());
    }
    assert_eq!(places, ["line 4", "line 3", "line 6", "line 7"]);
    // The binary form of the same log: each record's offset, as for_each_placed tells it too.
    let mut bytes = Vec::new();
    {
        let mut text_reader = LogReader::from_bytes("x.log", text.as_bytes().to_vec()).unwrap();
        let header = text_reader.header().clone();
        let mut writer = pp::log::BinaryWriter::new(&mut bytes, &header).unwrap();
        let events: Vec<_> = text_reader.by_ref().map(Result::unwrap).collect();
        for thread in 0..2 {
            let mine: Vec<_> = events
                .iter()
                .filter(|e| e.thread == thread)
                .copied()
                .collect();
            writer
                .write_block(thread, &mine, text_reader.symbols())
                .unwrap();
        }
        writer.finish().unwrap();
    }
    let mut reader = LogReader::from_bytes("x.bin", bytes.clone()).unwrap();
    let mut returned = Vec::new();
    while let Some(e) = reader.next_event() {
        let e = e.unwrap();
        let Place::Byte(at) = reader.place() else {
            panic!("{}", reader.place())
        };
        // The record at that byte: its tag is start (0x01) or stop (0x02).
        let tag = bytes[at as usize];
        returned.push((e.t, e.thread, tag));
    }
    assert_eq!(returned, [(0, 0, 1), (5, 1, 1), (9, 0, 2), (9, 1, 2)]);
    let mut placed = Vec::new();
    let mut reader = LogReader::from_bytes("x.bin", bytes).unwrap();
    reader
        .for_each_placed(|e, _, place| placed.push((e.t, place)))
        .unwrap();
    assert_eq!(reader.place(), placed.last().unwrap().1);
    assert_eq!(placed.len(), 4);
}

#[test]
fn convert_reads_standard_input() {
    let dir = scratch("convert-stdin");
    let [text, binary] = logs(&dir);
    let out_bin = dir.join("from-stdin.bin");
    let out = pp!()
        .args(["convert", "-"])
        .arg(&out_bin)
        .stdin(File::open(&text).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read(&out_bin).unwrap(),
        std::fs::read(&binary).unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn machine_and_target_files_that_are_not_regular_files_are_refused_at_once() {
    let dir = scratch("machine");
    let [text, _] = logs(&dir);
    let fifo = dir.join("fifo.toml");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // A FIFO no one writes to was waited on forever; /dev/zero was read to the bound.
    let out = dir.join("out.log");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &Path, &str); 4] = [
        (&["-l"], Path::new("/dev/zero"), "--machine"),
        (&["-l"], &fifo, "--machine"),
        (&["whatif", "--out", out], &fifo, "--target"),
        (
            &["whatif", "--group", "0,1", "--out", out],
            &fifo,
            "--machine",
        ),
    ];
    for (command, input, option) in cases {
        let mut child = capped()
            .args(command)
            .arg(&text)
            .arg(option)
            .arg(input)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Generous: the refusal takes milliseconds; a wait would take forever.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("{command:?} {option} {} still waits", input.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let line = short_error(&out);
        assert!(line.contains(&*input.to_string_lossy()), "{line}");
        assert!(line.contains("is not a regular file (a "), "{line}");
    }
    // A regular file too large to be a machine file is refused after the bound.
    let big = dir.join("big.toml");
    File::create(&big).unwrap().set_len(1 << 30).unwrap();
    let out = capped()
        .arg("-l")
        .arg(&text)
        .arg("--machine")
        .arg(&big)
        .output()
        .unwrap();
    let line = short_error(&out);
    assert!(line.contains("holds more than 1048576 bytes"), "{line}");
    std::fs::remove_dir_all(&dir).unwrap();
}
