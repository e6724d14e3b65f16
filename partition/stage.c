/*
 * stage.c - the partition stage (see stage.h).
 */
#include "partition/stage.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/assert.h"
#include "common/util.h"
#include "canon/form.h"
#include "runtime/infer.h"
#include "extract/ingest.h"
#include "partition/partition.h"
#include "passnet.pb-c.h"
#include "store/batches.h"
#include "store/records.h"
#include "store/structures.h"
#include "store/tables.h"

#define BATCH_MODELS 32

size_t pn_candidate_key(uint8_t *key, const uint8_t structure[16], const char *strategy,
			uint32_t index)
{
	size_t l = strlen(strategy);
	PN_ASSERT(21 + l <= PN_CANDIDATE_KEY_MAX);   /* the callers' key buffers */
	memcpy(key, structure, 16);
	memcpy(key + 16, strategy, l);
	key[16 + l] = 0;
	key[17 + l] = (uint8_t)(index >> 24);
	key[18 + l] = (uint8_t)(index >> 16);
	key[19 + l] = (uint8_t)(index >> 8);
	key[20 + l] = (uint8_t)index;
	return 21 + l;
}

void pn_block_key(uint8_t key[PN_BLOCK_KEY_LEN], const pn_key *hash, const uint8_t structure[16],
		  uint32_t index)
{
	memcpy(key, hash->b, 16);
	memcpy(key + 16, structure, 16);
	key[32] = (uint8_t)(index >> 24);
	key[33] = (uint8_t)(index >> 16);
	key[34] = (uint8_t)(index >> 8);
	key[35] = (uint8_t)index;
}

void pn_stage_stats_add(pn_stage_stats *a, const pn_stage_stats *b)
{
	a->models += b->models;
	a->variants += b->variants;
	a->structures += b->structures;
	a->candidates += b->candidates;
	for (int s = 0; s < PN_N_STRATEGIES; s++)
		a->per_strategy[s] += b->per_strategy[s];
	a->new_subgraphs += b->new_subgraphs;
	a->collisions += b->collisions;
	a->approximate += b->approximate;
	a->failed += b->failed;
	a->seconds += b->seconds;
}

/* --- candidates without a hash ------------------------------------------------------- */

static const char unhashed_key[] = "candidates_unhashed";

int pn_unhashed_mark(pn_writer *w, char *err)
{
	Passnet__Meta m;
	passnet__meta__init(&m);
	m.has_version = 1;
	m.version = PN_SCHEMA_VERSION;
	m.text = "a partition run may have left candidates without a subgraph hash";
	return pn_put_msg(w, PN_T_META, unhashed_key, sizeof unhashed_key - 1, &m.base, err);
}

int pn_unhashed_clear(pn_writer *w, char *err)
{
	return pn_del(w, PN_T_META, unhashed_key, sizeof unhashed_key - 1, err);
}

int pn_unhashed_marked(pn_rtxn *t)
{
	pn_bytes v;
	return pn_get(t, PN_T_META, unhashed_key, sizeof unhashed_key - 1, &v) == 0;
}

/* --- claims: who cuts a structure in this run ---------------------------------------- */

struct pn_claims {
	pthread_mutex_t lock;
	pn_keymap mask;        /* structure -> the strategies claimed */
};

static pn_claims *claims_new(void)
{
	pn_claims *c = calloc(1, sizeof *c);
	if (c)
		pthread_mutex_init(&c->lock, NULL);
	return c;
}

static void claims_free(pn_claims *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	pn_keymap_free(&c->mask);
	free(c);
}

/* Claims the strategies of want for structure k: returns those no one had
 * claimed (now this caller's), or ~0u when out of memory. */
static unsigned claim(pn_claims *c, const pn_key *k, unsigned want)
{
	if (!want)
		return 0;
	pthread_mutex_lock(&c->lock);
	int added;
	uint64_t *v = pn_keymap_put(&c->mask, k, &added);
	unsigned mine = v ? want & ~(unsigned)*v : ~0u;
	if (v)
		*v |= want;
	pthread_mutex_unlock(&c->lock);
	return mine;
}

