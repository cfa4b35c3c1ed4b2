//! End-to-end tests of `lca study`: a fake, fast workload (a `sh` script given as an argument
//! vector) writes text logs whose times depend only on p and n, so rows are comparable.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{error_of, lca};
use test_support::{scratch, wait_for, write};

/// Writes a valid text log to $PP_LOG for p = $1, n = $2 (thread 0 works n*p + 10 n ns, the
/// others n ns; the run window is n*(p + 10) + 7 ns), after sleeping $3 seconds. Exits 3 with a
/// message on standard error when $4 names this point (`n,p`). While the file `$5/limit`
/// exists, only its first 5 runs go through: the 6th waits until `$5/release` appears, then
/// writes `$5/released` and exits 9 (a study that is killed at a known point, whatever the
/// machine's load).
const FAKE: &str = r#"p=$1; n=$2; sleep $3
if [ -e "$5/limit" ]; then
  echo run >> "$5/count"
  if [ "$(wc -l < "$5/count")" -gt 5 ]; then
    while [ ! -e "$5/release" ]; do sleep 0.02; done; touch "$5/released"; exit 9
  fi
fi
if [ "$n,$p" = "$4" ]; then echo "fake: cannot do n=$n p=$p" >&2; exit 3; fi
w=$(( n * p + 10 * n )); end=$(( w + 7 ))
{ printf 'pplog 1 p=%s n=%s\n0 0 start\n0 0 work_begin\n%s 0 work_end\n%s 0 stop\n' $p $n $w $end
  i=1; while [ $i -lt $p ]; do printf '0 %s start\n0 %s work_begin\n%s %s work_end\n%s %s stop\n' $i $i $n $i $end $i; i=$((i+1)); done
} > "$PP_LOG""#;

/// A study of the fake workload over n and p (edges design: 8 model points), with four
/// validation points, for two implementations: 24 runs.
fn study(dir: &Path, sleep: &str, fail_at: &str, timeout: &str) -> std::path::PathBuf {
    let command = |name: &str| {
        format!(
            "[[implementation]]\nname = \"{name}\"\ncommand = [\"sh\", \"-c\", '''{FAKE}''', \"sh\", \"{{p}}\", \"{{n}}\", \"{sleep}\", \"{fail_at}\", \"{}\"]\n",
            dir.display()
        )
    };
    let text = format!(
        "name = \"fake\"\ntimeout_s = {timeout}\ndesign = \"edges:1\"\n\n[factors]\nn = \"32..512:log2\"\np = \"2..8:lin:7\"\n\n[validate]\ngrid = {{ n = \"64,256\", p = \"3,6\" }}\n\n{}\n{}",
        command("a"),
        command("b")
    );
    write(dir, "fake.toml", &text)
}

/// The datafile's rows, as a set (order free).
fn rows(dir: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(dir.join("study-fake/fake.dat")).unwrap();
    assert!(text.ends_with('\n'), "{text}");
    text.lines().map(str::to_string).collect()
}

fn run_study(dir: &Path) -> std::process::Output {
    lca()
        .current_dir(dir)
        .args(["study", "fake.toml"])
        .output()
        .unwrap()
}

