//! The parts of the OpenMP tools interface (OMPT, OpenMP 5.1 `omp-tools.h`) the tool uses,
//! declared by hand so that building it needs no C header: the values are the specification's
//! and the same in LLVM's libomp.

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `ompt_data_t`: a word the runtime keeps for the tool per thread, region and task.
#[repr(C)]
#[derive(Clone, Copy)]
pub union Data {
    pub value: u64,
    pub ptr: *mut c_void,
}

pub type InterfaceFn = Option<unsafe extern "C" fn()>;
pub type FunctionLookup = unsafe extern "C" fn(name: *const c_char) -> InterfaceFn;
pub type Initialize =
    unsafe extern "C" fn(lookup: FunctionLookup, initial_device: c_int, tool: *mut Data) -> c_int;
pub type Finalize = unsafe extern "C" fn(tool: *mut Data);
/// `ompt_set_callback_t`; the callback is any of the typed callbacks below, cast.
pub type SetCallback = unsafe extern "C" fn(event: c_int, callback: InterfaceFn) -> c_int;

/// `ompt_start_tool_result_t`.
#[repr(C)]
pub struct StartToolResult {
    pub initialize: Initialize,
    pub finalize: Finalize,
    pub tool_data: Data,
}

// `ompt_callbacks_t`
pub const CALLBACK_THREAD_END: c_int = 2;
pub const CALLBACK_PARALLEL_BEGIN: c_int = 3;
pub const CALLBACK_PARALLEL_END: c_int = 4;
pub const CALLBACK_TASK_CREATE: c_int = 5;
pub const CALLBACK_TASK_SCHEDULE: c_int = 6;
pub const CALLBACK_IMPLICIT_TASK: c_int = 7;
pub const CALLBACK_CONTROL_TOOL: c_int = 11;
pub const CALLBACK_SYNC_REGION_WAIT: c_int = 16;
pub const CALLBACK_MUTEX_RELEASED: c_int = 17;
pub const CALLBACK_WORK: c_int = 20;
pub const CALLBACK_MUTEX_ACQUIRE: c_int = 26;
pub const CALLBACK_MUTEX_ACQUIRED: c_int = 27;

// `ompt_set_result_t`: what `ompt_set_callback` answers.
pub const SET_NEVER: c_int = 1;

// `ompt_scope_endpoint_t`
pub const SCOPE_BEGIN: c_int = 1;
pub const SCOPE_END: c_int = 2;

// `ompt_task_flag_t`
pub const TASK_INITIAL: c_int = 0x1;
pub const TASK_EXPLICIT: c_int = 0x4;

// `ompt_sync_region_t`
pub const SYNC_BARRIER: c_int = 1;
pub const SYNC_BARRIER_IMPLICIT: c_int = 2;
pub const SYNC_BARRIER_EXPLICIT: c_int = 3;
pub const SYNC_BARRIER_IMPLEMENTATION: c_int = 4;
pub const SYNC_TASKWAIT: c_int = 5;
pub const SYNC_TASKGROUP: c_int = 6;
pub const SYNC_REDUCTION: c_int = 7;
pub const SYNC_BARRIER_IMPLICIT_WORKSHARE: c_int = 8;
pub const SYNC_BARRIER_IMPLICIT_PARALLEL: c_int = 9;
pub const SYNC_BARRIER_TEAMS: c_int = 10;

// `ompt_work_t`
pub const WORK_LOOP: c_int = 1;
pub const WORK_SECTIONS: c_int = 2;
pub const WORK_TASKLOOP: c_int = 7;
// OpenMP 5.2: a worksharing loop whose schedule the runtime knows reports it instead of
// `ompt_work_loop` (static, dynamic, guided, other), as newer libomp does.
pub const WORK_LOOP_STATIC: c_int = 10;
pub const WORK_LOOP_OTHER: c_int = 13;

// `ompt_mutex_t`
pub const MUTEX_LOCK: c_int = 1;
pub const MUTEX_TEST_LOCK: c_int = 2;
pub const MUTEX_NEST_LOCK: c_int = 3;
pub const MUTEX_TEST_NEST_LOCK: c_int = 4;
pub const MUTEX_CRITICAL: c_int = 5;
pub const MUTEX_ORDERED: c_int = 7;

pub type ThreadEnd = unsafe extern "C" fn(thread: *mut Data);
pub type ParallelBegin = unsafe extern "C" fn(
    encountering_task: *mut Data,
    encountering_frame: *const c_void,
    parallel: *mut Data,
    requested: c_uint,
    flags: c_int,
    codeptr: *const c_void,
);
pub type ParallelEnd = unsafe extern "C" fn(
    parallel: *mut Data,
    encountering_task: *mut Data,
    flags: c_int,
    codeptr: *const c_void,
);
pub type TaskCreate = unsafe extern "C" fn(
    encountering_task: *mut Data,
    encountering_frame: *const c_void,
    new_task: *mut Data,
    flags: c_int,
    has_dependences: c_int,
    codeptr: *const c_void,
);
pub type TaskSchedule =
    unsafe extern "C" fn(prior: *mut Data, prior_status: c_int, next: *mut Data);
pub type ImplicitTask = unsafe extern "C" fn(
    endpoint: c_int,
    parallel: *mut Data,
    task: *mut Data,
    actual: c_uint,
    index: c_uint,
    flags: c_int,
);
pub type SyncRegion = unsafe extern "C" fn(
    kind: c_int,
    endpoint: c_int,
    parallel: *mut Data,
    task: *mut Data,
    codeptr: *const c_void,
);
pub type Work = unsafe extern "C" fn(
    kind: c_int,
    endpoint: c_int,
    parallel: *mut Data,
    task: *mut Data,
    count: u64,
    codeptr: *const c_void,
);
pub type MutexAcquire = unsafe extern "C" fn(
    kind: c_int,
    hint: c_uint,
    implementation: c_uint,
    wait_id: u64,
    codeptr: *const c_void,
);
pub type Mutex = unsafe extern "C" fn(kind: c_int, wait_id: u64, codeptr: *const c_void);
pub type ControlTool = unsafe extern "C" fn(
    command: u64,
    modifier: u64,
    arg: *mut c_void,
    codeptr: *const c_void,
) -> c_int;

// `omp_control_tool` commands: the standard's flush, and this tool's own (the standard leaves
// 64 and above to tools); the values are in `ompt/include/pp_ompt.h`.
pub const CONTROL_FLUSH: u64 = 3;
pub const CONTROL_COMM_BEGIN: u64 = 64;
pub const CONTROL_COMM_END: u64 = 65;
// `omp_control_tool_result_t`
pub const CONTROL_SUCCESS: c_int = 0;
pub const CONTROL_IGNORED: c_int = 1;
