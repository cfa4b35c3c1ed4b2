/* hybrid: MPI + OpenMP, MPI_THREAD_FUNNELED (only the master thread calls MPI), with a known
 * split of CPU work, a known OpenMP imbalance and a known MPI wait: what `pp run -- mpirun`
 * records of a hybrid program (docs/mpi.md, "Hybrid MPI + OpenMP"). Build it with clang's
 * OpenMP (LLVM's libomp, which has the tools interface): `make -C examples/mpi` does
 * (OMPI_CC=clang mpicc -fopenmp). In each of K repeats, on every rank:
 *
 *   1. a parallel region of T threads (OMP_NUM_THREADS): every thread burns W ms of its CPU,
 *      the last one W+E ms; the others wait E ms at the region's barrier (pp's li);
 *   2. serial, on the master thread: every rank but 0 burns L ms, then sends rank 0 an 8-byte
 *      message; rank 0 receives them, waiting about L ms (the late sender: sl). The other
 *      threads have no work meanwhile (ip).
 *
 * So over the run, with R ranks: CPU work R*(T*W + E) + (R-1)*L per repeat, li (T-1)*E per
 * rank and repeat, sl about L per repeat on rank 0's master. Rank 0 prints the CPU time every
 * thread burned, in ms, per rank and thread, from which the test computes pc.
 *
 *   mpirun -np 2 -x OMP_NUM_THREADS=2 hybrid [--ms W] [--extra E] [--late L] [--repeats K]
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *usage =
    "usage: mpirun -np R hybrid [--ms W] [--extra E] [--late L] [--repeats K]\n"
    "  Each repeat: T OpenMP threads (OMP_NUM_THREADS) burn W ms, the last W+E ms; then\n"
    "  ranks 1.. burn L ms and send to rank 0, which waits. Defaults: --ms 40 --extra 20\n"
    "  --late 30 --repeats 5. Rank 0 prints the CPU ms each thread of each rank burned.\n";

/* The parallel part: `burned[t]` gets the CPU ns thread t burned. A function of its own
 * (not inlined), so that pp names the region after it. */
__attribute__((noinline)) static void compute(double ms, double extra, double *burned) {
#pragma omp parallel
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        double want = ms + (t == n - 1 ? extra : 0);
        burned[t] += (double)burn_ns((int64_t)(want * 1e6));
    }
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double ms = 40, extra = 20, late = 30;
    long repeats = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0) fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        }
        if (i + 1 >= argc) usage_error("hybrid", "%s: unknown or missing its value (try --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--ms"))
            ms = parse_double("hybrid", a, v, 0, 1e6);
        else if (!strcmp(a, "--extra"))
            extra = parse_double("hybrid", a, v, 0, 1e6);
        else if (!strcmp(a, "--late"))
            late = parse_double("hybrid", a, v, 0, 1e6);
        else if (!strcmp(a, "--repeats") || !strcmp(a, "-r"))
            repeats = parse_long("hybrid", a, v, 1, 1000000);
        else
            usage_error("hybrid", "%s: unknown argument (try --help)", a);
    }
    if (provided < MPI_THREAD_FUNNELED) usage_error("hybrid", "MPI does not provide MPI_THREAD_FUNNELED");
    int threads = omp_get_max_threads();
    double *burned = calloc((size_t)threads, sizeof *burned);
    if (!burned) {
        fprintf(stderr, "hybrid: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long k = 0; k < repeats; k++) {
        compute(ms, extra, burned);
        char message[8] = {0};
        if (rank > 0) {
            burned[0] += (double)burn_ns((int64_t)(late * 1e6));
            MPI_Send(message, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        } else {
            for (int r = 1; r < size; r++)
                MPI_Recv(message, 8, MPI_CHAR, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    /* Rank 0 gathers and prints what every thread burned. */
    double *all = rank == 0 ? calloc((size_t)size * threads, sizeof *all) : NULL;
    MPI_Gather(burned, threads, MPI_DOUBLE, all, threads, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# rank thread cpu_ms\n");
        for (int r = 0; r < size; r++)
            for (int t = 0; t < threads; t++) printf("%d %d %.3f\n", r, t, all[r * threads + t] / 1e6);
        free(all);
    }
    free(burned);
    MPI_Finalize();
    return 0;
}
