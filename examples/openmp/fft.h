/* The 2D FFT examples' shared part (examples/openmp/fft2d.c and examples/mpi/fft2d.c): the
 * input matrices, the Rust workload's hash (workloads/fft2d/src/matrix.rs), and the 1-D FFT,
 * iterative radix-2, in place, forward (exp(-2 pi i ...)), on lines of `n` points. The program
 * sets `n` and `log2n`, then calls fft_plan once. */
#ifndef PP_FFT_H
#define PP_FFT_H

#include <complex.h>
#include <stdint.h>
#include <stdlib.h>

typedef double complex cplx;

#define PI 3.14159265358979323846

static int n, log2n;
static cplx *twiddle;    /* twiddle[k] = exp(-2 pi i k / n), k < n/2 */
static uint32_t *bitrev; /* bit reversal of log2n bits */

/* ---- the input: X_k(i, j) ---- */

static uint64_t splitmix64(uint64_t x) {
    uint64_t z = x + 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double unit(uint64_t h) { return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0; }

static cplx input(uint64_t i, uint64_t j, uint64_t k) {
    uint64_t seed = k * 0x9E3779B97F4A7C15u ^ i * 0xC2B2AE3D27D4EB4Fu ^ j * 0x165667B19E3779F9u;
    uint64_t a = splitmix64(seed);
    uint64_t b = splitmix64(a);
    return unit(a) + unit(b) * I;
}

/* ---- the 1-D FFT ---- */

/* The twiddle factors and the bit reversal for `n`; 0, or -1 out of memory. */
static int fft_plan(void) {
    twiddle = malloc(sizeof(cplx) * (n / 2 + 1));
    bitrev = malloc(sizeof(uint32_t) * n);
    if (!twiddle || !bitrev) return -1;
    for (int k = 0; k < n / 2; k++) twiddle[k] = cexp(-2.0 * PI * I * k / n);
    for (int i = 0; i < n; i++) {
        uint32_t r = 0;
        for (int b = 0; b < log2n; b++) r |= (uint32_t)((i >> b) & 1) << (log2n - 1 - b);
        bitrev[i] = r;
    }
    return 0;
}

static void fft_line(cplx *x) {
    for (int i = 0; i < n; i++) {
        int j = (int)bitrev[i];
        if (i < j) {
            cplx t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        int half = len / 2, step = n / len;
        for (int s = 0; s < n; s += len) {
            for (int k = 0; k < half; k++) {
                cplx w = twiddle[k * step] * x[s + k + half];
                x[s + k + half] = x[s + k] - w;
                x[s + k] += w;
            }
        }
    }
}

#endif
