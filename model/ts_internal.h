/*
 * ts_internal.h - what the parts of the TorchScript reader share (not a
 * public header: model/torchscript.h is).
 *
 *   ts_archive.c  the zip: members by name, the pickles, tensors rebuilt
 *                 from their storages, code files parsed on demand
 *   ts_graph.c    the ONNX graph being built: nodes, constants, names
 *   ts_lower.c    the interpreter: runs forward() over symbolic values,
 *                 inlining submodule calls
 *   ts_values.c   its values: constructors, numbers known now, a value as
 *                 an ONNX tensor, the rank hints of graph inputs
 *   ts_control.c  control flow on run-time values, as If and Loop
 *   ts_aten.c     the table of torch.* / ops.* calls onto ONNX nodes, as
 *                 torch.onnx maps them (one function per aten op)
 *
 * The interpreter's values (ts_val) are Python's as TorchScript has them:
 * None, bool, int, float, str, lists and tuples, modules (pickled objects
 * with their class), bound methods, qualified names (torch.add, a class),
 * and tensors, which are ONNX value names.  An int that depends on a
 * tensor's runtime shape (torch.size of a symbolic dim) is a 0-d int64
 * tensor flagged as a scalar, as torch.onnx represents it.
 */
#ifndef PN_TS_INTERNAL_H
#define PN_TS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "model/pickle.h"
#include "model/ts_syntax.h"
#include "onnx/onnx.pb-c.h"
#include "schemas/tensor.h"

/* --- limits, checked before the work they bound --- */
#define TS_LIMIT_MEMBERS 100000          /* zip members */
#define TS_LIMIT_NODES 2000000           /* ONNX nodes one model lowers to */
#define TS_LIMIT_CALL_DEPTH 64           /* nested method calls (recursion) */
#define TS_LIMIT_UNROLL 4096             /* statements a constant loop runs, per loop */
#define TS_LIMIT_STEPS 50000000          /* statements one model runs in all */

/* --- the archive (ts_archive.c) --- */

typedef struct ts_member {
	const char *name;     /* without the archive's top folder: "data/0", "code/__torch__.py" */
	const uint8_t *data;
	size_t len;
} ts_member;

typedef struct ts_archive {
	pn_arena *a;
	ts_member *m;
	int32_t n;
	pn_pkl *data;         /* data.pkl: the root module */
	pn_pkl *constants;    /* constants.pkl: a tuple, or NULL */
	/* parsed code files, by path (small: one per module path used) */
	const char **code_paths;
	pn_ts_file **code_files;
	int32_t n_code, cap_code;
} ts_archive;

/* 1 when bytes are a zip holding <top>/data.pkl and <top>/code/. */
int ts_archive_sniff(const void *bytes, size_t len);
/* What kind of zip this is when not TorchScript: "a torch.save state dict
 * (weights, no graph)", "a torch.export .pt2 archive", or NULL. */
const char *ts_archive_other_kind(const void *bytes, size_t len);
int ts_archive_open(const void *bytes, size_t len, pn_arena *a, ts_archive *ar, char *err);
const ts_member *ts_archive_find(const ts_archive *ar, const char *name);
/* The tensor a pickled _rebuild_tensor_v2 (or _rebuild_parameter around
 * one) describes, made contiguous, from folder ("data" or "constants").
 * Returns 0, 1 when obj is not a tensor rebuild, -1 with err. */
int ts_archive_tensor(ts_archive *ar, const pn_pkl *obj, const char *folder, pn_tensor *out,
		      char *err);
/* The class `qual` ("__torch__.torchvision.models.resnet.ResNet") or
 * function, from its code file; NULL when absent (err says why, "" when the
 * file is there but the name is not). */
const pn_ts_class *ts_archive_class(ts_archive *ar, const char *qual, char *err);
const pn_ts_func *ts_archive_func(ts_archive *ar, const char *qual, char *err);

/* --- the graph being built (ts_graph.c) --- */

typedef struct ts_graph ts_graph;
struct ts_graph {
	pn_arena *a;
	ts_graph *parent;     /* a body's enclosing graph */
	Onnx__NodeProto **nodes;
	size_t n_nodes, cap_nodes;
	Onnx__TensorProto **inits;
	size_t n_inits, cap_inits;
	Onnx__ValueInfoProto **inputs, **outputs;
	size_t n_inputs, cap_inputs, n_outputs, cap_outputs;
	int64_t *counter;     /* fresh names, shared with the bodies */
	int64_t *total_nodes; /* shared too, for the limit */
};

void ts_graph_init(ts_graph *g, pn_arena *a, ts_graph *parent, int64_t *counter, int64_t *total);
/* A node of type op with the given inputs ("" for an omitted one) and
 * n_out fresh outputs; NULL past the node limit or out of memory. */
