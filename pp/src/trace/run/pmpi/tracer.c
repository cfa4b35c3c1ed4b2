/* tracer.c: pp's MPI tracer (docs/mpi.md). `pp run -- mpirun ...` compiles it with mpicc into a
 * shared library and preloads it into every rank: its MPI_* functions record the call and call
 * the real PMPI_* ones. Each rank writes a text pp log `$PP_MPI_LOG.rank<r>` at MPI_Finalize,
 * which pp run merges into one log whose threads are the ranks (p = size of MPI_COMM_WORLD).
 *
 * What a rank records (times on CLOCK_MONOTONIC, shared by the ranks of a node):
 *   MPI_Init .. MPI_Finalize: start, region_begin 0 mpi (every rank), work between calls;
 *   a point-to-point call: work_end, then `send` where a send starts, `wait_begin send|recv`
 *   while it blocks, `recv` where a receive completes (with what it matched), `wait_end`,
 *   then work_begin again; a collective: `coll <op> <bytes> [root=]` and a barrier wait;
 *   CPU samples at the ends of each wait (MPI polls while it waits: its CPU time must not
 *   back the work around it), at most one per 50 us.
 * At MPI_Init and MPI_Finalize each rank measures its clock's offset from rank 0's (a short
 * ping-pong, `# clock_offset` comments in its log), so that ranks on other nodes line up.
 * Only MPI_COMM_WORLD's ranks are threads; a message on another communicator is recorded
 * with its peer translated to a world rank and `comm=c<handle index>`. Fortran's `mpif.h` and
 * `use mpi` calls have entry points of their own (at the end).
 *
 * Hybrid MPI + OpenMP (docs/mpi.md): pp run preloads the OMPT tool too, which writes the rank's
 * OpenMP threads into a log of its own. When the tool is there (its pp_ompt_thread_id found
 * with dlsym), each event line names its thread `<rank>:<k>`, k the tool's id of the calling
 * thread (`<rank>` alone when the tool records no thread there yet), CPU samples carry the
 * run-queue delay as the tool's do, and the log ends with `# ompt_epoch <ns>` (the tool's time
 * 0 on CLOCK_MONOTONIC); pp run merges the two. `# openmp_runtime libomp|libgomp` says which
 * OpenMP runtime the program loaded, so that pp run can say why threads are missing. Under MPI_THREAD_MULTIPLE the thread that
 * initialised MPI and every thread the tool records are recorded, under a lock; other threads'
 * calls are counted (`# unrecorded_calls <n>`), not recorded.
 *
 * The tracer is three files compiled as one, in this order (see TRACER_C in ../mpi.rs): this
 * one (the rank's state, its log and what every call records), c_calls.c (the C entry points)
 * and fortran_calls.c (the Fortran entry points).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

static FILE *out;
static char *buf;
static size_t len, cap;
static int world_rank = -1, world_size = 0;
static int tracing;
/* MPI_THREAD_MULTIPLE was provided: the thread that initialised MPI is recorded, and the
 * threads the OMPT tool records (without the tool, only the first: pp's model of a rank
 * without OpenMP is one thread). */
static int multiple;
static pthread_t init_thread;

/* The OMPT tool's functions, when pp run loaded it into this rank (else NULL). */
static int (*tool_thread)(void);
static uint64_t (*tool_epoch)(void);

/* The calling thread's id in the tool's log, -1 when it has none. */
static int omp_thread(void) { return tool_thread ? tool_thread() : -1; }

/* Whether this call is recorded: tracing, and on a thread that is recorded. */
static int recording(void) {
    return tracing &&
           (!multiple || pthread_equal(pthread_self(), init_thread) || omp_thread() >= 0);
}

/* Several threads record (MULTIPLE with the tool): the event buffer and the request table are
 * shared under this lock (recursive: a completion records its receive). */
static int shared;
static pthread_mutex_t state_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static void lock(void) {
    if (shared) pthread_mutex_lock(&state_lock);
}
static void unlock(void) {
    if (shared) pthread_mutex_unlock(&state_lock);
}
/* Blocking calls made under MULTIPLE by threads that are not recorded. */
static unsigned long long unrecorded_calls;
/* PP_MPI_LOG is set: every rank takes part in the clock offsets, recorded or not. */
static int measuring;

