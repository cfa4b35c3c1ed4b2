//! The text and JSON forms of a signature (docs/skeletons.md#output), written a thread at a
//! time: from a [`Signature`] (its entries) or from a thread's folded symbols ([`Folded`]), so
//! that `pp signature` never holds more than one thread's signature.

use std::io::{self, Write};

use super::loops::{Node, Table};
use super::{Cluster, Entry, Folded, Op, Signature, ThreadSignature};

/// What the first line says: threads, threshold, target, compression.
pub struct Head {
    pub p: u32,
    pub threshold: f64,
    pub target: Option<(f64, bool)>,
    pub compression: f64,
}

impl Head {
    pub fn of(s: &Signature) -> Head {
        Head {
            p: s.p,
            threshold: s.threshold,
            target: s.target,
            compression: s.compression(),
        }
    }
}

/// One thread's signature as either form holds it.
pub enum Thread<'a> {
    Entries(&'a ThreadSignature),
    Folded(&'a Folded),
}

impl Thread<'_> {
    fn parts(&self) -> (u32, u64, &[Cluster], u64) {
        match self {
            Thread::Entries(t) => (t.thread, t.steps, &t.clusters, t.size),
            Thread::Folded(f) => (f.thread, f.steps, &f.clusters, f.size),
        }
    }

    fn compression(&self) -> f64 {
        let (_, steps, _, size) = self.parts();
        steps as f64 / size.max(1) as f64
    }

    /// The top-level items.
    fn items(&self) -> Vec<Item<'_>> {
        match self {
            Thread::Entries(t) => t.entries.iter().map(Item::Entry).collect(),
            Thread::Folded(t) => t.top.iter().map(|&s| Item::Symbol(&t.table, s)).collect(),
        }
    }
}

/// An entry of either form.
#[derive(Clone, Copy)]
enum Item<'a> {
    Entry(&'a Entry),
    Symbol(&'a Table, u32),
}

impl<'a> Item<'a> {
    /// The cluster of a step, or a loop's count and its body's items.
    fn get(self) -> Result<u32, (u64, Vec<Item<'a>>)> {
        match self {
            Item::Entry(Entry::Step(c)) => Ok(*c),
            Item::Entry(Entry::Loop { count, body }) => {
                Err((*count, body.iter().map(Item::Entry).collect()))
            }
            Item::Symbol(table, s) => match &table.nodes[s as usize] {
                Node::Step(c) => Ok(*c),
                Node::Loop { body, count } => Err((
                    *count,
                    body.iter().map(|&b| Item::Symbol(table, b)).collect(),
                )),
            },
        }
    }
}

pub fn head_text(out: &mut dyn Write, h: &Head) -> io::Result<()> {
    let target = match h.target {
        Some((q, true)) => format!(", target compression {q} reached"),
        Some((q, false)) => format!(", target compression {q} NOT reached (largest threshold)"),
        None => String::new(),
    };
    writeln!(
        out,
        "signature: p={}, threshold {}{target}, compression {:.1}",
        h.p, h.threshold, h.compression
    )
}

pub fn thread_text(out: &mut dyn Write, t: &Thread) -> io::Result<()> {
    let (thread, steps, clusters, size) = t.parts();
    writeln!(
        out,
        "thread {thread}: {steps} steps, {} clusters, {size} entries, compression {:.1}",
        clusters.len(),
        t.compression()
    )?;
    for e in t.items() {
        item_text(out, clusters, e, 1)?;
    }
    Ok(())
}

pub fn text(s: &Signature) -> String {
    let mut out = Vec::new();
    let _ = head_text(&mut out, &Head::of(s));
    for t in &s.threads {
        let _ = thread_text(&mut out, &Thread::Entries(t));
    }
    String::from_utf8(out).expect("text is UTF-8")
}

fn item_text(out: &mut dyn Write, clusters: &[Cluster], e: Item, depth: usize) -> io::Result<()> {
    let pad = "  ".repeat(depth);
    match e.get() {
        Ok(c) => {
            let c = &clusters[c as usize];
            write!(
                out,
                "{pad}compute {}  {}",
                ns(c.mean_compute_ns()),
                op_text(&c.op)
            )?;
            if c.bytes > 0 {
                write!(out, " {:.0} B", c.mean_bytes())?;
            }
            if c.op_ns > 0 {
                write!(out, " ({})", ns(c.mean_op_ns()))?;
            }
            writeln!(out)
        }
        Err((count, body)) => {
            writeln!(out, "{pad}loop {count} {{")?;
            for b in body {
                item_text(out, clusters, b, depth + 1)?;
            }
            writeln!(out, "{pad}}}")
        }
    }
}

fn op_text(op: &Op) -> String {
    match op {
        Op::Send { peer, tag } => format!("send to {peer} tag {tag}"),
        Op::Recv { peer, tag } => format!("recv from {peer} tag {tag}"),
        Op::Coll { op, root: Some(r) } => format!("coll {op} root {r}"),
        Op::Coll { op, root: None } => format!("coll {op}"),
        Op::Wait { kind, object, by } => {
            let mut t = format!("wait {kind}");
            if let Some(o) = object {
                t += &format!(" {o}");
            }
            if let Some(b) = by {
                t += &format!(" by {b}");
            }
            t
        }
        Op::Release {
            kind,
            object: Some(o),
        } => format!("release {kind} {o}"),
        Op::Release { kind, object: None } => format!("release {kind}"),
        Op::Copy => "copy".to_string(),
        Op::RegionBegin { name } => format!("region_begin {name}"),
        Op::RegionEnd => "region_end".to_string(),
        Op::PartBegin { name } => format!("part_begin {name}"),
        Op::PartEnd => "part_end".to_string(),
        Op::Stop => "stop".to_string(),
    }
}

/// A duration in the unit that keeps it readable.
fn ns(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.3} s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.3} us", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

