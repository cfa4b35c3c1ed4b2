/* pmpi.c: pp's MPI tracer (docs/mpi.md). `pp run -- mpirun ...` compiles it with mpicc into a
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
 * with its peer translated to a world rank and `comm=c<handle index>`. Under
 * MPI_THREAD_MULTIPLE only the thread that initialised MPI is recorded. Fortran's `mpif.h` and
 * `use mpi` calls have entry points of their own (at the end).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static FILE *out;
static char *buf;
static size_t len, cap;
static int world_rank = -1, world_size = 0;
static int tracing;
/* MPI_THREAD_MULTIPLE was provided: only the thread that initialised MPI is recorded (pp's
 * model is one thread per rank), so that nothing the tracer keeps is shared. */
static int multiple;
static pthread_t init_thread;

/* Whether this call is recorded: tracing, and on the rank's recorded thread. */
static int recording(void) {
    return (!multiple || pthread_equal(pthread_self(), init_thread)) && tracing;
}
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
    if (cap - len < 256) {
        size_t ncap = cap ? cap * 2 : 1 << 20;
        char *n = realloc(buf, ncap);
        if (!n) {
            tracing = 0;
            fprintf(stderr, "pp-mpi: rank %d: out of memory for events; recording stops\n",
                    world_rank);
            return;
        }
        buf = n;
        cap = ncap;
    }
    int k = snprintf(buf + len, cap - len, "%llu %d ", (unsigned long long)t, world_rank);
    len += (size_t)k;
    va_list ap;
    va_start(ap, fmt);
    k = vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= cap - len) {
        tracing = 0;
        fprintf(stderr, "pp-mpi: rank %d: an event did not fit; recording stops\n", world_rank);
        return;
    }
    len += (size_t)k;
    buf[len++] = '\n';
}

/* A CPU sample, unless the last one is less than 50 us old: reading the thread's CPU clock
 * costs about 0.6 us, more than the rest of a call's tracing, and over so short a stretch
 * whether MPI's polling backs the work around it matters little. */
static uint64_t last_sample;
static void cpu_sample(void) {
    if (!recording()) return;
    uint64_t t = now();
    if (last_sample && t - last_sample < 50000) return;
    last_sample = t;
    emit(t, "cpu %llu", (unsigned long long)cpu_now());
}

/* A CPU sample now whatever its age (the first and the last of the run). */
static void cpu_sample_now(void) {
    last_sample = 0;
    cpu_sample();
}

/* Leaving the rank's computation for an MPI call, and coming back. */
static void call_begin(void) { emit(now(), "work_end"); }
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
static void remember(struct request e) {
    if (!recording() || e.req == MPI_REQUEST_NULL) return;
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
    struct request *e = requests_len && recording() ? find_request(req) : NULL;
    if (e) forget_request(e);
}

/* Called with the request as it was before completion and its status after: records the
 * receive it completed (not one cancelled); a persistent request stays, inactive. */
static void completed(MPI_Request req, MPI_Status *st) {
    if (!requests_len || !recording()) return;
    struct request *e = find_request(req);
    if (!e || e->kind == PERSISTENT_SEND || (e->kind == PERSISTENT_RECV && !e->active)) return;
    int cancelled = 0;
    PMPI_Test_cancelled(st, &cancelled);
    if (!cancelled) received(st, e->type, e->comm);
    if (e->kind == RECV)
        forget_request(e);
    else
        e->active = 0;
}

