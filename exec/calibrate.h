/*
 * calibrate.h - this machine's limits, measured once and kept in the
 * store's meta table ("calibration"): peak FLOP/s (an FMA loop) and memory
 * bandwidth (a triad over a buffer larger than the last-level cache) for
 * 1..N threads, and the executor's fixed cost per node (a chain of tiny
 * nodes).  The profiler divides work by these to get roofline bounds.
 */
#ifndef PN_CALIBRATE_H
#define PN_CALIBRATE_H

#include "store/store.h"

#define PN_CALIB_MAX_THREADS 64

typedef struct pn_calibration {
	int max_threads;
	double peak_gflops[PN_CALIB_MAX_THREADS + 1];    /* index: threads */
	double bandwidth_gbs[PN_CALIB_MAX_THREADS + 1];
	double node_overhead_us;    /* executor time per node of a tiny graph */
} pn_calibration;

/* Measures (takes a few seconds). threads = 0: 1..omp_get_max_threads(). */
int pn_calibrate(int threads, pn_calibration *out, char *err);
int pn_calibration_put(pn_writer *w, const pn_calibration *c, char *err);
/* 0 found, 1 none stored yet, -1 error. */
int pn_calibration_get(pn_rtxn *t, pn_calibration *out, char *err);

#endif
