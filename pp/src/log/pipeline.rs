//! Two stages on two threads: a producer (decoding and merging a binary log, reading back a
//! sorted import) hands its items in batches to the caller's thread, which consumes them (the
//! sweep, the log writer). docs/event-log.md#reading-on-several-cores.
//!
//! The items reach the consumer in the order they were produced; the second thread only moves
//! the producing off the caller's. Memory: [`Handover::in_flight`] + 1 batches of
//! [`Handover::batch`] items, allocated by the caller before the producer starts.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use super::binary_reader::BinaryLog;
use super::error::LogError;
use super::place::Place;
use crate::event::{Event, Symbols};

/// How [`pipelined_with`] hands the items over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Handover {
    /// Items handed over at a time (at least 1).
    pub batch: usize,
    /// Full batches waiting for the consumer (at least 1; the producer blocks beyond).
    pub in_flight: usize,
}

impl Handover {
    /// [`pipelined`]'s: batches of 4,096 items, 3 in flight.
    pub(crate) const DEFAULT: Handover = Handover {
        batch: 4096,
        in_flight: 3,
    };
}

/// [`pipelined_tapped`]'s for a log's events: a batch is in one of three stages, so more are
/// in flight than with [`Handover::DEFAULT`] (9 of 8,192 events: 4 MB).
const TAPPED: Handover = Handover {
    batch: 8192,
    in_flight: 8,
};

/// Fewer items than this (four of [`Handover::DEFAULT`]'s batches) are produced on the
/// caller's thread alone (starting a thread costs more than it saves).
pub(crate) const MIN_ITEMS: u64 = 4 * Handover::DEFAULT.batch as u64;

/// The threads a new reader uses, set by [`set_threads`]; 0: as many as the machine has.
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets how many threads `pp`'s readers and `pp import` use from now on (at least 1; a
/// reader uses at most 2, and a third for a tap). `pp` sets it from `$PP_THREADS`.
pub fn set_threads(n: usize) {
    THREADS.store(n.max(1), Ordering::Relaxed);
}

/// The threads to use: what [`set_threads`] set, else the machine's parallelism, asked once
/// per process (the standard library reads `/proc/self/cgroup` and the cgroup's CPU quota each
/// time: a dozen system calls, a tenth of a PACE model's evaluation, which opens a reader for
/// every replay).
pub(crate) fn default_threads() -> usize {
    static PARALLELISM: OnceLock<usize> = OnceLock::new();
    match THREADS.load(Ordering::Relaxed) {
        0 => {
            *PARALLELISM.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        }
        n => n,
    }
}

/// The producer's end: [`Batches::push`] an item at a time.
pub(crate) struct Batches<T> {
    batch: Vec<T>,
    /// Items in a full batch.
    size: usize,
    full: SyncSender<Vec<T>>,
    empty: Receiver<Vec<T>>,
    /// False once the consumer stopped listening (it panicked): the rest is dropped.
    listening: bool,
}

impl<T> Batches<T> {
    #[inline]
    pub(crate) fn push(&mut self, item: T) {
        if !self.listening {
            return;
        }
        self.batch.push(item);
        if self.batch.len() == self.size {
            self.hand_over();
        }
    }

    #[cold]
    #[inline(never)]
    fn hand_over(&mut self) {
        let full = std::mem::take(&mut self.batch);
        // Every batch was made by the consumer before the start; one comes back as soon as
        // it is consumed (or the consumer is gone).
        self.listening = self.full.send(full).is_ok();
        match self.empty.recv() {
            Ok(next) if self.listening => self.batch = next,
            _ => self.listening = false,
        }
    }

    fn finish(mut self) {
        if self.listening && !self.batch.is_empty() {
            let batch = std::mem::take(&mut self.batch);
            let _ = self.full.send(batch);
        }
    }
}

/// Runs `produce` on a second thread and `consume` on this one with every item `produce`
/// pushed, in order; returns what `produce` returned once everything is consumed. A panic in
/// either is resumed here. Hands the items over as [`Handover::DEFAULT`] says.
pub(crate) fn pipelined<T: Send, R: Send>(
    produce: impl FnOnce(&mut Batches<T>) -> R + Send,
    consume: impl FnMut(T),
) -> R {
    pipelined_with(Handover::DEFAULT, produce, consume)
}

