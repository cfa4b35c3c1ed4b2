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
 * with its peer translated to a world rank and `comm=c<handle index>`.
 */
#define _GNU_SOURCE
#include <mpi.h>
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

/* Rank 0's clock minus this rank's, in ns, from the ping-pong of shortest round trip among
 * 16 (rank 0 answers each rank in turn with its time; the offset is that time minus the
 * middle of the round trip). Every rank takes part; rank 0's is 0. */
#define OFFSET_TAG 32766
static int64_t offset_to_rank0(void) {
    int64_t best = 0;
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
                if (b - a < best_rtt) {
                    best_rtt = b - a;
                    best = (int64_t)(t0 - (a + (b - a) / 2));
                }
            }
        }
    }
    return best;
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
    if (!tracing) return;
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
    if (dest == MPI_PROC_NULL) return;
    char name[32];
    comm_name(comm, name, sizeof name);
    emit(now(), "send %d %d %lld%s", world_of(comm, dest), tag, bytes_of(count, type), name);
}

static void received(MPI_Status *st, MPI_Datatype type, MPI_Comm comm) {
    if (st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0) return;
    int count = 0;
    PMPI_Get_count(st, type, &count);
    char name[32];
    comm_name(comm, name, sizeof name);
    emit(now(), "recv %d %d %lld%s", world_of(comm, st->MPI_SOURCE), st->MPI_TAG,
         bytes_of(count, type), name);
}

/* Receive requests: what a completing wait needs to record the receive. */
#define MAX_REQ 4096
static struct {
    MPI_Request req;
    MPI_Datatype type;
    MPI_Comm comm;
} recvs[MAX_REQ];

static void remember_recv(MPI_Request req, MPI_Datatype type, MPI_Comm comm) {
    for (int i = 0; i < MAX_REQ; i++)
        if (recvs[i].req == MPI_REQUEST_NULL) {
            recvs[i].req = req;
            recvs[i].type = type;
            recvs[i].comm = comm;
            return;
        }
}

/* Called with the request as it was before completion and its status after. */
static void completed(MPI_Request req, MPI_Status *st) {
    if (req == MPI_REQUEST_NULL) return;
    for (int i = 0; i < MAX_REQ; i++)
        if (recvs[i].req == req) {
            received(st, recvs[i].type, recvs[i].comm);
            recvs[i].req = MPI_REQUEST_NULL;
            return;
        }
}

/* After MPI_Init: opens the rank's log and starts its run. */
static void begin_trace(void) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    for (int i = 0; i < MAX_REQ; i++) recvs[i].req = MPI_REQUEST_NULL;
    const char *base = getenv("PP_MPI_LOG");
    if (!base || !*base) return;
    measuring = 1;
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

int MPI_Init(int *argc, char ***argv) {
    int r = PMPI_Init(argc, argv);
    begin_trace();
    return r;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int r = PMPI_Init_thread(argc, argv, required, provided);
    begin_trace();
    return r;
}

int MPI_Finalize(void) {
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
    return PMPI_Finalize();
}

int MPI_Send(const void *b, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    call_begin();
    sent(count, type, dest, tag, comm);
    wait_begin("send", NULL);
    int r = PMPI_Send(b, count, type, dest, tag, comm);
    wait_end("send", NULL);
    call_end();
    return r;
}

int MPI_Ssend(const void *b, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    call_begin();
    sent(count, type, dest, tag, comm);
    wait_begin("send", NULL);
    int r = PMPI_Ssend(b, count, type, dest, tag, comm);
    wait_end("send", NULL);
    call_end();
    return r;
}

int MPI_Recv(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    call_begin();
    wait_begin("recv", NULL);
    int r = PMPI_Recv(b, count, type, source, tag, comm, status);
    received(status, type, comm);
    wait_end("recv", NULL);
    call_end();
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
    wait_end("recv", NULL);
    call_end();
    return r;
}

int MPI_Isend(const void *b, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req) {
    sent(count, type, dest, tag, comm);
    return PMPI_Isend(b, count, type, dest, tag, comm, req);
}

