//! Reading a binary log on two threads: one decodes the threads' blocks and merges them into
//! time order, the caller's thread does what it does with each event (the sweep), batches of
//! decoded events passing between them (docs/event-log.md#reading-on-several-cores).
//!
//! The events, their places and the damage that ends the log are the same as on one thread,
//! in the same order: the second thread only moves the decoding off the caller's.
//! Memory: at most [`IN_FLIGHT`] + 2 batches of [`BATCH`] events (about 1 MiB).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use super::binary_reader::BinaryLog;
use super::error::LogError;
use super::place::Place;
use crate::event::{Event, Symbols};

/// Events handed over at a time.
const BATCH: usize = 2048;

/// Full batches waiting for the caller's thread (the decoder blocks beyond).
const IN_FLIGHT: usize = 4;

/// A log of fewer events is read on the caller's thread alone (starting a thread costs more
/// than it saves).
pub(crate) const MIN_EVENTS: u64 = 4 * BATCH as u64;

/// The threads a new reader uses, set by [`set_threads`]; 0: as many as the machine has.
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets how many threads a [`super::LogReader`] opened from now on uses (at least 1; today a
/// binary log is read on at most 2). `pp` sets it from `$PP_THREADS`.
pub fn set_threads(n: usize) {
    THREADS.store(n.max(1), Ordering::Relaxed);
}

/// The threads a new reader uses: what [`set_threads`] set, else the machine's parallelism.
pub(crate) fn default_threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

impl BinaryLog {
    /// [`BinaryLog::for_each_event`] with the decoding and merging on a second thread: `f`
    /// runs on this one, with the same events, places and symbols, in the same order, and
    /// the same damage is returned.
    pub(crate) fn for_each_event_in_pipeline(
        &mut self,
        mut f: impl FnMut(&Event, &Symbols, Place),
    ) -> Option<LogError> {
        // The decoder does not look names up: the symbols stay on this thread meanwhile.
        let symbols = std::mem::take(self.symbols_mut());
        let damage = std::thread::scope(|scope| {
            let (full_tx, full_rx) = mpsc::sync_channel::<Vec<(Event, Place)>>(IN_FLIGHT);
            let (empty_tx, empty_rx) = mpsc::channel::<Vec<(Event, Place)>>();
            let log = &mut *self;
            let decoder = scope.spawn(move || {
                let mut batch = Vec::with_capacity(BATCH);
                // False once this thread stopped listening (it panicked): the rest is skipped.
                let mut listening = true;
                let damage = log.for_each_event(|e, _, place| {
                    if !listening {
                        return;
                    }
                    batch.push((*e, place));
                    if batch.len() == BATCH {
                        let next = empty_rx
                            .try_recv()
                            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                        listening = full_tx.send(std::mem::replace(&mut batch, next)).is_ok();
                    }
                });
                if listening && !batch.is_empty() {
                    let _ = full_tx.send(batch);
                }
                damage
            });
            for mut batch in full_rx.iter() {
                for (e, place) in &batch {
                    f(e, &symbols, *place);
                }
                batch.clear();
                // The decoder may have finished: then the batch is dropped.
                let _ = empty_tx.send(batch);
            }
            decoder
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        *self.symbols_mut() = symbols;
        damage
    }
}
