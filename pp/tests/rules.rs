//! Hand-written text logs, one per rule of docs/attribution.md, with the expected nanoseconds.

use pp::log::LogReader;
use pp::machine::Machine;
use pp::profile::{Category, Profile, profile_log};

fn profile(text: &str) -> Profile {
    profile_on(text, None)
}

fn profile_on(text: &str, machine: Option<Machine>) -> Profile {
    let mut reader = LogReader::from_bytes("rule.log", text.as_bytes().to_vec()).unwrap();
    profile_log(&mut reader, machine, None)
        .whole("rule.log")
        .unwrap()
}

/// (li, ip, sl, cl, rc, pc) of thread `i`.
fn thread(p: &Profile, i: usize) -> [u128; 6] {
    p.by_thread[i].ns
}

#[test]
fn rule_1_comm_is_communication_loss() {
    let p = profile(
        "pplog 1 p=1
0 0 start
10 0 work_begin
20 0 comm_begin 4096
50 0 comm_end 4096
60 0 work_end
100 0 stop
",
    );
    // idle outside regions 0-10 and 60-100: ip 50; work 20; comm 30.
    assert_eq!(thread(&p, 0), [0, 50, 0, 30, 0, 20]);
    assert_eq!(p.total_ns(), 100);
}

#[test]
fn rule_2_wait_is_synchronization_loss() {
    let p = profile(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 region_begin 1 locks
0 0 work_begin
0 1 work_begin
10 1 wait_begin lock L
40 1 wait_end lock L
50 0 work_end
50 1 work_end
50 0 region_end 1
50 0 stop
50 1 stop
",
    );
    assert_eq!(thread(&p, 0), [0, 0, 0, 0, 0, 50]);
    assert_eq!(thread(&p, 1), [0, 0, 30, 0, 0, 20]);
    assert_eq!(p.by_region, vec![("locks".to_string(), p.totals)]);
}

#[test]
fn rule_2_a_barrier_wait_is_load_imbalance_while_a_teammate_works_then_synchronization() {
    // A loop with an explicit barrier: thread i works 10, 30, 60 ns, then waits at the
    // barrier, which opens at 70 (the hand-off after the last arrival).
    let p = profile(
        "pplog 1 p=3
0 0 start
0 1 start
0 2 start
0 0 region_begin 1 loop
0 0 work_begin
0 1 work_begin
0 2 work_begin
10 0 work_end
10 0 wait_begin barrier B
30 1 work_end
30 1 wait_begin barrier B
60 2 work_end
60 2 wait_begin barrier B
70 0 wait_end barrier B
70 1 wait_end barrier B
70 2 wait_end barrier B
70 0 region_end 1
80 0 stop
80 1 stop
80 2 stop
",
    );
    // Thread 0 waits 10-60 while thread 2 still works (li 50), then 60-70 with every member
    // at the barrier (sl 10); after the region, ip 10.
    assert_eq!(thread(&p, 0), [50, 10, 10, 0, 0, 10]);
    assert_eq!(thread(&p, 1), [30, 10, 10, 0, 0, 30]);
    // The last to arrive finds nobody working: its whole wait is synchronization.
    assert_eq!(thread(&p, 2), [0, 10, 10, 0, 0, 60]);
    assert_eq!(p.total_ns(), 3 * 80);
}

#[test]
fn rule_2_only_barrier_waits_in_a_team_become_load_imbalance() {
    // Thread 1 works 0-100. Thread 0 waits for a lock, a condition, a receive, a send and
    // "other" while it works (all sl), then at a barrier (li). Thread 2 is outside the
    // region's team {0, 1}: a barrier wait outside every region of the thread is ip, as
    // idle time there is (no parallel work for it); so is thread 0's at 110-120.
    let p = profile(
        "pplog 1 p=3
0 0 start
0 1 start
0 2 start
0 0 region_begin 1 r team=0,1
0 1 work_begin
0 2 wait_begin barrier
0 0 wait_begin lock L
10 0 wait_end lock L
10 0 wait_begin cond C
20 0 wait_end cond C
20 0 wait_begin recv
30 0 wait_end recv
30 0 wait_begin send
40 0 wait_end send
40 0 wait_begin other
50 0 wait_end other
50 0 wait_begin barrier
100 1 work_end
100 0 wait_end barrier
100 2 wait_end barrier
100 0 region_end 1
110 0 wait_begin barrier
120 0 wait_end barrier
120 0 stop
120 1 stop
120 2 stop
",
    );
    assert_eq!(thread(&p, 0), [50, 20, 50, 0, 0, 0]);
    assert_eq!(thread(&p, 1), [0, 20, 0, 0, 0, 100]);
    assert_eq!(thread(&p, 2), [0, 120, 0, 0, 0, 0]);
}

