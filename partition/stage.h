/*
 * stage.h - the partition stage over the store (and the counts it and the
 * dedup stage, dedup/dedup.h, report).
 *
 * For every stored model whose structure (store/structures.h) has no list
 * yet for a requested strategy, cut the model and store its candidates
 * under the structure, one list per strategy; list every model under its
 * structure.  Models are decoded
 * in parallel, in batches, and committed from one thread in key order; only
 * what is missing is done, so a killed run resumes.
 */
#ifndef PN_PARTITION_STAGE_H
#define PN_PARTITION_STAGE_H

#include <stdint.h>

#include "common/keymap.h"
#include "common/shard.h"
#include "common/util.h"
#include "extract/ingest.h"
#include "partition/partition.h"
#include "schemas/strategies.h"
#include "store/store.h"
#include "store/structures.h"

typedef struct pn_stage_stats {
	uint64_t models;          /* models worked on, not counting ... */
	uint64_t variants;        /* ... their shape variants (extract/variants.h) */
	uint64_t structures;      /* structures cut or hashed (store/structures.h) */
	uint64_t candidates;      /* candidates written (partition) or hashed (dedup) */
	uint64_t per_strategy[PN_N_STRATEGIES];
	uint64_t new_subgraphs;
	uint64_t collisions;      /* equal hash, different bytes: reported, never merged */
	uint64_t approximate;     /* canonical searches that hit their budget */
	uint64_t failed;          /* models that could not be processed */
	double seconds;
} pn_stage_stats;

/* Adds every count (and the seconds) of b to a: one stage run apart. */
void pn_stage_stats_add(pn_stage_stats *a, const pn_stage_stats *b);

/* strategies: a mask of schemas/strategies.def entries (0 = all); shard
 * (NULL: all) keeps the structures whose key falls in it (common/shard.h). */
int pn_partition_stage(pn_store *st, unsigned strategies, int threads, const pn_shard *shard,
		       pn_stage_stats *stats, char *err);

/* Keys of the candidates table: structure, strategy name, 0, index (big
 * endian), at most PN_CANDIDATE_KEY_MAX bytes; index PN_CANDIDATE_DONE
 * holds the (structure, strategy) list, PN_BLOCK_INDEX0 + i a kept block. */
#define PN_CANDIDATE_KEY_MAX 64
size_t pn_candidate_key(uint8_t *key, const uint8_t structure[16], const char *strategy,
			uint32_t index);
#define PN_CANDIDATE_DONE 0xffffffffu
/* A corpus block kept as a typical candidate (dedup/blocks.h) has index
 * PN_BLOCK_INDEX0 + its index among its structure's blocks, apart from the
 * repeats' 0, 1, ... so that which blocks are kept changes no other key. */
#define PN_BLOCK_INDEX0 0x40000000u

/* Keys of the blocks table: hash, structure, index (big endian). */
#define PN_BLOCK_KEY_LEN 36
void pn_block_key(uint8_t key[PN_BLOCK_KEY_LEN], const pn_key *hash, const uint8_t structure[16],
		  uint32_t index);

/* --- the stage's parts, which the streamed build (dedup/stream.h) runs with
 * dedup's in one pass ------------------------------------------------------------------ */

/* One model.  Models are planned by record key (store/records.h); the
 * first model of a record key in the plan is its cutter: it resolves the
 * record key's alias when the store has none (a canonical labelling of the
 * whole graph, store/structures.h) and cuts the structure with the
 * strategies it has no list for and no other job of the run has
 * claimed (todo).  Every model, that one too, is then listed under its
 * structure, unless it is already. */
typedef struct pn_part_job {
	uint8_t key[16];
	pn_key record_key;
	pn_key structure;       /* known at plan when aliased, else after the cutter's work */
	int resolve;            /* no alias yet: the cutter computes and commits it */
	unsigned todo;          /* strategies (bit i = pn_strategies[i]) to run */
	int link;               /* list the model under its structure */
	int cutter;             /* the job that cuts this record key (itself, or earlier) */
	int variant;            /* a shape variant (extract/variants.h) */
	void *record;           /* copy of the model record (when todo) */
	size_t len;
	/* results */
	pn_alias alias;         /* when resolve: the alias to commit */
	pn_cuts cuts[PN_N_STRATEGIES];     /* node indices in the model's graph */
	pn_cuts placed[PN_N_STRATEGIES];   /* the same cuts as canonical positions */
	pn_block_list blocks;       /* when typical is cut: its corpus blocks */
	pn_cuts blocks_placed;  /* the same as canonical positions */
	char err[PN_ERRLEN];
	int failed;
} pn_part_job;

/* The (structure, strategy) pairs some job of the run has taken to cut, so
 * that two record keys of one structure (a re-export and its original) in
 * one run cut it once; shared by the worker threads. */
typedef struct pn_claims pn_claims;

