#include "store/records.h"

#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

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

int pn_model_variant_of(pn_bytes val, uint8_t base[16])
{
	const uint8_t *p = val.data, *end = p + val.len;
	while (p < end) {
		uint64_t tag, n;
		if (!read_varint(&p, end, &tag))
			return 0;
		switch (tag & 7) {
		case 0:
			if (!read_varint(&p, end, &n))
				return 0;
			break;
		case 1:
			p += 8;
			break;
		case 5:
			p += 4;
			break;
		case 2:
			if (!read_varint(&p, end, &n) || n > (uint64_t)(end - p))
				return 0;
			if (tag >> 3 == VARIANT_OF_FIELD && n == 16) {
				memcpy(base, p, 16);
				return 1;
			}
			p += n;
			break;
		default:
			return 0;
		}
	}
	return 0;
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

/* Hashes the kept fields of p[0..end) into x; 0 on malformed wire data. */
static int hash_fields(XXH3_state_t *x, const uint8_t *p, const uint8_t *end,
		       const field_filter *ff)
{
	while (p < end) {
		const uint8_t *start = p;
		uint64_t tag, n;
		if (!read_varint(&p, end, &tag))
			return 0;
		const uint8_t *after_tag = p, *body = p;
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
		int k = ff->keep(tag >> 3);
		if (k == SUB && (tag & 7) == 2) {
			/* the tag, then the kept sub-fields, bracketed (the length
			 * is left out: it counts the dropped bytes too) */
			XXH3_128bits_update(x, start, (size_t)(after_tag - start));
			XXH3_128bits_update(x, "{", 1);
			if (!hash_fields(x, body, p, ff->sub_filter(tag >> 3)))
				return 0;
			XXH3_128bits_update(x, "}", 1);
		} else if (k != DROP) {
			XXH3_128bits_update(x, start, (size_t)(p - start));
		}
	}
	return 1;
}

pn_key pn_model_structure_key(const void *rec, size_t len)
{
	XXH3_state_t *x = XXH3_createState();
	int ok = x && XXH3_128bits_reset(x) == XXH_OK &&
		 hash_fields(x, rec, (const uint8_t *)rec + len, &model_filter);
	if (!ok) {
		/* malformed (the stages will refuse the record anyway) or no
		 * memory for the state: the key of the bytes whole, still a
		 * function of them alone */
		XXH3_freeState(x);
		return pn_key_of(rec, len);
	}
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(x));
	XXH3_freeState(x);
	pn_key k;
	memcpy(k.b, c.digest, 16);
	return k;
}

int pn_model_record_whole(pn_rtxn *t, pn_bytes v, void **rec, size_t *len)
{
	uint8_t base[16];
	pn_bytes b = {NULL, 0};
	if (pn_model_variant_of(v, base) && pn_get(t, PN_T_MODELS, base, 16, &b) != 0)
		return 1;
	*rec = malloc(b.len + v.len + 1);
	if (!*rec)
		return -1;
	if (b.len)
		memcpy(*rec, b.data, b.len);
	memcpy((uint8_t *)*rec + b.len, v.data, v.len);
	*len = b.len + v.len;
	return 0;
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
