/* calls: one of each MPI call that pp's tracer records beyond the basic ones (docs/mpi.md),
 * on a ring: rank r sends to r+1 and receives from r-1 (mod p), a tag per step, so that a
 * test of the tracer knows what each rank's log must hold. In order, on every rank:
 *
 *   1-5   an MPI_Isend and an MPI_Irecv completed by MPI_Waitany, MPI_Waitsome, MPI_Testall,
 *         MPI_Testany, MPI_Testsome (each in a loop until both are done): 5 receives;
 *   6     persistent MPI_Send_init + MPI_Recv_init: 3 times MPI_Startall + MPI_Waitall, once
 *         MPI_Start each + MPI_Wait each, then MPI_Request_free: 4 receives;
 *   7     persistent MPI_Ssend_init + MPI_Recv_init, 2 times started and waited: 2 receives;
 *   8     MPI_Issend + MPI_Irecv + MPI_Waitall: 1;
 *   9     MPI_Bsend (an attached buffer) + MPI_Recv: 1;
 *   10    MPI_Irecv, MPI_Barrier, MPI_Rsend (its receive is posted), MPI_Wait: 1;
 *   11    MPI_Isend, MPI_Probe, MPI_Recv, MPI_Wait: 1;
 *   12    MPI_Irecv of a message nobody sends, MPI_Cancel, MPI_Wait: no receive;
 *   13    N MPI_Irecv and N MPI_Isend outstanding at once, one MPI_Waitall: N receives;
 *   14    MPI_Sendrecv_replace: 1;
 *   then, on MPI_INT (4 bytes), with the bytes the tracer records for rank r of p:
 *   MPI_Alltoallv, rank i getting i+1 ints from each rank (4*p(p+1)/2 bytes),
 *   MPI_Alltoallv in place, 2 ints between each pair (8p),
 *   MPI_Allgatherv, rank r giving r+1 ints (4(r+1)), MPI_Gatherv to rank 0 (4(r+1)),
 *   MPI_Scatterv from rank 0 (4(r+1)), MPI_Reduce_scatter, rank i getting i+1 ints
 *   (4*p(p+1)/2), MPI_Reduce_scatter_block of 2 ints each (8p), MPI_Scan and MPI_Exscan of
 *   3 ints (12).
 *
 * Meanwhile, when MPI provides MPI_THREAD_MULTIPLE (asked for by MPI_Init_thread), a second
 * thread of each rank makes 1000 MPI_Sendrecv on the ring and an MPI_Allreduce, on a duplicate
 * of MPI_COMM_WORLD: the tracer records only the thread that initialised MPI.
 *
 * So every rank's first thread receives 16 + N messages. Each rank counts what it received (a cancelled
 * receive is not counted), checks what the collectives computed, and rank 0 prints a line per
 * rank.
 *
 *   mpirun -np 4 calls [--many N]
 *
 * Output: '#' headers (one says whether the second thread ran), then per rank: rank received
 * (by its first thread). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *usage =
    "usage: mpirun -np 4 calls [--many N]\n"
    "  Each rank makes one of each MPI call pp's tracer records, on a ring, with N receives\n"
    "  outstanding at once in one step; prints what each rank received. Default: --many 5000.\n";

static int rank, size, right, left;
/* The messages this rank received. */
static long received;

