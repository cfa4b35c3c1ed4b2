//! Clustering a thread's steps under a similarity threshold (docs/skeletons.md#clustering):
//! two steps are alike when their operations are the same (kind, peer, tag, collective, object)
//! and their computation times and byte counts each differ by at most the threshold, relative
//! to the larger. Leader clustering: a step joins the first cluster, in order of creation, whose
//! first step it is like; otherwise it starts a new cluster.

use std::collections::{BTreeMap, HashMap};

use super::steps::{Op, Step};

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
    /// The first member's computation time and bytes, which others are compared with.
    leader: (u64, u64),
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
}

/// Whether `a` and `b` differ by at most `threshold` of the larger.
pub fn alike(a: u64, b: u64, threshold: f64) -> bool {
    a.abs_diff(b) as f64 <= threshold * a.max(b) as f64
}

/// Clusters `steps`; returns the clusters and each step's cluster index.
pub fn cluster(steps: &[Step], threshold: f64) -> (Vec<Cluster>, Vec<u32>) {
    let mut clusters: Vec<Cluster> = Vec::new();
    // Per operation, the clusters' leaders by computation time, so that a step looks only at
    // leaders within the threshold of its own time.
    let mut by_op: HashMap<&Op, BTreeMap<(u64, u32), ()>> = HashMap::new();
    let mut ids = Vec::with_capacity(steps.len());
    for s in steps {
        let leaders = by_op.entry(&s.op).or_default();
        let lo = (s.compute_ns as f64 * (1.0 - threshold)).floor().max(0.0) as u64;
        let hi = (s.compute_ns as f64 / (1.0 - threshold).max(f64::MIN_POSITIVE)).ceil();
        let hi = if hi >= u64::MAX as f64 {
            u64::MAX
        } else {
            hi as u64
        };
        let found = leaders
            .range((lo, 0)..=(hi, u32::MAX))
            .map(|(&(_, i), _)| i)
            .filter(|&i| {
                let (c, b) = clusters[i as usize].leader;
                alike(c, s.compute_ns, threshold) && alike(b, s.bytes, threshold)
            })
            .min();
        let id = match found {
            Some(i) => i,
            None => {
                let i = clusters.len() as u32;
                clusters.push(Cluster {
                    op: s.op.clone(),
                    count: 0,
                    compute_ns: 0,
                    bytes: 0,
                    op_ns: 0,
                    cpu_ns: 0,
                    leader: (s.compute_ns, s.bytes),
                });
                leaders.insert((s.compute_ns, i), ());
                i
            }
        };
        let c = &mut clusters[id as usize];
        c.count += 1;
        c.compute_ns += u128::from(s.compute_ns);
        c.bytes += u128::from(s.bytes);
        c.op_ns += u128::from(s.op_ns);
        c.cpu_ns += u128::from(s.cpu_ns);
        ids.push(id);
    }
    (clusters, ids)
}
