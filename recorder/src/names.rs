//! Names for events that are only known at run time: the recorder stores names as
//! `&'static str`, so a dynamic name is leaked once per distinct string.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

/// A `&'static str` equal to `s`, leaking it the first time this text is seen (later calls
/// with equal text return the same string). Use it once per name, not per event: it locks.
///
/// ```
/// let label = pp_recorder::name(&format!("block{}", 3));
/// assert_eq!(label, "block3");
/// assert!(std::ptr::eq(label, pp_recorder::name("block3")));
/// ```
pub fn name(s: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(&n) = names.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(n);
    n
}
