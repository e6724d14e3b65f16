/*
 * merge.c - see merge.h.
 */
#include "store/merge.h"
#include "store/tables.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/util.h"
#include "passnet.pb-c.h"
#include "store/records.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_SOURCE_FIELD 2         /* Passnet__Model.source */
#define MODEL_PATH_FIELD 3           /* Passnet__Model.path */
#define RANGES_DONE_KEY_LEN 17       /* model key + "R" (passnet.proto: ranges) */

static const char schema_key[] = "schema_version";

/* The order the stages write the tables in (merge.h: a killed merge). */
static const int merge_order[] = {
	PN_T_META, PN_T_SOURCES, PN_T_GRAPHS, PN_T_MODELS, PN_T_MODEL_PATHS,
	PN_T_SUBGRAPHS, PN_T_OCCURRENCES, PN_T_ALIASES, PN_T_BLOCKS, PN_T_CANDIDATES,
	PN_T_STRUCTURES,
	PN_T_RANGES, PN_T_PROFILES, PN_T_ERRORS,
};
_Static_assert(sizeof merge_order / sizeof merge_order[0] == PN_T_COUNT,
	       "merge_order lists every table");

typedef struct merger {
	pn_writer *w;
	const char *in;         /* the input's directory, for messages */
	int table;
	pn_merge_counts *c;
	char *err;
	pn_buf a, b;            /* scratch: stripped or repacked records */
} merger;

/* What a table's rule makes of a key both stores hold with other bytes. */
typedef struct decision {
	int take_in;            /* write the input's bytes (or `write`) */
	int in_won;             /* a conflict settled for the input's side */
	int same;               /* the records differ only where the rule ignores */
	int conflict;           /* no rule settled it */
	pn_bytes write;         /* when set: these bytes instead of the input's */
} decision;

/* --- bytes and fields -------------------------------------------------------- */

/* memcmp, then the shorter first: LMDB's order of duplicates. */
static int bytes_cmp(pn_bytes a, pn_bytes b)
{
	size_t n = a.len < b.len ? a.len : b.len;
	int c = n ? memcmp(a.data, b.data, n) : 0;
	return c ? c : (a.len > b.len) - (a.len < b.len);
}

static int bytes_eq(pn_bytes a, pn_bytes b)
{
	return bytes_cmp(a, b) == 0;
}

typedef struct field_span {
	uint64_t field;
	const uint8_t *start, *next;
} field_span;

typedef struct span_list {
	field_span *v;
	size_t n, cap;
	int oom;
} span_list;

