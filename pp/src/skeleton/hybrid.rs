//! The C + MPI + OpenMP skeleton of a hybrid log (docs/skeletons.md#hybrid-skeletons): each
//! rank's master runs its program, and each of its OpenMP regions is one `#pragma omp parallel`
//! block of the rank's T threads, in a function named after the region (in `regions.c`, which
//! includes nothing, so that no name can clash with a library's), where the master runs its
//! steps of the region and worker k its part: the rank's i-th region runs each worker's i-th
//! part (`part_<thread>(i)`, which finds the part in the worker's divided program).

use std::collections::BTreeMap;
use std::io::{self, Write};

use anyhow::{Result, bail};
use pp_recorder::event::ThreadId;

use super::{Item, Programs, SkelStep};
use crate::signature::Op;

/// The second C file of a hybrid skeleton: the regions' functions.
pub const REGIONS: &str = "regions.c";

/// A hybrid skeleton's Makefile: clang's OpenMP (LLVM's libomp has the tools interface that
/// `pp run` records OpenMP threads with) under the MPI compiler wrapper, as `examples/mpi`'s
/// hybrid examples are built.
pub const MAKEFILE: &str = "\
# pp skeleton (docs/skeletons.md#hybrid-skeletons): make builds the hybrid skeleton with the MPI
# compiler wrapper driving clang's OpenMP (LLVM's libomp, which pp run's OMPT tool needs);
# pp skeleton run DIR builds it and runs it under pp run -- mpirun.
MPICC ?= mpicc
CLANG ?= clang
CFLAGS ?= -O2
skeleton: skeleton.c regions.c
\tOMPI_CC=$(CLANG) MPICH_CC=$(CLANG) $(MPICC) $(CFLAGS) -std=c11 -Wall -fopenmp -rdynamic -fno-optimize-sibling-calls -o $@ skeleton.c regions.c
";

/// +1 where `op` opens a region or a part, -1 where it closes one, else 0.
pub fn depth(op: &Op) -> i32 {
    match op {
        Op::RegionBegin { .. } | Op::PartBegin { .. } => 1,
        Op::RegionEnd | Op::PartEnd => -1,
        _ => 0,
    }
}

/// Whether `op` belongs to an OpenMP region (a region other than the tracer's `mpi`, or a
/// part of one).
pub fn openmp(op: &Op) -> bool {
    match op {
        Op::RegionBegin { name } => name != "mpi",
        Op::PartBegin { .. } => true,
        _ => false,
    }
}

fn message(op: &Op) -> bool {
    matches!(op, Op::Send { .. } | Op::Recv { .. } | Op::Coll { .. })
}

/// How a hybrid run's threads are ranks' threads (docs/mpi.md#hybrid-mpi--openmp): rank r's
/// OpenMP thread k is thread r·T + k, and its master (k = 0) makes its MPI calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Threads per rank.
    pub per_rank: u32,
    /// The masters (ranks' first threads), in order.
    pub masters: Vec<ThreadId>,
}

impl Layout {
    /// The rank of thread `t`.
    pub fn rank(&self, t: ThreadId) -> u32 {
        t / self.per_rank
    }
}

/// What each thread of `s` has: messages, OpenMP regions it opens, parts.
struct Kinds {
    messages: bool,
    regions: bool,
    parts: bool,
}

fn kinds(s: &dyn Programs, i: usize) -> Kinds {
    let mut k = Kinds {
        messages: false,
        regions: false,
        parts: false,
    };
    s.each(i, &mut |it| {
        k.messages |= it.count(&|st| message(&st.op)) > 0;
        k.regions |=
            it.count(&|st| matches!(&st.op, Op::RegionBegin { name } if name != "mpi")) > 0;
        k.parts |= it.count(&|st| matches!(st.op, Op::PartBegin { .. })) > 0;
    });
    k
}

