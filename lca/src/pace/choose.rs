//! On-the-fly choice (seed 004's scheduler use): of several models, the one with the least
//! predicted `T_p` at a point (docs/pace.md#choosing).

use super::model::PaceModel;

/// The index of the model with the least predicted `T_p` at a point given by factor name,
/// with every model's `T_p` (NaN where a model cannot evaluate the point). Errors when no
/// model can evaluate it.
pub fn choose(models: &[PaceModel], at: &[(String, f64)]) -> Result<(usize, Vec<f64>), String> {
    let mut times = Vec::with_capacity(models.len());
    let mut reasons = Vec::new();
    for m in models {
        let point: Result<Vec<f64>, String> = m
            .factors
            .iter()
            .map(|f| {
                at.iter()
                    .rev()
                    .find(|(n, _)| n == f)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| format!("model '{}': no value for factor '{f}'", m.name))
            })
            .collect();
        match point.and_then(|p| m.evaluate(&p)) {
            Ok(e) => times.push(e.t_p),
            Err(e) => {
                times.push(f64::NAN);
                reasons.push(format!("model '{}': {e}", m.name));
            }
        }
    }
    let best = times
        .iter()
        .enumerate()
        .filter(|(_, t)| t.is_finite())
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i);
    match best {
        Some(i) => Ok((i, times)),
        None if reasons.is_empty() => Err("no model to choose from".into()),
        None => Err(reasons.join("; ")),
    }
}

/// How far the chosen model is ahead of the next: the next's index, `T_next / T_chosen - 1`,
/// and whether the gap is beyond the 90% interval of the difference of the two means, each
/// `± t · relative_sd · T_p` from the runs the model was built from (the two variances added,
/// Welch–Satterthwaite degrees of freedom), as `lca crossover` compares PACE models. None
/// with fewer than two models that evaluate the point, or a chosen `T_p` of 0.
pub fn margin(models: &[PaceModel], best: usize, times: &[f64]) -> Option<(usize, f64, bool)> {
    let chosen = *times.get(best)?;
    if chosen.is_nan() || chosen <= 0.0 {
        return None;
    }
    let next = times
        .iter()
        .enumerate()
        .filter(|&(i, t)| i != best && t.is_finite())
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i)?;
    let term = |i: usize| {
        let (sd, runs) = super::seam::relative_error(&models[i]);
        let v = (sd * times[i]).powi(2);
        (v, v * v / f64::from(runs.saturating_sub(1).max(1)))
    };
    let ((va, da), (vb, db)) = (term(best), term(next));
    let half_width = fit::stats::welch_half_width(va + vb, da + db);
    let gap = times[next] - times[best];
    Some((next, times[next] / chosen - 1.0, gap > half_width))
}