int pn_part_plan_init(pn_part_plan *p, pn_store *st, unsigned strategies, const pn_shard *shard,
		      char *err)
{
	memset(p, 0, sizeof *p);
	p->wanted = strategies ? strategies : (1u << PN_N_STRATEGIES) - 1;
	p->shard = shard;
	p->st = st;
	p->claims = claims_new();
	return p->claims ? 0 : pn_fail(err, "out of memory");
}

/* --- what is left to do ------------------------------------------------------------- */


/* The plan's record keys -> the job that cuts them, kept as job + 2 so
 * that NO_CUTTER is 0. */
#define UNSEEN (-1)     /* not seen in this plan */
#define NO_CUTTER (-2)  /* seen, and nothing to cut: its candidates are stored */

static int seen_get(const pn_keymap *seen, const pn_key *k)
{
	const uint64_t *v = pn_keymap_find(seen, k);
	return v ? (int)*v + NO_CUTTER : UNSEEN;
}

static int seen_record(pn_keymap *seen, const pn_key *k, int job)
{
	int added;
	uint64_t *v = pn_keymap_put(seen, k, &added);
	if (!v)
		return -1;
	*v = (uint64_t)(job - NO_CUTTER);
	return 0;
}

static int has_list(pn_rtxn *t, const uint8_t *structure, int s)
{
	uint8_t key[PN_CANDIDATE_KEY_MAX];
	size_t kl = pn_candidate_key(key, structure, pn_strategies[s].name, PN_CANDIDATE_DONE);
	pn_bytes v;
	if (pn_get(t, PN_T_CANDIDATES, key, kl, &v) != 0)
		return 0;
	if (s != PN_STRATEGY_typical)
		return 1;
	/* typical is done once its corpus blocks are listed too */
	Passnet__Candidate *c = pn_candidates_unpack(v);
	int done = c && c->has_blocks && c->blocks;
	pn_candidates_free(c);
	return done;
}

/* The strategies of `wanted` that structure has no list for. */
static unsigned not_done(pn_rtxn *t, const uint8_t *structure, unsigned wanted)
{
	unsigned todo = 0;
	for (int i = 0; i < PN_N_STRATEGIES; i++)
		if ((wanted >> i & 1) && !has_list(t, structure, i))
			todo |= 1u << i;
	return todo;
}

static int plan_model(void *ud, pn_bytes key, pn_bytes val)
{
	pn_part_plan *p = ud;
	if (key.len != 16)
		return 0;
	void *rec;
	size_t len;
	if (pn_model_record_whole(p->t, val, &rec, &len))
		return 0;   /* a variant without its base: nothing to cut */
	pn_key rk = pn_model_record_key(rec, len);
	free(rec);
	if (!pn_shard_holds(p->shard, rk.b))
		return 0;   /* another shard's record key */
	int cutter = seen_get(&p->seen, &rk);
	pn_alias a;
	int aliased = 0;
	if (cutter < 0) {
		/* a malformed alias is resolved again, and rewritten */
		int got = pn_alias_get(p->t, &rk, &a);
		aliased = got == 0;
		if (got)
			pn_alias_free(&a);
	}
	unsigned todo = 0;
	if (cutter == UNSEEN) {
		todo = aliased ? not_done(p->t, a.structure.b, p->wanted) : p->wanted;
		if (seen_record(&p->seen, &rk, todo ? p->n : NO_CUTTER))
			goto oom;
	}
	/* a model is listed with its alias, so one not aliased is not listed */
	int known = aliased || (cutter >= 0 && !p->jobs[cutter].resolve);
	pn_key st = aliased ? a.structure : cutter >= 0 ? p->jobs[cutter].structure : (pn_key){{0}};
	int link = !known || !pn_structure_has_model(p->t, st.b, key.data);
	if (aliased)
		pn_alias_free(&a);
	if (!todo && !link)
		return 0;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		pn_part_job *j = realloc(p->jobs, sizeof(pn_part_job) * (size_t)p->cap);
		if (!j)
			return -1;
		p->jobs = j;
	}
	pn_part_job *j = &p->jobs[p->n];
	memset(j, 0, sizeof(*j));
	memcpy(j->key, key.data, 16);
	j->record_key = rk;
	j->structure = st;
	j->resolve = cutter == UNSEEN && !aliased;
	j->todo = todo;
	j->link = link;
	j->cutter = cutter >= 0 ? cutter : p->n;
	uint8_t base[16];
	j->variant = pn_model_variant_of(val, base);
	p->n++;
	return 0;
