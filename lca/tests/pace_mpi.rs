//! PACE models of MPI programs (docs/pace.md#mpi-programs-messages): a template with a known
//! exchange of messages against its closed form on a hand-made machine file and on the
//! model's own network, the builder on synthetic MPI logs of a known pattern and size, the
//! patterns themselves, and the file's fields and errors.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use fit::Condition;
use lca::pace::file::{parse, write};
use lca::pace::messages::{Messages, Pattern, fit_bytes};
use lca::pace::model::Carrier;
use lca::pace::{BuildRequest, build};
use proptest::prelude::*;
use test_support::scratch;

/// A PACE file of MPI ranks: each iteration computes (`pc.mpi = coefficient * n`
/// processor-seconds over the run, split equally) and then exchanges `exchange`'s messages.
fn mpi_model(exchange: &str, hardware: &str, coefficient: f64) -> String {
    format!(
        r#"format = 1
kind = "pace"
name = "ranks"
factors = ["n", "p"]

[held]
iters = 10.0

[application]
iterations = "iters"
startup_s = 0.0
teardown_s = 0.0
replayed = 10

[[template]]
region = "mpi"
threads = "all"
activity = "work"
split = "equal"
{exchange}
[hardware]
cores = 8
speed = 1.0
fork_join_s = 0.0
handoff_s = 0.0
switch_s = 0.0
handoff_shared_s = 0.0
load = 0.0
{hardware}
[subtask]
format = 1
factors = ["n", "p"]

[[subtask.category]]
name = "pc.mpi"
formula = "n"

[[subtask.category.coefficient]]
name = "n"
value = {coefficient}
std_error = 0.0
half_width = 0.0
"#
    )
}

const ALL_TO_ALL: &str = r#"
[[template]]
region = "transpose"
threads = "all"
activity = "wait"
split = "equal"
messages = "all-to-all"
bytes = 16.0
bytes_powers = { n = 2.0, p = -2.0 }
"#;

/// A machine file whose `[mpi]` times a message of `b` bytes as 2000 ns + b / 0.5 ns.
const MACHINE: &str = r#"
[about]
host = "hand-made"
cores = 8
measured_at = 0
pp_version = "0.1.0"
[[copy.segments]]
from_bytes = 0
to_bytes = 1048576
alpha_ns = 1.0
beta_bytes_per_ns = 10.0
[copy]
points = []
[handoff]
reps = 1
min_ns = 100.0
median_ns = 100.0
cv = 0.0
flagged = false
[mpi]
library = "hand-made"
locality = "node"
points = []
[[mpi.segments]]
from_bytes = 0
to_bytes = 1048576
alpha_ns = 2000.0
beta_bytes_per_ns = 0.5
"#;

/// The closed form: 10 iterations of each rank's `1e-5 * n / 10 / p` s of computation, then
/// every rank's messages of `16 n^2 / p^2` bytes at once, each taking `transfer(bytes)` s.
fn closed_form(n: f64, p: f64, transfer: impl Fn(f64) -> f64) -> f64 {
    let work = 1e-5 * n / 10.0 / p;
    let bytes = 16.0 * n * n / (p * p);
    10.0 * (work + transfer(bytes))
}

#[test]
fn an_all_to_all_is_timed_by_the_machine_files_network() {
    let dir = scratch("pace-mpi-closed");
    let machine = dir.join("m.toml");
    std::fs::write(&machine, MACHINE).unwrap();
    let hardware = format!("machine = {:?}\n", machine.display().to_string());
    let with = parse("t.toml", &mpi_model(ALL_TO_ALL, &hardware, 1e-5)).unwrap();
    let without = parse("t.toml", &mpi_model("", &hardware, 1e-5)).unwrap();
    for (n, p) in [(64.0, 4.0), (64.0, 2.0), (128.0, 4.0), (256.0, 8.0)] {
        let e = with.evaluate(&[n, p]).unwrap();
        let expected = closed_form(n, p, |b| (2000.0 + b / 0.5) * 1e-9);
        // A few ns of ordering per iteration are the only difference.
        assert!(
            (e.t_p - expected).abs() < 200e-9,
            "n={n} p={p}: {} against {expected}",
            e.t_p
        );
        // Without the exchange, only the computation is left.
        let alone = without.evaluate(&[n, p]).unwrap().t_p;
        let compute = closed_form(n, p, |_| 0.0);
        assert!(
            (alone - compute).abs() < 200e-9,
            "{alone} against {compute}"
        );
        assert!(
            e.t_p - alone > 10.0 * 2000e-9,
            "the messages add their time"
        );
        // The categories still sum to p * T_p, and the transfers are communication.
        let total: f64 = e.categories.iter().map(|c| c.1).sum();
        assert!(
            (total - p * e.t_p).abs() < 1e-9 * p,
            "{total} vs {}",
            p * e.t_p
        );
        let cl = e.categories.iter().find(|c| c.0 == "cl").unwrap().1;
        assert!(cl > 0.0, "{:?}", e.categories);
    }
}

#[test]
fn without_a_machine_file_the_models_own_network_times_the_messages() {
    let hardware = "network_alpha_s = 1e-6\nnetwork_bytes_per_s = 1e9\n";
    let m = parse("t.toml", &mpi_model(ALL_TO_ALL, hardware, 1e-5)).unwrap();
    for (n, p) in [(64.0, 4.0), (128.0, 2.0)] {
        let t_p = m.evaluate(&[n, p]).unwrap().t_p;
        let expected = closed_form(n, p, |b| 1e-6 + b / 1e9);
        assert!((t_p - expected).abs() < 200e-9, "{t_p} against {expected}");
    }
    // A machine file given as well times them instead (lca pace predict --machine).
    let dir = scratch("pace-mpi-both");
    let machine = dir.join("m.toml");
    std::fs::write(&machine, MACHINE).unwrap();
    let mut swapped = m.clone();
    swapped.hardware.machine = Some(machine.display().to_string());
    let t_p = swapped.evaluate(&[64.0, 4.0]).unwrap().t_p;
    let expected = closed_form(64.0, 4.0, |b| (2000.0 + b / 0.5) * 1e-9);
    assert!((t_p - expected).abs() < 200e-9, "{t_p} against {expected}");
}

