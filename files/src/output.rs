//! An output file written whole or not at all, and only ever onto a regular file.
//!
//! [`Output::create`] writes into a temporary file in the target's folder; [`Output::commit`]
//! renames it over the target. The target must be absent or a regular file (a symbolic link
//! to a regular file is followed and the file it names is replaced, the link stays): a device,
//! FIFO, socket or directory, or a link to one, is refused with a one-line error — checked
//! before the temporary file is made and again just before the rename. The temporary file is
//! removed on every failure path (dropping an uncommitted [`Output`] removes it).

use std::ffi::{CString, OsString};
use std::fmt;
use std::fs::{self, File, FileType, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an output was refused or could not be written: one line that starts with the file and
/// says the cause once (the cause is in the message, not also a `source()`).
#[derive(Debug)]
pub struct OutputError {
    path: PathBuf,
    message: String,
    cause: Option<io::Error>,
}

impl OutputError {
    fn refused(path: &Path, message: String) -> OutputError {
        OutputError {
            path: path.to_path_buf(),
            message,
            cause: None,
        }
    }

    fn io(path: &Path, action: &str, cause: io::Error) -> OutputError {
        OutputError {
            path: path.to_path_buf(),
            message: format!("cannot {action}"),
            cause: Some(cause),
        }
    }

    /// The message without the leading path (for error types that put the path first
    /// themselves).
    pub fn reason(&self) -> String {
        match &self.cause {
            Some(cause) => format!("{}: {cause}", self.message),
            None => self.message.clone(),
        }
    }

    /// The operating system's error, when one caused the failure (`None` for a refusal).
    pub fn io_error(&self) -> Option<&io::Error> {
        self.cause.as_ref()
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason())
    }
}

impl std::error::Error for OutputError {}

/// What a file system entry is, in words, when it is not a regular file.
fn not_regular(kind: FileType) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() {
            return Some("a character device");
        }
        if kind.is_block_device() {
            return Some("a block device");
        }
        if kind.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    if kind.is_dir() {
        Some("a directory")
    } else if kind.is_file() {
        None
    } else {
        Some("not a regular file")
    }
}

/// [`check`], and an existing file refused unless `force`: what a command that writes a
/// named output does before its work, so that nothing a user wrote is replaced by mistake
/// (docs/guarantees.md).
pub fn check_new(path: &Path, force: bool) -> Result<PathBuf, OutputError> {
    let target = check(path)?;
    if !force && fs::symlink_metadata(path).is_ok() {
        return Err(OutputError::refused(
            path,
            "exists; not replaced (choose another path, or --force)".into(),
        ));
    }
    Ok(target)
}

/// Checks that `path` may be written as an output: it is absent, a regular file, or a
/// symbolic link to a regular file. Returns the path to replace (a link resolved to the file
/// it names). Anything else is refused, whatever `--force` says.
pub fn check(path: &Path) -> Result<PathBuf, OutputError> {
    let refuse = |what: &str| {
        OutputError::refused(
            path,
            format!("is {what}; outputs are written only to regular files"),
        )
    };
    let entry = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => return Err(no_folder(path)),
        Err(e) => return Err(OutputError::io(path, "examine", e)),
        Ok(entry) => entry,
    };
    if !entry.file_type().is_symlink() {
        return match not_regular(entry.file_type()) {
            Some(what) => Err(refuse(what)),
            None => Ok(path.to_path_buf()),
        };
    }
    match fs::metadata(path) {
        Ok(named) => match not_regular(named.file_type()) {
            Some(what) => Err(refuse(&format!("a symbolic link to {what}"))),
            None => fs::canonicalize(path).map_err(|e| OutputError::io(path, "resolve", e)),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(refuse(
            "a symbolic link to nothing (give the path it should name)",
        )),
        Err(e) => Err(OutputError::io(path, "examine", e)),
    }
}

/// Checks that the folder `path` would be written into is there, for a command that does
/// long work before it creates its output (a folder the command makes itself is not checked by
/// [`check`] or [`check_new`], which callers use before making it).
pub fn check_folder(path: &Path) -> Result<(), OutputError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => Err(no_folder(path)),
        _ => Ok(()),
    }
}