/* MPI_Start of a request: a persistent send is sent now, a persistent receive is pending. */
static void started(MPI_Request req) {
    struct request *e = recording() ? find_request(req) : NULL;
    if (!e) return;
    if (e->kind == PERSISTENT_SEND) sent(e->count, e->type, e->peer, e->tag, e->comm);
    if (e->kind == PERSISTENT_RECV) e->active = 1;
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
        fwrite(buf, 1, len, out);
        tracing = 0;
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

int MPI_Init(int *argc, char ***argv) {
    int r = PMPI_Init(argc, argv);
    begin_trace(MPI_THREAD_SINGLE);
    return r;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int r = PMPI_Init_thread(argc, argv, required, provided);
    begin_trace(*provided);
    return r;
}

int MPI_Finalize(void) {
    end_trace();
    return PMPI_Finalize();
}

/* Point to point: the blocking sends (MPI_Bsend returns once the message is buffered,
 * MPI_Rsend needs its receive posted: both still wait as a send). */
#define BLOCKING_SEND(NAME)                                                                   \
    int MPI_##NAME(const void *b, int count, MPI_Datatype type, int dest, int tag,           \
                   MPI_Comm comm) {                                                          \
        send_begin(count, type, dest, tag, comm);                                            \
        int r = PMPI_##NAME(b, count, type, dest, tag, comm);                                \
        blocking_end("send");                                                                \
        return r;                                                                            \
    }
BLOCKING_SEND(Send)
BLOCKING_SEND(Ssend)
BLOCKING_SEND(Bsend)
BLOCKING_SEND(Rsend)

int MPI_Recv(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    recv_begin();
    int r = PMPI_Recv(b, count, type, source, tag, comm, status);
    received(status, type, comm);
    blocking_end("recv");
    return r;
}

/* Waits for a message without receiving it: a receive's wait, no event. */
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    recv_begin();
    int r = PMPI_Probe(source, tag, comm, status);
    blocking_end("recv");
    return r;
}

int MPI_Sendrecv(const void *sb, int scount, MPI_Datatype stype, int dest, int stag, void *rb,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    call_begin();
    sent(scount, stype, dest, stag, comm);
    wait_begin("recv", NULL);
    int r = PMPI_Sendrecv(sb, scount, stype, dest, stag, rb, rcount, rtype, source, rtag, comm,
                          status);
    received(status, rtype, comm);
    blocking_end("recv");
    return r;
}

int MPI_Sendrecv_replace(void *b, int count, MPI_Datatype type, int dest, int stag, int source,
                         int rtag, MPI_Comm comm, MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    call_begin();
    sent(count, type, dest, stag, comm);
    wait_begin("recv", NULL);
    int r = PMPI_Sendrecv_replace(b, count, type, dest, stag, source, rtag, comm, status);
    received(status, type, comm);
    blocking_end("recv");
    return r;
}

/* The non-blocking sends: the send now, no wait. */
#define NONBLOCKING_SEND(NAME)                                                                \
    int MPI_##NAME(const void *b, int count, MPI_Datatype type, int dest, int tag,           \
                   MPI_Comm comm, MPI_Request *req) {                                        \
        sent(count, type, dest, tag, comm);                                                  \
        int r = PMPI_##NAME(b, count, type, dest, tag, comm, req);                           \
        new_send_request(*req);                                                              \
        return r;                                                                            \
    }
NONBLOCKING_SEND(Isend)
NONBLOCKING_SEND(Issend)
NONBLOCKING_SEND(Ibsend)
NONBLOCKING_SEND(Irsend)

int MPI_Irecv(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req) {
    int r = PMPI_Irecv(b, count, type, source, tag, comm, req);
    remember_recv(*req, type, comm);
    return r;
}

/* Persistent requests: remembered until MPI_Request_free; a send is recorded at each start. */
#define PERSISTENT_SEND_INIT(NAME)                                                            \
    int MPI_##NAME(const void *b, int count, MPI_Datatype type, int dest, int tag,           \
                   MPI_Comm comm, MPI_Request *req) {                                        \
        int r = PMPI_##NAME(b, count, type, dest, tag, comm, req);                           \
        if (dest != MPI_PROC_NULL)                                                           \
            remember((struct request){.req = *req, .type = type, .comm = comm, .count = count, \
                                      .peer = dest, .tag = tag, .kind = PERSISTENT_SEND});   \
        else                                                                                 \
            new_send_request(*req);                                                          \
        return r;                                                                            \
    }
