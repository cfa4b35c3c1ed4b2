//! `libpp_ompt.so`: an OpenMP tool (OMPT, OpenMP 5.x) that records an unmodified OpenMP
//! program into a pp event log, so that `pp` gives its lost-cycles profile.
//!
//! The OpenMP runtime (LLVM's libomp; GCC's libgomp has no OMPT) loads it through
//! `OMP_TOOL_LIBRARIES=/path/to/libpp_ompt.so`; `pp run -- PROGRAM` sets that up (and preloads
//! it, so that the run's time 0 is the program's start). The log goes where the recorder's
//! would (`PP_LOG`, else `./pp.log`), with the run parameters of `PP_PARAMS`
//! (`key=value ...`). `p` is the team size of the first outermost parallel region. What each
//! OpenMP event becomes is in `docs/openmp.md`.
//!
//! Rust programs that use the recorder do not link this crate.

mod callbacks;
mod ffi;
mod names;
mod run;
mod thread;

use std::ffi::{c_char, c_int, c_uint};

use ffi::{Data, FunctionLookup, InterfaceFn, SetCallback, StartToolResult};

/// Takes the run's epoch when the library is loaded: at program start when it is preloaded.
#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = {
    extern "C" fn on_load() {
        run::take_epoch();
    }
    on_load
};

static mut RESULT: StartToolResult = StartToolResult {
    initialize,
    finalize,
    tool_data: Data { value: 0 },
};

/// The OMPT entry point: the runtime calls it once, before its first parallel region, and
/// gets the tool's initializer and finalizer.
///
/// # Safety
/// Called by the OpenMP runtime as OpenMP 5.x specifies.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ompt_start_tool(
    _omp_version: c_uint,
    _runtime_version: *const c_char,
) -> *mut StartToolResult {
    run::take_epoch();
    // SAFETY: the runtime calls ompt_start_tool once; RESULT is never written.
    &raw mut RESULT
}

/// For the MPI tracer (`pp run -- mpirun`, docs/mpi.md): the pp thread the calling thread
/// records as in this process's log, or -1 when it records nothing (no parallel region yet,
/// a thread the tool does not record). The tracer finds it with `dlsym`, so that each MPI
/// call lands on the OpenMP thread that made it.
#[unsafe(no_mangle)]
pub extern "C" fn pp_ompt_thread_id() -> c_int {
    thread::id().map_or(-1, |id| id as c_int)
}

/// For the MPI tracer: the `CLOCK_MONOTONIC` nanoseconds at this log's time 0, or 0 when the
/// log's clock is another (`PP_CLOCK=tsc`).
#[unsafe(no_mangle)]
pub extern "C" fn pp_ompt_epoch_ns() -> u64 {
    run::epoch_monotonic_ns().unwrap_or(0)
}

unsafe extern "C" fn initialize(lookup: FunctionLookup, _device: c_int, _tool: *mut Data) -> c_int {
    // SAFETY: `lookup` is the runtime's; the name is NUL-terminated.
    let Some(set) = (unsafe { lookup(c"ompt_set_callback".as_ptr()) }) else {
        eprintln!("pp-ompt: the OpenMP runtime has no ompt_set_callback; not recording");
        return 0;
    };
    // SAFETY: `ompt_set_callback` has this type (OpenMP 5.x, 4.6.1.3).
    let set: SetCallback =
        unsafe { std::mem::transmute::<unsafe extern "C" fn(), SetCallback>(set) };
    macro_rules! register {
        ($event:expr, $ty:ty, $f:expr, $needed:expr) => {{
            let f: $ty = $f;
            // SAFETY: the runtime calls the callback with the signature of its event.
            let cb: InterfaceFn =
                Some(unsafe { std::mem::transmute::<$ty, unsafe extern "C" fn()>(f) });
            let r = unsafe { set($event, cb) };
            if r == ffi::SET_NEVER && $needed {
                eprintln!(
                    "pp-ompt: the OpenMP runtime never reports {}; the profile misses it",
                    stringify!($event)
                );
            }
        }};
    }
    use callbacks as c;
    register!(
        ffi::CALLBACK_PARALLEL_BEGIN,
        ffi::ParallelBegin,
        c::parallel_begin,
        true
    );
    register!(
        ffi::CALLBACK_PARALLEL_END,
        ffi::ParallelEnd,
        c::parallel_end,
        true
    );
    register!(
        ffi::CALLBACK_IMPLICIT_TASK,
        ffi::ImplicitTask,
        c::implicit_task,
        true
    );
    register!(
        ffi::CALLBACK_SYNC_REGION_WAIT,
        ffi::SyncRegion,
        c::sync_region_wait,
        true
    );
    register!(
        ffi::CALLBACK_MUTEX_ACQUIRE,
        ffi::MutexAcquire,
        c::mutex_acquire,
        true
    );
    register!(
        ffi::CALLBACK_MUTEX_ACQUIRED,
        ffi::Mutex,
        c::mutex_acquired,
        true
    );
    register!(
        ffi::CALLBACK_MUTEX_RELEASED,
        ffi::Mutex,
        c::mutex_released,
        false
    );
    register!(
        ffi::CALLBACK_TASK_CREATE,
        ffi::TaskCreate,
        c::task_create,
        true
    );
    register!(
        ffi::CALLBACK_TASK_SCHEDULE,
        ffi::TaskSchedule,
        c::task_schedule,
        true
    );
    register!(ffi::CALLBACK_WORK, ffi::Work, c::work, false);
    register!(
        ffi::CALLBACK_CONTROL_TOOL,
        ffi::ControlTool,
        c::control_tool,
        false
    );
    register!(
        ffi::CALLBACK_THREAD_END,
        ffi::ThreadEnd,
        c::thread_end,
        false
    );
    1
}

unsafe extern "C" fn finalize(_tool: *mut Data) {
    thread::finalize();
}
