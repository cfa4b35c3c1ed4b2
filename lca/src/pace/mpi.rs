//! The template of an MPI program's logs (docs/pace.md#mpi-programs-messages): the loop is the
//! ranks' message exchanges ([`super::detect`] splits each rank's messages into exchanges);
//! each exchange of an iteration gets its pattern (who sends to whom, over the rank and `p`)
//! and its messages' size as a monomial of the factors, after a step of the ranks'
//! computation before it; the network is fitted from the transfers the receive waits show.

use std::collections::BTreeMap;

use anyhow::{Result, bail};

use super::detect::LogSeen;
use super::messages::{Messages, Network, Pattern, fit_bytes, fit_network};
use super::model::{Activity, Application, Members, Split, Step};

/// One log, as the builder holds it.
pub struct Seen<'a> {
    /// Its file.
    pub name: &'a str,
    /// Its structure.
    pub seen: &'a LogSeen,
    /// Its parameters' numbers (factors, held columns).
    pub values: &'a BTreeMap<String, f64>,
}

/// What an MPI study gives the model.
pub struct MpiTemplate {
    /// The steps: for each exchange of an iteration, the ranks' computation before it, then
    /// the exchange.
    pub template: Vec<Step>,
    /// The loop's count and the time around it.
    pub application: Application,
    /// The network fitted from the logs' messages, when any transfer was seen.
    pub network: Option<Network>,
    /// Per log, in order: each computing step's region, the logs' region it is part of, and
    /// its share of that region's computation (1 with one exchange an iteration).
    pub shares: Vec<BTreeMap<String, (String, f64)>>,
}

/// The most exchanges an iteration may have (a longer period is not looked for).
pub const MAX_PERIOD: usize = 64;