static int collect_span(void *ud, uint64_t field, int wire, const uint8_t *start,
			const uint8_t *body, const uint8_t *next)
{
	(void)wire;
	(void)body;
	span_list *l = ud;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		field_span *v = realloc(l->v, cap * sizeof *v);
		if (!v) {
			l->oom = 1;
			return 1;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (field_span){field, start, next};
	return 0;
}

/* The number of the first top-level field in which a and b differ, 0 when
 * none can be named (malformed bytes, out of memory). */
static uint64_t first_differing_field(pn_bytes a, pn_bytes b)
{
	span_list la = {0}, lb = {0};
	uint64_t field = 0;
	if (pn_walk_fields(a.data, a.len, collect_span, &la) == 2 &&
	    pn_walk_fields(b.data, b.len, collect_span, &lb) == 2) {
		size_t i = 0;
		for (; i < la.n && i < lb.n; i++) {
			const field_span *x = &la.v[i], *y = &lb.v[i];
			size_t xl = (size_t)(x->next - x->start), yl = (size_t)(y->next - y->start);
			if (x->field != y->field || xl != yl || memcmp(x->start, y->start, xl))
				break;
		}
		field = i < la.n ? la.v[i].field : i < lb.n ? lb.v[i].field : 0;
	}
	free(la.v);
	free(lb.v);
	return field;
}

static const ProtobufCMessageDescriptor *record_kind(int table, pn_bytes key)
{
	switch (table) {
	case PN_T_META: return &passnet__meta__descriptor;
	case PN_T_SOURCES: return &passnet__source__descriptor;
	case PN_T_MODELS: return &passnet__model__descriptor;
	case PN_T_MODEL_PATHS: return &passnet__model_path__descriptor;
	case PN_T_CANDIDATES: return &passnet__candidate__descriptor;
	case PN_T_SUBGRAPHS: return &passnet__subgraph__descriptor;
	case PN_T_GRAPHS: return NULL;   /* packed (store/records.h): no fields to name */
	case PN_T_PROFILES: return &passnet__profile__descriptor;
	case PN_T_RANGES:
		return key.len == RANGES_DONE_KEY_LEN ? &passnet__ranges_done__descriptor
						      : &passnet__input_ranges__descriptor;
	case PN_T_ERRORS: return &passnet__error__descriptor;
	case PN_T_ALIASES: return &passnet__alias__descriptor;
	case PN_T_BLOCKS: return &passnet__block__descriptor;
	default: return NULL;
	}
}

/* Text-keyed tables print their key as it is, the others in hex. */
static void key_text(int table, pn_bytes key, char *out, size_t n)
{
	if (table == PN_T_META || table == PN_T_SOURCES) {
		snprintf(out, n, "'%.*s'", (int)(key.len > 200 ? 200 : key.len),
			 (const char *)key.data);
		return;
	}
	size_t len = key.len * 2 + 1 < n ? key.len : (n - 1) / 2;
	pn_hex(key.data, len, out);
}

static void report_conflict(const merger *m, pn_bytes key, pn_bytes cur, pn_bytes in,
			    int took_in)
{
	char k[512], what[160];
	key_text(m->table, key, k, sizeof k);
	/* only a protobuf record has fields to compare (a packed graph has none) */
	const ProtobufCMessageDescriptor *d = record_kind(m->table, key);
	uint64_t f = d ? first_differing_field(cur, in) : 0;
	const ProtobufCFieldDescriptor *fd =
		d && f && f <= UINT_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)f)
					: NULL;
	if (fd)
		snprintf(what, sizeof what, "field %s differs", fd->name);
	else if (f)
		snprintf(what, sizeof what, "field %llu differs", (unsigned long long)f);
	else
		snprintf(what, sizeof what, "the bytes differ");
	pn_error_line("merge: %s: %s %s: %s (%zu bytes here, %zu in the store); kept %s", m->in,
		      pn_table_name(m->table), k, what, in.len, cur.len,
		      took_in ? "this input's (the least bytes)" : "the store's (the least bytes)");
}

/* --- the rules --------------------------------------------------------------- */

static decision least_bytes(pn_bytes cur, pn_bytes in)
{
	int c = bytes_cmp(in, cur) < 0;
	return (decision){.take_in = c, .in_won = c, .conflict = 1};
}

typedef struct place {
	pn_bytes source, path;
	int has_source, has_path;
} place;

static int take_place(void *ud, uint64_t field, int wire, const uint8_t *start,
		      const uint8_t *body, const uint8_t *next)
{
	(void)start;
	place *p = ud;
	if (wire != 2)
		return 0;
	pn_bytes v = {body, (size_t)(next - body)};
	if (field == MODEL_SOURCE_FIELD) {
		p->source = v;
		p->has_source = 1;
	} else if (field == MODEL_PATH_FIELD) {
		p->path = v;
		p->has_path = 1;
	}
	return 0;
}

static int model_place(pn_bytes rec, place *p)
{
	memset(p, 0, sizeof *p);
	return pn_walk_fields(rec.data, rec.len, take_place, p) == 2 && p->has_source &&
	       p->has_path;
}

/* models: the same file found in two places is stored once, under the
 * least (source, path), as extract does on one machine. */
static decision decide_model(pn_bytes cur, pn_bytes in)
{
	place pc, pi;
	if (model_place(cur, &pc) && model_place(in, &pi)) {
		int c = bytes_cmp(pi.source, pc.source);
		if (!c)
			c = bytes_cmp(pi.path, pc.path);
		if (c)
			return (decision){.take_in = c < 0};
	}
	return least_bytes(cur, in);
}

static int pack_into(pn_buf *out, const ProtobufCMessage *msg);

/* The candidate record without its subgraph hashes (its own, a kept
 * block's, and every list entry's) into out: how many it had, or -1 when
 * malformed or out of memory. */
static int strip_hashes(pn_bytes rec, pn_buf *out)
{
	Passnet__Candidate *c = pn_candidates_unpack(rec);
	if (!c)
		return -1;
	int had = c->has_subgraph;
	c->has_subgraph = c->has_approximate = 0;
	for (size_t i = 0; i < c->n_entries; i++) {
		had += c->entries[i]->has_subgraph;
		c->entries[i]->has_subgraph = c->entries[i]->has_approximate = 0;
	}
	/* the pointers stay, for the free: unset fields are not packed */
	int rc = pack_into(out, &c->base);
	pn_candidates_free(c);
	return rc ? -1 : had;
}

