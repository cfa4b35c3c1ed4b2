/* imbalance: load imbalance closed by a collective (pp's `li`). In each of K repeats, all
 * ranks leave a barrier together, rank r burns (r+1)*Y ms of its CPU (a busy loop on its
 * thread's CPU clock, no sleep), then all call MPI_Allreduce (the sum of what they burned):
 * rank r waits in it about (p-1-r)*Y ms for the last rank, rank 0 the longest, (p-1)*Y. Each
 * rank times its burn (CPU and wall) and its MPI_Allreduce (MPI_Wtime); rank 0 gathers them
 * and prints one line per repeat and rank.
 *
 *   mpirun -np 4 imbalance [--ms Y] [--repeats K]
 *
 * Output: a '#' header, then per repeat and rank: repeat rank burn_cpu_ms burn_wall_ms wait_ms. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *usage =
    "usage: mpirun -np 4 imbalance [--ms Y] [--repeats K]\n"
    "  Rank r burns (r+1)*Y ms of CPU, then all meet in MPI_Allreduce; K times. Prints per rank\n"
    "  the CPU it burned and its wait in the allreduce. Defaults: --ms 20 --repeats 5.\n";

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double ms = 20;
    long repeats = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0) fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        }
        if (i + 1 >= argc) usage_error("imbalance", "%s: unknown or missing its value (try --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--ms"))
            ms = parse_double("imbalance", a, v, 0, 1e6);
        else if (!strcmp(a, "--repeats") || !strcmp(a, "-r"))
            repeats = parse_long("imbalance", a, v, 1, 1000000);
        else
            usage_error("imbalance", "%s: unknown argument (try --help)", a);
    }
    /* Per repeat: burn CPU, burn wall, allreduce wait, s; rank 0 gathers every rank's. */
    double *mine = calloc((size_t)repeats * 3, sizeof(double));
    double *all = rank == 0 ? calloc((size_t)repeats * 3 * (size_t)size, sizeof(double)) : NULL;
    if (!mine || (rank == 0 && !all)) {
        fprintf(stderr, "imbalance: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double total = 0;
    for (long r = 0; r < repeats; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t w0 = wall_ns();
        double burned = (double)burn_ms((rank + 1) * ms) / 1e9;
        mine[3 * r] = burned;
        mine[3 * r + 1] = (double)(wall_ns() - w0) / 1e9;
        double t0 = MPI_Wtime();
        MPI_Allreduce(&burned, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        mine[3 * r + 2] = MPI_Wtime() - t0;
    }
    MPI_Gather(mine, (int)repeats * 3, MPI_DOUBLE, all, (int)repeats * 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# imbalance: rank r burns (r+1)*%.3f ms of CPU then MPI_Allreduce; %d ranks, %ld repeats "
               "(last repeat: %.3f ms burned in all)\n"
               "# repeat rank burn_cpu_ms burn_wall_ms wait_ms\n",
               ms, size, repeats, 1e3 * total);
        for (long r = 0; r < repeats; r++)
            for (int q = 0; q < size; q++) {
                const double *row = all + ((size_t)q * (size_t)repeats + (size_t)r) * 3;
                printf("%ld %d %.3f %.3f %.3f\n", r, q, 1e3 * row[0], 1e3 * row[1], 1e3 * row[2]);
            }
    }
    free(mine);
    free(all);
    MPI_Finalize();
    return 0;
}
