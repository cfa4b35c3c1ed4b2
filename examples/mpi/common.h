/* Shared by the MPI examples: argument errors that every rank detects alike (all ranks parse
 * the same command line) but only rank 0 reports, in one line, before all exit 2; and the
 * CPU burn of the OpenMP examples (../openmp/burn.h: a busy loop on the calling thread's CPU
 * clock, CLOCK_THREAD_CPUTIME_ID, no sleep). */
#ifndef PP_MPI_COMMON_H
#define PP_MPI_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../openmp/burn.h"

/* This rank in MPI_COMM_WORLD. */
static inline int world_rank(void) {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* Rank 0 prints "PROGRAM: MESSAGE" on standard error; every rank leaves MPI and exits 2. */
__attribute__((noreturn, format(printf, 2, 3))) static void usage_error(const char *program, const char *fmt, ...) {
    if (world_rank() == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", program);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    MPI_Finalize();
    exit(2);
}

/* The integer `s`, the value of option `name`, from lo to hi (else usage_error). */
static inline long parse_long(const char *program, const char *name, const char *s, long lo, long hi) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        usage_error(program, "%s '%s': expected an integer from %ld to %ld", name, s, lo, hi);
    return v;
}

/* The number `s`, the value of option `name`, from lo to hi (else usage_error). */
static inline double parse_double(const char *program, const char *name, const char *s, double lo, double hi) {
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v >= lo && v <= hi))
        usage_error(program, "%s '%s': expected a number from %g to %g", name, s, lo, hi);
    return v;
}

#endif
