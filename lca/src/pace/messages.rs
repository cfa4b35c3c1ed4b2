//! Messages in the template (docs/pace.md#mpi-programs-messages): a step that is a message
//! exchange between ranks — who sends to whom (a [`Pattern`] over the rank and `p`), how many
//! bytes each message holds (a monomial of the factors, [`Messages::bytes_at`]) — and the
//! network that times them where no machine file does ([`Network`]). An MPI template's
//! evaluation writes each rank's computation and its sends and receives
//! ([`PaceModel::schedule_messages`]); the replay times every matched message by the machine
//! file's `[mpi]` when the hardware names one, else keeps the network's times written here.
//! Where the processors carry the messages ([`super::model::Carrier`]) the schedule writes
//! each message as its receiver's copy, timed here by the machine file or the network.

use std::collections::BTreeMap;
use std::fmt::Write;

use pp::event::{EventKind, WaitKind};

use super::model::{Activity, Carrier, PaceModel, Split};
use super::schedule::{Demands, Shape, cpu_sample, intervals, ns};
use super::template_log::TemplateLog;

/// A rank's receive wait of an exchange, begun and ended.
const RECV_BEGIN: EventKind = EventKind::WaitBegin {
    kind: WaitKind::Recv,
    object: None,
};
const RECV_END: EventKind = EventKind::WaitEnd {
    kind: WaitKind::Recv,
    object: None,
    by: None,
};

/// Who sends to whom in an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Every rank sends one message to every other rank (a transpose).
    AllToAll,
    /// Rank `r` sends to `r + 1` (mod `p`) and receives from `r - 1`.
    RingUp,
    /// Rank `r` sends to `r - 1` (mod `p`) and receives from `r + 1`.
    RingDown,
    /// Ranks `2k` and `2k + 1` exchange one message each (a last odd rank takes no part).
    Pairs,
}

impl Pattern {
    /// Every pattern, in the order the builder tries them.
    pub const ALL: [Pattern; 4] = [
        Pattern::AllToAll,
        Pattern::RingUp,
        Pattern::RingDown,
        Pattern::Pairs,
    ];

    /// The name in the file.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::AllToAll => "all-to-all",
            Pattern::RingUp => "ring-up",
            Pattern::RingDown => "ring-down",
            Pattern::Pairs => "pairs",
        }
    }

    /// The pattern a file's name stands for.
    pub fn parse(name: &str) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The ranks `rank` sends to at `p` ranks, in increasing order (one message each). As
    /// defined, a ring of one rank sends to itself: `(0 + 1) mod 1` is 0, as the program's
    /// `MPI_Sendrecv` to `(r + 1) % p` does on one rank; the others send nothing there.
    pub fn to(self, rank: u32, p: u32) -> Vec<u32> {
        if p == 0 {
            return Vec::new();
        }
        match self {
            Pattern::AllToAll => (0..p).filter(|&d| d != rank).collect(),
            Pattern::RingUp => vec![(rank + 1) % p],
            Pattern::RingDown => vec![(rank + p - 1) % p],
            Pattern::Pairs => {
                let peer = rank ^ 1;
                if peer < p { vec![peer] } else { Vec::new() }
            }
        }
    }

    /// The ranks `rank` receives from at `p` ranks, in increasing order.
    pub fn from(self, rank: u32, p: u32) -> Vec<u32> {
        if p == 0 {
            return Vec::new();
        }
        match self {
            Pattern::AllToAll => (0..p).filter(|&s| s != rank).collect(),
            Pattern::RingUp => vec![(rank + p - 1) % p],
            Pattern::RingDown => vec![(rank + 1) % p],
            Pattern::Pairs => Pattern::Pairs.to(rank, p),
        }
    }

    /// The messages of one exchange at `p` ranks.
    pub fn count(self, p: u32) -> u64 {
        let p = u64::from(p);
        match self {
            _ if p == 0 => 0,
            Pattern::AllToAll => p * (p - 1),
            Pattern::RingUp | Pattern::RingDown => p,
            Pattern::Pairs => p / 2 * 2,
        }
    }

    /// The bit set of the patterns whose messages at `p` ranks are exactly `pairs`
    /// (sender, receiver; bit `i` for `Pattern::ALL[i]`): at `p = 2` all four are the same,
    /// and at `p = 1` the two rings (a rank's message to itself). From two ranks on, no pattern
    /// sends a rank to itself, so such a message (a copy through MPI within the rank, beside an
    /// exchange's others) is left out.
    pub fn fitting(pairs: &[(u32, u32)], p: u32) -> u8 {
        let mut seen: Vec<(u32, u32)> = pairs
            .iter()
            .copied()
            .filter(|(a, b)| p < 2 || a != b)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        let mut mask = 0;
        for (i, pattern) in Pattern::ALL.into_iter().enumerate() {
            let mut want: Vec<(u32, u32)> = (0..p)
                .flat_map(|r| pattern.to(r, p).into_iter().map(move |d| (r, d)))
                .collect();
            want.sort_unstable();
            if !want.is_empty() && want == seen {
                mask |= 1 << i;
            }
        }
        mask
    }
}

