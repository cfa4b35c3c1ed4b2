//! Hand-written and random logs of activity between threads (messages, barriers, locks) for
//! the critical path and the what-if replay.

use pp::log::{LogReader, TextWriter};
use pp::profile::{Profile, profile_log};
use pp::whatif::{MeasuredRun, Target, predict};

/// Seed 000's Figure 1 (Eom & Hollingsworth, LBF) as its text describes the PAG: process 1
/// starts a receive after 1 unit and gets its message from process 2, which sends it after 7;
/// process 3 receives a message process 2 sent at the start, without waiting for it. Units
/// of 10 ns, processes 1-3 as threads 0-2, a message in flight for 1 ns (a receive must come
/// after its send), and some work after each receive so that the run has an end.
pub const FIGURE_1: &str = "pplog 1 p=3
0 0 start
0 1 start
0 2 start
0 0 work_begin
0 1 work_begin
0 1 send 2 0 8
0 2 work_begin
10 0 work_end
10 0 wait_begin recv
10 2 work_end
10 2 wait_begin recv
10 2 recv 1 0 8
10 2 wait_end recv
10 2 work_begin
40 2 work_end
40 2 stop
70 1 send 0 0 8
70 1 work_end
70 1 stop
71 0 recv 1 0 8
71 0 wait_end recv
71 0 work_begin
81 0 work_end
81 0 stop
";

/// Random runs of `p` threads, all starting at 0, in rounds: every thread works a while, then
/// either all meet at a barrier (released 1-3 ns after the last arrives), or (when `messages`)
/// one thread sends a message to another, which waits for it (in flight 1-5 ns), or (when
/// `locks`) one thread holds a lock another waits for (`wait_end lock .. by=`, handed over
/// 1-3 ns after the holder's work). Also the critical path's work by hand when every round is
/// a barrier: each round's longest work.
pub fn random_log(seed: u64, p: u32, rounds: usize, messages: bool, locks: bool) -> (String, u64) {
    let mut state = seed | 1;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut lines: Vec<(u64, u32, String)> = Vec::new();
    let mut clock = vec![0u64; p as usize];
    let mut critical_work = 0;
    for th in 0..p {
        lines.push((0, th, "start".into()));
    }
    for round in 0..rounds {
        let arrive: Vec<u64> = clock.iter().map(|c| c + 1 + next(50)).collect();
        for th in 0..p as usize {
            lines.push((clock[th], th as u32, "work_begin".into()));
            lines.push((arrive[th], th as u32, "work_end".into()));
        }
        if p > 1 && locks && next(3) == 0 {
            let from = next(u64::from(p)) as usize;
            let to = (from + 1 + next(u64::from(p) - 1) as usize) % p as usize;
            let got = arrive[to].max(arrive[from] + 1 + next(3));
            lines.push((arrive[to], to as u32, "wait_begin lock m".into()));
            lines.push((got, to as u32, format!("wait_end lock m by={from}")));
            for th in 0..p as usize {
                clock[th] = if th == to { got } else { arrive[th] };
            }
        } else if p == 1 || !messages || next(2) == 0 {
            let last = *arrive.iter().max().unwrap();
            critical_work += last - clock[0];
            let release = last + 1 + next(3);
            for th in 0..p as usize {
                lines.push((arrive[th], th as u32, "wait_begin barrier b".into()));
                lines.push((release, th as u32, "wait_end barrier b".into()));
                clock[th] = release;
            }
        } else {
            let from = next(u64::from(p)) as usize;
            let to = (from + 1 + next(u64::from(p) - 1) as usize) % p as usize;
            let tag = round % 3;
            lines.push((arrive[from], from as u32, format!("send {to} {tag} 8")));
            let got = arrive[to].max(arrive[from] + 1 + next(5));
            lines.push((arrive[to], to as u32, "wait_begin recv".into()));
            lines.push((got, to as u32, format!("recv {from} {tag} 8")));
            lines.push((got, to as u32, "wait_end recv".into()));
            for th in 0..p as usize {
                clock[th] = if th == to { got } else { arrive[th] };
            }
        }
    }
    for (th, &c) in clock.iter().enumerate() {
        lines.push((c, th as u32, "stop".into()));
    }
    let mut text = format!("pplog 1 p={p}\n");
    for (t, th, what) in lines {
        text.push_str(&format!("{t} {th} {what}\n"));
    }
    (text, critical_work)
}

/// The predicted log as text, and its measured and predicted walls.
pub fn replay(text: &str, target: &Target) -> (String, u64, u64) {
    let reader = LogReader::from_bytes("test.log", text.as_bytes().to_vec()).unwrap();
    let run = MeasuredRun::read(reader, "test.log", &target.speeds).unwrap();
    let prediction = predict(&run, target).unwrap();
    let walls = prediction.walls;
    let mut w = TextWriter::new(Vec::new(), &prediction.header).unwrap();
    for i in 0..run.header.p as usize {
        for e in prediction.events(&run, i) {
            w.write_event(&e, &run.symbols).unwrap();
        }
    }
    let text = String::from_utf8(w.finish().unwrap()).unwrap();
    // Sorted as a reader sorts them (by time, ties by thread, each thread's order kept).
    let mut lines: Vec<(u64, u32, usize, String)> = text
        .lines()
        .skip(1)
        .enumerate()
        .map(|(k, l)| {
            let mut f = l.split_whitespace();
            let t = f.next().unwrap().parse().unwrap();
            let th = f.next().unwrap().parse().unwrap();
            (t, th, k, l.to_string())
        })
        .collect();
    lines.sort();
    let mut sorted = text.lines().next().unwrap().to_string() + "\n";
    for l in lines {
        sorted += &l.3;
        sorted.push('\n');
    }
    (sorted, walls.measured, walls.predicted)
}

/// The predicted time of the first line of `thread` containing `what`.
pub fn time_of(log: &str, thread: u32, what: &str) -> u64 {
    log.lines()
        .skip(1)
        .find(|l| {
            let f: Vec<&str> = l.splitn(3, ' ').collect();
            f[1] == thread.to_string() && f[2] == what
        })
        .unwrap_or_else(|| panic!("no '{what}' of thread {thread} in\n{log}"))
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

pub fn attribution(text: &str) -> Profile {
    let mut reader = LogReader::from_bytes("p.log", text.as_bytes().to_vec()).unwrap();
    profile_log(&mut reader, None, None).whole("p.log").unwrap()
}
