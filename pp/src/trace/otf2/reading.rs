//! Drives the OTF2 reader over a trace: definitions, then every CPU thread's events in time
//! order through the global event reader, each record handed to the [`Mapper`].

use std::collections::BTreeMap;
use std::ffi::{CString, c_void};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::definitions::{Definitions, Layout};
use super::events::Mapper;
use super::ffi::{self, CALLBACK_SUCCESS, CallbackCode, Handle, Lib};
use super::order::Order;
use crate::event::Symbols;

/// What reading a trace's events gave: the names and teams, events handed over, records
/// read, records ignored by kind, and whether the events came out of order
/// ([`Order::disordered`]).
pub struct Imported {
    pub symbols: Symbols,
    pub events: u64,
    pub records: u64,
    pub ignored: BTreeMap<&'static str, u64>,
    pub disordered: bool,
}

/// Closes the reader however the import ends.
struct Reader<'a> {
    lib: &'a Lib,
    handle: Handle,
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        // SAFETY: a reader from OTF2_Reader_Open, closed once.
        unsafe {
            (self.lib.reader_close)(self.handle);
        }
    }
}

fn check(lib: &Lib, what: &str, code: ffi::ErrorCode) -> Result<(), String> {
    if code == 0 {
        return Ok(());
    }
    let why = ffi::last_error().unwrap_or_else(|| lib.error_text(code));
    Err(format!("{what}: {why}"))
}

/// A trace opened: its definitions read and its threads' event files open.
pub struct Trace<'a> {
    reader: Reader<'a>,
    pub defs: Definitions,
    pub layout: Layout,
}

// SAFETY: the OTF2 reader is not tied to the thread that opened it; a `Trace` is used by one
// thread at a time (`pp import` reads the events on a second thread while the first waits
// for them, docs/otf2.md#memory-and-speed).
unsafe impl Send for Trace<'_> {}

/// Opens the trace whose anchor file is `anchor`: its definitions, and the event files of
/// its threads.
pub fn open<'a>(lib: &'a Lib, anchor: &Path) -> Result<Trace<'a>, String> {
    ffi::capture_errors(lib);
    ffi::last_error();
    let mut bytes = Vec::new();
    if std::fs::File::open(anchor)
        .and_then(|f| f.take(1 << 20).read_to_end(&mut bytes))
        .is_ok()
    {
        super::anchor::check(&bytes)?;
    }
    let path = CString::new(anchor.as_os_str().as_bytes())
        .map_err(|_| "a path with a NUL byte".to_string())?;
    // SAFETY: a valid C string; the reader is closed by `Reader`'s drop.
    let handle = unsafe { (lib.reader_open)(path.as_ptr()) };
    if handle.is_null() {
        let why = ffi::last_error().unwrap_or_else(|| "cannot open the trace".into());
        return Err(format!("not a readable OTF2 anchor file ({why})"));
    }
    let reader = Reader { lib, handle };
    // SAFETY: OTF2 calls on an open reader.
    unsafe {
        check(
            lib,
            "setting up the reader",
            (lib.set_serial_collective_callbacks)(handle),
        )?;
        let mut n = 0u64;
        check(
            lib,
            "not a readable OTF2 anchor file",
            (lib.get_number_of_locations)(handle, &mut n),
        )?;
    }
    let defs = Definitions::read(lib, reader.handle)?;
    let layout = defs.layout();
    if layout.p() == 0 {
        return Err("no CPU thread locations: nothing to import".into());
    }
    // The threads' locations that have events (one without has no event file to open).
    let mut threads: Vec<u64> = defs
        .locations
        .iter()
        .filter(|l| l.events > 0 && layout.thread_of.contains_key(&l.id))
        .map(|l| l.id)
        .collect();
    threads.sort_unstable();
    // SAFETY: OTF2 calls on an open reader.
    unsafe {
        for &loc in &threads {
            check(
                lib,
                "selecting locations",
                (lib.select_location)(handle, loc),
            )?;
        }
        let have_local_defs = (lib.open_def_files)(handle) == 0;
        ffi::last_error();
        check(lib, "opening the event files", (lib.open_evt_files)(handle))?;
        for &loc in &threads {
            if have_local_defs {
                let def_reader = (lib.get_def_reader)(handle, loc);
                if !def_reader.is_null() {
                    let mut read = 0u64;
                    let code = (lib.read_all_local_definitions)(handle, def_reader, &mut read);
                    (lib.close_def_reader)(handle, def_reader);
                    check(lib, &format!("local definitions of location {loc}"), code)?;
                }
            }
            if (lib.get_evt_reader)(handle, loc).is_null() {
                let why = ffi::last_error().unwrap_or_else(|| "no event reader".into());
                return Err(format!("events of location {loc}: {why}"));
            }
        }
        if have_local_defs {
            (lib.close_def_files)(handle);
        }
    }
    Ok(Trace {
        reader,
        defs,
        layout,
    })
}

