//! What one OpenMP thread is doing, as the tool follows it, and the events it records.
//!
//! Each thread keeps its own state (thread-local, no locks on the way): whether it records
//! and as which pp thread, how deep it is in parallel regions, its open serial work, the pp
//! regions it opened, its phase stack (region, then loops) and its frames of waits and
//! explicit tasks. The mapping of OMPT events to pp events is documented in `docs/openmp.md`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex, OnceLock, PoisonError, RwLock};

use pp_recorder as recorder;
use pp_recorder::event::WaitKind;

use crate::{names, run};

/// A wait or an explicit task running on the thread, innermost last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// A barrier-like wait (`sync_region_wait`); not `active` while an explicit task runs
    /// inside it (the thread works then).
    Wait { object: &'static str, active: bool },
    /// An explicit task.
    Task,
}

#[derive(Default)]
struct Local {
    /// The pp thread this thread records as.
    id: Option<u32>,
    /// Whether this thread was counted as working in nested teams only, and as numbered
    /// beyond `p` in an outermost team (each is reported once a thread).
    counted_nested: bool,
    counted_beyond: bool,
    /// Implicit tasks (other than the initial one) open on this thread: 1 inside an
    /// outermost region, more inside nested ones.
    depth: u32,
    /// Serial work open (the thread that records as 0, outside parallel regions).
    serial: bool,
    /// pp regions this thread opened, innermost last.
    regions: Vec<u64>,
    /// Phase names: the region's, then its loops', innermost last.
    phases: Vec<&'static str>,
    frames: Vec<Frame>,
    /// Names already given to constructs at a code address (saves the shared table's lock).
    names: HashMap<usize, &'static str>,
}

thread_local! {
    /// Never dropped (no destructor), so that it outlives the recorder's thread state when a
    /// thread exits.
    static LOCAL: RefCell<ManuallyDrop<Local>> = RefCell::new(ManuallyDrop::new(Local::default()));
    /// Its destructor ends the open serial work and waits when the thread exits.
    static AT_EXIT: AtExit = const { AtExit };
}

/// Runs `f` on this thread's state (nothing while it is already borrowed).
fn with_local(f: impl FnOnce(&mut Local)) {
    let _ = LOCAL.try_with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            f(&mut l);
        }
    });
}

/// Ends what the thread has open when it exits. The C library runs thread-local destructors
/// in the reverse order of their registration, and before `atexit` handlers and the OpenMP
/// runtime's shutdown: [`arm_exit`], called just after the recorder registered the thread,
/// makes this one run before the recorder's, which records the thread's `stop`. The initial
/// thread's serial work so ends where the program exits.
struct AtExit;

impl Drop for AtExit {
    fn drop(&mut self) {
        with_local(end_open);
    }
}

/// The pp thread the calling thread records as, if it records.
pub fn id() -> Option<u32> {
    LOCAL
        .try_with(|l| l.try_borrow().ok().and_then(|l| l.id))
        .ok()
        .flatten()
}

/// Ends the waits and the serial work the thread still has open.
fn end_open(l: &mut Local) {
    close_frames(l);
    if l.serial {
        recorder::work_end(None);
        l.serial = false;
    }
}

fn arm_exit() {
    let _ = AT_EXIT.try_with(|_| {});
}

/// The pp thread ids taken by some OS thread (an id is never given to a second thread: a pp
/// thread starts once).
fn taken() -> &'static [AtomicBool] {
    static TAKEN: OnceLock<Vec<AtomicBool>> = OnceLock::new();
    TAKEN.get_or_init(|| (0..run::p()).map(|_| AtomicBool::new(false)).collect())
}

/// Claims pp thread `want`, else the lowest free one.
fn claim(want: u32) -> Option<u32> {
    let taken = taken();
    let free = |i: usize| {
        taken.get(i).is_some_and(|t| {
            t.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        })
    };
    if free(want as usize) {
        return Some(want);
    }
    (0..taken.len()).find(|&i| free(i)).map(|i| i as u32)
}

/// Region names by index, so that a region's name travels in its `parallel_data` word to the
/// threads of its team.
static REGION_NAMES: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());

fn name_index(name: &'static str) -> u64 {
    if let Some(i) = REGION_NAMES
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .position(|&n| std::ptr::eq(n, name))
    {
        return i as u64;
    }
    let mut names = REGION_NAMES.write().unwrap_or_else(PoisonError::into_inner);
    names.push(name);
    (names.len() - 1) as u64
}

fn name_at(index: u64) -> Option<&'static str> {
    REGION_NAMES
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(index as usize)
        .copied()
}

/// Bit of the `parallel_data` word set for a nested region.
const NESTED: u64 = 1 << 63;

/// The `parallel_data` word: [`NESTED`], the name's index + 1 in bits 40..63, the recorded
/// region id + 1 below (0: not recorded).
fn encode(name: u64, region: Option<u64>) -> u64 {
    (((name + 1) << 40) & !NESTED) | region.map_or(0, |r| (r + 1) & ((1 << 40) - 1))
}