/// Processors that carry the messages (`messages = "processors"`): each rank's receive wait
/// ends at its peers' sends, and it then copies the `p - 1` messages it received one after the
/// other, each for the machine file's time. With a core per rank that is `p - 1` transfers an
/// iteration where the network takes one; past the cores the copies share them (two ranks a
/// core: both halves of every iteration take twice as long). The network carrier's transfers
/// take no core.
#[test]
fn processors_that_carry_the_messages_copy_them_on_their_cores() {
    let dir = scratch("pace-mpi-carrier");
    let machine = dir.join("m.toml");
    std::fs::write(&machine, MACHINE).unwrap();
    let transfer = |b: f64| (2000.0 + b / 0.5) * 1e-9;
    let hardware =
        |carrier: &str| format!("{carrier}machine = {:?}\n", machine.display().to_string());
    for cores in [8u32, 2] {
        let model = |carrier: &str| {
            let text = mpi_model(ALL_TO_ALL, &hardware(carrier), 1e-5)
                .replace("cores = 8", &format!("cores = {cores}"));
            parse("t.toml", &text).unwrap()
        };
        let copied = model("messages = \"processors\"\n");
        let flight = model("");
        assert_eq!(flight.hardware.carrier, Carrier::Network);
        assert_eq!(copied.hardware.carrier, Carrier::Processors);
        for (n, p) in [(64.0, 4.0), (256.0, 4.0), (128.0, 2.0)] {
            let bytes = 16.0 * n * n / (p * p);
            let work = 1e-5 * n / 10.0 / p;
            // Ranks a core: 1 with a core each, else ceil(p / cores), served at once.
            let k = (p / f64::from(cores)).ceil().max(1.0);
            let expected_copied = 10.0 * k * (work + (p - 1.0) * transfer(bytes));
            let expected_flight = 10.0 * (k * work + transfer(bytes));
            let c = copied.evaluate(&[n, p]).unwrap();
            let f = flight.evaluate(&[n, p]).unwrap();
            // A few ns of ordering per iteration are the only difference.
            assert!(
                (c.t_p - expected_copied).abs() < 200e-9 * k,
                "cores={cores} n={n} p={p}: copied {} against {expected_copied}",
                c.t_p
            );
            assert!(
                (f.t_p - expected_flight).abs() < 200e-9 * k,
                "cores={cores} n={n} p={p}: in flight {} against {expected_flight}",
                f.t_p
            );
            // The copies are communication, and the categories still sum to p * T_p.
            let total: f64 = c.categories.iter().map(|c| c.1).sum();
            assert!((total / (p * c.t_p) - 1.0).abs() < 1e-9, "{total}");
            let cl = c.categories.iter().find(|c| c.0 == "cl").unwrap().1;
            assert!(cl >= 10.0 * p * (p - 1.0) * transfer(bytes) * 0.999, "{cl}");
        }
    }
}

#[test]
fn the_message_fields_survive_a_round_trip() {
    let hardware = "network_alpha_s = 1.5e-6\nnetwork_bytes_per_s = 2e9\n";
    let text = mpi_model(ALL_TO_ALL, hardware, 1e-5);
    let m = parse("t.toml", &text).unwrap();
    let step = &m.template[1];
    assert_eq!(
        step.messages,
        Some(Messages {
            pattern: Pattern::AllToAll,
            bytes: 16.0,
            powers: BTreeMap::from([("n".to_string(), 2.0), ("p".to_string(), -2.0)]),
        })
    );
    let again = parse("w.toml", &write(&m)).unwrap();
    assert_eq!(again.template, m.template);
    assert_eq!(again.hardware, m.hardware);
    assert_eq!(write(&again), write(&m));
    // A file without `messages` has the network carry them, and writes none.
    assert_eq!(m.hardware.carrier, Carrier::Network);
    assert!(!write(&m).contains("\nmessages = \"network\""));
    let copied = parse(
        "t.toml",
        &mpi_model(
            ALL_TO_ALL,
            &format!("{hardware}messages = \"processors\"\n"),
            1e-5,
        ),
    )
    .unwrap();
    assert_eq!(copied.hardware.carrier, Carrier::Processors);
    let again = parse("w.toml", &write(&copied)).unwrap();
    assert_eq!(again.hardware, copied.hardware);
    assert_eq!(write(&again), write(&copied));
}