/// The layout of `s` if it is a hybrid skeleton (OpenMP regions in an MPI run), `None` for a
/// plain MPI or threaded one; the error says what a hybrid generator cannot express.
pub fn layout(s: &dyn Programs) -> Result<Option<Layout>> {
    let threads = s.threads();
    let all: Vec<Kinds> = (0..threads.len()).map(|i| kinds(s, i)).collect();
    let any_openmp = all.iter().any(|k| k.regions || k.parts);
    if !any_openmp || !all.iter().any(|k| k.messages) {
        return Ok(None);
    }
    let p = s.head().p;
    let masters: Vec<ThreadId> = threads
        .iter()
        .zip(&all)
        .filter(|(_, k)| k.messages || k.regions)
        .map(|(&t, _)| t)
        .collect();
    for (&t, k) in threads.iter().zip(&all) {
        if k.parts && k.messages {
            bail!(
                "thread {t} makes MPI calls and is a worker of an OpenMP region: MPI calls from OpenMP threads other than a rank's master (MPI_THREAD_MULTIPLE) are not built"
            );
        }
    }
    let ranks = masters.len() as u32;
    if ranks == 0 || !p.is_multiple_of(ranks) {
        bail!(
            "{ranks} ranks do not divide the run's p = {p} threads: the ranks' OpenMP threads cannot be laid out (docs/mpi.md#hybrid-mpi--openmp)"
        );
    }
    let per_rank = p / ranks;
    if let Some((r, &t)) = masters
        .iter()
        .enumerate()
        .find(|&(r, &t)| t != r as u32 * per_rank)
    {
        bail!(
            "thread {t} makes MPI calls or opens regions as rank {r}'s master, which is thread {} with {per_rank} threads a rank",
            r as u32 * per_rank
        );
    }
    Ok(Some(Layout { per_rank, masters }))
}

/// How many regions the `i`-th thread of `s` opens (a master) or takes part in (a worker).
fn regions(s: &dyn Programs, i: usize) -> u64 {
    let mut n = 0u64;
    s.each(i, &mut |it| {
        n = n.saturating_add(it.count(&|st| openmp(&st.op)));
    });
    n
}

/// Checks what the C generator needs of a hybrid skeleton beyond [`super::mpi::check`]'s
/// messages: no nested regions, every region of a master closed at the level it opens, and a
/// worker's regions inside the rank's; returns warnings where a worker's parts and its
/// master's regions differ in number (each rank's threads are divided on their own).
pub fn check(s: &dyn Programs, layout: &Layout) -> Result<Vec<String>> {
    let threads = s.threads();
    let index: BTreeMap<ThreadId, usize> =
        threads.iter().enumerate().map(|(i, &t)| (t, i)).collect();
    let mut warnings = Vec::new();
    for &m in &layout.masters {
        let items = collect(s, index[&m]);
        let mut problem = None;
        regions_whole(&items, m, 0, &mut problem);
        if let Some(p) = problem {
            bail!("{p}");
        }
        let opened = regions(s, index[&m]);
        for k in 1..layout.per_rank {
            let t = m + k;
            let Some(&i) = index.get(&t) else { continue };
            let parts = regions(s, i);
            if parts != opened {
                warnings.push(format!(
                    "thread {t} takes part in {parts} regions and its master, thread {m}, opens {opened} (their loops were divided on their own): the rank's i-th region runs the worker's i-th part, {}",
                    if parts > opened {
                        "and its parts beyond are not run"
                    } else {
                        "and the regions beyond run without it"
                    }
                ));
            }
        }
    }
    Ok(warnings)
}

/// The `i`-th thread's program.
fn collect(s: &dyn Programs, i: usize) -> Vec<Item> {
    let mut items = Vec::new();
    s.each(i, &mut |it| items.push(it.clone()));
    items
}

/// Notes in `problem` the first region of `items` that does not close at its level, or that
/// opens inside another (`inside`: OpenMP regions open around these items).
fn regions_whole(items: &[Item], thread: ThreadId, inside: u32, problem: &mut Option<String>) {
    let mut open: Option<&str> = None;
    let mut depth = 0i64;
    for it in items {
        match it {
            Item::Step(st) => match &st.op {
                Op::RegionBegin { name } if name != "mpi" => {
                    if inside + u32::from(open.is_some()) > 0 {
                        problem.get_or_insert(format!(
                            "thread {thread}: region {name} opens inside another: nested OpenMP regions are not built"
                        ));
                    }
                    open = Some(name);
                    depth = 1;
                }
                Op::RegionBegin { .. } if open.is_some() => depth += 1,
                Op::RegionEnd if open.is_some() => {
                    depth -= 1;
                    if depth == 0 {
                        open = None;
                    }
                }
                _ => {}
            },
            Item::Loop { body, .. } => {
                regions_whole(body, thread, inside + u32::from(open.is_some()), problem)
            }
        }
    }
    if let Some(name) = open {
        problem.get_or_insert(format!(
            "thread {thread}: region {name} does not end in the loop iteration it begins in (or at all): a hybrid skeleton writes each region as one #pragma omp parallel block"
        ));
    }
}

