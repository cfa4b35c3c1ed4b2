//! `pp critical-path`: the critical path of a log, as text or JSON.

use std::fmt::Write;
use std::path::Path;

use anyhow::{Result, bail};
use serde_json::json;

use super::ArcKind;
use super::critical::CriticalPath;
use super::makeup::Makeup;
use super::pass::profile_and_record;
use super::path_graph::PathGraph;
use crate::event::Symbols;
use crate::log::LogReader;

/// Everything `pp critical-path` reports.
#[derive(Debug)]
pub struct Report {
    /// What the critical path kept of the graph.
    pub graph: PathGraph,
    /// Its critical path.
    pub path: CriticalPath,
    /// What the path is made of.
    pub makeup: Makeup,
    /// The run window, ns.
    pub window: (u64, u64),
    /// The log's names.
    pub symbols: Symbols,
    /// Damage that ended the log early (the report covers the events before it), as a
    /// warning for standard error.
    pub warning: Option<String>,
}

impl Report {
    /// Reads the log at `path` (`-`: standard input), attributing it and building its graph
    /// in one pass. Damage that ends the log early is a [`Report::warning`] (the report covers
    /// the events before it); a log that cannot be read at all is an error.
    pub fn read(path: &Path) -> Result<Report> {
        let reader = LogReader::open(path)?;
        let name = if path.as_os_str() == "-" {
            "stdin".to_string()
        } else {
            path.display().to_string()
        };
        Report::from_log(reader, &name)
    }

    /// [`Report::read`] of an open log; `name` stands for its file in messages. Memory stays
    /// bounded whatever the log's length: what the path and its make-up need goes to a
    /// temporary file ([`super::RecordSink`]); an error writing or reading it is an error. The
    /// graph and the records are built on threads of their own while another reads and
    /// attributes the log ([`profile_and_record`]).
    pub fn from_log(mut reader: LogReader, name: &str) -> Result<Report> {
        let (profiled, mut graph, mut records) = profile_and_record(&mut reader);
        let profile = match (profiled.profile, &profiled.damage) {
            (Ok(p), _) => p,
            // The damage is the cause: the profile's own error would make the line long.
            (Err(_), Some(d)) => bail!("{d}; nothing to analyse before it"),
            (Err(e), None) => bail!("{name}: {e}"),
        };
        let warning = profiled
            .damage
            .map(|d| format!("{d} (the critical path covers the events before it)"));
        let spilled =
            |e: std::io::Error| anyhow::anyhow!("{name}: the critical path's records: {e}");
        let path = CriticalPath::walk(&mut graph).map_err(spilled)?;
        let makeup = Makeup::of_records(&path, &mut records).map_err(spilled)?;
        Ok(Report {
            graph,
            path,
            makeup,
            window: profile.window,
            symbols: reader.symbols().clone(),
            warning,
        })
    }

    fn wall(&self) -> u64 {
        self.window.1 - self.window.0
    }

    fn region_name(&self, r: Option<crate::event::Sym>) -> String {
        r.and_then(|s| self.symbols.get_name(s))
            .unwrap_or("-")
            .to_string()
    }