PERSISTENT_SEND_INIT(Send_init)
PERSISTENT_SEND_INIT(Ssend_init)
PERSISTENT_SEND_INIT(Bsend_init)
PERSISTENT_SEND_INIT(Rsend_init)

int MPI_Recv_init(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *req) {
    int r = PMPI_Recv_init(b, count, type, source, tag, comm, req);
    remember((struct request){.req = *req, .type = type, .comm = comm,
                              .kind = PERSISTENT_RECV});
    return r;
}

int MPI_Start(MPI_Request *req) {
    started(*req);
    return PMPI_Start(req);
}

int MPI_Startall(int n, MPI_Request reqs[]) {
    for (int i = 0; i < n; i++) started(reqs[i]);
    return PMPI_Startall(n, reqs);
}

/* A receive freed before it completes is not recorded (its send then has no receive). */
int MPI_Request_free(MPI_Request *req) {
    struct request *e = recording() ? find_request(*req) : NULL;
    if (e) forget_request(e);
    return PMPI_Request_free(req);
}

/* Completion calls. `before` holds the requests as they were (a completed one becomes
 * MPI_REQUEST_NULL), `st` the statuses when the caller ignores them: on the stack for a few
 * requests, else on the heap. */
#define FEW 16
struct copies {
    MPI_Request *before, few_before[FEW];
    MPI_Status *st, few_st[FEW];
};

/* Fills `c` for n requests; `statuses`: the caller's, or MPI_STATUSES_IGNORE. 0: no memory. */
static int copy_requests(struct copies *c, int n, MPI_Request reqs[], MPI_Status *statuses) {
    size_t k = n > 0 ? (size_t)n : 1;
    c->before = k <= FEW ? c->few_before : malloc(k * sizeof *c->before);
    c->st = statuses != MPI_STATUSES_IGNORE ? statuses
            : k <= FEW                      ? c->few_st
                                            : malloc(k * sizeof *c->st);
    if (!c->before || !c->st) {
        if (c->before != c->few_before) free(c->before);
        if (c->st != statuses && c->st != c->few_st) free(c->st);
        return 0;
    }
    for (int i = 0; i < n; i++) c->before[i] = reqs[i];
    return 1;
}

static void free_copies(struct copies *c, MPI_Status *statuses) {
    if (c->before != c->few_before) free(c->before);
    if (c->st != statuses && c->st != c->few_st) free(c->st);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    MPI_Request before = *req;
    recv_begin();
    int r = PMPI_Wait(req, status);
    completed(before, status);
    blocking_end("recv");
    return r;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    struct copies c;
    if (!recording() || !copy_requests(&c, n, reqs, statuses))
        return PMPI_Waitall(n, reqs, statuses);
    recv_begin();
    int r = PMPI_Waitall(n, reqs, c.st);
    for (int i = 0; i < n; i++) completed(c.before[i], &c.st[i]);
    blocking_end("recv");
    free_copies(&c, statuses);
    return r;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    struct copies c;
    if (!recording() || !copy_requests(&c, n, reqs, MPI_STATUSES_IGNORE))
        return PMPI_Waitany(n, reqs, index, status);
    recv_begin();
    int r = PMPI_Waitany(n, reqs, index, status);
    if (*index != MPI_UNDEFINED) completed(c.before[*index], status);
    blocking_end("recv");
    free_copies(&c, MPI_STATUSES_IGNORE);
    return r;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
    struct copies c;
    if (!recording() || !copy_requests(&c, n, reqs, statuses))
        return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
    recv_begin();
    int r = PMPI_Waitsome(n, reqs, outcount, indices, c.st);
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        completed(c.before[indices[i]], &c.st[i]);
    blocking_end("recv");
    free_copies(&c, statuses);
    return r;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    MPI_Request before = *req;
    int r = PMPI_Test(req, flag, status);
    if (*flag) completed(before, status);
    return r;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    struct copies c;
    if (!recording() || !copy_requests(&c, n, reqs, statuses))
        return PMPI_Testall(n, reqs, flag, statuses);
    int r = PMPI_Testall(n, reqs, flag, c.st);
    for (int i = 0; *flag && i < n; i++) completed(c.before[i], &c.st[i]);
    free_copies(&c, statuses);
    return r;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    struct copies c;
    if (!recording() || !copy_requests(&c, n, reqs, MPI_STATUSES_IGNORE))
        return PMPI_Testany(n, reqs, index, flag, status);
    int r = PMPI_Testany(n, reqs, index, flag, status);
    if (*flag && *index != MPI_UNDEFINED) completed(c.before[*index], status);
    free_copies(&c, MPI_STATUSES_IGNORE);
    return r;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
    struct copies c;
    if (!recording() || !copy_requests(&c, n, reqs, statuses))
        return PMPI_Testsome(n, reqs, outcount, indices, statuses);
    int r = PMPI_Testsome(n, reqs, outcount, indices, c.st);
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        completed(c.before[indices[i]], &c.st[i]);
    free_copies(&c, statuses);
    return r;
}

