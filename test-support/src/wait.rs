//! Waiting for a condition without waiting on the clock: a test polls for what a process
//! writes or does, with a generous cap that only turns a hang into a failure.

use std::time::{Duration, Instant};

/// How long [`wait_for`] waits before it fails: a safety cap, not a timing.
pub(crate) const CAP: Duration = Duration::from_secs(300);

/// Waits until `done()` holds, asking every 10 ms; after [`CAP`] (5 minutes) it panics with
/// `<what> never came`.
pub fn wait_for(what: &str, done: impl FnMut() -> bool) {
    wait_for_every(what, Duration::from_millis(10), done);
}

/// [`wait_for`], asking every `poll` (for conditions that cost a command each time).
pub fn wait_for_every(what: &str, poll: Duration, mut done: impl FnMut() -> bool) {
    let begun = Instant::now();
    while !done() {
        assert!(begun.elapsed() < CAP, "{what} never came");
        std::thread::sleep(poll);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn waits_until_the_condition_holds() {
        let mut asked = 0;
        super::wait_for("the third time", || {
            asked += 1;
            asked == 3
        });
        assert_eq!(asked, 3);
    }
}