/// A step's messages: the pattern and each message's size.
#[derive(Debug, Clone, PartialEq)]
pub struct Messages {
    /// Who sends to whom.
    pub pattern: Pattern,
    /// The size's constant: a message holds `bytes * product(value(f) ^ power(f))` bytes.
    pub bytes: f64,
    /// The size's power of each factor or held column named (`n = 2, p = -2`).
    pub powers: BTreeMap<String, f64>,
}

impl Messages {
    /// Bytes of each message at a point, rounded to a whole number; `None` where a name has
    /// no value or the size is not finite.
    pub fn bytes_at(&self, model: &PaceModel, point: &[f64]) -> Option<u64> {
        let mut b = self.bytes;
        for (name, power) in &self.powers {
            b *= model.value(name, point)?.powf(*power);
        }
        (0.0..1e18).contains(&b).then(|| b.round() as u64)
    }

    /// The formula, as the notes and the reports write it: `16 * n^2 * p^-2`.
    pub fn formula(&self) -> String {
        let mut s = files::quote::number(self.bytes);
        for (name, power) in &self.powers {
            let _ = write!(s, " * {name}^{}", files::quote::number(*power));
        }
        s
    }
}

/// A network's latency and bandwidth: a message of `b` bytes takes `alpha_s + b / bytes_per_s`
/// from its send to its receive, fitted from the logs' own messages (`lca pace build`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Network {
    /// Seconds a message takes whatever its size.
    pub alpha_s: f64,
    /// Bytes a second.
    pub bytes_per_s: f64,
}

impl Network {
    /// Seconds a message of `bytes` takes.
    pub fn time_s(&self, bytes: u64) -> f64 {
        self.alpha_s + bytes as f64 / self.bytes_per_s
    }
}

impl PaceModel {
    /// Whether a step of the template is a message exchange (an MPI template).
    pub fn has_messages(&self) -> bool {
        self.template.iter().any(|s| s.messages.is_some())
    }

    /// Whether every exchange's size has a value at a point (a whole number of bytes below
    /// 10^18), else which does not.
    pub fn check_sizes(&self, point: &[f64]) -> Result<(), String> {
        for s in &self.template {
            if let Some(m) = &s.messages
                && m.bytes_at(self, point).is_none()
            {
                return Err(format!(
                    "template '{}': its messages' size, {} bytes, is not a number of bytes here",
                    s.region,
                    m.formula()
                ));
            }
        }
        Ok(())
    }

    /// Messages of one iteration at `p` ranks.
    pub fn messages_per_iteration(&self, p: u32) -> u64 {
        self.template
            .iter()
            .filter_map(|s| s.messages.as_ref())
            .map(|m| m.pattern.count(p))
            .sum()
    }