/// The refusal of an output whose folder is not there (or is not a folder).
fn no_folder(path: &Path) -> OutputError {
    let dir = path.parent().unwrap_or(Path::new("."));
    match fs::metadata(dir) {
        Ok(_) => OutputError::refused(path, format!("{} is not a folder", dir.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => OutputError::refused(
            path,
            format!(
                "its folder {} does not exist (create it first)",
                dir.display()
            ),
        ),
        Err(e) => OutputError::io(path, &format!("examine its folder {}", dir.display()), e),
    }
}

/// An output being written: a temporary file beside the target, renamed over it by
/// [`Output::commit`] and removed when dropped uncommitted. The temporary file has no name
/// until the commit where the file system allows (Linux's `O_TMPFILE`), so that a process
/// killed while it writes leaves nothing behind; it is then named `.NAME.PID-N.tmp.EXT` (`EXT`
/// the target's extension, if any) for the rename.
#[derive(Debug)]
pub struct Output {
    /// The path as given, for messages.
    shown: PathBuf,
    /// The file to replace (a link resolved).
    target: PathBuf,
    /// The folder it is in.
    dir: PathBuf,
    /// The temporary file's name: empty while it has none.
    tmp: PathBuf,
    file: Option<File>,
}

impl Output {
    /// Checks `path` (see [`check`]) and creates the temporary file, without a name where the
    /// file system allows.
    pub fn create(path: &Path) -> Result<Output, OutputError> {
        Output::open(path, true)
    }

    /// [`Output::create`] with a temporary file named from the start, for writers that open
    /// files by name ([`Output::temp_path`]).
    pub fn create_named(path: &Path) -> Result<Output, OutputError> {
        Output::open(path, false)
    }

    fn open(path: &Path, unnamed: bool) -> Result<Output, OutputError> {
        let target = check(path)?;
        if target.file_name().is_none() {
            return Err(OutputError::refused(path, "is not a file name".into()));
        }
        check_folder(&target)?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let made = |tmp: PathBuf, file: File| {
            // A replaced file keeps its permissions (a private file stays private).
            if let Ok(old) = fs::metadata(&target) {
                let _ = file.set_permissions(old.permissions());
            }
            Output {
                shown: path.to_path_buf(),
                target: target.clone(),
                dir: dir.clone(),
                tmp,
                file: Some(file),
            }
        };
        // An unnamed file is named at the commit through /proc; not every file system has
        // unnamed files: the others, or without /proc, get a named one.
        if unnamed
            && Path::new("/proc/self/fd").is_dir()
            && let Ok(file) = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_TMPFILE)
                .open(&dir)
        {
            return Ok(made(PathBuf::new(), file));
        }
        loop {
            let tmp = temporary_name(&dir, &target);
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(file) => return Ok(made(tmp, file)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(OutputError::io(
                        path,
                        "create a temporary file beside it",
                        e,
                    ));
                }
            }
        }
    }

    /// The temporary file, for writers that open files by name (it exists and is empty): that
    /// of an output from [`Output::create_named`]; empty for one without a name.
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// Bytes written so far.
    pub fn written_bytes(&self) -> io::Result<u64> {
        match &self.file {
            Some(file) => Ok(file.metadata()?.len()),
            None => Err(io::Error::other("the output is already committed")),
        }
    }

    /// An error about this output, naming the path as given.
    pub fn error(&self, action: &str, cause: io::Error) -> OutputError {
        OutputError::io(&self.shown, action, cause)
    }

    /// Makes the written bytes durable and renames them over the target — after checking
    /// once more that the target is absent or a regular file.
    pub fn commit(mut self) -> Result<(), OutputError> {
        if let Some(file) = self.file.take() {
            file.sync_all().map_err(|e| self.error("write", e))?;
            if self.tmp.as_os_str().is_empty() {
                // Named while still open: an unnamed file goes when its last descriptor does.
                self.tmp = name_unnamed(&file, &self.dir, &self.target)
                    .map_err(|e| self.error("name the temporary file of", e))?;
            }
        }
        match fs::symlink_metadata(&self.target) {
            Ok(entry) if !entry.file_type().is_file() => {
                let what = not_regular(entry.file_type()).unwrap_or("a symbolic link");
                return Err(OutputError::refused(
                    &self.shown,
                    format!("became {what} while it was written; left as it is"),
                ));
            }
            _ => {}
        }
        fs::rename(&self.tmp, &self.target).map_err(|e| self.error("rename into place", e))?;
        self.tmp = PathBuf::new();
        Ok(())
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the output is already committed"))
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

/// A fresh temporary name for `target` in `dir`: `.NAME.PID-N.tmp.EXT`.
fn temporary_name(dir: &Path, target: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut tmp_name = OsString::from(".");
    tmp_name.push(target.file_name().unwrap_or_default());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    tmp_name.push(format!(".{}-{n}.tmp", std::process::id()));
    if let Some(ext) = target.extension() {
        // Writers that choose a format by the extension (PNG) see the target's.
        tmp_name.push(".");
        tmp_name.push(ext);
    }
    dir.join(tmp_name)
}

/// Gives the unnamed `file` a fresh temporary name in `dir` (`linkat` of its `/proc/self/fd`
/// entry), and returns it.
fn name_unnamed(file: &File, dir: &Path, target: &Path) -> io::Result<PathBuf> {
    let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    loop {
        let tmp = temporary_name(dir, target);
        let to = CString::new(tmp.as_os_str().as_bytes())?;
        // SAFETY: both paths are NUL-terminated strings that outlive the call.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc == 0 {
            return Ok(tmp);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::AlreadyExists {
            return Err(e);
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` as the whole of the file `path` (see [`Output`]).
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut out = Output::create(path)?;
    out.write_all(bytes).map_err(|e| out.error("write", e))?;
    out.commit()
}

/// Where an output goes: standard output for `-`, else a file written through [`Output`].
#[derive(Debug)]
pub enum Target {
    /// `-`: standard output.
    Stdout(io::Stdout),
    /// A file.
    File(Output),
}

impl Target {
    /// Standard output for `-`, else [`Output::create`].
    pub fn open(path: &Path) -> Result<Target, OutputError> {
        if path == Path::new("-") {
            Ok(Target::Stdout(io::stdout()))
        } else {
            Output::create(path).map(Target::File)
        }
    }

    /// Flushes standard output, or commits the file.
    pub fn commit(self) -> Result<(), OutputError> {
        match self {
            Target::Stdout(mut out) => out
                .flush()
                .map_err(|e| OutputError::io(Path::new("standard output"), "write", e)),
            Target::File(output) => output.commit(),
        }
    }

    /// An error about writing this output.
    pub fn error(&self, cause: io::Error) -> OutputError {
        match self {
            Target::Stdout(_) => OutputError::io(Path::new("standard output"), "write", cause),
            Target::File(output) => output.error("write", cause),
        }
    }
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Target::Stdout(out) => out.write(buf),
            Target::File(output) => output.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Target::Stdout(out) => out.flush(),
            Target::File(output) => output.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_support::scratch;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_output_in_a_folder_that_is_not_there_is_refused_before_anything_is_written() {
        let dir = scratch("nofolder");
        let path = dir.join("missing").join("out.txt");
        let e = check_folder(&path).unwrap_err().to_string();
        assert!(e.ends_with("does not exist (create it first)"), "{e}");
        assert!(e.contains("its folder"), "{e}");
        let e = Output::create(&path).unwrap_err().to_string();
        assert!(e.ends_with("does not exist (create it first)"), "{e}");
        fs::write(dir.join("file"), "mine").unwrap();
        let e = check_folder(&dir.join("file").join("out.txt")).unwrap_err();
        assert!(e.to_string().ends_with("is not a folder"), "{e}");
        let e = Output::create(&dir.join("file").join("out.txt")).unwrap_err();
        assert!(e.to_string().ends_with("is not a folder"), "{e}");
        assert_eq!(entries(&dir), ["file"]);
        // A bare name is in the current folder, which is there.
        assert!(check_folder(Path::new("out.txt")).is_ok());
        // A folder a command will make itself passes the plain check.
        assert!(check_new(&path, false).is_ok());
    }

    #[test]
    fn a_new_output_is_refused_where_something_is_there_unless_forced() {
        let dir = scratch("new");
        let path = dir.join("out.txt");
        assert_eq!(check_new(&path, false).unwrap(), path);
        fs::write(&path, "mine").unwrap();
        let e = check_new(&path, false).unwrap_err().to_string();
        assert!(e.ends_with("out.txt: exists; not replaced (choose another path, or --force)"));
        assert!(check_new(&path, true).is_ok());
        // A folder is no output, forced or not.
        let e = check_new(&dir, true).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        #[cfg(unix)]
        {
            let link = dir.join("link.txt");
            std::os::unix::fs::symlink(&path, &link).unwrap();
            assert!(check_new(&link, false).is_err());
            assert_eq!(
                check_new(&link, true).unwrap(),
                fs::canonicalize(&path).unwrap()
            );
        }
    }

    #[test]
    fn replaces_a_regular_file_and_leaves_no_temporary_file() {
        let dir = scratch("regular");
        let path = dir.join("out.txt");
        write(&path, b"first").unwrap();
        write(&path, b"second").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(entries(&dir), ["out.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("mode");
        let path = dir.join("private");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        write(&path, b"new").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_directory_is_refused_in_one_line_and_kept() {
        let dir = scratch("dir");
        let target = dir.join("sub");
        fs::create_dir(&target).unwrap();
        let e = write(&target, b"x").unwrap_err();
        let text = e.to_string();
        assert!(text.ends_with("sub: is a directory; outputs are written only to regular files"));
        assert!(!text.contains('\n'));
        assert!(target.is_dir());
        assert_eq!(entries(&dir), ["sub"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_regular_file_is_followed_and_kept() {
        let dir = scratch("link");
        fs::write(dir.join("real"), "old").unwrap();
        std::os::unix::fs::symlink("real", dir.join("link")).unwrap();
        write(&dir.join("link"), b"new").unwrap();
        assert!(fs::symlink_metadata(dir.join("link")).unwrap().is_symlink());
        assert_eq!(fs::read_to_string(dir.join("real")).unwrap(), "new");
        assert_eq!(entries(&dir), ["link", "real"]);
    }

    #[cfg(unix)]
    #[test]
    fn links_to_directories_and_to_nothing_are_refused() {
        let dir = scratch("badlink");
        fs::create_dir(dir.join("d")).unwrap();
        std::os::unix::fs::symlink("d", dir.join("to-dir")).unwrap();
        std::os::unix::fs::symlink("absent", dir.join("dangling")).unwrap();
        let e = write(&dir.join("to-dir"), b"x").unwrap_err().to_string();
        assert!(e.contains("is a symbolic link to a directory"), "{e}");
        let e = write(&dir.join("dangling"), b"x").unwrap_err().to_string();
        assert!(e.contains("is a symbolic link to nothing"), "{e}");
        assert_eq!(entries(&dir), ["d", "dangling", "to-dir"]);
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_and_stay_what_they_are() {
        use std::os::unix::fs::FileTypeExt;
        let dir = scratch("nodes");
        let made = |args: &[&str]| {
            std::process::Command::new(args[0])
                .args(&args[1..])
                .status()
                .is_ok_and(|s| s.success())
        };
        let fifo = dir.join("fifo");
        assert!(made(&["mkfifo", fifo.to_str().unwrap()]));
        let e = write(&fifo, b"x").unwrap_err().to_string();
        assert!(e.contains("is a FIFO (named pipe)"), "{e}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        let node = dir.join("null");
        if made(&["mknod", node.to_str().unwrap(), "c", "1", "3"]) {
            let e = write(&node, b"x").unwrap_err().to_string();
            assert!(e.contains("is a character device"), "{e}");
            assert!(
                fs::symlink_metadata(&node)
                    .unwrap()
                    .file_type()
                    .is_char_device()
            );
        } else {
            eprintln!("skipped the device node: mknod needs root");
        }
        assert!(entries(&dir).iter().all(|n| !n.ends_with(".tmp")));
    }

    #[test]
    fn an_uncommitted_output_removes_its_temporary_file() {
        let dir = scratch("drop");
        let mut out = Output::create_named(&dir.join("x")).unwrap();
        out.write_all(b"partial").unwrap();
        assert_eq!(entries(&dir).len(), 1);
        assert_eq!(dir.join(&entries(&dir)[0]), out.temp_path());
        drop(out);
        assert!(entries(&dir).is_empty());
    }

    #[test]
    fn an_output_has_no_name_until_it_is_committed_where_the_file_system_allows() {
        let dir = scratch("unnamed");
        let mut out = Output::create(&dir.join("x.log")).unwrap();
        out.write_all(b"partial").unwrap();
        assert_eq!(out.written_bytes().unwrap(), 7);
        if out.temp_path().as_os_str().is_empty() {
            // Nothing to leave behind if the process dies now.
            assert!(entries(&dir).is_empty());
        } else {
            eprintln!("skipped: this file system has no unnamed files (O_TMPFILE)");
            assert_eq!(entries(&dir).len(), 1);
        }
        out.write_all(b" and whole").unwrap();
        out.commit().unwrap();
        assert_eq!(entries(&dir), ["x.log"]);
        assert_eq!(fs::read(dir.join("x.log")).unwrap(), b"partial and whole");
        // Dropped uncommitted, an unnamed one leaves nothing either.
        let mut out = Output::create(&dir.join("y.log")).unwrap();
        out.write_all(b"partial").unwrap();
        drop(out);
        assert_eq!(entries(&dir), ["x.log"]);
    }

    #[test]
    fn a_missing_folder_is_one_cause() {
        let e = write(Path::new("/nonexistent-folder-of-files/x"), b"x").unwrap_err();
        let text = e.to_string();
        assert_eq!(text.matches("does not exist").count(), 1, "{text}");
        assert!(std::error::Error::source(&e).is_none());
    }
}
