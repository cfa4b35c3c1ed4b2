//! Clustering a thread's steps under a similarity threshold (docs/skeletons.md#clustering):
//! two steps are alike when their operations are the same (kind, peer, tag, collective, object)
//! and their computation times and byte counts each differ by at most the threshold, relative
//! to the larger. Leader clustering: a step joins the first cluster, in order of creation, whose
//! first step it is like; otherwise it starts a new cluster. Steps in different regions are never
//! alike ([`Places`]).

use std::collections::BTreeSet;

use anyhow::Result;

use super::record::Rec;
use super::steps::Op;
use crate::profile::sweep::IdMap;

/// One cluster: its operation and the sums over its members.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// The operation every member does.
    pub op: Op,
    /// Members.
    pub count: u64,
    /// Sum of the members' computation times (ns).
    pub compute_ns: u128,
    /// Sum of the members' bytes.
    pub bytes: u128,
    /// Sum of the members' operation times (ns).
    pub op_ns: u128,
    /// Sum of the members' computation CPU times (ns).
    pub cpu_ns: u128,
    /// Sum of the members' operation CPU times (ns).
    pub op_cpu_ns: u128,
}

impl Cluster {
    /// The members' mean computation time (ns).
    pub fn mean_compute_ns(&self) -> f64 {
        self.compute_ns as f64 / self.count as f64
    }
    /// The members' mean bytes.
    pub fn mean_bytes(&self) -> f64 {
        self.bytes as f64 / self.count as f64
    }
    /// The members' mean computation CPU time (ns).
    pub fn mean_cpu_ns(&self) -> f64 {
        self.cpu_ns as f64 / self.count as f64
    }
    /// The members' mean operation time (ns).
    pub fn mean_op_ns(&self) -> f64 {
        self.op_ns as f64 / self.count as f64
    }
    /// The members' mean operation CPU time (ns).
    pub fn mean_op_cpu_ns(&self) -> f64 {
        self.op_cpu_ns as f64 / self.count as f64
    }
}

/// Whether `a` and `b` differ by at most `threshold` of the larger.
pub fn alike(a: u64, b: u64, threshold: f64) -> bool {
    a.abs_diff(b) as f64 <= threshold * a.max(b) as f64
}

/// Leader clustering of one thread's steps, one at a time.
pub struct Leaders {
    threshold: f64,
    /// Per operation number, its clusters' leaders by computation time, so that a step looks
    /// only at leaders within the threshold of its own time.
    by_op: Vec<BTreeSet<(u64, u32)>>,
    /// Per cluster, its first member's computation time and bytes.
    leader: Vec<(u64, u64)>,
}

impl Leaders {
    /// No clusters yet, under `threshold`.
    pub fn new(threshold: f64) -> Self {
        Leaders {
            threshold,
            by_op: Vec::new(),
            leader: Vec::new(),
        }
    }

    /// How many clusters there are.
    pub fn len(&self) -> usize {
        self.leader.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.leader.is_empty()
    }

    /// The cluster of a step of operation (or place: [`Places`]) number `op` (a new one if it is
    /// like no leader).
    pub fn id(&mut self, op: u32, compute_ns: u64, bytes: u64) -> u32 {
        let threshold = self.threshold;
        let op = op as usize;
        if self.by_op.len() <= op {
            self.by_op.resize_with(op + 1, BTreeSet::new);
        }
        let leaders = &mut self.by_op[op];
        let lo = (compute_ns as f64 * (1.0 - threshold)).floor().max(0.0) as u64;
        let hi = (compute_ns as f64 / (1.0 - threshold).max(f64::MIN_POSITIVE)).ceil();
        let hi = if hi >= u64::MAX as f64 {
            u64::MAX
        } else {
            hi as u64
        };
        let all = &self.leader;
        let found = leaders
            .range((lo, 0)..=(hi, u32::MAX))
            .map(|&(_, i)| i)
            .filter(|&i| {
                let (c, b) = all[i as usize];
                alike(c, compute_ns, threshold) && alike(b, bytes, threshold)
            })
            .min();
        match found {
            Some(i) => i,
            None => {
                let i = self.leader.len() as u32;
                self.leader.push((compute_ns, bytes));
                leaders.insert((compute_ns, i));
                i
            }
        }
    }
}