Onnx__NodeProto *ts_node(ts_graph *g, const char *op, const char *const *in, int n_in, int n_out);
const char *ts_fresh_name(ts_graph *g, const char *hint);
int ts_attr_int(ts_graph *g, Onnx__NodeProto *n, const char *name, int64_t v);
int ts_attr_float(ts_graph *g, Onnx__NodeProto *n, const char *name, float v);
int ts_attr_ints(ts_graph *g, Onnx__NodeProto *n, const char *name, const int64_t *v, int k);
int ts_attr_str(ts_graph *g, Onnx__NodeProto *n, const char *name, const char *s);
int ts_attr_tensor(ts_graph *g, Onnx__NodeProto *n, const char *name, const pn_tensor *t);
int ts_attr_graph(ts_graph *g, Onnx__NodeProto *n, const char *name, Onnx__GraphProto *body);
/* A Constant node holding t (copied); returns its output name. */
const char *ts_constant(ts_graph *g, const pn_tensor *t);
const char *ts_constant_i64(ts_graph *g, const int64_t *v, int k, int rank);
const char *ts_constant_f32(ts_graph *g, float v);
/* An initializer named name holding t's bytes (not copied). */
int ts_initializer(ts_graph *g, const char *name, const pn_tensor *t);
/* A graph input or output: dtype, rank (-1 unknown) and dims (< 0: the
 * symbolic name dim_names[i], or unknown when NULL). */
Onnx__ValueInfoProto *ts_value_info(ts_graph *g, const char *name, int dtype, int rank,
				    const int64_t *dims, const char *const *dim_names);
int ts_graph_input(ts_graph *g, Onnx__ValueInfoProto *vi);
int ts_graph_output(ts_graph *g, Onnx__ValueInfoProto *vi);
/* Drops the nodes whose outputs nothing reads (a trace computes sizes it
 * never uses; torch.onnx drops them too), and the initializers no node
 * reads.  For the root graph, once its outputs are declared. */
int ts_graph_prune(ts_graph *g);
Onnx__GraphProto *ts_graph_finish(ts_graph *g, const char *name);

/* --- values and the interpreter (ts_lower.c) --- */

typedef struct ts_ctx ts_ctx;

enum ts_kind {
	TSV_NONE = 0,
	TSV_BOOL,
	TSV_INT,
	TSV_FLOAT,
	TSV_STR,
	TSV_TENSOR,   /* name, dtype, rank, dims; scalar: a runtime int/float */
	TSV_LIST,
	TSV_TUPLE,
	TSV_DICT,     /* items: key, value, ... (n pairs) */
	TSV_MODULE,   /* obj (the pickled module), cls, path ("layer1.0.conv1") */
	TSV_METHOD,   /* self (a module or list) . s */
	TSV_QUAL,     /* a qualified name: "torch.add", "__torch__.foo.Bar", "ops.prim" */
	TSV_DEVICE,   /* torch.device(...): only carried along */
};

typedef struct ts_val ts_val;
struct ts_val {
	uint8_t kind;
	uint8_t scalar;       /* TENSOR: a Python int/float computed at run time */
	int64_t i;
	double f;
	const char *s;        /* STR, QUAL, METHOD's name */
	const char *name;     /* TENSOR: the ONNX value */
	int32_t dtype;        /* TENSOR: ONNX dtype, 0 unknown */
	int32_t rank;         /* TENSOR: -1 unknown */
	int64_t dims[PN_MAX_RANK];   /* TENSOR: -1 unknown */
	const pn_tensor *data;       /* TENSOR: known contents (a weight), or NULL */
	int32_t input;        /* TENSOR: 1 + index of the graph input it is, else 0 */
	ts_val **items;
	int32_t n, cap;
	const pn_pkl *obj;    /* MODULE */
	const pn_ts_class *cls;
	const char *path;     /* MODULE: attribute path from the root, "" for it */
	ts_val *self;         /* METHOD */
	Onnx__NodeProto *node;      /* TENSOR: the node that made it (NULL: an input, a weight) */
	/* TENSOR made by slices of base with known bounds and step 1: a view
	 * an in-place fill_ writes through (view_dim[i], view_lo[i], view_hi[i]) */
	ts_val *view_base;
	int32_t n_view;
	int64_t view_dim[PN_MAX_RANK], view_lo[PN_MAX_RANK], view_hi[PN_MAX_RANK];
};

/* The lowering of one aten call: args are positional, keywords already put
 * in place by the table's parameter names (missing ones NULL). */
typedef int (*ts_aten_fn)(ts_ctx *c, ts_val **args, int n, ts_val **out);
typedef struct ts_aten {
	const char *name;     /* "torch._convolution", "ops.prim.NumToTensor" */
	const char *params;   /* "input,weight,bias,stride,..." for keywords */
	ts_aten_fn fn;
} ts_aten;
const ts_aten *ts_aten_find(const char *name);

