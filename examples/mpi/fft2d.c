/* fft2d: the 2D FFT of the paper (Crovella & LeBlanc, lost cycles analysis) with MPI, its data
 * parallel form over ranks. The same computation, input, command line and checksum as the
 * Rust workload (workloads/fft2d, `lca workload fft2d`) and the OpenMP example
 * (examples/openmp/fft2d.c): every iteration k transforms the n x n complex matrix X_k(i, j)
 * (a hash of i, j, k) into Y_k = FFT2(X_k), for --iters matrices one after the other; the
 * checksum is the sum of the magnitudes of the last Y.
 *
 *   mpirun -np P fft2d [-n N] [--iters K] [--transpose alltoall|p2p] [--check]
 *
 * The n lines of the matrix are distributed over the P ranks in blocks of n/P (n must be
 * divisible by P). Every iteration, as the OpenMP dp's five loops:
 *   init     each rank computes its lines of X_k column-major (line j holds column j);
 *   columns  the 1-D FFT of each of its lines (the column FFTs, local);
 *   transpose by MPI_Alltoall: rank r sends rank d the entries d*n/P..(d+1)*n/P-1 of each of
 *            its lines (n/P x n/P complex numbers), then reorders what it received so that
 *            its lines are rows r*n/P..(r+1)*n/P-1 of the matrix (the communication); with
 *            --transpose p2p the same blocks go as point-to-point messages (MPI_Irecv and
 *            MPI_Isend with every other rank, then MPI_Waitall), which a trace records one
 *            message at a time (a what-if replay can move each onto another network);
 *   rows     the 1-D FFT of each of its lines, now rows: its block of Y_k, row-major.
 * After the last iteration rank 0 gathers Y (MPI_Gather) and prints the time and the checksum,
 * summed in the order of the OpenMP example's dp (row-major).
 *
 * --check compares the last Y with a direct (O(n^3)) 2D DFT on rank 0 and exits 1 on a
 * mismatch. n must be a power of two (an iterative radix-2 FFT). */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "../openmp/fft.h" /* the input and the 1-D FFT, shared with the other fft2d.c */

/* The largest relative error --check accepts, as the Rust workload's. */
#define TOLERANCE 1e-10
#define MAX_N 8192
/* The most ranks --transpose p2p takes (its requests are on the stack). */
#define MAX_RANKS 1024

static int iters;
/* --transpose p2p: point-to-point messages instead of MPI_Alltoall. */
static int p2p;

/* ---- one iteration's phases on this rank's m = n/P lines, lines lo..lo+m-1 ---- */

/* Line l of `lines` is column lo+l of X_k. */
static void init_columns(cplx *lines, int lo, int m, int k) {
    for (int l = 0; l < m; l++)
        for (int i = 0; i < n; i++) lines[(size_t)l * n + i] = input(i, lo + l, k);
}

static void fft_lines(cplx *lines, int m) {
    for (int l = 0; l < m; l++) fft_line(lines + (size_t)l * n);
}

/* The transpose of the distributed matrix: `lines` (columns lo.. of the matrix) become its rows
 * lo..; `pack` and `unpack` are n*m scratch. */
static void transpose(cplx *lines, cplx *pack, cplx *unpack, int m, int ranks) {
    /* pack[d][l][e] = lines[l][d*m + e]: the block for rank d, row-major by my line. */
    for (int d = 0; d < ranks; d++)
        for (int l = 0; l < m; l++)
            memcpy(pack + ((size_t)d * m + l) * m, lines + (size_t)l * n + (size_t)d * m, sizeof(cplx) * m);
    if (p2p) {
        /* One block to and from every other rank; my own block is copied. */
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Request requests[2 * MAX_RANKS];
        int count = 0;
        size_t block = (size_t)m * m;
        for (int d = 0; d < ranks; d++)
            if (d != rank)
                MPI_Irecv(unpack + d * block, 2 * m * m, MPI_DOUBLE, d, 0, MPI_COMM_WORLD, &requests[count++]);
        for (int d = 0; d < ranks; d++)
            if (d != rank)
                MPI_Isend(pack + d * block, 2 * m * m, MPI_DOUBLE, d, 0, MPI_COMM_WORLD, &requests[count++]);
        memcpy(unpack + rank * block, pack + rank * block, sizeof(cplx) * block);
        MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
    } else {
        MPI_Alltoall(pack, 2 * m * m, MPI_DOUBLE, unpack, 2 * m * m, MPI_DOUBLE, MPI_COMM_WORLD);
    }
    /* unpack[s][l][e]: rank s's line s*m+l (column s*m+l), entry my_lo+e (row my_lo+e):
     * row e of mine, column s*m+l. */
    for (int s = 0; s < ranks; s++)
        for (int l = 0; l < m; l++) {
            const cplx *from = unpack + ((size_t)s * m + l) * m;
            size_t column = (size_t)s * m + l;
            for (int e = 0; e < m; e++) lines[(size_t)e * n + column] = from[e];
        }
}

/* ---- --check: a direct 2D DFT of X_{iters-1}, rows then columns, against y row-major ---- */