#[test]
fn an_interrupted_study_resumes_to_the_same_rows() {
    // Uninterrupted.
    let whole = scratch("study-whole");
    let _ = std::fs::remove_dir_all(whole.join("study-fake"));
    study(&whole, "0", "-", "10");
    let out = run_study(&whole);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("study fake: 24 runs, 24 made now"),
        "{stdout}"
    );
    assert!(stdout.contains("study-fake/a.toml"), "{stdout}");
    assert!(stdout.contains("study-fake/b.toml"), "{stdout}");
    let expected = rows(&whole);
    assert_eq!(expected.len(), 24);
    for row in &expected {
        assert!(row.starts_with("impl="), "{row}");
        assert!(row.contains(" role="), "{row}");
        assert!(row.contains(" replicate=1"), "{row}");
    }
    assert_eq!(
        expected
            .iter()
            .filter(|r| r.contains("role=validate"))
            .count(),
        8
    );
    for file in ["a.toml", "a-model.txt", "a-validation.txt", "b.toml"] {
        assert!(whole.join("study-fake").join(file).exists(), "{file}");
    }

    // Killed (SIGKILL: no chance to clean up) while running, then started again.
    let broken = scratch("study-broken");
    let _ = std::fs::remove_dir_all(broken.join("study-fake"));
    for file in ["count", "release", "released"] {
        let _ = std::fs::remove_file(broken.join(file));
    }
    std::fs::write(broken.join("limit"), "").unwrap();
    study(&broken, "0", "-", "1000");
    let mut child = lca()
        .current_dir(&broken)
        .args(["study", "fake.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let datafile = broken.join("study-fake/fake.dat");
    // The 6th run waits for the release: the study stands still with 5 rows written.
    wait_for("the study's 6th run", || {
        std::fs::read_to_string(broken.join("count")).is_ok_and(|c| c.lines().count() > 5)
    });
    child.kill().unwrap();
    child.wait().unwrap();
    // The kernel kills the run with the study (its death signal): nothing is released.
    std::fs::remove_file(broken.join("limit")).unwrap();
    std::fs::write(broken.join("release"), "").unwrap();
    assert!(!broken.join("released").exists());
    let partial = rows(&broken);
    assert_eq!(partial.len(), 5, "{partial:?}");
    assert!(partial.is_subset(&expected), "{partial:?}");

    let out = run_study(&broken);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let earlier = format!("{} measured earlier", partial.len());
    assert!(stdout.contains(&earlier), "{stdout}");
    assert_eq!(rows(&broken), expected);

    // A third start has nothing left to run and changes nothing.
    let out = run_study(&broken);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("0 made now"), "{stdout}");
    assert_eq!(rows(&broken), expected);
    let text = std::fs::read_to_string(&datafile).unwrap();
    assert_eq!(text.lines().count(), 24);
}

/// Every run made, and no model can be built (a shape fixed in `[shapes]` that the runs
/// cannot estimate is never replaced): the study says there is no verdict and why, instead of
/// leaving it to be guessed.
#[test]
fn a_study_whose_models_cannot_be_built_says_there_is_no_verdict() {
    let dir = scratch("study-unbuilt");
    let _ = std::fs::remove_dir_all(dir.join("study-fake"));
    let file = study(&dir, "0", "-", "10");
    let text = std::fs::read_to_string(&file).unwrap() + "\n[shapes]\npc = { p = \"p + 2*p\" }\n";
    std::fs::write(&file, text).unwrap();
    let out = run_study(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("24 made now"), "{stdout}");
    assert!(
        stdout.contains(
            "verdict: none, crossover: none, report: none: no model was built (a, b above: not \
             built)"
        ),
        "{stdout}"
    );
}

