/*
 * ingest.h - turning one model file into its store record.
 *
 * This is the per-model work of `passnet extract`, done in parallel: decode,
 * resolve external weights, infer every value's shape, keep large weights
 * as statistics, gather the test sets beside the model, and pack a
 * Passnet__Model.  It touches no shared state, so any number of models can
 * be ingested at once and the record depends only on the bytes it was given
 * (and the files beside them).
 */
#ifndef PN_INGEST_H
#define PN_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/util.h"
#include "model/onnx.h"
#include "runtime/infer.h"

/* One shape variant's record (extract/variants.h), stored beside its base. */
typedef struct pn_ingest_variant {
	pn_key key;            /* XXH3-128 of "variant", the base key and its binding */
	uint8_t *record;       /* packed Passnet__Model holding only what differs */
	size_t record_len;
} pn_ingest_variant;

typedef struct pn_ingest {
	pn_key key;            /* XXH3-128 of the model bytes */
	int n_variants;
	pn_ingest_variant *variants;
	int status;            /* PASSNET__MODEL_STATUS__MODEL_OK / _WARNING / _FAILED */
	uint8_t *record;       /* packed Passnet__Model (malloc'd); NULL if failed */
	size_t record_len;
	char err[PN_ERRLEN];   /* why it failed */
	int check_reused;      /* its weight check came from the run's memo */
	int check_booked;      /* its blind check's outputs came from the run's book */
	int variants_reused;   /* its variants came from the run's variant memo */
	int independence_reused;   /* its batch independence verdict did */
} pn_ingest;

/* What extract makes of each model. */
typedef struct pn_ingest_opts {
	const pn_dimbind *bind;   /* symbolic input dims (may be NULL) */
	int variants;             /* shape variants made of it (0: none) */
	int no_weight_check;      /* skip extract/weight_scale.h's runs */
	struct pn_weight_memo *memo;   /* the run's weight checks, shared by its
				        * workers (extract/weight_memo.h); NULL: none */
	struct pn_variant_memo *variant_memo;   /* the run's generalized variants
						 * (extract/variant_memo.h); NULL: none */
} pn_ingest_opts;

/* Ingests one model as o says; never fails as a call: problems end up in
 * out->status and out->err.  io reads files beside the model (may be
 * NULL). */
void pn_ingest_model(const void *bytes, size_t len, const pn_fileio *io, const char *source,
		     const char *path, const pn_ingest_opts *o, pn_ingest *out);
/* The key of a variant of model `base` with binding text `text`. */
pn_key pn_variant_key(const pn_key *base, const char *text);
void pn_ingest_clear(pn_ingest *in);

/* Loads a stored model record back into the IR (weights as metadata),
 * with value types from the stored inference and m->bind from the record.  *out is freed with
 * pn_model_free; *rec (may be NULL) receives the unpacked record, which lives
 * in the model's arena. */
int pn_model_from_record(const void *rec_bytes, size_t len, pn_model **out, Passnet__Model **rec,
			 char *err);
/* pn_model_from_record, then inference at the record's binding into *r:
 * what partition and dedup work on.  On failure nothing is left to free. */
int pn_model_from_record_typed(const void *rec_bytes, size_t len, pn_model **out,
			       Passnet__Model **rec, pn_infer_result *r, char *err);

#endif