oom:
	if (aliased)
		pn_alias_free(&a);
	return -1;
}

int pn_part_plan_models(pn_part_plan *p, pn_rtxn *t, const void *prefix, size_t plen)
{
	p->t = t;
	int rc = pn_foreach(t, PN_T_MODELS, prefix, plen, plan_model, p) < 0 ? -1 : 0;
	p->t = NULL;
	return rc;
}

void pn_part_plan_clear(pn_part_plan *p)
{
	for (int i = 0; i < p->n; i++)
		pn_part_job_free(&p->jobs[i]);
	p->n = 0;
	pn_keymap_clear(&p->seen);
}

void pn_part_plan_free(pn_part_plan *p)
{
	pn_part_plan_clear(p);
	free(p->jobs);
	pn_keymap_free(&p->seen);
	claims_free(p->claims);
	memset(p, 0, sizeof(*p));
}

int pn_part_load(pn_store *st, pn_part_job *jobs, int n, char *err)
{
	pn_rtxn *t;
	if (pn_rtxn_begin(st, &t, err))
		return -1;
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		if (!jobs[i].todo)
			continue;
		int got = pn_model_record_copy(t, jobs[i].key, &jobs[i].record, &jobs[i].len);
		if (got)
			rc = pn_fail(err, got > 0 ? "model record vanished" : "out of memory");
	}
	pn_rtxn_end(t);
	return rc;
}

size_t pn_part_job_cost(const pn_part_job *j)
{
	return j->todo ? j->len : 0;
}

/* --- the work on one model ---------------------------------------------------------- */

char *pn_part_binding_text(const pn_model *m, const Passnet__Model *rec)
{
	/* an occurrence is a dupsort value (at most 511 bytes): the text is cut */
	char buf[201];
	int off = 0;
	buf[0] = 0;
	for (int i = 0; i < m->bind.n && off < (int)sizeof buf; i++)
		off += snprintf(buf + off, sizeof buf - (size_t)off, "%s%s=%lld", i ? "," : "",
				m->bind.names[i], (long long)m->bind.values[i]);
	if (rec && rec->has_variant_batch && off < (int)sizeof buf)
		off += snprintf(buf + off, sizeof buf - (size_t)off, "%sbatch=%llu (generalized)",
				off ? "," : "", (unsigned long long)rec->variant_batch);
	return off ? strdup(buf) : NULL;
}

/* The structure key: the canonical form of the compute nodes (whose hash
 * form_hash is), and the binding text occurrences carry, which the form
 * does not hold (dim names). */
static pn_key structure_key(const pn_key *form_hash, const char *binding)
{
	static const char tag[] = "passnet structure 4";
	size_t bl = binding ? strlen(binding) : 0;
	uint8_t buf[sizeof tag + 16 + 201];
	PN_ASSERT(bl <= 200);
	memcpy(buf, tag, sizeof tag);
	memcpy(buf + sizeof tag, form_hash->b, 16);
	if (bl)
		memcpy(buf + sizeof tag + 16, binding, bl);
	return pn_key_of(buf, sizeof tag + 16 + bl);
}

/* j's alias: its structure and the canonical position of each compute
 * node, also into position[node] (-1 for the others). */
static int place(pn_part_job *j, const pn_pview *pv, const pn_model *m, const Passnet__Model *rec,
		 const pn_infer_result *r, int32_t *position)
{
	pn_alias *a = &j->alias;
	a->node_of = malloc(sizeof(int32_t) * ((size_t)pv->n + 1));
	char *binding = pn_part_binding_text(m, rec);
	if (!a->node_of)
		return pn_fail(j->err, "out of memory");
	pn_key form;
	int approximate;
	if (pn_form_positions(m->graph, r, pv->order, pv->n, &form, a->node_of, &approximate, j->err)) {
		free(binding);
		return -1;
	}
	a->n = pv->n;
	a->structure = structure_key(&form, binding);
	free(binding);
	for (int i = 0; i < m->graph->n_nodes; i++)
		position[i] = -1;
	for (int k = 0; k < a->n; k++)
		position[a->node_of[k]] = k;
	return 0;
}

/* The strategies left for j to cut: not done in the store, and not taken
 * by another job of the run. */