/// The template of MPI logs (every one with messages).
pub fn derive(
    runs: &[Seen<'_>],
    factors: &[String],
    held: &BTreeMap<String, f64>,
    replayed: u32,
    cores: u32,
    notes: &mut Vec<String>,
) -> Result<MpiTemplate> {
    // The computation's region: the tracer's one region around the run.
    let region = {
        let names: Vec<&String> = runs[0].seen.regions.keys().collect();
        if names.len() != 1 || runs.iter().any(|r| r.seen.regions.len() != 1) {
            bail!(
                "{}: messages between ranks and regions {:?}: a template of messages takes the MPI tracer's logs (one region, mpi), not hybrid MPI + OpenMP ones",
                runs[0].name,
                names
            );
        }
        names[0].clone()
    };
    // Each log's exchanges, instance by instance: which patterns fit, and the median bytes.
    let mut per_log: Vec<(Vec<u8>, Vec<u64>)> = Vec::new();
    for r in runs {
        let x = &r.seen.exchanges;
        let count = x.first().map_or(0, Vec::len);
        if count == 0 || x.len() != r.seen.p as usize {
            bail!(
                "{}: rank 0 exchanged no message: a template of messages needs every rank's",
                r.name
            );
        }
        if let Some((rank, other)) = x.iter().enumerate().find(|(_, e)| e.len() != count) {
            bail!(
                "{}: rank {rank} took part in {} message exchanges and rank 0 in {count}: no loop of exchanges common to the ranks",
                r.name,
                other.len()
            );
        }
        let mut masks = Vec::with_capacity(count);
        let mut sizes = Vec::with_capacity(count);
        for k in 0..count {
            let pairs: Vec<(u32, u32)> = x
                .iter()
                .enumerate()
                .flat_map(|(rank, e)| e[k].sent.iter().map(move |(d, _)| (rank as u32, *d)))
                .collect();
            let mask = Pattern::fitting(&pairs, r.seen.p);
            if mask == 0 {
                let mut shown: Vec<String> = pairs
                    .iter()
                    .take(6)
                    .map(|(a, b)| format!("{a}->{b}"))
                    .collect();
                if pairs.len() > 6 {
                    shown.push("...".into());
                }
                bail!(
                    "{}: exchange {} of the ranks: its messages ({}) follow none of the patterns {}",
                    r.name,
                    k + 1,
                    shown.join(" "),
                    Pattern::ALL.map(Pattern::name).join(", ")
                );
            }
            masks.push(mask);
            let mut b: Vec<u64> = x
                .iter()
                .flat_map(|e| e[k].sent.iter().map(|(_, b)| *b))
                .collect();
            b.sort_unstable();
            sizes.push(b[b.len() / 2]);
        }
        per_log.push((masks, sizes));
    }
    // The period: the fewest exchanges an iteration can have, the same in every log.
    let period = (1..=MAX_PERIOD)
        .find(|&l| {
            per_log
                .iter()
                .all(|(m, s)| m.len() % l == 0 && periodic(m, s, l).is_some())
        })
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the ranks' exchanges repeat with no period of at most {MAX_PERIOD} common to every log (their patterns or sizes change along the run)"
            )
        })?;
    // The computation before each exchange of an iteration: one step with period 1 (the
    // region's name); else `<region>.<j>`, each its share of the region's computation in
    // proportion to the ranks' time between the exchanges before and at it.
    let compute_name = |j: usize| {
        if period == 1 {
            region.clone()
        } else {
            format!("{region}.{}", j + 1)
        }
    };
    let mut shares: Vec<BTreeMap<String, (String, f64)>> = Vec::with_capacity(runs.len());
    for r in runs {
        // The mean time before each exchange of an iteration (the first exchange of the run
        // has none before it).
        let (mut gaps, mut counts) = (vec![0.0f64; period], vec![0u64; period]);
        for e in &r.seen.exchanges {
            for k in 1..e.len() {
                gaps[k % period] += e[k].begin_ns.saturating_sub(e[k - 1].end_ns) as f64;
                counts[k % period] += 1;
            }
        }
        for (g, c) in gaps.iter_mut().zip(&counts) {
            *g /= (*c).max(1) as f64;
        }
        let total: f64 = gaps.iter().sum();
        shares.push(
            (0..period)
                .map(|j| {
                    let share = if total > 0.0 {
                        gaps[j] / total
                    } else {
                        1.0 / period as f64
                    };
                    (compute_name(j), (region.clone(), share))
                })
                .collect(),
        );
    }
    if period > 1 {
        notes.push(format!(
            "an iteration has {period} exchanges; the ranks' computation '{region}' is split among the steps before them in proportion to the ranks' time between the exchanges"
        ));
    }
    let mut template = Vec::new();
    for j in 0..period {
        let mask = per_log
            .iter()
            .map(|(m, s)| periodic(m, s, period).expect("checked")[j].0)
            .fold(u8::MAX, |a, b| a & b);
        let Some(pattern) = Pattern::ALL
            .into_iter()
            .enumerate()
            .find(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, p)| p)
        else {
            bail!(
                "exchange {} of an iteration follows different patterns in different logs",
                j + 1
            );
        };
        let names: Vec<String> = factors.to_vec();
        let points: Vec<(Vec<f64>, f64)> = runs
            .iter()
            .zip(&per_log)
            .map(|(r, (m, s))| {
                let b = periodic(m, s, period).expect("checked")[j].1;
                (names.iter().map(|f| r.values[f]).collect(), b as f64)
            })
            .collect();
        let Some((bytes, powers)) = fit_bytes(&names, &points) else {
            let shown: Vec<String> = runs
                .iter()
                .zip(&points)
                .map(|(r, (_, b))| {
                    let at: Vec<String> = factors
                        .iter()
                        .map(|f| format!("{f}={}", r.values[f]))
                        .collect();
                    format!("{b} B at {}", at.join(","))
                })
                .collect();
            bail!(
                "exchange {} of an iteration: its messages' sizes ({}) are not a constant times powers of the factors",
                j + 1,
                shown.join("; ")
            );
        };
        let messages = Messages {
            pattern,
            bytes,
            powers,
        };
        let ambiguous = Pattern::ALL
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .count()
            > 1;
        notes.push(format!(
            "exchange '{}': {} messages of {} bytes (seen in every log{})",
            step_name(j, period),
            pattern.name(),
            messages.formula(),
            if ambiguous {
                "; other patterns fit the logs as well, at their p, and the first was taken"
            } else {
                ""
            }
        ));
        template.push(Step {
            region: compute_name(j),
            members: Members::All,
            activity: Activity::Work,
            split: Split::Equal,
            waits_for: None,
            messages: None,
        });
        template.push(Step {
            region: step_name(j, period),
            members: Members::All,
            activity: Activity::Wait,
            split: Split::Equal,
            waits_for: None,
            messages: Some(messages),
        });
    }
    // The loop's count.
    let counts: Vec<f64> = per_log
        .iter()
        .map(|(m, _)| (m.len() / period) as f64)
        .collect();
    let values: Vec<_> = runs.iter().map(|r| r.values).collect();
    let Some(iterations) = super::build::loop_count(&values, factors, held, &counts) else {
        bail!(
            "the ranks' exchanges repeat a different number of times in different logs, and no parameter says how many"
        )
    };
    // Around the loop: from the run's first event to the ranks' first exchange less one
    // iteration's computation, and from their last exchange to the run's end.
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (mut startup, mut teardown) = (Vec::new(), Vec::new());
    for r in runs {
        let x = &r.seen.exchanges;
        let firsts: Vec<f64> = x.iter().map(|e| e[0].begin_ns as f64).collect();
        let lasts: Vec<f64> = x.iter().map(|e| e[e.len() - 1].end_ns as f64).collect();
        let gaps: Vec<f64> = x
            .iter()
            .flat_map(|e| {
                e.windows(period + 1)
                    .step_by(period)
                    .map(|w| w[period].begin_ns.saturating_sub(w[period - 1].end_ns) as f64)
            })
            .collect();
        startup.push((mean(&firsts) - r.seen.first_ns as f64 - mean(&gaps)).max(0.0) * 1e-9);
        teardown.push((r.seen.last_ns as f64 - mean(&lasts)).max(0.0) * 1e-9);
    }
    // The network: each log's median transfer against its messages' size, from the logs with
    // a core per rank where there are any; never from one rank's (its messages, if any, are
    // to itself: copies in its memory, not the network's).
    let between: Vec<usize> = (0..runs.len()).filter(|&i| runs[i].seen.p >= 2).collect();
    let alone: Vec<usize> = between
        .iter()
        .copied()
        .filter(|&i| runs[i].seen.p <= cores)
        .collect();
    let used: Vec<usize> = if alone.is_empty() { between } else { alone };
    let mut points = Vec::new();
    for &i in &used {
        for j in 0..period {
            let (m, s) = &per_log[i];
            let mut t: Vec<u64> = runs[i]
                .seen
                .exchanges
                .iter()
                .flat_map(|e| {
                    e.iter()
                        .skip(j)
                        .step_by(period)
                        .filter_map(|x| x.transfer_ns)
                })
                .collect();
            if t.is_empty() {
                continue;
            }
            t.sort_unstable();
            let b = periodic(m, s, period).expect("checked")[j].1;
            points.push((b as f64, t[t.len() / 2] as f64 * 1e-9));
        }
    }
    let network = fit_network(&points);
    if let Some(n) = network {
        notes.push(format!(
            "hardware.network: fitted from the receive waits of {} log(s){} (each wait from its last message's send to its end, the median per log): {:.2} us + bytes / {:.1} MB/s; a machine file's [mpi] times the messages instead (lca pace predict --machine)",
            used.len(),
            if used.len() < runs.len() {
                " with a core per rank"
            } else {
                ""
            },
            n.alpha_s * 1e6,
            n.bytes_per_s * 1e-6
        ));
    }
    Ok(MpiTemplate {
        template,
        application: Application {
            iterations,
            startup_s: mean(&startup),
            teardown_s: mean(&teardown),
            replayed,
        },
        network,
        shares,
    })
}

/// Per exchange of an iteration of `period`: the patterns that fit every instance, and the
/// size every instance has; `None` where an instance fits none of them or has another size.
fn periodic(masks: &[u8], sizes: &[u64], period: usize) -> Option<Vec<(u8, u64)>> {
    let mut out: Vec<(u8, u64)> = (0..period).map(|j| (masks[j], sizes[j])).collect();
    for (k, (m, s)) in masks.iter().zip(sizes).enumerate() {
        let o = &mut out[k % period];
        o.0 &= m;
        if o.0 == 0 || o.1 != *s {
            return None;
        }
    }
    Some(out)
}

/// The name of the `j`-th exchange of an iteration of `period`.
fn step_name(j: usize, period: usize) -> String {
    if period == 1 {
        "exchange".into()
    } else {
        format!("exchange.{}", j + 1)
    }
}