    /// The log of `shape.replayed` iterations at a point of an MPI template, each rank on
    /// its own processor: one `mpi` region around the loop (the MPI tracer records one around
    /// the run; the time before and after the loop is kept outside it, idle), each
    /// rank's share of a computing step as `work`, and each exchange as a receive wait that
    /// begins 1 ns before the rank's sends and ends when its last message arrives
    /// (`hardware.network`'s time from its send, 1 ns without one), the receives as matched. No forks, joins or
    /// hand-offs: ranks wait for each other only through messages.
    ///
    /// With [`Carrier::Processors`] the wait ends at the last send (1 ns after it), and the
    /// rank then copies each message it received for that message's time (by `mpi`, the
    /// machine file's table, else by the network), as one `comm` interval: past the cores the
    /// copies share the cores with the computation.
    pub fn schedule_messages(
        &self,
        point: &[f64],
        shape: &Shape,
        demands: &Demands,
        mpi: Option<&pp::machine::Mpi>,
    ) -> TemplateLog {
        let p = shape.p;
        let mut log = TemplateLog::new(self.log_header(point, p));
        for t in 0..p {
            log.push(0, t, EventKind::Start);
            log.push(0, t, cpu_sample(0, 0));
        }
        // The time around the loop is outside the region (idle: ip), as the evaluation's
        // scaling takes it, which keeps it once.
        let start = (self.application.startup_s * 1e9).round().max(1.0);
        let name = log.name("mpi");
        log.push(
            ns(start) - 1,
            0,
            EventKind::RegionBegin {
                id: 0,
                name,
                team: None,
            },
        );
        let regions: Vec<_> = self.template.iter().map(|s| log.name(&s.region)).collect();
        let mut clock = vec![start; p as usize];
        let stretch = self.hardware.stretch(p);
        let mut cpu = vec![(0u64, 0u64); p as usize];
        let sizes: Vec<Option<u64>> = self
            .template
            .iter()
            .map(|s| {
                s.messages
                    .as_ref()
                    .map(|m| m.bytes_at(self, point).unwrap_or(0))
            })
            .collect();
        // Each exchange's peers of every rank: (to, from).
        let peers: Vec<Vec<(Vec<u32>, Vec<u32>)>> = self
            .template
            .iter()
            .map(|s| match &s.messages {
                Some(m) => (0..p)
                    .map(|t| (m.pattern.to(t, p), m.pattern.from(t, p)))
                    .collect(),
                None => Vec::new(),
            })
            .collect();
        for _ in 0..shape.replayed {
            for (k, step) in self.template.iter().enumerate() {
                if let (Some(_), Some(bytes)) = (&step.messages, sizes[k]) {
                    let time = match (mpi, self.hardware.network) {
                        (Some(mpi), _) => mpi.ideal_message_ns(bytes) as f64,
                        (None, Some(n)) => n.time_s(bytes) * 1e9,
                        (None, None) => 1.0,
                    }
                    .max(1.0);
                    let (transfer, copy) = match self.hardware.carrier {
                        Carrier::Network => (time, 0.0),
                        Carrier::Processors => (1.0, time),
                    };
                    // Each rank's receive wait begins where its sends do, 1 ns before them:
                    // the replay takes a message as what ended a wait only when it was sent
                    // after the wait began, and only then lets the network's time, shorter or
                    // longer, decide when the wait ends (docs/whatif.md#the-network-rule).
                    let sent: Vec<f64> = clock.iter().map(|c| c + 1.0).collect();
                    for t in 0..p {
                        let (to, from) = &peers[k][t as usize];
                        if !from.is_empty() {
                            log.push(ns(clock[t as usize]), t, RECV_BEGIN);
                        }
                        for &peer in to {
                            let kind = EventKind::Send {
                                peer,
                                tag: k as u32,
                                bytes,
                                comm: None,
                            };
                            log.push(ns(sent[t as usize]), t, kind);
                        }
                    }
                    for t in 0..p {
                        let from = &peers[k][t as usize].1;
                        if from.is_empty() {
                            clock[t as usize] = sent[t as usize] + 1.0;
                            continue;
                        }
                        let arrival = from
                            .iter()
                            .map(|&s| sent[s as usize] + transfer)
                            .fold(sent[t as usize] + 1.0, f64::max);
                        for &peer in from {
                            let kind = EventKind::Recv {
                                peer,
                                tag: k as u32,
                                bytes,
                                comm: None,
                            };
                            log.push(ns(arrival), t, kind);
                        }
                        log.push(ns(arrival), t, RECV_END);
                        clock[t as usize] = arrival + 1.0;
                        if copy > 0.0 {
                            let from_t = clock[t as usize];
                            let to_t = from_t + copy * from.len() as f64;
                            let (b, e) = intervals(Activity::Comm, name);
                            log.push(ns(from_t), t, b);
                            log.push(ns(to_t), t, e);
                            clock[t as usize] = to_t + 1.0;
                        }
                    }
                    continue;
                }
                if step.activity == Activity::Wait {
                    continue;
                }
                let members = step.members.threads(p);
                let m = members.len() as f64;
                let units = match &step.split {
                    Split::Equal => None,
                    Split::Chunks { units } => self
                        .value(units, point)
                        .filter(|u| *u >= 1.0)
                        .map(f64::floor),
                };
                for (j, t) in members.enumerate() {
                    let share = match units {
                        None => 1.0 / m,
                        Some(u) => ((u / m).floor() + f64::from(((j as f64) < u % m) as u8)) / u,
                    };
                    let busy = demands.per_iteration_s[k] * share * 1e9;
                    if busy <= 0.0 {
                        continue;
                    }
                    let from = clock[t as usize];
                    let (b, e) = intervals(step.activity, regions[k]);
                    log.push(ns(from), t, b);
                    log.push(ns(from + busy), t, e);
                    if step.activity == Activity::Work {
                        let length = ns(from + busy) - ns(from);
                        let used = (((length as f64) / stretch).round() as u64).min(length);
                        let (c, d) = &mut cpu[t as usize];
                        *c += used;
                        *d += length - used;
                    }
                    clock[t as usize] = from + busy + 1.0;
                }
            }
        }
        let last = clock.iter().copied().fold(start, f64::max);
        log.push(ns(last), 0, EventKind::RegionEnd { id: 0 });
        self.close_log(log, &cpu, last)
    }
}

