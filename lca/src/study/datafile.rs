//! The study's datafile: the keys of the rows it already holds (what a start resumes from),
//! appending a row whole or not at all, and its rows parsed once for the models ([`Rows`]).
//!
//! The datafile must be a regular file: rows appended to a device or a FIFO would be lost, and
//! reading one might never end.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{Result, anyhow};
use fit::Datafile;

use super::file::Study;
use super::plan::{Key, key_of_line};

/// The longest line `lca study` reads in its datafile: its rows are a few hundred bytes.
const MAX_LINE: u64 = 1 << 16;

/// The keys of the runs the datafile already holds (none when it does not exist yet), read
/// line by line; a last line without its newline is not taken for a run made.
pub fn measured(study: &Study) -> Result<HashSet<Key>, String> {
    let path = &study.datafile;
    let cannot = |e: std::io::Error| format!("{}: cannot read: {e}", path.display());
    // Not blocking on a FIFO, so as to refuse it.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(cannot(e)),
    };
    regular(&file, path)?;
    let names: Vec<&str> = study.factors.iter().map(|f| f.name.as_str()).collect();
    let mut keys = HashSet::new();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(cannot)?;
        if n == 0 {
            break;
        }
        if line.len() as u64 > MAX_LINE {
            return Err(format!(
                "{}:{number}: a line longer than {MAX_LINE} bytes: not a datafile",
                path.display()
            ));
        }
        // A last line without its newline may be a row cut short: its run is made again.
        if line.ends_with(b"\n") {
            keys.extend(key_of_line(&String::from_utf8_lossy(&line), &names));
        }
    }
    Ok(keys)
}

/// An error unless the open file is a regular file.
fn regular(file: &File, path: &Path) -> Result<(), String> {
    let kind = file
        .metadata()
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?
        .file_type();
    is_regular(kind, path)
}

/// An error unless the datafile, when it exists, is a regular file: looked at without opening
/// it, so that a FIFO is refused instead of waited on (by every reader of the datafile).
pub fn check(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) => is_regular(m.file_type(), path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: cannot read: {e}", path.display())),
    }
}

fn is_regular(kind: std::fs::FileType, path: &Path) -> Result<(), String> {
    if kind.is_file() {
        return Ok(());
    }
    Err(format!(
        "{}: the datafile is not a regular file (a {}): name a file in the study file's \
         `datafile`",
        path.display(),
        files::input::kind_of(kind)
    ))
}

/// Appends a row to the datafile, all or nothing: with one write on a file opened for
/// appending (after a newline when the file does not end with one), cut back to its length
/// before when that fails (a full disk, a file size limit: [`files::append::write_whole`]), so
/// neither a stopped study nor a failed write leaves part of a row.
pub fn append(datafile: &Path, row: &str) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("{}: cannot append: {e}", datafile.display());
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(datafile)
        .map_err(cannot)?;
    regular(&file, datafile)?;
    let len = file.metadata().map_err(cannot)?.len();
    let mut line = String::with_capacity(row.len() + 2);
    if len > 0 {
        let mut last = [0u8];
        file.seek(SeekFrom::Start(len - 1))
            .and_then(|_| file.read_exact(&mut last))
            .map_err(cannot)?;
        if last[0] != b'\n' {
            line.push('\n');
        }
    }
    line += row;
    line.push('\n');
    files::append::write_whole(&file, &datafile.display().to_string(), line.as_bytes())
        .map_err(|e| e.to_string())
}

/// The datafile's rows, read and parsed once, each row of a run of the study with its key:
/// what the models are built from and checked against, and what the report draws.
#[derive(Debug, Default)]
pub struct Rows {
    /// The whole datafile; None when it holds no run of the study (or does not exist yet).
    data: Option<Datafile>,
    /// The key of each of its rows that is a run of the study.
    keys: Vec<Option<Key>>,
}

impl Rows {
    /// Reads the datafile. One that holds no row of a study's run (or does not exist yet) has
    /// no rows; a run's row is told by its `impl`, `role`, factor values and `replicate`,
    /// whatever else its line holds.
    pub fn read(study: &Study) -> Result<Rows> {
        let path = &study.datafile;
        check(path).map_err(|e| anyhow!(e))?;
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(anyhow!("{}: cannot read: {e}", path.display())),
        };
        let names: Vec<&str> = study.factors.iter().map(|f| f.name.as_str()).collect();
        let by_line: HashMap<usize, Key> = text
            .lines()
            .enumerate()
            .filter_map(|(i, line)| Some((i + 1, key_of_line(line, &names)?)))
            .collect();
        if by_line.is_empty() {
            return Ok(Rows::default());
        }
        let data = Datafile::parse(&path.display().to_string(), &text)?;
        let keys = data
            .rows()
            .iter()
            .map(|row| by_line.get(&row.line).cloned())
            .collect();
        Ok(Rows {
            data: Some(data),
            keys,
        })
    }

    /// The rows of the runs `keys` names, in the file's order, as a datafile of their own (as
    /// if the file held only their lines: columns, and `role`'s values, are those of these
    /// rows); None when there is none.
    pub fn select(&self, keys: &HashSet<Key>) -> Option<Datafile> {
        let data = self.data.as_ref()?;
        let rows: Vec<usize> = (0..self.keys.len())
            .filter(|&i| self.keys[i].as_ref().is_some_and(|k| keys.contains(k)))
            .collect();
        (!rows.is_empty()).then(|| data.subset(&rows))
    }

    /// The whole datafile, every row (the report draws them all).
    pub fn all(&self) -> Option<&Datafile> {
        self.data.as_ref()
    }
}
