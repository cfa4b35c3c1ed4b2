//! The predicted log: every event at its predicted time, in the input's encoding, with a
//! `predicted=` header parameter and `cpu` samples that show the processor sharing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::blocks::Written;
use super::load::MeasuredRun;
use super::predict::PredictedLog;
use super::replay::Predicted;
use crate::event::{Event, Header};
use crate::log::{BinaryWriter, Encoding, TextWriter};

impl PredictedLog {
    /// Thread `i`'s events in the predicted log: at their predicted times (rounded to the
    /// ns), `cpu` samples rewritten ([`super::replay`]). An error reading the temporary file
    /// ends the events and is kept for [`Predicted::error`].
    pub fn events<'a>(
        &'a self,
        _run: &'a MeasuredRun,
        i: usize,
    ) -> impl Iterator<Item = Event> + 'a {
        thread_events(&self.replay, i)
    }
}

/// Thread `i`'s events in `predicted`, a block at a time.
fn thread_events(predicted: &Predicted, i: usize) -> impl Iterator<Item = Event> + '_ {
    let mut blocks = predicted.blocks.reader(i);
    let mut events: Vec<Event> = Vec::new();
    let mut next = 0;
    let fail = move |e: std::io::Error| {
        predicted
            .failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(e.to_string());
        None
    };
    std::iter::from_fn(move || {
        if next == events.len() {
            let h = match blocks.next_block() {
                Ok(Some(h)) => h,
                Ok(None) => return None,
                Err(e) => return fail(e),
            };
            if let Err(e) = blocks.events(&h, i as u32, &mut events) {
                return fail(e);
            }
            next = 0;
        }
        next += 1;
        events.get(next - 1).copied()
    })
}

/// An output's refusal, after the option and path that named it.
fn refused(name: &str, e: files::OutputError) -> anyhow::Error {
    anyhow::anyhow!("{name}: {}", e.reason())
}

/// Refuses an output (given by `option`, as `--out`) that cannot be written, or that is there
/// already without `force`: before the replay, so that a long log is not replayed for
/// nothing, and again when writing.
pub fn check(option: &str, out: &Path, force: bool) -> Result<()> {
    let name = format!("{option} {}", out.display());
    files::output::check_new(out, force).map_err(|e| refused(&name, e))?;
    files::output::check_folder(out).map_err(|e| refused(&name, e))?;
    Ok(())
}

/// A binary log with `header` to `out`, given by `option` (a temporary file renamed over it by
/// [`commit`]), for a replay to write as it goes ([`super::blocks::Direct`]).
pub(super) fn open_binary(option: &str, out: &Path, header: &Header) -> Result<Written> {
    let name = format!("{option} {}", out.display());
    let target = files::Target::open(out).map_err(|e| refused(&name, e))?;
    BinaryWriter::new(BufWriter::new(target), header)
        .map_err(|e| anyhow::anyhow!("{name}: cannot write: {e}"))
}

/// Ends the log a replay wrote as it went ([`open_binary`]), or reports its first error; `force`
/// allows replacing an existing file.
pub(super) fn commit(
    written: io::Result<Written>,
    option: &str,
    out: &Path,
    force: bool,
) -> Result<()> {
    let name = format!("{option} {}", out.display());
    let werr = |e: io::Error| anyhow::anyhow!("{name}: cannot write: {e}");
    let writer = written.map_err(werr)?;
    // Checked again: the file may have appeared during the replay.
    check(option, out, force)?;
    let mut target = writer
        .finish()
        .map_err(werr)?
        .into_inner()
        .map_err(|e| werr(e.into_error()))?;
    target.flush().map_err(werr)?;
    target.commit().with_context(|| name.clone())?;
    Ok(())
}

/// Writes the predicted log of `run` in its encoding to `out`, given by `option` (a temporary
/// file renamed over it when complete); `force` allows replacing an existing file.
pub fn write(
    run: &MeasuredRun,
    prediction: &PredictedLog,
    option: &str,
    out: &Path,
    force: bool,
) -> Result<()> {
    let header = &prediction.header;
    let name = format!("{option} {}", out.display());
    // Checked again: the file may have appeared during the replay.
    check(option, out, force)?;
    let werr = |e: io::Error| anyhow::anyhow!("{name}: cannot write: {e}");
    if run.encoding == Encoding::Binary {
        let mut w = open_binary(option, out, header)?;
        // The blocks were encoded by the replay: each is copied.
        let blocks = &prediction.replay.blocks;
        for i in 0..run.header.p as usize {
            let mut reader = blocks.reader(i);
            while let Some(h) = reader.next_block().map_err(|e| anyhow::anyhow!("{e}"))? {
                w.write_encoded_block(
                    i as u32,
                    h.count,
                    (h.first_t, h.last_t),
                    reader.payload(),
                    (h.names, h.teams),
                    &run.symbols,
                )
                .map_err(werr)?;
            }
        }
        return commit(Ok(w), option, out, force);
    }
    let target = files::Target::open(out).map_err(|e| refused(&name, e))?;
    let mut w = TextWriter::new(BufWriter::new(target), header).map_err(werr)?;
    let mut threads: Vec<_> = (0..run.header.p as usize)
        .map(|i| prediction.events(run, i).peekable())
        .collect();
    // Merged by time, ties by thread, as a reader orders them.
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = threads
        .iter_mut()
        .enumerate()
        .filter_map(|(i, t)| t.peek().map(|e| Reverse((e.t, i))))
        .collect();
    while let Some(Reverse((_, i))) = heap.pop() {
        if let Some(e) = threads[i].next() {
            w.write_event(&e, &run.symbols).map_err(werr)?;
        }
        if let Some(e) = threads[i].peek() {
            heap.push(Reverse((e.t, i)));
        }
    }
    let mut target = w
        .finish()
        .map_err(werr)?
        .into_inner()
        .map_err(|e| werr(e.into_error()))?;
    // The events read back from the temporary file: an error there ends them early.
    if let Some(e) = prediction.replay.error() {
        bail!("{e}");
    }
    target.flush().map_err(werr)?;
    target.commit().with_context(|| name.clone())?;
    Ok(())
}