/// The monomial `c * product(x_f ^ e_f)` through sizes seen at several points: each power the
/// least-squares slope of `ln bytes` on `ln x_f`, rounded to a whole number, then `c` the
/// median of `bytes / product(x_f ^ e_f)`, rounded to a whole number where within 1% of one.
/// `None` where the monomial misses a size by more than 1%, or a size or a value is not
/// positive. `names` are the candidates (factors and held columns that vary); `points` gives
/// each point's values of them in that order and its bytes.
pub fn fit_bytes(
    names: &[String],
    points: &[(Vec<f64>, f64)],
) -> Option<(f64, BTreeMap<String, f64>)> {
    if points.is_empty()
        || points
            .iter()
            .any(|(x, b)| b.is_nan() || *b <= 0.0 || x.iter().any(|v| v.is_nan() || *v <= 0.0))
    {
        return None;
    }
    // Least squares of ln b on the ln x that vary, by the normal equations.
    let varying: Vec<usize> = (0..names.len())
        .filter(|&i| points.iter().any(|(x, _)| x[i] != points[0].0[i]))
        .collect();
    let k = varying.len();
    let mut powers = vec![0.0; names.len()];
    if k > 0 {
        let rows: Vec<(Vec<f64>, f64)> = points
            .iter()
            .map(|(x, b)| {
                let mut r: Vec<f64> = varying.iter().map(|&i| x[i].ln()).collect();
                r.push(1.0);
                (r, b.ln())
            })
            .collect();
        let solution = least_squares(&rows)?;
        for (j, &i) in varying.iter().enumerate() {
            powers[i] = solution[j].round();
        }
    }
    let product = |x: &[f64]| -> f64 {
        x.iter()
            .zip(&powers)
            .map(|(v, e)| v.powf(*e))
            .product::<f64>()
    };
    let mut ratios: Vec<f64> = points.iter().map(|(x, b)| b / product(x)).collect();
    ratios.sort_by(f64::total_cmp);
    let mut c = ratios[ratios.len() / 2];
    if (c - c.round()).abs() <= 0.01 * c {
        c = c.round();
    }
    let fits = points
        .iter()
        .all(|(x, b)| ((c * product(x)) - b).abs() <= 0.01 * b);
    fits.then(|| {
        (
            c,
            names
                .iter()
                .zip(&powers)
                .filter(|(_, e)| **e != 0.0)
                .map(|(n, e)| (n.clone(), *e))
                .collect(),
        )
    })
}