fn decode(word: u64) -> (Option<&'static str>, Option<u64>) {
    let name = ((word & !NESTED) >> 40).checked_sub(1).and_then(name_at);
    let region = (word & ((1 << 40) - 1)).checked_sub(1);
    (name, region)
}

/// The name of the region at `codeptr`, cached per thread.
fn region_name(l: &mut Local, codeptr: *const c_void) -> &'static str {
    l.names
        .entry(codeptr as usize)
        .or_insert_with(|| names::region(codeptr))
}

/// A parallel region begins on the thread that encounters it; returns its `parallel_data` word.
pub fn parallel_begin(requested: u32, codeptr: *const c_void) -> u64 {
    let mut word = 0;
    with_local(|l| {
        let name = region_name(l, codeptr);
        let index = name_index(name);
        word = encode(index, None);
        if l.depth > 0 {
            word |= NESTED; // the encountering thread goes on working
            return;
        }
        if run::p() == 0 && run::start(requested, &run::runtime_params()) {
            l.id = Some(0);
            l.serial = true;
            let _ = claim(0);
            arm_exit();
        }
        if l.id.is_none() {
            return;
        }
        if l.serial {
            recorder::work_end(None);
            l.serial = false;
        }
        let p = run::p();
        let team: Vec<u32> = (0..requested.min(p)).collect();
        let team = (requested < p).then_some(team.as_slice());
        if let Some(id) = recorder::region_begin(name, team) {
            l.regions.push(id);
            word = encode(index, Some(id));
        }
    });
    word
}

/// The region whose word is `word` ends on the thread that encountered it.
pub fn parallel_end(word: u64) {
    with_local(|l| {
        let (_, region) = decode(word);
        let Some(region) = region else { return };
        if l.regions.last() != Some(&region) {
            return;
        }
        l.regions.pop();
        recorder::region_end(region);
        if l.depth == 0 && l.regions.is_empty() && l.id.is_some() {
            recorder::phase("serial");
            recorder::work_begin(None);
            l.serial = true;
        }
    });
}

/// An implicit task (a thread's part of a parallel region) begins.
pub fn implicit_begin(word: u64, index: u32) {
    with_local(|l| {
        l.depth += 1;
        // A thread of a nested team that is not one of the p processors is not recorded; one
        // that is (an idle thread of the outermost team lent to a nested team) works there.
        let nested = l.depth > 1 || word & NESTED != 0;
        if nested && l.id.is_none() && !l.counted_nested {
            l.counted_nested = true;
            run::note_nested_only();
        }
        if l.depth > 1 || nested && l.id.is_none() {
            return;
        }
        let p = run::p();
        if l.id.is_none() && p > 0 && p != u32::MAX {
            match (index < p).then(|| claim(index)).flatten() {
                Some(id) if recorder::thread_start(id) => {
                    l.id = Some(id);
                    arm_exit();
                }
                _ => {
                    if !l.counted_beyond {
                        l.counted_beyond = true;
                        run::note_beyond_p();
                    }
                }
            }
        }
        if l.id.is_none() {
            return;
        }
        let name = decode(word).0.unwrap_or("parallel");
        l.phases.clear();
        l.phases.push(name);
        recorder::phase(name);
        recorder::cpu_sample();
        recorder::work_begin(None);
    });
}

/// An implicit task ends.
pub fn implicit_end() {
    with_local(|l| {
        if l.depth == 1 && l.id.is_some() {
            close_frames(l);
            recorder::work_end(None);
            recorder::cpu_sample();
            l.phases.clear();
            if l.regions.is_empty() {
                recorder::phase("serial");
            }
        }
        l.depth = l.depth.saturating_sub(1);
    });
}

/// Ends the waits still open (a task or region that ends inside one).
fn close_frames(l: &mut Local) {
    while let Some(f) = l.frames.pop() {
        if let Frame::Wait {
            object,
            active: true,
        } = f
        {
            recorder::wait_end(WaitKind::Barrier, object);
        }
    }
}

/// A barrier, taskwait, taskgroup or reduction wait begins. libomp's waiting threads spin
/// (for `KMP_BLOCKTIME`, 200 ms by default): CPU samples at the wait's ends keep that CPU time
/// from backing the work around it, where descheduled work would otherwise look computed.
pub fn sync_wait_begin(object: &'static str) {
    with_local(|l| {
        if l.id.is_some() {
            recorder::cpu_sample();
            recorder::wait_begin(WaitKind::Barrier, object);
            l.frames.push(Frame::Wait {
                object,
                active: true,
            });
        }
    });
}

/// The innermost such wait ends.
pub fn sync_wait_end() {
    with_local(|l| {
        if l.id.is_none() {
            return;
        }
        if let Some(Frame::Wait { object, active }) = l.frames.last().copied() {
            l.frames.pop();
            if active {
                recorder::wait_end(WaitKind::Barrier, object);
                recorder::cpu_sample();
            }
        }
    });
}

/// The thread starts waiting for a lock, critical section or ordered section.
pub fn lock_wait_begin(object: &'static str) {
    with_local(|l| {
        if l.id.is_some() {
            recorder::wait_begin(WaitKind::Lock, object);
        }
    });
}