static int check(const cplx *y) {
    int k = iters - 1;
    cplx *a = malloc(sizeof(cplx) * n * n);
    if (!a) {
        fprintf(stderr, "fft2d: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        for (int v = 0; v < n; v++) {
            cplx s = 0;
            for (int j = 0; j < n; j++) s += input(i, j, k) * cexp(-2.0 * PI * I * (double)((int64_t)j * v % n) / n);
            a[(size_t)i * n + v] = s;
        }
    double diff = 0, scale = 0;
    for (int u = 0; u < n; u++)
        for (int v = 0; v < n; v++) {
            cplx s = 0;
            for (int i = 0; i < n; i++) s += a[(size_t)i * n + v] * cexp(-2.0 * PI * I * (double)((int64_t)i * u % n) / n);
            double d = cabs(y[(size_t)u * n + v] - s);
            if (d > diff || isnan(d)) diff = d;
            if (cabs(s) > scale) scale = cabs(s);
        }
    free(a);
    double error = scale == 0 ? diff : diff / scale;
    if (!(error <= TOLERANCE)) {
        fprintf(stderr, "fft2d: iteration %d differs from the direct 2D DFT: relative error %.3e > %.0e\n", k, error, TOLERANCE);
        return 1;
    }
    printf("check: iteration %d matches the direct 2D DFT (relative error %.2e)\n", k, error);
    return 0;
}

static const char *usage =
    "usage: mpirun -np P fft2d [-n N] [--iters K] [--transpose alltoall|p2p] [--check]\n"
    "  2D FFT of an n x n complex matrix, repeated for K matrices, its lines distributed over\n"
    "  the P ranks, the transpose by MPI_Alltoall (or, with p2p, by point-to-point messages\n"
    "  between every pair of ranks); n a power of two divisible by P.\n"
    "  Defaults: -n 256 --iters 100 --transpose alltoall.\n";

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int do_check = 0;
    n = 256;
    iters = 100;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0) fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        }
        if (!strcmp(a, "--check")) {
            do_check = 1;
            continue;
        }
        if (i + 1 >= argc) usage_error("fft2d", "%s: unknown or missing its value (try --help)", a);
        const char *v = argv[++i];
        if (!strcmp(a, "-n"))
            n = (int)parse_long("fft2d", "-n", v, 1, MAX_N);
        else if (!strcmp(a, "--iters"))
            iters = (int)parse_long("fft2d", "--iters", v, 1, 1000000000);
        else if (!strcmp(a, "--transpose") && (!strcmp(v, "alltoall") || !strcmp(v, "p2p")))
            p2p = !strcmp(v, "p2p");
        else if (!strcmp(a, "--transpose"))
            usage_error("fft2d", "--transpose '%s': expected alltoall or p2p", v);
        else
            usage_error("fft2d", "%s: unknown argument (try --help)", a);
    }
    if (n & (n - 1)) usage_error("fft2d", "-n %d: expected a power of two (a radix-2 FFT)", n);
    if (p2p && ranks > MAX_RANKS) usage_error("fft2d", "--transpose p2p: at most %d ranks, not %d", MAX_RANKS, ranks);
    if (n % ranks) usage_error("fft2d", "-n %d: not divisible by the %d ranks (each rank holds n/P lines)", n, ranks);
    for (log2n = 0; (1 << log2n) < n; log2n++) {
    }
    int m = n / ranks, lo = rank * m;
    /* Set-up outside the timed run: the plan and this rank's buffers, written so that their
     * pages exist. */
    if (fft_plan() != 0) {
        fprintf(stderr, "fft2d: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t bytes = sizeof(cplx) * (size_t)n * m;
    cplx *lines = malloc(bytes), *pack = malloc(bytes), *unpack = malloc(bytes);
    cplx *y = rank == 0 ? malloc(sizeof(cplx) * (size_t)n * n) : NULL;
    if (!lines || !pack || !unpack || (rank == 0 && !y)) {
        fprintf(stderr, "fft2d: out of memory (n = %d)\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(lines, 0, bytes);
    memset(pack, 0, bytes);
    memset(unpack, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int k = 0; k < iters; k++) {
        init_columns(lines, lo, m, k);
        fft_lines(lines, m);
        transpose(lines, pack, unpack, m, ranks);
        fft_lines(lines, m);
    }
    double seconds = MPI_Wtime() - start;
    /* Rank r's lines are rows r*m..: in rank order, Y row-major. */
    MPI_Gather(lines, 2 * n * m, MPI_DOUBLE, y, 2 * n * m, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int status = 0;
    if (rank == 0) {
        double checksum = 0;
        for (size_t i = 0; i < (size_t)n * n; i++) checksum += cabs(y[i]);
        printf("n=%d ranks=%d iters=%d: %.6f s, %.3f ms per iteration\nchecksum %.9e\n", n, ranks, iters, seconds,
               1e3 * seconds / iters, checksum);
        status = do_check ? check(y) : 0;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(lines);
    free(pack);
    free(unpack);
    free(y);
    free(twiddle);
    free(bitrev);
    MPI_Finalize();
    return status;
}
