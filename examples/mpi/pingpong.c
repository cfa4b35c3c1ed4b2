/* pingpong: the point-to-point half round trip by message size, the pattern of the later
 * `pp calibrate --mpi`. Ranks 0 and 1 bounce a message of each size (0 B, then 1 B to
 * --max bytes in powers of 4: 1, 4, 16, ..., 4 MiB by default) R times: rank 0 sends, rank 1
 * receives and sends it back, rank 0 receives. Rank 0 times every round trip alone with
 * MPI_Wtime and prints, per size, half the shortest one (the minimum of repeats: the ideal,
 * least disturbed transfer), half the median and the bandwidth of the minimum. After one
 * untimed round trip per size (warm-up). Other ranks only wait at the barriers. With one rank,
 * rank 0 is its own peer (a round trip is two MPI_Sendrecv to itself).
 *
 *   mpirun -np 2 pingpong [--repeats R] [--max BYTES]
 *
 * Output: a '#' header, then one line per size: bytes min_us median_us MB_per_s. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *usage =
    "usage: mpirun -np 2 pingpong [--repeats R] [--max BYTES]\n"
    "  Ranks 0 and 1 exchange messages of 0 B and 1 B..BYTES in powers of 4, R round trips\n"
    "  each; rank 0 prints the half round trip per size (minimum and median of the repeats).\n"
    "  Defaults: --repeats 200 --max 4194304 (4 MiB).\n";

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long repeats = 200, max = 4L << 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0) fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        }
        if (i + 1 >= argc) usage_error("pingpong", "%s: unknown or missing its value (try --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--repeats") || !strcmp(a, "-r"))
            repeats = parse_long("pingpong", a, v, 1, 100000000);
        else if (!strcmp(a, "--max"))
            max = parse_long("pingpong", a, v, 0, 1L << 30);
        else
            usage_error("pingpong", "%s: unknown argument (try --help)", a);
    }
    int peer = size > 1 ? 1 : 0;
    char *buf = malloc(max > 0 ? (size_t)max : 1), *back = malloc(max > 0 ? (size_t)max : 1);
    double *rtt = malloc(sizeof(double) * (size_t)repeats);
    if (!buf || !back || !rtt) {
        fprintf(stderr, "pingpong: out of memory (--max %ld)\n", max);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 1, max > 0 ? (size_t)max : 1);
    memset(back, 2, max > 0 ? (size_t)max : 1);
    if (rank == 0)
        printf("# pingpong: rank 0 <-> rank %d of %d, %ld repeats per size; half round trip = round trip / 2\n"
               "# bytes min_us median_us MB_per_s\n",
               peer, size, repeats);
    for (long bytes = 0; bytes <= max; bytes = bytes == 0 ? 1 : bytes * 4) {
        int count = (int)bytes;
        MPI_Barrier(MPI_COMM_WORLD);
        for (long r = -1; r < repeats; r++) { /* r = -1: the warm-up */
            if (rank == 0) {
                double t0 = MPI_Wtime();
                if (peer == 0) {
                    MPI_Sendrecv(buf, count, MPI_BYTE, 0, 1, back, count, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Sendrecv(back, count, MPI_BYTE, 0, 2, buf, count, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Send(buf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf, count, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
                double t = MPI_Wtime() - t0;
                if (r >= 0) rtt[r] = t;
            } else if (rank == 1) {
                MPI_Recv(buf, count, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, count, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
            }
        }
        if (rank == 0) {
            qsort(rtt, (size_t)repeats, sizeof(double), compare_double);
            double half_min = rtt[0] / 2, half_median = rtt[repeats / 2] / 2;
            double mb = half_min > 0 ? (double)bytes / half_min / 1e6 : 0;
            printf("%ld %.3f %.3f %.1f\n", bytes, 1e6 * half_min, 1e6 * half_median, mb);
            fflush(stdout);
        }
        if (max == 0) break;
    }
    free(buf);
    free(back);
    free(rtt);
    MPI_Finalize();
    return 0;
}