#[test]
fn bad_message_fields_are_one_line_errors_naming_file_line_and_field() {
    let good = mpi_model(
        ALL_TO_ALL,
        "network_alpha_s = 1e-6\nnetwork_bytes_per_s = 1e9\n",
        1e-5,
    );
    let cases = [
        (
            "messages = \"all-to-all\"",
            "messages = \"star\"",
            "t.toml:21: template 'transpose': messages: \"star\" is not a pattern (all-to-all, ring-up, ring-down, pairs)",
        ),
        (
            "bytes_powers = { n = 2.0, p = -2.0 }",
            "bytes_powers = { m = 2.0 }",
            "t.toml:21: template 'transpose': bytes_powers: 'm' is neither a factor nor a held column",
        ),
        (
            "bytes = 16.0",
            "bytes = -1.0",
            "template 'transpose': bytes: -1 is not a number >= 0",
        ),
        (
            "messages = \"all-to-all\"\n",
            "",
            "template 'transpose': bytes: given without messages",
        ),
        (
            "activity = \"wait\"\nsplit = \"equal\"\nmessages",
            "activity = \"work\"\nsplit = \"equal\"\nmessages",
            "template 'transpose': activity: an exchange of messages is \"wait\"",
        ),
        (
            "network_bytes_per_s = 1e9\n",
            "",
            "hardware.network_bytes_per_s: missing (network_alpha_s given)",
        ),
        (
            "network_bytes_per_s = 1e9",
            "network_bytes_per_s = 0.0",
            "hardware.network_bytes_per_s = 0: not a number > 0",
        ),
        (
            "network_bytes_per_s = 1e9",
            "network_bytes_per_s = 1e9\nmessages = \"pigeons\"",
            "hardware.messages = 'pigeons': expected network or processors",
        ),
    ];
    for (from, to, expected) in cases {
        let text = good.replacen(from, to, 1);
        assert_ne!(text, good, "{from}");
        let e = parse("t.toml", &text).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains(expected), "{e}\nexpected: {expected}");
        assert!(e.starts_with("t.toml:"), "{e}");
    }
}

/// The MPI tracer's log of a ring (`r` sends `8 n` bytes to `r + 1`, receives from `r - 1`)
/// over `iters` iterations: each rank computes `10 n / p` ns, sends, and waits; its message
/// arrives `5 µs + bytes / (1 byte/ns)` after its send, all ranks in step.
fn ring_log(n: u64, p: u32, iters: u64) -> String {
    exchanges_log(
        &format!("impl=ring n={n} iters={iters}"),
        p,
        iters,
        &[(10 * n, true, 8 * n)],
    )
}

/// The MPI tracer's log of `iters` iterations of `exchanges`, each `(work, up, bytes)`: every
/// rank computes `work / p` ns, then sends `bytes` one way round the ring (`up`: to `r + 1`)
/// and waits for the message from the other side, which arrives `5 µs + 1 ns a byte` after its
/// send, all ranks in step. `params` follows `p` in the header.
fn exchanges_log(params: &str, p: u32, iters: u64, exchanges: &[(u64, bool, u64)]) -> String {
    let mut log = format!("pplog 1 p={p} {params}\n");
    let mut events: Vec<(u64, u32, String)> = Vec::new();
    let mut t = 1000;
    for r in 0..p {
        events.push((0, r, "start".into()));
        events.push((0, r, "region_begin 0 mpi".into()));
        events.push((0, r, "work_begin".into()));
    }
    for _ in 0..iters {
        for &(work, up, bytes) in exchanges {
            t += work / u64::from(p);
            for r in 0..p {
                let to = if up { (r + 1) % p } else { (r + p - 1) % p };
                events.push((t, r, "work_end".into()));
                events.push((t, r, format!("send {to} 0 {bytes}")));
                events.push((t + 10, r, "wait_begin recv".into()));
            }
            t += 5000 + bytes;
            for r in 0..p {
                let from = if up { (r + p - 1) % p } else { (r + 1) % p };
                events.push((t, r, format!("recv {from} 0 {bytes}")));
                events.push((t, r, "wait_end recv".into()));
                events.push((t + 10, r, "work_begin".into()));
            }
            t += 10;
        }
    }
    for r in 0..p {
        events.push((t + 100, r, "work_end".into()));
        events.push((t + 200, r, "region_end 0".into()));
        events.push((t + 200, r, "stop".into()));
    }
    events.sort_by_key(|e| (e.0, e.1));
    for (t, r, what) in events {
        let _ = writeln!(log, "{t} {r} {what}");
    }
    log
}

#[test]
fn the_builder_recovers_the_pattern_the_sizes_and_the_network_from_mpi_logs() {
    let dir = scratch("pace-mpi-ring");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    // p = 1 too: its one rank sends to (0 + 1) % 1, itself, which no pattern sends at p = 1
    // (the builder refused such logs: "its messages (0->0) follow none of the patterns").
    for n in [1000u64, 3000] {
        for p in 1u32..=4 {
            std::fs::write(
                logs.join(format!("ring-model-n{n}-p{p}-r1.log")),
                ring_log(n, p, 12),
            )
            .unwrap();
        }
    }
    let m = build(&BuildRequest {
        study: dir.clone(),
        implementation: "ring".into(),
        conditions: Vec::new(),
        cores: 8,
        replayed: 6,
        core_switch_s: None,
    })
    .unwrap();
    assert_eq!(m.template.len(), 2, "{:?}", m.template);
    assert_eq!(m.template[0].region, "mpi");
    assert_eq!(m.template[0].messages, None);
    // At p = 2 every pattern is the same; p = 3 and 4 tell the ring from the rest.
    assert_eq!(
        m.template[1].messages,
        Some(Messages {
            pattern: Pattern::RingUp,
            bytes: 8.0,
            powers: BTreeMap::from([("n".to_string(), 1.0)]),
        })
    );
    assert_eq!(m.application.iterations, "iters");
    // Each wait lasted 5 µs + 1 ns a byte after its message's send, less the 10 ns between
    // the send and the wait's begin.
    let net = m.hardware.network.expect("a network from the logs");
    assert!((net.bytes_per_s - 1e9).abs() < 1e3, "{net:?}");
    assert!((net.alpha_s - 4.99e-6).abs() < 1e-12, "{net:?}");
    // With a core per rank and one message an exchange to each rank, the runs cannot tell the
    // carriers apart: the processors are kept, and the note says why.
    assert_eq!(m.hardware.carrier, Carrier::Processors);
    assert!(
        m.notes
            .iter()
            .any(|n| n.starts_with("hardware.messages: no training run")
                && n.contains("processors kept")),
        "{:?}",
        m.notes
    );
    // The model's T_p at a run it was built from.
    let t_p = m.evaluate(&[3000.0, 4.0]).unwrap().t_p;
    let measured = 12.0 * (7500.0 + 10.0 + 5000.0 + 24000.0) * 1e-9;
    assert!(
        (t_p / measured - 1.0).abs() < 0.05,
        "{t_p} against {measured}"
    );
    // And on one rank, whose message to itself the ring's template sends too.
    let t_p = m.evaluate(&[3000.0, 1.0]).unwrap().t_p;
    let measured = 12.0 * (30000.0 + 10.0 + 5000.0 + 24000.0) * 1e-9;
    assert!(
        (t_p / measured - 1.0).abs() < 0.05,
        "{t_p} against {measured}"
    );
}

