/* fortran_calls.c: the MPI tracer's Fortran entry points (after tracer.c and c_calls.c,
 * compiled as one file with them; see TRACER_C in ../mpi.rs). */

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