#[test]
fn rule_3_work_not_backed_by_cpu_time_is_resource_contention() {
    let p = profile(
        "pplog 1 p=1
0 0 start
0 0 cpu 1000
0 0 work_begin
100 0 work_end
100 0 cpu 1060
100 0 stop
",
    );
    // 100 ns of work, 60 ns of CPU time: 40 ns descheduled.
    assert_eq!(thread(&p, 0), [0, 0, 0, 0, 40, 60]);
    assert_eq!(p.totals.sub("rc.cpu"), Some(40));
}

#[test]
fn rule_3_run_queue_delay_while_idle_is_resource_contention() {
    // Thread 0 is woken at thread 1's fork (0) but gets a core only at 60, its first event
    // since the fork: the kernel counts 40 ns of that as run-queue delay, which moves from its
    // load imbalance to rc.cpu. (Its previous sample is from before the fork: at 0, but a
    // lower thread id comes first among events of the same time.)
    let p = profile(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 cpu 0 500
0 1 region_begin 1 fork
0 1 cpu 0 0
0 1 work_begin
60 0 cpu 0 540
60 0 work_begin
100 1 work_end
100 1 cpu 100 0
100 0 work_end
100 0 cpu 40 540
100 1 region_end 1
100 0 stop
100 1 stop
",
    );
    assert_eq!(thread(&p, 1), [0, 0, 0, 0, 0, 100]);
    assert_eq!(thread(&p, 0), [20, 0, 0, 0, 40, 40]);
    assert_eq!(p.totals.sub("rc.cpu"), Some(40));
    // Had the worker sampled at the fork (thread 1 of this log), it would have had a core
    // then: its idle time after that first event waits for nothing the log releases, and
    // stays li however the delay grew. (The rule before this one moved 40 of it to rc.cpu.)
    let sampled_at_fork = profile(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 region_begin 1 fork
0 0 cpu 0 0
0 0 work_begin
0 1 cpu 0 500
60 1 cpu 0 540
60 1 work_begin
100 0 work_end
100 0 cpu 100 0
100 1 work_end
100 1 cpu 40 540
100 0 region_end 1
100 0 stop
100 1 stop
",
    );
    assert_eq!(thread(&sampled_at_fork, 1), [60, 0, 0, 0, 0, 40]);
}

#[test]
fn rule_3_run_queue_delay_beyond_unbacked_work_comes_from_waiting_at_most_all_of_it() {
    // Work 50-100 has 20 ns of CPU time: 30 ns unbacked (rc.cpu from pc). The run-queue delay
    // of 100 ns explains those 30 and 70 more, of which only the 50 ns at the barrier exist.
    let p = profile(
        "pplog 1 p=1
0 0 start
0 0 cpu 0 0
0 0 wait_begin barrier
50 0 wait_end barrier
50 0 work_begin
100 0 work_end
100 0 cpu 20 100
100 0 stop
",
    );
    assert_eq!(thread(&p, 0), [0, 0, 0, 0, 80, 20]);
    assert_eq!(p.totals.sub("rc.cpu"), Some(80));
}

#[test]
fn rc_cpu_shared_over_phases_sums_to_the_thread_total() {
    // 3 ns of work, one in each phase, 1 ns of CPU time: 2 ns of rc.cpu. Sharing it by
    // rounded-down parts with the remainder to the last phase gave c 2 ns, more than it
    // worked, so the phases showed 1 ns of rc.cpu against the thread's 2.
    let p = profile(
        "pplog 1 p=1
0 0 start
0 0 cpu 0
0 0 phase a
0 0 work_begin
1 0 phase b
2 0 phase c
3 0 work_end
3 0 cpu 1
3 0 stop
",
    );
    assert_eq!(p.totals.sub("rc.cpu"), Some(2));
    let rc = |phase: &str| {
        let row = p.by_phase.iter().find(|(k, _)| k == phase).unwrap();
        row.1.sub("rc.cpu").unwrap()
    };
    assert_eq!((rc("a"), rc("b"), rc("c")), (0, 1, 1));
}

#[test]
fn rule_4_idle_in_a_region_is_load_imbalance_or_synchronization() {
    let p = profile(
        "pplog 1 p=2 impl=dp
0 0 start
0 1 start
0 0 region_begin 7 loop
0 0 work_begin
0 1 work_begin
30 1 work_end
100 0 work_end
120 0 region_end 7
120 0 stop
120 1 stop
",
    );
    // Thread 1 idles 30-100 while thread 0 works (li 70), then both idle in the open region
    // 100-120 (fork/join: sl 20 each).
    assert_eq!(thread(&p, 0), [0, 0, 20, 0, 0, 100]);
    assert_eq!(thread(&p, 1), [70, 0, 20, 0, 0, 30]);
    assert_eq!(
        p.datafile_row(),
        "impl=dp p=2 wall=0.000000120 total=0.000000240 li=0.000000070 ip=0.000000000 \
         sl=0.000000040 cl=0.000000000 rc=0.000000000 pc=0.000000130 rc.cpu=0.000000000 \
         rc.comm=0.000000000"
    );
}