/* Collectives. Bytes are what this rank contributes, computed from arguments that are
 * significant on it whatever MPI_IN_PLACE says (docs/mpi.md lists them per operation). */
int MPI_Barrier(MPI_Comm comm) {
    coll_begin("barrier", 0, -1, comm);
    int r = PMPI_Barrier(comm);
    coll_end("barrier");
    return r;
}

int MPI_Bcast(void *b, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    coll_begin("bcast", bytes_of(count, type), root, comm);
    int r = PMPI_Bcast(b, count, type, root, comm);
    coll_end("bcast");
    return r;
}

int MPI_Reduce(const void *s, void *d, int count, MPI_Datatype type, MPI_Op o, int root,
               MPI_Comm comm) {
    coll_begin("reduce", bytes_of(count, type), root, comm);
    int r = PMPI_Reduce(s, d, count, type, o, root, comm);
    coll_end("reduce");
    return r;
}

int MPI_Allreduce(const void *s, void *d, int count, MPI_Datatype type, MPI_Op o,
                  MPI_Comm comm) {
    coll_begin("allreduce", bytes_of(count, type), -1, comm);
    int r = PMPI_Allreduce(s, d, count, type, o, comm);
    coll_end("allreduce");
    return r;
}

int MPI_Scan(const void *s, void *d, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
    coll_begin("scan", bytes_of(count, type), -1, comm);
    int r = PMPI_Scan(s, d, count, type, o, comm);
    coll_end("scan");
    return r;
}

int MPI_Exscan(const void *s, void *d, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
    coll_begin("exscan", bytes_of(count, type), -1, comm);
    int r = PMPI_Exscan(s, d, count, type, o, comm);
    coll_end("exscan");
    return r;
}

int MPI_Reduce_scatter(const void *s, void *d, const int counts[], MPI_Datatype type, MPI_Op o,
                       MPI_Comm comm) {
    long long bytes = recording() ? sum_of(counts, size_of(comm)) * bytes_of(1, type) : 0;
    coll_begin("reduce_scatter", bytes, -1, comm);
    int r = PMPI_Reduce_scatter(s, d, counts, type, o, comm);
    coll_end("reduce_scatter");
    return r;
}

int MPI_Reduce_scatter_block(const void *s, void *d, int count, MPI_Datatype type, MPI_Op o,
                             MPI_Comm comm) {
    long long bytes = recording() ? bytes_of(count, type) * size_of(comm) : 0;
    coll_begin("reduce_scatter_block", bytes, -1, comm);
    int r = PMPI_Reduce_scatter_block(s, d, count, type, o, comm);
    coll_end("reduce_scatter_block");
    return r;
}