/// [`pipelined`], handing the items over as `handover` says.
pub(crate) fn pipelined_with<T: Send, R: Send>(
    handover: Handover,
    produce: impl FnOnce(&mut Batches<T>) -> R + Send,
    mut consume: impl FnMut(T),
) -> R {
    let (size, in_flight) = (handover.batch.max(1), handover.in_flight.max(1));
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = sync_channel::<Vec<T>>(in_flight);
        let (empty_tx, empty_rx) = sync_channel::<Vec<T>>(in_flight + 2);
        for _ in 0..in_flight + 1 {
            let _ = empty_tx.send(Vec::with_capacity(size));
        }
        let producer = scope.spawn(move || produce_batches(size, full_tx, empty_rx, produce));
        for mut batch in full_rx.iter() {
            for item in batch.drain(..) {
                consume(item);
            }
            // The producer may have finished: then the batch is dropped.
            let _ = empty_tx.try_send(batch);
        }
        producer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// [`pipelined_with`], and every batch, once `consume` has had it, goes on to `tap` on a third
/// thread, which sees every item in the same order; only then does the batch go back to the
/// producer. The items are handed over once and neither side copies them: a consumer that
/// needs only the items (the critical path's graph) costs the producer's and the consumer's
/// threads nothing (docs/event-log.md#reading-on-several-cores). A panic in any of the three
/// is resumed here.
pub(crate) fn pipelined_tapped<T: Send, R: Send>(
    handover: Handover,
    produce: impl FnOnce(&mut Batches<T>) -> R + Send,
    mut consume: impl FnMut(&T),
    mut tap: impl FnMut(&T) + Send,
) -> R {
    let (size, in_flight) = (handover.batch.max(1), handover.in_flight.max(1));
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = sync_channel::<Vec<T>>(in_flight);
        let (tap_tx, tap_rx) = sync_channel::<Vec<T>>(in_flight);
        // Room for every batch: the tap never blocks handing one back.
        let (empty_tx, empty_rx) = sync_channel::<Vec<T>>(in_flight + 2);
        for _ in 0..in_flight + 1 {
            let _ = empty_tx.send(Vec::with_capacity(size));
        }
        // Only the tap hands batches back: when it is gone (it panicked), the producer's wait
        // for an empty batch ends and it stops.
        let tapping = scope.spawn(move || {
            for mut batch in tap_rx.iter() {
                for item in &batch {
                    tap(item);
                }
                batch.clear();
                let _ = empty_tx.try_send(batch);
            }
        });
        let producer = scope.spawn(move || produce_batches(size, full_tx, empty_rx, produce));
        for batch in full_rx.iter() {
            for item in &batch {
                consume(item);
            }
            if tap_tx.send(batch).is_err() {
                break;
            }
        }
        drop(full_rx);
        drop(tap_tx);
        let result = producer.join();
        tapping
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The producer's side of a pipeline: `produce` pushes to batches that are first taken from
/// `empty` and handed over on `full`.
fn produce_batches<T, R>(
    size: usize,
    full: SyncSender<Vec<T>>,
    empty: Receiver<Vec<T>>,
    produce: impl FnOnce(&mut Batches<T>) -> R,
) -> R {
    let mut batches = Batches {
        batch: Vec::with_capacity(0),
        size,
        full,
        empty,
        listening: true,
    };
    // The first batch, as every other, is one the consumer made.
    if let Ok(first) = batches.empty.recv() {
        batches.batch = first;
    }
    let result = produce(&mut batches);
    batches.finish();
    result
}

impl BinaryLog {
    /// [`BinaryLog::for_each_event`] with the decoding and merging on a second thread: `f`
    /// runs on this one, with the same events, places and symbols, in the same order, and
    /// the same damage is returned. With a `tap`, every event also goes, in the same order, to
    /// `tap` on a third thread ([`pipelined_tapped`]).
    pub(crate) fn for_each_event_in_pipeline(
        &mut self,
        mut f: impl FnMut(&Event, &Symbols, Place),
        tap: Option<impl FnMut(&Event) + Send>,
    ) -> Option<LogError> {
        // The decoder does not look names up: the symbols stay on this thread meanwhile.
        let symbols = std::mem::take(self.symbols_mut());
        let log = &mut *self;
        // A binary log's places are bytes: the offset alone goes over (a smaller item).
        let produce = |batches: &mut Batches<(Event, u64)>| {
            log.for_each_event(|e, _, place| {
                let at = match place {
                    Place::Byte(at) => at,
                    _ => u64::MAX,
                };
                batches.push((*e, at))
            })
        };
        let mut consume = |&(e, at): &(Event, u64)| {
            let place = if at == u64::MAX {
                Place::Start
            } else {
                Place::Byte(at)
            };
            f(&e, &symbols, place)
        };
        let damage = match tap {
            Some(mut tap) => pipelined_tapped(TAPPED, produce, &mut consume, |item| tap(&item.0)),
            None => pipelined(produce, |item| consume(&item)),
        };
        *self.symbols_mut() = symbols;
        damage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Handover = Handover {
        batch: 3,
        in_flight: 2,
    };

    #[test]
    fn the_consumer_and_the_tap_see_every_item_in_order() {
        let (mut consumed, mut tapped) = (Vec::new(), Vec::new());
        let r = pipelined_tapped(
            SMALL,
            |b| {
                (0..100).for_each(|i| b.push(i));
                "done"
            },
            |&i| consumed.push(i),
            |&i| tapped.push(i),
        );
        assert_eq!(r, "done");
        assert_eq!(consumed, (0..100).collect::<Vec<_>>());
        assert_eq!(tapped, consumed);
    }

    #[test]
    fn a_panic_in_the_tap_or_the_consumer_is_resumed_and_nothing_waits_forever() {
        for in_tap in [true, false] {
            let caught = std::panic::catch_unwind(|| {
                pipelined_tapped(
                    SMALL,
                    |b| (0..1000).for_each(|i| b.push(i)),
                    |&i| assert!(in_tap || i < 10, "the consumer fails"),
                    |&i| assert!(!in_tap || i < 10, "the tap fails"),
                )
            });
            assert!(caught.is_err(), "in the tap: {in_tap}");
        }
    }
}
