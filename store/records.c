#include "store/records.h"

#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "common/buf.h"
#include "common/compress.h"
#include "common/err.h"

int pn_put_msg(pn_writer *w, int table, const void *key, size_t klen, const ProtobufCMessage *msg,
	       char *err)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return pn_fail(err, "out of memory");
	protobuf_c_message_pack(msg, buf);
	int rc = pn_put(w, table, key, klen, buf, n, err);
	free(buf);
	return rc;
}

static size_t error_key(const pn_key *id, const char *stage, uint8_t *key)
{
	size_t l = strlen(stage);
	if (l > 32)
		l = 32;
	memcpy(key, id->b, 16);
	memcpy(key + 16, stage, l);
	return 16 + l;
}

int pn_error_put(pn_writer *w, const pn_key *id, const char *stage, const char *source,
		 const char *path, const char *msg, char *err)
{
	uint8_t key[48];
	size_t kl = error_key(id, stage, key);
	Passnet__Error e;
	passnet__error__init(&e);
	e.has_version = 1;
	e.version = PN_SCHEMA_VERSION;
	e.stage = (char *)stage;
	e.source = (char *)(source ? source : "");
	e.path = (char *)(path ? path : "");
	e.message = (char *)(msg ? msg : "");
	return pn_put_msg(w, PN_T_ERRORS, key, kl, &e.base, err);
}

int pn_model_error_put(pn_writer *w, const uint8_t model[16], const char *stage, const char *msg,
		       char *err)
{
	char hex[33];
	pn_hex(model, 16, hex);
	pn_error_line("%s: model %s: %s", stage, hex, msg);
	pn_key id;
	memcpy(id.b, model, 16);
	return pn_error_put(w, &id, stage, "", hex, msg, err);
}

/* One varint at *p (below end); 0 when it runs past end. */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

#define VARIANT_OF_FIELD 20   /* Passnet__Model.variant_of */
#define GRAPH_KEY_FIELD 27    /* Passnet__Model.graph_key */
#define MODEL_GRAPH_FIELD 10  /* Passnet__Model.graph (an onnx.ModelProto) */
#define PROTO_GRAPH_FIELD 7   /* onnx.ModelProto.graph */

/* Walks the top-level fields of p[0..end): calls fn for each with its
 * number, wire type and its whole bytes [start, next) and, for a
 * length-delimited field, its body [body, next).  0 when the bytes end
 * inside a field (malformed), 1 when fn stopped the walk, else 2. */
typedef int (*field_fn)(void *ud, uint64_t field, int wire, const uint8_t *start,
			const uint8_t *body, const uint8_t *next);

static int walk_fields(const uint8_t *p, const uint8_t *end, field_fn fn, void *ud)
{
	while (p < end) {
		const uint8_t *start = p, *body = NULL;
		uint64_t tag, n;
		if (!read_varint(&p, end, &tag))
			return 0;
		switch (tag & 7) {
		case 0:
			if (!read_varint(&p, end, &n))
				return 0;
			break;
		case 1:
		case 5:
			n = (tag & 7) == 1 ? 8 : 4;
			if (n > (uint64_t)(end - p))
				return 0;
			p += n;
			break;
		case 2:
			if (!read_varint(&p, end, &n) || n > (uint64_t)(end - p))
				return 0;
			body = p;
			p += n;
			break;
		default:
			return 0;
		}
		if (fn(ud, tag >> 3, (int)(tag & 7), start, body, p))
			return 1;
	}
	return 2;
}

int pn_walk_fields(const void *rec, size_t len, pn_field_fn fn, void *ud)
{
	const uint8_t *p = rec;
	return walk_fields(p, p + len, fn, ud);
}

typedef struct key_field {
	uint64_t field;
	uint8_t *out;
} key_field;

static int take_key_field(void *ud, uint64_t field, int wire, const uint8_t *start,
			  const uint8_t *body, const uint8_t *next)
{
	(void)start;
	key_field *k = ud;
	if (field != k->field || wire != 2 || next - body != 16)
		return 0;
	memcpy(k->out, body, 16);
	return 1;
}

