//! Reading the text encoding (docs/event-log.md): the log is read as a stream of lines of at most
//! [`MAX_LINE`] bytes, and its events (with their line numbers) are sorted by time, then thread,
//! then line, in bounded memory ([`Sorter`]).

use std::collections::HashMap;
use std::io::{self, BufRead};

use pp_recorder::log::{check_header, excerpt, is_name};

use super::error::LogError;
use super::limits::{MAX_LINE, SymbolBudget};
use super::sorted::{Sorted, Sorter};
use crate::event::{Event, EventKind, Header, Symbols, ThreadId, WaitKind};

/// A parsed text log.
#[derive(Debug)]
pub(crate) struct TextLog {
    /// The file's name, for messages.
    pub name: String,
    /// The header.
    pub header: Header,
    /// The header's line, counted from 1.
    pub header_line: usize,
    /// Names and teams, in order of first appearance.
    pub symbols: Symbols,
    /// Events of the lines before the first malformed one, each with its line, sorted by
    /// (time, thread, line).
    pub events: Sorted,
    /// The first malformed line, if any.
    pub error: Option<LogError>,
}

const EVENTS: &str = "start, stop, region_begin, region_end, work_begin, work_end, wait_begin, \
                      wait_end, comm_begin, comm_end, cpu, phase, send, recv, coll";
const WAIT_KINDS: &str = "lock, barrier, cond, recv, send, other";
const HEADER_USAGE: &str = "pplog 1 p=<threads> [key=value ..]";

/// The lines of a text log, read from a stream: each at most [`MAX_LINE`] bytes, a UTF-8 byte
/// order mark at the start skipped. Memory: one line.
struct Lines<R> {
    input: R,
    /// A line that did not lie whole in the input's buffer.
    buf: Vec<u8>,
    /// Bytes of the input's buffer that the line last returned took (consumed on the next).
    pending: usize,
    /// The number of the line last returned, counted from 1.
    number: u64,
    /// Bytes read so far (to tell an empty log).
    read: u64,
}

impl<R: BufRead> Lines<R> {
    fn new(input: R) -> Self {
        Lines {
            input,
            buf: Vec::new(),
            pending: 0,
            number: 0,
            read: 0,
        }
    }

    /// The next line without its newline, `None` at the end; `Err` is the message for a line
    /// that is too long, or a read error.
    fn next(&mut self) -> Option<Result<&[u8], String>> {
        self.input.consume(std::mem::take(&mut self.pending));
        self.buf.clear();
        self.number += 1;
        let bom = if self.number == 1 { 3 } else { 0 };
        // Most lines lie whole in the input's buffer: returned from there, without a copy.
        let whole = match self.input.fill_buf() {
            Ok(avail) => avail
                .iter()
                .position(|&b| b == b'\n')
                .filter(|&i| i <= MAX_LINE),
            Err(_) => None,
        };
        if let Some(i) = whole {
            self.pending = i + 1;
            self.read += i as u64 + 1;
            // The buffer is not empty: this returns it again without reading.
            return Some(match self.input.fill_buf() {
                Ok(avail) => {
                    let line = avail.get(..i).unwrap_or(&[]);
                    Ok(match line.strip_prefix(b"\xEF\xBB\xBF") {
                        Some(rest) if bom > 0 => rest,
                        _ => line,
                    })
                }
                Err(e) => Err(format!("cannot read: {e}")),
            });
        }
        loop {
            let avail = match self.input.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Some(Err(format!("cannot read: {e}"))),
            };
            if avail.is_empty() {
                if self.buf.is_empty() {
                    return None;
                }
                break;
            }
            let (take, newline) = match avail.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (avail.len(), false),
            };
            if self.buf.len() + take > MAX_LINE {
                let room = MAX_LINE - self.buf.len();
                self.buf.extend_from_slice(&avail[..room.min(take)]);
                let start = String::from_utf8_lossy(&self.buf[..self.buf.len().min(200)]);
                return Some(Err(format!(
                    "line longer than the limit of {MAX_LINE} bytes (it starts '{}')",
                    excerpt(&start)
                )));
            }
            self.buf.extend_from_slice(&avail[..take]);
            let used = take + usize::from(newline);
            self.input.consume(used);
            self.read += used as u64;
            if newline {
                break;
            }
        }
        if bom > 0 && self.buf.starts_with(b"\xEF\xBB\xBF") {
            self.buf.drain(..bom);
        }
        Some(Ok(&self.buf))
    }
}