/* Every rank sends `scount` to each: what it receives is as many bytes. */
int MPI_Alltoall(const void *s, int scount, MPI_Datatype stype, void *d, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
    long long bytes = recording() ? bytes_of(rcount, rtype) * size_of(comm) : 0;
    coll_begin("alltoall", bytes, -1, comm);
    int r = PMPI_Alltoall(s, scount, stype, d, rcount, rtype, comm);
    coll_end("alltoall");
    return r;
}

int MPI_Alltoallv(const void *s, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *d, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm) {
    long long bytes = 0;
    if (recording())
        bytes = s == MPI_IN_PLACE ? sum_of(rcounts, size_of(comm)) * bytes_of(1, rtype)
                                  : sum_of(scounts, size_of(comm)) * bytes_of(1, stype);
    coll_begin("alltoallv", bytes, -1, comm);
    int r = PMPI_Alltoallv(s, scounts, sdispls, stype, d, rcounts, rdispls, rtype, comm);
    coll_end("alltoallv");
    return r;
}

/* Gathers: a rank's contribution is its send buffer; the root's, its own part of the receive
 * buffer (which MPI_IN_PLACE leaves significant). */
int MPI_Gather(const void *s, int scount, MPI_Datatype stype, void *d, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
    long long bytes = 0;
    if (recording())
        bytes = rank_in(comm) == root ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
    coll_begin("gather", bytes, root, comm);
    int r = PMPI_Gather(s, scount, stype, d, rcount, rtype, root, comm);
    coll_end("gather");
    return r;
}

int MPI_Gatherv(const void *s, int scount, MPI_Datatype stype, void *d, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
    long long bytes = 0;
    if (recording())
        bytes = rank_in(comm) == root ? bytes_of(rcounts[root], rtype) : bytes_of(scount, stype);
    coll_begin("gatherv", bytes, root, comm);
    int r = PMPI_Gatherv(s, scount, stype, d, rcounts, displs, rtype, root, comm);
    coll_end("gatherv");
    return r;
}

int MPI_Allgather(const void *s, int scount, MPI_Datatype stype, void *d, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
    coll_begin("allgather", recording() ? bytes_of(rcount, rtype) : 0, -1, comm);
    int r = PMPI_Allgather(s, scount, stype, d, rcount, rtype, comm);
    coll_end("allgather");
    return r;
}

int MPI_Allgatherv(const void *s, int scount, MPI_Datatype stype, void *d, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
    long long bytes = recording() ? bytes_of(rcounts[rank_in(comm)], rtype) : 0;
    coll_begin("allgatherv", bytes, -1, comm);
    int r = PMPI_Allgatherv(s, scount, stype, d, rcounts, displs, rtype, comm);
    coll_end("allgatherv");
    return r;
}

/* Scatters: a rank's share of the root's buffer (the root's: its own part of it). */
int MPI_Scatter(const void *s, int scount, MPI_Datatype stype, void *d, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
    long long bytes = 0;
    if (recording())
        bytes = rank_in(comm) == root ? bytes_of(scount, stype) : bytes_of(rcount, rtype);
    coll_begin("scatter", bytes, root, comm);
    int r = PMPI_Scatter(s, scount, stype, d, rcount, rtype, root, comm);
    coll_end("scatter");
    return r;
}

int MPI_Scatterv(const void *s, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *d, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
    long long bytes = 0;
    if (recording())
        bytes = rank_in(comm) == root ? bytes_of(scounts[root], stype) : bytes_of(rcount, rtype);
    coll_begin("scatterv", bytes, root, comm);
    int r = PMPI_Scatterv(s, scounts, displs, stype, d, rcount, rtype, root, comm);
    coll_end("scatterv");
    return r;
}

/* Fortran. Open MPI's `mpif.h` and `use mpi` bindings (libmpi_mpifh) call the C PMPI_*
 * functions directly, so a Fortran program's calls would bypass the C entry points above: the
 * entry points below record them the same way and then call the binding's own pmpi_*_ (which
 * converts MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE and the error code as it would have).
 * Those are weak references, resolved against the program's libmpi_mpifh when it has one, so
 * that the tracer links without it. Each has gfortran's name (mpi_send_) and the other two
 * usual manglings (mpi_send__, MPI_SEND). `use mpi_f08` calls other functions (mpi_send_f08_),
 * not traced. */