/* Added to this rank's clock: 0, except in tests of the clock alignment, which give each
 * rank's skew in PP_MPI_TEST_SKEW_NS ("0,-50000000,..."). */
static int64_t skew;

static uint64_t now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec + (uint64_t)skew;
}

/* Rank 0's clock minus this rank's, in ns, from 16 ping-pongs with rank 0, which answers each
 * rank in turn with its time t0. Each round trip from a to b on this rank's clock bounds the
 * offset: rank 0 read t0 between them, so the offset lies in [t0 - b, t0 - a]. The offset is
 * the value nearest 0 in all 16 intervals: 0 for ranks that share rank 0's clock (on its
 * node: CLOCK_MONOTONIC is the kernel's), else within the shortest round trip of the truth.
 * (Intervals that do not meet mean a clock jumped: then the middle of the shortest round
 * trip.) Every rank takes part; rank 0's is 0. */
#define OFFSET_TAG 32766
static int64_t offset_to_rank0(void) {
    int64_t lo = INT64_MIN, hi = INT64_MAX, shortest = 0;
    uint64_t best_rtt = UINT64_MAX;
    for (int r = 1; r < world_size; r++) {
        for (int k = 0; k < 16; k++) {
            if (world_rank == 0) {
                char ping;
                PMPI_Recv(&ping, 1, MPI_CHAR, r, OFFSET_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                uint64_t t0 = now();
                PMPI_Send(&t0, 1, MPI_UINT64_T, r, OFFSET_TAG, MPI_COMM_WORLD);
            } else if (world_rank == r) {
                char ping = 0;
                uint64_t t0, a = now();
                PMPI_Send(&ping, 1, MPI_CHAR, 0, OFFSET_TAG, MPI_COMM_WORLD);
                PMPI_Recv(&t0, 1, MPI_UINT64_T, 0, OFFSET_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                uint64_t b = now();
                int64_t from = (int64_t)(t0 - b), to = (int64_t)(t0 - a);
                if (from > lo) lo = from;
                if (to < hi) hi = to;
                if (b - a < best_rtt) {
                    best_rtt = b - a;
                    shortest = (int64_t)(t0 - (a + (b - a) / 2));
                }
            }
        }
    }
    if (world_rank == 0) return 0;
    if (lo > hi) return shortest;
    return lo > 0 ? lo : hi < 0 ? hi : 0;
}

/* Writes `# clock_offset <local time> <offset>`: a comment to the log's readers, which pp run
 * reads to move this rank's times onto rank 0's clock. */
static void note_offset(void) {
    int64_t off = offset_to_rank0();
    if (out) fprintf(out, "# clock_offset %llu %lld\n", (unsigned long long)now(), (long long)off);
}

static uint64_t cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Appends one event line (kept in memory until MPI_Finalize: no I/O inside the run). */
static void emit(uint64_t t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void emit(uint64_t t, const char *fmt, ...) {
    if (!recording()) return;
    int k = omp_thread();
    lock();
    if (cap - len < 256) {
        size_t ncap = cap ? cap * 2 : 1 << 20;
        char *n = realloc(buf, ncap);
        if (!n) {
            tracing = 0;
            fprintf(stderr, "pp-mpi: rank %d: out of memory for events; recording stops\n",
                    world_rank);
            unlock();
            return;
        }
        buf = n;
        cap = ncap;
    }
    if (k >= 0)
        k = snprintf(buf + len, cap - len, "%llu %d:%d ", (unsigned long long)t, world_rank, k);
    else
        k = snprintf(buf + len, cap - len, "%llu %d ", (unsigned long long)t, world_rank);
    len += (size_t)k;
    va_list ap;
    va_start(ap, fmt);
    k = vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= cap - len) {
        tracing = 0;
        fprintf(stderr, "pp-mpi: rank %d: an event did not fit; recording stops\n", world_rank);
        unlock();
        return;
    }
    len += (size_t)k;
    buf[len++] = '\n';
    unlock();
}

/* A CPU sample, unless the last one is less than 50 us old: reading the thread's CPU clock
 * costs about 0.6 us, more than the rest of a call's tracing, and over so short a stretch
 * whether MPI's polling backs the work around it matters little. */
static __thread uint64_t last_sample;
/* With the tool: the run-queue delay too, as the tool's samples on the same threads have it
 * (unless PP_RUN_DELAY=0, or the kernel does not say). */
static int with_delay;
static __thread int schedstat = -2;
static int run_delay(unsigned long long *delay) {
    if (schedstat == -2) schedstat = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (schedstat < 0) return 0;
    char b[128];
    ssize_t n = pread(schedstat, b, sizeof b - 1, 0);
    if (n <= 0) return 0;
    b[n] = 0;
    unsigned long long ran;
    return sscanf(b, "%llu %llu", &ran, delay) == 2;
}
static void cpu_sample(void) {
    if (!recording()) return;
    uint64_t t = now();
    if (last_sample && t - last_sample < 50000) return;
    last_sample = t;
    unsigned long long delay;
    if (with_delay && run_delay(&delay))
        emit(t, "cpu %llu %llu", (unsigned long long)cpu_now(), delay);
    else
        emit(t, "cpu %llu", (unsigned long long)cpu_now());
}

/* A CPU sample now whatever its age (the first and the last of the run). */
static void cpu_sample_now(void) {
    last_sample = 0;
    cpu_sample();
}

/* Leaving the rank's computation for an MPI call, and coming back. */
static void call_begin(void) {
    if (tracing && !recording()) __atomic_fetch_add(&unrecorded_calls, 1, __ATOMIC_RELAXED);
    emit(now(), "work_end");
}
static void call_end(void) { emit(now(), "work_begin"); }

static void wait_begin(const char *kind, const char *object) {
    cpu_sample();
    emit(now(), "wait_begin %s%s%s", kind, object ? " " : "", object ? object : "");
}

static void wait_end(const char *kind, const char *object) {
    emit(now(), "wait_end %s%s%s", kind, object ? " " : "", object ? object : "");
    cpu_sample();
}

/* The world rank of `rank` in `comm`. */
static int world_of(MPI_Comm comm, int rank) {
    if (comm == MPI_COMM_WORLD || rank < 0) return rank;
    MPI_Group g, w;
    int out_rank = MPI_UNDEFINED;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &w);
    PMPI_Group_translate_ranks(g, 1, &rank, w, &out_rank);
    PMPI_Group_free(&g);
    PMPI_Group_free(&w);
    return out_rank;
}

/* The communicator's part of an event line: "" for the world, else " comm=c<Fortran handle>". */
static void comm_name(MPI_Comm comm, char *name, size_t n) {
    if (comm == MPI_COMM_WORLD) {
        name[0] = 0;
        return;
    }
    snprintf(name, n, " comm=c%d", (int)PMPI_Comm_c2f(comm));
}

static long long bytes_of(int count, MPI_Datatype type) {
    int size = 0;
    PMPI_Type_size(type, &size);
    return (long long)count * size;
}

static void sent(int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    if (dest == MPI_PROC_NULL || !recording()) return;
    char name[32];
    comm_name(comm, name, sizeof name);
    emit(now(), "send %d %d %lld%s", world_of(comm, dest), tag, bytes_of(count, type), name);
}

static void received(MPI_Status *st, MPI_Datatype type, MPI_Comm comm) {
    if (st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0 || !recording()) return;
    int count = 0;
    PMPI_Get_count(st, type, &count);
    char name[32];
    comm_name(comm, name, sizeof name);
    emit(now(), "recv %d %d %lld%s", world_of(comm, st->MPI_SOURCE), st->MPI_TAG,
         bytes_of(count, type), name);
}

/* Requests that a completion must know about, by handle: receives (what the `recv` event
 * needs) and persistent requests (a send is recorded at each start, a receive remembered).
 * An open-addressing hash with linear probing, at most half full, growing by doubling; an
 * entry goes at completion (a persistent one at MPI_Request_free), so none leaks. */
enum { RECV, PERSISTENT_SEND, PERSISTENT_RECV };
struct request {
    MPI_Request req; /* MPI_REQUEST_NULL: an empty slot */
    MPI_Datatype type;
    MPI_Comm comm;
    int count, peer, tag;
    char kind;
    char active; /* a persistent receive started and not completed yet */
};
static struct request *requests;
static size_t requests_cap, requests_len; /* cap: 0 or a power of two */

static size_t slot_of(MPI_Request req) {
    uint64_t k = 0;
    memcpy(&k, &req, sizeof req < sizeof k ? sizeof req : sizeof k);
    return (size_t)((k * 0x9e3779b97f4a7c15u) >> 20) & (requests_cap - 1);
}

static struct request *find_request(MPI_Request req) {
    if (!requests_len || req == MPI_REQUEST_NULL) return NULL;
    for (size_t i = slot_of(req);; i = (i + 1) & (requests_cap - 1)) {
        if (requests[i].req == req) return &requests[i];
        if (requests[i].req == MPI_REQUEST_NULL) return NULL;
    }
}

/* Empties the entry, moving back the entries after it that probed past it. */
static void forget_request(struct request *e) {
    size_t mask = requests_cap - 1, hole = (size_t)(e - requests);
    requests[hole].req = MPI_REQUEST_NULL;
    requests_len--;
    for (size_t i = (hole + 1) & mask; requests[i].req != MPI_REQUEST_NULL; i = (i + 1) & mask) {
        size_t home = slot_of(requests[i].req);
        /* It stays unless the hole lies between its home slot and it (cyclically). */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            requests[hole] = requests[i];
            requests[i].req = MPI_REQUEST_NULL;
            hole = i;
        }
    }
}

