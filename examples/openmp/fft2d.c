/* fft2d: the 2D FFT of the paper (Crovella & LeBlanc, lost cycles analysis) with OpenMP, in
 * its two forms, for pp's OMPT tool. The same computation, input, command line and checksum
 * as the Rust workload (workloads/fft2d, `lca workload fft2d`): every iteration k transforms
 * the n x n complex matrix X_k(i, j) (a hash of i, j, k) into Y_k = FFT2(X_k), for --iters
 * matrices one after the other; the checksum is the sum of the magnitudes of the last Y.
 *
 *   fft2d [--impl dp|tp] [-p P] [-n N] [--iters K] [--check]
 *
 * dp, data parallel: every iteration is five parallel loops of all p threads, each a region
 * opened by a function of its own (pp names regions after that function):
 *   dp_init (X_k column-major: line j holds column j), dp_columns (1-D FFT of every line),
 *   dp_transpose_out and dp_transpose_back (the transpose through an intermediate matrix),
 *   dp_rows (1-D FFT of every line, now a row: Y_k row-major).
 * As in the Rust workload, each thread's part of a transpose is marked as communication of
 * the bytes it writes (pp_comm_begin/end of ompt/include/pp_ompt.h, which go to the OMPT tool
 * through omp_control_tool and do nothing without it): pp counts it as cl, not as work.
 *
 * tp, task + data parallel: one region (tp_pipeline) of p threads split by thread number into
 * two groups that form a two-stage pipeline over the iterations:
 *   stage 1, threads 0..p/2-1: init X_k row-major, then the 1-D FFT of every row;
 *   stage 2, threads p/2..p-1: transpose that matrix into the intermediate matrix (column v of
 *   the row transforms becomes line v), then the 1-D FFT of every line: Y_k column-major.
 * The stages work on different matrices at once (double buffering: stage 1 fills buffer
 * k % 2 while stage 2 transforms the matrix of k - 1 in buffer (k - 1) % 2) and hand them
 * over at a team barrier after each step. Why a barrier and not a flag or a lock per buffer:
 *   - pp sees an OpenMP barrier as a synchronization wait; a spin on a flag would be recorded
 *     as work, hiding exactly the loss the comparison is about;
 *   - an OpenMP lock may only be released by the thread that holds it, so it cannot carry a
 *     buffer from one thread to another;
 *   - no nested parallelism: the tool counts the threads of the outermost team.
 * Each thread handles a contiguous block of lines of its stage, and within a stage no thread
 * reads lines another thread of its group writes in the same step (stage 2 writes the
 * intermediate matrix, reading the buffer stage 1 finished in the step before), so neither
 * group needs a barrier of its own. The pipeline fills in the first step (stage 2 waits) and
 * drains in the last (stage 1 waits).
 *
 * --check compares the last Y with a direct (O(n^3)) 2D DFT and exits 1 on a mismatch.
 * n must be a power of two (an iterative radix-2 FFT). */
#include <complex.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fft.h" /* the input and the 1-D FFT, shared with the other fft2d.c */

#include "pp_ompt.h" /* ompt/include: marks the transposes as communication */

/* The largest relative error --check accepts, as the Rust workload's: double precision FFTs
 * agree to about 1e-15 log2 n. */
#define TOLERANCE 1e-10
#define MAX_N 8192
#define MAX_P 1024
#define TILE 32

static int p, iters;

/* Lines lo..hi-1 of thread `index` of a group of `size` threads (blocks differ by at most
 * one line, as the Rust workload's). */
static void block(int index, int size, int *lo, int *hi) {
    *lo = (int)((int64_t)n * index / size);
    *hi = (int)((int64_t)n * (index + 1) / size);
}

/* Lines lo..hi-1 of `dst` are the transposed columns lo..hi-1 of `src`, in tiles; marked as
 * communication of the bytes written (pp_ompt.h). */