/// The thread that last acquired each lock (by its OMPT wait id; `None`: a thread not
/// recorded): the lock's holder, and so, when the next thread acquires it, the one that released
/// it to that thread (`by=`). It is taken at the acquisition, not from the release: the runtime
/// calls `mutex_released` after the unlock, so the next thread can acquire the lock, and look,
/// before the releaser's callback has run. Beside two CPU hogs that happened about once in 200
/// runs of `categories.c`'s critical phase: a second acquisition with no `by=`.
static HOLDERS: LazyLock<Mutex<HashMap<u64, Option<u32>>>> = LazyLock::new(Mutex::default);

/// Thread `id` holds the lock `wait_id` now; the thread that held it before, if recorded.
fn hold(wait_id: u64, id: Option<u32>) -> Option<u32> {
    HOLDERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(wait_id, id)
        .flatten()
}

/// It has the lock (`wait_id`), which the lock's previous holder released to it.
pub fn lock_wait_end(object: &'static str, wait_id: u64) {
    with_local(|l| {
        let by = hold(wait_id, l.id);
        if l.id.is_some() {
            recorder::wait_end_by(WaitKind::Lock, object, by);
        }
    });
}

/// It took the lock `wait_id` without waiting (`omp_test_lock`, `omp_test_nest_lock`): nothing
/// is recorded, but it is the lock's holder.
pub fn lock_taken(wait_id: u64) {
    with_local(|l| {
        hold(wait_id, l.id);
    });
}

/// The thread releases a lock: a `release` event (docs/openmp.md).
pub fn lock_release(object: &'static str) {
    with_local(|l| {
        if l.id.is_some() {
            recorder::release(WaitKind::Lock, object);
        }
    });
}

/// The thread switches from one task to another; `prior_explicit` / `next_explicit` say
/// whether each is an explicit task. Inside a wait, an explicit task is work: the wait is
/// suspended while it runs.
pub fn task_switch(prior_explicit: bool, next_explicit: bool) {
    with_local(|l| {
        if l.id.is_none() || prior_explicit == next_explicit {
            return;
        }
        if next_explicit {
            if let Some(Frame::Wait { object, active }) = l.frames.last_mut()
                && *active
            {
                recorder::wait_end(WaitKind::Barrier, *object);
                *active = false;
            }
            l.frames.push(Frame::Task);
        } else {
            if l.frames.last() == Some(&Frame::Task) {
                l.frames.pop();
            }
            if let Some(Frame::Wait { object, active }) = l.frames.last_mut()
                && !*active
            {
                recorder::wait_begin(WaitKind::Barrier, *object);
                *active = true;
            }
        }
    });
}

/// The program marks a data movement of `bytes` (`pp_comm_begin` of `pp_ompt.h`).
pub fn comm_begin(bytes: u64) {
    with_local(|l| {
        if l.id.is_some() {
            recorder::comm_begin(bytes);
        }
    });
}

/// The data movement ends.
pub fn comm_end(bytes: u64) {
    with_local(|l| {
        if l.id.is_some() {
            recorder::comm_end(bytes);
        }
    });
}

/// The program asks for the thread's buffered events to be written to the log now.
pub fn flush() {
    recorder::flush();
}

/// A work-sharing loop begins on this thread: it names the following time.
pub fn loop_begin(codeptr: *const c_void) {
    with_local(|l| {
        if l.id.is_some() && l.depth >= 1 {
            let region = l.phases.first().copied().unwrap_or("parallel");
            let name = *l
                .names
                .entry(codeptr as usize)
                .or_insert_with(|| names::work_loop(region, codeptr));
            l.phases.push(name);
            recorder::phase(name);
        }
    });
}

/// The loop ends: the time is the region's again.
pub fn loop_end() {
    with_local(|l| {
        if l.id.is_some() && l.depth >= 1 && l.phases.len() > 1 {
            l.phases.pop();
            if let Some(&name) = l.phases.last() {
                recorder::phase(name);
            }
        }
    });
}

/// The runtime ends this thread: it stops recording.
pub fn thread_end() {
    with_local(|l| {
        if l.id.take().is_some() {
            end_open(l);
            recorder::thread_stop();
        }
    });
}

/// The runtime shuts down (on this thread): the serial work ends and the log is finished.
pub fn finalize() {
    with_local(end_open);
    run::finish();
}

#[cfg(test)]
mod tests {
    use super::hold;

    /// The thread a lock's next acquirer names (`by=`) is its previous holder, whenever the
    /// releaser's callback runs: none for the first acquisition, none after a holder that is
    /// not recorded, and each lock on its own.
    #[test]
    fn the_releaser_is_the_previous_holder() {
        let (a, b) = (0x5eed_0001, 0x5eed_0002);
        assert_eq!(hold(a, Some(0)), None);
        assert_eq!(hold(a, Some(1)), Some(0));
        assert_eq!(hold(b, Some(1)), None);
        assert_eq!(hold(a, None), Some(1));
        assert_eq!(hold(a, Some(0)), None);
        assert_eq!(hold(a, Some(0)), Some(0));
        assert_eq!(hold(b, Some(0)), Some(1));
    }
}
