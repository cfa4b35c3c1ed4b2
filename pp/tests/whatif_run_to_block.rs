//! `pp whatif --sharing run-to-block` (docs/whatif.md#the-sharing-rule) on hand-written logs
//! with answers worked out by hand, each different under processor sharing; its invariants
//! over random logs; its options' errors.

use pp::whatif::{RunToBlockSettings, Sharing, Target, Waits, parse_groups};
use proptest::prelude::*;
use test_support::scratch;

mod log_support;
use log_support::activity::{FIGURE_1, attribution, random_log, replay, time_of};

fn target(spec: &str, sharing: Sharing) -> Target {
    Target {
        groups: parse_groups(spec).unwrap(),
        sharing,
        ..Target::default()
    }
}

fn run_to_block(spec: &str, slice_ns: f64, switch_ns: f64) -> Target {
    target(
        spec,
        Sharing::RunToBlock {
            slice_ns,
            switch_ns,
            wake_ns: None,
            waits: Waits::Block,
            rendezvous_bytes: None,
        },
    )
}

/// Run to block with waits that spin (docs/whatif.md#waits-that-spin).
fn spinning(spec: &str, slice_ns: f64, switch_ns: f64) -> Target {
    target(
        spec,
        Sharing::RunToBlock {
            slice_ns,
            switch_ns,
            wake_ns: None,
            waits: Waits::Spin,
            rendezvous_bytes: None,
        },
    )
}

/// Thread 0 computes 0.9 ms and waits for thread 1's message, which thread 1 sends after
/// 1.9 ms of computation and 0.5 ms before its end; the message arrives 1 ns after it is sent.
const SPIN: &str = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
900000 0 work_end
900000 0 wait_begin recv
1900000 1 send 0 0 8
1900001 0 recv 1 0 8
1900001 0 wait_end recv
1900001 0 stop
2400000 1 work_end
2400000 1 stop
";

#[test]
fn a_thread_that_spins_keeps_its_processor_until_its_slice_ends() {
    // On one processor, slices of 3 ms. Thread 0 has it first: 0.9 ms of work, then it spins
    // (its wait holds the processor) until its slice ends at 3 ms, while thread 1 queues.
    // Thread 1 then sends at 4.9 ms and stops at 5.4; thread 0, queued, sees the message once
    // it has the processor again: at 5.4 ms.
    let (log, _, predicted) = replay(SPIN, &spinning("0,1", 3e6, 0.0));
    assert_eq!(time_of(&log, 0, "wait_begin recv"), 900_000);
    assert_eq!(time_of(&log, 1, "send 0 0 8"), 4_900_000);
    assert_eq!(time_of(&log, 0, "recv 1 0 8"), 5_400_000);
    assert_eq!(predicted, 5_400_000);
    assert!(
        log.starts_with(
            "pplog 1 p=2 predicted=group:0,1;sharing:run-to-block:slice=3000us:switch=0us:spin\n"
        ),
        "{log}"
    );
    // With a switch of 10 us, spent on each start of a thread on the shared processor:
    // thread 0 starts at 0.01 ms and its slice ends at 3.01, thread 1 starts at 3.02, sends
    // at 4.92 and stops at 5.42, and thread 0 sees the message after the switch back: 5.43 ms.
    let (log, _, predicted) = replay(SPIN, &spinning("0,1", 3e6, 1e4));
    assert_eq!(time_of(&log, 0, "wait_begin recv"), 910_000);
    assert_eq!(time_of(&log, 1, "send 0 0 8"), 4_920_000);
    assert_eq!(predicted, 5_430_000);
    // A waiting thread that blocks gives the processor up at 0.9 ms: the send at 2.8 ms, the
    // receive 1 ns later, thread 1's end at 3.3.
    let (log, _, predicted) = replay(SPIN, &run_to_block("0,1", 3e6, 0.0));
    assert_eq!(time_of(&log, 1, "send 0 0 8"), 2_800_000);
    assert_eq!(time_of(&log, 0, "recv 1 0 8"), 2_800_001);
    assert_eq!(predicted, 3_300_000);
    // With a slice of 0.5 ms they take turns: thread 0 works 0-0.5 and 1.0-1.4, spins
    // 1.4-1.5, 2.0-2.5 and 3.0-3.5; thread 1 works 0.5-1.0, 1.5-2.0, 2.5-3.0 and 3.5-4.0,
    // sending at 3.9. Thread 0 sees the message in its next turn, at 4.0, and stops;
    // thread 1 ends its last 0.4 ms at 4.4.
    let (log, _, predicted) = replay(SPIN, &spinning("0,1", 5e5, 0.0));
    assert_eq!(time_of(&log, 0, "wait_begin recv"), 1_400_000);
    assert_eq!(time_of(&log, 1, "send 0 0 8"), 3_900_000);
    assert_eq!(time_of(&log, 0, "recv 1 0 8"), 4_000_000);
    assert_eq!(predicted, 4_400_000);
}