#[test]
fn messages_that_follow_no_pattern_are_refused_in_one_line() {
    let dir = scratch("pace-mpi-odd");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for n in [1000u64, 3000] {
        // Rank 0 sends to rank 2 and rank 2 to rank 0: not a ring, not all-to-all, not pairs.
        let text = ring_log(n, 3, 4)
            .replace("0 send 1 0", "0 send 2 0")
            .replace("1 send 2 0", "1 send 0 0")
            .replace("impl=ring", "impl=odd");
        std::fs::write(logs.join(format!("odd-model-n{n}-p3-r1.log")), text).unwrap();
    }
    let e = build(&BuildRequest {
        study: dir.clone(),
        implementation: "odd".into(),
        conditions: Vec::new(),
        cores: 8,
        replayed: 6,
        core_switch_s: None,
    })
    .unwrap_err();
    let e = format!("{e:#}");
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.contains("exchange 1 of the ranks: its messages (0->2 1->0 2->0) follow none of the patterns all-to-all, ring-up, ring-down, pairs"),
        "{e}"
    );
}

#[test]
fn the_patterns_at_small_p() {
    assert_eq!(Pattern::AllToAll.to(1, 4), vec![0, 2, 3]);
    assert_eq!(Pattern::RingUp.to(3, 4), vec![0]);
    assert_eq!(Pattern::RingDown.to(0, 4), vec![3]);
    assert_eq!(Pattern::Pairs.to(2, 3), Vec::<u32>::new());
    assert_eq!(Pattern::Pairs.from(1, 4), vec![0]);
    // At p = 2 they are one exchange: 0 <-> 1.
    assert_eq!(Pattern::fitting(&[(0, 1), (1, 0)], 2), 0b1111);
    assert_eq!(Pattern::fitting(&[(0, 1), (1, 2), (2, 0)], 3), 0b0010);
    assert_eq!(Pattern::fitting(&[(0, 1)], 3), 0);
    // A ring of one rank sends to itself ((0 + 1) mod 1 = 0), as the program's
    // MPI_Sendrecv to (r + 1) % p does; beside the messages of a ring of three ranks such a
    // message is a copy within the rank and changes nothing.
    assert_eq!(Pattern::RingUp.to(0, 1), vec![0]);
    assert_eq!(Pattern::RingDown.from(0, 1), vec![0]);
    assert_eq!(Pattern::AllToAll.count(1) + Pattern::Pairs.count(1), 0);
    assert_eq!(Pattern::fitting(&[(0, 0)], 1), 0b0110);
    assert_eq!(
        Pattern::fitting(&[(0, 1), (1, 1), (1, 2), (2, 0)], 3),
        0b0010
    );
}

proptest! {
    /// Every pattern's messages, as `to` gives them, are what `from` gives back, their count
    /// is `count`, and `fitting` recognises them.
    #[test]
    fn to_from_and_count_agree(p in 1u32..40, which in 0usize..4) {
        let pattern = Pattern::ALL[which];
        let pairs: Vec<(u32, u32)> = (0..p)
            .flat_map(|r| pattern.to(r, p).into_iter().map(move |d| (r, d)))
            .collect();
        prop_assert_eq!(pairs.len() as u64, pattern.count(p));
        for r in 0..p {
            let from: Vec<u32> = pairs.iter().filter(|x| x.1 == r).map(|x| x.0).collect();
            prop_assert_eq!(pattern.from(r, p), from);
            // Only a ring of one rank sends to itself.
            let ring = matches!(pattern, Pattern::RingUp | Pattern::RingDown);
            prop_assert_eq!(pattern.to(r, p).contains(&r), ring && p == 1);
        }
        if !pairs.is_empty() {
            prop_assert!(Pattern::fitting(&pairs, p) & (1 << which) != 0);
        }
    }

    /// A size that is a whole constant times whole powers of the factors is recovered from
    /// its values on a 3 x 3 grid.
    #[test]
    fn fit_bytes_recovers_a_monomial(c in 1u32..64, a in -3i32..4, b in -3i32..4) {
        let names = vec!["n".to_string(), "p".to_string()];
        let mut points = Vec::new();
        for n in [64.0f64, 128.0, 512.0] {
            for p in [2.0f64, 3.0, 8.0] {
                points.push((vec![n, p], f64::from(c) * n.powi(a) * p.powi(b)));
            }
        }
        let (k, powers) = fit_bytes(&names, &points).expect("a monomial");
        prop_assert!((k - f64::from(c)).abs() < 1e-9 * f64::from(c), "{}", k);
        prop_assert_eq!(powers.get("n").copied().unwrap_or(0.0), f64::from(a));
        prop_assert_eq!(powers.get("p").copied().unwrap_or(0.0), f64::from(b));
    }
}

