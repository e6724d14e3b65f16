#include "store/records.h"

#include <stdlib.h>
#include <string.h>

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