/// Two ranks exchange 8 KB messages twice, each sending and then receiving (as `MPI_Isend`,
/// `MPI_Irecv` and `MPI_Waitall`), after 1 ms of computation each time.
const EXCHANGES: &str = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
1000000 0 send 1 0 8192
1000000 0 work_end
1000000 0 wait_begin recv
1000000 1 send 0 0 8192
1000000 1 work_end
1000000 1 wait_begin recv
1000010 0 recv 1 0 8192
1000010 0 wait_end recv
1000010 1 recv 0 0 8192
1000010 1 wait_end recv
1000010 0 work_begin
1000010 1 work_begin
2000010 0 send 1 0 8192
2000010 0 work_end
2000010 0 wait_begin recv
2000010 1 send 0 0 8192
2000010 1 work_end
2000010 1 wait_begin recv
2000020 0 recv 1 0 8192
2000020 0 wait_end recv
2000020 1 recv 0 0 8192
2000020 1 wait_end recv
2000020 0 stop
2000020 1 stop
";

fn rendezvous(spec: &str, slice_ns: f64, bytes: u64) -> Target {
    let mut t = spinning(spec, slice_ns, 0.0);
    t.set_run_to_block(&RunToBlockSettings {
        rendezvous_bytes: Some(bytes),
        ..RunToBlockSettings::default()
    })
    .unwrap();
    t
}

#[test]
fn a_message_by_rendezvous_is_taken_only_once_its_receiver_has_run_since() {
    // One processor, slices of 4 ms, waits that spin. Without the rendezvous a rank that finds
    // its partner's message waiting goes on: thread 0 works 0-1 ms and spins to 4; thread 1
    // works 4-5, receives at once (thread 0's message is there), works 5-6 and spins to 8;
    // thread 0 receives at 8, works 8-9 and finds thread 1's second message there: 9 ms and
    // its 10 ns, thread 1 the same after thread 0 stops.
    let (log, _, predicted) = replay(EXCHANGES, &spinning("0,1", 4e6, 0.0));
    assert_eq!(time_of(&log, 1, "wait_end recv"), 5_000_010);
    assert_eq!(predicted, 9_000_010);
    // By rendezvous (8 KB at least 4 KB) a rank's receive also waits for its partner to run
    // after its send: one exchange a turn. Thread 0 sends at 1 ms; thread 1, which runs from
    // 4, takes it, sends at 5 and spins to 8, its own message not yet taken; thread 0 takes it
    // at 8, receives, works 8-9, sends, spins to 12; thread 1 receives at 12, works 12-13,
    // sends, spins to 16; thread 0 receives at 16 and stops, thread 1 after it.
    let (log, _, predicted) = replay(EXCHANGES, &rendezvous("0,1", 4e6, 4096));
    let times: Vec<u64> = log
        .lines()
        .filter(|l| l.ends_with(" recv 1 0 8192") || l.ends_with(" recv 0 0 8192"))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        times,
        [8_000_000, 12_000_000, 16_000_000, 16_000_000],
        "{log}"
    );
    assert_eq!(predicted, 16_000_000);
    assert!(
        log.starts_with("pplog 1 p=2 predicted=group:0,1;sharing:run-to-block:slice=4000us:switch=0us:spin:rendezvous=4096B\n"),
        "{log}"
    );
    // Messages below the threshold go as before.
    let (_, _, predicted) = replay(EXCHANGES, &rendezvous("0,1", 4e6, 8193));
    assert_eq!(predicted, 9_000_010);
    // On processors of their own the receivers always run: the identity.
    let (_, _, predicted) = replay(EXCHANGES, &rendezvous("0/1", 4e6, 0));
    assert_eq!(predicted, 2_000_020);
}

#[test]
fn a_thread_that_spins_on_a_processor_of_its_own_sees_its_wait_end_at_once() {
    // Each thread on its own processor: spinning changes nothing.
    let (log, _, predicted) = replay(SPIN, &spinning("0/1", 3e6, 0.0));
    let (identity, _, walls) = replay(SPIN, &Target::default());
    assert_eq!(predicted, walls);
    assert_eq!(predicted, 2_400_000);
    assert_eq!(
        log.lines().skip(1).collect::<Vec<_>>(),
        identity.lines().skip(1).collect::<Vec<_>>()
    );
}

