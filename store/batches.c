/*
 * batches.c - the work/commit pipeline behind partition and dedup (batches.h).
 *
 * A ring of jobs: the calling thread (thread 0 of the team, which owns the
 * writer) loads jobs a batch at a time, up to four batches ahead of the
 * commits, and commits them in job order; every thread of the team, the
 * calling one too when it has nothing to load or commit, claims the next
 * job loaded and not yet claimed and works on it.  So no thread waits at
 * a batch's end for its slowest job, and the store's contents never depend
 * on the thread count.
 *
 * A ring slot is written by the calling thread before `published` passes
 * it and read by its claimer only; it is written again only after its job
 * is committed, which its claimer's `done` comes before.
 */
#include "store/batches.h"

#include "common/assert.h"
#include "common/claim.h"
#include "common/err.h"

#include <omp.h>
#include <stdlib.h>

typedef struct ring {
	const pn_batch_ops *ops;
	void *ud;
	int n_jobs, batch, cap;   /* cap: four batches */
	int *seq;                 /* claim order: entry k in seq[k % cap] */
	unsigned char *done;      /* per job: worked on (or never to be) */
	int64_t published;        /* entries loaded and claimable (common/claim.h) */
	int64_t claimed;          /* entries claimed */
	int finished;             /* the run is over: the others leave (atomic) */
} ring;

static int batch_len(int first, int n_jobs, int batch)
{
	if (first >= n_jobs)
		return 0;
	return n_jobs - first < batch ? n_jobs - first : batch;
}

/* Any thread: claims the next entry loaded and works on its job.  1, or 0
 * when every entry loaded is claimed. */
static int claim_and_work(void *ud)
{
	ring *r = ud;
	int64_t k = pn_claim_next(&r->claimed, &r->published);
	if (k < 0)
		return 0;
	int job = r->seq[k % r->cap];
	r->ops->work(r->ud, job);
	__atomic_store_n(&r->done[job], 1, __ATOMIC_RELEASE);
	return 1;
}

/* Entries [first, first+n) (batch [first, first+n) loaded): its jobs in
 * the order to start them, costliest first, ties in job order, so that the
 * one the others wait for at the end of a run is a cheap one. */
static void start_order(ring *r, int first, int n)
{
	size_t *cost = r->ops->cost ? malloc(sizeof(size_t) * (size_t)n) : NULL;
	for (int k = 0; k < n; k++) {
		int job = first + k;
		size_t c = cost ? r->ops->cost(r->ud, job) : 0;
		int m = k;   /* insertion: batches are tens of jobs */
		for (; m > 0 && cost && cost[m - 1] < c; m--) {
			cost[m] = cost[m - 1];
			r->seq[(first + m) % r->cap] = r->seq[(first + m - 1) % r->cap];
		}
		if (cost)
			cost[m] = c;
		r->seq[(first + m) % r->cap] = job;
	}
	free(cost);
}

/* Stops the claims: the entries nobody claimed yet are never worked on. */
static void stop_claims(ring *r)
{
	int64_t end = __atomic_load_n(&r->published, __ATOMIC_ACQUIRE);
	int64_t k = __atomic_exchange_n(&r->claimed, end, __ATOMIC_ACQ_REL);
	for (; k < end; k++)
		r->done[r->seq[k % r->cap]] = 1;
}

static int commit_job(ring *r, pn_writer *w, int job, char *err)
{
	/* a job's records commit together (pn_writer_hold) */
	pn_writer_hold(w);
	int rc = r->ops->commit(r->ud, w, job, err);
	char rerr[PN_ERRLEN];   /* a failed commit's own message comes first */
	return pn_writer_release(w, rc ? rerr : err) || rc ? -1 : 0;
}

/* The calling thread: loads, commits in job order, and works when it has
 * nothing else to do.  A failed load stops the loading (the jobs loaded
 * are still committed); a failed commit stops the commits and the claims,
 * and every job loaded is then released as soon as nobody works on it. */
static int run_ring(ring *r, pn_writer *w, pn_progress *prog, char *err)
{
	int loaded = 0, committed = 0, rc = 0, broken = 0;
	while (committed < loaded || (!rc && loaded < r->n_jobs)) {
		int n = rc ? 0 : batch_len(loaded, r->n_jobs, r->batch);
		if (n && loaded - committed <= r->cap - r->batch) {
			if (r->ops->load(r->ud, loaded, n, err)) {
				for (int i = loaded; i < loaded + n; i++)
					r->ops->release(r->ud, i);
				rc = -1;
				continue;
			}
			start_order(r, loaded, n);
			loaded += n;
			__atomic_store_n(&r->published, (int64_t)loaded, __ATOMIC_RELEASE);
			continue;
		}
		if (committed < loaded && __atomic_load_n(&r->done[committed], __ATOMIC_ACQUIRE)) {
			char cerr[PN_ERRLEN];   /* the first failure's message is kept */
			if (!broken && commit_job(r, w, committed, rc ? cerr : err)) {
				rc = -1;
				broken = 1;
				stop_claims(r);
			}
			r->ops->release(r->ud, committed++);
			pn_progress_step(prog, (uint64_t)committed, NULL);
			continue;
		}
		if (!claim_and_work(r))
			pn_idle_wait();   /* the others work on what is left */
	}
	PN_ASSERT(committed == loaded && (rc || loaded == r->n_jobs));
	return rc;
}

int pn_run_batches(pn_writer *w, int n_jobs, int batch, int threads, const pn_batch_ops *ops,
		   void *ud, pn_progress *prog, char *err)
{
	PN_ASSERT(batch > 0 && n_jobs >= 0);
	ring r = {.ops = ops, .ud = ud, .n_jobs = n_jobs, .batch = batch, .cap = 4 * batch};
	r.seq = malloc(sizeof(int) * (size_t)r.cap);
	r.done = calloc((size_t)n_jobs + 1, 1);
	if (!r.seq || !r.done) {
		free(r.seq);
		free(r.done);
		return pn_fail(err, "out of memory");
	}
	int rc = 0;
	/* thread 0 is the calling thread: the writer belongs to it */
	#pragma omp parallel num_threads(pn_stage_threads(threads))
	{
		if (omp_get_thread_num() == 0) {
			rc = run_ring(&r, w, prog, err);
			__atomic_store_n(&r.finished, 1, __ATOMIC_RELEASE);
		} else {
			pn_claim_until_finished(claim_and_work, &r, &r.finished);
		}
	}
	free(r.seq);
	free(r.done);
	return rc;
}
