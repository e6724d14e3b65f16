/*
 * tables.c - typed access per table (store/tables.h).  The work is done once,
 * on protobuf-c's message descriptors; each table gets thin typed wrappers
 * from PN_RECORD_TABLES, so its name, message and table are stated once.
 */
#include "store/tables.h"

static ProtobufCMessage *decode(const ProtobufCMessageDescriptor *d, pn_bytes val)
{
	return protobuf_c_message_unpack(d, NULL, val.len, val.data);
}

static void release(ProtobufCMessage *m)
{
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
}

/* pn_get's 0, 1 (PN_REC_MISSING) and -1, and PN_REC_MALFORMED. */
static int get(pn_rtxn *t, int table, const ProtobufCMessageDescriptor *d, const void *key,
	       size_t klen, ProtobufCMessage **out)
{
	pn_bytes v;
	int rc = pn_get(t, table, key, klen, &v);
	*out = rc ? NULL : decode(d, v);
	return rc ? rc : *out ? 0 : PN_REC_MALFORMED;
}

/* One foreach's state.  fn is the table's pn_<table>_fn, kept as the
 * generic function pointer type and called back as its own type by call,
 * which the table's wrappers define. */
typedef struct walk walk;
struct walk {
	const ProtobufCMessageDescriptor *d;
	int (*call)(const walk *w, pn_bytes key, pn_bytes val, const ProtobufCMessage *m);
	void (*fn)(void);
	void *ud;
};

/* A record that does not decode is passed on as NULL (tables.h says why). */
static int each(void *ud, pn_bytes key, pn_bytes val)
{
	const walk *w = ud;
	ProtobufCMessage *m = decode(w->d, val);
	int rc = w->call(w, key, val, m);
	release(m);
	return rc;
}

#define PN_RECORD_TABLE_DEFINE(name, table, type, pb)                                 \
	type *pn_##name##_unpack(pn_bytes val)                                         \
	{                                                                              \
		return (type *)decode(&pb##__descriptor, val);                         \
	}                                                                              \
	int pn_##name##_get(pn_rtxn *t, const void *key, size_t klen, type **out)     \
	{                                                                              \
		ProtobufCMessage *m;                                                   \
		int rc = get(t, table, &pb##__descriptor, key, klen, &m);              \
		*out = (type *)m;                                                      \
		return rc;                                                             \
	}                                                                              \
	void pn_##name##_free(type *rec)                                               \
	{                                                                              \
		release(rec ? &rec->base : NULL);                                      \
	}                                                                              \
	static int name##_call(const walk *w, pn_bytes key, pn_bytes val,             \
			       const ProtobufCMessage *m)                              \
	{                                                                              \
		return ((pn_##name##_fn)w->fn)(w->ud, key, val, (const type *)m);     \
	}                                                                              \
	int pn_##name##_foreach(pn_rtxn *t, const void *prefix, size_t plen,           \
				pn_##name##_fn fn, void *ud)                           \
	{                                                                              \
		walk w = {&pb##__descriptor, name##_call, (void (*)(void))fn, ud};     \
		return pn_foreach(t, table, prefix, plen, each, &w);                   \
	}

PN_RECORD_TABLES(PN_RECORD_TABLE_DEFINE)