/// Parses a text log from a stream, sorting its events in runs of at most `run_events` (see
/// [`Sorter`]). A malformed header fails, and so does a temporary file that cannot be written;
/// a malformed event line ends the log there and is kept as [`TextLog::error`].
pub(crate) fn parse(
    file: &str,
    input: impl BufRead,
    run_events: usize,
) -> Result<TextLog, LogError> {
    let mut lines = Lines::new(input);
    let (header, header_line) = loop {
        let line = lines.number + 1;
        let raw = match lines.next() {
            Some(Ok(raw)) => raw,
            Some(Err(m)) => return Err(LogError::text(file, line as usize, m)),
            None => {
                let what = if lines.read == 0 {
                    "empty log"
                } else {
                    "no header: the log has only comments and blank lines"
                };
                return Err(LogError::text(
                    file,
                    1,
                    format!("{what} (expected `{HEADER_USAGE}`)"),
                ));
            }
        };
        let tokens: Vec<&str> = content(raw)
            .map_err(|m| LogError::text(file, line as usize, m))?
            .split_whitespace()
            .collect();
        if !tokens.is_empty() {
            break (
                parse_header(&tokens).map_err(|m| LogError::text(file, line as usize, m))?,
                line as usize,
            );
        }
    };
    let mut symbols = Symbols::default();
    let mut budget = SymbolBudget::default();
    let mut events = Sorter::new(run_events);
    let spill = |e| LogError::io(file, "sort its events in a temporary file", e);
    let mut last: HashMap<ThreadId, (u64, u64)> = HashMap::new();
    let mut error = None;
    loop {
        let line = lines.number + 1;
        let result = match lines.next() {
            None => break,
            Some(Err(m)) => Err(m),
            Some(Ok(raw)) => content(raw).and_then(|content| {
                let mut room = [""; EVENT_TOKENS];
                let tokens = split(content, &mut room);
                if tokens.is_empty() {
                    return Ok(None);
                }
                let e = parse_event(tokens, header.p, &mut symbols, &mut budget)?;
                if let Some(&(t, at)) = last.get(&e.thread)
                    && e.t < t
                {
                    return Err(format!(
                        "time {} of thread {} is before its previous event at {t} (line {at}); \
                         the events of a thread must not go back in time",
                        e.t, e.thread
                    ));
                }
                last.insert(e.thread, (e.t, line));
                Ok(Some(e))
            }),
        };
        match result {
            Ok(Some(e)) => events.push(e, line).map_err(spill)?,
            Ok(None) => {}
            Err(m) => {
                error = Some(LogError::text(file, line as usize, m));
                break;
            }
        }
    }
    Ok(TextLog {
        name: file.to_string(),
        header,
        header_line,
        symbols,
        events: events.finish().map_err(spill)?,
        error,
    })
}

/// A line without its comment.
fn content(raw: &[u8]) -> Result<&str, String> {
    let line = std::str::from_utf8(raw)
        .map_err(|e| format!("not valid UTF-8 (byte {} of the line)", e.valid_up_to() + 1))?;
    Ok(match line.find('#') {
        Some(i) => &line[..i],
        None => line,
    })
}

/// More tokens than an event line may have (time, thread, event and 3 arguments), so that an
/// event's tokens are split without an allocation: the first extra one is reported.
const EVENT_TOKENS: usize = 8;