/* Remembers `e` (its handle replacing any stale entry of the same handle). */
static void remember_locked(struct request e);
static void remember(struct request e) {
    if (!recording() || e.req == MPI_REQUEST_NULL) return;
    lock();
    remember_locked(e);
    unlock();
}
static void remember_locked(struct request e) {
    struct request *old = find_request(e.req);
    if (old) {
        *old = e;
        return;
    }
    if (2 * (requests_len + 1) > requests_cap) {
        size_t ncap = requests_cap ? 2 * requests_cap : 64;
        struct request *n = malloc(ncap * sizeof *n), *o = requests;
        if (!n) {
            fprintf(stderr, "pp-mpi: rank %d: out of memory for requests; a receive is not recorded\n",
                    world_rank);
            return;
        }
        for (size_t i = 0; i < ncap; i++) n[i].req = MPI_REQUEST_NULL;
        size_t ocap = requests_cap;
        requests = n;
        requests_cap = ncap;
        for (size_t i = 0; i < ocap; i++)
            if (o[i].req != MPI_REQUEST_NULL) {
                size_t j = slot_of(o[i].req);
                while (requests[j].req != MPI_REQUEST_NULL) j = (j + 1) & (ncap - 1);
                requests[j] = o[i];
            }
        free(o);
    }
    size_t j = slot_of(e.req);
    while (requests[j].req != MPI_REQUEST_NULL) j = (j + 1) & (requests_cap - 1);
    requests[j] = e;
    requests_len++;
}

