//! The OTF2 reader functions `pp import` uses, loaded at run time with `dlopen` so that the
//! default build needs no system library. Declared by hand from OTF2 3.0's headers
//! (`otf2/OTF2_Reader.h`, `OTF2_GlobalDefReaderCallbacks.h`, `OTF2_GlobalEvtReaderCallbacks.h`,
//! `OTF2_ErrorCodes.h`).

use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::OnceLock;

/// `OTF2_ErrorCode` (a C enum): 0 is `OTF2_SUCCESS`.
pub type ErrorCode = i32;
/// `OTF2_CallbackCode`: 0 is `OTF2_CALLBACK_SUCCESS`.
pub type CallbackCode = i32;
/// `OTF2_CALLBACK_SUCCESS`.
pub const CALLBACK_SUCCESS: CallbackCode = 0;
/// `OTF2_UNDEFINED_UINT32`.
pub const UNDEFINED_U32: u32 = u32::MAX;

/// An opaque OTF2 object (`OTF2_Reader*`, `OTF2_GlobalEvtReader*`, ...).
pub type Handle = *mut c_void;

/// The shared object names tried in order: Debian's (`libopen-trace-format2-dev` 3.0), then
/// upstream's, each with its soname first.
pub const SONAMES: [&str; 4] = [
    "libopen-trace-format2.so.10",
    "libotf2.so.10",
    "libopen-trace-format2.so",
    "libotf2.so",
];

macro_rules! functions {
    ($($name:ident = $symbol:literal : fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// The loaded OTF2 functions.
        #[allow(non_snake_case)]
        pub struct Lib {
            $(pub $name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }

        impl Lib {
            /// Resolves every function in `handle` (from `dlopen`).
            fn resolve(handle: *mut c_void) -> Result<Lib, String> {
                Ok(Lib {
                    $($name: {
                        let f = symbol(handle, $symbol)?;
                        // SAFETY: the symbol is the OTF2 function of this name, whose C
                        // signature the declaration above copies.
                        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> $ret>(f) }
                    },)*
                })
            }
        }
    };
}

functions! {
    reader_open = "OTF2_Reader_Open": fn(*const c_char) -> Handle;
    reader_close = "OTF2_Reader_Close": fn(Handle) -> ErrorCode;
    set_serial_collective_callbacks = "OTF2_Reader_SetSerialCollectiveCallbacks": fn(Handle) -> ErrorCode;
    get_number_of_locations = "OTF2_Reader_GetNumberOfLocations": fn(Handle, *mut u64) -> ErrorCode;
    select_location = "OTF2_Reader_SelectLocation": fn(Handle, u64) -> ErrorCode;
    open_def_files = "OTF2_Reader_OpenDefFiles": fn(Handle) -> ErrorCode;
    close_def_files = "OTF2_Reader_CloseDefFiles": fn(Handle) -> ErrorCode;
    open_evt_files = "OTF2_Reader_OpenEvtFiles": fn(Handle) -> ErrorCode;
    close_evt_files = "OTF2_Reader_CloseEvtFiles": fn(Handle) -> ErrorCode;
    get_def_reader = "OTF2_Reader_GetDefReader": fn(Handle, u64) -> Handle;
    read_all_local_definitions = "OTF2_Reader_ReadAllLocalDefinitions": fn(Handle, Handle, *mut u64) -> ErrorCode;
    close_def_reader = "OTF2_Reader_CloseDefReader": fn(Handle, Handle) -> ErrorCode;
    get_evt_reader = "OTF2_Reader_GetEvtReader": fn(Handle, u64) -> Handle;
    get_global_def_reader = "OTF2_Reader_GetGlobalDefReader": fn(Handle) -> Handle;
    register_global_def_callbacks = "OTF2_Reader_RegisterGlobalDefCallbacks": fn(Handle, Handle, Handle, *mut c_void) -> ErrorCode;
    read_all_global_definitions = "OTF2_Reader_ReadAllGlobalDefinitions": fn(Handle, Handle, *mut u64) -> ErrorCode;
    close_global_def_reader = "OTF2_Reader_CloseGlobalDefReader": fn(Handle, Handle) -> ErrorCode;
    get_global_evt_reader = "OTF2_Reader_GetGlobalEvtReader": fn(Handle) -> Handle;
    register_global_evt_callbacks = "OTF2_Reader_RegisterGlobalEvtCallbacks": fn(Handle, Handle, Handle, *mut c_void) -> ErrorCode;
    read_all_global_events = "OTF2_Reader_ReadAllGlobalEvents": fn(Handle, Handle, *mut u64) -> ErrorCode;
    close_global_evt_reader = "OTF2_Reader_CloseGlobalEvtReader": fn(Handle, Handle) -> ErrorCode;
    def_callbacks_new = "OTF2_GlobalDefReaderCallbacks_New": fn() -> Handle;
    def_callbacks_delete = "OTF2_GlobalDefReaderCallbacks_Delete": fn(Handle) -> ();
    evt_callbacks_new = "OTF2_GlobalEvtReaderCallbacks_New": fn() -> Handle;
    evt_callbacks_delete = "OTF2_GlobalEvtReaderCallbacks_Delete": fn(Handle) -> ();
    error_get_name = "OTF2_Error_GetName": fn(ErrorCode) -> *const c_char;
    error_get_description = "OTF2_Error_GetDescription": fn(ErrorCode) -> *const c_char;
    error_register_callback = "OTF2_Error_RegisterCallback": fn(*const c_void, *mut c_void) -> *const c_void;
}

/// `OTF2_Global{Def,Evt}ReaderCallbacks_Set<Kind>Callback(callbacks, callback)`, looked up by
/// name: every setter takes the callbacks object and one function pointer.
pub type Setter = unsafe extern "C" fn(Handle, *const c_void) -> ErrorCode;

impl Lib {
    /// The setter `OTF2_<object>_Set<kind>Callback`, e.g. `("GlobalEvtReaderCallbacks",
    /// "Enter")`.
    pub fn setter(&self, object: &str, kind: &str) -> Result<Setter, String> {
        let f = symbol(handle()?, &format!("OTF2_{object}_Set{kind}Callback"))?;
        // SAFETY: every OTF2 callback setter has this shape (the callbacks object, then a
        // function pointer of the kind's type, which has the size of a data pointer here).
        Ok(unsafe { std::mem::transmute::<*mut c_void, Setter>(f) })
    }

    /// "NAME: description" of an OTF2 error code.
    pub fn error_text(&self, code: ErrorCode) -> String {
        // SAFETY: both return static strings (or null for an unknown code).
        let (name, description) = unsafe {
            (
                (self.error_get_name)(code),
                (self.error_get_description)(code),
            )
        };
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: a NUL-terminated static string of the library.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        let (name, description) = (text(name), text(description));
        // Errors from the operating system are named by their number alone.
        if name.is_empty() || name.bytes().all(|b| b.is_ascii_digit()) {
            description
        } else {
            format!("{name}: {description}")
        }
    }
}

struct Loaded {
    handle: usize,
    lib: Lib,
}

static LOADED: OnceLock<Result<Loaded, String>> = OnceLock::new();

fn handle() -> Result<*mut c_void, String> {
    match LOADED.get() {
        Some(Ok(l)) => Ok(l.handle as *mut c_void),
        _ => Err("the OTF2 library is not loaded".into()),
    }
}

/// The OTF2 library, loaded on first use; the error says what is missing and how to get it.
pub fn lib() -> Result<&'static Lib, String> {
    let loaded = LOADED.get_or_init(|| {
        let mut tried = Vec::new();
        for name in SONAMES {
            let c = CString::new(name).expect("no NUL in a soname");
            // SAFETY: dlopen with a valid C string; the handle is never closed.
            let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if handle.is_null() {
                tried.push(name);
                continue;
            }
            keep_large_blocks_fresh();
            return Lib::resolve(handle)
                .map(|lib| Loaded {
                    handle: handle as usize,
                    lib,
                })
                .map_err(|e| format!("{name}: {e}"));
        }
        Err(format!(
            "the OTF2 library is not installed ({} not found; Debian: libopen-trace-format2-dev); tools/system-packages.sh installs it",
            tried.join(", ")
        ))
    });
    match loaded {
        Ok(l) => Ok(&l.lib),
        Err(e) => Err(e.clone()),
    }
}