#[test]
fn logs_without_their_parameters_take_them_from_the_studys_datafile_row() {
    // `pp run` under `lca study` writes only p in the header: impl, the factors, the role and
    // the replicate are in the datafile's row of the run, whose stem names the log.
    let dir = scratch("pace-mpi-rows");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let mut rows = String::from("# the study's datafile\n");
    for n in [1000u64, 3000] {
        for p in 2u32..=4 {
            let text = ring_log(n, p, 12).replace(&format!(" impl=ring n={n} iters=12"), "");
            assert!(text.starts_with(&format!("pplog 1 p={p}\n")));
            std::fs::write(logs.join(format!("ring-model-n{n}-p{p}-r1.log")), text).unwrap();
            let _ = writeln!(
                rows,
                "impl=ring p={p} wall=0.001 pc=0.001 n={n} role=model replicate=1"
            );
        }
    }
    // A row of another implementation at the same point names no log of this one.
    rows += "impl=other p=2 wall=0.001 pc=0.001 n=1000 role=model replicate=1\n";
    std::fs::write(dir.join("ring.dat"), rows).unwrap();
    let m = build(&BuildRequest {
        study: dir.clone(),
        implementation: "ring".into(),
        conditions: Condition::parse_all(&["role=model".to_string()]).unwrap(),
        cores: 8,
        replayed: 6,
        core_switch_s: None,
    })
    .unwrap();
    assert_eq!(m.factors, vec!["n".to_string(), "p".to_string()]);
    assert_eq!(m.ranges, vec![(1000.0, 3000.0), (2.0, 4.0)]);
    assert_eq!(m.application.iterations, "12");
    assert_eq!(
        m.template[1].messages.as_ref().map(|x| x.formula()),
        Some("8 * n^1".to_string())
    );
    // Without the datafile, they are no implementation's.
    std::fs::remove_file(dir.join("ring.dat")).unwrap();
    let e = build(&BuildRequest {
        study: dir.clone(),
        implementation: "ring".into(),
        conditions: Vec::new(),
        cores: 8,
        replayed: 6,
        core_switch_s: None,
    })
    .unwrap_err();
    assert!(format!("{e:#}").contains("0 log(s) of impl=ring"), "{e:#}");
}

#[test]
fn ranks_that_only_use_collectives_are_refused_in_one_line() {
    // fft2d's default transpose, MPI_Alltoall: the tracer records `coll alltoall` and a
    // barrier wait, no send or recv.
    let dir = scratch("pace-mpi-coll");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for n in [1000u64, 3000] {
        let mut log = format!("pplog 1 p=2 impl=a2a n={n}\n");
        for r in 0..2 {
            let _ = writeln!(
                log,
                "0 {r} start\n0 {r} region_begin 0 mpi\n1 {r} work_begin"
            );
        }
        let mut t = 10;
        for _ in 0..5 {
            for r in 0..2 {
                let _ = writeln!(
                    log,
                    "{t} {r} work_end\n{t} {r} coll alltoall {n}\n{} {r} wait_begin barrier alltoall",
                    t + 1
                );
            }
            t += n;
            for r in 0..2 {
                let _ = writeln!(
                    log,
                    "{t} {r} wait_end barrier alltoall\n{} {r} work_begin",
                    t + 1
                );
            }
            t += 10;
        }
        for r in 0..2 {
            let _ = writeln!(log, "{t} {r} work_end\n{t} {r} region_end 0\n{t} {r} stop");
        }
        std::fs::write(logs.join(format!("a2a-model-n{n}-p2-r1.log")), log).unwrap();
    }
    let e = build(&BuildRequest {
        study: dir.clone(),
        implementation: "a2a".into(),
        conditions: Vec::new(),
        cores: 8,
        replayed: 6,
        core_switch_s: None,
    })
    .unwrap_err();
    let e = format!("{e:#}");
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.contains("its ranks communicate by collectives (10 alltoall) and exchange no point-to-point message"),
        "{e}"
    );
}

#[test]
fn the_builder_reads_the_mpi_tracers_own_logs() {
    // `pp run --param impl=fft2d --param n=N -- mpirun --mca btl self,vader -np P
    // examples/mpi/build/fft2d -n N --iters 20 --transpose p2p`, n = 64, 128, p = 2, 4
    // (2026-11-28, the 2-core VM): each rank's Isends, its own block's copy, then one
    // MPI_Waitall; an MPI_Barrier before the loop and an MPI_Gather after it.
    let study = test_support::repository().join("lca/tests/data/pace/mpi-logs");
    let m = build(&BuildRequest {
        study,
        implementation: "fft2d".into(),
        conditions: Vec::new(),
        cores: 2,
        replayed: 6,
        core_switch_s: None,
    })
    .unwrap();
    assert_eq!(m.template.len(), 2);
    assert_eq!(m.template[0].region, "mpi");
    // The transpose: to every other rank a block of n/p by n/p complex numbers (16 bytes).
    assert_eq!(
        m.template[1].messages,
        Some(Messages {
            pattern: Pattern::AllToAll,
            bytes: 16.0,
            powers: BTreeMap::from([("n".to_string(), 2.0), ("p".to_string(), -2.0)]),
        })
    );
    assert_eq!(m.application.iterations, "20");
    assert!(m.hardware.network.is_some());
    // Runs past the cores tell the carriers apart: both are fitted, the closer kept, and the
    // note gives both fits.
    let kept = format!("{} kept", m.hardware.carrier.name());
    assert!(
        m.notes
            .iter()
            .any(|n| n.starts_with("hardware.messages: each message copied")
                && n.contains("in flight on the network")
                && n.ends_with(&kept)),
        "{:?}",
        m.notes
    );
    // The network swap: every message takes the TCP file's time instead of shared memory's,
    // which are longer at these sizes (4 KiB to 64 KiB).
    let data = test_support::repository().join("lca/tests/data/pace");
    let at = |machine: &str| {
        let mut swapped = m.clone();
        swapped.hardware.machine = Some(data.join(machine).display().to_string());
        swapped.evaluate(&[128.0, 4.0]).unwrap().t_p
    };
    let (shm, tcp) = (at("mpi-shm-machine.toml"), at("mpi-tcp-machine.toml"));
    assert!(tcp > shm, "{tcp} <= {shm}");
}