static int claim_todo(pn_part_plan *p, pn_part_job *j)
{
	unsigned want = j->todo;
	if (j->resolve) {
		/* its structure was unknown at plan: the store may have cut it */
		pn_rtxn *t;
		if (pn_rtxn_begin(p->st, &t, j->err))
			return -1;
		want = not_done(t, j->structure.b, want);
		pn_rtxn_end(t);
	}
	unsigned mine = claim(p->claims, &j->structure, want);
	if (mine == ~0u)
		return pn_fail(j->err, "out of memory");
	j->todo = mine;
	return 0;
}

/* Cuts c as canonical positions into placed, each ascending, in the same
 * order. */
static int place_list(const pn_cuts *c, const int32_t *position, pn_cuts *placed)
{
	int32_t buf[PN_CUT_MAX_NODES];
	for (int k = 0; k < c->n; k++) {
		PN_ASSERT(c->len[k] <= PN_CUT_MAX_NODES);
		for (int i = 0; i < c->len[k]; i++) {
			buf[i] = position[c->nodes[k][i]];
			PN_ASSERT(buf[i] >= 0);   /* cuts hold compute nodes only */
		}
		if (pn_cuts_add(placed, buf, c->len[k]))
			return -1;
	}
	return 0;
}

static int place_cuts(pn_part_job *j, const int32_t *position)
{
	for (int s = 0; s < PN_N_STRATEGIES; s++)
		if (place_list(&j->cuts[s], position, &j->placed[s]))
			return -1;
	return place_list(&j->blocks.cuts, position, &j->blocks_placed);
}

int pn_part_cut(pn_part_plan *p, pn_part_job *j, const pn_model *m, const Passnet__Model *rec,
		const pn_infer_result *r)
{
	pn_pview pv;
	memset(&pv, 0, sizeof(pv));
	int32_t *position = malloc(sizeof(int32_t) * ((size_t)m->graph->n_nodes + 1));
	pn_key was = j->structure;
	if (!position)
		j->failed = !!pn_fail(j->err, "out of memory");
	else if (pn_pview_build(&pv, m->graph, r, j->err) || place(j, &pv, m, rec, r, position))
		j->failed = 1;
	else if (!j->resolve && memcmp(was.b, j->alias.structure.b, 16))
		/* the alias was written by another build of passnet */
		j->failed = !!pn_fail(j->err, "its alias names another structure than its graph has");
	else {
		j->structure = j->alias.structure;
		if (claim_todo(p, j))
			j->failed = 1;
		else if (j->todo && pn_pview_tie_break(&pv, position))
			j->failed = !!pn_fail(j->err, "out of memory");
	}
	for (int s = 0; s < PN_N_STRATEGIES && !j->failed; s++) {
		if (!(j->todo >> s & 1))
			continue;
		/* typical also lists its corpus blocks, on the order it cut by */
		int rc = s == PN_STRATEGY_typical ? pn_typical_cut(&pv, &j->cuts[s], &j->blocks)
						  : pn_strategies[s].run(&pv, &j->cuts[s]);
		if (rc)
			j->failed = !!pn_fail(j->err, "%s: out of memory", pn_strategies[s].name);
	}
	if (!j->failed && place_cuts(j, position))
		j->failed = !!pn_fail(j->err, "out of memory");
	pn_pview_free(&pv);
	free(position);
	return j->failed ? -1 : 0;
}

static void partition_model(pn_part_plan *p, pn_part_job *j)
{
	if (!j->todo)
		return;
	pn_model *m = NULL;
	Passnet__Model *rec = NULL;
	pn_infer_result r;
	if (pn_model_from_record_typed(j->record, j->len, &m, &rec, &r, j->err)) {
		j->failed = 1;
		return;
	}
	pn_part_cut(p, j, m, rec, &r);
	pn_infer_result_free(&r);
	pn_model_free(m);
}

/* --- committing ------------------------------------------------------------------------ */