#[test]
fn figure_1_one_thread_runs_until_it_blocks_then_the_other() {
    // Threads 0 and 1 share a processor, which spends 5 ns on each switch to a thread. Thread
    // 0 has it first (the first runnable): the switch, then its 10 ns alone; it waits from 15
    // (under processor sharing, from 20). Then the switch to thread 1 and its 70 ns: its send
    // at 90; the receive 1 ns later, 91, a switch back to thread 0 (the processor was idle)
    // and its 10 ns: 106.
    let (log, _, predicted) = replay(FIGURE_1, &run_to_block("0,1", 3e6, 5.0));
    assert_eq!(time_of(&log, 0, "wait_begin recv"), 15);
    assert_eq!(time_of(&log, 1, "send 0 0 8"), 90);
    assert_eq!(time_of(&log, 0, "recv 1 0 8"), 91);
    assert_eq!(time_of(&log, 0, "stop"), 106);
    assert_eq!(predicted, 106);
    assert!(
        log.starts_with(
            "pplog 1 p=3 predicted=group:0,1;sharing:run-to-block:slice=3000us:switch=0.005us\n"
        ),
        "{log}"
    );
    // Runnable without the processor: thread 0 during its two switches (10 ns), thread 1
    // while thread 0 ran and during its switch (15 + 5 ns): 30 ns of rc.cpu.
    let a = attribution(&log);
    assert_eq!(a.totals.sub("rc.cpu"), Some(30));
    // Without a switch cost thread 0 waits from 10 and the run ends at 91, as under sharing.
    let (free, _, predicted) = replay(FIGURE_1, &run_to_block("0,1", 3e6, 0.0));
    assert_eq!(time_of(&free, 0, "wait_begin recv"), 10);
    assert_eq!(predicted, 91);
    // Processor sharing: the first wait at 20, what this test tells apart.
    let (shared, _, _) = replay(FIGURE_1, &target("0,1", Sharing::Processor));
    assert_eq!(time_of(&shared, 0, "wait_begin recv"), 20);
}

const TWO_THREADS: &str = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
100000000 0 work_end
100000000 1 work_end
100000000 0 stop
100000000 1 stop
";

#[test]
fn two_threads_that_never_block_take_turns_a_slice_each() {
    // 100 ms each, slices of 3 ms, a switch of 1 us before each: 33 slices each (198 ms of
    // work, 66 switches), then thread 0's last 1 ms ends at 199 ms + 67 switches, and
    // thread 1's after one more switch, at 200 ms + 68 switches.
    let (log, _, predicted) = replay(TWO_THREADS, &run_to_block("0,1", 3e6, 1e3));
    assert_eq!(time_of(&log, 0, "work_end"), 199_000_000 + 67_000);
    assert_eq!(time_of(&log, 1, "work_end"), 200_000_000 + 68_000);
    assert_eq!(predicted, 200_068_000);
    // Processor sharing ends both at 200 ms.
    let (shared, _, _) = replay(TWO_THREADS, &target("0,1", Sharing::Processor));
    assert_eq!(time_of(&shared, 0, "work_end"), 200_000_000);
}

#[test]
fn thousands_of_slices_come_out_as_if_taken_one_by_one() {
    // 10.0005 s each, slices of 1 ms, a switch of 1 us before each: 10,000 rounds of a slice
    // each (the replay skips whole rounds at once), then thread 0's last 0.5 ms after one
    // more switch, and thread 1's after another. Taken one slice at a time, a computation
    // 10^9 times as long (a speed factor of 1e-9) kept the replay busy for minutes.
    let log = TWO_THREADS.replace("100000000", "10000500000");
    let (log, _, predicted) = replay(&log, &run_to_block("0,1", 1e6, 1e3));
    let round = 2 * 1_001_000;
    assert_eq!(time_of(&log, 0, "work_end"), 10_000 * round + 501_000);
    assert_eq!(time_of(&log, 1, "work_end"), 10_000 * round + 1_002_000);
    assert_eq!(predicted, 10_000 * round + 1_002_000);
    // Each thread was runnable without the processor for all but its own 10.0005 s.
    let a = attribution(&log);
    let waited = (10_000 * round + 501_000) + (10_000 * round + 1_002_000) - 2 * 10_000_500_000;
    assert_eq!(a.totals.sub("rc.cpu"), Some(u128::from(waited)));
}