/// The least-squares coefficients of `y` on the columns of `rows` (each `(x, y)`), by the
/// normal equations and Gaussian elimination with partial pivoting; `None` where they are
/// singular (a column a combination of the others).
fn least_squares(rows: &[(Vec<f64>, f64)]) -> Option<Vec<f64>> {
    let k = rows.first()?.0.len();
    let mut m = vec![vec![0.0; k + 1]; k];
    for (x, y) in rows {
        for i in 0..k {
            for j in 0..k {
                m[i][j] += x[i] * x[j];
            }
            m[i][k] += x[i] * y;
        }
    }
    for c in 0..k {
        let pivot = (c..k).max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs()))?;
        if m[pivot][c].abs() < 1e-12 {
            return None;
        }
        m.swap(c, pivot);
        let pivot_row = m[c].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot_row[c];
                for (x, y) in row.iter_mut().zip(&pivot_row).skip(c) {
                    *x -= f * y;
                }
            }
        }
    }
    Some((0..k).map(|i| m[i][k] / m[i][i]).collect())
}

/// The network through each log's (bytes, transfer seconds) medians: least squares of the
/// transfer on the bytes, the intercept at least 0 and the slope positive; a single size gives
/// its transfer as the latency and an unbounded bandwidth. `None` without any.
pub fn fit_network(points: &[(f64, f64)]) -> Option<Network> {
    if points.is_empty() {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    if slope > 0.0 {
        let alpha = my - slope * mx;
        if alpha >= 0.0 {
            return Some(Network {
                alpha_s: alpha,
                bytes_per_s: 1.0 / slope,
            });
        }
        // Through the origin where the intercept would be negative.
        let sxy0: f64 = points.iter().map(|(x, y)| x * y).sum();
        let sxx0: f64 = points.iter().map(|(x, _)| x * x).sum();
        if sxx0 > 0.0 && sxy0 > 0.0 {
            return Some(Network {
                alpha_s: 0.0,
                bytes_per_s: sxx0 / sxy0,
            });
        }
    }
    Some(Network {
        alpha_s: my.max(0.0),
        bytes_per_s: f64::INFINITY,
    })
}

/// One exchange a rank took part in, as the logs show it (`super::detect`): the messages it
/// sent and received between two of its computations.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exchange {
    /// (receiver, bytes) of each message sent.
    pub sent: Vec<(u32, u64)>,
    /// (sender, bytes) of each message received.
    pub received: Vec<(u32, u64)>,
    /// From the later of the receive wait's begin and the last of its messages' sends to the
    /// wait's end, ns: the transfer the rank waited for (`None` without a receive wait).
    pub transfer_ns: Option<u64>,
    /// Its first event (a send or a receive wait's begin), ns in the log's clock.
    pub begin_ns: u64,
    /// Its last (the receive wait's end, else its last message), ns in the log's clock.
    pub end_ns: u64,
}
