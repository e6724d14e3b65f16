/*
 * ort.h - ONNX Runtime's CPU library as a baseline backend, opened at run
 * time (dlopen), so that passnet builds and runs without it.
 *
 * Supported: ONNX Runtime 1.16 and newer 1.x (C API version 16, the one
 * asked for; ORT's OrtApi table only grows at its end, so the entries used
 * keep their positions); tested with 1.30.0, the library the npm package
 * onnxruntime-node ships (`make ort` copies it to build/ort/).
 *
 * A session is made from a model's bytes at one graph optimisation level
 * and intra-op thread count (inter-op 1, sequential execution); a run feeds
 * it passnet tensors without copying and keeps ORT's outputs until the next
 * run, readable as borrowed pn_tensor views.
 */
#ifndef PN_ORT_H
#define PN_ORT_H

#include <stddef.h>

#include "schemas/ir.h"

#define PN_ORT_MIN_MINOR 16    /* ORT 1.16: the C API version asked for */

/* ORT's GraphOptimizationLevel values. */
enum { PN_ORT_DISABLE_ALL = 0, PN_ORT_ENABLE_ALL = 99 };

typedef struct pn_ort pn_ort;
typedef struct pn_ort_session pn_ort_session;

/* The library at lib, or when lib is NULL the first of: $PASSNET_ORT_LIB,
 * build/ort/libonnxruntime.so.1 beside the passnet binary's bin/, and
 * libonnxruntime.so.1 on the loader's path.  Fails (err: which file, why)
 * when it cannot be opened, is not ORT, or is outside the supported range. */
int pn_ort_open(const char *lib, pn_ort **out, char *err);
void pn_ort_close(pn_ort *o);
const char *pn_ort_version(const pn_ort *o);
const char *pn_ort_path(const pn_ort *o);

/* The graph ORT runs after its optimisations: node count (-1 when ORT could
 * not write it out) and op types in node order, space-separated, those of
 * another domain as domain:op (cut at the buffer's end). */
typedef struct pn_ort_graph {
	int nodes;
	char ops[512];
} pn_ort_graph;

/* A session of the ONNX model bytes; err holds ORT's message on failure.
 * When graph is set, it describes ORT's optimised graph at this level. */
int pn_ort_session_new(pn_ort *o, const void *model, size_t len, int level, int threads,
		       pn_ort_graph *graph, pn_ort_session **out, char *err);
void pn_ort_session_free(pn_ort_session *s);

/* One run on in[0..n_in) named in_names, outputs out_names[0..n_out). */
int pn_ort_run(pn_ort_session *s, pn_tensor *const *in, const char *const *in_names, int n_in,
	       const char *const *out_names, int n_out, char *err);
/* Output i of the last run as a borrowed view (valid until the next run). */
int pn_ort_output(pn_ort_session *s, int i, pn_tensor *view, char *err);

#endif
