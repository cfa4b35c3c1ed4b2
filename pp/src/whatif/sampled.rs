//! [`Sampled`]: which threads have `cpu` samples, as far as the reading of the log has found,
//! for a replay that follows the reading: where a processor is shared, a thread without any
//! gets one at its `start` and `stop` in the predicted log (docs/whatif.md), which the replay
//! decides there, waiting for the reading when it cannot know yet.

use std::sync::{Condvar, Mutex, MutexGuard};

/// Each thread's: a `cpu` sample found; and whether the reading has finished.
#[derive(Debug)]
pub(crate) struct Sampled {
    state: Mutex<(Vec<bool>, bool)>,
    changed: Condvar,
}

/// Ends a reading's [`Sampled`] when dropped (on every way out of the reading, so that a
/// replay waiting for it never hangs).
#[derive(Debug)]
pub(crate) struct Finish<'a>(pub &'a Sampled);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.lock().1 = true;
        self.0.changed.notify_all();
    }
}

impl Sampled {
    /// Nothing found yet, for `p` threads.
    pub fn new(p: usize) -> Sampled {
        Sampled {
            state: Mutex::new((vec![false; p], false)),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (Vec<bool>, bool)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Thread `i`'s first sample is read.
    pub fn found(&self, i: usize) {
        if let Some(s) = self.lock().0.get_mut(i) {
            *s = true;
        }
        self.changed.notify_all();
    }

    /// Whether thread `i` has a sample in the log: waits until the reading has found one or
    /// finished.
    pub fn has(&self, i: usize) -> bool {
        let mut state = self.lock();
        loop {
            match state.0.get(i) {
                Some(true) => return true,
                None => return false,
                Some(false) if state.1 => return false,
                Some(false) => {}
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_replay_learns_of_a_sample_or_of_the_end() {
        let s = Sampled::new(2);
        std::thread::scope(|scope| {
            let first = scope.spawn(|| s.has(0));
            let second = scope.spawn(|| s.has(1));
            let reading = Finish(&s);
            s.found(0);
            drop(reading);
            assert!(first.join().unwrap());
            assert!(!second.join().unwrap());
        });
        assert!(s.has(0) && !s.has(1) && !s.has(7));
    }
}
