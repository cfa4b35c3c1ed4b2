/* pp_ompt.h: what an OpenMP program can tell pp's OMPT tool (docs/openmp.md).
 *
 * The tool sees parallel regions, barriers and locks by itself, but not which loads and
 * stores move data (a transpose, a halo copy): mark those with pp_comm_begin / pp_comm_end,
 * and pp counts the time as communication (cl, and rc.comm beyond the machine's ideal time).
 * They go through omp_control_tool, the OpenMP 5.0 call for talking to a tool: without the
 * tool loaded (plain runs, GCC's libgomp) they do nothing but that call. Only a thread pp
 * records is marked; nest them inside the thread's work, not inside a wait.
 */
#ifndef PP_OMPT_H
#define PP_OMPT_H

#include <omp.h>
#include <stdint.h>

/* omp_control_tool commands of the tool (the standard leaves 64 and above to tools). */
enum { PP_OMPT_COMM_BEGIN = 64, PP_OMPT_COMM_END = 65 };

/* The calling thread starts moving `bytes` bytes. */
static inline void pp_comm_begin(uint64_t bytes) {
    omp_control_tool(PP_OMPT_COMM_BEGIN, 0, &bytes);
}

/* It has moved them (the same count). */
static inline void pp_comm_end(uint64_t bytes) {
    omp_control_tool(PP_OMPT_COMM_END, 0, &bytes);
}

#endif