/// The C function name of region `name` (`regions.c` includes nothing, so only C's keywords,
/// `main` and the file's own names, `pp_skeleton_*`, are taken); the `i`-th region's
/// `pp_skeleton_region_<i>` where the name is not a C identifier or is taken (the skeleton's
/// log then names the region so).
pub fn function_name(name: &str, i: usize) -> String {
    const TAKEN: &[&str] = &[
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
        "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
        "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
        "union", "unsigned", "void", "volatile", "while", "main",
    ];
    let identifier = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__")
        && !name.starts_with("_Bool")
        && !name.starts_with("pp_skeleton_")
        && !TAKEN.contains(&name);
    if identifier {
        name.to_string()
    } else {
        format!("pp_skeleton_region_{i}")
    }
}

/// The hybrid parts of the C source, written by [`super::mpi::write_source`].
pub struct Writer<'a> {
    layout: &'a Layout,
    /// The region names, in order of first use.
    names: Vec<String>,
    /// Per site (a region's place in a master's program): its `case` of `pp_skeleton_site`.
    sites: Vec<u8>,
    count: usize,
    /// The threads with parts (they have a `part_<t>` function).
    workers: Vec<ThreadId>,
}

impl<'a> Writer<'a> {
    pub fn new(layout: &'a Layout, workers: Vec<ThreadId>) -> Writer<'a> {
        Writer {
            layout,
            names: Vec::new(),
            sites: Vec::new(),
            count: 0,
            workers,
        }
    }

    /// The declarations the rank functions need.
    pub fn prelude(&self, c: &mut dyn io::Write) -> io::Result<()> {
        writeln!(
            c,
            "\n/* The regions (regions.c): pp_skeleton_region(region, site, i) opens region's\n * #pragma omp parallel, whose threads run pp_skeleton_site(site, i). */\nvoid pp_skeleton_region(int region, int site, long long i);\nvoid pp_skeleton_site(int site, long long i);"
        )?;
        for &w in &self.workers {
            writeln!(c, "static void part_{w}(long long i);")?;
        }
        Ok(())
    }

    /// The `i`-th thread's part function (`part_<t>(i)` runs its i-th part).
    pub fn part(&self, c: &mut dyn io::Write, thread: ThreadId, items: &[Item]) -> io::Result<()> {
        writeln!(
            c,
            "\n/* Thread {thread}'s i-th part of its rank's regions. */\nstatic void part_{thread}(long long i) {{"
        )?;
        parts(c, items, 1)?;
        writeln!(c, "    (void)i;\n}}")
    }

    /// A master's rank function body: its program with each OpenMP region a call of
    /// `pp_skeleton_region`.
    pub fn master(
        &mut self,
        c: &mut dyn io::Write,
        thread: ThreadId,
        items: &[Item],
        call: &dyn Fn(&SkelStep) -> Option<String>,
    ) -> io::Result<()> {
        writeln!(c, "    long long region = 0;")?;
        self.items(c, thread, items, 1, 0, call)?;
        writeln!(c, "    (void)region;")
    }

    fn items(
        &mut self,
        c: &mut dyn io::Write,
        thread: ThreadId,
        items: &[Item],
        depth: usize,
        var: usize,
        call: &dyn Fn(&SkelStep) -> Option<String>,
    ) -> io::Result<()> {
        let pad = "    ".repeat(depth);
        let mut k = 0;
        while k < items.len() {
            match &items[k] {
                Item::Step(st) => match &st.op {
                    Op::RegionBegin { name } if name != "mpi" => {
                        // The computation before the fork is the master's serial code.
                        spin(c, &pad, st.cpu_ns)?;
                        let end = close(items, k);
                        // The master's steps in the region, its end's computation last.
                        let inside = &items[k + 1..(end + 1).min(items.len())];
                        let site = self.site(thread, inside, call)?;
                        let region = match self.names.iter().position(|n| n == name) {
                            Some(r) => r,
                            None => {
                                self.names.push(name.clone());
                                self.names.len() - 1
                            }
                        };
                        writeln!(c, "{pad}pp_skeleton_region({region}, {site}, region++);")?;
                        k = end + 1;
                        continue;
                    }
                    _ => step(c, &pad, st, call, false)?,
                },
                Item::Loop { count, body } => {
                    writeln!(
                        c,
                        "{pad}for (long long i{var} = 0; i{var} < {count}LL; i{var}++) {{"
                    )?;
                    self.items(c, thread, body, depth + 1, var + 1, call)?;
                    writeln!(c, "{pad}}}")?;
                }
            }
            k += 1;
        }
        Ok(())
    }

    /// Writes a site's case (`inside`: the master's items between the region's begin and its
    /// end, the end's step last) and returns its number.
    fn site(
        &mut self,
        master: ThreadId,
        inside: &[Item],
        call: &dyn Fn(&SkelStep) -> Option<String>,
    ) -> io::Result<usize> {
        let n = self.count;
        self.count += 1;
        let mut c = std::mem::take(&mut self.sites);
        writeln!(
            c,
            "    case {n}: /* thread {master}'s region {n} */\n        switch (omp_get_thread_num()) {{\n        case 0:"
        )?;
        body(&mut c, inside, 3, 0, call)?;
        writeln!(c, "            break;")?;
        for k in 1..self.layout.per_rank {
            let w = master + k;
            if self.workers.contains(&w) {
                writeln!(c, "        case {k}: part_{w}(i); break;")?;
            }
        }
        writeln!(c, "        default: break;\n        }}\n        break;")?;
        self.sites = c;
        Ok(n)
    }

    /// `pp_skeleton_site`, after the rank functions.
    pub fn finish(&self, c: &mut dyn io::Write) -> io::Result<()> {
        writeln!(
            c,
            "\n/* Inside a region: what each thread of the team runs at each site. */\nvoid pp_skeleton_site(int site, long long i) {{\n    (void)i;\n    switch (site) {{"
        )?;
        c.write_all(&self.sites)?;
        writeln!(c, "    default: break;\n    }}\n}}")
    }

    /// `regions.c`: a function per region name holding its `#pragma omp parallel`, and the
    /// dispatcher.
    pub fn regions(&self, c: &mut dyn io::Write) -> io::Result<()> {
        writeln!(
            c,
            "/* pp skeleton (docs/skeletons.md#hybrid-skeletons): one function per OpenMP region of the\n * application, named after it, so that pp names the skeleton's regions as the application's.\n * This file includes nothing, so that no region's name can clash with a library's. */\nvoid pp_skeleton_site(int site, long long i);"
        )?;
        let t = self.layout.per_rank;
        for (r, name) in self.names.iter().enumerate() {
            let f = function_name(name, r);
            writeln!(
                c,
                "\n/* region {} */\n__attribute__((noinline)) static void {f}(int site, long long i) {{\n#pragma omp parallel num_threads({t})\n    pp_skeleton_site(site, i);\n}}",
                name.replace("*/", "* /")
            )?;
        }
        writeln!(
            c,
            "\nvoid pp_skeleton_region(int region, int site, long long i) {{\n    switch (region) {{"
        )?;
        for (r, name) in self.names.iter().enumerate() {
            writeln!(
                c,
                "    case {r}: {}(site, i); break;",
                function_name(name, r)
            )?;
        }
        writeln!(c, "    default: break;\n    }}\n}}")
    }
}

/// The index of the region end that closes the region opened at `items[k]` (at the same
/// level), else `items.len()`.
fn close(items: &[Item], k: usize) -> usize {
    let mut d = 0i64;
    for (j, it) in items.iter().enumerate().skip(k) {
        if let Item::Step(st) = it {
            match st.op {
                Op::RegionBegin { .. } => d += 1,
                Op::RegionEnd => {
                    d -= 1;
                    if d == 0 {
                        return j;
                    }
                }
                _ => {}
            }
        }
    }
    items.len()
}

fn spin(c: &mut dyn io::Write, pad: &str, ns: u64) -> io::Result<()> {
    if ns > 0 {
        writeln!(c, "{pad}spin({ns});")?;
    }
    Ok(())
}

/// A step of a master (`inside` a region or not) or of a worker's part: its computation, then
/// its operation.
fn step(
    c: &mut dyn io::Write,
    pad: &str,
    st: &SkelStep,
    call: &dyn Fn(&SkelStep) -> Option<String>,
    inside: bool,
) -> io::Result<()> {
    spin(c, pad, st.cpu_ns)?;
    match &st.op {
        // A barrier inside a region: the region's join (the end of the parallel block) is its
        // implicit barrier; a barrier the team met inside it is not reproduced.
        Op::Wait { kind, .. } if inside && kind == "barrier" => Ok(()),
        // Another wait of an OpenMP thread (a lock, a critical section): its time.
        Op::Wait { kind, .. } if inside && kind != "recv" && kind != "send" => {
            writeln!(c, "{pad}pause_ns({});", st.op_ns)
        }
        _ => match call(st) {
            Some(line) => writeln!(c, "{pad}{line}"),
            None => Ok(()),
        },
    }
}

/// Items inside a region (a master's) or a part (a worker's), loops as `for` loops.
fn body(
    c: &mut dyn io::Write,
    items: &[Item],
    depth: usize,
    var: usize,
    call: &dyn Fn(&SkelStep) -> Option<String>,
) -> io::Result<()> {
    let pad = "    ".repeat(depth);
    for it in items {
        match it {
            Item::Step(st) => step(c, &pad, st, call, true)?,
            Item::Loop { count, body: b } => {
                writeln!(
                    c,
                    "{pad}for (long long j{var} = 0; j{var} < {count}LL; j{var}++) {{"
                )?;
                body(c, b, depth + 1, var + 1, call)?;
                writeln!(c, "{pad}}}")?;
            }
        }
    }
    Ok(())
}

/// How many parts one pass of `items` holds.
fn count_parts(items: &[Item]) -> u64 {
    items
        .iter()
        .map(|it| it.count(&|st| matches!(st.op, Op::PartBegin { .. })))
        .fold(0u64, u64::saturating_add)
}

/// A worker's program as code that runs its `i`-th part and returns: each part is
/// `if (i == 0) { ...; return; } i--;`, each loop with m parts an iteration
/// `if (i < count·m) { i %= m; <its body>; } i -= count·m;`.
fn parts(c: &mut dyn io::Write, items: &[Item], depth: usize) -> io::Result<()> {
    let pad = "    ".repeat(depth);
    let no_call = |_: &SkelStep| None;
    let mut k = 0;
    while k < items.len() {
        match &items[k] {
            Item::Step(st) if matches!(st.op, Op::PartBegin { .. }) => {
                // The computation before the part is the worker's idle time: not run.
                let mut end = k + 1;
                let mut d = 1;
                while end < items.len() {
                    if let Item::Step(s) = &items[end] {
                        d += depth_of(&s.op);
                        if d == 0 {
                            break;
                        }
                    }
                    end += 1;
                }
                writeln!(c, "{pad}if (i == 0) {{")?;
                let inside = &items[k + 1..end.min(items.len())];
                body(c, inside, depth + 1, 0, &no_call)?;
                if let Some(Item::Step(last)) = items.get(end) {
                    spin(c, &format!("{pad}    "), last.cpu_ns)?;
                }
                writeln!(c, "{pad}    return;\n{pad}}}\n{pad}i--;")?;
                k = end + 1;
                continue;
            }
            Item::Step(_) => {}
            Item::Loop { count, body: b } => {
                let m = count_parts(b);
                if m > 0 {
                    let all = m.saturating_mul(*count);
                    writeln!(c, "{pad}if (i < {all}LL) {{\n{pad}    i %= {m}LL;")?;
                    parts(c, b, depth + 1)?;
                    writeln!(c, "{pad}    return;\n{pad}}}\n{pad}i -= {all}LL;")?;
                }
            }
        }
        k += 1;
    }
    Ok(())
}

fn depth_of(op: &Op) -> i64 {
    i64::from(depth(op))
}