int MPI_Irecv(void *b, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req) {
    int r = PMPI_Irecv(b, count, type, source, tag, comm, req);
    if (tracing) remember_recv(*req, type, comm);
    return r;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE) status = &local;
    MPI_Request before = *req;
    call_begin();
    wait_begin("recv", NULL);
    int r = PMPI_Wait(req, status);
    completed(before, status);
    wait_end("recv", NULL);
    call_end();
    return r;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    /* The requests before completion and, when the caller ignores them, the statuses: on the
       heap, since n may be large. */
    size_t k = n > 0 ? (size_t)n : 1;
    MPI_Request *before = malloc(k * sizeof *before);
    MPI_Status *local = statuses == MPI_STATUSES_IGNORE ? malloc(k * sizeof *local) : NULL;
    if (!before || (statuses == MPI_STATUSES_IGNORE && !local)) {
        free(before);
        free(local);
        return PMPI_Waitall(n, reqs, statuses);
    }
    if (local) statuses = local;
    for (int i = 0; i < n; i++) before[i] = reqs[i];
    call_begin();
    wait_begin("recv", NULL);
    int r = PMPI_Waitall(n, reqs, statuses);
    for (int i = 0; i < n; i++) completed(before[i], &statuses[i]);
    wait_end("recv", NULL);
    call_end();
    free(before);
    free(local);
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

/* Collectives: the operation, this rank's bytes, a barrier wait. */
#define COLLECTIVE(op, bytes, root, call)                                   \
    do {                                                                    \
        call_begin();                                                       \
        char name_[32];                                                     \
        comm_name(comm, name_, sizeof name_);                               \
        if ((root) >= 0)                                                    \
            emit(now(), "coll " op " %lld root=%d%s", (long long)(bytes),   \
                 world_of(comm, (root)), name_);                            \
        else                                                                \
            emit(now(), "coll " op " %lld%s", (long long)(bytes), name_);   \
        wait_begin("barrier", op);                                          \
        r = call;                                                           \
        wait_end("barrier", op);                                            \
        call_end();                                                         \
    } while (0)

int MPI_Barrier(MPI_Comm comm) {
    int r;
    COLLECTIVE("barrier", 0, -1, PMPI_Barrier(comm));
    return r;
}

int MPI_Bcast(void *b, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    int r;
    COLLECTIVE("bcast", bytes_of(count, type), root, PMPI_Bcast(b, count, type, root, comm));
    return r;
}

int MPI_Reduce(const void *s, void *d, int count, MPI_Datatype type, MPI_Op o, int root,
               MPI_Comm comm) {
    int r;
    COLLECTIVE("reduce", bytes_of(count, type), root,
               PMPI_Reduce(s, d, count, type, o, root, comm));
    return r;
}

int MPI_Allreduce(const void *s, void *d, int count, MPI_Datatype type, MPI_Op o,
                  MPI_Comm comm) {
    int r;
    COLLECTIVE("allreduce", bytes_of(count, type), -1,
               PMPI_Allreduce(s, d, count, type, o, comm));
    return r;
}

int MPI_Alltoall(const void *s, int scount, MPI_Datatype stype, void *d, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
    int r, size;
    PMPI_Comm_size(comm, &size);
    COLLECTIVE("alltoall", bytes_of(scount, stype) * size, -1,
               PMPI_Alltoall(s, scount, stype, d, rcount, rtype, comm));
    return r;
}

int MPI_Gather(const void *s, int scount, MPI_Datatype stype, void *d, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
    int r;
    COLLECTIVE("gather", bytes_of(scount, stype), root,
               PMPI_Gather(s, scount, stype, d, rcount, rtype, root, comm));
    return r;
}

int MPI_Scatter(const void *s, int scount, MPI_Datatype stype, void *d, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
    int r;
    COLLECTIVE("scatter", bytes_of(rcount, rtype), root,
               PMPI_Scatter(s, scount, stype, d, rcount, rtype, root, comm));
    return r;
}

int MPI_Allgather(const void *s, int scount, MPI_Datatype stype, void *d, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
    int r;
    COLLECTIVE("allgather", bytes_of(scount, stype), -1,
               PMPI_Allgather(s, scount, stype, d, rcount, rtype, comm));
    return r;
}