/* A 16-byte field of a record's top level (the last one wins in protobuf,
 * but the records written here hold it once). */
static int find_key_field(pn_bytes val, uint64_t field, uint8_t out[16])
{
	key_field k = {field, out};
	return walk_fields(val.data, (const uint8_t *)val.data + val.len, take_key_field, &k) == 1;
}

int pn_model_variant_of(pn_bytes val, uint8_t base[16])
{
	return find_key_field(val, VARIANT_OF_FIELD, base);
}

/* --- the graph kept apart (graphs table) ------------------------------------------ */

typedef struct split {
	pn_buf out;           /* the record without the graph */
	pn_buf proto;         /* field 10's body without field 7 */
	const uint8_t *graph; /* field 7's body */
	size_t graph_len;
	int graphs;
} split;

static int proto_field(void *ud, uint64_t field, int wire, const uint8_t *start,
		       const uint8_t *body, const uint8_t *next)
{
	split *s = ud;
	if (field == PROTO_GRAPH_FIELD && wire == 2) {
		s->graph = body;
		s->graph_len = (size_t)(next - body);
		s->graphs++;
	} else {
		pn_buf_put(&s->proto, start, (size_t)(next - start));
	}
	return 0;
}

static int record_field(void *ud, uint64_t field, int wire, const uint8_t *start,
			const uint8_t *body, const uint8_t *next)
{
	split *s = ud;
	if (field == MODEL_GRAPH_FIELD && wire == 2) {
		s->proto.n = 0;
		if (walk_fields(body, next, proto_field, s) != 2)
			return 1;
		pn_buf_varint(&s->out, MODEL_GRAPH_FIELD << 3 | 2);
		pn_buf_varint(&s->out, s->proto.n);
		pn_buf_put(&s->out, s->proto.p, s->proto.n);
	} else {
		pn_buf_put(&s->out, start, (size_t)(next - start));
	}
	return 0;
}

/* A graph into the graphs table, packed: a graph is mostly the names of its
 * values and nodes, and a zstd frame of it about a seventh of its bytes
 * (1,754 MB of graphs in the 100K bench/scale build).  Level 1: the
 * levels above it packed those graphs no smaller. */
#define GRAPH_ZSTD_LEVEL 1

static int put_graph(pn_writer *w, const pn_key *gk, const uint8_t *g, size_t n, char *err)
{
	pn_buf packed = {0};
	int rc = pn_zstd_pack(g, n, GRAPH_ZSTD_LEVEL, &packed, err);
	if (!rc)
		rc = pn_put(w, PN_T_GRAPHS, gk->b, 16, packed.p, packed.n, err);
	pn_buf_free(&packed);
	return rc;
}

int pn_model_record_put(pn_writer *w, const uint8_t key[16], const void *rec, size_t len,
			char *err)
{
	split s = {0};
	int walked = walk_fields(rec, (const uint8_t *)rec + len, record_field, &s);
	int rc;
	if (walked != 2 || s.graphs != 1 || s.out.oom || s.proto.oom) {
		/* no graph (a failed model, a variant) or one this cannot take
		 * apart: the record as it is */
		rc = pn_put(w, PN_T_MODELS, key, 16, rec, len, err);
	} else {
		pn_key gk = pn_key_of(s.graph, s.graph_len);
		pn_buf_varint(&s.out, GRAPH_KEY_FIELD << 3 | 2);
		pn_buf_varint(&s.out, 16);
		pn_buf_put(&s.out, gk.b, 16);
		pn_bytes have;
		rc = s.out.oom ? pn_fail(err, "out of memory") : 0;
		/* content-addressed: a graph stored is the same bytes */
		if (!rc && pn_wget(w, PN_T_GRAPHS, gk.b, 16, &have) != 0)
			rc = put_graph(w, &gk, s.graph, s.graph_len, err);
		if (!rc)
			rc = pn_put(w, PN_T_MODELS, key, 16, s.out.p, s.out.n, err);
	}
	pn_buf_free(&s.out);
	pn_buf_free(&s.proto);
	return rc;
}