static void transpose_lines(cplx *dst, const cplx *src, int lo, int hi) {
    uint64_t bytes = (uint64_t)(hi - lo) * n * sizeof(cplx);
    pp_comm_begin(bytes);
    for (int c0 = 0; c0 < n; c0 += TILE) {
        int c1 = c0 + TILE < n ? c0 + TILE : n;
        for (int r0 = lo; r0 < hi; r0 += TILE) {
            int r1 = r0 + TILE < hi ? r0 + TILE : hi;
            for (int c = c0; c < c1; c++)
                for (int r = r0; r < r1; r++) dst[(size_t)r * n + c] = src[(size_t)c * n + r];
        }
    }
    pp_comm_end(bytes);
}

/* ---- dp: five parallel loops per iteration, each region in a function of its own ---- */

__attribute__((noinline)) void dp_init(cplx *data, int k) {
#pragma omp parallel for num_threads(p) schedule(static)
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) data[(size_t)j * n + i] = input(i, j, k);
}

__attribute__((noinline)) void dp_columns(cplx *data) {
#pragma omp parallel for num_threads(p) schedule(static)
    for (int j = 0; j < n; j++) fft_line(data + (size_t)j * n);
}

__attribute__((noinline)) void dp_transpose_out(cplx *tmp, const cplx *data) {
#pragma omp parallel num_threads(p)
    {
        int lo, hi;
        block(omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        transpose_lines(tmp, data, lo, hi);
    }
}

__attribute__((noinline)) void dp_transpose_back(cplx *data, const cplx *tmp) {
#pragma omp parallel num_threads(p)
    {
        int lo, hi;
        block(omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        uint64_t bytes = (uint64_t)(hi - lo) * n * sizeof(cplx);
        pp_comm_begin(bytes);
        memcpy(data + (size_t)lo * n, tmp + (size_t)lo * n, bytes);
        pp_comm_end(bytes);
    }
}

__attribute__((noinline)) void dp_rows(cplx *data) {
#pragma omp parallel for num_threads(p) schedule(static)
    for (int r = 0; r < n; r++) fft_line(data + (size_t)r * n);
}

/* Runs dp; returns the buffer that holds the last Y, row-major. */
static cplx *dp_run(cplx *data, cplx *tmp) {
    for (int k = 0; k < iters; k++) {
        dp_init(data, k);
        dp_columns(data);
        dp_transpose_out(tmp, data);
        dp_transpose_back(data, tmp);
        dp_rows(data);
    }
    return data;
}

/* ---- tp: one region, two groups, a pipeline in lock step (see the top of the file) ---- */

__attribute__((noinline)) void tp_pipeline(cplx *buf[2], cplx *out) {
#pragma omp parallel num_threads(p)
    {
        int t = omp_get_thread_num(), team = omp_get_num_threads();
        int first = team / 2; /* stage 1: threads 0..first-1; stage 2: first..team-1 */
        int lo, hi;
        if (t < first)
            block(t, first, &lo, &hi);
        else
            block(t - first, team - first, &lo, &hi);
        for (int step = 0; step <= iters; step++) {
            if (t < first && step < iters) {
                cplx *data = buf[step % 2];
                for (int i = lo; i < hi; i++) {
                    cplx *line = data + (size_t)i * n;
                    for (int j = 0; j < n; j++) line[j] = input(i, j, step);
                    fft_line(line);
                }
            } else if (t >= first && step > 0) {
                transpose_lines(out, buf[(step - 1) % 2], lo, hi);
                for (int v = lo; v < hi; v++) fft_line(out + (size_t)v * n);
            }
#pragma omp barrier
        }
    }
}

/* ---- --check: a direct 2D DFT of X_{iters-1}, rows then columns ---- */

static int check(const cplx *y, int column_major) {
    int k = iters - 1;
    cplx *a = malloc(sizeof(cplx) * n * n), *b = malloc(sizeof(cplx) * n * n);
    if (!a || !b) {
        fprintf(stderr, "fft2d: out of memory\n");
        exit(1);
    }
    /* a(i, v) = sum_j X(i, j) w^(j v); b(u, v) = sum_i a(i, v) w^(i u); w = exp(-2 pi i / n) */
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
            b[(size_t)u * n + v] = s;
            cplx got = column_major ? y[(size_t)v * n + u] : y[(size_t)u * n + v];
            double d = cabs(got - s);
            if (d > diff || isnan(d)) diff = d;
            if (cabs(s) > scale) scale = cabs(s);
        }
    free(a);
    free(b);
    double error = scale == 0 ? diff : diff / scale;
    if (!(error <= TOLERANCE)) {
        fprintf(stderr, "fft2d: iteration %d differs from the direct 2D DFT: relative error %.3e > %.0e\n", k, error, TOLERANCE);
        return 1;
    }
    printf("check: iteration %d matches the direct 2D DFT (relative error %.2e)\n", k, error);
    return 0;
}

/* ---- command line ---- */

static int parse_int(const char *name, const char *s, int lo, int hi) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "fft2d: %s '%s': expected an integer from %d to %d\n", name, s, lo, hi);
        exit(2);
    }
    return (int)v;
}

