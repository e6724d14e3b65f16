/*
 * blocks.c - keeping the corpus blocks held twice (blocks.h).
 */
#include "dedup/blocks.h"

#include <stdlib.h>
#include <string.h>

#include "common/assert.h"
#include "common/err.h"
#include "dedup/dedup.h"
#include "store/records.h"
#include "store/structures.h"
#include "store/tables.h"

/* blocks to keep gathered (a bucket of hashes at a time) before they are
 * put and hashed: memory stays bounded however many the first build of a
 * large corpus keeps */
#define KEEP_BATCH 4096

typedef struct keep {
	uint8_t structure[16];
	uint32_t index;
	uint32_t n;
	uint32_t nodes[PN_CUT_MAX_NODES];
} keep;

/* The walk over the blocks table: the entries of the current hash (their
 * values as the read transaction holds them: only a block to keep is
 * decoded), then the blocks to keep. */
typedef struct scan {
	pn_rtxn *t;
	uint8_t (*entry)[PN_BLOCK_KEY_LEN];
	pn_bytes *val;
	int n, cap;
	keep *todo;
	int n_todo, todo_cap;
	int oom;
} scan;

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int kept_already(pn_rtxn *t, const uint8_t *entry)
{
	uint8_t key[PN_CANDIDATE_KEY_MAX];
	size_t kl = pn_candidate_key(key, entry + 16, pn_strategies[PN_STRATEGY_typical].name,
				     PN_BLOCK_INDEX0 + be32(entry + 32));
	pn_bytes v;
	return pn_get(t, PN_T_CANDIDATES, key, kl, &v) == 0;
}

static keep *todo_add(scan *s)
{
	if (s->n_todo == s->todo_cap) {
		int cap = s->todo_cap ? 2 * s->todo_cap : 64;
		keep *k = realloc(s->todo, sizeof(keep) * (size_t)cap);
		if (!k)
			return NULL;
		s->todo = k;
		s->todo_cap = cap;
	}
	return &s->todo[s->n_todo++];
}

/* The model a place of structure st stands for: the base of a shape
 * variant, else the structure itself.  Walks st's models until one stands
 * for another model than *first (set by the first one seen): 1 then. */
typedef struct roots {
	pn_rtxn *t;
	const uint8_t *structure;
	pn_key first;
	int have_first;
} roots;

static int root_of_model(void *ud, const uint8_t model[16])
{
	roots *r = ud;
	pn_key root;
	memcpy(root.b, r->structure, 16);
	pn_bytes v;
	uint8_t base[16];
	if (pn_get(r->t, PN_T_MODELS, model, 16, &v) == 0 && pn_model_variant_of(v, base) &&
	    pn_model_structure(r->t, base, &root) != 0)
		return 0;   /* a base not aliased yet: counted once it is */
	if (!r->have_first) {
		r->first = root;
		r->have_first = 1;
		return 0;
	}
	return memcmp(root.b, r->first.b, 16) != 0;
}

/* Whether the n (>= 2) entries of one hash are two places: two in one
 * structure (a block a model holds twice, apart), or in structures that
 * stand for two models.  The shape variants of one model are not two: a
 * block whose shapes no varied dim reaches (a head after global pooling)
 * is alike in every variant without being repeated anywhere. */
static int held_twice(pn_rtxn *t, uint8_t (*entry)[PN_BLOCK_KEY_LEN], int n)
{
	for (int i = 1; i < n; i++)   /* in key order: a structure's entries are adjacent */
		if (!memcmp(entry[i] + 16, entry[i - 1] + 16, 16))
			return 1;
	roots r = {.t = t};
	for (int i = 0; i < n; i++) {
		r.structure = entry[i] + 16;
		if (pn_structure_models(t, r.structure, root_of_model, &r) > 0)
			return 1;
	}
	return 0;
}

/* The entries of one hash: when they are two places, each one not kept yet
 * is to be.  (A hash whose entries are all kept is settled: its places are
 * not looked up again.) */
static void close_group(scan *s)
{
	int n = s->n;
	s->n = 0;
	if (n < 2)
		return;   /* one place: nothing to keep */
	uint8_t *todo = calloc((size_t)n, 1);
	int any = 0;
	for (int i = 0; todo && i < n; i++)
		any |= todo[i] = !kept_already(s->t, s->entry[i]);
	if (!todo) {
		s->oom = 1;
		return;
	}
	if (any && !held_twice(s->t, s->entry, n))
		memset(todo, 0, (size_t)n);
	for (int i = 0; i < n && !s->oom; i++) {
		Passnet__Block *b = todo[i] ? pn_blocks_unpack(s->val[i]) : NULL;
		if (b && b->n_nodes <= PN_CUT_MAX_NODES) {   /* a malformed one is never kept */
			keep *k = todo_add(s);
			if (!k) {
				s->oom = 1;
			} else {
				memcpy(k->structure, s->entry[i] + 16, 16);
				k->index = be32(s->entry[i] + 32);
				k->n = (uint32_t)b->n_nodes;
				memcpy(k->nodes, b->nodes, sizeof(uint32_t) * k->n);
			}
		}
		pn_blocks_free(b);
	}
	free(todo);
}

