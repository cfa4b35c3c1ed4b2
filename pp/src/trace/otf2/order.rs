//! The imported events put in the log's order (time, then thread, then the order they were
//! mapped in) while the trace is read (docs/otf2.md#memory-and-speed).
//!
//! The OTF2 reader hands the records over in time order, so the mapped events come almost in
//! order. They wait in a buffer; now and then the buffer is sorted and the events before a
//! *watermark* (a time no later event can precede, which the [`super::events::Mapper`] gives)
//! are handed to the writer. When the buffer outgrows [`MAX_PENDING`] events (the watermark
//! held back, by a thread silent for long or a long MPI call), everything not yet handed over
//! goes to the external merge sort of the text log reader, in bounded memory, and comes out
//! at the end. An event that would have to precede one already handed over (a trace whose
//! records are not in time order) makes the import start again with every event sorted
//! before any is written ([`Order::disordered`]).

use crate::event::{Event, Symbols};
use crate::log::{Sorted, Sorter};

/// Events waiting in the buffer at most; beyond, the rest is sorted externally.
const MAX_PENDING: usize = 1 << 17;

/// The buffer is sorted once this many events came in since (or twice as many as it kept).
const FLUSH_EVENTS: usize = 1 << 13;

/// Where the ordered events go: a run of them in order, with the names and teams they use.
pub type Sink<'s> = dyn FnMut(&[Event], &Symbols) + 's;

/// Puts events in order as they come; see the module's documentation.
pub struct Order<'s> {
    /// Events not handed over: `pending[..sorted]` in order, then as they came.
    pending: Vec<Event>,
    sorted: usize,
    /// The length at which the buffer is sorted and handed over next.
    next_flush: usize,
    /// Once the buffer overflowed (or from the start, when the events are all sorted before
    /// any is handed over), every event not handed over, with its rank.
    external: Option<Sorter>,
    /// The rank of the next event given to `external`.
    line: u64,
    /// The (time, thread) of the last event handed over.
    last: Option<(u64, u32)>,
    /// An event came that should have preceded one already handed over.
    disordered: bool,
    /// Events handed over.
    count: u64,
    /// The external sort's runs.
    run_events: usize,
    sink: &'s mut Sink<'s>,
}