/// [`replay`] on a thread of its own, failing the test if it takes two minutes: a replay that
/// went one slice at a time through billions of them would take hours.
fn replay_within_two_minutes(log: &'static str, target: Target) -> (String, u64, u64) {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(replay(log, &target));
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the replay ends")
}

#[test]
fn a_computation_made_2_to_the_47_times_longer_is_replayed_in_whole_rounds() {
    // 8 ns each in phase par, at a speed of 2^-47: 2^50 ns (13 days) each on one processor, in
    // slices of 10 us with no switch: about 1.1 * 10^11 slices each, which the replay took one
    // at a time for hours. The full slices leave 2^50 mod 10^4 = 2,624 ns to thread 0, then
    // as much to thread 1, which ends at 2^51 ns.
    let log = "pplog 1 p=2
0 0 start
0 1 start
0 0 phase par
0 1 phase par
0 0 work_begin
0 1 work_begin
8 0 work_end
8 1 work_end
8 0 stop
8 1 stop
";
    let mut target = run_to_block("0,1", 1e4, 0.0);
    target.add_speed("par=7.105427357601002e-15").unwrap();
    let (log, _, predicted) = replay_within_two_minutes(log, target);
    assert_eq!(time_of(&log, 0, "work_end"), (1 << 51) - 2_624);
    assert_eq!(predicted, 1 << 51);
}

#[test]
fn a_spinning_wait_that_holds_for_days_is_replayed_in_whole_rounds() {
    // Thread 0 waits 2^44 ns (203 days) for nothing the log names, spinning; thread 1 computes
    // 2^45 ns; one processor, slices of 10 us. The rounds were skipped only while no spinning
    // thread's dependencies were met, so this took 1.8 * 10^9 slices one at a time (the fuzzer's
    // PACE model with a startup of 3 * 10^9 s hung). 2^44 ns falls in thread 0's turn number
    // 1,759,218,604 (counting from 0, thread 0's are the even ones): its wait ends there, and it
    // stops. Thread 1 had the 879,609,302 odd turns before it, 8,796,093,020,000 ns, and runs
    // the rest of its 2^45 ns from 2^44 on.
    let log = "pplog 1 p=2
0 0 start
0 1 start
0 0 wait_begin recv
0 1 work_begin
17592186044416 0 wait_end recv
17592186044416 0 stop
35184372088832 1 work_end
35184372088832 1 stop
";
    let (log, _, predicted) = replay_within_two_minutes(log, spinning("0,1", 1e4, 0.0));
    assert_eq!(time_of(&log, 0, "wait_end recv"), 1 << 44);
    let rest = (1u64 << 45) - 879_609_302 * 10_000;
    assert_eq!(predicted, (1 << 44) + rest);
}

#[test]
fn whole_rounds_are_skipped_on_two_processors_that_take_turns_at_once() {
    // Six such threads, groups 0,1,2 / 3,4,5: thread 1 finds processor 0 busy and takes the
    // idle processor 1, so 0 and 2 take turns on processor 0 and 1, 3, 4, 5 on processor 1,
    // each rotation of one within a slice of the other's (skipping only up to the next
    // event anywhere, each slice was still a step: the replay of a PACE model of fft2d at
    // n = 10^6 took 2 s, at 10^8 hours). Processor 0 ends 0 at 2^51 - 2,624 and 2 at 2^51;
    // processor 1 ends its four 2,624 ns remainders one after another, the last at 2^52.
    let mut log = String::from("pplog 1 p=6\n");
    for what in ["start", "phase par", "work_begin"] {
        for th in 0..6 {
            log += &format!("0 {th} {what}\n");
        }
    }
    for what in ["work_end", "stop"] {
        for th in 0..6 {
            log += &format!("8 {th} {what}\n");
        }
    }
    let mut target = run_to_block("0,1,2/3,4,5", 1e4, 0.0);
    target.add_speed("par=7.105427357601002e-15").unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(replay(&log, &target));
    });
    let (log, _, predicted) = receive
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the replay ends");
    assert_eq!(time_of(&log, 0, "work_end"), (1 << 51) - 2_624);
    assert_eq!(time_of(&log, 2, "work_end"), 1 << 51);
    for (th, left) in [(1, 3), (3, 2), (4, 1), (5, 0)] {
        assert_eq!(
            time_of(&log, th, "work_end"),
            (1 << 52) - left * 2_624,
            "{th}"
        );
    }
    assert_eq!(predicted, 1 << 52);
}