impl Trace<'_> {
    /// Reads every event record in time order, mapping them; the events go to `order`.
    pub fn read(&self, order: Order<'_>) -> Result<Imported, String> {
        let lib = self.reader.lib;
        let handle = self.reader.handle;
        let mut mapper = Mapper::new(&self.defs, &self.layout, order);
        // SAFETY: OTF2 calls on an open reader; the mapper is the callbacks' user data and
        // outlives the reading.
        unsafe {
            let evt_reader = (lib.get_global_evt_reader)(handle);
            if evt_reader.is_null() {
                let why = ffi::last_error().unwrap_or_else(|| "no global event reader".into());
                return Err(format!("events: {why}"));
            }
            let callbacks = (lib.evt_callbacks_new)();
            let registered = register(lib, callbacks);
            let code = match registered {
                Ok(()) => (lib.register_global_evt_callbacks)(
                    handle,
                    evt_reader,
                    callbacks,
                    &mut mapper as *mut Mapper as *mut c_void,
                ),
                Err(e) => {
                    (lib.evt_callbacks_delete)(callbacks);
                    return Err(e);
                }
            };
            (lib.evt_callbacks_delete)(callbacks);
            check(lib, "registering the event callbacks", code)?;
            let mut read = 0u64;
            let code = (lib.read_all_global_events)(handle, evt_reader, &mut read);
            (lib.close_global_evt_reader)(handle, evt_reader);
            (lib.close_evt_files)(handle);
            if code != 0 {
                let (loc, ticks) = mapper.last;
                let after = if mapper.records == 0 {
                    "before the first record".to_string()
                } else {
                    format!(
                        "after record {} (location {loc} at tick {ticks})",
                        mapper.records
                    )
                };
                check(lib, &format!("reading events, {after}"), code)?;
            }
        }
        let records = mapper.records;
        let ignored = std::mem::take(&mut mapper.ignored);
        let (symbols, events, disordered) = mapper
            .finish()
            .map_err(|e| format!("sorting its events in a temporary file: {e}"))?;
        Ok(Imported {
            symbols,
            events,
            records,
            ignored,
            disordered,
        })
    }
}

fn mapper<'a>(user: *mut c_void) -> &'a mut Mapper<'a, 'a> {
    // SAFETY: the user data registered in `read`, alive while the events are read.
    unsafe { &mut *(user as *mut Mapper) }
}

/// Record kinds that are read and not mapped: each is counted and named on standard error.
const IGNORED: [&str; 40] = [
    "BufferFlush",
    "MeasurementOnOff",
    "MpiRequestTest",
    "MpiRequestCancelled",
    "OmpTaskCreate",
    "OmpTaskSwitch",
    "OmpTaskComplete",
    "Metric",
    "ParameterString",
    "ParameterInt",
    "ParameterUnsignedInt",
    "RmaWinCreate",
    "RmaWinDestroy",
    "RmaCollectiveBegin",
    "RmaCollectiveEnd",
    "RmaGroupSync",
    "RmaRequestLock",
    "RmaAcquireLock",
    "RmaTryLock",
    "RmaReleaseLock",
    "RmaSync",
    "RmaWaitChange",
    "RmaPut",
    "RmaGet",
    "RmaAtomic",
    "RmaOpCompleteBlocking",
    "RmaOpCompleteNonBlocking",
    "RmaOpTest",
    "RmaOpCompleteRemote",
    "ThreadTaskCreate",
    "ThreadTaskSwitch",
    "ThreadTaskComplete",
    "CallingContextEnter",
    "CallingContextLeave",
    "CallingContextSample",
    "ProgramBegin",
    "ProgramEnd",
    "NonBlockingCollectiveRequest",
    "NonBlockingCollectiveComplete",
    "Unknown",
];

