/* Contention guard for the OpenMP parallel loops of the element-wise and reduction drivers.

   A parallel region ends with a barrier, so it lasts until its slowest thread is done. When
   another process holds a core, the worker that should run there may wait for a scheduler
   slice (milliseconds) before it even starts, and the whole region waits with it. The
   drivers time that: mx_region_begin() before a parallel loop, mx_region_mark() at each
   work item (it records when the first thread other than the caller's started), and
   mx_region_end() after it. A worker that started MX_LATE_NS or more after the region
   began (or none at all in a region that long) marks the machine as contended for the next MX_HOLD_NS; meanwhile mx_serial(work)
   tells the drivers to run loops of fewer than MX_SERIAL_BELOW elements on the calling
   thread alone (a few milliseconds at most, the order of the stall they avoid). After the
   hold, the next region probes again. Large loops stay parallel throughout.

   The state is per extension module and needs no lock: it is a hint, read and written with
   relaxed atomics. */
#ifndef MX_PARALLEL_H
#define MX_PARALLEL_H

#include <stdint.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MX_LATE_NS 150000LL          /* a worker this late: another process has its core */
#define MX_HOLD_NS 100000000LL       /* then run mid-size loops serially this long */
#define MX_SERIAL_BELOW (1LL << 25)  /* elements; larger loops always run in parallel */

typedef struct {
    int64_t t0;         /* when the region began (ns) */
    int64_t worker;     /* when the first worker thread started an item (ns), 0: not yet */
} mx_region;

static int64_t mx_contended_until = 0;

static inline int64_t mx_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* 1 when a loop over ``work`` elements should run on the calling thread alone. */
static inline int mx_serial(int64_t work) {
    return work < MX_SERIAL_BELOW
        && __atomic_load_n(&mx_contended_until, __ATOMIC_RELAXED) > mx_now_ns();
}

static inline void mx_region_begin(mx_region* r) {
    r->t0 = mx_now_ns();
    r->worker = 0;
}

static inline void mx_region_mark(mx_region* r) {
#ifdef _OPENMP
    if (omp_get_thread_num() != 0 && __atomic_load_n(&r->worker, __ATOMIC_RELAXED) == 0)
        __atomic_store_n(&r->worker, mx_now_ns(), __ATOMIC_RELAXED);
#else
    (void)r;
#endif
}

static inline void mx_region_end(mx_region* r) {
    int64_t w = __atomic_load_n(&r->worker, __ATOMIC_RELAXED), end = mx_now_ns();
    /* no worker item at all (the caller took every item of a dynamic schedule): the
       workers were late by the whole region */
    if ((w != 0 ? w : end) - r->t0 >= MX_LATE_NS)
        __atomic_store_n(&mx_contended_until, end + MX_HOLD_NS, __ATOMIC_RELAXED);
}

#endif