#[test]
fn a_runnable_thread_takes_an_idle_processor_of_the_shared_ones() {
    // Threads 0 and 1 share processor 0, 2 and 3 processor 1; 2 and 3 wait until 1 ms.
    // Thread 1 finds processor 0 busy and processor 1 idle: both end at 100 us (200 us under
    // processor sharing, each on its own processor). Then 2 and 3 (their own processor 1
    // now held by nobody, 0 too) each take one: 1 ms + 100 us.
    let log = "pplog 1 p=4
0 0 start
0 1 start
0 2 start
0 3 start
0 0 work_begin
0 1 work_begin
100000 0 work_end
100000 1 work_end
1000000 2 work_begin
1000000 3 work_begin
1100000 2 work_end
1100000 3 work_end
1100000 0 stop
1100000 1 stop
1100000 2 stop
1100000 3 stop
";
    let (out, _, _) = replay(log, &run_to_block("0,1/2,3", 3e6, 0.0));
    assert_eq!(time_of(&out, 0, "work_end"), 100_000);
    assert_eq!(time_of(&out, 1, "work_end"), 100_000);
    assert_eq!(time_of(&out, 2, "work_end"), 1_100_000);
    assert_eq!(time_of(&out, 3, "work_end"), 1_100_000);
    let (shared, _, _) = replay(log, &target("0,1/2,3", Sharing::Processor));
    assert_eq!(time_of(&shared, 1, "work_end"), 200_000);
}

#[test]
fn a_group_of_one_thread_is_a_processor_the_others_may_move_onto() {
    // Processors 0 (threads 0, 2) and 1 (thread 1, which waits until 1 us): the groups are
    // the machine's processors, so thread 2 finds processor 0 busy and takes processor 1,
    // idle: both end at 100 (200 if a group of one kept its processor to itself). Thread 1
    // then finds its processor free again: 1000 to 1100.
    let log = "pplog 1 p=3
0 0 start
0 1 start
0 2 start
0 0 work_begin
0 2 work_begin
100 0 work_end
100 2 work_end
1000 1 work_begin
1100 1 work_end
1100 0 stop
1100 1 stop
1100 2 stop
";
    let (out, _, predicted) = replay(log, &run_to_block("0,2/1", 3e6, 0.0));
    assert!(
        out.starts_with("pplog 1 p=3 predicted=group:0,2/1;sharing:run-to-block:"),
        "{out}"
    );
    assert_eq!(time_of(&out, 0, "work_end"), 100);
    assert_eq!(time_of(&out, 2, "work_end"), 100);
    assert_eq!(time_of(&out, 1, "work_end"), 1100);
    assert_eq!(predicted, 1100);
}

#[test]
fn a_processor_that_runs_the_same_thread_again_pays_no_switch() {
    // One processor, a switch of 5 ns. Thread 0 computes 100 ns, stops for 10 ns (an event
    // between two computations: no processor held), then computes 90 ns. Nobody else ran in
    // between: only its first start pays the switch, 5 + 100 + 10 + 90 = 205.
    let alone = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
100 0 work_end
110 0 work_begin
200 0 work_end
200 0 stop
200 1 stop
";
    let (out, _, predicted) = replay(alone, &run_to_block("0,1", 3e6, 5.0));
    assert_eq!(time_of(&out, 0, "work_end"), 105);
    assert_eq!(predicted, 205);
    // Thread 1 computes 10 ns from 100: it has the processor from 105 after a switch
    // (110 to 120), and thread 0, runnable again at 115, after another: 125 + 90 = 215.
    let between = alone.replace(
        "110 0 work_begin",
        "100 1 work_begin\n110 1 work_end\n110 0 work_begin",
    );
    let (out, _, predicted) = replay(&between, &run_to_block("0,1", 3e6, 5.0));
    assert_eq!(time_of(&out, 1, "work_end"), 120);
    assert_eq!(predicted, 215);
}