/// The first [`EVENT_TOKENS`] tokens of an event line, in `room`.
fn split<'a, 'r>(content: &'a str, room: &'r mut [&'a str; EVENT_TOKENS]) -> &'r [&'a str] {
    let mut n = 0;
    for (slot, tok) in room.iter_mut().zip(content.split_whitespace()) {
        *slot = tok;
        n += 1;
    }
    &room[..n]
}

fn parse_header(tokens: &[&str]) -> Result<Header, String> {
    if tokens[0] != "pplog" {
        return Err(format!(
            "header: expected `{HEADER_USAGE}`, found '{}'",
            excerpt(tokens[0])
        ));
    }
    match tokens.get(1) {
        None => {
            return Err(format!(
                "header: missing the version after 'pplog' (expected `{HEADER_USAGE}`)"
            ));
        }
        Some(&"1") => {}
        Some(v) => {
            return Err(format!(
                "header: unsupported version '{}' (this reader knows version 1)",
                excerpt(v)
            ));
        }
    }
    let mut p = None;
    let mut params = Vec::new();
    for tok in &tokens[2..] {
        let Some((key, value)) = tok.split_once('=') else {
            return Err(format!(
                "header: expected key=value, found '{}'",
                excerpt(tok)
            ));
        };
        if key == "p" {
            if p.is_some() {
                return Err("header: p given twice".to_string());
            }
            p = Some(parse_u32("header: p", value).and_then(|v| {
                if v == 0 {
                    Err("header: p: expected a positive integer, found '0'".to_string())
                } else {
                    Ok(v)
                }
            })?);
        } else {
            params.push((key.to_string(), value.to_string()));
        }
    }
    let Some(p) = p else {
        return Err(format!(
            "header: missing p=<threads> (expected `{HEADER_USAGE}`)"
        ));
    };
    let header = Header { p, params };
    check_header(&header)?;
    Ok(header)
}

fn parse_u64(what: &str, tok: &str) -> Result<u64, String> {
    let shown = || excerpt(tok);
    if tok.is_empty() || !tok.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{what}: expected a non-negative integer, found '{}'",
            shown()
        ));
    }
    tok.parse()
        .map_err(|_| format!("{what}: '{}' does not fit in 64 bits", shown()))
}

fn parse_u32(what: &str, tok: &str) -> Result<u32, String> {
    let v = parse_u64(what, tok)?;
    u32::try_from(v).map_err(|_| format!("{what}: '{}' does not fit in 32 bits", excerpt(tok)))
}

/// Arguments of each event: (keyword, required, optional, usage).
fn arity(event: &str) -> Option<(usize, usize, &'static str)> {
    Some(match event {
        "start" | "stop" => (0, 0, ""),
        "region_begin" => (2, 1, " <id> <name> [team=<thread>,..]"),
        "region_end" => (1, 0, " <id>"),
        "work_begin" | "work_end" => (0, 1, " [label]"),
        "wait_begin" => (1, 1, " <kind> [object]"),
        "wait_end" => (1, 2, " <kind> [object] [by=<thread>]"),
        "release" => (1, 1, " <kind> [object]"),
        "comm_begin" | "comm_end" => (1, 0, " <bytes>"),
        "cpu" => (1, 1, " <thread_cpu_ns> [run_delay_ns]"),
        "phase" => (1, 0, " <name>"),
        "send" | "recv" => (3, 1, " <peer> <tag> <bytes> [comm=<name>]"),
        "coll" => (2, 2, " <op> <bytes> [root=<thread>] [comm=<name>]"),
        _ => return None,
    })
}

