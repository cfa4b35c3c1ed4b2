/* The OMPT tool's overhead benchmark (pp/benches/ompt_overhead.rs).
 *
 *   overhead WORK CHUNKS REGIONS
 *
 * REGIONS parallel regions, each a loop of CHUNKS iterations under schedule(dynamic, 1): one
 * chunk per iteration, so the runtime reports every chunk. An iteration is WORK steps of a
 * dependent integer recurrence (xorshift64, which the compiler cannot fold as it folds an
 * LCG: about 2 ns per step, so 30,000 steps make a chunk of 50 us or more); a WORK of a few
 * steps makes the run mostly events, which gives the cost per event. Prints a checksum so
 * that the work is not optimised away.
 *
 * Build: clang -O2 -fopenmp examples/openmp/overhead.c -o overhead
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long spin(unsigned long long x, long work)
{
    for (long i = 0; i < work; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s WORK CHUNKS REGIONS\n", argv[0]);
        return 2;
    }
    long work = atol(argv[1]), chunks = atol(argv[2]), regions = atol(argv[3]);
    if (work < 0 || chunks < 1 || regions < 1) {
        fprintf(stderr, "%s: WORK >= 0, CHUNKS >= 1 and REGIONS >= 1 expected\n", argv[0]);
        return 2;
    }
    unsigned long long sum = 0;
    for (long r = 0; r < regions; r++) {
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sum)
        for (long c = 0; c < chunks; c++)
            sum += spin(2 * (unsigned long long)(r * chunks + c) + 1, work); /* odd: never 0 */
    }
    printf("%llu\n", sum);
    return 0;
}