#[test]
fn a_wake_up_onto_an_idle_processor_costs_wake_a_hand_over_from_the_queue_costs_switch() {
    // One processor, a switch of 5 ns and a wake-up of 50. Thread 0 is woken onto it idle
    // (50 + 100: 150); thread 1, woken onto it idle at 200 after thread 0 ran there, too
    // (250 + 100: 350). Without a wake-up of its own, each costs the switch: 105 and 305.
    let apart = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
100 0 work_end
200 1 work_begin
300 1 work_end
300 0 stop
300 1 stop
";
    let woken = Target {
        groups: parse_groups("0,1").unwrap(),
        sharing: Sharing::RunToBlock {
            slice_ns: 3e6,
            switch_ns: 5.0,
            wake_ns: Some(50.0),
            waits: Waits::Block,
            rendezvous_bytes: None,
        },
        ..Target::default()
    };
    let (out, _, _) = replay(apart, &woken);
    assert_eq!(time_of(&out, 0, "work_end"), 150);
    assert_eq!(time_of(&out, 1, "work_end"), 350);
    assert!(out.starts_with("pplog 1 p=2 predicted=group:0,1;sharing:run-to-block:slice=3000us:switch=0.005us:wake=0.05us\n"), "{out}");
    let (out, _, _) = replay(apart, &run_to_block("0,1", 3e6, 5.0));
    assert_eq!(time_of(&out, 0, "work_end"), 105);
    assert_eq!(time_of(&out, 1, "work_end"), 305);
    // Both from 0 (thread 1 now computes 300): thread 0 is woken (150), thread 1 queues and
    // gets the processor from thread 0 with a switch, not a wake-up: 155 + 300.
    let together = apart
        .replace("200 1 work_begin\n", "")
        .replace("0 0 work_begin\n", "0 0 work_begin\n0 1 work_begin\n");
    let (out, _, _) = replay(&together, &woken);
    assert_eq!(time_of(&out, 0, "work_end"), 150);
    assert_eq!(time_of(&out, 1, "work_end"), 455);
}

#[test]
fn a_thread_in_no_group_keeps_its_processor() {
    // Thread 2 is in no group: thread 1 may not move to its processor, and waits for 0.
    let log = "pplog 1 p=3
0 0 start
0 1 start
0 2 start
0 0 work_begin
0 1 work_begin
100 0 work_end
100 1 work_end
100 0 stop
100 1 stop
100 2 stop
";
    let (out, _, _) = replay(log, &run_to_block("0,1", 3e6, 0.0));
    assert_eq!(time_of(&out, 0, "work_end"), 100);
    assert_eq!(time_of(&out, 1, "work_end"), 200);
}

#[test]
fn a_thread_that_computes_until_its_last_event_gives_up_its_processor() {
    // Thread 0's work is still open at its stop: the processor goes to thread 1 then (100 ns),
    // which ends at 200 instead of the replay stalling.
    let log = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
100 0 stop
100 1 work_end
100 1 stop
";
    let (out, _, predicted) = replay(log, &run_to_block("0,1", 3e6, 0.0));
    assert_eq!(time_of(&out, 0, "stop"), 100);
    assert_eq!(time_of(&out, 1, "work_end"), 200);
    assert_eq!(predicted, 200);
}