typedef MPI_Fint F;

#ifdef MPI_F_STATUS_SIZE
#define F_STATUS_SIZE MPI_F_STATUS_SIZE
#else
#define F_STATUS_SIZE ((sizeof(MPI_Status) + sizeof(F) - 1) / sizeof(F))
#endif

#define FORTRAN_ALIASES(lower, UPPER)                                                        \
    __typeof__(lower##_) lower##__ __attribute__((alias(#lower "_")));                      \
    __typeof__(lower##_) UPPER __attribute__((alias(#lower "_")));

/* A Fortran status as a C one. */
static void status_of(const F *f, MPI_Status *c) { MPI_Status_f2c(f, c); }

extern void pmpi_init_(F *) __attribute__((weak));
void mpi_init_(F *ierr) {
    pmpi_init_(ierr);
    begin_trace(MPI_THREAD_SINGLE);
}
FORTRAN_ALIASES(mpi_init, MPI_INIT)

extern void pmpi_init_thread_(F *, F *, F *) __attribute__((weak));
void mpi_init_thread_(F *required, F *provided, F *ierr) {
    pmpi_init_thread_(required, provided, ierr);
    begin_trace(*provided);
}
FORTRAN_ALIASES(mpi_init_thread, MPI_INIT_THREAD)

extern void pmpi_finalize_(F *) __attribute__((weak));
void mpi_finalize_(F *ierr) {
    end_trace();
    pmpi_finalize_(ierr);
}
FORTRAN_ALIASES(mpi_finalize, MPI_FINALIZE)

#define FORTRAN_BLOCKING_SEND(lower, UPPER)                                                   \
    extern void p##lower##_(const void *, F *, F *, F *, F *, F *, F *) __attribute__((weak)); \
    void lower##_(const void *b, F *count, F *type, F *dest, F *tag, F *comm, F *ierr) {     \
        send_begin(*count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));            \
        p##lower##_(b, count, type, dest, tag, comm, ierr);                                   \
        blocking_end("send");                                                                 \
    }                                                                                         \
    FORTRAN_ALIASES(lower, UPPER)
FORTRAN_BLOCKING_SEND(mpi_send, MPI_SEND)
FORTRAN_BLOCKING_SEND(mpi_ssend, MPI_SSEND)

extern void pmpi_recv_(void *, F *, F *, F *, F *, F *, F *, F *) __attribute__((weak));
void mpi_recv_(void *b, F *count, F *type, F *source, F *tag, F *comm, F *status, F *ierr) {
    F local[F_STATUS_SIZE];
    if (status == MPI_F_STATUS_IGNORE) status = local;
    recv_begin();
    pmpi_recv_(b, count, type, source, tag, comm, status, ierr);
    MPI_Status st;
    status_of(status, &st);
    received(&st, MPI_Type_f2c(*type), MPI_Comm_f2c(*comm));
    blocking_end("recv");
}
FORTRAN_ALIASES(mpi_recv, MPI_RECV)

extern void pmpi_sendrecv_(const void *, F *, F *, F *, F *, void *, F *, F *, F *, F *, F *, F *,
                           F *) __attribute__((weak));
void mpi_sendrecv_(const void *sb, F *scount, F *stype, F *dest, F *stag, void *rb, F *rcount,
                   F *rtype, F *source, F *rtag, F *comm, F *status, F *ierr) {
    F local[F_STATUS_SIZE];
    if (status == MPI_F_STATUS_IGNORE) status = local;
    MPI_Comm c = MPI_Comm_f2c(*comm);
    call_begin();
    sent(*scount, MPI_Type_f2c(*stype), *dest, *stag, c);
    wait_begin("recv", NULL);
    pmpi_sendrecv_(sb, scount, stype, dest, stag, rb, rcount, rtype, source, rtag, comm, status,
                   ierr);
    MPI_Status st;
    status_of(status, &st);
    received(&st, MPI_Type_f2c(*rtype), c);
    blocking_end("recv");
}
FORTRAN_ALIASES(mpi_sendrecv, MPI_SENDRECV)

