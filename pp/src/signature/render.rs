//! The text and JSON forms of a signature (docs/skeletons.md#output).

use std::fmt::Write;

use serde_json::{Value, json};

use super::{Entry, Op, Signature, ThreadSignature};

pub fn text(s: &Signature) -> String {
    let mut out = String::new();
    let target = match s.target {
        Some((q, true)) => format!(", target compression {q} reached"),
        Some((q, false)) => format!(", target compression {q} NOT reached (largest threshold)"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "signature: p={}, threshold {}{target}, compression {:.1}",
        s.p,
        s.threshold,
        s.compression()
    );
    for t in &s.threads {
        let _ = writeln!(
            out,
            "thread {}: {} steps, {} clusters, {} entries, compression {:.1}",
            t.thread,
            t.steps,
            t.clusters.len(),
            t.size,
            t.compression()
        );
        for e in &t.entries {
            entry_text(&mut out, t, e, 1);
        }
    }
    out
}

fn entry_text(out: &mut String, t: &ThreadSignature, e: &Entry, depth: usize) {
    let pad = "  ".repeat(depth);
    match e {
        Entry::Step(c) => {
            let c = &t.clusters[*c as usize];
            let _ = write!(
                out,
                "{pad}compute {}  {}",
                ns(c.mean_compute_ns()),
                op_text(&c.op)
            );
            if c.bytes > 0 {
                let _ = write!(out, " {:.0} B", c.mean_bytes());
            }
            if c.op_ns > 0 {
                let _ = write!(out, " ({})", ns(c.mean_op_ns()));
            }
            out.push('\n');
        }
        Entry::Loop { count, body } => {
            let _ = writeln!(out, "{pad}loop {count} {{");
            for b in body {
                entry_text(out, t, b, depth + 1);
            }
            let _ = writeln!(out, "{pad}}}");
        }
    }
}

fn op_text(op: &Op) -> String {
    match op {
        Op::Send { peer, tag } => format!("send to {peer} tag {tag}"),
        Op::Recv { peer, tag } => format!("recv from {peer} tag {tag}"),
        Op::Coll { op, root: Some(r) } => format!("coll {op} root {r}"),
        Op::Coll { op, root: None } => format!("coll {op}"),
        Op::Wait {
            kind,
            object: Some(o),
        } => format!("wait {kind} {o}"),
        Op::Wait { kind, object: None } => format!("wait {kind}"),
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

pub fn json(s: &Signature) -> String {
    let threads: Vec<Value> = s
        .threads
        .iter()
        .map(|t| {
            json!({
                "thread": t.thread,
                "steps": t.steps,
                "entries": t.size,
                "compression": t.compression(),
                "clusters": t.clusters.iter().map(|c| json!({
                    "op": op_text(&c.op),
                    "count": c.count,
                    "mean_compute_ns": c.mean_compute_ns(),
                    "mean_bytes": c.mean_bytes(),
                    "mean_op_ns": c.mean_op_ns(),
                    "mean_cpu_ns": c.mean_cpu_ns(),
                })).collect::<Vec<_>>(),
                "structure": t.entries.iter().map(entry_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let v = json!({
        "p": s.p,
        "threshold": s.threshold,
        "target": s.target.map(|(q, _)| q),
        "target_reached": s.target.map(|(_, r)| r),
        "compression": s.compression(),
        "threads": threads,
    });
    format!("{v:#}\n")
}

fn entry_json(e: &Entry) -> Value {
    match e {
        Entry::Step(c) => json!({ "step": c }),
        Entry::Loop { count, body } => {
            json!({ "loop": count, "body": body.iter().map(entry_json).collect::<Vec<_>>() })
        }
    }
}
