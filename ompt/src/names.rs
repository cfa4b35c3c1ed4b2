//! Names for parallel regions and loops: the function that contains the construct.
//!
//! The runtime reports a construct by the return address of its call into the runtime
//! (`codeptr_ra`). `dladdr` says which loaded object holds it; the object's ELF symbol table
//! (`.symtab`, else `.dynsym`: executables rarely export their functions) says which function.
//! The first parallel region met in a function is named after it (`fft_rows`), later ones in
//! the same function `fft_rows:2`, `fft_rows:3` in the order the run meets them; without
//! symbols a region is `parallel@0x1234` (its offset in its object). Work-sharing loops are
//! named after their region: `fft_rows:loop`, `fft_rows:loop:2`, ...

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::sync::{Mutex, PoisonError};

use object::{Object, ObjectSymbol, SymbolKind};

/// Functions of one loaded object, sorted by start address (relative to the object's base).
struct Symbols {
    /// (start, end, name).
    functions: Vec<(u64, u64, String)>,
    /// Whether symbol values are absolute addresses (a non-PIE executable).
    absolute: bool,
}

#[derive(Default)]
struct Table {
    objects: HashMap<String, Symbols>,
    /// codeptr → name given.
    given: HashMap<usize, &'static str>,
    /// How many constructs were given a name from this base so far.
    per_base: HashMap<String, u32>,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// The name of the parallel region at `codeptr`: a token (no whitespace, `#` or control
/// character), the same for every call with that address.
pub fn region(codeptr: *const c_void) -> &'static str {
    name(codeptr, |table| match function_of(table, codeptr) {
        Some((function, _)) => numbered(table, function),
        None => format!(
            "parallel@{:#x}",
            offset_in_object(codeptr).unwrap_or(codeptr as u64)
        ),
    })
}

/// The name of the work-sharing loop at `codeptr` inside the region `region`:
/// `<region>:loop`, then `<region>:loop:2`, ...
pub fn work_loop(region: &str, codeptr: *const c_void) -> &'static str {
    name(codeptr, |table| numbered(table, format!("{region}:loop")))
}

/// The name given to `codeptr`, made by `make` the first time.
fn name(codeptr: *const c_void, make: impl FnOnce(&mut Table) -> String) -> &'static str {
    let key = codeptr as usize;
    let mut guard = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    let table = guard.get_or_insert_with(Table::default);
    if let Some(&name) = table.given.get(&key) {
        return name;
    }
    let made = make(table);
    let name = pp_recorder::name(&token(&made));
    table.given.insert(key, name);
    name
}

/// `base` the first time, then `base:2`, `base:3`, ...
fn numbered(table: &mut Table, base: String) -> String {
    let seen = table.per_base.entry(base.clone()).or_insert(0);
    *seen += 1;
    if *seen == 1 {
        base
    } else {
        format!("{base}:{seen}")
    }
}

/// The function containing `addr` and the address's offset in it.
fn function_of(table: &mut Table, addr: *const c_void) -> Option<(String, u64)> {
    let (path, base) = object_of(addr)?;
    let symbols = table
        .objects
        .entry(path.clone())
        .or_insert_with(|| load(&path));
    let at = if symbols.absolute {
        addr as u64
    } else {
        (addr as u64).checked_sub(base)?
    };
    // The return address is just after the call: look one byte back.
    let at = at.saturating_sub(1);
    let i = symbols.functions.partition_point(|f| f.0 <= at);
    let (start, end, name) = symbols.functions.get(i.checked_sub(1)?)?;
    (at < *end).then(|| (name.clone(), at - start))
}

/// The file and load base of the object holding `addr` (`dladdr`).
fn object_of(addr: *const c_void) -> Option<(String, u64)> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads its first argument as an address and fills `info`.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr gave a NUL-terminated string owned by the dynamic loader.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    let path = if path.is_empty() || !path.contains('/') {
        // The main program is reported by its name as it was run, or not at all.
        std::fs::read_link("/proc/self/exe")
            .ok()?
            .to_string_lossy()
            .into_owned()
    } else {
        path
    };
    Some((path, info.dli_fbase as u64))
}

fn offset_in_object(addr: *const c_void) -> Option<u64> {
    let (_, base) = object_of(addr)?;
    (addr as u64).checked_sub(base)
}

/// The function symbols of the ELF file at `path` (none when it cannot be read).
fn load(path: &str) -> Symbols {
    let mut functions = Vec::new();
    let mut absolute = false;
    if let Ok(file) = std::fs::File::open(path) {
        let cache = object::ReadCache::new(file);
        if let Ok(elf) = object::File::parse(&cache) {
            absolute = elf.kind() == object::ObjectKind::Executable;
            functions = text_symbols(elf.symbols());
            if functions.is_empty() {
                functions = text_symbols(elf.dynamic_symbols());
            }
        }
    }
    functions.sort_by_key(|f| f.0);
    Symbols {
        functions,
        absolute,
    }
}

/// The named functions among `symbols`: (start, end, name).
fn text_symbols<'a, S: ObjectSymbol<'a>>(
    symbols: impl Iterator<Item = S>,
) -> Vec<(u64, u64, String)> {
    symbols
        .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
        .filter_map(|s| {
            let name = s.name().ok()?;
            Some((s.address(), s.address() + s.size(), name.to_owned()))
        })
        .collect()
}

/// `s` as a log token: whitespace, `#` and control characters become `_`.
fn token(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_whitespace() || c == '#' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}
