//! An OTF2 trace's global definitions that the import needs: the clock, strings, regions,
//! locations and their groups, groups and communicators; and the layout of pp threads they
//! give (which location is which thread, which thread is which MPI rank).

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};

use super::ffi::{self, CALLBACK_SUCCESS, CallbackCode, Handle, Lib};
use crate::event::ThreadId;
/// Maps keyed by the trace's ids, looked up for every event: hashed by one multiplication
/// (SipHash was a tenth of `pp import`'s CPU time, docs/results.md).
pub(crate) use crate::profile::sweep::IdMap;

/// `OTF2_LOCATION_TYPE_CPU_THREAD`.
const LOCATION_CPU_THREAD: u8 = 1;
/// `OTF2_GROUP_TYPE_COMM_LOCATIONS`: rank `i` is location `members[i]`.
const GROUP_COMM_LOCATIONS: u8 = 4;
/// `OTF2_GROUP_TYPE_COMM_GROUP`: members are ranks (indices into the paradigm's
/// `COMM_LOCATIONS` group).
const GROUP_COMM_GROUP: u8 = 5;
/// `OTF2_GROUP_TYPE_COMM_SELF`.
const GROUP_COMM_SELF: u8 = 6;
/// `OTF2_PARADIGM_MPI`.
pub const PARADIGM_MPI: u8 = 4;

/// A region definition.
#[derive(Debug, Clone)]
pub struct Region {
    /// Its name (`MPI_Send`, `main`, `!$omp parallel @a.c:10`).
    pub name: String,
    /// `OTF2_RegionRole`.
    pub role: u8,
    /// `OTF2_Paradigm`.
    pub paradigm: u8,
}

/// A location (a thread, a metric stream, ...).
#[derive(Debug, Clone)]
pub struct Location {
    /// Its id.
    pub id: u64,
    /// `OTF2_LocationType`.
    pub kind: u8,
    /// Its location group (a process).
    pub group: u32,
    /// How many event records it has (0: it has no event file).
    pub events: u64,
}

#[derive(Debug, Clone)]
struct Group {
    kind: u8,
    paradigm: u8,
    members: Vec<u64>,
}

#[derive(Debug, Clone, Copy)]
struct Comm {
    name: u32,
    group: u32,
}

/// The global definitions, as read.
#[derive(Debug, Default)]
pub struct Definitions {
    /// Timer resolution (ticks a second) and global offset (the first tick), from
    /// `ClockProperties`.
    pub clock: Option<(u64, u64)>,
    strings: HashMap<u32, String>,
    /// Regions by id.
    pub regions: IdMap<u32, Region>,
    /// Locations in order of definition.
    pub locations: Vec<Location>,
    groups: HashMap<u32, Group>,
    comms: HashMap<u32, Comm>,
}

impl Definitions {
    /// A string by id, or "" for an undefined one.
    pub fn string(&self, id: u32) -> &str {
        self.strings.get(&id).map(String::as_str).unwrap_or("")
    }

    /// Reads the global definitions of `reader`.
    pub fn read(lib: &Lib, reader: Handle) -> Result<Definitions, String> {
        let mut defs = Definitions::default();
        // SAFETY: the OTF2 calls get the reader and the callbacks object they expect; the
        // callbacks get `defs` back as their user data while `defs` lives on this frame.
        unsafe {
            let def_reader = (lib.get_global_def_reader)(reader);
            if def_reader.is_null() {
                return Err("no global definitions".into());
            }
            let callbacks = (lib.def_callbacks_new)();
            let set = |kind: &str, f: *const c_void| -> Result<(), String> {
                let setter = lib.setter("GlobalDefReaderCallbacks", kind)?;
                match setter(callbacks, f) {
                    0 => Ok(()),
                    code => Err(lib.error_text(code)),
                }
            };
            let registered = set("ClockProperties", clock_properties as *const c_void)
                .and_then(|()| set("String", string as *const c_void))
                .and_then(|()| set("Region", region as *const c_void))
                .and_then(|()| set("Location", location as *const c_void))
                .and_then(|()| set("Group", group as *const c_void))
                .and_then(|()| set("Comm", comm as *const c_void));
            if let Err(e) = registered {
                (lib.def_callbacks_delete)(callbacks);
                return Err(e);
            }
            let user = &mut defs as *mut Definitions as *mut c_void;
            let code = (lib.register_global_def_callbacks)(reader, def_reader, callbacks, user);
            (lib.def_callbacks_delete)(callbacks);
            if code != 0 {
                return Err(lib.error_text(code));
            }
            let mut read = 0u64;
            let code = (lib.read_all_global_definitions)(reader, def_reader, &mut read);
            (lib.close_global_def_reader)(reader, def_reader);
            if code != 0 {
                return Err(format!(
                    "global definitions, after {read} of them: {}",
                    ffi::last_error().unwrap_or_else(|| lib.error_text(code))
                ));
            }
        }
        Ok(defs)
    }

