//! [`TextWriter`]: writes the canonical text encoding.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use super::{check_header, is_name};
use crate::event::{Event, EventKind, Header, Sym, Symbols, ThreadId};

/// Writes a text log in canonical form: the header `pplog 1 p=<p> key=value ..` (parameters in
/// order), then one line `<t_ns> <thread> <event> [args]` per event with single spaces and no
/// comments. Events are written in the order given; for the canonical form of a log give them
/// in global time order, ties by thread (as `pp::log::LogReader` returns them). Output is
/// buffered internally; [`TextWriter::finish`] flushes.
#[derive(Debug)]
pub struct TextWriter<W: Write> {
    out: W,
    p: u32,
    last_t: HashMap<ThreadId, u64>,
    line: String,
    buf: Vec<u8>,
}

const FLUSH_AT: usize = 64 * 1024;

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

impl<W: Write> TextWriter<W> {
    /// Writes the header line. Fails with [`io::ErrorKind::InvalidInput`] on a header the
    /// encoding cannot carry (`p == 0`, a key or value that is not a token, a repeated key).
    pub fn new(out: W, header: &Header) -> io::Result<Self> {
        check_header(header).map_err(invalid)?;
        let mut line = format!("pplog 1 p={}", header.p);
        for (key, value) in &header.params {
            let _ = write!(line, " {key}={value}");
        }
        line.push('\n');
        Ok(TextWriter {
            out,
            p: header.p,
            last_t: HashMap::new(),
            buf: line.clone().into_bytes(),
            line,
        })
    }

