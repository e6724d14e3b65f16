/*
 * claim.h - entries handed out to a team of threads one at a time.
 *
 * extract's window of units (extract/extract.c) and the stages' ring of
 * jobs (store/batches.c) have one thread publish entries in order and
 * every thread take the next one not yet taken: `published` only grows,
 * written by the publishing thread after the entry is whole (a release),
 * and `claimed` counts the entries taken.
 */
#ifndef PN_CLAIM_H
#define PN_CLAIM_H

#include <stdint.h>
#include <time.h>

/* The next entry published and not yet claimed, now claimed by this
 * thread; -1 when every entry published is claimed. */
static inline int64_t pn_claim_next(int64_t *claimed, const int64_t *published)
{
	int64_t k = __atomic_load_n(claimed, __ATOMIC_ACQUIRE);
	do {
		if (k >= __atomic_load_n(published, __ATOMIC_ACQUIRE))
			return -1;
	} while (!__atomic_compare_exchange_n(claimed, &k, k + 1, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return k;
}

/* A thread with nothing to claim waits this long before it looks again:
 * an entry (a model) takes milliseconds at least. */
static inline void pn_idle_wait(void)
{
	struct timespec ts = {0, 50 * 1000};
	nanosleep(&ts, NULL);
}

/* A team member's loop: take(ud) (1 when it claimed and did an entry, 0
 * when there was none) until there is none and *finished is set (by the
 * publishing thread, after its last entry). */
static inline void pn_claim_until_finished(int (*take)(void *ud), void *ud, const int *finished)
{
	for (;;) {
		if (take(ud))
			continue;
		if (__atomic_load_n(finished, __ATOMIC_ACQUIRE))
			return;
		pn_idle_wait();
	}
}

#endif