/// The I/O records, also ignored (named together).
const IGNORED_IO: [&str; 13] = [
    "IoCreateHandle",
    "IoDestroyHandle",
    "IoDuplicateHandle",
    "IoSeek",
    "IoChangeStatusFlags",
    "IoDeleteFile",
    "IoOperationBegin",
    "IoOperationTest",
    "IoOperationIssued",
    "IoOperationComplete",
    "IoOperationCancelled",
    "IoAcquireLock",
    "IoReleaseLock",
];

/// A callback for an ignored kind. It declares only the four arguments every event callback
/// starts with (location, time, user data, attribute list): the C calling conventions of the
/// platforms OTF2 runs on (x86-64 System V, AArch64) let a function ignore trailing
/// arguments, which the caller passes and removes.
extern "C" fn ignored<const K: usize>(
    location: u64,
    time: u64,
    user: *mut c_void,
    _attributes: *mut c_void,
) -> CallbackCode {
    let m = mapper(user);
    m.touch(location, time);
    m.ignore(match IGNORED.get(K) {
        Some(kind) => kind,
        None => IGNORED_IO[K - IGNORED.len()],
    });
    CALLBACK_SUCCESS
}

macro_rules! ignored_callbacks {
    ($($k:literal)*) => {
        [$(ignored::<$k> as *const c_void),*]
    };
}

/// Sets every callback on the `OTF2_GlobalEvtReaderCallbacks` object `callbacks`.
fn register(lib: &Lib, callbacks: Handle) -> Result<(), String> {
    let mapped: [(&str, *const c_void); 23] = [
        ("Enter", enter as *const c_void),
        ("Leave", leave as *const c_void),
        ("MpiSend", mpi_send as *const c_void),
        ("MpiIsend", mpi_isend as *const c_void),
        ("MpiIsendComplete", touch as *const c_void),
        ("MpiIrecvRequest", touch as *const c_void),
        ("MpiRecv", mpi_recv as *const c_void),
        ("MpiIrecv", mpi_irecv as *const c_void),
        ("MpiCollectiveBegin", touch as *const c_void),
        ("MpiCollectiveEnd", mpi_collective_end as *const c_void),
        ("OmpFork", fork as *const c_void),
        ("OmpJoin", join as *const c_void),
        ("OmpAcquireLock", acquire_lock as *const c_void),
        ("OmpReleaseLock", touch as *const c_void),
        ("ThreadFork", fork as *const c_void),
        ("ThreadJoin", join as *const c_void),
        ("ThreadTeamBegin", team_begin as *const c_void),
        ("ThreadTeamEnd", team_end as *const c_void),
        ("ThreadAcquireLock", acquire_lock as *const c_void),
        ("ThreadCreate", thread_create as *const c_void),
        ("ThreadBegin", team_begin as *const c_void),
        ("ThreadWait", thread_wait as *const c_void),
        ("ThreadEnd", team_end as *const c_void),
    ];
    let ignored: [*const c_void; 53] = ignored_callbacks!(
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
        30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52
    );
    let names = IGNORED.iter().chain(IGNORED_IO.iter());
    let release = [("ThreadReleaseLock", touch as *const c_void)];
    for (kind, f) in mapped
        .into_iter()
        .chain(release)
        .chain(names.copied().zip(ignored))
    {
        let setter = lib.setter("GlobalEvtReaderCallbacks", kind)?;
        // SAFETY: `f` is a callback for records of `kind` (see `ignored` for the others).
        let code = unsafe { setter(callbacks, f) };
        if code != 0 {
            return Err(format!(
                "setting the {kind} callback: {}",
                lib.error_text(code)
            ));
        }
    }
    Ok(())
}