int pn_candidate_record_put(pn_writer *w, const uint8_t structure[16], const char *strategy,
			    uint32_t idx, const int32_t *nodes, int n, const pn_key *subgraph,
			    int approximate, char *err)
{
	Passnet__Candidate c;
	passnet__candidate__init(&c);
	c.has_version = 1;
	c.version = PN_SCHEMA_VERSION;
	c.strategy = (char *)strategy;
	/* only a kept block has a record of its own; the rest are lists */
	PN_ASSERT(idx >= PN_BLOCK_INDEX0 && idx != PN_CANDIDATE_DONE);
	uint32_t *nv = malloc(sizeof(uint32_t) * (size_t)(n + 1));
	if (!nv)
		return pn_fail(err, "out of memory");
	for (int i = 0; i < n; i++)
		nv[i] = (uint32_t)nodes[i];
	c.n_nodes = (size_t)n;
	c.nodes = nv;
	if (subgraph) {
		c.has_subgraph = 1;
		c.subgraph.data = (uint8_t *)subgraph->b;
		c.subgraph.len = 16;
	}
	if (approximate) {
		c.has_approximate = 1;
		c.approximate = 1;
	}
	uint8_t key[PN_CANDIDATE_KEY_MAX];
	size_t kl = pn_candidate_key(key, structure, strategy, idx);
	int rc = pn_put_msg(w, PN_T_CANDIDATES, key, kl, &c.base, err);
	free(nv);
	return rc;
}

/* Job j's corpus blocks into the blocks table, each where it is. */
static int put_blocks(pn_writer *w, const pn_part_job *j, char *err)
{
	PN_ASSERT(j->blocks_placed.n == j->blocks.cuts.n);
	for (int k = 0; k < j->blocks_placed.n; k++) {
		uint32_t nodes[PN_CUT_MAX_NODES];
		Passnet__Block b;
		passnet__block__init(&b);
		b.has_version = 1;
		b.version = PN_SCHEMA_VERSION;
		b.n_nodes = (size_t)j->blocks_placed.len[k];
		b.nodes = nodes;
		for (int i = 0; i < j->blocks_placed.len[k]; i++)
			nodes[i] = (uint32_t)j->blocks_placed.nodes[k][i];
		uint8_t key[PN_BLOCK_KEY_LEN];
		pn_block_key(key, &j->blocks.hash[k], j->structure.b, (uint32_t)k);
		if (pn_put_msg(w, PN_T_BLOCKS, key, sizeof key, &b.base, err))
			return -1;
	}
	return 0;
}

int pn_candidate_list_put(pn_writer *w, const uint8_t structure[16], const char *strategy,
			  const pn_cand_entry *e, int n, int blocks, char *err)
{
	size_t nodes = 0;
	for (int k = 0; k < n; k++)
		nodes += (size_t)e[k].n;
	/* one block: the entries, their pointers, then every entry's nodes */
	size_t size = (sizeof(Passnet__CandidateEntry) + sizeof(void *)) * (size_t)n +
		      sizeof(uint32_t) * nodes + 1;
	uint8_t *blk = malloc(size);
	if (!blk)
		return pn_fail(err, "out of memory");
	Passnet__CandidateEntry *ent = (Passnet__CandidateEntry *)blk;
	Passnet__CandidateEntry **ptr = (Passnet__CandidateEntry **)(ent + n);
	uint32_t *nv = (uint32_t *)(ptr + n);
	for (int k = 0; k < n; k++) {
		passnet__candidate_entry__init(&ent[k]);
		ent[k].n_nodes = (size_t)e[k].n;
		ent[k].nodes = nv;
		for (int i = 0; i < e[k].n; i++)
			*nv++ = (uint32_t)e[k].nodes[i];
		if (e[k].hashed) {
			ent[k].has_subgraph = 1;
			ent[k].subgraph.data = (uint8_t *)e[k].subgraph.b;
			ent[k].subgraph.len = 16;
		}
		ent[k].has_approximate = ent[k].approximate = e[k].hashed && e[k].approximate;
		ptr[k] = &ent[k];
	}
	Passnet__Candidate c;
	passnet__candidate__init(&c);
	c.has_version = 1;
	c.version = PN_SCHEMA_VERSION;
	c.strategy = (char *)strategy;
	c.has_count = 1;
	c.count = (uint32_t)n;
	c.has_blocks = c.blocks = blocks != 0;
	c.n_entries = (size_t)n;
	c.entries = ptr;
	uint8_t key[PN_CANDIDATE_KEY_MAX];
	size_t kl = pn_candidate_key(key, structure, strategy, PN_CANDIDATE_DONE);
	int rc = pn_put_msg(w, PN_T_CANDIDATES, key, kl, &c.base, err);
	free(blk);
	return rc;
}

