/* pingpong.c: the MPI half round trip, measured for `pp calibrate --mpi` (docs/machine-file.md).
 *
 * Ranks 0 and 1 bounce a message of each size given on the command line; rank 0 prints, per
 * size, a line `sample <bytes> <ns> <ns> ...`: `reps` samples, each the time of `batch` round
 * trips divided by 2 * batch (so small messages are timed many at a time). The other ranks
 * (if any) only take part in the barriers. Timing is CLOCK_MONOTONIC. Built and run by pp:
 *
 *   mpicc -O2 pingpong.c -o pingpong
 *   mpirun -np 2 ./pingpong REPS BYTES...
 *
 * Output lines other than `sample` (and anything on stderr) are ignored by pp.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Round trips per sample: about 50 us of messages at least, never fewer than 2. */
static int batch_for(long bytes) {
    if (bytes <= 4096) return 200;
    if (bytes <= 65536) return 50;
    if (bytes <= 1048576) return 8;
    return 2;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || argc < 3) {
        if (rank == 0)
            fprintf(stderr, "pingpong: usage: mpirun -np 2 pingpong REPS BYTES... (got %d ranks)\n", size);
        MPI_Finalize();
        return 2;
    }
    int reps = atoi(argv[1]);
    long largest = 0;
    for (int a = 2; a < argc; a++) {
        long b = atol(argv[a]);
        if (b > largest) largest = b;
    }
    char *buf = malloc(largest > 0 ? largest : 1);
    if (!buf) {
        fprintf(stderr, "pingpong: cannot allocate %ld bytes\n", largest);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, rank, largest > 0 ? largest : 1);
    for (int a = 2; a < argc; a++) {
        long bytes = atol(argv[a]);
        int batch = batch_for(bytes);
        if (rank == 0) printf("sample %ld", bytes);
        /* One untimed batch to warm the path (connection set-up, page faults). */
        for (int r = -1; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now_ns();
            for (int k = 0; k < batch; k++) {
                if (rank == 0) {
                    MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
                }
            }
            double half = (now_ns() - t0) / (2.0 * batch);
            if (rank == 0 && r >= 0) printf(" %.1f", half);
        }
        if (rank == 0) {
            printf("\n");
            fflush(stdout);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
