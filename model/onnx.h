/*
 * onnx.h - reading and writing the ONNX protobuf format.
 *
 * onnx_tensor.c: TensorProto <-> pn_tensor (and the sequence/optional
 * containers of backend-test files).  onnx_decode.c: ModelProto -> graph IR.
 * onnx_external.c: external tensor data.  Everything protobuf-c allocates
 * comes from a pn_arena.
 */
#ifndef PN_ONNX_H
#define PN_ONNX_H

#include <stddef.h>

#include "onnx/onnx.pb-c.h"
#include "passnet.pb-c.h"
#include "schemas/ir.h"

/* Where files next to a model are read from: a directory on disk or a folder
 * inside an archive.  read returns 0 with a malloc'd buffer, 1 when the file
 * does not exist, -1 with a message; list returns a count of malloc'd sorted
 * names (directories end in '/') or -1. */
typedef struct pn_fileio {
	int (*read)(void *ud, const char *rel, void **data, size_t *len, char *err);
	int (*list)(void *ud, const char *rel, char ***names, char *err);
	void *ud;
} pn_fileio;

/* A pn_fileio over a directory on disk (ud is the directory path). */
extern const pn_fileio pn_dirio_template;
pn_fileio pn_dirio(const char *dir);

/* Limits checked before allocation. */
#define PN_LIMIT_GRAPH_DEPTH 16           /* nested If/Loop/Scan bodies */
#define PN_LIMIT_MODEL_BYTES ((size_t)2 << 30)

/* --- tensors (onnx_tensor.c) --- */

/* Decodes tp into out; data is copied into arena (out->owns = 0).
 * A tensor whose bytes are external and were not resolved fails with 1
 * (no message) so the caller can keep it as metadata. */
int pn_tensor_from_proto(const Onnx__TensorProto *tp, pn_arena *a, pn_tensor *out, char *err);
/* Reads a backend-test .pb file of the given kind (enum pn_value_kind: a
 * TensorProto, a sequence or an optional) into a
 * heap tensor; *name (may be NULL) receives a malloc'd copy of its name. */
int pn_tensor_read_pb(const void *bytes, size_t len, int kind, pn_tensor **out, char **name,
		      char *err);
/* Encodes t (tensor, sequence or optional) as a .pb file (malloc'd). */
int pn_tensor_write_pb(const pn_tensor *t, const char *name, void **bytes, size_t *len, char *err);
/* Fills a TensorProto (allocated in arena) with t's bytes as raw_data. */
Onnx__TensorProto *pn_tensor_to_proto(const pn_tensor *t, const char *name, pn_arena *a);

/* --- types (onnx_types.c) --- */

/* t as a TypeProto in arena a (unknown dims left without a value). */
Onnx__TypeProto *pn_type_to_proto(pn_arena *a, const pn_type *t);

/* --- models (onnx_decode.c) --- */

Onnx__ModelProto *pn_onnx_unpack(const void *bytes, size_t len, pn_arena *a, char *err);

/* Weight policy: which constant tensors are kept by value, the rest become
 * pn_wmeta statistics (see onnx_weights.c for the thresholds and why). */
int pn_weight_by_value(int dtype, int64_t numel);

/* Per-channel statistics are kept for the first this many channels (dim 0)
 * of a weight: a record holds at most 2 floats per channel per weight. */
#define PN_WEIGHT_CHANNELS_MAX 4096

/* The axis a weight's channels run along: its first axis longer than 1
 * (dims before it are 1, so channel c is elements [c*inner, (c+1)*inner)),
 * or -1 (a single element). */
int pn_weight_channel_axis(int rank, const int64_t *dims);
/* The statistics of tensor t (its bytes at hand) into w: whole-tensor
 * moments and range, and per-channel mean and std (arrays in a). */
int pn_weight_stats(const pn_tensor *t, pn_arena *a, pn_wmeta *w);
/* The statistics a stored record keeps into w (borrowing its arrays). */
void pn_weight_meta_from_record(const Passnet__WeightMeta *wm, pn_wmeta *w);

typedef struct pn_decode_opts {
	int weights_as_meta;   /* apply pn_weight_by_value; 0 keeps every byte */
	/* Statistics of tensors whose bytes were stripped (a model read back
	 * from the store), matched by tensor name. */
	Passnet__WeightMeta **metas;
	size_t n_metas;
} pn_decode_opts;

/* Builds the IR of mp into m.  Names and attribute lists are not copied, so
 * mp must live in m->arena (unpack it there).  Validates: undefined values,
 * duplicate names, cycles, limits. */
int pn_model_from_proto(const Onnx__ModelProto *mp, const pn_decode_opts *o, pn_model *m,
			char *err);

/* --- external data (onnx_external.c) --- */

/* Loads the bytes of every EXTERNAL tensor of mp (graph, nested graphs,
 * Constant attributes) into raw_data.  A missing file leaves the tensor
 * without bytes and adds one warning to m; a location that is absolute or
 * climbs with ".." is an error, as are offsets past the end of the file.
 * Returns the number of tensors left without bytes, or -1. */
int pn_onnx_resolve_external(Onnx__ModelProto *mp, const pn_fileio *io, pn_model *m, char *err);

/* --- convenience loaders (onnx_load.c) --- */

/* Reads test_data_set_* folders under rel ("" = beside the model) into
 * m->testsets. */
int pn_model_load_testsets(pn_model *m, const pn_fileio *io, char *err);
/* Loads a model for execution: every weight by value, external data from
 * io, and test sets when with_tests.  *out is freed with pn_model_free. */
int pn_model_load(const void *bytes, size_t len, const pn_fileio *io, int with_tests,
		  pn_model **out, char *err);
/* Same from a path: a .onnx file or a directory holding model.onnx. */
int pn_model_load_path(const char *path, int with_tests, pn_model **out, char *err);

int pn_read_file(const char *path, void **data, size_t *len, char *err);

#endif