static const char *usage =
    "usage: fft2d [--impl dp|tp] [-p P] [-n N] [--iters K] [--check]\n"
    "  2D FFT of an n x n complex matrix, repeated for K matrices, data parallel (dp) or as a\n"
    "  pipeline of two thread groups (tp); P threads (tp: at least 2), n a power of two.\n"
    "  Defaults: --impl dp -p 2 -n 256 --iters 100. Measure it with: pp run -- fft2d ...\n";

int main(int argc, char **argv) {
    const char *impl = "dp";
    int do_check = 0;
    p = 2;
    n = 256;
    iters = 100;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--check")) {
            do_check = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "fft2d: %s: unknown or missing its value (try --help)\n", a);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--impl"))
            impl = v;
        else if (!strcmp(a, "-p"))
            p = parse_int("-p", v, 1, MAX_P);
        else if (!strcmp(a, "-n"))
            n = parse_int("-n", v, 1, MAX_N);
        else if (!strcmp(a, "--iters"))
            iters = parse_int("--iters", v, 1, 1000000000);
        else {
            fprintf(stderr, "fft2d: %s: unknown argument (try --help)\n", a);
            return 2;
        }
    }
    int tp = !strcmp(impl, "tp");
    if (!tp && strcmp(impl, "dp")) {
        fprintf(stderr, "fft2d: --impl '%s': expected dp or tp\n", impl);
        return 2;
    }
    if (n & (n - 1)) {
        fprintf(stderr, "fft2d: -n %d: expected a power of two (a radix-2 FFT)\n", n);
        return 2;
    }
    if (tp && p < 2) {
        fprintf(stderr, "fft2d: -p %d: tp needs at least 2 threads, one group per pipeline stage\n", p);
        return 2;
    }
    for (log2n = 0; (1 << log2n) < n; log2n++) {
    }
    /* Set-up outside the timed run: the plan and the matrices, written so that their pages
     * exist. */
    if (fft_plan() != 0) {
        fprintf(stderr, "fft2d: out of memory\n");
        exit(1);
    }
    size_t bytes = sizeof(cplx) * (size_t)n * n;
    cplx *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    if (!a || !b || !c) {
        fprintf(stderr, "fft2d: out of memory (n = %d)\n", n);
        return 1;
    }
    memset(a, 0, bytes);
    memset(b, 0, bytes);
    memset(c, 0, bytes);
    double start = omp_get_wtime();
    cplx *y;
    if (tp) {
        cplx *buf[2] = {a, b};
        tp_pipeline(buf, c);
        y = c;
    } else {
        y = dp_run(a, b);
    }
    double seconds = omp_get_wtime() - start;
    double checksum = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) checksum += cabs(y[i]);
    printf("impl=%s n=%d p=%d iters=%d: %.6f s, %.3f ms per iteration\nchecksum %.9e\n", impl, n, p,
           iters, seconds, 1e3 * seconds / iters, checksum);
    int status = do_check ? check(y, tp) : 0;
    free(a);
    free(b);
    free(c);
    free(twiddle);
    free(bitrev);
    return status;
}