/* --- reading a candidate's hash ------------------------------------------------------ */

#define CANDIDATE_SUBGRAPH 6   /* Passnet__Candidate.subgraph */
#define CANDIDATE_ENTRIES 10   /* Passnet__Candidate.entries */
#define ENTRY_SUBGRAPH 2       /* Passnet__CandidateEntry.subgraph */

typedef struct hash_walk {
	uint32_t field, skip;      /* the field sought, and how many of it to pass */
	const uint8_t *body, *next;
} hash_walk;

static int find_field(void *ud, uint64_t field, int wire, const uint8_t *start,
		      const uint8_t *body, const uint8_t *next)
{
	(void)wire, (void)start;
	hash_walk *h = ud;
	if (field != h->field || !body)
		return 0;
	if (h->skip) {
		h->skip--;
		return 0;
	}
	h->body = body;
	h->next = next;
	return 1;
}

/* The body of the skip-th field `field` of rec: 1, 0 when there is none,
 * -1 when rec is malformed. */
static int nth_field(const uint8_t *rec, size_t len, uint32_t field, uint32_t skip,
		     pn_bytes *out)
{
	hash_walk h = {field, skip, NULL, NULL};
	int got = pn_walk_fields(rec, len, find_field, &h);
	if (!got)
		return -1;
	if (got == 2)
		return 0;
	*out = (pn_bytes){h.body, (size_t)(h.next - h.body)};
	return 1;
}

int pn_candidate_hash(pn_rtxn *t, const uint8_t structure[16], const char *strategy,
		      uint32_t index, pn_key *out)
{
	int own = index >= PN_BLOCK_INDEX0;
	uint8_t key[PN_CANDIDATE_KEY_MAX];
	size_t kl = pn_candidate_key(key, structure, strategy, own ? index : PN_CANDIDATE_DONE);
	pn_bytes rec, hash;
	if (pn_get(t, PN_T_CANDIDATES, key, kl, &rec) != 0)
		return 1;
	/* a list: the entry's bytes, walked without unpacking the list */
	if (!own) {
		int got = nth_field(rec.data, rec.len, CANDIDATE_ENTRIES, index, &rec);
		if (got <= 0)
			return got ? -1 : 1;
	}
	int got = nth_field(rec.data, rec.len, own ? CANDIDATE_SUBGRAPH : ENTRY_SUBGRAPH, 0, &hash);
	if (got <= 0)
		return got ? -1 : 1;   /* malformed, or not hashed yet */
	if (hash.len != 16)
		return -1;
	memcpy(out->b, hash.data, 16);
	return 0;
}

/* Job j's candidates of strategy s through put (NULL: partition alone,
 * which leaves every entry unhashed for the dedup stage), then their list. */
static int put_strategy(pn_writer *w, const pn_part_job *j, int s, pn_cand_put_fn put, void *ud,
			char *err)
{
	const pn_cuts *c = &j->placed[s];
	pn_cand_entry *e = calloc((size_t)c->n + 1, sizeof(*e));
	if (!e)
		return pn_fail(err, "out of memory");
	int rc = 0;
	for (int k = 0; k < c->n && !rc; k++) {
		e[k].nodes = c->nodes[k];
		e[k].n = c->len[k];
		rc = put ? put(ud, w, j, s, k, &e[k], err) : 0;
	}
	if (!rc && s == PN_STRATEGY_typical)
		rc = put_blocks(w, j, err);
	/* the list last: a kill before it redoes this (structure, strategy) */
	if (!rc)
		rc = pn_candidate_list_put(w, j->structure.b, pn_strategies[s].name, e, c->n,
					   s == PN_STRATEGY_typical, err);
	free(e);
	return rc;
}

