/*
 * calibrate.h - this machine's limits, measured once and kept in the
 * store's meta table ("calibration"): peak FLOP/s (an FMA loop) and memory
 * bandwidth (a triad over a buffer larger than the last-level cache) for
 * 1..N threads, and the executor's fixed cost per node (a chain of tiny
 * nodes).  The profiler divides work by these to get roofline bounds.
 *
 * A calibration names its machine: the host name and CPU model.  Every one
 * stored is also kept as meta "machine/<id>", the id being the XXH3-64 of
 * that record's bytes in 16 lowercase hex digits: identical calibrations
 * share an id, different ones do not collide, and stores measured on other
 * machines can be merged without losing whose figures a profile's bounds
 * came from (each profile records its machine's id).  "calibration" stays
 * the store's current machine.
 *
 * The host name is gethostname()'s, or $PASSNET_HOSTNAME when set (a test
 * can play another node of a cluster with it).
 */
#ifndef PN_CALIBRATE_H
#define PN_CALIBRATE_H

#include "store/store.h"

#define PN_CALIB_MAX_THREADS 64
#define PN_MACHINE_ID_LEN 16      /* hex digits */
#define PN_MACHINE_TEXT 256       /* room for a host name or CPU model */

typedef struct pn_calibration {
	int max_threads;
	double peak_gflops[PN_CALIB_MAX_THREADS + 1];    /* index: threads */
	double bandwidth_gbs[PN_CALIB_MAX_THREADS + 1];
	double node_overhead_us;    /* executor time per node of a tiny graph */
	char host[PN_MACHINE_TEXT];       /* "": a record of the old layout, naming none */
	char cpu_model[PN_MACHINE_TEXT];
	char machine[PN_MACHINE_ID_LEN + 1];   /* its id once stored; "" before */
} pn_calibration;

/* Measures (takes a few seconds). threads = 0: 1..omp_get_max_threads(). */
int pn_calibrate(int threads, pn_calibration *out, char *err);
/* Writes meta "machine/<id>" and, as the current machine, "calibration";
 * the id goes to c->machine. */
int pn_calibration_put(pn_writer *w, pn_calibration *c, char *err);
/* The current machine.  0 found, 1 none stored yet, -1 error. */
int pn_calibration_get(pn_rtxn *t, pn_calibration *out, char *err);
/* c's id (the id its record would be stored under) into id. */
int pn_calibration_id(const pn_calibration *c, char id[PN_MACHINE_ID_LEN + 1], char *err);

/* This machine's name as calibrations record it: host (gethostname, or
 * $PASSNET_HOSTNAME) and CPU model ("unknown" when /proc/cpuinfo says none). */
void pn_machine_host(char host[PN_MACHINE_TEXT]);
void pn_machine_cpu_model(char model[PN_MACHINE_TEXT]);

/* The machine of that id.  0 found, 1 no such machine, -1 error. */
int pn_machine_get(pn_rtxn *t, const char *id, pn_calibration *out, char *err);
/* Every machine stored, in id order, in *out (malloc'd; free it); *n of them. */
int pn_machines_list(pn_rtxn *t, pn_calibration **out, int *n, char *err);

#endif