fn parse_event(
    tokens: &[&str],
    p: u32,
    symbols: &mut Symbols,
    budget: &mut SymbolBudget,
) -> Result<Event, String> {
    let t = parse_u64("time", tokens[0])?;
    let Some(thread) = tokens.get(1) else {
        return Err(
            "missing the thread after the time (expected `<t_ns> <thread> <event> [args]`)"
                .to_string(),
        );
    };
    let thread = parse_u32("thread", thread)?;
    if thread >= p {
        return Err(format!("thread {thread} is not below p={p}"));
    }
    let Some(&event) = tokens.get(2) else {
        return Err(format!(
            "missing the event after the thread (expected one of {EVENTS})"
        ));
    };
    let Some((required, optional, usage)) = arity(event) else {
        return Err(format!(
            "unknown event '{}' (expected one of {EVENTS})",
            excerpt(event)
        ));
    };
    let args = &tokens[3..];
    if args.len() < required {
        let missing = usage
            .split_whitespace()
            .nth(args.len())
            .unwrap_or("argument");
        return Err(format!(
            "{event}: missing {missing} (expected `{event}{usage}`)"
        ));
    }
    if args.len() > required + optional {
        return Err(format!(
            "{event}: unexpected argument '{}' (expected `{event}{usage}`)",
            excerpt(args[required + optional])
        ));
    }
    let mut name = |what: &str, tok: &str| -> Result<crate::event::Sym, String> {
        if is_name(tok) {
            budget
                .name(symbols, tok)
                .map_err(|m| format!("{event}: {m}"))
        } else {
            Err(format!(
                "{event}: {what}: '{}' contains a control character",
                excerpt(tok)
            ))
        }
    };
    let num = |what: &str, tok: &str| parse_u64(&format!("{event}: {what}"), tok);
    let kind = match event {
        "start" => EventKind::Start,
        "stop" => EventKind::Stop,
        "region_begin" => {
            let id = num("<id>", args[0])?;
            let name_sym = name("<name>", args[1])?;
            let team = match args.get(2) {
                None => None,
                Some(tok) => Some(parse_team(event, tok, p, symbols, budget)?),
            };
            EventKind::RegionBegin {
                id,
                name: name_sym,
                team,
            }
        }
        "region_end" => EventKind::RegionEnd {
            id: num("<id>", args[0])?,
        },
        "work_begin" | "work_end" => {
            let label = match args.first() {
                None => None,
                Some(tok) => Some(name("[label]", tok)?),
            };
            if event == "work_begin" {
                EventKind::WorkBegin { label }
            } else {
                EventKind::WorkEnd { label }
            }
        }
        "wait_begin" | "wait_end" | "release" => {
            let Some(kind) = WaitKind::parse(args[0]) else {
                return Err(format!(
                    "{event}: <kind>: expected one of {WAIT_KINDS}, found '{}'",
                    excerpt(args[0])
                ));
            };
            // `wait_end`'s last field may be its cause, `by=<thread>`.
            let mut rest = &args[1..];
            let mut by = None;
            if event == "wait_end"
                && let Some(v) = rest.last().and_then(|tok| tok.strip_prefix("by="))
            {
                let thread = parse_u32(&format!("{event}: by"), v)?;
                if thread >= p {
                    return Err(format!("{event}: by: thread {thread} is not below p={p}"));
                }
                by = Some(thread);
                rest = &rest[..rest.len() - 1];
            }
            if let Some(tok) = rest.get(1) {
                return Err(format!(
                    "{event}: unexpected argument '{}' (expected `{event}{usage}`)",
                    excerpt(tok)
                ));
            }
            let object = match rest.first() {
                None => None,
                Some(tok) => Some(name("[object]", tok)?),
            };
            match event {
                "wait_begin" => EventKind::WaitBegin { kind, object },
                "release" => EventKind::Release { kind, object },
                _ => EventKind::WaitEnd { kind, object, by },
            }
        }
        "comm_begin" => EventKind::CommBegin {
            bytes: num("<bytes>", args[0])?,
        },
        "comm_end" => EventKind::CommEnd {
            bytes: num("<bytes>", args[0])?,
        },
        "cpu" => EventKind::Cpu {
            thread_cpu_ns: num("<thread_cpu_ns>", args[0])?,
            run_delay_ns: args.get(1).map(|a| num("[run_delay_ns]", a)).transpose()?,
        },
        "send" | "recv" => {
            let peer = parse_u32(&format!("{event}: <peer>"), args[0])?;
            if peer >= p {
                return Err(format!("{event}: <peer>: thread {peer} is not below p={p}"));
            }
            let tag = parse_u32(&format!("{event}: <tag>"), args[1])?;
            let bytes = num("<bytes>", args[2])?;
            let comm = match args.get(3) {
                None => None,
                Some(tok) => Some(name("[comm=<name>]", keyed(event, "comm", tok)?)?),
            };
            if event == "send" {
                EventKind::Send {
                    peer,
                    tag,
                    bytes,
                    comm,
                }
            } else {
                EventKind::Recv {
                    peer,
                    tag,
                    bytes,
                    comm,
                }
            }
        }
        "coll" => {
            let op = name("<op>", args[0])?;
            let bytes = num("<bytes>", args[1])?;
            let (mut root, mut comm) = (None, None);
            for tok in &args[2..] {
                if let Some(r) = tok.strip_prefix("root=") {
                    if root.is_some() {
                        return Err(format!("{event}: root= given twice"));
                    }
                    let r = parse_u32(&format!("{event}: [root=<thread>]"), r)?;
                    if r >= p {
                        return Err(format!("{event}: root: thread {r} is not below p={p}"));
                    }
                    root = Some(r);
                } else if comm.is_none() {
                    comm = Some(name("[comm=<name>]", keyed(event, "comm", tok)?)?);
                } else {
                    return Err(format!(
                        "{event}: unexpected argument '{}' (expected `{event}{usage}`)",
                        excerpt(tok)
                    ));
                }
            }
            EventKind::Coll {
                op,
                bytes,
                root,
                comm,
            }
        }
        _ => EventKind::Phase {
            name: name("<name>", args[0])?,
        },
    };
    Ok(Event { t, thread, kind })
}

