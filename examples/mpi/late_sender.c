/* late_sender: the late sender of lost cycles analysis (pp's `sl`). In each of K repeats, all
 * ranks leave a barrier together; rank 0 then burns X ms of its CPU (a busy loop on its
 * thread's CPU clock, no sleep) and sends rank 1 an 8-byte message, while rank 1 posts the
 * matching MPI_Recv at once and waits about X ms for it: the receiver's wait is the sender's
 * lateness. Rank 1 times its MPI_Recv with MPI_Wtime; at the end it hands its waits to rank 0,
 * which prints one line per repeat: the CPU time rank 0 burned, the wall time that took
 * (longer on a loaded machine: wall >= CPU), and rank 1's wait. Other ranks only wait at the
 * barriers. With one rank, rank 0 is also the receiver (it sends to itself after the burn,
 * so it waits about 0).
 *
 *   mpirun -np 2 late_sender [--ms X] [--repeats K]
 *
 * Output: a '#' header, then per repeat: repeat burn_cpu_ms burn_wall_ms recv_wait_ms. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *usage =
    "usage: mpirun -np 2 late_sender [--ms X] [--repeats K]\n"
    "  Rank 0 burns X ms of CPU, then sends to rank 1, which waits for it in MPI_Recv; K times.\n"
    "  Prints per repeat the CPU rank 0 burned and rank 1's wait. Defaults: --ms 50 --repeats 5.\n";

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double ms = 50;
    long repeats = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0) fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        }
        if (i + 1 >= argc) usage_error("late_sender", "%s: unknown or missing its value (try --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--ms"))
            ms = parse_double("late_sender", a, v, 0, 1e7);
        else if (!strcmp(a, "--repeats") || !strcmp(a, "-r"))
            repeats = parse_long("late_sender", a, v, 1, 1000000);
        else
            usage_error("late_sender", "%s: unknown argument (try --help)", a);
    }
    int receiver = size > 1 ? 1 : 0;
    /* Per repeat: [0] the CPU rank 0 burned, [1] its wall time, [2] the receiver's wait, s. */
    double(*rows)[3] = calloc((size_t)repeats, sizeof *rows);
    double *waits = calloc((size_t)repeats, sizeof(double));
    if (!rows || !waits) {
        fprintf(stderr, "late_sender: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long r = 0; r < repeats; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            int64_t w0 = wall_ns();
            int64_t burned = burn_ms(ms);
            rows[r][0] = (double)burned / 1e9;
            rows[r][1] = (double)(wall_ns() - w0) / 1e9;
            if (receiver == 0) {
                int64_t got;
                double t0 = MPI_Wtime();
                MPI_Sendrecv(&burned, 1, MPI_INT64_T, 0, 7, &got, 1, MPI_INT64_T, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                waits[r] = MPI_Wtime() - t0;
            } else {
                MPI_Send(&burned, 1, MPI_INT64_T, receiver, 7, MPI_COMM_WORLD);
            }
        } else if (rank == receiver) {
            int64_t got;
            double t0 = MPI_Wtime();
            MPI_Recv(&got, 1, MPI_INT64_T, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            waits[r] = MPI_Wtime() - t0;
        }
    }
    if (receiver != 0) {
        if (rank == receiver) MPI_Send(waits, (int)repeats, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD);
        if (rank == 0) MPI_Recv(waits, (int)repeats, MPI_DOUBLE, receiver, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank == 0) {
        printf("# late_sender: rank 0 burns %.3f ms of CPU then sends; rank %d receives at once; %d ranks, %ld repeats\n"
               "# repeat burn_cpu_ms burn_wall_ms recv_wait_ms\n",
               ms, receiver, size, repeats);
        for (long r = 0; r < repeats; r++)
            printf("%ld %.3f %.3f %.3f\n", r, 1e3 * rows[r][0], 1e3 * rows[r][1], 1e3 * waits[r]);
    }
    free(rows);
    free(waits);
    MPI_Finalize();
    return 0;
}