extern void pmpi_isend_(const void *, F *, F *, F *, F *, F *, F *, F *) __attribute__((weak));
void mpi_isend_(const void *b, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr) {
    sent(*count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));
    pmpi_isend_(b, count, type, dest, tag, comm, req, ierr);
    new_send_request(MPI_Request_f2c(*req));
}
FORTRAN_ALIASES(mpi_isend, MPI_ISEND)

extern void pmpi_irecv_(void *, F *, F *, F *, F *, F *, F *, F *) __attribute__((weak));
void mpi_irecv_(void *b, F *count, F *type, F *source, F *tag, F *comm, F *req, F *ierr) {
    pmpi_irecv_(b, count, type, source, tag, comm, req, ierr);
    remember_recv(MPI_Request_f2c(*req), MPI_Type_f2c(*type), MPI_Comm_f2c(*comm));
}
FORTRAN_ALIASES(mpi_irecv, MPI_IRECV)

extern void pmpi_wait_(F *, F *, F *) __attribute__((weak));
void mpi_wait_(F *req, F *status, F *ierr) {
    F local[F_STATUS_SIZE];
    if (status == MPI_F_STATUS_IGNORE) status = local;
    MPI_Request before = MPI_Request_f2c(*req);
    recv_begin();
    pmpi_wait_(req, status, ierr);
    MPI_Status st;
    status_of(status, &st);
    completed(before, &st);
    blocking_end("recv");
}
FORTRAN_ALIASES(mpi_wait, MPI_WAIT)

extern void pmpi_waitall_(F *, F *, F *, F *) __attribute__((weak));
void mpi_waitall_(F *n, F *reqs, F *statuses, F *ierr) {
    size_t k = *n > 0 ? (size_t)*n : 1;
    MPI_Request *before = recording() ? malloc(k * sizeof *before) : NULL;
    F *local = statuses == MPI_F_STATUSES_IGNORE ? malloc(k * F_STATUS_SIZE * sizeof *local)
                                                 : statuses;
    if (!before || !local) {
        free(before);
        if (local != statuses) free(local);
        pmpi_waitall_(n, reqs, statuses, ierr);
        return;
    }
    for (int i = 0; i < *n; i++) before[i] = MPI_Request_f2c(reqs[i]);
    recv_begin();
    pmpi_waitall_(n, reqs, local, ierr);
    for (int i = 0; i < *n; i++) {
        MPI_Status st;
        status_of(&local[(size_t)i * F_STATUS_SIZE], &st);
        completed(before[i], &st);
    }
    blocking_end("recv");
    free(before);
    if (local != statuses) free(local);
}
FORTRAN_ALIASES(mpi_waitall, MPI_WAITALL)

extern void pmpi_barrier_(F *, F *) __attribute__((weak));
void mpi_barrier_(F *comm, F *ierr) {
    coll_begin("barrier", 0, -1, MPI_Comm_f2c(*comm));
    pmpi_barrier_(comm, ierr);
    coll_end("barrier");
}
FORTRAN_ALIASES(mpi_barrier, MPI_BARRIER)

extern void pmpi_bcast_(void *, F *, F *, F *, F *, F *) __attribute__((weak));
void mpi_bcast_(void *b, F *count, F *type, F *root, F *comm, F *ierr) {
    coll_begin("bcast", bytes_of(*count, MPI_Type_f2c(*type)), *root, MPI_Comm_f2c(*comm));
    pmpi_bcast_(b, count, type, root, comm, ierr);
    coll_end("bcast");
}
FORTRAN_ALIASES(mpi_bcast, MPI_BCAST)

