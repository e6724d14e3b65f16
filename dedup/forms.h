/*
 * forms.h - dedup's work on one structure, shared by the two passes that
 * run it: the dedup stage over the candidates table (dedup/dedup.h) and the
 * streamed build, which cuts and hashes in one pass (dedup/stream.h).
 *
 * A structure's cuts are put into canonical form on one decoded model (any
 * of the structure's models gives the same), in any thread; their records
 * (subgraph, occurrence, hashed candidate) are then committed from the
 * writer's thread, in cut order.
 */
#ifndef PN_DEDUP_FORMS_H
#define PN_DEDUP_FORMS_H

#include "canon/form.h"
#include "common/err.h"
#include "common/util.h"
#include "extract/ingest.h"
#include "partition/stage.h"
#include "passnet.pb-c.h"
#include "store/store.h"

/* One cut of the structure. */
typedef struct pn_dd_cut {
	const char *strategy;  /* a pn_strategies name */
	uint32_t index;        /* its candidate index under (structure, strategy) */
	int32_t *nodes;        /* the cut's nodes in the model's graph */
	const int32_t *placed; /* the same as canonical positions, as its record
				  lists them (store/structures.h), within
				  nodes' allocation or borrowed with it */
	int n;
	int owns_nodes;        /* nodes is malloc'd here (else borrowed) */
	pn_form form;
	int ok;                /* form computed: the cut is stored */
	double flops, bytes_unfused;   /* the cut's work (runtime/cost.h), for exec's order */
	/* A group: the job's cuts of one strategy with the same canonical bytes
	 * (a kept block is a group of its own).  It is stored through its
	 * leader, the one of least index: the worker packs the subgraph record
	 * and the occurrence values (each a 2-byte length, then the value) for
	 * it alone, into the structure's `packed` buffer (offsets: the buffer
	 * moves as it grows). */
	int leader;            /* index of its group's leader among the job's cuts */
	int members;           /* the leader's: its group's size */
	int committed;         /* the leader's: -1 not yet, else pn_dd_commit_cut's 1 or 0 */
	size_t sub_off, sub_len, occ_off, occ_len;
	int occ_too_large;
} pn_dd_cut;

/* One structure (store/structures.h) and the model whose record is read. */
typedef struct pn_dd_job {
	uint8_t structure[16];
	uint8_t model[16];
	pn_dd_cut *c;
	int n, cap;
	char *binding;         /* the model's binding as occurrences record it, or NULL */
	pn_buf packed;
	char err[PN_ERRLEN];
	int failed;
} pn_dd_job;

/* Adds a cut to j (NULL: out of memory). */
pn_dd_cut *pn_dd_add_cut(pn_dd_job *j);
/* Computes the forms of j's cuts on m (decoded from record rec, typed by r)
 * and packs their records; cache (NULL: none) is the calling thread's.  On
 * failure j->failed and j->err are set. */
void pn_dd_forms(pn_dd_job *j, const pn_model *m, const Passnet__Model *rec,
		 const pn_infer_result *r, pn_form_cache *cache);
/* The subgraphs a run has stored, or found stored and compared, each with a
 * 64-bit hash of its record (XXH3-64, seeded apart from the key's XXH3-128).
 * A corpus holds each subgraph many times: a repeat whose record hashes the
 * same is known without reading the store back; one that hashes otherwise
 * (another FLOP count, or a collision) is compared byte for byte as before,
 * so a collision is still never merged.  Bounded by the unique subgraphs of
 * the run (PN_DD_SEEN_MAX; past it, repeats are read back as before). */
typedef struct pn_dd_seen pn_dd_seen;
#define PN_DD_SEEN_MAX (1u << 24)
pn_dd_seen *pn_dd_seen_new(void);   /* NULL: out of memory, no shortcut */
void pn_dd_seen_free(pn_dd_seen *s);

/* Commits cut c of j: a group's leader puts its subgraph (once per hash)
 * and its occurrences; the others take its outcome, so a group's cuts are
 * committed leader first (in index order).  1: it is hashed (c->form.hash;
 * the caller records that in its candidate), 0: it stays unhashed (no form,
 * or a hash collision), -1: error.  seen may be NULL. */
int  pn_dd_commit_cut(pn_writer *w, pn_dd_job *j, pn_dd_cut *c, pn_dd_seen *seen,
		      pn_stage_stats *stats, char *err);
void pn_dd_job_free(pn_dd_job *j);

/* One exact-form cache per thread (canon/form.h), or none when
 * PASSNET_FORM_CACHE=0 (so a test can check that the store is the same
 * either way).  Counts are printed on stderr when PASSNET_DEDUP_STATS is set. */
typedef struct pn_dd_caches {
	pn_form_cache **c;
	int n;
} pn_dd_caches;
void pn_dd_caches_open(pn_dd_caches *cs, int threads);
pn_form_cache *pn_dd_cache_of_thread(pn_dd_caches *cs);
void pn_dd_caches_close(pn_dd_caches *cs);

#endif
