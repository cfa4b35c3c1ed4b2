//! The skeleton file, `DIR/skeleton.txt` (docs/skeletons.md#the-skeleton-file): a header of
//! `key value` lines, then per thread `thread T` and its program, one step a line
//! (`step cpu_ns=.. wall_ns=.. op_ns=.. bytes=.. OP [fields]`), loops as `loop N {` .. `}`.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use pp_recorder::event::WaitKind;

use super::{Item, Programs, SkelStep, Skeleton, ThreadProgram};
use crate::signature::Op;
use crate::signature::record::OMP_BLOCKTIME;

/// The file's name in a skeleton's directory.
pub const NAME: &str = "skeleton.txt";

/// The first line after the comment.
const MAGIC: &str = "pp-skeleton 1";

/// The text of `s`'s file.
pub fn text(s: &Skeleton) -> String {
    let mut out = Vec::new();
    let _ = write_text(&mut out, s);
    String::from_utf8(out).expect("text is UTF-8")
}

/// Writes the text of `s`'s file to `out`, a top-level item at a time.
pub fn write_text(out: &mut dyn Write, s: &dyn Programs) -> io::Result<()> {
    let h = s.head();
    writeln!(out, "# pp skeleton (docs/skeletons.md#the-skeleton-file)")?;
    writeln!(out, "{MAGIC}")?;
    writeln!(out, "k {}", h.k)?;
    writeln!(out, "p {}", h.p)?;
    writeln!(out, "source_wall_ns {}", h.source_wall_ns)?;
    writeln!(out, "threshold {}", h.threshold)?;
    writeln!(out, "compression {}", h.compression)?;
    writeln!(out, "source_log {}", h.source_log)?;
    if let Some(ms) = h.omp_blocktime_ms {
        writeln!(out, "{OMP_BLOCKTIME} {ms}")?;
    }
    for (i, thread) in s.threads().into_iter().enumerate() {
        writeln!(out, "thread {thread}")?;
        let mut result = Ok(());
        s.each(i, &mut |it| {
            if result.is_ok() {
                result = item(out, it, 0);
            }
        });
        result?;
    }
    Ok(())
}

fn item(out: &mut dyn Write, i: &Item, depth: usize) -> io::Result<()> {
    let pad = "  ".repeat(depth);
    match i {
        Item::Step(s) => writeln!(
            out,
            "{pad}step cpu_ns={} wall_ns={} op_ns={} op_cpu_ns={} bytes={} {}",
            s.cpu_ns,
            s.wall_ns,
            s.op_ns,
            s.op_cpu_ns,
            s.bytes,
            op_text(&s.op)
        ),
        Item::Loop { count, body } => {
            writeln!(out, "{pad}loop {count} {{")?;
            for b in body {
                item(out, b, depth + 1)?;
            }
            writeln!(out, "{pad}}}")
        }
    }
}

fn op_text(op: &Op) -> String {
    match op {
        Op::Send { peer, tag } => format!("send peer={peer} tag={tag}"),
        Op::Recv { peer, tag } => format!("recv peer={peer} tag={tag}"),
        Op::Coll { op, root: Some(r) } => format!("coll op={op} root={r}"),
        Op::Coll { op, root: None } => format!("coll op={op}"),
        Op::Wait { kind, object, by } => {
            let mut t = format!("wait kind={kind}");
            if let Some(o) = object {
                t += &format!(" object={o}");
            }
            if let Some(b) = by {
                t += &format!(" by={b}");
            }
            t
        }
        Op::Release {
            kind,
            object: Some(o),
        } => format!("release kind={kind} object={o}"),
        Op::Release { kind, object: None } => format!("release kind={kind}"),
        Op::Copy => "copy".into(),
        Op::RegionBegin { name } => format!("region_begin name={name}"),
        Op::RegionEnd => "region_end".into(),
        Op::PartBegin { name } => format!("part_begin name={name}"),
        Op::PartEnd => "part_end".into(),
        Op::Stop => "stop".into(),
    }
}

/// Writes `s` into `dir` (made if missing), refusing a directory with anything in it unless
/// `force`.
pub fn write(dir: &Path, s: &dyn Programs, force: bool) -> Result<()> {
    check(dir, force)?;
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let path = dir.join(NAME);
    let written = File::create(&path).and_then(|f| {
        let mut out = BufWriter::with_capacity(1 << 16, f);
        write_text(&mut out, s)?;
        out.flush()
    });
    written.with_context(|| format!("{}: cannot write", path.display()))
}