#[test]
fn lca_pace_predict_says_which_network_timed_the_messages() {
    let dir = scratch("pace-mpi-cli");
    let model = dir.join("ranks.toml");
    let hardware = "network_alpha_s = 1e-6\nnetwork_bytes_per_s = 1e9\n";
    std::fs::write(&model, mpi_model(ALL_TO_ALL, hardware, 1e-5)).unwrap();
    let machine = dir.join("m.toml");
    std::fs::write(&machine, MACHINE).unwrap();
    let said = |extra: &[&std::ffi::OsStr]| {
        let out = test_support::lca!()
            .args(["pace", "predict"])
            .arg(&model)
            .args(["--at", "n=64,p=4"])
            .args(extra)
            .output()
            .unwrap();
        test_support::succeeded("lca pace predict", &out);
        String::from_utf8(out.stdout).unwrap()
    };
    let own = said(&[]);
    assert!(
        own.contains("messages timed by the model's network, fitted from its logs: 1.00 us + bytes / 1000.0 MB/s"),
        "{own}"
    );
    let swapped = said(&["--machine".as_ref(), machine.as_os_str()]);
    assert!(
        swapped.contains(&format!(
            "messages timed by {}'s [mpi], in flight on the network",
            machine.display()
        )),
        "{swapped}"
    );
    // And what carries them, where the processors do.
    std::fs::write(
        &model,
        mpi_model(
            ALL_TO_ALL,
            &format!("{hardware}messages = \"processors\"\n"),
            1e-5,
        ),
    )
    .unwrap();
    let copied = said(&["--machine".as_ref(), machine.as_os_str()]);
    assert!(
        copied.contains("'s [mpi], copied by the receiving ranks' processors"),
        "{copied}"
    );
}

/// A halo exchange's log: each iteration, `10 n / p` ns of computation, a ring-up exchange of
/// `8 n` bytes, `30 n / p` ns, a ring-down exchange of `4 n` bytes; each message arrives
/// `5 µs + 1 ns a byte` after its send, all ranks in step.
fn halo_log(n: u64, p: u32, iters: u64) -> String {
    exchanges_log(
        &format!("impl=halo n={n}"),
        p,
        iters,
        &[(10 * n, true, 8 * n), (30 * n, false, 4 * n)],
    )
}

#[test]
fn two_exchanges_an_iteration_each_get_the_computation_before_them() {
    let dir = scratch("pace-mpi-halo");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for n in [1000u64, 3000] {
        for p in 2u32..=4 {
            std::fs::write(
                logs.join(format!("halo-model-n{n}-p{p}-r1.log")),
                halo_log(n, p, 12),
            )
            .unwrap();
        }
    }
    let m = build(&BuildRequest {
        study: dir.clone(),
        implementation: "halo".into(),
        conditions: Vec::new(),
        cores: 8,
        replayed: 6,
        core_switch_s: None,
    })
    .unwrap();
    let steps: Vec<(&str, Option<Pattern>, Option<String>)> = m
        .template
        .iter()
        .map(|s| {
            (
                s.region.as_str(),
                s.messages.as_ref().map(|x| x.pattern),
                s.messages.as_ref().map(|x| x.formula()),
            )
        })
        .collect();
    assert_eq!(
        steps,
        vec![
            ("mpi.1", None, None),
            ("exchange.1", Some(Pattern::RingUp), Some("8 * n^1".into())),
            ("mpi.2", None, None),
            (
                "exchange.2",
                Some(Pattern::RingDown),
                Some("4 * n^1".into())
            ),
        ]
    );
    assert_eq!(m.application.iterations, "12");
    // The computation before each exchange, a quarter and three quarters of it, in the
    // replay: rank 0's first `work` ends 10 n / p after it began, its second 30 n / p.
    let point = [3000.0, 4.0];
    let shape = m.shape(&point).unwrap();
    let demands = m.demands(&point, &shape);
    let (a, b) = (demands.per_iteration_s[0], demands.per_iteration_s[2]);
    assert!((b / a - 3.0).abs() < 0.05, "{a} {b}");
    let t_p = m.evaluate(&point).unwrap().t_p;
    let measured = 12.0 * (30000.0 + 5000.0 + 24000.0 + 5000.0 + 12000.0 + 40.0) * 1e-9;
    assert!(
        (t_p / measured - 1.0).abs() < 0.05,
        "{t_p} against {measured}"
    );
}