/* The record's graph appended as a second field 10 holding only field 7:
 * protobuf merges the two ModelProto fields into one. */
static int append_graph(pn_rtxn *t, const uint8_t gk[16], pn_buf *b)
{
	pn_bytes packed;
	if (pn_get(t, PN_T_GRAPHS, gk, 16, &packed) != 0)
		return 1;
	pn_buf g = {0}, inner = {0};
	char err[PN_ERRLEN];
	int rc = pn_graph_unpack(packed, &g, err);
	if (!rc) {
		pn_buf_varint(&inner, PROTO_GRAPH_FIELD << 3 | 2);
		pn_buf_varint(&inner, g.n);
		pn_buf_varint(b, MODEL_GRAPH_FIELD << 3 | 2);
		pn_buf_varint(b, inner.n + g.n);
		pn_buf_put(b, inner.p, inner.n);
		pn_buf_put(b, g.p, g.n);
		rc = b->oom || inner.oom ? -1 : 0;
	}
	pn_buf_free(&inner);
	pn_buf_free(&g);
	return rc;
}

int pn_graph_unpack(pn_bytes stored, pn_buf *out, char *err)
{
	return pn_zstd_unpack(stored.data, stored.len, out, err);
}

/* --- the structure key --------------------------------------------------------------- */

/* What the key keeps of a message, field by field: KEEP hashes the field
 * whole, DROP leaves it out, SUB hashes its tag and then the kept fields of
 * the sub-message (filtered by sub_filter) instead of its bytes. */
enum { DROP, KEEP, SUB };

typedef struct field_filter {
	int (*keep)(uint64_t field);
	const struct field_filter *(*sub_filter)(uint64_t field);
} field_filter;

/* onnx.ModelProto: producer_name, producer_version, domain, model_version,
 * doc_string (2-6) and metadata_props (14) say nothing of the computation. */
static int keep_modelproto_field(uint64_t f)
{
	return (f >= 2 && f <= 6) || f == 14 ? DROP : KEEP;
}

/* passnet's WeightMeta: name, dtype, dims (1-3); the statistics are the
 * weights' values. */
static int keep_weightmeta_field(uint64_t f)
{
	return f >= 1 && f <= 3 ? KEEP : DROP;
}

static const field_filter modelproto_filter = {keep_modelproto_field, NULL};
static const field_filter weightmeta_filter = {keep_weightmeta_field, NULL};

/* passnet's Model (schemas/passnet.proto): provenance and bookkeeping out,
 * the graph (10) and the weights' descriptions (11) filtered. */
static int keep_model_field(uint64_t f)
{
	switch (f) {
	case 2: case 3: case 4: case 7: case 9: case 12:   /* source .. test sets */
	case 17: case 18: case 19:                          /* how the binding was found */
	case 20: case 21: case 24: case 25: case 26:        /* the variant's place, notes */
	case 28: case 29: case 30: case 31:                 /* the weights' check: values */
		return DROP;
	case 10: case 11:
		return SUB;
	default:
		return KEEP;
	}
}

static const field_filter *model_sub_filter(uint64_t f)
{
	return f == 10 ? &modelproto_filter : &weightmeta_filter;
}

static const field_filter model_filter = {keep_model_field, model_sub_filter};

typedef struct hash_walk {
	XXH3_state_t *x;
	const field_filter *ff;
	int bad;   /* a sub-message is malformed */
} hash_walk;

static int hash_fields(XXH3_state_t *x, const uint8_t *p, const uint8_t *end,
		       const field_filter *ff);