int pn_part_commit(pn_writer *w, pn_part_job *jobs, int i, pn_stage_stats *stats,
		   pn_cand_put_fn put, void *ud, char *err)
{
	pn_part_job *j = &jobs[i];
	/* the cutter is the record key's first job in the plan, committed first */
	PN_ASSERT(j->cutter >= 0 && j->cutter <= i);
	PN_ASSERT(!j->todo || j->cutter == i);
	PN_ASSERT(!j->resolve || j->cutter == i);
	if (j->cutter != i) {
		/* a model of a record key its cutter failed on fails the same way */
		if (!j->failed && jobs[j->cutter].failed) {
			j->failed = 1;
			memcpy(j->err, jobs[j->cutter].err, sizeof j->err);
		}
		j->structure = jobs[j->cutter].structure;
	}
	if (j->failed) {
		stats->failed++;
		return pn_model_error_put(w, j->key, "partition", j->err, err);
	}
	if (j->variant)
		stats->variants++;
	else
		stats->models++;
	stats->structures += j->todo != 0;
	/* the alias first: candidates are positions only it maps */
	if (j->resolve && pn_alias_put(w, &j->record_key, &j->alias, err))
		return -1;
	for (int s = 0; s < PN_N_STRATEGIES; s++) {
		if (!(j->todo >> s & 1))
			continue;
		if (put_strategy(w, j, s, put, ud, err))
			return -1;
		stats->candidates += (uint64_t)j->placed[s].n;
		stats->per_strategy[s] += (uint64_t)j->placed[s].n;
	}
	/* listed last: a model listed under its structure is done */
	return j->link ? pn_put_dup(w, PN_T_STRUCTURES, j->structure.b, 16, j->key, 16, err) : 0;
}

void pn_part_job_free(pn_part_job *j)
{
	free(j->record);
	j->record = NULL;
	pn_alias_free(&j->alias);
	for (int s = 0; s < PN_N_STRATEGIES; s++) {
		pn_cuts_free(&j->cuts[s]);
		pn_cuts_free(&j->placed[s]);
	}
	pn_block_list_free(&j->blocks);
	pn_cuts_free(&j->blocks_placed);
}

/* --- the pipeline (store/batches.h) ------------------------------------------------------ */

typedef struct pipe {
	pn_part_plan *p;
	pn_stage_stats *stats;
	pn_store *st;
} pipe;

static int pipe_load(void *ud, int first, int n, char *err)
{
	pipe *pp = ud;
	return pn_part_load(pp->st, pp->p->jobs + first, n, err);
}

static void pipe_work(void *ud, int i)
{
	pipe *pp = ud;
	partition_model(pp->p, &pp->p->jobs[i]);
}

static int pipe_commit(void *ud, pn_writer *w, int i, char *err)
{
	pipe *pp = ud;
	return pn_part_commit(w, pp->p->jobs, i, pp->stats, NULL, NULL, err);
}

static void pipe_release(void *ud, int i)
{
	pn_part_job_free(&((pipe *)ud)->p->jobs[i]);
}

static size_t pipe_cost(void *ud, int i)
{
	return pn_part_job_cost(&((pipe *)ud)->p->jobs[i]);
}

static const pn_batch_ops partition_ops = {pipe_load, pipe_work, pipe_commit, pipe_release,
					    pipe_cost};

int pn_partition_stage(pn_store *st, unsigned strategies, int threads, const pn_shard *shard,
		       pn_stage_stats *stats, char *err)
{
	memset(stats, 0, sizeof(*stats));
	double t0 = pn_now();
	pn_part_plan p;
	pn_rtxn *t;
	int rc = pn_part_plan_init(&p, st, strategies, shard, err);
	if (!rc)
		rc = pn_rtxn_begin(st, &t, err);
	if (!rc) {
		rc = pn_part_plan_models(&p, t, NULL, 0);
		pn_rtxn_end(t);
	}
	pn_writer *w = NULL;
	if (!rc)
		rc = pn_writer_open(st, &w, 0, err);
	/* the mark lands before any candidate does (a killed run leaves it) */
	if (!rc && p.n && !(rc = pn_unhashed_mark(w, err)))
		rc = pn_writer_flush(w, err);
	pn_progress prog;
	pn_progress_start(&prog, "partition", (uint64_t)p.n);
	if (!rc) {
		pipe pp = {&p, stats, st};
		rc = pn_run_batches(w, p.n, BATCH_MODELS, threads, &partition_ops, &pp, &prog, err);
	}
	pn_progress_end(&prog);
	if (w) {
		char cerr[PN_ERRLEN];
		if (pn_writer_close(w, rc ? cerr : err))
			rc = -1;
	}
	pn_part_plan_free(&p);
	stats->seconds = pn_now() - t0;
	return rc;
}