/* candidates: dedup fills in the hashes, so a shard that ran dedup and one
 * that did not agree once the hashes are set.  Ordered by the record
 * without its hashes, then the one with more hashes first (dedup hashes a
 * list's entries together), then by bytes. */
static decision decide_candidate(merger *m, pn_bytes cur, pn_bytes in)
{
	int hc = strip_hashes(cur, &m->a), hi = strip_hashes(in, &m->b);
	if (hc < 0 || hi < 0)
		return least_bytes(cur, in);
	pn_bytes sc = {m->a.p, m->a.n}, si = {m->b.p, m->b.n};
	int c = bytes_cmp(si, sc);
	if (c)
		return (decision){.take_in = c < 0, .in_won = c < 0, .conflict = 1};
	if (hc != hi)
		return (decision){.take_in = hi > hc};
	return least_bytes(cur, in);
}

static int pack_into(pn_buf *out, const ProtobufCMessage *msg)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	if (out->cap < n) {
		uint8_t *p = realloc(out->p, n ? n : 1);
		if (!p)
			return -1;
		out->p = p;
		out->cap = n ? n : 1;
	}
	out->n = protobuf_c_message_pack(msg, out->p);
	return 0;
}

/* The source record without what each scan counts (files_seen, models_ok,
 * models_failed, complete) into out; -1 when out of memory. */
static int source_description(const Passnet__Source *s, pn_buf *out)
{
	Passnet__Source d = *s;
	d.has_files_seen = d.has_models_ok = d.has_models_failed = d.has_complete = 0;
	return pack_into(out, &d.base);
}

/* sources: one description (the least), complete only when every copy is;
 * the counts are redone from model_paths at the end. */
static int decide_source(merger *m, pn_bytes cur, pn_bytes in, decision *d)
{
	Passnet__Source *sc = pn_sources_unpack(cur);
	Passnet__Source *si = pn_sources_unpack(in);
	int rc = -1;
	if (!sc || !si) {
		*d = least_bytes(cur, in);
		rc = 0;
		goto out;
	}
	if (source_description(sc, &m->a) || source_description(si, &m->b))
		goto out;
	int c = bytes_cmp((pn_bytes){m->b.p, m->b.n}, (pn_bytes){m->a.p, m->a.n});
	Passnet__Source *keep = c < 0 ? si : sc;
	int complete = sc->has_complete && sc->complete && si->has_complete && si->complete;
	keep->has_complete = 1;
	keep->complete = complete;
	if (pack_into(&m->a, &keep->base))
		goto out;
	pn_bytes now = {m->a.p, m->a.n};
	int changed = !bytes_eq(now, cur);
	*d = (decision){.take_in = changed, .in_won = c < 0, .conflict = c != 0, .write = now,
			.same = !changed && c == 0};
	rc = 0;
out:
	if (sc)
		pn_sources_free(sc);
	if (si)
		pn_sources_free(si);
	return rc ? pn_fail(m->err, "merge %s: sources: out of memory", m->in) : 0;
}

/* ranges: a subgraph's record is the union over the models that ran
 * (exec/ranges.h), which the ranges stage builds model by model: float
 * bounds widen (min of lo, max of hi over the inputs whose range is known;
 * 0, 0 where none is), and the shapes and integer values are those of the
 * least model seen (shapes_from).  That fold is a join: the same values
 * whatever models each store ran and in whatever order, so shard stores
 * that ran the models of their shard (`exec --ranges-only --shard`) merge
 * into the record one store running them all writes.  Records that do not
 * line up (another input count, a record that does not decode) stay a
 * conflict. */
static int ranges_line_up(const Passnet__InputRanges *r)
{
	size_t n = r->n_lo, dims = 0, ints = 0;
	if (r->n_hi != n || r->n_known != n || r->n_rank != n || r->n_int_counts != n ||
	    !r->has_shapes_from || r->shapes_from.len != 16)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (r->rank[i] < 0 || r->int_counts[i] < 0)
			return 0;
		dims += (size_t)r->rank[i];
		ints += (size_t)r->int_counts[i];
	}
	return dims == r->n_dims && ints == r->n_int_values;
}

