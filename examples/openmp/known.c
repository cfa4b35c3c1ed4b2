/* known: the known-answer program for pp's OpenMP tool. Two threads; in one parallel region
 * thread 0 burns A ms of CPU and thread 1 burns B ms (B > A, busy loops timed with the thread's
 * CPU clock, no sleeps), then the initial thread burns C ms alone, outside any region. By hand,
 * with p = 2:
 *
 *   pc ~ A + B + C            the work (CPU time)
 *   li ~ B - A                thread 0 waits at the region's implicit barrier for thread 1
 *   ip ~ C                    thread 1 is idle during the serial section (plus the short
 *                             serial start and end of the program: all of the run but the
 *                             region)
 *   rc.cpu ~ wall - CPU time  of each burn, ~0 on an idle machine
 *
 * It prints what it burned, CPU and wall milliseconds per burn, so that a test compares pp's
 * figures with the program's own measurements whatever the load:
 *
 *   known A=<cpu> B=<cpu> C=<cpu> wallA=<wall> wallB=<wall> wallC=<wall> region=<wall>
 *
 * (region: the wall time of the whole parallel region, fork and join included.)
 *
 * Usage: known [A_MS B_MS C_MS]   (default 100 300 200) */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

static double parse_ms(const char *name, const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v >= 0.0 && v <= 600000.0)) {
        fprintf(stderr, "known: %s '%s': expected milliseconds from 0 to 600000\n", name, s);
        exit(2);
    }
    return v;
}

/* The parallel region: its own function, so that pp names the region `known_region`. */
__attribute__((noinline)) void known_region(double a_ms, double b_ms, int64_t cpu[2],
                                            int64_t wall[2]) {
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num();
        if (t < 2) {
            int64_t w = wall_ns();
            cpu[t] = burn_ms(t == 0 ? a_ms : b_ms);
            wall[t] = wall_ns() - w;
        }
    }
}

int main(int argc, char **argv) {
    double ms[3] = {100, 300, 200};
    if (argc == 4) {
        ms[0] = parse_ms("A", argv[1]);
        ms[1] = parse_ms("B", argv[2]);
        ms[2] = parse_ms("C", argv[3]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: known [A_MS B_MS C_MS]   (default 100 300 200)\n");
        return 2;
    }
    int64_t cpu[3] = {0, 0, 0}, wall[3] = {0, 0, 0};
    int64_t w = wall_ns();
    known_region(ms[0], ms[1], cpu, wall);
    int64_t region = wall_ns() - w;
    w = wall_ns();
    cpu[2] = burn_ms(ms[2]);
    wall[2] = wall_ns() - w;
    printf("known A=%.3f B=%.3f C=%.3f wallA=%.3f wallB=%.3f wallC=%.3f region=%.3f\n",
           cpu[0] / 1e6, cpu[1] / 1e6, cpu[2] / 1e6, wall[0] / 1e6, wall[1] / 1e6,
           wall[2] / 1e6, region / 1e6);
    return 0;
}