/// OTF2 reads a chunk into a `malloc`ed buffer of the chunk size (256 KiB or more) and, on a
/// damaged file, can read past the bytes the file gave it: what it then finds is whatever
/// the buffer held. glibc raises its `mmap` threshold as large blocks are freed, so in a
/// long-lived process such a buffer comes from reused heap (an earlier trace's records) and
/// the damage's outcome depended on history, once a hang. A fixed threshold keeps every
/// block of 128 KiB or more a fresh mapping, zero-filled by the kernel, so a damaged trace
/// ends the same way every time (docs/otf2.md#damaged-traces).
fn keep_large_blocks_fresh() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn symbol(handle: *mut c_void, name: &str) -> Result<*mut c_void, String> {
    let c = CString::new(name).map_err(|_| format!("bad symbol name {name}"))?;
    // SAFETY: dlsym on a handle from dlopen with a valid C string.
    let f = unsafe { libc::dlsym(handle, c.as_ptr()) };
    if f.is_null() {
        Err(format!("no function {name} (an OTF2 older than 3.0?)"))
    } else {
        Ok(f)
    }
}

static LAST_ERROR: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Makes OTF2 report its errors to [`last_error`] instead of printing them.
pub fn capture_errors(lib: &Lib) {
    // SAFETY: registers a function of `OTF2_ErrorCallback`'s signature; no user data.
    unsafe {
        (lib.error_register_callback)(on_error as *const c_void, std::ptr::null_mut());
    }
}

/// The last error OTF2 reported (taken: a second call returns `None`).
pub fn last_error() -> Option<String> {
    LAST_ERROR.lock().ok().and_then(|mut e| e.take())
}

unsafe extern "C" {
    fn vsnprintf(buf: *mut c_char, n: usize, format: *const c_char, args: *mut c_void) -> i32;
}

/// `OTF2_ErrorCallback`: keeps the message (the first of a chain: the innermost cause).
extern "C" fn on_error(
    _user: *mut c_void,
    _file: *const c_char,
    _line: u64,
    _function: *const c_char,
    code: ErrorCode,
    format: *const c_char,
    args: *mut c_void,
) -> ErrorCode {
    let mut message = String::new();
    if !format.is_null() {
        let mut buf = [0 as c_char; 512];
        // SAFETY: `args` is the `va_list` OTF2 passes with `format` (a `va_list` parameter is
        // passed as a pointer on the platforms OTF2 is built for); vsnprintf writes at most
        // `buf.len()` bytes, NUL-terminated.
        let n = unsafe { vsnprintf(buf.as_mut_ptr(), buf.len(), format, args) };
        if n > 0 {
            // SAFETY: NUL-terminated by vsnprintf.
            message = unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned();
        }
    }
    let described = match lib() {
        Ok(lib) => lib.error_text(code),
        Err(_) => format!("error {code}"),
    };
    let text = if message.is_empty() {
        described
    } else {
        format!("{described}: {message}")
    };
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Ok(mut last) = LAST_ERROR.lock()
        && last.is_none()
    {
        *last = Some(text);
    }
    code
}
