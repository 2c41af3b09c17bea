/* The OpenMP runtime around fork(); the rule and the Python handlers that call these are in
   mxlite/_core/__init__.py.

   libgomp (GCC's runtime) keeps each thread's team of workers in a pool that the thread's
   next parallel region reuses. fork() copies the pool into the child but not its threads, so
   the child's first team of more than one thread waits forever for workers that do not
   exist. LLVM's and Intel's runtime (libomp) reinitialise themselves in a forked child. */
#ifndef MX_FORK_H
#define MX_FORK_H

#include <stdbool.h>
#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Shut the calling thread's pool down: its workers exit and are joined, and its next
   parallel region starts new ones. Called just before fork, the child inherits no pool and
   builds its own. True when done or not needed; false where the runtime cannot (libgomp
   before GCC 9, without OpenMP 5.0's pause; also when called inside a parallel region). */
static inline bool mx_omp_release(void) {
#if !defined(_OPENMP) || defined(__clang__) || defined(__INTEL_COMPILER)
    return true;
#elif defined(__GNUC__) && __GNUC__ >= 9
    /* libgomp pauses the calling thread's host pool only: other threads' pools stay up, and
       no offload device is touched (or loaded) */
    return omp_pause_resource_all(omp_pause_hard) == 0;
#else
    return false;
#endif
}

/* The calling thread's parallel regions run on it alone from now on: a team of one never
   touches the pool, so a child whose inherited pool could not be released cannot hang. */
static inline void mx_omp_single_thread(void) {
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
}

/* How many threads the calling thread's next parallel region may use. */
static inline int64_t mx_omp_max_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

#endif
