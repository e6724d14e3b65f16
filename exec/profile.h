/*
 * profile.h - measuring one subgraph, and the `passnet exec` stage that
 * measures every subgraph not yet measured by this executor build.
 *
 * One measurement:
 *   1. decode the subgraph (canon/decode.h); boundary dims that depend on
 *      data upstream are run at PN_ASSUMED_DIM (counted in assumed_dims);
 *      an unknown rank fails with "data-dependent shape";
 *   2. seeded inputs (pn_input_for: floats in the ranges their models showed,
 *      exec/ranges.h), weights regenerated from metadata;
 *   3. a correctness run: every output finite, and bitwise equal on a
 *      second run and on 1 thread against the timing thread count, which
 *      are timing's own first runs on each (no run more is made for them);
 *      subnormal values in the inputs and in that run's outputs are counted;
 *   4. warm-ups, then timed trials, as many as the protocol says
 *      (exec/protocol.h: adaptive stops once the median is far enough from
 *      every threshold, full runs W warm-ups and T trials); median and IQR;
 *      when IQR/median > PN_UNSTABLE_IQR the trials are measured again, up
 *      to max_repeats times, then the profile is marked unstable;
 *   5. with more than one timing thread, the same on 1 thread;
 *   6. cost (runtime/cost.h) against the calibration: roofline bounds, fused
 *      and unfused, and the flags, each with the threshold recorded in the
 *      profile (see profile.c for their definitions).
 */
#ifndef PN_PROFILE_H
#define PN_PROFILE_H

#include <stdint.h>

#include "common/shard.h"
#include "canon/decode.h"
#include "exec/calibrate.h"
#include "exec/protocol.h"
#include "exec/ranges.h"
#include "schemas/ir.h"
#include "passnet.pb-c.h"
#include "store/store.h"


typedef struct pn_profile_opts {
	int threads;         /* timing threads (0: all) */
	int warmups;         /* default 3 */
	int trials;          /* default 5 */
	int max_repeats;     /* default 3 */
	int protocol;        /* enum pn_protocol (exec/protocol.h); default adaptive */
	uint64_t seed;       /* default 1 */
	double budget_s;     /* stop starting new subgraphs after this (0: none) */
	int64_t limit;       /* at most this many subgraphs (0: all) */
	unsigned strategies; /* bit i: pn_strategies[i]; 0: every subgraph */
	int min_nodes;       /* only subgraphs with at least this many nodes */
	/* bit i: pn_flag_names[i].  When set, only subgraphs whose stored
	 * profile carries one of these flags are measured, again, whichever
	 * build measured them (a run on a busy machine, a fixed kernel). */
	unsigned redo_flags;
	/* Only the subgraphs whose hash falls in shard (n = 0: all), and of
	 * those only the ones accept says yes to, when it is set (passnet-mpi:
	 * the batch of hashes rank 0 handed out).  The ranges phase runs every
	 * model either way (but with ranges_only): its records are the same in
	 * every shard. */
	pn_shard shard;
	/* Only the ranges phase, and with a shard only the models whose key
	 * falls in it (exec/ranges.h): no calibration, nothing profiled. */
	int ranges_only;
	int (*accept)(void *ud, const uint8_t hash[16]);
	void *accept_ud;
	/* When set, the stage stops after planning: it calls on_plan for each
	 * subgraph it would measure, in the order it would, and measures none
	 * (calibration and the ranges phase run as usual). */
	void (*on_plan)(void *ud, const uint8_t hash[16]);
	void *on_plan_ud;
} pn_profile_opts;

/* Where the time of measuring went, in seconds summed over subgraphs (the
 * set-up and correctness parts of different subgraphs overlap in time when
 * they run on several threads: see profile_stage.c). */
typedef struct pn_profile_times {
	double decode;    /* canonical bytes -> model */
	double infer;     /* shapes and types of every value */
	double inputs;    /* seeded inputs */
	double weights;   /* weights regenerated from their statistics */
	double correct;   /* the correctness run (weights aside) */
	int64_t check_runs; /* runs made for correctness alone: one per subgraph
			     * checked (the comparisons use timing's runs) */
	double timing;    /* warm-ups and trials, on N threads and on 1 */
	double cost;      /* cost, bounds, flags and freeing the session */
} pn_profile_times;