#[test]
fn failing_and_hanging_commands_are_reported_and_the_study_goes_on() {
    let dir = scratch("study-failing");
    let _ = std::fs::remove_dir_all(dir.join("study-fake"));
    study(&dir, "0", "512,8", "10");
    let out = run_study(&dir);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Both implementations fail at n=512 p=8 and the rest is measured.
    assert!(
        stderr.contains("a n=512 p=8: exited with status 3")
            && stderr.contains("b n=512 p=8: exited with status 3"),
        "{stderr}"
    );
    assert!(stderr.contains("fake: cannot do n=512 p=8"), "{stderr}");
    assert!(
        stderr.trim_end().ends_with(
            "Error: 2 of 24 runs failed (reported above, with their standard error); run the study again to retry them"
        ),
        "{stderr}"
    );
    assert!(stdout.contains("22 made now"), "{stdout}");
    assert_eq!(rows(&dir).len(), 22);
    assert!(!rows(&dir).iter().any(|r| r.contains("n=512 p=8")));

    // Started again, only the failed points run (and fail again).
    let out = run_study(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("0 made now in"), "{stdout}");
    assert!(stdout.contains("2 failed, 22 measured earlier"), "{stdout}");
    // The models are built without the corner n=512 p=8, and say how their form was chosen
    // (docs/modelling.md#without-every-corner).
    let summary = std::fs::read_to_string(dir.join("study-fake/a-model.txt")).unwrap();
    assert!(
        summary.contains("no run at the corner n=512, p=8, so leave-one-out error chose"),
        "{summary}"
    );

    // A command that outlives its timeout is killed and reported; nothing is appended. Every
    // run timing out, the retry budget (max_failures = 3 in a row) ends the study after the
    // third of an implementation, instead of trying all 24.
    let slow = scratch("study-slow");
    let _ = std::fs::remove_dir_all(slow.join("study-fake"));
    study(&slow, "30", "-", "0.2");
    let begun = Instant::now();
    let out = run_study(&slow);
    // 24 runs of 30 s would take 12 minutes; killed after 0.2 s they take seconds. Half of it
    // proves the kills, with room for any load.
    assert!(begun.elapsed() < Duration::from_secs(6 * 60));
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // a, b, a, b, a: the points alternate between the implementations.
    let timed_out = stderr
        .lines()
        .filter(|l| l.starts_with("lca study: ") && l.contains("timed out after 0.2 s"))
        .count();
    assert_eq!(timed_out, 5, "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("Error: a: 3 runs in a row failed, the last (a ")
            && last.contains("timed out after 0.2 s and was killed; the study stops there (max_failures = 3): is its command right? sh -c "),
        "{stderr}"
    );
    // The study stopped there: the error above says so, and nothing was modelled.
    assert!(!stdout.contains("verdict"), "{stdout}");
    assert!(!slow.join("study-fake/a.toml").exists());
    assert!(!slow.join("study-fake/fake.dat").exists());
}

#[test]
fn a_studys_shapes_are_its_models_and_a_missing_model_is_said() {
    let dir = scratch("study-shapes");
    let _ = std::fs::remove_dir_all(dir.join("study-fake"));
    let path = study(&dir, "0", "-", "10");
    let text = std::fs::read_to_string(&path).unwrap();
    // b never writes a log: it has no model, and there is no verdict to give.
    let b = text.rfind("[[implementation]]").unwrap();
    let text = format!(
        "max_failures = 100\n{}[shapes]\nli = {{ p = \"p^2\" }}\n\n{}[[implementation]]\nname = \"b\"\ncommand = \
         [\"sh\", \"-c\", \"exit 3\", \"sh\", \"{{p}}\", \"{{n}}\"]\n",
        &text[..text.find("[[implementation]]").unwrap()],
        &text[text.find("[[implementation]]").unwrap()..b],
    );
    write(&dir, "fake.toml", &text);
    let out = run_study(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let model = std::fs::read_to_string(dir.join("study-fake/a.toml")).unwrap();
    let li = &model[model.find("name = \"li\"").unwrap()..];
    let li = &li[..li.find("[[category]]").unwrap_or(li.len())];
    assert!(li.contains("expr = \"p^2\"\nsource = \"user\""), "{li}");
    assert!(
        stdout.contains(
            "verdict: none, crossover: none: it compares two models, and b's was not built \
             (above)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("study-fake/report/index.html"), "{stdout}");
}

#[test]
fn bad_study_files_give_file_and_line() {
    let dir = scratch("study-bad");
    let path = study(&dir, "0", "-", "10");
    let good = std::fs::read_to_string(&path).unwrap();
    // (the file, a text on the line the error must name, the start of the message)
    let cases = [
        (
            good.replace("\"{p}\"", "\"{q}\""),
            "\"{q}\"",
            "unknown placeholder {q}",
        ),
        (
            good.replace("timeout_s", "colour = 1\ntimeout_s"),
            "colour",
            "unknown field `colour`",
        ),
        (
            good.replace("2..8:lin:7", "8..2"),
            "8..2",
            "factor p = \"8..2\"",
        ),
        (
            good.replace("design = \"edges:1\"", "design = \"corners\""),
            "corners",
            "design = \"corners\"",
        ),
        (
            good.replace("timeout_s = 10", "timeout_s = \"long\""),
            "long",
            "invalid type",
        ),
        (
            // A number no `Duration` can hold panicked before.
            good.replace("timeout_s = 10", "timeout_s = 1e300"),
            "1e300",
            "timeout_s = 1e300: expected a positive number of seconds, at most 2592000 (30 days)",
        ),
        (
            good.replace(", \"{n}\"", ""),
            "command = [\"sh\"",
            "the command of 'a' does not use {n}",
        ),
    ];
    for (text, marker, message) in cases {
        let file = write(&dir, "fake.toml", &text);
        let line = 1 + text[..text.find(marker).unwrap()].matches('\n').count();
        let e = error_of(&["study", file.to_str().unwrap()]);
        let expected = format!("Error: {}:{line}: {message}", file.display());
        assert!(e.starts_with(&expected), "{e}\nexpected: {expected}");
    }
    let e = error_of(&["study", dir.join("missing.toml").to_str().unwrap()]);
    assert!(e.contains("missing.toml: cannot read"), "{e}");
}

#[test]
fn the_bundled_study_is_valid_and_runs_the_workload_from_this_binary() {
    let out = lca().args(["study", "--print-default"]).output().unwrap();
    assert!(out.status.success());
    let default = String::from_utf8(out.stdout).unwrap();
    assert!(
        default.contains("\"{lca}\", \"workload\", \"fft2d\""),
        "{default}"
    );

    // The bundled study's commands, on a tiny space: {lca} is this binary.
    let dir = scratch("study-fft2d");
    let _ = std::fs::remove_dir_all(dir.join("study-tiny"));
    let text = default
        .replace("name = \"fft2d\"", "name = \"tiny\"")
        .replace("32..512:log2", "16,24,32")
        .replace("2..8:lin:7", "2,3,4")
        .replace("design = \"edges:3\"", "design = \"full\"")
        .replace("n = \"64,128,256\", p = \"4,6\"", "n = \"16\", p = \"3\"")
        .replace("replicates = 2", "replicates = 1")
        .replace("\"--iters\", \"500\"", "\"--iters\", \"3\"");
    write(&dir, "tiny.toml", &text);
    let out = lca()
        .current_dir(&dir)
        .args(["study", "tiny.toml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("study tiny: 20 runs, 20 made now"),
        "{stdout}"
    );
    let data = std::fs::read_to_string(dir.join("study-tiny/tiny.dat")).unwrap();
    assert_eq!(data.lines().count(), 20);
    // Each implementation has its row in the summary: its model file, or, on so few noisy
    // runs, why a category's model could not be built (which depends on what was measured:
    // under load a category can be zero in every run).
    for implementation in ["dp", "tp"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{implementation} ")))
            .unwrap_or_else(|| panic!("no {implementation} row: {stdout}"));
        assert!(
            row.contains(&format!("study-tiny/{implementation}.toml"))
                || row.contains("not built: "),
            "{row}"
        );
    }
    for line in data.lines() {
        assert!(line.contains(" iters=3 "), "{line}");
        assert!(line.contains(" cl="), "{line}");
    }

    // The workload itself is hidden from the help.
    let help = lca().arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("study"), "{help}");
    assert!(!help.contains("workload"), "{help}");
    let e = error_of(&["workload", "nbody"]);
    assert!(e.contains("expected fft2d"), "{e}");
}

#[test]
fn a_run_with_an_empty_window_or_a_clashing_key_is_refused_like_pp_l() {
    // The same refusals as `pp -l`: no all-zero row, no run parameter named like a field.
    let dir = scratch("study-refused");
    let _ = std::fs::remove_dir_all(dir.join("study-refused"));
    let log = |header: &str, stop: u32| {
        format!("printf 'pplog 1 p=1 {header}\\n0 0 start\\n{stop} 0 stop\\n' > \"$PP_LOG\"")
    };
    let text = format!(
        "name = \"refused\"\ndesign = \"full\"\n\n[factors]\nn = \"1,2\"\n\n\
         [[implementation]]\nname = \"empty\"\ncommand = [\"sh\", \"-c\", '''{}''', \"sh\", \"{{n}}\"]\n\n\
         [[implementation]]\nname = \"clash\"\ncommand = [\"sh\", \"-c\", '''{}''', \"sh\", \"{{n}}\"]\n",
        log("", 0),
        log("li=3", 100)
    );
    write(&dir, "refused.toml", &text);
    let out = lca()
        .current_dir(&dir)
        .args(["study", "refused.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("the run window is empty").count(),
        2,
        "{stderr}"
    );
    assert_eq!(
        stderr
            .matches("header key 'li' is a field pp computes")
            .count(),
        2,
        "{stderr}"
    );
    let data = std::fs::read_to_string(dir.join("study-refused/refused.dat")).unwrap_or_default();
    assert_eq!(
        data.lines().filter(|l| !l.starts_with('#')).count(),
        0,
        "{data}"
    );
}

/// A fake workload without sleeping or failing (p = $1, n = $2, replicate $3, implementation
/// $4): the log of `FAKE` with thread 0 working `w` ns, which `adjust` (shell lines) may change
/// from its `n p + 10 n`.
fn workload(adjust: &str) -> String {
    format!(
        r#"p=$1; n=$2; r=$3
w=$(( n * p + 10 * n ))
{adjust}
end=$(( w + 7 ))
{{ printf 'pplog 1 p=%s n=%s\n0 0 start\n0 0 work_begin\n%s 0 work_end\n%s 0 stop\n' $p $n $w $end
  i=1; while [ $i -lt $p ]; do printf '0 %s start\n0 %s work_begin\n%s %s work_end\n%s %s stop\n' $i $i $n $i $end $i; i=$((i+1)); done
}} > "$PP_LOG""#
    )
}

/// Writes `fake.toml`: a study of implementations a and b running [`workload`] with `adjust`
/// over n = 32..512 and p = 2..8 (edges:1), with `head` before its factors (top-level
/// settings, then tables) and `tail` after them.
fn write_fake(dir: &Path, head: &str, tail: &str, adjust: &str) {
    write_study(dir, head, tail, &workload(adjust));
}

/// Writes `fake.toml` as [`write_fake`] does, with `script` (given p, n, the replicate and the
/// implementation's name, it writes `$PP_LOG`) as both implementations' workload.
fn write_study(dir: &Path, head: &str, tail: &str, script: &str) {
    let command = |name: &str| {
        format!(
            "[[implementation]]\nname = \"{name}\"\ncommand = [\"sh\", \"-c\", '''{script}''', \"sh\", \"{{p}}\", \"{{n}}\", \"{{replicate}}\", \"{{impl}}\"]\n"
        )
    };
    let text = format!(
        "name = \"fake\"\ndesign = \"edges:1\"\n{head}\n[factors]\nn = \"32..512:log2\"\n\
         p = \"2..8:lin:7\"\n\n{tail}\n{}\n{}",
        command("a"),
        command("b")
    );
    write(dir, "fake.toml", &text);
}

/// The point n=32 p=2 takes 20% longer in its even replicates: the only noisy point.
const NOISY: &str =
    r#"if [ "$n,$p" = "32,2" ] && [ $(( r % 2 )) = 0 ]; then w=$(( w * 6 / 5 )); fi"#;

#[test]
fn precision_adds_runs_where_t_p_is_noisy_and_resumes_without_more() {
    let dir = scratch("study-precision");
    let _ = std::fs::remove_dir_all(dir.join("study-fake"));
    write_fake(
        &dir,
        "[precision]\ntarget = 0.03\nmax_replicates = 8\n",
        "[validate]\ngrid = { n = \"64,256\", p = \"3,6\" }\n",
        NOISY,
    );
    let out = run_study(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // 12 points per implementation: one run each, then a second everywhere (one run has no
    // spread), then the noisy corner alone up to 8 (alternating +-10% never gets within 3%).
    let made = rows(&dir);
    assert_eq!(made.len(), 2 * (12 * 2 + 6), "{made:?}");
    for name in ["a", "b"] {
        let noisy: Vec<&String> = made
            .iter()
            .filter(|r| {
                r.contains(&format!("impl={name} ")) && r.contains(" n=32 ") && r.contains(" p=2 ")
            })
            .collect();
        assert_eq!(noisy.len(), 8, "{noisy:?}");
    }
    assert!(
        stdout.contains("±3% (90%) reached at 11 of 12 points with 2 to 8 runs"),
        "{stdout}"
    );
    // The verdict twice: from the coefficients, then with each model's validated error.
    assert_eq!(stdout.matches("\nverdict: ").count(), 2, "{stdout}");
    assert!(stdout.contains("model error: a ±"), "{stdout}");
    // Between the points both ran, the difference model of a and b (the same workload) may
    // decide where it is tighter than the two models (docs/comparing.md).
    assert!(
        stdout.contains("difference model: ") && stdout.contains(" points both ran"),
        "{stdout}"
    );
    // Walls of 391 and 467 ns, four each: mean 429, sd 40.6.
    assert!(stdout.contains("most 9.5% at a n=32 p=2"), "{stdout}");
    // Resumed: nothing more to make, the same rows.
    let again = run_study(&dir);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{stdout}");
    assert!(stdout.contains(", 0 made now"), "{stdout}");
    assert_eq!(rows(&dir), made);
}

/// Every point's even replicates take 10% longer, and implementation b 2% longer than a: two
/// implementations the runs can hardly tell apart.
const CLOSE: &str = r#"if [ $(( r % 2 )) = 0 ]; then w=$(( w * 11 / 10 )); fi
if [ "$4" = b ]; then w=$(( w * 51 / 50 )); fi"#;

#[test]
fn decide_spends_its_budget_where_the_crossover_is_undecided_and_resumes() {
    let dir = scratch("study-decide");
    let _ = std::fs::remove_dir_all(dir.join("study-fake"));
    write_fake(
        &dir,
        "replicates = 2\n\n[decide]\nbudget = 5\nper_round = 2\n",
        "",
        CLOSE,
    );
    let out = run_study(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // 8 design points, 2 replicates, 2 implementations; then 5 chosen runs in rounds of 2, 2, 1.
    let made = rows(&dir);
    assert_eq!(made.len(), 8 * 2 * 2 + 5, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("2 runs to decide the crossover"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 runs to decide the crossover"),
        "{stderr}"
    );
    assert!(
        stdout.contains("decide:   5 of 5 runs chosen where they would most narrow"),
        "{stdout}"
    );
    // The chosen runs are rows of their own role (the models are fitted to them too).
    let chosen = made.iter().filter(|r| r.contains(" role=decide ")).count();
    assert_eq!(chosen, 5, "{made:?}");
    assert!(
        stdout.contains("study fake: 37 runs, 37 made now"),
        "{stdout}"
    );
    // Both models are fitted to them: 16 design runs each and the 5 chosen between them.
    let model_runs: usize = stdout
        .lines()
        .filter(|l| l.starts_with("a ") || l.starts_with("b "))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<usize>().ok())
        .sum();
    assert_eq!(model_runs, 37, "{stdout}");
    // Resumed: the budget is spent; nothing more is made.
    let again = run_study(&dir);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{stdout}");
    assert!(stdout.contains(", 0 made now"), "{stdout}");
    assert!(
        stdout.contains("(spent by an earlier start of the study)"),
        "{stdout}"
    );
    assert_eq!(rows(&dir), made);
}

/// Writes a text log to $PP_LOG for p = $1, n = $2 as a run with p threads on 2 cores would
/// record it: every thread works 10 n ns, of which its CPU clock grows 10 n * min(1, 2/p) (the
/// rest it waited for a core), then stops 7 ns later.
const SHARED: &str = r#"p=$1; n=$2; w=$(( 10 * n )); c=$w
if [ $p -gt 2 ]; then c=$(( w * 2 / p )); fi
{ printf 'pplog 1 p=%s n=%s\n' $p $n
  i=0; while [ $i -lt $p ]; do
    printf '0 %s start\n0 %s cpu 0 0\n0 %s work_begin\n%s %s work_end\n%s %s cpu %s %s\n%s %s stop\n' \
      $i $i $i $w $i $w $i $c $(( w - c )) $(( w + 7 )) $i
    i=$((i+1)); done
} > "$PP_LOG""#;

/// A `[whatif]` validation point is a prediction too: the summary says the T_p error there is
/// against pp whatif's, not a measurement.
#[test]
fn whatif_validation_runs_are_said_to_be_predicted() {
    let dir = scratch("study-whatif-validate");
    let _ = std::fs::remove_dir_all(dir.join("study-fake"));
    let command = format!(
        "[[implementation]]\nname = \"a\"\ncommand = [\"sh\", \"-c\", '''{SHARED}''', \"sh\", \"{{p}}\", \"{{n}}\"]\n"
    );
    let text = format!(
        "name = \"fake\"\ndesign = \"full\"\n\n[factors]\nn = \"32,64\"\np = \"1,2\"\n\n\
         [validate]\npoints = [{{ n = 48, p = 2 }}, {{ n = 48, p = 4 }}]\n\n\
         [whatif]\nwhere = \"p>2\"\n\n{command}"
    );
    write(&dir, "fake.toml", &text);
    let out = run_study(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(
            "a: validation runs predicted, not measured: 1 of 2 (the T_p error there is \
             against pp whatif's prediction)"
        ),
        "{stdout}"
    );
    // The model's own rows were all measured.
    assert!(!stdout.contains("a: predicted, not measured"), "{stdout}");
}

/// `[whatif] where = "p>2"`: the points beyond the 2 cores are run (oversubscribed) and their
/// rows are `pp whatif --demand cpu`'s predictions from the runs' logs — a processor per
/// thread: window 10 n * 2/p + 7 ns instead of 10 n + 7 — marked `predicted=demand:cpu`, and
/// the model and the summary say they rest on them.
#[test]
fn whatif_rows_predict_the_points_beyond_the_cores() {
    let dir = scratch("study-whatif");
    let _ = std::fs::remove_dir_all(dir.join("study-fake"));
    let command = format!(
        "[[implementation]]\nname = \"a\"\ncommand = [\"sh\", \"-c\", '''{SHARED}''', \"sh\", \"{{p}}\", \"{{n}}\"]\n"
    );
    let text = format!(
        "name = \"fake\"\ndesign = \"full\"\n\n[factors]\nn = \"32,64\"\np = \"1,2,4,8\"\n\n\
         [whatif]\nwhere = \"p>2\"\n\n{command}"
    );
    write(&dir, "fake.toml", &text);
    let out = run_study(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    let rows = rows(&dir);
    let window = |n: u64, p: u64| -> String {
        let row = rows
            .iter()
            .find(|r| r.contains(&format!(" n={n} ")) && r.contains(&format!(" p={p} ")))
            .unwrap_or_else(|| panic!("no row n={n} p={p} in {rows:?}"));
        row.split_whitespace()
            .find_map(|t| t.strip_prefix("wall="))
            .unwrap()
            .to_string()
    };
    for n in [32u64, 64] {
        // Measured: 10 n + 7 ns; predicted beyond 2 threads: 10 n * 2/p + 7.
        for (p, ns) in [
            (1, 10 * n + 7),
            (2, 10 * n + 7),
            (4, 5 * n + 7),
            (8, 10 * n / 4 + 7),
        ] {
            assert_eq!(window(n, p), format!("0.{ns:09}"), "n={n} p={p}");
        }
    }
    let predicted: Vec<&String> = rows.iter().filter(|r| r.contains("predicted=")).collect();
    assert_eq!(predicted.len(), 4, "{rows:?}");
    assert!(
        predicted
            .iter()
            .all(|r| r.contains("predicted=demand:cpu predicted_from=a-")
                && r.contains("role=model")),
        "{predicted:?}"
    );
    // The measured logs stay beside the predicted ones.
    let logs: Vec<String> = std::fs::read_dir(dir.join("study-fake/logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        logs.iter()
            .filter(|l| l.ends_with(".predicted.log"))
            .count(),
        4,
        "{logs:?}"
    );
    assert!(
        stdout.contains("a: predicted, not measured: 4 of 8 rows predicted (pp whatif demand:cpu; p from 4 to 8)"),
        "{stdout}"
    );
    let model = std::fs::read_to_string(dir.join("study-fake/a.toml")).unwrap();
    assert!(
        model.contains("[provenance.predicted]\nrows = 4\nof = 8\n"),
        "{model}"
    );
    // A condition on something that is not a factor is the study file's error.
    write(
        &dir,
        "bad.toml",
        &text.replace("where = \"p>2\"", "where = \"cores>2\""),
    );
    let out = lca()
        .current_dir(&dir)
        .args(["study", "bad.toml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("bad.toml:") && e.contains("'cores' is not a factor of the study (n, p)"),
        "{e}"
    );
}

/// Every thread computes its share of `solve` (32 µs·n in all, whatever p) and of `halo`
/// (1.6 µs·n·(p-1) in all): pc grows with p, in `halo` alone.
const HALO: &str = r#"p=$1; n=$2
s=$(( 1000000 * n / p )); h=$(( 50000 * n * (p - 1) / p )); e=$(( s + h ))
{ printf 'pplog 1 p=%s n=%s\n' $p $n
  i=0; while [ $i -lt $p ]; do
    printf '0 %s start\n0 %s region_begin 1 solve\n0 %s work_begin\n' $i $i $i
    printf '%s %s work_end\n%s %s region_end 1\n' $s $i $s $i
    printf '%s %s region_begin 2 halo\n%s %s work_begin\n' $s $i $s $i
    printf '%s %s work_end\n%s %s region_end 2\n%s %s stop\n' $e $i $e $i $e $i
    i=$((i+1)); done
} > "$PP_LOG""#;

#[test]
fn the_completeness_check_names_the_region_where_pc_grows() {
    // docs/modelling.md, "Completeness check": the study prints pc(p)/pc(p_min) and, from the
    // runs' logs, where the drifting pc grew.
    let dir = scratch("study-completeness");
    let _ = std::fs::remove_dir_all(dir.join("study-fake"));
    write_study(&dir, "", "", HALO);
    let out = run_study(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("completeness check: measured pc(p)/pc(p_min) per level"),
        "{stdout}"
    );
    // n = 32: pc is 32 + 1.6·(p-1) ms, 33.6 at p = 2 and 43.2 at p = 8 (ratio 1.286), all of
    // the growth in halo.
    assert!(stdout.contains("p=8 1.286 (drift)"), "{stdout}");
    assert!(
        stdout.contains(
            "impl=a n=32: pc +9.6 ms from p=2 to p=8, mostly in halo +9.6 ms (100%) \
             (pp --by region of 1 + 1 logs)"
        ),
        "{stdout}"
    );
}