static void remember_recv(MPI_Request req, MPI_Datatype type, MPI_Comm comm) {
    remember((struct request){.req = req, .type = type, .comm = comm, .kind = RECV});
}

/* A new send request: its handle may be one a receive had, completed where the tracer did not
 * see it; that entry must not make the send's completion a receive. */
static void new_send_request(MPI_Request req) {
    if (!recording()) return;
    lock();
    struct request *e = requests_len ? find_request(req) : NULL;
    if (e) forget_request(e);
    unlock();
}

/* MPI_Request_free: the request is forgotten (a receive freed before it completes is not
 * recorded). */
static void freed(MPI_Request req) { new_send_request(req); }

/* Called with the request as it was before completion and its status after: records the
 * receive it completed (not one cancelled); a persistent request stays, inactive. */
static void completed(MPI_Request req, MPI_Status *st) {
    if (!recording()) return;
    lock();
    struct request *e = requests_len ? find_request(req) : NULL;
    if (!e || e->kind == PERSISTENT_SEND || (e->kind == PERSISTENT_RECV && !e->active)) {
        unlock();
        return;
    }
    int cancelled = 0;
    PMPI_Test_cancelled(st, &cancelled);
    if (!cancelled) received(st, e->type, e->comm);
    if (e->kind == RECV)
        forget_request(e);
    else
        e->active = 0;
    unlock();
}

/* MPI_Start of a request: a persistent send is sent now, a persistent receive is pending. */
static void started(MPI_Request req) {
    if (!recording()) return;
    lock();
    struct request *e = find_request(req);
    if (e && e->kind == PERSISTENT_SEND) sent(e->count, e->type, e->peer, e->tag, e->comm);
    if (e && e->kind == PERSISTENT_RECV) e->active = 1;
    unlock();
}