/* One field of a walk_fields: whole, left out, or its kept sub-fields. */
static int hash_field(void *ud, uint64_t field, int wire, const uint8_t *start,
		      const uint8_t *body, const uint8_t *next)
{
	hash_walk *w = ud;
	int k = w->ff->keep(field);
	if (k == SUB && wire == 2) {
		/* the field number, then the kept sub-fields, bracketed (the
		 * length is left out: it counts the dropped bytes too) */
		uint8_t fb[8];   /* big-endian: the same key on every host */
		for (int i = 0; i < 8; i++)
			fb[i] = (uint8_t)(field >> (56 - 8 * i));
		XXH3_128bits_update(w->x, fb, sizeof fb);
		XXH3_128bits_update(w->x, "{", 1);
		if (!hash_fields(w->x, body, next, w->ff->sub_filter(field))) {
			w->bad = 1;
			return 1;
		}
		XXH3_128bits_update(w->x, "}", 1);
	} else if (k != DROP) {
		XXH3_128bits_update(w->x, start, (size_t)(next - start));
	}
	return 0;
}

/* Hashes the kept fields of p[0..end) into x; 0 on malformed wire data. */
static int hash_fields(XXH3_state_t *x, const uint8_t *p, const uint8_t *end,
		       const field_filter *ff)
{
	hash_walk w = {x, ff, 0};
	return walk_fields(p, end, hash_field, &w) == 2 && !w.bad;
}

/* XXH3-128 of the fields of p[0..len) that ff keeps. */
static pn_key filtered_key(const void *p, size_t len, const field_filter *ff)
{
	XXH3_state_t *x = XXH3_createState();
	int ok = x && XXH3_128bits_reset(x) == XXH_OK &&
		 hash_fields(x, p, (const uint8_t *)p + len, ff);
	if (!ok) {
		/* malformed (the stages will refuse the record anyway) or no
		 * memory for the state: the key of the bytes whole, still a
		 * function of them alone */
		XXH3_freeState(x);
		return pn_key_of(p, len);
	}
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(x));
	XXH3_freeState(x);
	pn_key k;
	memcpy(k.b, c.digest, 16);
	return k;
}

pn_key pn_model_record_key(const void *rec, size_t len)
{
	return filtered_key(rec, len, &model_filter);
}

pn_key pn_onnx_model_key(const void *bytes, size_t len)
{
	return filtered_key(bytes, len, &modelproto_filter);
}

int pn_model_record_whole(pn_rtxn *t, pn_bytes v, void **rec, size_t *len)
{
	uint8_t base[16], gk[16];
	pn_bytes b = {NULL, 0};
	if (pn_model_variant_of(v, base) && pn_get(t, PN_T_MODELS, base, 16, &b) != 0)
		return 1;
	pn_buf out = {0};
	pn_buf_put(&out, b.data, b.len);
	pn_buf_put(&out, v.data, v.len);
	int rc = out.oom ? -1 : 0;
	if (!rc && find_key_field(b.len ? b : v, GRAPH_KEY_FIELD, gk))
		rc = append_graph(t, gk, &out);
	if (rc) {
		pn_buf_free(&out);
		return rc;
	}
	pn_buf_u8(&out, 0);   /* a spare byte, as before: callers may rely on len + 1 */
	*rec = out.p;
	*len = out.n - 1;
	return out.oom ? -1 : 0;
}

int pn_model_record_copy(pn_rtxn *t, const uint8_t model[16], void **rec, size_t *len)
{
	pn_bytes v;
	if (pn_get(t, PN_T_MODELS, model, 16, &v) != 0)
		return 1;
	return pn_model_record_whole(t, v, rec, len);
}

int pn_error_del(pn_writer *w, const pn_key *id, const char *stage, char *err)
{
	uint8_t key[48];
	size_t kl = error_key(id, stage, key);
	return pn_del(w, PN_T_ERRORS, key, kl, err);
}

pn_key pn_place_key(const char *source, const char *path)
{
	size_t a = strlen(source), b = strlen(path);
	char *buf = malloc(a + b + 2);
	if (!buf)
		abort();
	memcpy(buf, source, a + 1);
	memcpy(buf + a + 1, path, b + 1);
	pn_key k = pn_key_of(buf, a + b + 1);
	free(buf);
	return k;
}
