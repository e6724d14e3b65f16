/*
 * batches.h - parallel work on batches of jobs, committed through the store's
 * one writer.
 *
 * The partition and dedup stages have the same shape: a list of jobs (one
 * per model), work that any thread may do, and results that only the thread
 * owning the LMDB writer may put.  pn_run_batches pipelines them: the
 * calling thread loads jobs a batch at a time, up to four batches ahead,
 * and commits them in job order, so the store's contents never depend on
 * the thread count; every thread, the calling one when it has nothing to
 * load or commit, takes the next job loaded and works on it, so no thread
 * waits at a batch's end (batches.c).
 */
#ifndef PN_STORE_BATCHES_H
#define PN_STORE_BATCHES_H

#include "common/util.h"
#include "store/store.h"

typedef struct pn_batch_ops {
	/* Calling thread, before batch [first, first+n) is worked on: read what
	 * the work needs from the store.  Non-zero stops the run. */
	int (*load)(void *ud, int first, int n, char *err);
	/* Any thread: job i's work, with no store access. */
	void (*work)(void *ud, int i);
	/* Calling thread, in job order: job i's results.  Non-zero stops the run. */
	int (*commit)(void *ud, pn_writer *w, int i, char *err);
	/* Calling thread: job i's memory, after its commit (or when the run stops). */
	void (*release)(void *ud, int i);
	/* Optional, calling thread, after load: job i's rough cost (its
	 * record's bytes).  A batch's costliest jobs start first, so that the
	 * one the others wait for at the run's end is a cheap one. */
	size_t (*cost)(void *ud, int i);
} pn_batch_ops;

/* Runs jobs [0, n_jobs) in batches of `batch` on `threads` threads (0: the
 * OpenMP default), advancing `prog` after each batch.  0 or -1 (err set). */
int pn_run_batches(pn_writer *w, int n_jobs, int batch, int threads, const pn_batch_ops *ops,
		   void *ud, pn_progress *prog, char *err);

#endif
