/* categories: an OpenMP program whose phases each lose time in one lost-cycles category on
 * purpose, like pp/examples/categories.rs but unmodified OpenMP, measured by pp's OMPT tool:
 *
 *   make -C examples/openmp
 *   pp run -- examples/openmp/build/categories -p 4
 *   pp --by region pp.log
 *
 * | phase (--phase) | region (function)       | what the threads do                        | category |
 * |-----------------|-------------------------|--------------------------------------------|----------|
 * | serial          | (outside regions)       | the initial thread works, the others idle  | ip       |
 * | imbalance       | imbalance               | thread i works 40 ms (first) to 160 (last) | li       |
 * | critical        | critical_section        | every thread works inside one critical     | sl       |
 * | oversubscribed  | oversubscribed          | 4 x cores busy threads                     | rc.cpu   |
 *
 * Each phase opens its parallel region in a function of its own, because pp names a region
 * after the function that contains the `#pragma omp parallel` (noinline, and built with
 * -fno-optimize-sibling-calls: see the Makefile). All work is CPU time burned in
 * busy loops (burn.h), no sleeps; a phase's length is in CPU milliseconds times --scale.
 *
 * The serial phase first opens a short region (`team_start`), so that the team (and pp's p)
 * exists before the serial work: a program that never opens a region has p = 1 and no one to
 * be idle.
 *
 * The oversubscribed region's team is 4 x omp_get_num_procs() threads, more than p when it is
 * not the first region (--phase all): pp records the first team's p threads (the tool says
 * how many it left out), and the extra threads are, for pp, other load on the machine that
 * deschedules them (rc.cpu), as the unrecorded hogs of the Rust example. Run alone (--phase oversubscribed) it is the first
 * region, so p = 4 x cores and every recorded thread waits for a core three quarters of the
 * time.
 *
 * Usage: categories [-p THREADS] [--phase PHASES] [--scale FACTOR] [--repeats N]
 *
 * PHASES is all (the default) or a comma-separated list of serial, imbalance, critical and
 * oversubscribed, run in that list's order. --repeats runs the list N times over (default 1), a
 * time-step loop that makes the program as long as wanted with the same structure: the skeleton
 * validation runs `--phase serial,imbalance,critical --scale 0.1 --repeats 430`, about 30 s on 2
 * cores (docs/results.md), without the oversubscribed phase, whose extra threads are not in the
 * log (a skeleton cannot make what its log does not have).
 * THREADS defaults to omp_get_max_threads() (OMP_NUM_THREADS, else the cores). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "burn.h"

static int threads;   /* the team size of every region but the oversubscribed one */
static double scale = 1.0;

/* A short region of the whole team: makes the team (and pp's p) before the serial phase. */
__attribute__((noinline)) void team_start(void) {
#pragma omp parallel num_threads(threads)
    burn_ms(1.0 * scale);
}

/* ip: the initial thread works alone, outside every region; the team's other threads idle. */
__attribute__((noinline)) void serial(void) {
    team_start();
    burn_ms(300.0 * scale);
}

/* li: iteration i (thread i) works from 40 ms (the first) to 160 ms (the last); those done
 * early wait at the loop's implicit barrier while the others still work. */
__attribute__((noinline)) void imbalance(void) {
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int i = 0; i < threads; i++)
        burn_ms(40.0 * (1.0 + (threads > 1 ? 3.0 * i / (threads - 1) : 0.0)) * scale);
}

/* sl: every thread takes the same critical section over and over and works inside it; the
 * rounds are claimed inside it too, so that all threads stay busy until the last round (no
 * load imbalance at the end). */
__attribute__((noinline)) void critical_section(void) {
    int rounds = 0;
    int total = (int)(240 * scale) + 1;
#pragma omp parallel num_threads(threads)
    {
        int done = 0;
        while (!done) {
#pragma omp critical(counter)
            {
                if (rounds < total) {
                    rounds++;
                    burn_ms(1.0);
                } else {
                    done = 1;
                }
            }
        }
    }
}

/* rc.cpu: 4 x cores threads, each with 100 ms of work handed out 1 ms at a time (so that they
 * end together): most of the time a thread waits for a core. */
__attribute__((noinline)) void oversubscribed(void) {
    int team = 4 * omp_get_num_procs();
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
    for (int i = 0; i < 100 * team; i++) burn_ms(scale);
}

static int parse_int(const char *name, const char *s, int lo, int hi) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "categories: %s '%s': expected an integer from %d to %d\n", name, s,
                lo, hi);
        exit(2);
    }
    return (int)v;
}

static const char *usage =
    "usage: categories [-p THREADS] [--phase PHASES] [--scale FACTOR] [--repeats N]\n"
    "  PHASES: all, or a comma-separated list of serial, imbalance, critical, oversubscribed\n";

/* The phases, by the names --phase takes. */
typedef void (*phase_fn)(void);
static const char *const phase_names[] = {"serial", "imbalance", "critical", "oversubscribed"};

static phase_fn phase_by_name(const char *name, size_t len) {
    static const phase_fn fns[] = {serial, imbalance, critical_section, oversubscribed};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strlen(phase_names[i]) == len && !strncmp(phase_names[i], name, len)) return fns[i];
    return NULL;
}

int main(int argc, char **argv) {
    const char *phase = "all";
    int repeats = 1;
    threads = omp_get_max_threads();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "categories: %s: unknown or missing its value\n%s", a, usage);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "-p")) {
            threads = parse_int("-p", v, 1, 1024);
        } else if (!strcmp(a, "--phase")) {
            phase = v;
        } else if (!strcmp(a, "--repeats")) {
            repeats = parse_int("--repeats", v, 1, 1000000);
        } else if (!strcmp(a, "--scale")) {
            char *end;
            scale = strtod(v, &end);
            if (*v == '\0' || *end != '\0' || !(scale > 0.0 && scale <= 1000.0)) {
                fprintf(stderr, "categories: --scale '%s': expected a number in (0, 1000]\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "categories: %s: unknown argument\n%s", a, usage);
            return 2;
        }
    }
    /* The list, checked before anything runs. */
    phase_fn list[64];
    int n = 0;
    if (!strcmp(phase, "all")) {
        for (size_t i = 0; i < sizeof phase_names / sizeof phase_names[0]; i++)
            list[n++] = phase_by_name(phase_names[i], strlen(phase_names[i]));
    } else {
        for (const char *s = phase;;) {
            size_t len = strcspn(s, ",");
            phase_fn f = phase_by_name(s, len);
            if (f == NULL || n == 64) {
                fprintf(stderr, "categories: --phase '%s': expected all, or a list (at most 64) of "
                                "serial, imbalance, critical and oversubscribed\n", phase);
                return 2;
            }
            list[n++] = f;
            if (s[len] == '\0') break;
            s += len + 1;
        }
    }
    int64_t start = wall_ns();
    for (int r = 0; r < repeats; r++)
        for (int i = 0; i < n; i++) list[i]();
    printf("categories: phase %s, %d repeats, %d threads (%d cores), %.3f s\n", phase, repeats,
           threads, omp_get_num_procs(), (wall_ns() - start) / 1e9);
    printf("regions: (outside regions)=ip imbalance=li critical_section=sl oversubscribed=rc.cpu\n");
    return 0;
}