static int decide_ranges(merger *m, pn_bytes cur, pn_bytes in, decision *d)
{
	Passnet__InputRanges *rc_ = pn_ranges_unpack(cur);
	Passnet__InputRanges *ri = pn_ranges_unpack(in);
	int rc = 0;
	if (!rc_ || !ri || !ranges_line_up(rc_) || !ranges_line_up(ri) || rc_->n_lo != ri->n_lo) {
		*d = least_bytes(cur, in);
		goto out;
	}
	/* the shapes of the least model, and its record as the base */
	int in_less = memcmp(ri->shapes_from.data, rc_->shapes_from.data, 16) < 0;
	Passnet__InputRanges *base = in_less ? ri : rc_, *other = in_less ? rc_ : ri;
	for (size_t i = 0; i < base->n_lo; i++) {
		if (!other->known[i])
			continue;
		if (!base->known[i]) {
			base->lo[i] = other->lo[i];
			base->hi[i] = other->hi[i];
			base->known[i] = 1;
			continue;
		}
		if (other->lo[i] < base->lo[i])
			base->lo[i] = other->lo[i];
		if (other->hi[i] > base->hi[i])
			base->hi[i] = other->hi[i];
	}
	if (pack_into(&m->a, &base->base)) {
		rc = pn_fail(m->err, "merge %s: ranges: out of memory", m->in);
		goto out;
	}
	pn_bytes joined = {m->a.p, m->a.n};
	if (bytes_eq(joined, cur))
		*d = (decision){0};   /* settled: the store's record holds the input's */
	else
		*d = (decision){.take_in = 1, .write = joined};
out:
	if (rc_)
		pn_ranges_free(rc_);
	if (ri)
		pn_ranges_free(ri);
	return rc;
}

/* meta "calibration" names the store's current machine; every machine's
 * calibration is also kept under its own key, machine/<id>, which merges
 * as a union.  So two stores calibrated on two machines (exec shards on
 * several nodes) lose nothing when one of them stays current: the least
 * bytes, like any rule here, so that the order of the inputs does not
 * matter; settled, not a conflict. */
static const char current_machine_key[] = "calibration";

static int is_current_machine(int table, pn_bytes key)
{
	return table == PN_T_META && key.len == sizeof current_machine_key - 1 &&
	       !memcmp(key.data, current_machine_key, key.len);
}

static int decide(merger *m, pn_bytes key, pn_bytes cur, pn_bytes in, decision *d)
{
	if (is_current_machine(m->table, key)) {
		*d = least_bytes(cur, in);
		d->conflict = 0;
		return 0;
	}
	switch (m->table) {
	case PN_T_MODELS:
		*d = decide_model(cur, in);
		return 0;
	case PN_T_CANDIDATES:
		*d = decide_candidate(m, cur, in);
		return 0;
	case PN_T_SOURCES:
		return decide_source(m, cur, in, d);
	case PN_T_RANGES:
		if (key.len == 16)   /* not a model's 17-byte "ran" marker */
			return decide_ranges(m, cur, in, d);
		*d = least_bytes(cur, in);
		return 0;
	default:
		*d = least_bytes(cur, in);
		return 0;
	}
}

/* --- folding one table ------------------------------------------------------- */

static int merge_record(void *ud, pn_bytes key, pn_bytes in)
{
	merger *m = ud;
	if (m->table == PN_T_META && key.len == sizeof schema_key - 1 &&
	    !memcmp(key.data, schema_key, key.len))
		return 0;   /* checked before the merge began */
	pn_bytes cur;
	int rc = pn_wget(m->w, m->table, key.data, key.len, &cur);
	if (rc < 0)
		return pn_fail(m->err, "merge %s: reading the store's %s failed", m->in,
			       pn_table_name(m->table));
	if (rc == 1) {
		m->c->added++;
		return pn_put(m->w, m->table, key.data, key.len, in.data, in.len, m->err);
	}
	if (bytes_eq(cur, in)) {
		m->c->equal++;
		return 0;
	}
	decision d = {0};
	if (decide(m, key, cur, in, &d))
		return -1;
	if (d.conflict) {
		m->c->conflicts++;
		report_conflict(m, key, cur, in, d.in_won);
	} else if (d.same) {
		m->c->equal++;   /* a source whose counts differ: they are redone */
	} else {
		m->c->resolved++;
	}
	if (!d.take_in)
		return 0;
	pn_bytes v = d.write.data ? d.write : in;
	return pn_put(m->w, m->table, key.data, key.len, v.data, v.len, m->err);
}

