/*
 * ranges.h - the values a subgraph's inputs take in the models it comes
 * from, so that it can be run on values like them.
 *
 * A subgraph's inputs are activations of real models, and their values
 * matter: a cut that starts inside a decomposed LayerNorm computes
 * Sqrt(E[x^2] - E[x]^2), one that follows an Add(x, 10) computes Log(y - 9),
 * and a generic generator feeds both values that make NaN.  So before
 * profiling, every model runs once on its own inputs (test_data_set_0, else
 * seeded ones, as `passnet run` does) while an observer records the finite
 * minimum and maximum of every float value; each of its cuts then maps the
 * decoded subgraph's inputs back to the model's values (pn_form's
 * input_values).  Stored per subgraph hash is the union over every model
 * holding it, so the same models give the same ranges in any order.
 *
 * The profiler, the export and the checker draw float inputs uniformly in
 * these ranges (pn_input_for).  A model that cannot run contributes
 * nothing; its subgraphs fall back to the generic draw.
 */
#ifndef PN_RANGES_H
#define PN_RANGES_H

#include <stdint.h>

#include "common/shard.h"
#include "store/store.h"

typedef struct pn_ranges_stats {
	int64_t models;      /* models run */
	int64_t failed;      /* models that could not run */
	int64_t not_run;     /* shape variants too big to run (extract/variants.h) */
	int64_t subgraphs;   /* subgraph range records written or widened */
	int64_t left;        /* models not run yet: the stage stopped at stop_at */
	double seconds;
} pn_ranges_stats;

/* Runs every model that has not contributed its ranges yet (in key order,
 * one at a time on `threads` threads) and merges its cuts' input ranges into
 * the ranges table, committing after each model (a killed run resumes).
 * shard (NULL: all) runs only the models whose key falls in it: the union
 * is a join (store/merge.h), so stores that ran the shards merge into the
 * ranges of one run over every model. */
int pn_ranges_stage(pn_store *st, int threads, uint64_t seed, double stop_at,
		    const pn_shard *shard, pn_ranges_stats *stats, char *err);
/* stop_at (pn_now() seconds; 0: none): no model but the first is started
 * after it, and the models left are run by the next call.  A subgraph's ranges are final
 * once every model it occurs in has contributed: */

/* The structures (store/structures.h) with a model that has not contributed
 * its ranges yet, sorted, as a malloc'd array of *n keys (NULL when none). */
uint8_t (*pn_ranges_pending(pn_rtxn *t, int64_t *n))[16];
/* 1 when subgraph `hash` occurs in one of those structures: its ranges may
 * still widen. */
int pn_ranges_pending_in(pn_rtxn *t, const uint8_t hash[16], uint8_t (*pending)[16], int64_t n);

#endif