/// Where a thread's steps lie: the region open around each (its `region_begin` or `part_begin`),
/// so that steps of one operation in different regions are never alike, even at threshold 1
/// (docs/skeletons.md#clustering). An OpenMP log names every region's closing barrier
/// `implicit_barrier`; clustered by their operations alone, the OpenMP example's barriers of its
/// three regions were one cluster, so its skeleton spread one region's imbalance over all three.
#[derive(Default)]
struct Places {
    /// The operation numbers of the regions open, innermost last.
    open: Vec<u32>,
    /// Each (operation, region) pair's number, keyed by the two in one word: what the leaders
    /// are looked up by. One lookup a step, so with the sweep's hasher, not SipHash, which made
    /// `pp signature --scale 10` about a sixth slower (docs/results.md).
    keys: IdMap<u64, u32>,
}

impl Places {
    /// The number of a step of operation number `op` where it lies (a region's begin lies in
    /// what is around the region, its end inside it).
    fn key(&mut self, op: u32, ops: &[Op]) -> u32 {
        let region = self.open.last().copied().unwrap_or(u32::MAX);
        match ops.get(op as usize) {
            Some(Op::RegionBegin { .. } | Op::PartBegin { .. }) => self.open.push(op),
            Some(Op::RegionEnd | Op::PartEnd) => {
                self.open.pop();
            }
            _ => {}
        }
        let next = self.keys.len() as u32;
        *self
            .keys
            .entry(u64::from(op) << 32 | u64::from(region))
            .or_insert(next)
    }
}

/// Clusters a thread's records (`each` calls its argument with every one, in order) under
/// `threshold`: returns the clusters (with their members' sums; `ops` names the operations)
/// and each step's cluster.
pub fn cluster(
    each: impl FnOnce(&mut dyn FnMut(Rec)) -> Result<()>,
    threshold: f64,
    ops: &[Op],
) -> Result<(Vec<Cluster>, Vec<u32>)> {
    let mut leaders = Leaders::new(threshold);
    let mut places = Places::default();
    let mut clusters: Vec<Cluster> = Vec::new();
    let mut ids = Vec::new();
    each(&mut |s: Rec| {
        let id = leaders.id(places.key(s.op, ops), s.compute_ns, s.bytes);
        if id as usize == clusters.len() {
            clusters.push(Cluster {
                op: ops[s.op as usize].clone(),
                count: 0,
                compute_ns: 0,
                bytes: 0,
                op_ns: 0,
                cpu_ns: 0,
                op_cpu_ns: 0,
            });
        }
        let c = &mut clusters[id as usize];
        c.count += 1;
        c.compute_ns += u128::from(s.compute_ns);
        c.bytes += u128::from(s.bytes);
        c.op_ns += u128::from(s.op_ns);
        c.cpu_ns += u128::from(s.cpu_ns);
        c.op_cpu_ns += u128::from(s.op_cpu_ns);
        ids.push(id);
    })?;
    Ok((clusters, ids))
}

/// Each step's cluster alone (no sums): what the threshold search needs.
pub fn ids(
    each: impl FnOnce(&mut dyn FnMut(Rec)) -> Result<()>,
    threshold: f64,
    ops: &[Op],
) -> Result<Vec<u32>> {
    let mut leaders = Leaders::new(threshold);
    let mut places = Places::default();
    let mut ids = Vec::new();
    each(&mut |s: Rec| ids.push(leaders.id(places.key(s.op, ops), s.compute_ns, s.bytes)))?;
    Ok(ids)
}
