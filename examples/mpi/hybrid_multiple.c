/* hybrid_multiple: MPI + OpenMP with MPI_THREAD_MULTIPLE: every OpenMP thread calls MPI
 * (docs/mpi.md, "Hybrid MPI + OpenMP"). Build it as hybrid.c (clang's OpenMP). In each of K
 * repeats, inside one parallel region of T threads (OMP_NUM_THREADS) on every rank, thread t:
 *
 *   - on ranks 1..: burns W + L ms of its CPU, then sends rank 0 an 8-byte message, tag t;
 *   - on rank 0: burns W ms, then receives from each other rank the message of tag t,
 *     waiting about L ms for the first (the late sender: sl on every thread of rank 0).
 *
 * So each of rank 0's threads waits about L ms per repeat in MPI_Recv, and every message is
 * received by the thread with the sender's thread number. Rank 0 prints each of its
 * threads' receive waits (MPI_Wtime), in ms, summed over the repeats.
 *
 *   mpirun -np 2 -x OMP_NUM_THREADS=2 hybrid_multiple [--ms W] [--late L] [--repeats K]
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *usage =
    "usage: mpirun -np R hybrid_multiple [--ms W] [--late L] [--repeats K]\n"
    "  Each repeat, every OpenMP thread t (OMP_NUM_THREADS) burns W ms; on ranks 1.. it burns\n"
    "  L ms more and sends rank 0 a message of tag t, which rank 0's thread t receives.\n"
    "  Defaults: --ms 20 --late 30 --repeats 5. Rank 0 prints each thread's receive wait.\n";

/* The repeats' parallel region; `waited[t]`: thread t's receive waits, s. */
__attribute__((noinline)) static void exchange(int rank, int size, double ms, double late,
                                               double *waited) {
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        char message[8] = {0};
        if (rank > 0) {
            burn_ns((int64_t)((ms + late) * 1e6));
            MPI_Send(message, 8, MPI_CHAR, 0, t, MPI_COMM_WORLD);
        } else {
            burn_ns((int64_t)(ms * 1e6));
            double start = MPI_Wtime();
            for (int r = 1; r < size; r++)
                MPI_Recv(message, 8, MPI_CHAR, r, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            waited[t] += MPI_Wtime() - start;
        }
    }
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double ms = 20, late = 30;
    long repeats = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0) fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        }
        if (i + 1 >= argc)
            usage_error("hybrid_multiple", "%s: unknown or missing its value (try --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--ms"))
            ms = parse_double("hybrid_multiple", a, v, 0, 1e6);
        else if (!strcmp(a, "--late"))
            late = parse_double("hybrid_multiple", a, v, 0, 1e6);
        else if (!strcmp(a, "--repeats") || !strcmp(a, "-r"))
            repeats = parse_long("hybrid_multiple", a, v, 1, 1000000);
        else
            usage_error("hybrid_multiple", "%s: unknown argument (try --help)", a);
    }
    if (provided < MPI_THREAD_MULTIPLE)
        usage_error("hybrid_multiple", "MPI does not provide MPI_THREAD_MULTIPLE (it gave %d)", provided);
    int threads = omp_get_max_threads();
    double *waited = calloc((size_t)threads, sizeof *waited);
    if (!waited) {
        fprintf(stderr, "hybrid_multiple: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long k = 0; k < repeats; k++) exchange(rank, size, ms, late, waited);
    if (rank == 0) {
        printf("# thread recv_wait_ms\n");
        for (int t = 0; t < threads; t++) printf("%d %.3f\n", t, waited[t] * 1e3);
    }
    free(waited);
    MPI_Finalize();
    return 0;
}