extern "C" fn touch(location: u64, time: u64, user: *mut c_void, _a: *mut c_void) -> CallbackCode {
    mapper(user).touch(location, time);
    CALLBACK_SUCCESS
}

extern "C" fn enter(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
    region: u32,
) -> CallbackCode {
    mapper(user).enter(location, time, region);
    CALLBACK_SUCCESS
}

extern "C" fn leave(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
    region: u32,
) -> CallbackCode {
    mapper(user).leave(location, time, region);
    CALLBACK_SUCCESS
}

#[allow(clippy::too_many_arguments)]
extern "C" fn mpi_send(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
    receiver: u32,
    comm: u32,
    tag: u32,
    bytes: u64,
) -> CallbackCode {
    mapper(user).send(location, time, receiver, comm, tag, bytes);
    CALLBACK_SUCCESS
}

#[allow(clippy::too_many_arguments)]
extern "C" fn mpi_isend(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
    receiver: u32,
    comm: u32,
    tag: u32,
    bytes: u64,
    _request: u64,
) -> CallbackCode {
    mapper(user).send(location, time, receiver, comm, tag, bytes);
    CALLBACK_SUCCESS
}

#[allow(clippy::too_many_arguments)]
extern "C" fn mpi_recv(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
    sender: u32,
    comm: u32,
    tag: u32,
    bytes: u64,
) -> CallbackCode {
    mapper(user).recv(location, time, sender, comm, tag, bytes);
    CALLBACK_SUCCESS
}

#[allow(clippy::too_many_arguments)]
extern "C" fn mpi_irecv(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
    sender: u32,
    comm: u32,
    tag: u32,
    bytes: u64,
    _request: u64,
) -> CallbackCode {
    mapper(user).recv(location, time, sender, comm, tag, bytes);
    CALLBACK_SUCCESS
}

#[allow(clippy::too_many_arguments)]
extern "C" fn mpi_collective_end(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
    _op: u8,
    comm: u32,
    root: u32,
    sent: u64,
    _received: u64,
) -> CallbackCode {
    mapper(user).collective_end(location, time, comm, root, sent);
    CALLBACK_SUCCESS
}

/// `OmpFork` (requested threads) and `ThreadFork` (model, requested threads): only the
/// location and time are used.
extern "C" fn fork(location: u64, time: u64, user: *mut c_void, _a: *mut c_void) -> CallbackCode {
    mapper(user).fork(location, time);
    CALLBACK_SUCCESS
}

extern "C" fn join(location: u64, time: u64, user: *mut c_void, _a: *mut c_void) -> CallbackCode {
    mapper(user).join(location, time);
    CALLBACK_SUCCESS
}

/// `ThreadCreate` and `ThreadWait` (thread contingent, sequence count; `ThreadBegin` and
/// `ThreadEnd` are mapped as a team's begin and end): only the location and time are used.
extern "C" fn thread_create(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
) -> CallbackCode {
    mapper(user).thread_create(location, time);
    CALLBACK_SUCCESS
}

extern "C" fn thread_wait(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
) -> CallbackCode {
    mapper(user).thread_wait(location, time);
    CALLBACK_SUCCESS
}

extern "C" fn team_begin(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
) -> CallbackCode {
    mapper(user).team_begin_record(location, time);
    CALLBACK_SUCCESS
}

extern "C" fn team_end(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
) -> CallbackCode {
    mapper(user).team_end_record(location, time);
    CALLBACK_SUCCESS
}

extern "C" fn acquire_lock(
    location: u64,
    time: u64,
    user: *mut c_void,
    _a: *mut c_void,
) -> CallbackCode {
    mapper(user).acquire_lock(location, time);
    CALLBACK_SUCCESS
}