impl<'s> Order<'s> {
    /// Events handed to `sink` as soon as their place is known (`streaming`), or every event
    /// sorted and handed over by [`Order::finish`].
    pub fn new(streaming: bool, run_events: usize, sink: &'s mut Sink<'s>) -> Order<'s> {
        Order {
            pending: Vec::new(),
            sorted: 0,
            next_flush: FLUSH_EVENTS,
            external: (!streaming).then(|| Sorter::new(run_events)),
            line: 0,
            last: None,
            disordered: false,
            count: 0,
            run_events,
            sink,
        }
    }

    /// Adds the next event; `Err` is the external sort's temporary file failing.
    #[inline]
    pub fn push(&mut self, e: Event) -> std::io::Result<()> {
        if let Some((t, thread)) = self.last
            && (e.t, e.thread) < (t, thread)
        {
            self.disordered = true;
        }
        match &mut self.external {
            None => self.pending.push(e),
            Some(sorter) => {
                sorter.push(e, self.line)?;
                self.line += 1;
            }
        }
        Ok(())
    }

    /// Whether the buffer should be sorted and handed over ([`Order::flush`]).
    #[inline]
    pub fn wants_flush(&self) -> bool {
        self.pending.len() >= self.next_flush && !self.disordered
    }

    /// Hands over, in order, the buffered events before time `watermark` (no event to come
    /// is earlier); moves the buffer to the external sort when it holds too many.
    pub fn flush(&mut self, watermark: u64, symbols: &Symbols) -> std::io::Result<()> {
        // Stable: events of equal time and thread stay in the order they came (those kept
        // from the last flush came first).
        self.pending.sort_by_key(|e| (e.t, e.thread));
        let ready = self.pending.partition_point(|e| e.t < watermark);
        if ready > 0 {
            self.hand_over(ready, symbols);
        }
        self.sorted = self.pending.len();
        self.next_flush = (2 * self.sorted)
            .max(self.sorted + FLUSH_EVENTS)
            .min(MAX_PENDING);
        if self.sorted + FLUSH_EVENTS > MAX_PENDING {
            let mut sorter = Sorter::new(self.run_events);
            for e in self.pending.drain(..) {
                sorter.push(e, self.line)?;
                self.line += 1;
            }
            self.pending = Vec::new();
            self.external = Some(sorter);
        }
        Ok(())
    }

    fn hand_over(&mut self, n: usize, symbols: &Symbols) {
        let done = &self.pending[..n];
        (self.sink)(done, symbols);
        self.last = done.last().map(|e| (e.t, e.thread));
        self.count += n as u64;
        self.pending.drain(..n);
    }

    /// Whether an event came that should have preceded one already handed over: what was
    /// handed over is not the log, and the import must sort every event first.
    pub fn disordered(&self) -> bool {
        self.disordered
    }

    /// Hands over every remaining event, in order; the events handed over in all. `Err` is
    /// the external sort's temporary file failing.
    pub fn finish(mut self, symbols: &Symbols) -> std::io::Result<u64> {
        if self.disordered {
            return Ok(self.count);
        }
        match self.external.take() {
            None => {
                self.pending.sort_by_key(|e| (e.t, e.thread));
                let n = self.pending.len();
                if n > 0 {
                    self.hand_over(n, symbols);
                }
            }
            Some(sorter) => {
                let mut events: Sorted = sorter.finish()?;
                let mut run = Vec::with_capacity(FLUSH_EVENTS);
                while let Some(next) = events.next() {
                    run.push(next?.0);
                    if run.len() == FLUSH_EVENTS {
                        (self.sink)(&run, symbols);
                        run.clear();
                    }
                }
                if !run.is_empty() {
                    (self.sink)(&run, symbols);
                }
                self.count += self.line;
            }
        }
        Ok(self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventKind;

    fn ev(t: u64, thread: u32, k: u64) -> Event {
        Event {
            t,
            thread,
            kind: EventKind::CommBegin { bytes: k },
        }
    }

    /// Pushes `events` (each with the watermark valid after it), flushing when asked, and
    /// returns what was handed over.
    fn run(streaming: bool, run_events: usize, events: &[(Event, u64)]) -> (Vec<Event>, bool) {
        let mut got = Vec::new();
        let mut sink = |run: &[Event], _: &Symbols| got.extend_from_slice(run);
        let symbols = Symbols::default();
        let mut order = Order::new(streaming, run_events, &mut sink);
        for &(e, watermark) in events {
            order.push(e).unwrap();
            if order.wants_flush() {
                order.flush(watermark, &symbols).unwrap();
            }
        }
        let disordered = order.disordered();
        let n = order.finish(&symbols).unwrap();
        if !disordered {
            assert_eq!(n as usize, events.len());
        }
        (got, disordered)
    }

    #[test]
    fn streams_as_a_stable_sort_by_time_and_thread() {
        // Times that go back by less than the watermark's lag, on 3 threads.
        let mut seed = 99u64;
        let mut events = Vec::new();
        for i in 0..100_000u64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let t = i + seed % 64;
            events.push((ev(t, (seed >> 32) as u32 % 3, i), i + 1));
        }
        let mut want: Vec<Event> = events.iter().map(|&(e, _)| e).collect();
        want.sort_by_key(|e| (e.t, e.thread));
        for streaming in [true, false] {
            let (got, disordered) = run(streaming, 1000, &events);
            assert!(!disordered);
            assert_eq!(got, want, "streaming {streaming}");
        }
    }

    #[test]
    fn a_watermark_held_back_overflows_into_the_external_sort() {
        let n = MAX_PENDING as u64 * 2 + 12_345;
        let events: Vec<(Event, u64)> = (0..n)
            .map(|i| (ev(n - i % 7, (i % 2) as u32, i), 0))
            .collect();
        let mut want: Vec<Event> = events.iter().map(|&(e, _)| e).collect();
        want.sort_by_key(|e| (e.t, e.thread));
        let (got, disordered) = run(true, 100_000, &events);
        assert!(!disordered);
        assert_eq!(got, want);
    }

    #[test]
    fn an_event_before_one_handed_over_is_disorder() {
        let mut events: Vec<(Event, u64)> = (0..20_000u64).map(|i| (ev(i, 0, i), i + 1)).collect();
        events.push((ev(10, 1, 0), 20_001));
        let (_, disordered) = run(true, 1000, &events);
        assert!(disordered);
        // Sorted before anything is handed over, the same events are in order.
        let (got, disordered) = run(false, 1000, &events);
        assert!(!disordered);
        assert_eq!(got.len(), events.len());
        assert!(
            got.windows(2)
                .all(|w| (w[0].t, w[0].thread) <= (w[1].t, w[1].thread))
        );
    }
}