#[test]
fn rule_4_teammates_in_comm_count_as_busy_but_waiting_ones_do_not() {
    let p = profile(
        "pplog 1 p=3
0 0 start
0 1 start
0 2 start
0 0 region_begin 1 r
0 0 comm_begin 8
0 1 wait_begin barrier
40 0 comm_end 8
40 1 wait_end barrier
60 0 region_end 1
60 0 stop
60 1 stop
60 2 stop
",
    );
    // Thread 2 is idle in the region: li while thread 0 communicates (0-40), then sl. So is
    // thread 1 at its barrier (rule 2); waiting, it does not keep thread 2 in li.
    assert_eq!(thread(&p, 2), [40, 0, 20, 0, 0, 0]);
    assert_eq!(thread(&p, 1), [40, 0, 20, 0, 0, 0]);
    assert_eq!(thread(&p, 0), [0, 0, 20, 40, 0, 0]);
}

#[test]
fn rule_5_idle_outside_regions_is_insufficient_parallelism() {
    let p = profile(
        "pplog 1 p=3
0 0 start
0 1 start
0 2 start
0 0 phase serial
0 0 work_begin
50 0 work_end
50 0 region_begin 2 half team=0,1
50 0 work_begin
50 1 work_begin
80 0 work_end
80 1 work_end
80 0 region_end 2
80 0 stop
80 1 stop
80 2 stop
",
    );
    // Serial section: threads 1, 2 idle outside regions (ip 50 each). The region's team is
    // {0, 1}: thread 2 stays outside it (ip 30 more).
    assert_eq!(thread(&p, 0), [0, 0, 0, 0, 0, 80]);
    assert_eq!(thread(&p, 1), [0, 50, 0, 0, 0, 30]);
    assert_eq!(thread(&p, 2), [0, 80, 0, 0, 0, 0]);
    let serial = p.by_phase.iter().find(|(k, _)| k == "serial").unwrap().1;
    assert_eq!(serial.get(Category::Pc), 80);
}

#[test]
fn truncated_log_reports_what_was_open() {
    let p = profile(
        "pplog 1 p=2
0 0 start
0 1 start
0 0 region_begin 1 r
0 0 work_begin
0 1 work_begin
25 1 work_end
",
    );
    assert_eq!(p.window, (0, 25));
    assert_eq!(p.total_ns(), 50);
    let w = &p.warnings;
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].starts_with(
            "rule 18: threads that started and never stopped (2 of them, first thread 0; \
             the last event is at 25 ns)"
        ),
        "{w:?}"
    );
    assert!(
        w[1].starts_with(
            "rule 19: intervals still open at the end of the log (1 of them, first thread \
             0's work; the log ends at 25 ns)"
        ),
        "{w:?}"
    );
    assert!(
        w[2].starts_with(
            "rule 19: regions still open at the end of the log (1 of them, first region 1)"
        ),
        "{w:?}"
    );
}

