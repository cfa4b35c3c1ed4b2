//! The OMPT callbacks: each reads what the runtime passes and hands it to [`crate::thread`].
//! They never panic across the C boundary (the thread functions do not panic, and a null
//! pointer from the runtime is treated as "no data").

use std::ffi::{c_int, c_uint, c_void};

use crate::ffi::{self, Data};
use crate::thread;

/// Marks an explicit task's `task_data` word.
const EXPLICIT: u64 = 0x5050_4f4d_5054_0001;

unsafe fn word(d: *mut Data) -> u64 {
    // SAFETY: the runtime passes a valid `ompt_data_t` or null.
    if d.is_null() {
        0
    } else {
        unsafe { (*d).value }
    }
}

unsafe fn set_word(d: *mut Data, value: u64) {
    if !d.is_null() {
        // SAFETY: as in `word`; the word is the tool's to write.
        unsafe { (*d).value = value };
    }
}

pub unsafe extern "C" fn parallel_begin(
    _encountering_task: *mut Data,
    _encountering_frame: *const c_void,
    parallel: *mut Data,
    requested: c_uint,
    _flags: c_int,
    codeptr: *const c_void,
) {
    let w = thread::parallel_begin(requested, codeptr);
    unsafe { set_word(parallel, w) };
}

pub unsafe extern "C" fn parallel_end(
    parallel: *mut Data,
    _encountering_task: *mut Data,
    _flags: c_int,
    _codeptr: *const c_void,
) {
    thread::parallel_end(unsafe { word(parallel) });
}

pub unsafe extern "C" fn implicit_task(
    endpoint: c_int,
    parallel: *mut Data,
    _task: *mut Data,
    _actual: c_uint,
    index: c_uint,
    flags: c_int,
) {
    if flags & ffi::TASK_INITIAL != 0 {
        return;
    }
    match endpoint {
        ffi::SCOPE_BEGIN => thread::implicit_begin(unsafe { word(parallel) }, index),
        ffi::SCOPE_END => thread::implicit_end(),
        _ => {}
    }
}

/// The wait object a synchronization construct is recorded with.
fn sync_object(kind: c_int) -> Option<&'static str> {
    Some(match kind {
        ffi::SYNC_BARRIER | ffi::SYNC_BARRIER_EXPLICIT => "barrier",
        ffi::SYNC_BARRIER_IMPLICIT
        | ffi::SYNC_BARRIER_IMPLICIT_PARALLEL
        | ffi::SYNC_BARRIER_IMPLICIT_WORKSHARE => "implicit_barrier",
        ffi::SYNC_BARRIER_IMPLEMENTATION => "runtime_barrier",
        ffi::SYNC_BARRIER_TEAMS => "teams_barrier",
        ffi::SYNC_TASKWAIT => "taskwait",
        ffi::SYNC_TASKGROUP => "taskgroup",
        ffi::SYNC_REDUCTION => "reduction",
        _ => return None,
    })
}

pub unsafe extern "C" fn sync_region_wait(
    kind: c_int,
    endpoint: c_int,
    _parallel: *mut Data,
    _task: *mut Data,
    _codeptr: *const c_void,
) {
    let Some(object) = sync_object(kind) else {
        return;
    };
    match endpoint {
        ffi::SCOPE_BEGIN => thread::sync_wait_begin(object),
        ffi::SCOPE_END => thread::sync_wait_end(),
        _ => {}
    }
}

/// The wait object of a mutual-exclusion construct; `None` for those that never block
/// (`omp_test_lock`) or are not recorded (`atomic`).
fn mutex_object(kind: c_int) -> Option<&'static str> {
    Some(match kind {
        ffi::MUTEX_LOCK => "omp_lock",
        ffi::MUTEX_NEST_LOCK => "omp_nest_lock",
        ffi::MUTEX_CRITICAL => "critical",
        ffi::MUTEX_ORDERED => "ordered",
        _ => return None,
    })
}

pub unsafe extern "C" fn mutex_acquire(
    kind: c_int,
    _hint: c_uint,
    _implementation: c_uint,
    _wait_id: u64,
    _codeptr: *const c_void,
) {
    if let Some(object) = mutex_object(kind) {
        thread::lock_wait_begin(object);
    }
}