typedef struct pn_profile_stats {
	pn_ranges_stats ranges;   /* the models run first (exec/ranges.h) */
	int64_t todo, profiled, failed, unstable, skipped_budget;
	int64_t waiting_ranges;   /* not planned: a model of theirs has not run for ranges yet */
	int64_t flag_count[16];   /* by enum pn_flag (PN_N_FLAGS of them) */
	double seconds;
	/* wall-clock seconds of the stage's steps */
	double calibration_s;  /* reading (or measuring) the calibration */
	double plan_s;         /* choosing what to measure */
	double read_s;         /* reading canonical bytes and input ranges */
	double check_s;        /* set-up and correctness of each batch (parallel) */
	double timing_s;       /* timing each subgraph, alone, and its flags */
	double commit_s;       /* writing and committing profiles */
	double profile_s;      /* from the first subgraph's read to the last commit */
	pn_profile_times work; /* summed per subgraph */
} pn_profile_stats;

/* The flags a profile can carry; the names (pn_flag_names) are what the
 * store, `ls --flag`, `exec --redo` and the report spell them, and the
 * order is that of pn_profile_stats.flag_count. */
enum pn_flag {
	PN_FLAG_SLOW, PN_FLAG_FUSIBLE, PN_FLAG_OVERHEAD, PN_FLAG_PARALLEL, PN_FLAG_FAILED,
	PN_FLAG_UNSTABLE, PN_FLAG_COMPILER_REGRESSION, PN_FLAG_COMPILER_GAP, PN_N_FLAGS
};
extern const char *const pn_flag_names[PN_N_FLAGS];
extern const int pn_n_flags;   /* PN_N_FLAGS */
/* Index of a flag in pn_flag_names, or -1 for a name that is none. */
int pn_flag_index(const char *name);

int pn_exec_stage(pn_store *st, const pn_profile_opts *o, pn_profile_stats *stats, char *err);

/* Measures one subgraph from its canonical bytes into p (strings and arrays
 * malloc'd: free with pn_profile_clear), its float inputs drawn in
 * ranges[0..n_ranges) where known, its weights regenerated from the
 * statistics ws (NULL: blind; canon/decode.h).  Never fails as a call: a subgraph that
 * cannot run gets status "failed" and the reason. */
void pn_profile_one(const uint8_t *canon, size_t len, const pn_range *ranges, int n_ranges,
		    const pn_subgraph_weights *ws, const pn_profile_opts *o, const pn_calibration *cal,
		    Passnet__Profile *p);
void pn_profile_clear(Passnet__Profile *p);

/* Records where p's inputs' ranges came from: the model's run on its real
 * weights (from_real_run 1) or not. */
void pn_profile_input_source(Passnet__Profile *p, int from_real_run);

/* Subnormal (denormal) float16, bfloat16, float32 and float64 values in t,
 * and in the items of a sequence or optional; zeros, normals, infinities,
 * NaNs and other types count none.  Read as bit patterns: one pass, no
 * float arithmetic.  Profiles record it (denormal_inputs, _outputs). */
int64_t pn_tensor_subnormals(const pn_tensor *t);

/*
 * pn_profile_one in two halves, so that the half that is not timed can run
 * for several subgraphs at once while the timed half runs alone:
 * pn_profile_check fills p's fixed fields, decodes, draws the inputs and
 * makes the session, and makes the correctness run (the comparisons owed
 * to it are settled by pn_profile_time's first runs); it returns the
 * measurement ready to be timed, or NULL when p is already final (failed).
 * It may run on any thread, concurrently with other pn_profile_check calls
 * (never with a pn_profile_time).  pn_profile_time times it (steps 4-6 of
 * the protocol), completes p and frees the measurement; pn_profile_drop
 * frees one that will not be timed.  Times are added to *tm.
 */
typedef struct pn_measure pn_measure;
pn_measure *pn_profile_check(const uint8_t *canon, size_t len, const pn_range *ranges,
			     int n_ranges, const pn_subgraph_weights *ws, const pn_profile_opts *o,
			     const pn_calibration *cal, Passnet__Profile *p, pn_profile_times *tm);
void pn_profile_time(pn_measure *ms, const pn_profile_opts *o, const pn_calibration *cal,
		     Passnet__Profile *p, pn_profile_times *tm);
void pn_profile_drop(pn_measure *ms);
/* The bytes its values hold, as inferred: what keeping it costs in memory. */
double pn_measure_bytes(const pn_measure *ms);
/* A checked measurement's graph, its inputs (as the timing feeds them) and
 * the outputs of its correctness run: the reference another backend is
 * judged against (exec/baseline.c). */
const pn_graph *pn_measure_graph(const pn_measure *ms);
pn_tensor *const *pn_measure_inputs(const pn_measure *ms);
pn_tensor *const *pn_measure_outputs(const pn_measure *ms);

#endif