#[test]
fn a_region_recorded_by_every_member_is_open_from_the_first_begin_to_the_last_end() {
    // OpenMP-style: each thread records its own region_begin/region_end of region 3.
    let p = profile(
        "pplog 1 p=2
0 0 start
0 1 start
10 0 region_begin 3 par
10 0 work_begin
20 1 region_begin 3 par
20 1 work_begin
30 1 work_end
30 1 region_end 3
60 0 work_end
60 0 region_end 3
80 0 stop
80 1 stop
",
    );
    // Thread 1 is in the team from 10 (the region is open) to 60: li while thread 0 works
    // (10-20 and 30-60), ip before 10 and after 60.
    assert_eq!(thread(&p, 1), [40, 30, 0, 0, 0, 10]);
    assert_eq!(thread(&p, 0), [0, 30, 0, 0, 0, 50]);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

/// Copies 1 byte/ns plus 10 ns below 1 KiB, 4 bytes/ns above.
const MACHINE: &str = "
[about]
host = \"test\"
cores = 2
measured_at = 0
pp_version = \"0\"

[copy]
points = []

[[copy.segments]]
from_bytes = 0
to_bytes = 1024
alpha_ns = 10.0
beta_bytes_per_ns = 1.0

[[copy.segments]]
from_bytes = 1024
to_bytes = 1099511627776
alpha_ns = 0.0
beta_bytes_per_ns = 4.0

[handoff]
reps = 1
min_ns = 500.0
median_ns = 500.0
cv = 0.0
flagged = false
";

#[test]
fn rule_1_with_a_machine_file_comm_beyond_its_ideal_time_is_resource_contention() {
    let log = "pplog 1 p=1
0 0 start
0 0 work_begin
10 0 comm_begin 40
70 0 comm_end 40
80 0 comm_begin 4000
1000 0 comm_end 4000
1200 0 comm_begin 400
1300 0 comm_end 400
1300 0 work_end
1300 0 stop
";
    let machine = Machine::parse("machine.toml", MACHINE).unwrap();
    let p = profile_on(log, Some(machine));
    // 40 bytes: ideal 10 + 40 = 50 of 60 ns (10 rc); 4000 bytes: ideal 1000 of 920 ns (all
    // cl); 400 bytes: ideal 410 of 100 (all cl). Work: 10 + 10 + 200 = 220.
    assert_eq!(thread(&p, 0), [0, 0, 0, 50 + 920 + 100, 10, 220]);
    assert_eq!(p.totals.sub("rc.comm"), Some(10));
    assert_eq!(p.totals.sub("rc.cpu"), Some(0));
    // Without it, all communication is cl.
    let p = profile(log);
    assert_eq!(thread(&p, 0), [0, 0, 0, 1080, 0, 220]);
}

/// Rank 1 waits in a receive from 10 to 100 ns; rank 0 works until 60, then sends 64 bytes.
const LATE_SENDER: &str = "pplog 1 p=2
0 0 start
0 1 start
0 0 region_begin 0 mpi
0 1 region_begin 0 mpi
0 0 work_begin
0 1 work_begin
10 1 work_end
10 1 wait_begin recv
60 0 work_end
60 0 send 1 3 64
60 0 work_begin
100 1 recv 0 3 64
100 1 wait_end recv
100 1 work_begin
120 0 work_end
120 1 work_end
120 0 region_end 0
120 1 region_end 0
120 0 stop
120 1 stop
";

#[test]
fn rule_2_a_receive_waits_for_its_late_sender_then_transfers() {
    // 10-60: the sender had not sent yet (sl, the late sender); 60-100: the transfer (cl).
    let p = profile(LATE_SENDER);
    assert_eq!(thread(&p, 1), [0, 0, 50, 40, 0, 10 + 20]);
    assert_eq!(thread(&p, 0), [0, 0, 0, 0, 0, 120]);
    // With a machine file whose MPI model makes 64 bytes ideally 5 + 64/2 = 37 ns, the
    // transfer is cl up to that and rc.comm beyond.
    let machine = format!(
        "{MACHINE}\n[mpi]\nlibrary = \"test\"\nlocality = \"node\"\npoints = []\n\
         [[mpi.segments]]\nfrom_bytes = 0\nto_bytes = 1099511627776\nalpha_ns = 5.0\n\
         beta_bytes_per_ns = 2.0\n"
    );
    let p = profile_on(
        LATE_SENDER,
        Some(Machine::parse("m.toml", &machine).unwrap()),
    );
    assert_eq!(thread(&p, 1), [0, 0, 50, 37, 3, 30]);
    assert_eq!(p.totals.sub("rc.comm"), Some(3));
    assert_eq!(p.total_ns(), 2 * 120);
}

#[test]
fn rule_2_a_receive_whose_message_was_sent_before_it_waited_is_all_transfer() {
    // The send at 5 comes before the wait at 10: 10-100 is transfer.
    let log = "pplog 1 p=2
0 0 start
0 1 start
0 0 work_begin
0 1 work_begin
5 0 send 1 3 64
10 1 work_end
10 1 wait_begin recv
100 1 recv 0 3 64
100 1 wait_end recv
100 1 work_begin
120 0 work_end
120 1 work_end
120 0 stop
120 1 stop
";
    let p = profile(log);
    assert_eq!(thread(&p, 1), [0, 0, 0, 90, 0, 30]);
}

#[test]
fn rule_2_a_wait_for_several_receives_transfers_after_the_last_send() {
    // Rank 2 waits 10-100 for two messages, sent at 40 (rank 0) and 70 (rank 1): it waits for
    // a partner until 70 (sl), then the transfer (cl). A wait that received nothing stays sl.
    let p = profile(
        "pplog 1 p=3
0 0 start
0 1 start
0 2 start
10 2 wait_begin recv
40 0 send 2 1 8
70 1 send 2 1 8
100 2 recv 1 1 8
100 2 recv 0 1 8
100 2 wait_end recv
100 2 wait_begin recv
110 2 wait_end recv
120 0 stop
120 1 stop
120 2 stop
",
    );
    assert_eq!(thread(&p, 2), [0, 10 + 10, 60 + 10, 30, 0, 0]);
}