/* Stops every rank when a result is wrong. */
static void check(int ok, const char *what) {
    if (ok) return;
    fprintf(stderr, "calls: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* An Isend to the right and an Irecv from the left with `tag`: reqs[0] receives. */
static void post(int *out, int *in, int tag, MPI_Request reqs[2]) {
    *out = rank;
    MPI_Irecv(in, 1, MPI_INT, left, tag, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, 1, MPI_INT, right, tag, MPI_COMM_WORLD, &reqs[1]);
}

/* The second thread: messages on its own communicator while the first thread makes its calls. */
static MPI_Comm second_comm;
static void *second_thread(void *unused) {
    (void)unused;
    int v = rank;
    for (int i = 0; i < 1000; i++)
        MPI_Sendrecv_replace(&v, 1, MPI_INT, right, 0, left, 0, second_comm, MPI_STATUS_IGNORE);
    int sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, second_comm);
    check(sum == size * (size - 1) / 2, "the second thread's allreduce");
    return NULL;
}

static void completion_calls(void) {
    int out, in, done, flag, index, n, indices[2];
    MPI_Request reqs[2];
    MPI_Status st[2];

    post(&out, &in, 1, reqs);
    for (done = 0; done < 2; done++) MPI_Waitany(2, reqs, &index, MPI_STATUS_IGNORE);
    post(&out, &in, 2, reqs);
    for (done = 0; done < 2; done += n) MPI_Waitsome(2, reqs, &n, indices, st);
    post(&out, &in, 3, reqs);
    do MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
    while (!flag);
    post(&out, &in, 4, reqs);
    for (done = 0; done < 2;) {
        MPI_Testany(2, reqs, &index, &flag, &st[0]);
        if (flag && index != MPI_UNDEFINED) done++;
    }
    post(&out, &in, 5, reqs);
    for (done = 0; done < 2; done += n) MPI_Testsome(2, reqs, &n, indices, MPI_STATUSES_IGNORE);
    check(in == left, "a message from the left");
    received += 5;
}

static void persistent_requests(void) {
    int out = rank, in = -1;
    MPI_Request reqs[2];
    MPI_Recv_init(&in, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &reqs[0]);
    MPI_Send_init(&out, 1, MPI_INT, right, 6, MPI_COMM_WORLD, &reqs[1]);
    for (int k = 0; k < 3; k++) {
        MPI_Startall(2, reqs);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    }
    MPI_Start(&reqs[0]);
    MPI_Start(&reqs[1]);
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    received += 4;

    MPI_Recv_init(&in, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &reqs[0]);
    MPI_Ssend_init(&out, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &reqs[1]);
    for (int k = 0; k < 2; k++) {
        MPI_Start(&reqs[0]);
        MPI_Start(&reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    check(in == left, "a persistent message from the left");
    received += 2;
}

static void send_modes(void) {
    int out = rank, in = -1, flag = 0;
    MPI_Request reqs[2];
    MPI_Status st;

    MPI_Irecv(&in, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &reqs[0]);
    MPI_Issend(&out, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    received++;

    int bytes = (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    void *attached = malloc((size_t)bytes);
    check(attached != NULL, "out of memory");
    MPI_Buffer_attach(attached, bytes);
    MPI_Bsend(&out, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
    MPI_Recv(&in, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Buffer_detach(&attached, &bytes);
    free(attached);
    received++;

    MPI_Irecv(&in, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &reqs[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(&out, 1, MPI_INT, right, 10, MPI_COMM_WORLD);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    received++;

    MPI_Isend(&out, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &reqs[1]);
    MPI_Probe(left, 11, MPI_COMM_WORLD, &st);
    MPI_Recv(&in, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    received++;

    MPI_Irecv(&in, 1, MPI_INT, left, 12, MPI_COMM_WORLD, &reqs[0]);
    MPI_Cancel(&reqs[0]);
    MPI_Wait(&reqs[0], &st);
    MPI_Test_cancelled(&st, &flag);
    check(flag, "the receive nobody sends to is cancelled");
}

/* N receives and N sends outstanding at once. */
static void many(long n) {
    MPI_Request *reqs = malloc((size_t)n * 2 * sizeof *reqs);
    int *in = malloc((size_t)n * sizeof *in), out = rank;
    check(reqs && in, "out of memory");
    for (long i = 0; i < n; i++) MPI_Irecv(&in[i], 1, MPI_INT, left, 13, MPI_COMM_WORLD, &reqs[i]);
    for (long i = 0; i < n; i++) MPI_Isend(&out, 1, MPI_INT, right, 13, MPI_COMM_WORLD, &reqs[n + i]);
    MPI_Waitall((int)(2 * n), reqs, MPI_STATUSES_IGNORE);
    for (long i = 0; i < n; i++) check(in[i] == left, "many messages from the left");
    received += n;
    free(reqs);
    free(in);

    int v = rank;
    MPI_Sendrecv_replace(&v, 1, MPI_INT, right, 14, left, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(v == left, "sendrecv_replace from the left");
    received++;
}

static void v_collectives(void) {
    int p = size, total = p * (p + 1) / 2;
    int *counts = malloc((size_t)p * sizeof(int)), *displs = malloc((size_t)p * sizeof(int));
    int *mine = malloc((size_t)p * sizeof(int)), *mine_displs = malloc((size_t)p * sizeof(int));
    int *a = malloc((size_t)(total + 2 * p) * sizeof(int)), *b = malloc((size_t)(total * p) * sizeof(int));
    check(counts && displs && mine && mine_displs && a && b, "out of memory");
    /* counts[i] = i+1 at displs[i]; mine[i] = rank+1 at i*(rank+1). */
    for (int i = 0, d = 0; i < p; d += ++i) {
        counts[i] = i + 1;
        displs[i] = d;
        mine[i] = rank + 1;
        mine_displs[i] = i * (rank + 1);
    }
    for (int i = 0; i < total; i++) a[i] = rank;

    MPI_Alltoallv(a, counts, displs, MPI_INT, b, mine, mine_displs, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < p * (rank + 1); i++) check(b[i] == i / (rank + 1), "alltoallv");

    int two[64], two_displs[64], pairs[128];
    check(p <= 64, "at most 64 ranks");
    for (int i = 0; i < p; i++) {
        two[i] = 2;
        two_displs[i] = 2 * i;
        pairs[2 * i] = pairs[2 * i + 1] = rank;
    }
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, pairs, two, two_displs, MPI_INT,
                  MPI_COMM_WORLD);
    for (int i = 0; i < 2 * p; i++) check(pairs[i] == i / 2, "alltoallv in place");

    MPI_Allgatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < p; i++) check(b[displs[i]] == i, "allgatherv");
    MPI_Gatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < p; i++) check(b[displs[i] + i] == i, "gatherv");
    for (int i = 0; i < p; i++) b[displs[i]] = i;
    MPI_Scatterv(b, counts, displs, MPI_INT, a, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    check(a[0] == rank, "scatterv");

    for (int i = 0; i < total + 2 * p; i++) a[i] = 1;
    MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(b[rank] == p, "reduce_scatter");
    MPI_Reduce_scatter_block(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(b[1] == p, "reduce_scatter_block");
    int three[3] = {rank, rank, rank}, sums[3] = {0, 0, 0};
    MPI_Scan(three, sums, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(sums[2] == rank * (rank + 1) / 2, "scan");
    MPI_Exscan(three, sums, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(rank == 0 || sums[2] == rank * (rank - 1) / 2, "exscan");
    free(counts);
    free(displs);
    free(mine);
    free(mine_displs);
    free(a);
    free(b);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = 5000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0) fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        }
        if (i + 1 >= argc) usage_error("calls", "%s: unknown or missing its value (try --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--many"))
            n = parse_long("calls", a, v, 1, 1000000);
        else
            usage_error("calls", "%s: unknown argument (try --help)", a);
    }
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    pthread_t second;
    int threads = provided == MPI_THREAD_MULTIPLE;
    if (threads) {
        MPI_Comm_dup(MPI_COMM_WORLD, &second_comm);
        check(pthread_create(&second, NULL, second_thread, NULL) == 0, "pthread_create");
    }
    completion_calls();
    persistent_requests();
    send_modes();
    many(n);
    v_collectives();
    if (threads) {
        pthread_join(second, NULL);
        MPI_Comm_free(&second_comm);
    }
    long *all = malloc((size_t)size * sizeof(long));
    check(all != NULL, "out of memory");
    MPI_Gather(&received, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# calls: %d ranks, %ld receives outstanding at once in one step\n"
               "# second thread: %s\n"
               "# rank received\n",
               size, n, threads ? "yes" : "no (no MPI_THREAD_MULTIPLE)");
        for (int q = 0; q < size; q++) printf("%d %ld\n", q, all[q]);
    }
    free(all);
    MPI_Finalize();
    return 0;
}
