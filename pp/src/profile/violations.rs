//! The rules a log must keep (docs/event-log.md, "Rules a log must keep") as the sweep checks
//! them. A broken rule is counted per kind of violation in a small array; only the first
//! violation of each kind is described (its place in the file and what happened), so a valid
//! log costs nothing and a log that breaks one rule a million times gives one warning line.

use std::fmt::Write as _;

/// A kind of violation. Its position is its index in [`KINDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Violation {
    ThreadOutOfRange,
    OutOfOrder,
    StartTwice,
    StopTwice,
    BeforeStart,
    AfterStop,
    WorkInWork,
    WorkInWait,
    WorkInComm,
    WaitInWait,
    WaitInComm,
    CommInWait,
    CommInComm,
    EndCrossing,
    EndWithoutBegin,
    WorkLabelDiffers,
    WaitKindDiffers,
    WaitObjectDiffers,
    CommBytesDiffer,
    OpenAtStop,
    RegionEndNotOpen,
    RegionBegunTwice,
    RegionEndByOther,
    RegionsCross,
    TeamUnknown,
    CpuBack,
    DelayBack,
    NeverStopped,
    AfterLastStop,
    OpenAtEnd,
    RegionOpenAtEnd,
    RecvWithoutSend,
    RecvBytesDiffer,
    SendNeverReceived,
}

/// What a kind of violation is: the rule it breaks (its number in docs/event-log.md), what
/// happened, and what `pp` does about it.
pub(crate) struct Kind {
    pub rule: u8,
    pub what: &'static str,
    pub then: &'static str,
}

const fn kind(rule: u8, what: &'static str, then: &'static str) -> Kind {
    Kind { rule, what, then }
}

/// Every kind, in the order of [`Violation`] (and of the warnings).
pub(crate) const KINDS: [Kind; 34] = [
    kind(1, "event of a thread not below p", "ignored"),
    kind(
        2,
        "event earlier than the event before it",
        "taken at the time of the event before it",
    ),
    kind(3, "start of a thread that already started", "ignored"),
    kind(
        4,
        "stop of a thread that already stopped",
        "it counts as a stop",
    ),
    kind(
        5,
        "event of a thread before its start",
        "it counts as usual",
    ),
    kind(5, "event of a thread after its stop", "it counts as usual"),
    kind(
        6,
        "work_begin inside an open work",
        "the innermost interval counts",
    ),
    kind(
        6,
        "work_begin inside an open wait",
        "the innermost interval counts",
    ),
    kind(
        6,
        "work_begin inside an open comm",
        "the innermost interval counts",
    ),
    kind(
        6,
        "wait_begin inside an open wait",
        "the innermost interval counts",
    ),
    kind(
        6,
        "wait_begin inside an open comm",
        "the innermost interval counts",
    ),
    kind(
        6,
        "comm_begin inside an open wait",
        "the innermost interval counts",
    ),
    kind(
        6,
        "comm_begin inside an open comm",
        "the innermost interval counts",
    ),
    kind(
        7,
        "end of an interval that is not the innermost open one",
        "it also closes the intervals opened inside it",
    ),
    kind(8, "end without an open interval of its type", "ignored"),
    kind(
        9,
        "work_end whose label differs from its work_begin's",
        "it closes the work",
    ),
    kind(
        9,
        "wait_end whose kind differs from its wait_begin's",
        "it closes the wait, which counts as the begin's kind",
    ),
    kind(
        9,
        "wait_end whose object differs from its wait_begin's",
        "it closes the wait",
    ),
    kind(
        9,
        "comm_end whose bytes differ from its comm_begin's",
        "it closes the comm, whose ideal time is the begin's",
    ),
    kind(10, "stop with intervals still open", "the stop closes them"),
    kind(11, "region_end of a region that is not open", "ignored"),
    kind(
        12,
        "region_begin of a region the thread already began",
        "ignored",
    ),
    kind(
        13,
        "region_end by a thread that did not begin the region",
        "it counts as one of the region's ends",
    ),
    kind(
        14,
        "region_end of a region that is not the thread's innermost one",
        "the region ends there",
    ),
    kind(
        15,
        "region_begin with a team that is not defined",
        "the region has no members",
    ),
    kind(
        16,
        "cpu sample whose CPU clock is below the thread's previous one",
        "the sample is ignored",
    ),
    kind(
        17,
        "cpu sample whose run-queue delay is below the thread's previous one",
        "its run-queue delay is ignored",
    ),
    kind(
        18,
        "threads that started and never stopped",
        "the log is cut: the window ends at the last event",
    ),
    kind(
        18,
        "events after the last stop",
        "the window ends at the last event",
    ),
    kind(
        19,
        "intervals still open at the end of the log",
        "they count up to the end of the window",
    ),
    kind(
        19,
        "regions still open at the end of the log",
        "they count up to the end of the window",
    ),
    kind(
        20,
        "recv without an earlier send to match (same communicator, from its peer, with its tag)",
        "it matches nothing",
    ),
    kind(
        20,
        "recv whose bytes differ from its send's",
        "they match anyway",
    ),
    kind(
        21,
        "sends never received by the end of the log",
        "they match nothing",
    ),
];