    /// The text report.
    pub fn text(&self) -> String {
        let len = self.path.length();
        let pct = |ns: u64| {
            if len == 0 {
                0.0
            } else {
                100.0 * ns as f64 / len as f64
            }
        };
        let mut out = String::new();
        let wall = self.wall();
        let _ = writeln!(
            out,
            "critical path: {len} ns of {wall} ns wall ({:.1}%), {} between threads",
            if wall == 0 {
                100.0
            } else {
                100.0 * len as f64 / wall as f64
            },
            count(self.path.hops, "hop")
        );
        if let (Some(first), Some(last)) = (self.path.segments.first(), self.path.segments.last()) {
            let at = |t: u64| t.saturating_sub(self.window.0);
            let _ = writeln!(
                out,
                "from thread {} at {} ns to thread {} at {} ns (from the run's start)",
                first.thread,
                at(first.start),
                last.thread,
                at(last.end)
            );
        }
        let counts = self.graph.arc_counts();
        let arcs: Vec<String> = ArcKind::ALL
            .iter()
            .zip(counts)
            .map(|(k, n)| format!("{n} {}", k.as_str()))
            .collect();
        let _ = writeln!(
            out,
            "{}, remote arcs: {}",
            count(self.graph.events(), "event"),
            arcs.join(", ")
        );
        let _ = writeln!(
            out,
            "{} with unknown cause (the path goes on through the waiting thread there)",
            count(self.graph.unknown_causes, "wait")
        );
        let mut table = |title: &str, rows: Vec<(String, u64)>| {
            let _ = writeln!(out, "\n{title:<16} {:>14} {:>7}", "ns", "%");
            for (k, ns) in rows {
                let _ = writeln!(out, "{k:<16} {ns:>14} {:>7.1}", pct(ns));
            }
        };
        table(
            "thread",
            self.makeup
                .by_thread
                .iter()
                .map(|&(t, ns)| (t.to_string(), ns))
                .collect(),
        );
        table(
            "region",
            self.makeup
                .by_region
                .iter()
                .map(|&(r, ns)| (self.region_name(r), ns))
                .collect(),
        );
        table(
            "category",
            self.makeup
                .by_category
                .iter()
                .map(|&(c, ns)| (c.key().to_string(), ns))
                .collect(),
        );
        out
    }

    /// The JSON report (one document, with every segment of the path).
    pub fn json(&self) -> String {
        let counts = self.graph.arc_counts();
        let arcs: serde_json::Map<String, serde_json::Value> = ArcKind::ALL
            .iter()
            .zip(counts)
            .map(|(k, n)| (k.as_str().to_string(), json!(n)))
            .collect();
        let doc = json!({
            "length_ns": self.path.length(),
            "wall_ns": self.wall(),
            "window_ns": [self.window.0, self.window.1],
            "hops": self.path.hops,
            "events": self.graph.events(),
            "arcs": arcs,
            "unknown_causes": self.graph.unknown_causes,
            "by_thread": self.makeup.by_thread.iter()
                .map(|&(t, ns)| json!({"thread": t, "ns": ns})).collect::<Vec<_>>(),
            "by_region": self.makeup.by_region.iter()
                .map(|&(r, ns)| json!({
                    "region": r.and_then(|s| self.symbols.get_name(s)),
                    "ns": ns,
                })).collect::<Vec<_>>(),
            "by_category": self.makeup.by_category.iter()
                .map(|&(c, ns)| (c.key().to_string(), json!(ns)))
                .collect::<serde_json::Map<_, _>>(),
            "segments": [],
        });
        // The segments, written as serde_json would (keys in order) without a value each: a
        // long run's path has millions.
        let mut out = doc.to_string();
        let mut segments = String::with_capacity(64 * self.path.segments.len() + 2);
        segments.push('[');
        for (k, s) in self.path.segments.iter().enumerate() {
            let arc = match s.arc {
                Some(a) => format!("\"{}\"", a.as_str()),
                None => "null".to_string(),
            };
            let _ = write!(
                segments,
                "{}{{\"arc\":{arc},\"end_ns\":{},\"start_ns\":{},\"thread\":{}}}",
                if k == 0 { "" } else { "," },
                s.end.saturating_sub(self.window.0),
                s.start.saturating_sub(self.window.0),
                s.thread
            );
        }
        segments.push(']');
        // Keys sort, so "segments" is the last key whose value is not a number.
        if let Some(at) = out.rfind("\"segments\":[]") {
            out.replace_range(at + 11..at + 13, &segments);
        }
        out.push('\n');
        out
    }
}

/// `1 wait`, `2 waits`, `0 waits`.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
