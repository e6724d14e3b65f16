/*
 * records.h - writing and reading the protobuf records of the store's tables
 * that several stages share (errors, sources, meta).
 */
#ifndef PN_RECORDS_H
#define PN_RECORDS_H

#include "common/buf.h"
#include "common/util.h"
#include "passnet.pb-c.h"
#include "store/store.h"

/* errors table: key = id (16 bytes) + stage name.  One record per place and
 * stage: a later error for the same place replaces the earlier one. */
int pn_error_put(pn_writer *w, const pn_key *id, const char *stage, const char *source,
		 const char *path, const char *msg, char *err);
/* A stage's failure on one stored model: prints "STAGE: model HEX: MSG" on
 * stderr and records it under the model's key. */
int pn_model_error_put(pn_writer *w, const uint8_t model[16], const char *stage, const char *msg,
		       char *err);

/* Copies the models-table record of `model` into *rec (malloc'd): 0, 1 when
 * there is none (or a variant's base or the graph is missing), -1 when out
 * of memory.  The graph kept apart (pn_model_record_put) comes back in it.
 * A shape variant's record (schemas/passnet.proto: variant_of) comes back
 * whole: its base's bytes followed by its own, one message to protobuf. */
int pn_model_record_copy(pn_rtxn *t, const uint8_t model[16], void **rec, size_t *len);
/* The same for a models-table value already read (a foreach). */
int pn_model_record_whole(pn_rtxn *t, pn_bytes val, void **rec, size_t *len);
/* Puts a model record (the whole message, as ingest makes it) into the
 * models table, its main graph (ModelProto.graph) apart: in the graphs
 * table under XXH3-128 of its bytes, the record holding that key
 * (graph_key) instead.  Models whose graphs are the same bytes (a
 * fine-tune: learned weights are kept as statistics, outside the graph)
 * share one copy, packed (a zstd frame).  pn_model_record_whole puts it
 * back. */
int pn_model_record_put(pn_writer *w, const uint8_t key[16], const void *rec, size_t len,
			char *err);
/* A graphs-table value's graph (it is stored packed, common/compress.h),
 * appended to out: 0, 1 with err set when the value does not unpack, -1
 * when out of memory. */
int pn_graph_unpack(pn_bytes stored, pn_buf *out, char *err);
/* 1 and the base key when a models-table value is a variant's, else 0.
 * Reads the top-level field tags only, so it costs nothing on a base. */
int pn_model_variant_of(pn_bytes val, uint8_t base[16]);

/* The record key of a whole models-table record (pn_model_record_whole):
 * XXH3-128 of its bytes less the fields that say where the model came
 * from or what its weights' values are (source, path, producer, warnings,
 * test sets, how the binding was found, the variant's place in its list,
 * ModelProto's producer, version, doc string and metadata, and each
 * WeightMeta's statistics).  Two records with the same key decode to the
 * same graph at the same binding, weights' values aside, so partition and
 * dedup give them the same candidates and subgraphs: a fine-tune (same
 * graph, other weights) has its base's key.  The converse need not hold
 * (a field order protobuf would merge the same way, say): a key that
 * differs costs one canonical labelling (the aliases table maps it to its
 * structure, store/structures.h), never a wrong result. */
pn_key pn_model_record_key(const void *rec, size_t len);

/* XXH3-128 of an ONNX file's bytes (an onnx.ModelProto) less the fields
 * that say who made it (producer name and version, domain, model_version,
 * doc string, metadata): a re-upload of one model under another version
 * has the key of the first. */
pn_key pn_onnx_model_key(const void *bytes, size_t len);

int pn_error_del(pn_writer *w, const pn_key *id, const char *stage, char *err);

/* Packs msg (any protobuf-c message) and puts it under key. */
int pn_put_msg(pn_writer *w, int table, const void *key, size_t klen, const ProtobufCMessage *msg,
	       char *err);

/* Walks the top-level fields of a protobuf record: calls fn for each with
 * its number, wire type, its whole bytes [start, next) and, for a
 * length-delimited field, its body [body, next) (NULL otherwise); fn
 * returns non-zero to stop.  0 when the bytes end inside a field
 * (malformed), 1 when fn stopped the walk, else 2. */
typedef int (*pn_field_fn)(void *ud, uint64_t field, int wire, const uint8_t *start,
			   const uint8_t *body, const uint8_t *next);
int pn_walk_fields(const void *rec, size_t len, pn_field_fn fn, void *ud);

/* Id of a place: XXH3-128 of "source\0path". */
pn_key pn_place_key(const char *source, const char *path);

#endif