/* After MPI_Init: opens the rank's log and starts its run. */
static void begin_trace(int provided) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    const char *base = getenv("PP_MPI_LOG");
    if (!base || !*base) return;
    measuring = 1;
    init_thread = pthread_self();
    multiple = provided == MPI_THREAD_MULTIPLE;
    tool_thread = (int (*)(void))dlsym(RTLD_DEFAULT, "pp_ompt_thread_id");
    tool_epoch = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "pp_ompt_epoch_ns");
    if (!tool_epoch) tool_thread = NULL;
    shared = multiple && tool_thread;
    const char *delay = getenv("PP_RUN_DELAY");
    with_delay = tool_thread && !(delay && strcmp(delay, "0") == 0);
    const char *skews = getenv("PP_MPI_TEST_SKEW_NS");
    for (int r = 0; skews && *skews; r++) {
        char *end;
        long long v = strtoll(skews, &end, 10);
        if (r == world_rank) skew = v;
        skews = *end == ',' ? end + 1 : "";
    }
    char path[4096];
    snprintf(path, sizeof path, "%s.rank%d", base, world_rank);
    out = fopen(path, "w");
    if (out) fprintf(out, "pplog 1 p=%d\n", world_size);
    note_offset();
    if (!out) {
        fprintf(stderr, "pp-mpi: cannot write %s; rank %d is not recorded\n", path, world_rank);
        return;
    }
    tracing = 1;
    uint64_t t = now();
    emit(t, "start");
    emit(t, "region_begin 0 mpi");
    cpu_sample_now();
    emit(now(), "work_begin");
}

/* Before MPI_Finalize: ends the rank's run and writes its log. */
static void end_trace(void) {
    if (tracing) {
        call_begin();
        cpu_sample_now();
        uint64_t t = now();
        emit(t, "region_end 0");
        emit(t, "stop");
    }
    if (measuring) note_offset();
    if (tracing) {
        lock();
        fwrite(buf, 1, len, out);
        tracing = 0;
        unlock();
        if (tool_epoch && out)
            fprintf(out, "# ompt_epoch %llu\n", (unsigned long long)tool_epoch());
        /* Which OpenMP runtime the program loaded, if any (libomp also defines GOMP_*):
         * pp run says why a rank's OpenMP threads are missing. */
        const char *runtime = dlsym(RTLD_DEFAULT, "__kmpc_fork_call") ? "libomp"
                              : dlsym(RTLD_DEFAULT, "GOMP_parallel")  ? "libgomp"
                                                                      : NULL;
        if (runtime && out) fprintf(out, "# openmp_runtime %s\n", runtime);
        unsigned long long skipped = __atomic_load_n(&unrecorded_calls, __ATOMIC_RELAXED);
        if (skipped && out) fprintf(out, "# unrecorded_calls %llu\n", skipped);
    }
    if (out) fclose(out);
    out = NULL;
}

/* The parts of a call's record shared by the C and the Fortran entry points. */
static void send_begin(int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    call_begin();
    sent(count, type, dest, tag, comm);
    wait_begin("send", NULL);
}

static void recv_begin(void) {
    call_begin();
    wait_begin("recv", NULL);
}

static void blocking_end(const char *kind) {
    wait_end(kind, NULL);
    call_end();
}

/* A collective: the operation, this rank's bytes (`root` < 0: none), then a barrier wait. */
static void coll_begin(const char *op, long long bytes, int root, MPI_Comm comm) {
    call_begin();
    if (recording()) {
        char name[32];
        comm_name(comm, name, sizeof name);
        if (root >= 0)
            emit(now(), "coll %s %lld root=%d%s", op, bytes, world_of(comm, root), name);
        else
            emit(now(), "coll %s %lld%s", op, bytes, name);
    }
    wait_begin("barrier", op);
}

static void coll_end(const char *op) {
    wait_end("barrier", op);
    call_end();
}

static int rank_in(MPI_Comm comm) {
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    return r;
}

static int size_of(MPI_Comm comm) {
    int n = 0;
    PMPI_Comm_size(comm, &n);
    return n;
}

/* The sum of n counts. */
static long long sum_of(const int counts[], int n) {
    long long s = 0;
    for (int i = 0; i < n; i++) s += counts[i];
    return s;
}