/// The first violation of a kind.
#[derive(Debug, Clone)]
struct First {
    /// The event's number (from 1) in the order the sweep saw them; 0 at the end of the log.
    event: u64,
    /// Where the event is in its file, when the sweep read it from a log.
    place: Option<String>,
    /// What happened (thread, time, ...).
    detail: String,
}

/// Violations counted per kind, with the first of each.
#[derive(Debug, Clone)]
pub(crate) struct Violations {
    count: [u64; KINDS.len()],
    first: Vec<(Violation, First)>,
    /// Kinds whose first violation has no place yet (`first[unplaced..]`).
    unplaced: usize,
}

impl Default for Violations {
    fn default() -> Self {
        Violations {
            count: [0; KINDS.len()],
            first: Vec::new(),
            unplaced: 0,
        }
    }
}

impl Violations {
    /// Counts a violation of `kind` at event number `event` (from 1; 0 for what is found at
    /// the end of the log, whose `detail` says how many); `detail` is called for the first of
    /// its kind only.
    #[cold]
    #[inline(never)]
    pub(crate) fn add(&mut self, kind: Violation, event: u64, detail: impl FnOnce() -> String) {
        let count = &mut self.count[kind as usize];
        *count += 1;
        if *count == 1 {
            self.first.push((
                kind,
                First {
                    event,
                    place: None,
                    detail: detail(),
                },
            ));
        }
    }

    /// Whether a first violation waits for its place ([`Violations::place`]).
    #[inline(always)]
    pub(crate) fn unplaced(&self) -> bool {
        self.unplaced < self.first.len()
    }

    /// Gives the first violations found since the last call the place of the current event.
    #[cold]
    #[inline(never)]
    pub(crate) fn place(&mut self, place: &dyn std::fmt::Display) {
        let place = place.to_string();
        for (_, first) in &mut self.first[self.unplaced..] {
            first.place = Some(place.clone());
        }
        self.unplaced = self.first.len();
    }

    /// One line per kind that occurred, in the order of [`KINDS`]:
    /// `rule 6: work_begin inside an open work: 1000 times, first at line 12 (thread 0 at
    /// 100 ns); the innermost interval counts`, or for what is found at the end of the log
    /// `rule 18: threads that started and never stopped (2 threads, first thread 0); ...`.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut firsts: Vec<&(Violation, First)> = self.first.iter().collect();
        firsts.sort_by_key(|(kind, _)| *kind as usize);
        firsts
            .into_iter()
            .map(|(kind, first)| {
                let k = &KINDS[*kind as usize];
                let mut line = format!("rule {}: {}", k.rule, k.what);
                if first.event == 0 {
                    let _ = write!(line, " ({}); {}", first.detail, k.then);
                    return line;
                }
                match self.count[*kind as usize] {
                    1 => line.push_str(": once"),
                    n => {
                        let _ = write!(line, ": {n} times");
                    }
                }
                match &first.place {
                    Some(place) => {
                        let _ = write!(line, ", first at {place} ({})", first.detail);
                    }
                    None => {
                        let _ = write!(line, ", first at event {} ({})", first.event, first.detail);
                    }
                }
                let _ = write!(line, "; {}", k.then);
                line
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_kind_with_its_count_and_first_place() {
        let mut v = Violations::default();
        assert!(!v.unplaced());
        for n in 1..=1000 {
            v.add(Violation::WorkInWork, n, || format!("thread 0 at {n} ns"));
            if v.unplaced() {
                v.place(&format_args!("line {}", n + 1));
            }
        }
        v.add(Violation::StartTwice, 7, || "thread 1 at 5 ns".into());
        v.add(Violation::OpenAtEnd, 0, || {
            "3 intervals, first thread 2's work".into()
        });
        assert_eq!(
            v.lines(),
            [
                "rule 3: start of a thread that already started: once, first at event 7 \
                 (thread 1 at 5 ns); ignored",
                "rule 6: work_begin inside an open work: 1000 times, first at line 2 \
                 (thread 0 at 1 ns); the innermost interval counts",
                "rule 19: intervals still open at the end of the log (3 intervals, first \
                 thread 2's work); they count up to the end of the window",
            ]
        );
    }

    #[test]
    fn every_rule_is_in_the_documentation() {
        let docs = include_str!("../../../docs/event-log.md");
        let section = docs
            .split("## Rules a log must keep")
            .nth(1)
            .expect("docs/event-log.md has the section");
        let last = KINDS.iter().map(|k| k.rule).max().unwrap();
        for rule in 1..=last {
            assert!(section.contains(&format!("\n{rule}. **")), "rule {rule}");
            assert!(KINDS.iter().any(|k| k.rule == rule), "rule {rule}");
        }
        assert!(!section.contains(&format!("\n{}. **", last + 1)));
    }

    #[test]
    fn kinds_follow_the_enum() {
        assert_eq!(KINDS.len(), Violation::SendNeverReceived as usize + 1);
        assert!(KINDS.windows(2).all(|w| w[0].rule <= w[1].rule));
    }
}