typedef struct pn_part_plan {
	unsigned wanted;          /* strategies asked for (a mask, never 0) */
	const pn_shard *shard;    /* the record keys this run works on (NULL: all) */
	pn_store *st;             /* read by the workers (the lists) */
	pn_claims *claims;
	pn_rtxn *t;               /* while planning */
	pn_part_job *jobs;
	int n, cap;
	pn_keymap seen;           /* record keys planned -> their cutter (stage.c) */
} pn_part_plan;

/* Sets up an empty plan for a run: 0, or -1 (out of memory). */
int  pn_part_plan_init(pn_part_plan *p, pn_store *st, unsigned strategies, const pn_shard *shard,
		       char *err);
/* Adds to the plan the models whose key starts with prefix (plen 0: all),
 * in key order, that have something to do.  0, or -1 (out of memory). */
int  pn_part_plan_models(pn_part_plan *p, pn_rtxn *t, const void *prefix, size_t plen);
/* Empties the plan (its jobs freed, the structures seen forgotten), ready
 * for the next models once what it planned is committed. */
void pn_part_plan_clear(pn_part_plan *p);
void pn_part_plan_free(pn_part_plan *p);
/* Copies the records of the jobs that cut (todo != 0). */
int  pn_part_load(pn_store *st, pn_part_job *jobs, int n, char *err);
/* After pn_part_load: job j's rough cost (its record's bytes; 0 when it
 * cuts nothing), the order pn_run_batches starts jobs in. */
size_t pn_part_job_cost(const pn_part_job *j);
/* Works on cutter j's model, decoded into m from rec and typed by r: finds
 * its structure and canonical positions, claims the strategies left to cut
 * (j->todo becomes them) and cuts.  0, or -1 with j->failed and j->err
 * set. */
int  pn_part_cut(pn_part_plan *p, pn_part_job *j, const pn_model *m, const Passnet__Model *rec,
		 const pn_infer_result *r);
/* "name=v,name=v" of the binding a model is cut at, with a generalized
 * batch last ("batch=B (generalized)"); NULL when it binds nothing.  Part of
 * the structure key, and of every occurrence (dedup/forms.h). */
char *pn_part_binding_text(const pn_model *m, const Passnet__Model *rec);
/* One candidate of a (structure, strategy) list (schemas/passnet.proto,
 * Candidate.entries). */
typedef struct pn_cand_entry {
	const int32_t *nodes;   /* canonical positions, ascending */
	int n;
	int hashed;             /* subgraph is its canonical hash */
	pn_key subgraph;
	int approximate;        /* the canonical search hit its budget */
} pn_cand_entry;
/* Puts what job j's candidate `index` of strategy s (pn_strategies[s])
 * stores besides its list entry e (nodes filled in, unhashed), and says in
 * e whether it was hashed. */
typedef int (*pn_cand_put_fn)(void *ud, pn_writer *w, const pn_part_job *j, int s, int index,
			      pn_cand_entry *e, char *err);
/* Commits job i: the alias it resolved, its candidates through put (NULL:
 * nothing but the lists, every entry unhashed), each
 * (structure, strategy) list (j->placed's, in one record), its listing
 * under its structure (or its error). */
int  pn_part_commit(pn_writer *w, pn_part_job *jobs, int i, pn_stage_stats *stats,
		    pn_cand_put_fn put, void *ud, char *err);
void pn_part_job_free(pn_part_job *j);

/* The list record of (structure, strategy): its n candidates, in index
 * order; blocks marks typical's list as having its corpus blocks listed. */
int pn_candidate_list_put(pn_writer *w, const uint8_t structure[16], const char *strategy,
			  const pn_cand_entry *e, int n, int blocks, char *err);
/* A record of its own, for a corpus block kept as a typical candidate
 * (index PN_BLOCK_INDEX0 + its block index): its nodes, and once dedup has
 * run, its subgraph hash (NULL: none yet) and whether the canonical search
 * hit its budget. */
int pn_candidate_record_put(pn_writer *w, const uint8_t structure[16], const char *strategy,
			    uint32_t idx, const int32_t *nodes, int n, const pn_key *subgraph,
			    int approximate, char *err);

/* Candidate `index` of (structure, strategy)'s hash into out: 0, or 1 when
 * it is not stored or not hashed, -1 when its record does not decode. */
int pn_candidate_hash(pn_rtxn *t, const uint8_t structure[16], const char *strategy,
		      uint32_t index, pn_key *out);

/* Whether the candidates table may hold candidates without a subgraph hash:
 * partition marks it before its first commit, dedup clears the mark once
 * every candidate has been tried, so `build` runs the candidates-table dedup
 * only after a partition run of its own (the streamed pass hashes what it
 * cuts). */
int pn_unhashed_mark(pn_writer *w, char *err);
int pn_unhashed_clear(pn_writer *w, char *err);
int pn_unhashed_marked(pn_rtxn *t);

#endif