static int scan_entry(void *ud, pn_bytes key, pn_bytes val)
{
	scan *s = ud;
	if (key.len != PN_BLOCK_KEY_LEN)
		return 0;   /* not this passnet's: doctor's to report */
	if (s->n && memcmp(s->entry[0], key.data, 16))
		close_group(s);
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 8;
		void *e = realloc(s->entry, sizeof(*s->entry) * (size_t)cap);
		if (e)
			s->entry = e;
		void *r = realloc(s->val, sizeof(*s->val) * (size_t)cap);
		if (r)
			s->val = r;
		if (!e || !r) {
			s->oom = 1;
			return 1;
		}
		s->cap = cap;
	}
	memcpy(s->entry[s->n], key.data, PN_BLOCK_KEY_LEN);
	s->val[s->n++] = val;
	return 0;
}

static int cmp_structure(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

/* Puts the blocks gathered as unhashed candidates, then hashes them. */
static int keep_gathered(pn_store *st, scan *s, int threads, pn_stage_stats *cut,
			 pn_stage_stats *hashed, char *err)
{
	pn_writer *w;
	if (pn_writer_open(st, &w, 0, err))
		return -1;
	/* marked first: a kill before they are hashed leaves them to dedup */
	int rc = pn_unhashed_mark(w, err);
	for (int i = 0; !rc && i < s->n_todo; i++) {
		keep *k = &s->todo[i];
		int32_t nodes[PN_CUT_MAX_NODES];
		for (uint32_t q = 0; q < k->n; q++)
			nodes[q] = (int32_t)k->nodes[q];
		rc = pn_candidate_record_put(w, k->structure, pn_strategies[PN_STRATEGY_typical].name,
					     PN_BLOCK_INDEX0 + k->index, nodes, (int)k->n, NULL, 0, err);
	}
	char cerr[PN_ERRLEN];
	if (pn_writer_close(w, rc ? cerr : err))
		rc = -1;
	if (rc)
		return -1;
	if (cut) {
		cut->candidates += (uint64_t)s->n_todo;
		cut->per_strategy[PN_STRATEGY_typical] += (uint64_t)s->n_todo;
	}
	/* the structures, once each, in key order */
	uint8_t (*structures)[16] = malloc(16 * (size_t)s->n_todo + 1);
	if (!structures)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < s->n_todo; i++)
		memcpy(structures[i], s->todo[i].structure, 16);
	qsort(structures, (size_t)s->n_todo, 16, cmp_structure);
	int n = 0;
	for (int i = 0; i < s->n_todo; i++)
		if (!n || memcmp(structures[n - 1], structures[i], 16))
			memcpy(structures[n++], structures[i], 16);
	pn_stage_stats sub = {0};
	rc = pn_dedup_structures(st, (const uint8_t (*)[16])structures, n, threads, NULL, &sub, err);
	free(structures);
	/* a structure the keep pass hashes again was counted when it was hashed
	 * first (this run or an earlier one): its candidates count, not it */
	sub.structures = sub.models = 0;
	pn_stage_stats_add(hashed, &sub);
	s->n_todo = 0;
	return rc;
}

int pn_blocks_keep(pn_store *st, int threads, pn_stage_stats *cut, pn_stage_stats *hashed,
		   char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int64_t entries = pn_count(t, PN_T_BLOCKS);
	int was_marked = pn_unhashed_marked(t);
	pn_rtxn_end(t);
	if (entries < 2)
		return 0;
	/* the table a bucket of hashes (their first byte or two) at a time */
	size_t plen = entries > 256 * KEEP_BATCH ? 2 : 1;
	uint32_t buckets = 1u << (8 * plen);
	scan s = {0};
	int rc = 0, kept_any = 0;
	for (uint32_t b = 0; !rc && b < buckets; b++) {
		uint8_t prefix[2] = {(uint8_t)(b >> (8 * (plen - 1))), (uint8_t)b};
		if (pn_rtxn_begin(st, &s.t, err)) {
			rc = -1;
			break;
		}
		rc = pn_foreach(s.t, PN_T_BLOCKS, prefix, plen, scan_entry, &s) < 0;
		close_group(&s);
		pn_rtxn_end(s.t);
		if (rc || s.oom)
			rc = pn_fail(err, "%s", rc ? "reading the blocks table failed" : "out of memory");
		else if (s.n_todo >= KEEP_BATCH || (b + 1 == buckets && s.n_todo)) {
			kept_any = 1;
			rc = keep_gathered(st, &s, threads, cut, hashed, err);
		}
	}
	free(s.entry);
	free(s.val);
	free(s.todo);
	if (rc || !kept_any || was_marked)
		return rc;
	/* every block put was tried: the mark this pass set goes */
	pn_writer *w;
	if (pn_writer_open(st, &w, 0, err))
		return -1;
	rc = pn_unhashed_clear(w, err);
	char cerr[PN_ERRLEN];
	if (pn_writer_close(w, rc ? cerr : err))
		rc = -1;
	return rc;
}
