/*
 * batches.c - the work/commit pipeline behind partition and dedup (batches.h).
 */
#include "store/batches.h"

#include "common/err.h"
#include "common/assert.h"

#include <omp.h>
#include <stdlib.h>

static int batch_len(int first, int n_jobs, int batch)
{
	if (first >= n_jobs)
		return 0;
	return n_jobs - first < batch ? n_jobs - first : batch;
}

static int commit_batch(pn_writer *w, int first, int n, const pn_batch_ops *ops, void *ud,
			char *err)
{
	/* a job's records commit together (pn_writer_hold) */
	for (int i = first; i < first + n; i++) {
		PN_ASSERT(i >= 0);
		pn_writer_hold(w);
		int rc = ops->commit(ud, w, i, err);
		char rerr[PN_ERRLEN];   /* a failed commit's own message comes first */
		if (pn_writer_release(w, rc ? rerr : err) || rc)
			return -1;
	}
	return 0;
}

typedef struct start {
	int job;
	size_t cost;
} start;

/* The order to start batch [first, first+n) in: costliest first, ties in
 * job order (the order of commits never changes: only when work starts). */
static void start_order(start *order, int first, int n, const pn_batch_ops *ops, void *ud)
{
	for (int k = 0; k < n; k++) {
		start s = {first + k, ops->cost ? ops->cost(ud, first + k) : 0};
		int m = k;   /* insertion: batches are tens of jobs */
		for (; m > 0 && order[m - 1].cost < s.cost; m--)
			order[m] = order[m - 1];
		order[m] = s;
	}
}

int pn_run_batches(pn_writer *w, int n_jobs, int batch, int threads, const pn_batch_ops *ops,
		   void *ud, pn_progress *prog, char *err)
{
	int nt = pn_stage_threads(threads);
	int prev = 0, prev_n = 0, rc = 0;
	start *order = malloc(sizeof(start) * (size_t)(batch > 0 ? batch : 1));
	if (!order)
		return pn_fail(err, "out of memory");
	for (int b = 0; !rc && (b < n_jobs || prev_n); b += batch) {
		int n = batch_len(b, n_jobs, batch);
		if (n && ops->load(ud, b, n, err)) {
			for (int i = b; i < b + n; i++)
				ops->release(ud, i);
			rc = -1;
			n = 0;
		}
		start_order(order, b, n, ops, ud);
		int crc = 0;
		/* batch b-1 commits while batch b works: each job once, in order */
		PN_ASSERT(!prev_n || prev + prev_n == (b < n_jobs ? b : n_jobs));
		/* master: the writer belongs to this thread; the others run the
		 * tasks, and every thread helps at the region's closing barrier */
		#pragma omp parallel num_threads(nt)
		#pragma omp master
		{
			for (int k = 0; k < n; k++) {
				int i = order[k].job;
				#pragma omp task firstprivate(i)
				ops->work(ud, i);
			}
			if (prev_n)
				crc = commit_batch(w, prev, prev_n, ops, ud, err);
		}
		if (crc)
			rc = -1;
		for (int i = prev; i < prev + prev_n; i++)
			ops->release(ud, i);
		pn_progress_step(prog, (uint64_t)(b + n), NULL);
		prev = b;
		prev_n = n;
	}
	for (int i = prev; i < prev + prev_n; i++)   /* a stopped run's last batch */
		ops->release(ud, i);
	free(order);
	return rc;
}