/// A JSON value as `serde_json` writes it.
fn j<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// The JSON form's opening, up to its `threads` list; [`thread_json`] then writes each
/// thread, `first` for the first, and [`tail_json`] closes it. The form is `serde_json`'s
/// pretty one, keys in order, written as it goes.
pub fn head_json(out: &mut dyn Write, h: &Head) -> io::Result<()> {
    write!(
        out,
        "{{\n  \"compression\": {},\n  \"p\": {},\n  \"target\": {},\n  \"target_reached\": {},\n  \"threads\": [",
        j(&h.compression),
        h.p,
        j(&h.target.map(|(q, _)| q)),
        j(&h.target.map(|(_, r)| r)),
    )
}

pub fn thread_json(out: &mut dyn Write, t: &Thread, first: bool) -> io::Result<()> {
    let (thread, steps, clusters, size) = t.parts();
    let i4 = "    ";
    write!(
        out,
        "{}\n{i4}{{\n{i4}  \"clusters\": ",
        if first { "" } else { "," }
    )?;
    if clusters.is_empty() {
        write!(out, "[]")?;
    } else {
        write!(out, "[")?;
        for (k, c) in clusters.iter().enumerate() {
            let p = "        ";
            write!(
                out,
                "{}\n{p}{{\n{p}  \"count\": {},\n{p}  \"mean_bytes\": {},\n{p}  \"mean_compute_ns\": {},\n{p}  \"mean_cpu_ns\": {},\n{p}  \"mean_op_cpu_ns\": {},\n{p}  \"mean_op_ns\": {},\n{p}  \"op\": {}\n{p}}}",
                if k == 0 { "" } else { "," },
                c.count,
                j(&c.mean_bytes()),
                j(&c.mean_compute_ns()),
                j(&c.mean_cpu_ns()),
                j(&c.mean_op_cpu_ns()),
                j(&c.mean_op_ns()),
                j(&op_text(&c.op)),
            )?;
        }
        write!(out, "\n{i4}  ]")?;
    }
    write!(
        out,
        ",\n{i4}  \"compression\": {},\n{i4}  \"entries\": {size},\n{i4}  \"steps\": {steps},\n{i4}  \"structure\": ",
        j(&t.compression())
    )?;
    items_json(out, &t.items(), 3)?;
    write!(out, ",\n{i4}  \"thread\": {thread}\n{i4}}}")
}

pub fn tail_json(out: &mut dyn Write, h: &Head, any: bool) -> io::Result<()> {
    if any {
        write!(out, "\n  ]")?;
    } else {
        write!(out, "]")?;
    }
    writeln!(out, ",\n  \"threshold\": {}\n}}", j(&h.threshold))
}

/// A list of items at `depth` (its closing bracket's indentation).
fn items_json(out: &mut dyn Write, items: &[Item], depth: usize) -> io::Result<()> {
    if items.is_empty() {
        return write!(out, "[]");
    }
    let pad = "  ".repeat(depth);
    write!(out, "[")?;
    for (k, &e) in items.iter().enumerate() {
        write!(
            out,
            "{}\n{pad}  {{\n{pad}    ",
            if k == 0 { "" } else { "," }
        )?;
        match e.get() {
            Ok(c) => write!(out, "\"step\": {c}")?,
            Err((count, body)) => {
                write!(out, "\"body\": ")?;
                items_json(out, &body, depth + 2)?;
                write!(out, ",\n{pad}    \"loop\": {count}")?;
            }
        }
        write!(out, "\n{pad}  }}")?;
    }
    write!(out, "\n{pad}]")
}

pub fn json(s: &Signature) -> String {
    let mut out = Vec::new();
    let h = Head::of(s);
    let _ = head_json(&mut out, &h);
    for (k, t) in s.threads.iter().enumerate() {
        let _ = thread_json(&mut out, &Thread::Entries(t), k == 0);
    }
    let _ = tail_json(&mut out, &h, !s.threads.is_empty());
    String::from_utf8(out).expect("JSON is UTF-8")
}
