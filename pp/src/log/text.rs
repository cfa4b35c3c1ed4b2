//! Reading the text encoding (DESIGN §3): the whole log is parsed into memory and its events
//! are stably sorted by time, then thread.

use std::collections::HashMap;

use super::{LogError, check_header, is_name};
use crate::event::{Event, EventKind, Header, Symbols, ThreadId, WaitKind};

/// A parsed text log.
#[derive(Debug)]
pub(crate) struct TextLog {
    /// The header.
    pub header: Header,
    /// The header's line, counted from 1.
    pub header_line: usize,
    /// Names and teams, in order of first appearance.
    pub symbols: Symbols,
    /// Events of the lines before the first malformed one, stably sorted by (time, thread).
    pub events: Vec<Event>,
    /// The first malformed line, if any.
    pub error: Option<LogError>,
}

const EVENTS: &str = "start, stop, region_begin, region_end, work_begin, work_end, wait_begin, \
                      wait_end, comm_begin, comm_end, cpu, phase";
const WAIT_KINDS: &str = "lock, barrier, cond, recv, send, other";
const HEADER_USAGE: &str = "pplog 1 p=<threads> [key=value ..]";

/// Parses a text log. A malformed header fails; a malformed event line ends the log there and
/// is kept as [`TextLog::error`].
pub(crate) fn parse(file: &str, bytes: &[u8]) -> Result<TextLog, LogError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes); // a UTF-8 byte order mark
    let mut lines = bytes.split(|&b| b == b'\n').enumerate();
    let mut tokens: Vec<&str> = Vec::new();
    let (header, header_line) = loop {
        let Some((i, raw)) = lines.next() else {
            let what = if bytes.is_empty() {
                "empty log"
            } else {
                "no header: the log has only comments and blank lines"
            };
            return Err(LogError::text(
                file,
                1,
                format!("{what} (expected `{HEADER_USAGE}`)"),
            ));
        };
        let line = i + 1;
        split(raw, &mut tokens).map_err(|m| LogError::text(file, line, m))?;
        if !tokens.is_empty() {
            break (
                parse_header(&tokens).map_err(|m| LogError::text(file, line, m))?,
                line,
            );
        }
    };
    let mut symbols = Symbols::default();
    let mut events = Vec::new();
    let mut last: HashMap<ThreadId, (u64, usize)> = HashMap::new();
    let mut error = None;
    for (i, raw) in lines {
        let line = i + 1;
        let result = split(raw, &mut tokens).and_then(|()| {
            if tokens.is_empty() {
                return Ok(None);
            }
            let e = parse_event(&tokens, header.p, &mut symbols)?;
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
        });
        match result {
            Ok(Some(e)) => events.push(e),
            Ok(None) => {}
            Err(m) => {
                error = Some(LogError::text(file, line, m));
                break;
            }
        }
    }
    events.sort_by_key(|e| (e.t, e.thread));
    Ok(TextLog {
        header,
        header_line,
        symbols,
        events,
        error,
    })
}

/// The tokens of a line without its comment.
fn split<'a>(raw: &'a [u8], tokens: &mut Vec<&'a str>) -> Result<(), String> {
    tokens.clear();
    let line = std::str::from_utf8(raw)
        .map_err(|e| format!("not valid UTF-8 (byte {} of the line)", e.valid_up_to() + 1))?;
    let content = match line.find('#') {
        Some(i) => &line[..i],
        None => line,
    };
    tokens.extend(content.split_whitespace());
    Ok(())
}

fn parse_header(tokens: &[&str]) -> Result<Header, String> {
    if tokens[0] != "pplog" {
        return Err(format!(
            "header: expected `{HEADER_USAGE}`, found '{}'",
            tokens[0]
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
                "header: unsupported version '{v}' (this reader knows version 1)"
            ));
        }
    }
    let mut p = None;
    let mut params = Vec::new();
    for tok in &tokens[2..] {
        let Some((key, value)) = tok.split_once('=') else {
            return Err(format!("header: expected key=value, found '{tok}'"));
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
    if tok.is_empty() || !tok.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{what}: expected a non-negative integer, found '{tok}'"
        ));
    }
    tok.parse()
        .map_err(|_| format!("{what}: '{tok}' does not fit in 64 bits"))
}