    /// Writes one event. Fails with [`io::ErrorKind::InvalidInput`], writing nothing, when the
    /// thread is not below `p`, the time is before the thread's previous event, a name is not
    /// a token (see [`super::is_name`]), a team is empty or names a thread `>= p`, or a name
    /// or team is not in `symbols`.
    pub fn write_event(&mut self, event: &Event, symbols: &Symbols) -> io::Result<()> {
        let Event { t, thread, kind } = *event;
        if thread >= self.p {
            return Err(invalid(format!(
                "event at {t}: thread {thread} is not below p={}",
                self.p
            )));
        }
        if let Some(&prev) = self.last_t.get(&thread)
            && t < prev
        {
            return Err(invalid(format!(
                "event at {t} of thread {thread} is before the thread's previous event at {prev}"
            )));
        }
        let line = &mut self.line;
        line.clear();
        let _ = write!(line, "{t} {thread} ");
        let name = |line: &mut String, s: Sym| -> io::Result<()> {
            let n = symbols.get_name(s).ok_or_else(|| {
                invalid(format!(
                    "event at {t}: name {} is not in the symbol table",
                    s.0
                ))
            })?;
            if !is_name(n) {
                return Err(invalid(format!(
                    "event at {t}: name {n:?} is not a token (non-empty, no whitespace, control characters or '#')"
                )));
            }
            line.push(' ');
            line.push_str(n);
            Ok(())
        };
        // ` comm=<name>`: a name with its key.
        let comm = |line: &mut String, c: Option<Sym>| -> io::Result<()> {
            if let Some(c) = c {
                name(line, c)?;
                let at = line.rfind(' ').map_or(0, |i| i + 1);
                line.insert_str(at, "comm=");
            }
            Ok(())
        };
        let peer_ok = |peer: u32| -> io::Result<()> {
            if peer < self.p {
                Ok(())
            } else {
                Err(invalid(format!(
                    "event at {t}: peer {peer} is not below p={}",
                    self.p
                )))
            }
        };
        match kind {
            EventKind::Start => line.push_str("start"),
            EventKind::Stop => line.push_str("stop"),
            EventKind::RegionBegin { id, name: n, team } => {
                let _ = write!(line, "region_begin {id}");
                name(line, n)?;
                if let Some(team) = team {
                    let team = symbols.get_team(team).ok_or_else(|| {
                        invalid(format!(
                            "event at {t}: team {} is not in the symbol table",
                            team.0
                        ))
                    })?;
                    if team.is_empty() {
                        return Err(invalid(format!("event at {t}: empty team")));
                    }
                    line.push_str(" team=");
                    for (i, member) in team.iter().enumerate() {
                        if *member >= self.p {
                            return Err(invalid(format!(
                                "event at {t}: team: thread {member} is not below p={}",
                                self.p
                            )));
                        }
                        if i > 0 {
                            line.push(',');
                        }
                        let _ = write!(line, "{member}");
                    }
                }
            }
            EventKind::RegionEnd { id } => {
                let _ = write!(line, "region_end {id}");
            }
            EventKind::WorkBegin { label } | EventKind::WorkEnd { label } => {
                line.push_str(if matches!(kind, EventKind::WorkBegin { .. }) {
                    "work_begin"
                } else {
                    "work_end"
                });
                if let Some(s) = label {
                    name(line, s)?;
                }
            }
            EventKind::WaitBegin { kind: k, object }
            | EventKind::WaitEnd {
                kind: k, object, ..
            } => {
                let word = if matches!(kind, EventKind::WaitBegin { .. }) {
                    "wait_begin"
                } else {
                    "wait_end"
                };
                let _ = write!(line, "{word} {k}");
                if let Some(s) = object {
                    name(line, s)?;
                }
                if let EventKind::WaitEnd { by: Some(by), .. } = kind {
                    let _ = write!(line, " by={by}");
                }
            }
            EventKind::Release { kind: k, object } => {
                let _ = write!(line, "release {k}");
                if let Some(s) = object {
                    name(line, s)?;
                }
            }
            EventKind::CommBegin { bytes } => {
                let _ = write!(line, "comm_begin {bytes}");
            }
            EventKind::CommEnd { bytes } => {
                let _ = write!(line, "comm_end {bytes}");
            }
            EventKind::Cpu {
                thread_cpu_ns,
                run_delay_ns,
            } => {
                let _ = write!(line, "cpu {thread_cpu_ns}");
                if let Some(delay) = run_delay_ns {
                    let _ = write!(line, " {delay}");
                }
            }
            EventKind::Phase { name: n } => {
                line.push_str("phase");
                name(line, n)?;
            }
            EventKind::Send {
                peer,
                tag,
                bytes,
                comm: c,
            }
            | EventKind::Recv {
                peer,
                tag,
                bytes,
                comm: c,
            } => {
                peer_ok(peer)?;
                let word = if matches!(kind, EventKind::Send { .. }) {
                    "send"
                } else {
                    "recv"
                };
                let _ = write!(line, "{word} {peer} {tag} {bytes}");
                comm(line, c)?;
            }
            EventKind::Coll {
                op,
                bytes,
                root,
                comm: c,
            } => {
                line.push_str("coll");
                name(line, op)?;
                let _ = write!(line, " {bytes}");
                if let Some(root) = root {
                    peer_ok(root)?;
                    let _ = write!(line, " root={root}");
                }
                comm(line, c)?;
            }
        }
        line.push('\n');
        self.buf.extend_from_slice(line.as_bytes());
        self.last_t.insert(thread, t);
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes what is buffered, flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::WaitKind;

    #[test]
    fn writes_the_canonical_form() {
        let mut sym = Symbols::default();
        let fft = sym.intern("fft");
        let team = sym.intern_team(&[2, 0]);
        let header = Header {
            p: 3,
            params: vec![("impl".into(), "dp".into())],
        };
        let mut w = TextWriter::new(Vec::new(), &header).unwrap();
        let kinds = [
            EventKind::RegionBegin {
                id: 1,
                name: fft,
                team: Some(team),
            },
            EventKind::WaitBegin {
                kind: WaitKind::Barrier,
                object: None,
            },
            EventKind::WorkEnd { label: Some(fft) },
        ];
        for (i, kind) in kinds.into_iter().enumerate() {
            let e = Event {
                t: i as u64,
                thread: 2,
                kind,
            };
            w.write_event(&e, &sym).unwrap();
        }
        let bad = Event {
            t: 0,
            thread: 2,
            kind: EventKind::Start,
        };
        assert!(w.write_event(&bad, &sym).is_err());
        let out = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            out,
            "pplog 1 p=3 impl=dp\n0 2 region_begin 1 fft team=0,2\n1 2 wait_begin barrier\n\
             2 2 work_end fft\n"
        );
    }
}