#[test]
fn two_events_at_one_time_inside_a_computation_keep_the_processor() {
    // Thread 0 sends twice at 50, inside its work: it keeps the processor (no switch), ends
    // at 100 + one switch; thread 1 then runs: 200 + two switches.
    let log = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
50 0 send 1 0 8
50 0 send 1 1 8
100 0 work_end
100 1 work_end
100 1 recv 0 0 8
100 1 recv 0 1 8
100 0 stop
100 1 stop
";
    let (out, _, predicted) = replay(log, &run_to_block("0,1", 3e6, 5.0));
    assert_eq!(time_of(&out, 0, "send 1 1 8"), 55);
    assert_eq!(time_of(&out, 0, "work_end"), 105);
    assert_eq!(time_of(&out, 1, "work_end"), 210);
    assert_eq!(predicted, 210);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn without_a_shared_processor_it_is_the_identity(
        seed in any::<u64>(), p in 1u32..5, rounds in 1usize..10
    ) {
        let (log, _) = random_log(seed, p, rounds, true, true);
        let (identity, _, walls) = replay(&log, &Target::default());
        let (rtb, _, w) = replay(&log, &run_to_block("0", 3e6, 1e3));
        prop_assert_eq!(walls, w);
        prop_assert_eq!(identity, rtb);
    }

    #[test]
    fn one_processor_takes_at_least_the_work_plus_no_more_than_the_wall_and_work_and_switches(
        seed in any::<u64>(), p in 2u32..5, rounds in 1usize..8, switch in 0u32..20
    ) {
        // All on one processor, one at a time: never faster than the total demand, never
        // slower than measured plus all of it plus a switch per event and per slice (a thread
        // gets the processor after one of its events, or after another's slice ended); the
        // predicted log breaks no rule.
        let (log, _) = random_log(seed, p, rounds, true, true);
        let all = (0..p).map(|t| t.to_string()).collect::<Vec<_>>().join(",");
        let (out, _, predicted) = replay(&log, &run_to_block(&all, 50.0, f64::from(switch)));
        let a = attribution(&log);
        let work = a.totals.get(pp::profile::Category::Pc) as u64;
        let measured = a.window.1 - a.window.0;
        let switches = log.lines().count() as u64 + work / 50 + 1;
        prop_assert!(predicted >= work, "{} < {}", predicted, work);
        prop_assert!(
            predicted <= measured + work + switches * u64::from(switch) + 2 * p as u64,
            "{} > {} + {} + {} switches", predicted, measured, work, switches
        );
        prop_assert!(attribution(&out).warnings.is_empty(), "{:?}", attribution(&out).warnings);
    }

    #[test]
    fn two_shared_processors_take_at_least_half_the_work_and_break_no_rule(
        seed in any::<u64>(), p in 4u32..7, rounds in 1usize..8, switch in 0u32..20
    ) {
        // Threads on two processors, moving to the idle one: the work is done on two
        // processors at most, and every event is replayed into a valid log.
        let (log, _) = random_log(seed, p, rounds, true, true);
        let even: Vec<String> = (0..p).step_by(2).map(|t| t.to_string()).collect();
        let odd: Vec<String> = (1..p).step_by(2).map(|t| t.to_string()).collect();
        let spec = format!("{}/{}", even.join(","), odd.join(","));
        let (out, _, predicted) = replay(&log, &run_to_block(&spec, 50.0, f64::from(switch)));
        let work = attribution(&log).totals.get(pp::profile::Category::Pc) as u64;
        prop_assert!(2 * predicted + 2 >= work, "{} < {} / 2", predicted, work);
        prop_assert!(attribution(&out).warnings.is_empty(), "{:?}", attribution(&out).warnings);
    }

    #[test]
    fn waits_that_spin_replay_every_event_no_faster_than_the_work_and_break_no_rule(
        seed in any::<u64>(), p in 2u32..6, rounds in 1usize..8, switch in 0u32..20,
        two in any::<bool>()
    ) {
        // Every thread's events replayed (the replay stops with an error otherwise), on one
        // processor or two, with waits that hold the processor: the work is done one thread
        // at a time on each, and the predicted log is valid; each processor of its own is the
        // identity.
        let (log, _) = random_log(seed, p, rounds, true, true);
        let spec = if two {
            let even: Vec<String> = (0..p).step_by(2).map(|t| t.to_string()).collect();
            let odd: Vec<String> = (1..p).step_by(2).map(|t| t.to_string()).collect();
            format!("{}/{}", even.join(","), odd.join(","))
        } else {
            (0..p).map(|t| t.to_string()).collect::<Vec<_>>().join(",")
        };
        let (out, _, predicted) = replay(&log, &spinning(&spec, 50.0, f64::from(switch)));
        let work = attribution(&log).totals.get(pp::profile::Category::Pc) as u64;
        let cores = if two { 2 } else { 1 };
        prop_assert!(cores * predicted + cores >= work, "{} < {} / {}", predicted, work, cores);
        prop_assert!(attribution(&out).warnings.is_empty(), "{:?}", attribution(&out).warnings);
        let (identity, _, walls) = replay(&log, &Target::default());
        let (own, _, w) = replay(&log, &spinning("0", 50.0, f64::from(switch)));
        prop_assert_eq!(walls, w);
        prop_assert_eq!(identity, own);
        // Every message by rendezvous: still every event, no faster than the work.
        let (out, _, predicted) = replay(&log, &rendezvous(&spec, 50.0, 0));
        prop_assert!(cores * predicted + cores >= work, "{} < {} / {}", predicted, work, cores);
        prop_assert!(attribution(&out).warnings.is_empty(), "{:?}", attribution(&out).warnings);
    }
}