/// Refuses a directory with anything in it unless `force`: before the log is read, so that a
/// long log is not folded for nothing, and again by [`write`].
pub fn check(dir: &Path, force: bool) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!(
            "{}: is not a directory (--out names the skeleton's directory)",
            dir.display()
        );
    }
    if !force
        && let Ok(mut entries) = std::fs::read_dir(dir)
        && entries.next().is_some()
    {
        bail!(
            "{}: the directory is not empty (--force writes the skeleton there anyway)",
            dir.display()
        );
    }
    Ok(())
}

/// Reads the skeleton in `dir` (or the file `dir` itself).
pub fn read(dir: &Path) -> Result<Skeleton> {
    let path = if dir.is_dir() {
        dir.join(NAME)
    } else {
        dir.to_path_buf()
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read the skeleton", path.display()))?;
    parse(&text).map_err(|(line, e)| anyhow!("{}:{line}: {e}", path.display()))
}

/// Parses a skeleton file's text; an error carries its line (from 1).
pub fn parse(text: &str) -> Result<Skeleton, (usize, String)> {
    let mut header: HashMap<&str, (usize, &str)> = HashMap::new();
    let mut threads: Vec<ThreadProgram> = Vec::new();
    // Open loops: (count, items so far); the bottom is the thread's program.
    let mut stack: Vec<(u64, Vec<Item>)> = Vec::new();
    let mut magic = false;
    for (n, raw) in text.lines().enumerate() {
        let n = n + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !magic {
            if line != MAGIC {
                return Err((n, format!("not a skeleton file (expected `{MAGIC}`)")));
            }
            magic = true;
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "thread" => {
                close_thread(&mut threads, &mut stack, n)?;
                threads.push(ThreadProgram {
                    thread: number(rest, "thread").map_err(|e| (n, e))? as u32,
                    items: Vec::new(),
                });
                stack.push((1, Vec::new()));
            }
            "loop" => {
                if stack.is_empty() {
                    return Err((n, "a loop before the first `thread` line".into()));
                }
                let count = rest
                    .strip_suffix('{')
                    .ok_or((n, "field loop: expected `loop COUNT {`".to_string()))?;
                let count = number(count.trim(), "loop").map_err(|e| (n, e))?;
                stack.push((count, Vec::new()));
            }
            "}" => {
                if stack.len() < 2 {
                    return Err((n, "a `}` with no open loop".into()));
                }
                let (count, body) = stack.pop().expect("checked");
                let top = &mut stack.last_mut().expect("checked").1;
                top.push(Item::Loop { count, body });
            }
            "step" => {
                let step = step(rest).map_err(|e| (n, e))?;
                match stack.last_mut() {
                    Some((_, items)) => items.push(Item::Step(step)),
                    None => return Err((n, "a step before the first `thread` line".into())),
                }
            }
            key if threads.is_empty() => {
                if header.insert(key, (n, rest.trim())).is_some() {
                    return Err((n, format!("field {}: given twice", quoted(key))));
                }
            }
            other => {
                return Err((
                    n,
                    format!("`{}`: not a step, loop or thread line", quoted(other)),
                ));
            }
        }
    }
    let end = text.lines().count().max(1);
    if !magic {
        return Err((
            end,
            format!("empty: not a skeleton file (expected `{MAGIC}`)"),
        ));
    }
    close_thread(&mut threads, &mut stack, end)?;
    let field = |key: &str| -> Result<(usize, &str), (usize, String)> {
        header
            .get(key)
            .copied()
            .ok_or((end, format!("field {key}: missing from the header")))
    };
    let float = |key: &str| -> Result<f64, (usize, String)> {
        let (n, v) = field(key)?;
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or((
                n,
                format!("field {key}: `{}` is not a non-negative number", quoted(v)),
            ))
    };
    let whole = |key: &str| -> Result<u64, (usize, String)> {
        let (n, v) = field(key)?;
        number(v, key).map_err(|e| (n, e))
    };
    let k = float("k")?;
    if k < 1.0 {
        return Err((
            field("k")?.0,
            format!("field k: {} is below 1", files::quote::number(k)),
        ));
    }
    let p = whole("p")?;
    let p_line = field("p")?.0;
    let p = u32::try_from(p).map_err(|_| (p_line, format!("field p: {p} is too large")))?;
    if let Some(t) = threads.iter().find(|t| t.thread >= p) {
        return Err((
            end,
            format!("field thread: thread {} is not below p = {p}", t.thread),
        ));
    }
    Ok(Skeleton {
        k,
        p,
        source_log: field("source_log")?.1.to_string(),
        source_wall_ns: whole("source_wall_ns")?,
        threshold: float("threshold")?,
        compression: float("compression")?,
        omp_blocktime_ms: match header.get(OMP_BLOCKTIME) {
            Some(&(n, v)) => Some(number(v, OMP_BLOCKTIME).map_err(|e| (n, e))?),
            None => None,
        },
        threads,
    })
}

fn close_thread(
    threads: &mut [ThreadProgram],
    stack: &mut Vec<(u64, Vec<Item>)>,
    n: usize,
) -> Result<(), (usize, String)> {
    if stack.len() > 1 {
        return Err((n, "a loop is not closed with `}`".into()));
    }
    if let (Some((_, items)), Some(t)) = (stack.pop(), threads.last_mut()) {
        t.items = items;
    }
    Ok(())
}

/// A token of the file as an error quotes it: at most 40 bytes, on one line.
fn quoted(token: &str) -> String {
    files::quote::excerpt(token, 40)
}

fn number(v: &str, field: &str) -> Result<u64, String> {
    v.parse::<u64>().map_err(|_| {
        format!(
            "field {}: `{}` is not a whole number",
            quoted(field),
            quoted(v)
        )
    })
}

/// A step line after `step`.
fn step(rest: &str) -> Result<SkelStep, String> {
    let mut fields: HashMap<&str, &str> = HashMap::new();
    let mut op = None;
    for token in rest.split_whitespace() {
        match token.split_once('=') {
            Some((k, v)) => {
                if fields.insert(k, v).is_some() {
                    return Err(format!("field {}: given twice", quoted(k)));
                }
            }
            None if op.is_none() => op = Some(token),
            None => {
                return Err(format!(
                    "`{}`: a second operation in one step",
                    quoted(token)
                ));
            }
        }
    }
    let get = |k: &str| fields.get(k).copied().ok_or(format!("field {k}: missing"));
    let num = |k: &str| get(k).and_then(|v| number(v, k));
    let name = |k: &str| get(k).map(str::to_string);
    let word = op.ok_or(
        "field op: missing (copy, wait, release, send, recv, coll, region_begin, region_end, part_begin, part_end or stop)",
    )?;
    let op = match word {
        "copy" => Op::Copy,
        "stop" => Op::Stop,
        "region_end" => Op::RegionEnd,
        "part_end" => Op::PartEnd,
        "part_begin" => Op::PartBegin {
            name: name("name")?,
        },
        "region_begin" => Op::RegionBegin {
            name: name("name")?,
        },
        "wait" | "release" => {
            let kind = get("kind")?;
            if WaitKind::parse(kind).is_none() {
                return Err(format!(
                    "field kind: `{}` is not lock, barrier, cond, recv, send or other",
                    quoted(kind)
                ));
            }
            let object = fields.get("object").map(|o| o.to_string());
            if word == "release" {
                Op::Release {
                    kind: kind.to_string(),
                    object,
                }
            } else {
                let by = match fields.get("by") {
                    Some(_) => Some(u32::try_from(num("by")?).map_err(|_| "field by: too large")?),
                    None => None,
                };
                Op::Wait {
                    kind: kind.to_string(),
                    object,
                    by,
                }
            }
        }
        "send" | "recv" => {
            let peer = u32::try_from(num("peer")?).map_err(|_| "field peer: too large")?;
            let tag = u32::try_from(num("tag")?).map_err(|_| "field tag: too large")?;
            if word == "send" {
                Op::Send { peer, tag }
            } else {
                Op::Recv { peer, tag }
            }
        }
        "coll" => Op::Coll {
            op: name("op")?,
            root: match fields.get("root") {
                Some(_) => Some(u32::try_from(num("root")?).map_err(|_| "field root: too large")?),
                None => None,
            },
        },
        other => return Err(format!("field op: `{}` is not an operation", quoted(other))),
    };
    Ok(SkelStep {
        cpu_ns: num("cpu_ns")?,
        wall_ns: num("wall_ns")?,
        op_ns: num("op_ns")?,
        // Files written before it have none: their waits block, as they did.
        op_cpu_ns: match fields.get("op_cpu_ns") {
            Some(_) => num("op_cpu_ns")?,
            None => 0,
        },
        bytes: num("bytes")?,
        op,
    })
}
