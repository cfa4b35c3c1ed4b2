//! Tests that must not run at the same time as each other.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// The right to run: one holder at a time in this test process (a test binary), for tests
/// that measure (waits, overheads) or share one resource (a local cluster). A test that
/// failed while holding it does not stop the others.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}
