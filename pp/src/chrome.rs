//! The per-thread timeline coloured by category, in Chrome Trace Event JSON (opens in
//! Perfetto and chrome://tracing). Written while the log streams through the profiler; the
//! critical path (see [`crate::graph`]) follows as one more track, "critical path", below the
//! threads.

use std::io::{self, Write};

use crate::event::{Event, Header, Symbols};
use crate::graph::{Builder, CriticalPath};
use crate::profile::{Category, Interval, Sink};

/// Writes complete ("X") events, one per attributed interval, timestamps in microseconds.
pub struct ChromeTrace<W: Write> {
    out: W,
    first: bool,
    error: Option<io::Error>,
    p: u32,
    /// The activity graph, for the critical path's track.
    graph: Option<Builder>,
}

/// chrome://tracing's reserved colour names for each category.
fn colour(category: Category) -> &'static str {
    match category {
        Category::Pc => "good",
        Category::Li => "thread_state_iowait",
        Category::Ip => "grey",
        Category::Sl => "terrible",
        Category::Cl => "thread_state_runnable",
        Category::Rc => "bad",
    }
}

impl<W: Write> ChromeTrace<W> {
    /// Starts the trace, naming `p` threads.
    pub fn new(mut out: W, p: u32) -> io::Result<Self> {
        out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        let mut trace = ChromeTrace {
            out,
            first: true,
            error: None,
            p,
            graph: Some(Builder::compact(&Header {
                p,
                params: Vec::new(),
            })),
        };
        for t in 0..p {
            trace.record(&format!(
                "{{\"ph\":\"M\",\"pid\":0,\"tid\":{t},\"name\":\"thread_name\",\"args\":{{\"name\":\"thread {t}\"}}}}"
            ));
        }
        Ok(trace)
    }

    fn record(&mut self, json: &str) {
        if self.error.is_some() {
            return;
        }
        let sep: &[u8] = if self.first { b"" } else { b",\n" };
        self.first = false;
        if let Err(e) = self
            .out
            .write_all(sep)
            .and_then(|()| self.out.write_all(json.as_bytes()))
        {
            self.error = Some(e);
        }
    }

    /// The critical path's track: one complete event per segment, named by its thread.
    fn critical_path(&mut self) {
        let Some(builder) = self.graph.take() else {
            return;
        };
        let path = match CriticalPath::walk(&mut builder.finish_path()) {
            Ok(path) => path,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        if path.segments.is_empty() {
            return;
        }
        let tid = self.p;
        self.record(&format!(
            "{{\"ph\":\"M\",\"pid\":0,\"tid\":{tid},\"name\":\"thread_name\",\"args\":{{\"name\":\"critical path\"}}}}"
        ));
        for s in &path.segments {
            self.record(&format!(
                "{{\"ph\":\"X\",\"pid\":0,\"tid\":{tid},\"name\":\"thread {}\",\"cat\":\"critical_path\",\"ts\":{:.3},\"dur\":{:.3},\"args\":{{\"thread\":{}}}}}",
                s.thread,
                s.start as f64 / 1000.0,
                (s.end - s.start) as f64 / 1000.0,
                s.thread,
            ));
        }
    }

    /// Writes the critical path's track and ends the JSON document; reports the first write
    /// error, if any.
    pub fn finish(mut self) -> io::Result<W> {
        self.critical_path();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Sink for ChromeTrace<W> {
    fn interval(&mut self, i: &Interval, symbols: &Symbols) {
        let name = |s: Option<crate::event::Sym>| {
            serde_json::to_string(s.map_or("", |s| symbols.name(s))).expect("strings serialize")
        };
        let json = format!(
            "{{\"ph\":\"X\",\"pid\":0,\"tid\":{},\"name\":\"{}\",\"cat\":\"{}\",\"cname\":\"{}\",\"ts\":{:.3},\"dur\":{:.3},\"args\":{{\"region\":{},\"phase\":{}}}}}",
            i.thread,
            i.category.key(),
            i.category.key(),
            colour(i.category),
            i.start as f64 / 1000.0,
            (i.end - i.start) as f64 / 1000.0,
            name(i.region),
            name(i.phase),
        );
        self.record(&json);
    }

    fn event(&mut self, e: &Event, symbols: &Symbols) {
        if let Some(graph) = &mut self.graph {
            graph.event(e, symbols);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_is_valid_json() {
        let mut symbols = Symbols::default();
        let fft = symbols.intern("fft \"quoted\"");
        let mut trace = ChromeTrace::new(Vec::new(), 2).unwrap();
        trace.interval(
            &Interval {
                thread: 1,
                start: 1500,
                end: 4000,
                category: Category::Li,
                region: Some(fft),
                phase: None,
            },
            &symbols,
        );
        let bytes = trace.finish().unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        assert_eq!(events.len(), 3);
        assert_eq!(events[2]["name"], "li");
        assert_eq!(events[2]["ts"], 1.5);
        assert_eq!(events[2]["dur"], 2.5);
        assert_eq!(events[2]["args"]["region"], "fft \"quoted\"");
    }
}