#[test]
fn a_point_whose_messages_have_no_size_is_outside_the_models_domain() {
    let m = parse("t.toml", &mpi_model(ALL_TO_ALL, "", 1e-5)).unwrap();
    // 16 * n^2 / p^2 bytes: 10^20 at n = 10^10, p = 4.
    let e = m.evaluate(&[1e10, 4.0]).unwrap_err();
    assert_eq!(
        e,
        "template 'transpose': its messages' size, 16 * n^2 * p^-2 bytes, is not a number of bytes here"
    );
    assert!(m.evaluate(&[64.0, 4.0]).is_ok());

    // An exponent the fuzzer wrote (10^111) is quoted in its short form, not in 112 digits.
    let text = mpi_model(ALL_TO_ALL, "", 1e-5).replace("n = 2.0, p = -2.0", "n = 1e111, p = -2.0");
    let e = parse("t.toml", &text)
        .unwrap()
        .evaluate(&[64.0, 4.0])
        .unwrap_err();
    assert_eq!(
        e,
        "template 'transpose': its messages' size, 16 * n^1e111 * p^-2 bytes, is not a number of bytes here"
    );
}

/// The median wall of a study datafile's `replicates` rows of `imp` at `n`, `p`.
fn median_wall(rows: &str, imp: &str, n: f64, p: f64, replicates: usize) -> f64 {
    let mut walls: Vec<f64> = rows
        .lines()
        .filter(|l| l.contains(&format!("impl={imp} p={p} ")))
        .filter(|l| l.contains(&format!(" n={n} ")))
        .map(|l| {
            l.split_whitespace()
                .find_map(|f| f.strip_prefix("wall="))
                .unwrap()
                .parse::<f64>()
                .unwrap()
        })
        .collect();
    assert_eq!(walls.len(), replicates, "n={n} p={p}");
    walls.sort_by(f64::total_cmp);
    walls[replicates / 2]
}

/// The quiet studies of docs/results.md#pace-for-mpi-on-a-quiet-machine-the-processors-copy-the-messages:
/// each model (built from one transport's runs) predicted with the other transport's machine
/// file, against that transport's measured medians, gives the mean |error| published there;
/// and with the network carrying the messages instead, the swap moves the `p = 4` points far
/// less than the runs did.
#[test]
fn the_quiet_studies_network_swaps_give_the_published_errors() {
    let data = test_support::repository().join("lca/tests/data/pace/mpi-quiet");
    let points = [
        (64.0, 2.0),
        (64.0, 4.0),
        (128.0, 2.0),
        (128.0, 4.0),
        (256.0, 2.0),
        (256.0, 4.0),
    ];
    for (study, src, dst, published) in [
        (1, "shm", "tcp", 11.8),
        (1, "tcp", "shm", 5.4),
        (2, "shm", "tcp", 14.9),
        (2, "tcp", "shm", 9.47),
    ] {
        let text = std::fs::read_to_string(data.join(format!("{src}-pace-{study}.toml"))).unwrap();
        let mut m = parse("m.toml", &text).unwrap();
        assert_eq!(m.hardware.carrier, Carrier::Processors);
        m.hardware.machine = Some(
            data.join(format!("{dst}-machine-{study}.toml"))
                .display()
                .to_string(),
        );
        let rows = std::fs::read_to_string(data.join(format!("study-{study}.dat"))).unwrap();
        let median = |n: f64, p: f64| median_wall(&rows, dst, n, p, 9);
        let mean = points
            .iter()
            .map(|&(n, p)| {
                let predicted = m.evaluate(&[n, p]).unwrap().t_p;
                (predicted / median(n, p) - 1.0).abs() * 100.0
            })
            .sum::<f64>()
            / points.len() as f64;
        assert!(
            (mean - published).abs() < 0.06,
            "study {study} {src} -> {dst}: {mean:.2}% against {published}%"
        );
        // In flight, the swap's ratio at n = 64, p = 4 (4 KiB messages) stays near 1.
        let ratio = |m: &lca::pace::PaceModel| {
            let mut own = m.clone();
            own.hardware.machine = Some(
                data.join(format!("{src}-machine-{study}.toml"))
                    .display()
                    .to_string(),
            );
            m.evaluate(&[64.0, 4.0]).unwrap().t_p / own.evaluate(&[64.0, 4.0]).unwrap().t_p
        };
        let copied = ratio(&m);
        m.hardware.carrier = Carrier::Network;
        let flight = ratio(&m);
        assert!(
            (flight - 1.0).abs() < (copied - 1.0).abs() / 2.0,
            "study {study} {src} -> {dst}: in flight {flight:.3}, copied {copied:.3}"
        );
    }
}

/// The quiet studies' shared-memory models swapped to one core, against the same points run
/// under `taskset -c 0` (docs/results.md#pace-for-mpi-on-one-core-ranks-that-poll): two ranks
/// poll, and only the waits that spin with the rendezvous follow their lockstep at n = 64 and
/// 128; blocking waits predict them 10 to 30 times too fast.
#[test]
fn the_one_core_swap_with_ranks_that_poll_gives_the_published_errors() {
    let data = test_support::repository().join("lca/tests/data/pace/mpi-quiet");
    let rows = std::fs::read_to_string(data.join("taskset.dat")).unwrap();
    let median = |n: f64, p: f64| median_wall(&rows, "shm", n, p, 3);
    for (study, published) in [(1, [-0.15, -1.36, 57.17]), (2, [-0.12, -1.34, 57.21])] {
        let text = std::fs::read_to_string(data.join(format!("shm-pace-{study}.toml"))).unwrap();
        let mut m = parse("m.toml", &text).unwrap();
        m.hardware.cores = 1;
        let blocking = m.clone();
        m.hardware.sharing = lca::pace::model::CoreSharing::RunToBlock;
        m.hardware.slice_s = 0.004;
        m.hardware.waits = pp::whatif::Waits::Spin;
        m.hardware.rendezvous_bytes = Some(4096);
        // The layer as a person would write it reads back the same.
        let again = parse("w.toml", &write(&m)).unwrap();
        assert_eq!(again.hardware, m.hardware);
        for (k, n) in [64.0, 128.0, 256.0].into_iter().enumerate() {
            let measured = median(n, 2.0);
            let error = (m.evaluate(&[n, 2.0]).unwrap().t_p / measured - 1.0) * 100.0;
            assert!(
                (error - published[k]).abs() < 0.06,
                "study {study} n = {n}: {error:.2}% against {}%",
                published[k]
            );
            let blocked = blocking.evaluate(&[n, 2.0]).unwrap().t_p / measured;
            if n < 200.0 {
                assert!(
                    blocked < 0.12,
                    "study {study} n = {n}: blocking {blocked:.3}"
                );
            }
        }
    }
}