fn pp(args: &[&str]) -> (bool, String, String) {
    let out = test_support::pp!().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_options_and_the_target_file_set_it_and_refuse_bad_values_in_one_line() {
    let dir = scratch("run-to-block");
    let log = dir.join("fig1.log");
    std::fs::write(&log, FIGURE_1).unwrap();
    let out = dir.join("pred.log");
    let (l, o) = (log.to_str().unwrap(), out.to_str().unwrap());
    let base = ["whatif", l, "--group", "0,1", "--out", o, "--force"];
    let with = |more: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(more);
        pp(&a)
    };
    let (ok, stdout, stderr) = with(&["--sharing", "run-to-block", "--switch-us", "0.005"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("predicted wall: 0.000000106 s"), "{stdout}");
    let target = dir.join("t.toml");
    std::fs::write(
        &target,
        "group = \"0,1\"\nsharing = \"run-to-block\"\nswitch_us = 0.005\n",
    )
    .unwrap();
    let t = target.to_str().unwrap();
    let (ok, stdout, stderr) = pp(&["whatif", l, "--target", t, "--out", o, "--force"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("predicted wall: 0.000000106 s"), "{stdout}");
    // A wake-up of its own: two of Figure 1's three starts are onto the idle processor (thread
    // 0's first and its return after the receive), which cost 10 ns instead of 5; thread 1
    // takes it from the queue with a switch: 106 + 2 * 5.
    let (ok, stdout, stderr) = with(&[
        "--sharing",
        "run-to-block",
        "--switch-us",
        "0.005",
        "--wake-us",
        "0.01",
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("predicted wall: 0.000000116 s"), "{stdout}");
    assert!(stdout.contains("switch=0.005us:wake=0.01us"), "{stdout}");
    std::fs::write(
        &target,
        "group = \"0,1\"\nsharing = \"run-to-block\"\nswitch_us = 0.005\nwake_us = 0.01\n",
    )
    .unwrap();
    let (ok, stdout, stderr) = pp(&["whatif", l, "--target", t, "--out", o, "--force"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("predicted wall: 0.000000116 s"), "{stdout}");
    for (args, expected) in [
        (
            vec!["--wake-us", "1"],
            "--slice-us, --switch-us, --wake-us, --waits and --rendezvous-bytes are for sharing = run-to-block",
        ),
        (
            vec!["--sharing", "run-to-block", "--wake-us=-1"],
            "--wake-us = -1",
        ),
        (
            vec!["--sharing", "round-robin"],
            "expected processor or run-to-block",
        ),
        (vec!["--switch-us", "1"], "for sharing = run-to-block"),
        (
            vec!["--sharing", "run-to-block", "--slice-us", "0"],
            "--slice-us = 0: not a number of microseconds",
        ),
        (
            vec!["--sharing", "run-to-block", "--switch-us=-1"],
            "--switch-us = -1",
        ),
        (
            vec!["--sharing", "run-to-block", "--rendezvous-bytes", "4096"],
            "--rendezvous-bytes is for --waits = spin",
        ),
        (vec!["--waits", "spin"], "are for sharing = run-to-block"),
        (
            vec!["--sharing", "run-to-block", "--waits", "poll"],
            "expected block or spin",
        ),
        (
            vec![
                "--sharing",
                "run-to-block",
                "--waits",
                "spin",
                "--rendezvous-bytes=-1",
            ],
            "invalid value",
        ),
    ] {
        let (ok, _, stderr) = with(&args);
        assert!(!ok, "{args:?}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        // clap's own error for a value it parses adds a usage hint; the rest are one line.
        if !stderr.starts_with("error: invalid value") {
            assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        }
    }
    std::fs::write(&target, "group = \"0,1\"\nsharing = \"fair\"\n").unwrap();
    let (ok, _, stderr) = pp(&["whatif", l, "--target", t, "--out", o, "--force"]);
    assert!(!ok);
    assert!(
        stderr.contains("t.toml: sharing: 'fair': expected processor or run-to-block"),
        "{stderr}"
    );
    // Waits that spin and a rendezvous, from the options and from the file alike.
    let (ok, stdout, stderr) = with(&[
        "--sharing",
        "run-to-block",
        "--waits",
        "spin",
        "--rendezvous-bytes",
        "4",
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains(":spin:rendezvous=4B"), "{stdout}");
    std::fs::write(
        &target,
        "group = \"0,1\"\nsharing = \"run-to-block\"\nwaits = \"spin\"\nrendezvous_bytes = 4\n",
    )
    .unwrap();
    let (ok, file_out, stderr) = pp(&["whatif", l, "--target", t, "--out", o, "--force"]);
    assert!(ok, "{stderr}");
    assert_eq!(
        file_out.lines().nth(1),
        stdout.lines().nth(1),
        "{file_out} / {stdout}"
    );
    for (text, expected) in [
        (
            "group = \"0,1\"\nsharing = \"run-to-block\"\nwaits = \"poll\"\n",
            "t.toml: waits: 'poll': expected block or spin",
        ),
        (
            "group = \"0,1\"\nsharing = \"run-to-block\"\nrendezvous_bytes = 4\n",
            "t.toml: rendezvous_bytes is for waits = spin",
        ),
        (
            "group = \"0,1\"\nwaits = \"spin\"\n",
            "are for sharing = run-to-block",
        ),
    ] {
        std::fs::write(&target, text).unwrap();
        let (ok, _, stderr) = pp(&["whatif", l, "--target", t, "--out", o, "--force"]);
        assert!(!ok, "{text}");
        assert!(stderr.contains(expected), "{text}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