static int merge_pair(void *ud, pn_bytes key, pn_bytes in)
{
	merger *m = ud;
	return pn_put_dup(m->w, m->table, key.data, key.len, in.data, in.len, m->err);
}

/* The records of a table the last commit holds. */
static int committed_count(pn_store *s, pn_writer *w, int table, int64_t *n, char *err)
{
	pn_rtxn *t;
	if (pn_writer_flush(w, err) || pn_rtxn_begin(s, &t, err))
		return -1;
	*n = pn_count(t, table);
	pn_rtxn_end(t);
	return *n < 0 ? pn_fail(err, "store %s: counting %s failed", pn_store_path(s),
				pn_table_name(table))
		      : 0;
}

/* A dupsort table is a set of pairs: their union.  pn_put_dup adds only a
 * pair that is not there, so the count before and after says how many were
 * new. */
static int merge_dupsort(merger *m, pn_store *out, pn_rtxn *in)
{
	int64_t before, after;
	if (committed_count(out, m->w, m->table, &before, m->err))
		return -1;
	int rc = pn_foreach(in, m->table, NULL, 0, merge_pair, m);
	if (rc)
		return rc;
	if (committed_count(out, m->w, m->table, &after, m->err))
		return -1;
	int64_t pairs = pn_count(in, m->table);
	if (pairs < 0)
		return pn_fail(m->err, "merge %s: counting its %s failed", m->in,
			       pn_table_name(m->table));
	m->c->added += (uint64_t)(after - before);
	m->c->equal += (uint64_t)(pairs - (after - before));
	return 0;
}

static int merge_table(merger *m, pn_store *out, pn_rtxn *in)
{
	m->err[0] = 0;
	int rc = pn_table_is_dupsort(m->table) ? merge_dupsort(m, out, in)
					       : pn_foreach(in, m->table, NULL, 0, merge_record, m);
	if (rc && !m->err[0])
		pn_fail(m->err, "merge %s: reading its %s failed", m->in, pn_table_name(m->table));
	return rc ? -1 : 0;
}

/* --- the input --------------------------------------------------------------- */

/* Records change meaning across schema versions: an input of another one is
 * refused whole (pn_store_open refuses most; this catches the rest). */
static int check_schema(pn_writer *w, pn_rtxn *in, const char *dir, char *err)
{
	pn_bytes iv, ov;
	int ri = pn_get(in, PN_T_META, schema_key, sizeof schema_key - 1, &iv);
	if (ri == 1)
		return 0;   /* nothing was ever committed to it: an empty store */
	int ro = ri ? -1 : pn_wget(w, PN_T_META, schema_key, sizeof schema_key - 1, &ov);
	if (ri < 0 || ro < 0)
		return pn_fail(err, "merge %s: reading meta schema_version failed", dir);
	if (ro == 1 || !bytes_eq(iv, ov))
		return pn_fail(err, "merge %s: its schema_version differs from the store's; refused",
			       dir);
	return 0;
}

static int same_directory(const char *a, const char *b)
{
	char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
	int same = ra && rb && !strcmp(ra, rb);
	free(ra);
	free(rb);
	return same;
}

static int merge_tables(pn_store *out, pn_writer *w, pn_rtxn *in, const char *dir,
			pn_merge_stats *stats, char *err)
{
	merger m = {.w = w, .in = dir, .err = err};
	int rc = check_schema(w, in, dir, err);
	for (size_t i = 0; !rc && i < PN_T_COUNT; i++) {
		m.table = merge_order[i];
		m.c = &stats->table[m.table];
		rc = merge_table(&m, out, in);
	}
	pn_buf_free(&m.a);
	pn_buf_free(&m.b);
	return rc;
}

int pn_store_merge(pn_store *out, const char *in_dir, pn_merge_stats *stats, char *err)
{
	if (same_directory(in_dir, pn_store_path(out)))
		return pn_fail(err, "merge %s: it is the store merged into", in_dir);
	pn_store *in;
	if (pn_store_open(&in, in_dir, 1, err))
		return -1;
	pn_rtxn *t = NULL;
	pn_writer *w = NULL;
	int rc = pn_rtxn_begin(in, &t, err);
	if (!rc)
		rc = pn_writer_open(out, &w, 0, err);
	if (!rc)
		rc = merge_tables(out, w, t, in_dir, stats, err);
	if (t)
		pn_rtxn_end(t);
	if (w && rc)
		pn_writer_close(w, (char[PN_ERRLEN]){0});   /* keeps what is merged */
	else if (w)
		rc = pn_writer_close(w, err);
	pn_store_close(in);
	if (rc)
		return -1;
	stats->inputs++;
	return pn_merge_recount_sources(out, stats, err);
}