    /// The pp threads: every CPU thread location, ordered by location group, then location id.
    pub fn layout(&self) -> Layout {
        let mut threads: Vec<&Location> = self
            .locations
            .iter()
            .filter(|l| l.kind == LOCATION_CPU_THREAD)
            .collect();
        threads.sort_by_key(|l| (l.group, l.id));
        let mut thread_of = IdMap::default();
        let mut master_of_group: HashMap<u32, ThreadId> = HashMap::new();
        for (i, l) in threads.iter().enumerate() {
            thread_of.insert(l.id, i as ThreadId);
            master_of_group.entry(l.group).or_insert(i as ThreadId);
        }
        // MPI ranks: the MPI COMM_LOCATIONS group, else the processes in order of their id.
        let comm_locations = self
            .groups
            .values()
            .find(|g| g.kind == GROUP_COMM_LOCATIONS && g.paradigm == PARADIGM_MPI);
        let ranks: Vec<ThreadId> = match comm_locations {
            Some(g) => g
                .members
                .iter()
                .filter_map(|loc| thread_of.get(loc).copied())
                .collect(),
            None => {
                let mut groups: Vec<(u32, ThreadId)> =
                    master_of_group.iter().map(|(&g, &t)| (g, t)).collect();
                groups.sort_unstable();
                groups.into_iter().map(|(_, t)| t).collect()
            }
        };
        let group_of_thread = threads.iter().map(|l| l.group).collect();
        Layout {
            thread_of,
            group_of_thread,
            ranks,
        }
    }

    /// The world rank of rank `rank` of communicator `comm`, or `None` when `comm` or the
    /// rank is not defined. A communicator without definitions is taken as the world.
    pub fn world_rank(&self, comm: u32, rank: u32, own_rank: Option<u32>) -> Option<u32> {
        let Some(c) = self.comms.get(&comm) else {
            return Some(rank);
        };
        let group = self.groups.get(&c.group)?;
        match group.kind {
            GROUP_COMM_SELF => own_rank,
            GROUP_COMM_GROUP => group
                .members
                .get(rank as usize)
                .and_then(|&r| u32::try_from(r).ok()),
            // A group of locations: the rank's location, as a world rank below.
            _ => Some(rank),
        }
    }

    /// The name pp gives a communicator: `None` for the world (its name is
    /// `MPI_COMM_WORLD`, or its group is every rank in order), else `c<id>`.
    pub fn comm_name(&self, comm: u32, world_size: usize) -> Option<String> {
        let c = self.comms.get(&comm)?;
        if self.string(c.name) == "MPI_COMM_WORLD" {
            return None;
        }
        let group = self.groups.get(&c.group)?;
        let identity = group.kind == GROUP_COMM_GROUP
            && group.members.len() == world_size
            && group
                .members
                .iter()
                .enumerate()
                .all(|(i, &m)| m == i as u64);
        let all_locations = group.kind == GROUP_COMM_LOCATIONS;
        if identity || all_locations {
            None
        } else {
            Some(format!("c{comm}"))
        }
    }
}

/// Which pp thread each location is.
#[derive(Debug)]
pub struct Layout {
    /// Location id → thread.
    pub thread_of: IdMap<u64, ThreadId>,
    /// Thread → its location group.
    pub group_of_thread: Vec<u32>,
    /// MPI world rank → the thread of its process that does MPI (its first thread).
    pub ranks: Vec<ThreadId>,
}

impl Layout {
    /// `p`: the number of threads.
    pub fn p(&self) -> usize {
        self.group_of_thread.len()
    }
}

fn defs<'a>(user: *mut c_void) -> &'a mut Definitions {
    // SAFETY: the user data registered in `Definitions::read`, alive while reading.
    unsafe { &mut *(user as *mut Definitions) }
}

extern "C" fn clock_properties(
    user: *mut c_void,
    resolution: u64,
    offset: u64,
    _length: u64,
    _realtime: u64,
) -> CallbackCode {
    defs(user).clock = Some((resolution, offset));
    CALLBACK_SUCCESS
}

extern "C" fn string(user: *mut c_void, id: u32, text: *const c_char) -> CallbackCode {
    let text = if text.is_null() {
        String::new()
    } else {
        // SAFETY: OTF2 passes a NUL-terminated string.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    };
    defs(user).strings.insert(id, text);
    CALLBACK_SUCCESS
}

#[allow(clippy::too_many_arguments)]
extern "C" fn region(
    user: *mut c_void,
    id: u32,
    name: u32,
    _canonical: u32,
    _description: u32,
    role: u8,
    paradigm: u8,
    _flags: u32,
    _file: u32,
    _begin: u32,
    _end: u32,
) -> CallbackCode {
    let d = defs(user);
    let name = d.string(name).to_string();
    d.regions.insert(
        id,
        Region {
            name,
            role,
            paradigm,
        },
    );
    CALLBACK_SUCCESS
}

extern "C" fn location(
    user: *mut c_void,
    id: u64,
    _name: u32,
    kind: u8,
    events: u64,
    group: u32,
) -> CallbackCode {
    defs(user).locations.push(Location {
        id,
        kind,
        group,
        events,
    });
    CALLBACK_SUCCESS
}

#[allow(clippy::too_many_arguments)]
extern "C" fn group(
    user: *mut c_void,
    id: u32,
    _name: u32,
    kind: u8,
    paradigm: u8,
    _flags: u32,
    n: u32,
    members: *const u64,
) -> CallbackCode {
    let members = if members.is_null() || n == 0 {
        Vec::new()
    } else {
        // SAFETY: OTF2 passes `n` members.
        unsafe { std::slice::from_raw_parts(members, n as usize) }.to_vec()
    };
    defs(user).groups.insert(
        id,
        Group {
            kind,
            paradigm,
            members,
        },
    );
    CALLBACK_SUCCESS
}

extern "C" fn comm(
    user: *mut c_void,
    id: u32,
    name: u32,
    group: u32,
    _parent: u32,
    _flags: u32,
) -> CallbackCode {
    defs(user).comms.insert(id, Comm { name, group });
    CALLBACK_SUCCESS
}
