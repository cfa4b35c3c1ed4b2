/* c_calls.c: the MPI tracer's C entry points (after tracer.c, compiled as one file with it;
 * see TRACER_C in ../mpi.rs): each records the call with tracer.c's helpers around the real
 * PMPI_* function. */

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
    freed(*req);
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