/* --- the sources' counts ----------------------------------------------------- */

typedef struct source_count {
	char *name;
	uint8_t *rec;
	size_t len;
	uint64_t ok, failed;
} source_count;

typedef struct source_list {
	source_count *v;
	size_t n, cap;
	int oom;
} source_list;

static int take_source(void *ud, pn_bytes key, pn_bytes val)
{
	source_list *l = ud;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		source_count *v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return l->oom = 1;
		l->v = v;
		l->cap = cap;
	}
	source_count *s = &l->v[l->n];
	*s = (source_count){.name = strndup(key.data, key.len), .rec = malloc(val.len ? val.len : 1),
			    .len = val.len};
	if (!s->name || !s->rec) {
		free(s->name);
		free(s->rec);
		return l->oom = 1;
	}
	memcpy(s->rec, val.data, val.len);
	l->n++;
	return 0;
}

static int cmp_source_name(const void *key, const void *elem)
{
	return strcmp(key, ((const source_count *)elem)->name);
}

/* Tallies one place under its source (the list is in key order, which for
 * names without NUL is strcmp order). */
static int count_place(void *ud, pn_bytes key, pn_bytes val)
{
	(void)key;
	source_list *l = ud;
	Passnet__ModelPath *mp = pn_model_paths_unpack(val);
	if (!mp)
		return 0;   /* not a place record: nothing to count (doctor reports it) */
	source_count *s = mp->source ? bsearch(mp->source, l->v, l->n, sizeof *l->v,
					       cmp_source_name)
				     : NULL;
	if (s && mp->status == PASSNET__MODEL_STATUS__MODEL_FAILED)
		s->failed++;
	else if (s)
		s->ok++;
	pn_model_paths_free(mp);
	return 0;
}

static void source_list_free(source_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].rec);
	}
	free(l->v);
}

/* Writes the source's record again if its counts are not the tallied ones. */
static int put_counts(pn_writer *w, const source_count *s, pn_buf *buf, uint64_t *changed,
		      char *err)
{
	Passnet__Source *r = passnet__source__unpack(NULL, s->len, s->rec);
	if (!r)
		return 0;   /* malformed: left as it is */
	r->has_files_seen = r->has_models_ok = r->has_models_failed = 1;
	r->files_seen = s->ok + s->failed;
	r->models_ok = s->ok;
	r->models_failed = s->failed;
	int rc = pack_into(buf, &r->base);
	pn_sources_free(r);
	if (rc)
		return pn_fail(err, "merge: out of memory");
	if (buf->n == s->len && !memcmp(buf->p, s->rec, s->len))
		return 0;
	(*changed)++;
	return pn_put(w, PN_T_SOURCES, s->name, strlen(s->name), buf->p, buf->n, err);
}

int pn_merge_recount_sources(pn_store *out, pn_merge_stats *stats, char *err)
{
	source_list l = {0};
	pn_rtxn *t;
	if (pn_rtxn_begin(out, &t, err))
		return -1;
	int rc = pn_foreach(t, PN_T_SOURCES, NULL, 0, take_source, &l);
	if (!rc && !l.oom)
		rc = pn_foreach(t, PN_T_MODEL_PATHS, NULL, 0, count_place, &l);
	pn_rtxn_end(t);
	if (rc || l.oom) {
		source_list_free(&l);
		return pn_fail(err, "store %s: counting the sources' places failed",
			       pn_store_path(out));
	}
	pn_writer *w;
	if (pn_writer_open(out, &w, 0, err)) {
		source_list_free(&l);
		return -1;
	}
	pn_buf buf = {0};
	for (size_t i = 0; !rc && i < l.n; i++)
		rc = put_counts(w, &l.v[i], &buf, &stats->recounted, err);
	pn_buf_free(&buf);
	source_list_free(&l);
	if (rc) {
		pn_writer_close(w, (char[PN_ERRLEN]){0});
		return -1;
	}
	return pn_writer_close(w, err);
}

uint64_t pn_merge_total_conflicts(const pn_merge_stats *s)
{
	uint64_t n = 0;
	for (int t = 0; t < PN_T_COUNT; t++)
		n += s->table[t].conflicts;
	return n;
}