/* What ts_aten.c needs of the interpreter. */
ts_graph *ts_cur(ts_ctx *c);
pn_arena *ts_arena(ts_ctx *c);
int ts_err(ts_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
ts_val *ts_new(ts_ctx *c, int kind);
ts_val *ts_int(ts_ctx *c, int64_t v);
ts_val *ts_float(ts_ctx *c, double v);
ts_val *ts_bool(ts_ctx *c, int v);
ts_val *ts_tensor(ts_ctx *c, const char *name, int dtype, int rank);
ts_val *ts_seq(ts_ctx *c, int kind, int n);
/* v as an ONNX value name: a tensor's own, a number or a list of numbers
 * as a Constant (int64 or float32, as torch.onnx makes them), a list of
 * runtime ints concatenated into one 1-D int64 tensor. */
const char *ts_as_tensor(ts_ctx *c, ts_val *v);
/* A rank a graph input of unknown rank takes from its first use (conv: the
 * weight's), with the dims that use implies: dims[i] >= 0 fixed, -1
 * symbolic named name[i]. */
void ts_hint_input(ts_ctx *c, ts_val *v, int rank, const int64_t *dims, const char *const *names);
/* Records an op the table does not know; the model is kept, the op becomes
 * a node of domain "torch" named for it. */
void ts_unsupported(ts_ctx *c, const char *op);
/* That node, over the call's tensor arguments ("aten::roll" -> op type
 * "roll"), recorded with ts_unsupported; its one output of unknown rank. */
ts_val *ts_unknown_op(ts_ctx *c, const char *op, ts_val **args, int n);

/* Python's a op b ("+", "<", "//", ...) on two numbers known now, or NULL
 * when either is not one. */
ts_val *ts_py_binary(ts_ctx *c, const char *op, ts_val *a, ts_val *b);

/* Numbers: 1 when v is an int (or bool) known now, its value in *out. */
int ts_get_int(const ts_val *v, int64_t *out);
int ts_get_float(const ts_val *v, double *out);
/* A list or tuple of known ints (an int alone counts as a list of rep
 * copies of itself, as torch's int[2] parameters accept). */
int ts_get_ints(const ts_val *v, int64_t *out, int max, int rep);

/* TorchScript's ScalarType codes to ONNX dtypes, and back. */
int ts_dtype_from_scalar_type(int64_t st);

/* --- the interpreter's state (ts_lower.c runs it, ts_control.c lowers its
 * control flow, ts_values.c makes its values) --- */

/* A function call's variables (a body of If or Loop runs on a copy). */
typedef struct ts_frame {
	const char **names;
	ts_val **vals;
	int n, cap;
	ts_val *ret;
} ts_frame;

/* A pickled object (module or tensor) and the value it became. */
typedef struct ts_memo {
	const pn_pkl *key;
	ts_val *val;
} ts_memo;

struct ts_ctx {
	ts_archive ar;
	pn_arena *a;
	ts_graph root;
	ts_graph *cur;
	int64_t counter, total;
	char *err;
	int depth;
	int64_t steps;
	ts_memo *memos;
	int n_memo, cap_memo;
	ts_val **inputs;       /* the tensor graph inputs, for their rank hints */
	const char ***input_names;
	int n_inputs;
	const char **unsupported;
	int n_unsup;
};

/* How a statement ends. */
enum { FLOW_NEXT = 0, FLOW_RETURN, FLOW_BREAK, FLOW_CONTINUE };


ts_val **ts_lookup(ts_frame *f, const char *name);
int ts_bind(ts_ctx *c, ts_frame *f, const char *name, ts_val *v);
int ts_frame_copy(ts_ctx *c, const ts_frame *from, ts_frame *to);
/* Runs a block: FLOW_* or -1. */
int ts_exec_block(ts_ctx *c, ts_frame *f, const pn_ts_block *b);
int ts_seq_push(ts_ctx *c, ts_val *s, ts_val *item);
/* Python's truth of v: 0 with *out, 1 when known only at run time, -1. */
int ts_truth(ts_val *v, int *out);
/* range() over known ints as a list; NULL when an argument is a run-time int. */
ts_val *ts_range_list(ts_ctx *c, ts_val **args, int n);
/* An if on a run-time condition: an ONNX If (ts_control.c). */
int ts_lower_if(ts_ctx *c, ts_frame *f, const pn_ts_stmt *s, ts_val *cond);
/* for i in range(n), n known only at run time: an ONNX Loop. */
int ts_lower_loop(ts_ctx *c, ts_frame *f, const pn_ts_stmt *s, ts_val *count);
/* while cond, cond (its value before the first step) known only at run
 * time: an ONNX Loop whose body computes the condition again. */
int ts_lower_while(ts_ctx *c, ts_frame *f, const pn_ts_stmt *s, ts_val *cond);
/* An expression's value (ts_lower.c). */
ts_val *ts_eval(ts_ctx *c, ts_frame *f, const pn_ts_expr *e);

#endif
