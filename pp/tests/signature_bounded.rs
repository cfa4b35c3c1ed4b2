//! `pp signature` and `pp skeleton` in bounded memory (docs/skeletons.md#memory): the steps
//! kept in a temporary file give the same signature, byte for byte, as when they stay in
//! memory, and the same as the signature held whole ([`signature::read`]'s text and JSON), on
//! random logs; both commands run under an address-space limit that the whole run's steps held
//! in memory exceed; and a temporary folder they cannot write is a one-line error.

use std::path::Path;

use pp::signature::{self, Threshold};
use proptest::prelude::*;
use test_support::{pp, scratch};

mod log_support;
use log_support::activity::random_log;
use log_support::realistic_log;

/// `pp signature LOG ARGS` with `chunk` bytes of buffer a stream (`None`: the default): its
/// standard output, or its error.
fn signature_of(
    dir: &Path,
    log: &Path,
    args: &[&str],
    chunk: Option<usize>,
) -> Result<String, String> {
    let mut cmd = pp!();
    cmd.arg("signature").arg(log).args(args).env("TMPDIR", dir);
    if let Some(c) = chunk {
        cmd.env("PP_SPILL_CHUNK", c.to_string());
    }
    let done = cmd.output().unwrap();
    if done.status.success() {
        Ok(String::from_utf8(done.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&done.stderr).into_owned())
    }
}

const FORMS: [(&[&str], Threshold, bool); 4] = [
    (&[], Threshold::Fixed(0.05), false),
    (&["--format", "json"], Threshold::Fixed(0.05), true),
    (&["--threshold", "0"], Threshold::Fixed(0.0), false),
    (
        &["--scale", "10", "--format", "json"],
        Threshold::Target(5.0),
        true,
    ),
];

fn same_from_the_file_as_from_memory(name: &str, log: &[u8], form: usize) {
    let dir = scratch(name);
    let path = dir.join("run.log");
    std::fs::write(&path, log).unwrap();
    let (args, threshold, json) = FORMS[form];
    // 8 bytes a buffer: every step and sample goes to the file as soon as it is read.
    let on_disk = signature_of(&dir, &path, args, Some(8));
    let in_memory = signature_of(&dir, &path, args, None);
    assert_eq!(on_disk, in_memory);
    let whole = signature::read(&path, threshold).unwrap();
    let whole = if json { whole.json() } else { whole.text() };
    assert_eq!(in_memory.unwrap(), whole);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn the_file_gives_the_signature_of_memory_on_logs_with_messages_and_locks(
        seed in any::<u64>(), p in 2u32..6, rounds in 1usize..12,
        messages in any::<bool>(), locks in any::<bool>(), form in 0usize..4
    ) {
        let (log, _) = random_log(seed, p, rounds, messages, locks);
        same_from_the_file_as_from_memory("signature-bounded-random", log.as_bytes(), form);
    }

    #[test]
    fn the_file_gives_the_signature_of_memory_on_realistic_logs(
        seed in any::<u64>(), p in 1u32..9, events in 20u64..3000, block in 1usize..300,
        form in 0usize..4
    ) {
        let log = realistic_log(p, events, block, seed);
        same_from_the_file_as_from_memory("signature-bounded-realistic", &log, form);
    }
}

/// Under this address-space limit: the first version kept every step of every thread (about
/// 78 bytes an event, 230 MB for the 3 M events below, more while its vectors grew).
const LIMIT: u64 = 96 << 20;

#[test]
fn pp_signature_and_pp_skeleton_run_under_an_address_space_limit_the_whole_run_exceeds() {
    let dir = scratch("signature-bounded-limit");
    let log = dir.join("big.log");
    std::fs::write(&log, realistic_log(8, 3_000_000, 4096, 7)).unwrap();
    let mut cmd = pp!();
    cmd.arg("signature").arg(&log).env("TMPDIR", &dir);
    let done = test_support::limit(&mut cmd, libc::RLIMIT_AS, LIMIT)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let text = String::from_utf8(done.stdout).unwrap();
    assert!(
        text.starts_with("signature: p=8, threshold 0.05"),
        "{}",
        &text[..200.min(text.len())]
    );
    assert_eq!(text.matches("\nthread ").count(), 8);

    let out = dir.join("skel");
    let mut cmd = pp!();
    cmd.args(["skeleton", log.to_str().unwrap(), "--scale", "10", "--out"])
        .arg(&out)
        .env("TMPDIR", &dir);
    let done = test_support::limit(&mut cmd, libc::RLIMIT_AS, LIMIT)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // Read a line at a time (the skeleton of a run that hardly folds is long).
    let file = std::io::BufReader::new(std::fs::File::open(out.join("skeleton.txt")).unwrap());
    let lines: Vec<String> = std::io::BufRead::lines(file)
        .map(Result::unwrap)
        .filter(|l| l.starts_with("p ") || l.starts_with("thread ") || l.starts_with("k "))
        .collect();
    assert_eq!(lines[..2], ["k 10", "p 8"]);
    assert_eq!(lines.len(), 2 + 8, "{lines:?}");
}

#[test]
fn a_temporary_folder_that_cannot_be_written_is_a_one_line_error() {
    let dir = scratch("signature-bounded-no-tmp");
    let log = dir.join("run.log");
    std::fs::write(&log, realistic_log(4, 2000, 64, 3)).unwrap();
    let err = signature_of(&dir.join("missing"), &log, &[], Some(8)).unwrap_err();
    assert!(err.contains("a temporary file in"), "{err}");
    assert!(err.contains("missing"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