/// The value of `key=value` in `tok`.
fn keyed<'a>(event: &str, key: &str, tok: &'a str) -> Result<&'a str, String> {
    tok.strip_prefix(key)
        .and_then(|r| r.strip_prefix('='))
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("{event}: expected {key}=<name>, found '{}'", excerpt(tok)))
}

fn parse_team(
    event: &str,
    tok: &str,
    p: u32,
    symbols: &mut Symbols,
    budget: &mut SymbolBudget,
) -> Result<crate::event::TeamRef, String> {
    let Some(list) = tok.strip_prefix("team=") else {
        return Err(format!(
            "{event}: expected team=<thread>,<thread>,.. after the name, found '{}'",
            excerpt(tok)
        ));
    };
    let mut team = Vec::new();
    for item in list.split(',') {
        if item.is_empty() {
            return Err(format!(
                "{event}: team: empty thread in '{}' (expected team=<thread>,<thread>,..)",
                excerpt(tok)
            ));
        }
        let t = parse_u32(&format!("{event}: team"), item)?;
        if t >= p {
            return Err(format!("{event}: team: thread {t} is not below p={p}"));
        }
        if team.contains(&t) {
            return Err(format!("{event}: team: thread {t} listed twice"));
        }
        team.push(t);
    }
    budget
        .team(symbols, &team)
        .map_err(|m| format!("{event}: team: {m}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::sorted::RUN_EVENTS;

    /// Every event of a parsed log, in order.
    fn events(log: TextLog) -> Vec<(Event, u64)> {
        let mut sorted = log.events;
        std::iter::from_fn(|| sorted.next().map(Result::unwrap)).collect()
    }

    #[test]
    fn comments_blank_lines_and_sorting() {
        let log = b"# a run\n\npplog 1 n=256 p=2 impl=dp # trailing\n\
                    20 1 start\n10 0 start   # comment\n  \n20 0 stop\n30 1 stop\n";
        let log = parse("x.log", &log[..], RUN_EVENTS).unwrap();
        assert_eq!(log.header.p, 2);
        assert_eq!(
            log.header.params,
            vec![("n".into(), "256".into()), ("impl".into(), "dp".into())]
        );
        assert!(log.error.is_none());
        let order: Vec<(u64, u32, u64)> = events(log)
            .iter()
            .map(|(e, l)| (e.t, e.thread, *l))
            .collect();
        assert_eq!(order, [(10, 0, 5), (20, 0, 7), (20, 1, 4), (30, 1, 8)]);
    }

    #[test]
    fn lines_split_across_reads_are_the_same_lines() {
        let log = b"\xEF\xBB\xBFpplog 1 p=2 n=4\n# c\n0 0 start\n0 1 start\n\n7 1 phase a_longer_name\n9 0 stop\n9 1 stop";
        let whole = parse("x.log", &log[..], RUN_EVENTS).unwrap();
        assert_eq!(whole.header.params, [("n".to_string(), "4".to_string())]);
        let header = whole.header.clone();
        let all = events(whole);
        for capacity in [1, 2, 3, 5, 7, 64] {
            let input = std::io::BufReader::with_capacity(capacity, &log[..]);
            let small = parse("x.log", input, 2).unwrap();
            assert_eq!(small.header, header, "capacity {capacity}");
            assert!(small.error.is_none());
            assert_eq!(events(small), all, "capacity {capacity}");
        }
        assert_eq!(all.len(), 5);
        assert_eq!(all[4].1, 8);
    }

    #[test]
    fn a_bad_line_ends_the_log_there() {
        let log = parse(
            "x.log",
            &b"pplog 1 p=1\n5 0 start\n6 0 bogus\n7 0 stop\n"[..],
            RUN_EVENTS,
        )
        .unwrap();
        let error = log.error.as_ref().map(ToString::to_string);
        assert_eq!(events(log).len(), 1);
        assert_eq!(
            error.unwrap(),
            format!("x.log:3: unknown event 'bogus' (expected one of {EVENTS})")
        );
    }
}
