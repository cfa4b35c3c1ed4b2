/* CPU work of a known length for the OpenMP examples: busy loops (dependent multiply-adds,
 * no memory traffic, no sleeps) that run until the calling thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID) has advanced by the time asked for. Time the thread spends
 * descheduled does not count, so on a loaded machine a burn takes longer in wall time but the
 * same CPU time: the difference is what pp reports as rc.cpu. */
#ifndef PP_OPENMP_BURN_H
#define PP_OPENMP_BURN_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of CPU time the calling thread has used. */
static inline int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Nanoseconds of a monotonic wall clock. */
static inline int64_t wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* About `iters` dependent multiply-adds (a few nanoseconds each); the result defeats the
 * optimizer. */
static inline uint64_t spin(uint64_t iters) {
    volatile uint64_t x = 0x9e3779b97f4a7c15u;
    for (uint64_t i = 0; i < iters; i++) x = x * 6364136223846793005u + i;
    return x;
}

/* Burns `ns` nanoseconds of the calling thread's CPU time, checking the clock every few
 * microseconds; returns the CPU time actually burned (at most a few microseconds more). */
static inline int64_t burn_ns(int64_t ns) {
    int64_t start = thread_cpu_ns(), now = start;
    while (now - start < ns) {
        spin(2000);
        now = thread_cpu_ns();
    }
    return now - start;
}

/* burn_ns in milliseconds. */
static inline int64_t burn_ms(double ms) { return burn_ns((int64_t)(ms * 1e6)); }

#endif