extern void pmpi_reduce_(const void *, void *, F *, F *, F *, F *, F *, F *) __attribute__((weak));
void mpi_reduce_(const void *s, void *d, F *count, F *type, F *op, F *root, F *comm, F *ierr) {
    coll_begin("reduce", bytes_of(*count, MPI_Type_f2c(*type)), *root, MPI_Comm_f2c(*comm));
    pmpi_reduce_(s, d, count, type, op, root, comm, ierr);
    coll_end("reduce");
}
FORTRAN_ALIASES(mpi_reduce, MPI_REDUCE)

extern void pmpi_allreduce_(const void *, void *, F *, F *, F *, F *, F *) __attribute__((weak));
void mpi_allreduce_(const void *s, void *d, F *count, F *type, F *op, F *comm, F *ierr) {
    coll_begin("allreduce", bytes_of(*count, MPI_Type_f2c(*type)), -1, MPI_Comm_f2c(*comm));
    pmpi_allreduce_(s, d, count, type, op, comm, ierr);
    coll_end("allreduce");
}
FORTRAN_ALIASES(mpi_allreduce, MPI_ALLREDUCE)

extern void pmpi_alltoall_(const void *, F *, F *, void *, F *, F *, F *, F *)
    __attribute__((weak));
void mpi_alltoall_(const void *s, F *scount, F *stype, void *d, F *rcount, F *rtype, F *comm,
                   F *ierr) {
    MPI_Comm c = MPI_Comm_f2c(*comm);
    long long bytes = recording() ? bytes_of(*rcount, MPI_Type_f2c(*rtype)) * size_of(c) : 0;
    coll_begin("alltoall", bytes, -1, c);
    pmpi_alltoall_(s, scount, stype, d, rcount, rtype, comm, ierr);
    coll_end("alltoall");
}
FORTRAN_ALIASES(mpi_alltoall, MPI_ALLTOALL)

extern void pmpi_allgather_(const void *, F *, F *, void *, F *, F *, F *, F *)
    __attribute__((weak));
void mpi_allgather_(const void *s, F *scount, F *stype, void *d, F *rcount, F *rtype, F *comm,
                    F *ierr) {
    MPI_Comm c = MPI_Comm_f2c(*comm);
    coll_begin("allgather", recording() ? bytes_of(*rcount, MPI_Type_f2c(*rtype)) : 0, -1, c);
    pmpi_allgather_(s, scount, stype, d, rcount, rtype, comm, ierr);
    coll_end("allgather");
}
FORTRAN_ALIASES(mpi_allgather, MPI_ALLGATHER)

/* Gather and scatter: the same bytes as their C forms. */
#define FORTRAN_ROOTED(lower, UPPER, op, root_count, root_type, count, type)                  \
    extern void p##lower##_(const void *, F *, F *, void *, F *, F *, F *, F *, F *)          \
        __attribute__((weak));                                                                \
    void lower##_(const void *s, F *scount, F *stype, void *d, F *rcount, F *rtype, F *root, \
                  F *comm, F *ierr) {                                                         \
        MPI_Comm c = MPI_Comm_f2c(*comm);                                                     \
        long long bytes = 0;                                                                  \
        if (recording())                                                                      \
            bytes = rank_in(c) == *root ? bytes_of(*root_count, MPI_Type_f2c(*root_type))     \
                                        : bytes_of(*count, MPI_Type_f2c(*type));              \
        coll_begin(op, bytes, *root, c);                                                      \
        p##lower##_(s, scount, stype, d, rcount, rtype, root, comm, ierr);                    \
        coll_end(op);                                                                         \
    }                                                                                         \
    FORTRAN_ALIASES(lower, UPPER)
FORTRAN_ROOTED(mpi_gather, MPI_GATHER, "gather", rcount, rtype, scount, stype)
FORTRAN_ROOTED(mpi_scatter, MPI_SCATTER, "scatter", scount, stype, rcount, rtype)
