//! Factors that vary together in every run: a weak-scaling series whose `n` grows with `p`,
//! say. Their effects cannot be told apart on those runs, so the model follows one of them (the
//! *lead*) along the series, and the others' shapes are `1`
//! ([docs/modelling.md](../../../docs/modelling.md#factors-that-vary-together)). A prediction
//! where the others do not go with the lead as in the runs rests on no run, and is said to.

use std::collections::BTreeMap;

use crate::observations::Observations;

/// A group of factors that vary together in every run.
#[derive(Debug, Clone, PartialEq)]
pub struct Together {
    /// The factors, the lead (the one the model follows) first.
    pub factors: Vec<String>,
    /// The distinct values they took together in the runs, in `factors`' order, ascending in
    /// the lead (each lead value comes with one value of each other factor).
    pub points: Vec<Vec<f64>>,
}

/// The groups of factors (indices, the lead first) that vary together in every observation
/// ([`Observations::vary_together`], joined into groups). The lead is the group's one factor
/// with a shape in `user`, else `p`, else the first.
pub(super) fn groups(obs: &Observations, user: &BTreeMap<String, String>) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (f, g) in obs.vary_together() {
        // "Each value of one comes with one value of the other" is an equivalence: pairs
        // found for f with g and g with h come with f and h too, so a group is what f joins.
        match groups.iter_mut().find(|group| group.contains(&f)) {
            Some(group) if !group.contains(&g) => group.push(g),
            Some(_) => {}
            None => groups.push(vec![f, g]),
        }
    }
    for group in &mut groups {
        let named = |f: &usize| user.contains_key(&obs.factors[*f]);
        let lead = match group.iter().filter(|f| named(f)).count() {
            1 => group.iter().position(named),
            _ => group.iter().position(|&f| obs.factors[f] == "p"),
        }
        .unwrap_or(0);
        let lead = group.remove(lead);
        group.insert(0, lead);
    }
    groups
}

impl Together {
    /// The group `factors` (indices, the lead first) with the values it took in `obs`.
    pub(super) fn of(obs: &Observations, factors: &[usize]) -> Together {
        let mut points: Vec<Vec<f64>> = (0..obs.len())
            .map(|row| factors.iter().map(|&f| obs.columns[f][row]).collect())
            .collect();
        points.sort_by(|a, b| a[0].total_cmp(&b[0]));
        points.dedup();
        Together {
            factors: factors.iter().map(|&f| obs.factors[f].clone()).collect(),
            points,
        }
    }

    /// Where `point` (every factor's value, in `factors`' order) leaves the runs' series: at a
    /// value of the lead that the runs had, another factor of the group differs from the value
    /// it came with; between two such values, it lies outside the two values it came with
    /// there. Beyond the lead's range nothing is said (the runs do not show how the series
    /// goes on). `None` when the point is on the series, or a factor is missing.
    pub fn off(&self, factors: &[String], point: &[f64]) -> Option<String> {
        let at = |name: &String| factors.iter().position(|f| f == name).map(|i| point[i]);
        let values: Vec<f64> = self.factors.iter().map(at).collect::<Option<_>>()?;
        let lead = values[0];
        let after = self.points.partition_point(|p| p[0] < lead);
        let (lo, hi) = match self.points.get(after) {
            Some(p) if p[0] == lead => (p, p),
            Some(p) if after > 0 => (&self.points[after - 1], p),
            _ => return None,
        };
        let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        let off = (1..values.len()).find(|&j| {
            let (a, b) = (lo[j].min(hi[j]), lo[j].max(hi[j]));
            !(same(values[j], a) || same(values[j], b) || (a..=b).contains(&values[j]))
        })?;
        let went = if lo[0] == hi[0] {
            format!("{}={}", self.factors[off], lo[off])
        } else {
            format!(
                "{} between {} and {}",
                self.factors[off],
                lo[off].min(hi[off]),
                lo[off].max(hi[off])
            )
        };
        Some(format!(
            "{}={} at {}={}: in every run {} went with {} (at {}={} the runs had {went}); the \
             model follows {} alone, so this prediction rests on no run",
            self.factors[off],
            values[off],
            self.factors[0],
            lead,
            self.factors[off],
            self.factors[0],
            self.factors[0],
            lead,
            self.factors[0]
        ))
    }
}