pub unsafe extern "C" fn mutex_acquired(kind: c_int, wait_id: u64, _codeptr: *const c_void) {
    if let Some(object) = mutex_object(kind) {
        thread::lock_wait_end(object, wait_id);
    } else if matches!(kind, ffi::MUTEX_TEST_LOCK | ffi::MUTEX_TEST_NEST_LOCK) {
        thread::lock_taken(wait_id);
    }
}

pub unsafe extern "C" fn mutex_released(kind: c_int, _wait_id: u64, _codeptr: *const c_void) {
    if let Some(object) = mutex_object(kind) {
        thread::lock_release(object);
    }
}

pub unsafe extern "C" fn task_create(
    _encountering_task: *mut Data,
    _encountering_frame: *const c_void,
    new_task: *mut Data,
    flags: c_int,
    _has_dependences: c_int,
    _codeptr: *const c_void,
) {
    if flags & ffi::TASK_EXPLICIT != 0 {
        unsafe { set_word(new_task, EXPLICIT) };
    }
}

pub unsafe extern "C" fn task_schedule(prior: *mut Data, _status: c_int, next: *mut Data) {
    let (prior, next) = unsafe { (word(prior) == EXPLICIT, word(next) == EXPLICIT) };
    thread::task_switch(prior, next);
}

/// Whether a work-sharing construct of `kind` (`ompt_work_t`) names its time as a phase:
/// loops (of any schedule: OpenMP 5.2's kinds 10 to 13 as well as 5.0's `ompt_work_loop`),
/// sections and taskloops; not single, workshare, distribute or scope.
fn names_a_phase(kind: c_int) -> bool {
    matches!(
        kind,
        ffi::WORK_LOOP | ffi::WORK_SECTIONS | ffi::WORK_TASKLOOP | ffi::WORK_LOOP_STATIC
            ..=ffi::WORK_LOOP_OTHER
    )
}

pub unsafe extern "C" fn work(
    kind: c_int,
    endpoint: c_int,
    _parallel: *mut Data,
    _task: *mut Data,
    _count: u64,
    codeptr: *const c_void,
) {
    if !names_a_phase(kind) {
        return;
    }
    match endpoint {
        ffi::SCOPE_BEGIN => thread::loop_begin(codeptr),
        ffi::SCOPE_END => thread::loop_end(),
        _ => {}
    }
}

pub unsafe extern "C" fn thread_end(_thread: *mut Data) {
    thread::thread_end();
}

/// `omp_control_tool` from the program: the flush of the standard, and the data movements
/// `pp_ompt.h` marks (`arg` points to the byte count).
pub unsafe extern "C" fn control_tool(
    command: u64,
    _modifier: u64,
    arg: *mut c_void,
    _codeptr: *const c_void,
) -> c_int {
    let bytes = || {
        // SAFETY: pp_ompt.h passes a pointer to a uint64_t (or null).
        if arg.is_null() {
            0
        } else {
            unsafe { *(arg as *const u64) }
        }
    };
    match command {
        ffi::CONTROL_FLUSH => thread::flush(),
        ffi::CONTROL_COMM_BEGIN => thread::comm_begin(bytes()),
        ffi::CONTROL_COMM_END => thread::comm_end(bytes()),
        _ => return ffi::CONTROL_IGNORED,
    }
    ffi::CONTROL_SUCCESS
}

#[cfg(test)]
mod tests {
    use super::names_a_phase;

    #[test]
    fn loops_of_every_schedule_name_a_phase() {
        // ompt_work_t (OpenMP 5.2): loop 1, sections 2, single_executor 3, single_other 4,
        // workshare 5, distribute 6, taskloop 7, scope 8, loop_static 10, loop_dynamic 11,
        // loop_guided 12, loop_other 13.
        let named: Vec<i32> = (0..16).filter(|&k| names_a_phase(k)).collect();
        assert_eq!(named, [1, 2, 7, 10, 11, 12, 13]);
    }
}
