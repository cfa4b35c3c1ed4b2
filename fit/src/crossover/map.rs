//! Which implementation wins over a grid of two factors, and the boundary where the winner
//! changes: the crossovers along the first factor at each level of the second.

use super::pair::{compared, fixed_point};
use super::solver::Line;
use super::{
    Axis, Comparison, CrossoverError, Extrapolation, MeasuredPoint, MeetingKind, Pair, SAMPLES,
    Side, ValidatedError, Winner,
};

/// A point of a winner map's boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundaryPoint {
    /// The first factor's value (the crossover along it).
    pub u: f64,
    /// The second factor's level.
    pub v: f64,
    /// Crossing or touch.
    pub kind: MeetingKind,
    /// Whether the winner changes there at 90% (see
    /// [`Meeting::significant`](super::Meeting::significant)).
    pub significant: Option<bool>,
}

/// Which implementation wins over a grid of two factors.
#[derive(Debug, Clone, PartialEq)]
pub struct WinnerMap {
    /// The first model's name (A).
    pub a: String,
    /// The response compared, for response models (its own units; the lower wins); None
    /// for run time `T_p`.
    pub response: Option<String>,
    /// The second model's name (B).
    pub b: String,
    /// The first factor (columns).
    pub u: Axis,
    /// The second factor (rows).
    pub v: Axis,
    /// The values of the other factors.
    pub fixed: Vec<(String, f64)>,
    /// The first factor's grid values.
    pub us: Vec<f64>,
    /// The second factor's grid values.
    pub vs: Vec<f64>,
    /// `cells[j][i]`: the winner at `(us[i], vs[j])` by [`compare`](super::compare); `Tie`
    /// where the two cannot be told apart at 90% (or, without intervals, where they meet within
    /// [`TOUCH`](super::TOUCH)).
    pub cells: Vec<Vec<Winner>>,
    /// `comparisons[j][i]`: the comparison behind `cells[j][i]`.
    pub comparisons: Vec<Vec<Comparison>>,
    /// For each level of the second factor, the crossovers along the first.
    pub boundary: Vec<BoundaryPoint>,
    /// `levels[j]`: the sides along the first factor at `vs[j]`, as [`Pair::crossover`] finds
    /// them (who wins on which side of the boundary).
    pub levels: Vec<Vec<Side>>,
    /// Both models carry prediction intervals.
    pub intervals: bool,
    /// Each model's validated error, when the intervals hold it ([`Pair::with_validated_errors`]).
    pub errors: [Option<ValidatedError>; 2],
    /// Whether each model's intervals hold its own error on the runs it was built from (a
    /// model computed by an [`Evaluator`](crate::performance::Evaluator): PACE's) rather than
    /// its fitted coefficients' uncertainty.
    pub own_errors: [bool; 2],
    /// Where the grid leaves a model's data.
    pub extrapolation: Vec<Extrapolation>,
    /// The points on the map both implementations ran, decided by their runs.
    pub measured: Vec<MeasuredPoint>,
    /// `measured_cells[k]`: the cell `(j, i)` nearest `measured[k]`, whose verdict in `cells`
    /// is the runs'.
    pub measured_cells: Vec<(usize, usize)>,
}

impl Pair<'_> {
    /// Which model wins over a `cells x cells` grid of two factors (`u` across, `v` down; on a
    /// whole-number axis with fewer integers, its integers: the runnable values) with
    /// every other factor fixed, and the crossovers and sides along `u` at each level of `v`.
    pub fn winner_map(
        &self,
        u: &Axis,
        v: &Axis,
        fixed: &[(String, f64)],
        cells: usize,
    ) -> Result<WinnerMap, CrossoverError> {
        let eval = self.evaluator(&[&u.factor, &v.factor], fixed)?;
        let cells = cells.max(2);
        let (us, vs) = (u.grid(cells), v.grid(cells));
        // Each level of `v` on its own: its row of cells, its crossovers and sides along `u`.
        let level = |&y: &f64| -> Result<_, CrossoverError> {
            let mut values = fixed_point(fixed, &u.factor);
            values.push((v.factor.clone(), y));
            let row = us
                .iter()
                .map(|&x| {
                    let mut point = values.clone();
                    point.push((u.factor.clone(), x));
                    eval.at(&point)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let line = Line::sample(&eval, u, values.clone(), SAMPLES)?;
            let (meetings, sides) = line.solve()?;
            let points: Vec<BoundaryPoint> = meetings
                .into_iter()
                .filter(|m| m.kind != MeetingKind::NearTouch)
                .map(|m| BoundaryPoint {
                    u: m.x,
                    v: y,
                    kind: m.kind,
                    significant: m.significant,
                })
                .collect();
            let on = self.measured_on(&[u], &values);
            let sides = super::along::by_runs(sides, &on, &u.factor, &line);
            Ok((row, points, sides, line.intervals()))
        };
        let mut comparisons = Vec::with_capacity(vs.len());
        let mut boundary = Vec::new();
        let mut levels = Vec::with_capacity(vs.len());
        let mut intervals = true;
        for result in in_parallel(&vs, level) {
            let (row, points, sides, with_intervals) = result?;
            comparisons.push(row);
            boundary.extend(points);
            levels.push(sides);
            intervals &= with_intervals;
        }
        let measured = self.measured_on(&[u, v], &fixed_point(fixed, &u.factor));
        let nearest = |axis: &Axis, values: &[f64], x: f64| {
            let position = |x: f64| match axis.scale {
                super::Scale::Log if x > 0.0 => x.ln(),
                _ => x,
            };
            (0..values.len())
                .min_by(|&i, &k| {
                    let d = |i: usize| (position(values[i]) - position(x)).abs();
                    d(i).total_cmp(&d(k))
                })
                .unwrap_or(0)
        };
        let measured_cells: Vec<(usize, usize)> = measured
            .iter()
            .map(|m| {
                let x = m.value(&u.factor).unwrap_or(f64::NAN);
                let y = m.value(&v.factor).unwrap_or(f64::NAN);
                (nearest(v, &vs, y), nearest(u, &us, x))
            })
            .collect();
        let mut cells: Vec<Vec<Winner>> = comparisons
            .iter()
            .map(|row| row.iter().map(|c| c.winner).collect())
            .collect();
        for (m, &(j, i)) in measured.iter().zip(&measured_cells) {
            cells[j][i] = m.winner;
        }
        Ok(WinnerMap {
            a: self.a.name.clone(),
            response: compared(self.a).ok().flatten(),
            b: self.b.name.clone(),
            u: u.clone(),
            v: v.clone(),
            fixed: eval.fixed_report(fixed),
            us,
            vs,
            cells,
            comparisons,
            boundary,
            levels,
            errors: self.errors,
            own_errors: self.own_errors(),
            intervals,
            extrapolation: self.extrapolation(&[u, v], fixed),
            measured,
            measured_cells,
        })
    }
}

/// `f` of every item, in order, on as many threads as the machine has cores (at most one an
/// item). A map's levels are independent, and a PACE model's point replays its template
/// (about half a millisecond; docs/comparing.md gives the map's time).
fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    // Items are taken one at a time from a shared counter, so that levels of unequal cost
    // spread over the threads.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return mine;
                        };
                        mine.push((i, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for (i, r) in done {
        slots[i] = Some(r);
    }
    slots.into_iter().flatten().collect()
}