#[test]
fn waits_that_spin_and_a_rendezvous_in_the_hardware_layer_read_back_and_refuse_nonsense() {
    let hardware = "network_alpha_s = 1e-6\nnetwork_bytes_per_s = 1e9\n";
    let good = mpi_model(ALL_TO_ALL, hardware, 1e-5);
    let m = parse("t.toml", &good).unwrap();
    assert_eq!(m.hardware.waits, pp::whatif::Waits::Block);
    assert!(!write(&m).contains("waits"), "{}", write(&m));
    let spin = good.replacen(
        "network_bytes_per_s = 1e9\n",
        "network_bytes_per_s = 1e9\nsharing = \"run-to-block\"\nwaits = \"spin\"\nrendezvous_bytes = 4096\n",
        1,
    );
    let s = parse("t.toml", &spin).unwrap();
    assert_eq!(s.hardware.waits, pp::whatif::Waits::Spin);
    assert_eq!(s.hardware.rendezvous_bytes, Some(4096));
    assert_eq!(
        s.hardware.whatif_sharing(),
        pp::whatif::Sharing::RunToBlock {
            slice_ns: 3e6,
            switch_ns: 0.0,
            wake_ns: Some(0.0),
            waits: pp::whatif::Waits::Spin,
            rendezvous_bytes: Some(4096),
        }
    );
    let again = parse("w.toml", &write(&s)).unwrap();
    assert_eq!(again.hardware, s.hardware);
    assert_eq!(write(&again), write(&s));
    for (from, to, expected) in [
        (
            "network_bytes_per_s = 1e9\n",
            "network_bytes_per_s = 1e9\nwaits = \"spin\"\n",
            "hardware.waits = 'spin': needs sharing = \"run-to-block\"",
        ),
        (
            "network_bytes_per_s = 1e9\n",
            "network_bytes_per_s = 1e9\nsharing = \"run-to-block\"\nwaits = \"poll\"\n",
            "hardware.waits = 'poll': expected block or spin",
        ),
        (
            "network_bytes_per_s = 1e9\n",
            "network_bytes_per_s = 1e9\nsharing = \"run-to-block\"\nrendezvous_bytes = 4096\n",
            "hardware.rendezvous_bytes: needs waits = \"spin\"",
        ),
    ] {
        let text = good.replacen(from, to, 1);
        let e = parse("t.toml", &text).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains(expected), "{e}\nexpected: {expected}");
        assert!(e.starts_with("t.toml:"), "{e}");
    }
}

#[test]
fn lca_pace_predict_swaps_the_waits_the_rendezvous_and_the_slice() {
    let model = test_support::repository().join("lca/tests/data/pace/mpi-quiet/shm-pace-1.toml");
    let run = |extra: &[&str]| {
        test_support::lca!()
            .args(["pace", "predict"])
            .arg(&model)
            .args(["--at", "n=64,p=2", "--cores", "1"])
            .args(extra)
            .output()
            .unwrap()
    };
    let t_p = |out: &std::process::Output| -> f64 {
        test_support::succeeded("lca pace predict", out);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.lines()
            .nth(1)
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap()
    };
    let blocking = t_p(&run(&[]));
    let spinning = t_p(&run(&["--waits", "spin", "--slice-us", "4000"]));
    let rendezvous = t_p(&run(&[
        "--waits",
        "spin",
        "--slice-us",
        "4000",
        "--rendezvous-bytes",
        "4096",
    ]));
    // docs/results.md#pace-for-mpi-on-one-core-ranks-that-poll: 0.051, 0.809 and 1.610 s.
    assert!((blocking - 0.0512).abs() < 0.001, "{blocking}");
    assert!((spinning - 0.8086).abs() < 0.001, "{spinning}");
    assert!((rendezvous - 1.6098).abs() < 0.001, "{rendezvous}");
    for (args, expected) in [
        (
            vec!["--rendezvous-bytes", "4096"],
            "--rendezvous-bytes: needs waits that spin (--waits spin)",
        ),
        (
            vec!["--waits", "spin", "--slice-us", "0"],
            "--slice-us 0: a number of µs from 0.001 to 1e9",
        ),
    ] {
        let out = run(&args);
        assert!(!out.status.success(), "{args:?}");
        let e = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(e.contains(expected), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    }
}

/// A replay whose times pass the log's clock says so, even where it also stopped short: the
/// fuzzer's model (fuzz/regressions) with a subtask of 4.3·10⁹ s, spinning waits and a
/// rendezvous said "a dependency was never met" at p = 4 on 2 cores.
#[test]
fn a_replay_past_the_logs_clock_says_so_before_anything_else() {
    let text = include_str!("../../fuzz/regressions/pace-file.spin-rendezvous-huge-work-hang.toml");
    let m = parse("hang.toml", text).unwrap();
    for point in [[64.0, 2.0], [256.0, 3.0], [256.0, 4.0]] {
        let e = m.evaluate(&point).unwrap_err();
        assert!(
            e.starts_with("the replay: the predicted run would end ")
                && e.contains("past the log's clock"),
            "{point:?}: {e}"
        );
    }
}
