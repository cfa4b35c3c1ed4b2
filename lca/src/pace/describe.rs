//! A PACE model as a report shows it (docs/pace.md#with-the-other-commands): what it is, its
//! error on the runs it was built from, its template a row a step, its hardware layer, its
//! subtask layer's fitted models and what its builder assumed. The placeholder categories
//! that let the other commands take it ([`super::seam`]) mean nothing to a reader.

use fit::performance::Description;
use reports::number::significant;

use super::model::{Activity, CoreSharing, Members, PaceModel, Split};

/// Microseconds of a time in seconds, to three significant digits.
fn us(s: f64) -> String {
    format!("{} µs", significant(s * 1e6, 3))
}

/// The model described, for a report.
pub fn describe(model: &PaceModel) -> Description<'_> {
    let mut sentences = vec![format!(
        "A hierarchical (PACE) model: at each point its template's iterations are replayed on \
         its hardware layer, and its categories are the replay's, not formulas'. Its loop runs \
         {} times ({} of them replayed, the rest scaled from them).",
        model.application.iterations, model.application.replayed
    )];
    sentences.push(match model.error {
        Some(e) => format!(
            "On the {} runs it was built from, its T_p was off by a relative standard deviation \
             of {:.1}%; its 90% interval is ±t·{:.1}% of T_p (t at {} degrees of freedom), the \
             same for the mean, since that error is the model's, not the runs' noise.",
            e.runs,
            100.0 * e.relative_sd,
            100.0 * e.relative_sd,
            e.runs.saturating_sub(1).max(1)
        ),
        None => "Its file has no [error] table: its 90% interval assumes a relative standard \
                 deviation of 10% at 1 degree of freedom."
            .to_string(),
    });
    sentences.push(hardware(model));
    let mut steps = vec![
        [
            "step",
            "region",
            "threads",
            "does",
            "split",
            "waits for",
            "messages",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (i, s) in model.template.iter().enumerate() {
        steps.push(vec![
            (i + 1).to_string(),
            s.region.clone(),
            match s.members {
                Members::All => "all".to_string(),
                Members::Group {
                    group,
                    groups,
                    smaller_first,
                } => format!(
                    "group {} of {groups} ({} first)",
                    group + 1,
                    if smaller_first { "smaller" } else { "larger" }
                ),
            },
            match s.activity {
                Activity::Work => "work",
                Activity::Comm => "copies",
                Activity::Wait => "waits",
            }
            .to_string(),
            match &s.split {
                Split::Equal => "equal".to_string(),
                Split::Chunks { units } => format!("chunks of {units}"),
            },
            s.waits_for.as_ref().map_or(String::new(), |h| match h.lag {
                0 => h.after.clone(),
                1 => format!("{}, an iteration earlier", h.after),
                k => format!("{}, {k} iterations earlier", h.after),
            }),
            s.messages.as_ref().map_or(String::new(), |m| {
                format!("{}, {} bytes", m.pattern.name(), m.formula())
            }),
        ]);
    }
    Description {
        sentences,
        tables: vec![(
            "Parallel template: one iteration of the loop".to_string(),
            steps,
        )],
        parts: vec![(
            "Subtask layer: each region's cost".to_string(),
            &model.subtask,
        )],
        notes: model.notes.clone(),
    }
}

/// The hardware layer in one sentence.
fn hardware(model: &PaceModel) -> String {
    let h = &model.hardware;
    let mut s = format!(
        "Hardware layer: {} cores at speed {}; a region's fork and join {}",
        h.cores,
        significant(h.speed, 3),
        us(h.fork_join_s),
    );
    if model.template.iter().any(|s| s.waits_for.is_some()) {
        s += &format!(", a hand-off {}", us(h.handoff_s));
        if h.handoff_shared_s != 0.0 {
            s += &format!(" (+{} per unit of sharing)", us(h.handoff_shared_s));
        }
    }
    s += &format!(", a switch {}", us(h.switch_s));
    if let Some(c) = h.core_switch_s {
        s += &format!(" ({} on a busy core)", us(c));
    }
    s += &match h.sharing {
        CoreSharing::Processor => "; past the cores, processor sharing".to_string(),
        CoreSharing::RunToBlock => format!(
            "; past the cores, run to block with a {} ms slice",
            significant(h.slice_s * 1e3, 3)
        ),
    };
    if h.compute_shared != 0.0 {
        s += &format!(
            ", computation {:+.0}% per unit of sharing",
            100.0 * h.compute_shared
        );
    }
    if h.load > 0.0 {
        s += &format!(
            "; other programs' load {} runnable threads",
            significant(h.load, 2)
        );
    }
    if let Some(m) = &h.machine {
        s += &format!("; messages timed by {m}");
    } else if let Some(n) = &h.network {
        s += &format!(
            "; messages {} + bytes / {} MB/s",
            us(n.alpha_s),
            significant(n.bytes_per_s / 1e6, 3)
        );
    }
    s + "."
}