fn parse_u32(what: &str, tok: &str) -> Result<u32, String> {
    let v = parse_u64(what, tok)?;
    u32::try_from(v).map_err(|_| format!("{what}: '{tok}' does not fit in 32 bits"))
}

/// Arguments of each event: (keyword, required, optional, usage).
fn arity(event: &str) -> Option<(usize, usize, &'static str)> {
    Some(match event {
        "start" | "stop" => (0, 0, ""),
        "region_begin" => (2, 1, " <id> <name> [team=<thread>,..]"),
        "region_end" => (1, 0, " <id>"),
        "work_begin" | "work_end" => (0, 1, " [label]"),
        "wait_begin" | "wait_end" => (1, 1, " <kind> [object]"),
        "comm_begin" | "comm_end" => (1, 0, " <bytes>"),
        "cpu" => (1, 1, " <thread_cpu_ns> [run_delay_ns]"),
        "phase" => (1, 0, " <name>"),
        _ => return None,
    })
}

fn parse_event(tokens: &[&str], p: u32, symbols: &mut Symbols) -> Result<Event, String> {
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
            "unknown event '{event}' (expected one of {EVENTS})"
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
            args[required + optional]
        ));
    }
    let mut name = |what: &str, tok: &str| -> Result<crate::event::Sym, String> {
        if is_name(tok) {
            Ok(symbols.intern(tok))
        } else {
            Err(format!(
                "{event}: {what}: '{tok}' contains a control character"
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
                Some(tok) => Some(parse_team(event, tok, p, symbols)?),
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
        "wait_begin" | "wait_end" => {
            let Some(kind) = WaitKind::parse(args[0]) else {
                return Err(format!(
                    "{event}: <kind>: expected one of {WAIT_KINDS}, found '{}'",
                    args[0]
                ));
            };
            let object = match args.get(1) {
                None => None,
                Some(tok) => Some(name("[object]", tok)?),
            };
            if event == "wait_begin" {
                EventKind::WaitBegin { kind, object }
            } else {
                EventKind::WaitEnd { kind, object }
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
        _ => EventKind::Phase {
            name: name("<name>", args[0])?,
        },
    };
    Ok(Event { t, thread, kind })
}

fn parse_team(
    event: &str,
    tok: &str,
    p: u32,
    symbols: &mut Symbols,
) -> Result<crate::event::TeamRef, String> {
    let Some(list) = tok.strip_prefix("team=") else {
        return Err(format!(
            "{event}: expected team=<thread>,<thread>,.. after the name, found '{tok}'"
        ));
    };
    let mut team = Vec::new();
    for item in list.split(',') {
        if item.is_empty() {
            return Err(format!(
                "{event}: team: empty thread in '{tok}' (expected team=<thread>,<thread>,..)"
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
    Ok(symbols.intern_team(&team))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blank_lines_and_sorting() {
        let log = b"# a run\n\npplog 1 n=256 p=2 impl=dp # trailing\n\
                    20 1 start\n10 0 start   # comment\n  \n20 0 stop\n30 1 stop\n";
        let log = parse("x.log", log).unwrap();
        assert_eq!(log.header.p, 2);
        assert_eq!(
            log.header.params,
            vec![("n".into(), "256".into()), ("impl".into(), "dp".into())]
        );
        let order: Vec<(u64, u32)> = log.events.iter().map(|e| (e.t, e.thread)).collect();
        assert_eq!(order, [(10, 0), (20, 0), (20, 1), (30, 1)]);
        assert!(log.error.is_none());
    }

    #[test]
    fn a_bad_line_ends_the_log_there() {
        let log = parse("x.log", b"pplog 1 p=1\n5 0 start\n6 0 bogus\n7 0 stop\n").unwrap();
        assert_eq!(log.events.len(), 1);
        assert_eq!(
            log.error.unwrap().to_string(),
            format!("x.log:3: unknown event 'bogus' (expected one of {EVENTS})")
        );
    }
}
