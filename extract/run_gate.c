/*
 * run_gate.c - a counting gate in bytes (run_gate.h), one per process.
 */
#include "extract/run_gate.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/assert.h"
#include "common/err.h"

#define DEFAULT_MB 1024

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static size_t held, budget;
static int inside;
static pn_run_gate_stats seen;

static size_t env_budget(void)
{
	const char *s = getenv("PASSNET_RUN_MEMORY_MB");
	char *end;
	long long mb = s && *s ? strtoll(s, &end, 10) : 0;
	if (!s || !*s || *end || mb <= 0)
		mb = DEFAULT_MB;
	return (size_t)mb << 20;
}

/* under mu */
static size_t budget_locked(void)
{
	if (!budget)
		budget = env_budget();
	return budget;
}

size_t pn_run_gate_budget(void)
{
	pthread_mutex_lock(&mu);
	size_t b = budget_locked();
	pthread_mutex_unlock(&mu);
	return b;
}

void pn_run_gate_set_budget(size_t bytes)
{
	pthread_mutex_lock(&mu);
	budget = bytes;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

size_t pn_run_gate_enter(size_t bytes)
{
	pthread_mutex_lock(&mu);
	if (bytes > budget_locked())
		bytes = budget_locked();
	int waited = 0;
	/* alone, any run may start (the budget is all a run counts, so one
	 * counted as the whole budget runs alone) */
	while (inside && held + bytes > budget_locked()) {
		waited = 1;
		pthread_cond_wait(&cv, &mu);
	}
	inside++;
	held += bytes;
	seen.runs++;
	seen.waited += (uint64_t)waited;
	if (held > seen.most_held)
		seen.most_held = held;
	PN_ASSERT(inside == 1 || held <= budget_locked());
	pthread_mutex_unlock(&mu);
	return bytes;
}

void pn_run_gate_leave(size_t counted)
{
	pthread_mutex_lock(&mu);
	PN_ASSERT(inside > 0 && held >= counted);
	inside--;
	held -= counted;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

void pn_run_gate_stats_get(pn_run_gate_stats *out)
{
	pthread_mutex_lock(&mu);
	*out = seen;
	pthread_mutex_unlock(&mu);
}

int pn_run_too_big(size_t bytes, char *err)
{
	if (bytes <= PN_RUN_MAX_BYTES)
		return 0;
	pn_fail(err, "not run: it would hold about %zu MiB, over the %zu MiB a run may",
		bytes >> 20, PN_RUN_MAX_BYTES >> 20);
	return 1;
}
