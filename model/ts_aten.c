/*
 * ts_aten.c - torch.* and ops.* calls of TorchScript code onto ONNX nodes,
 * as torch.onnx (opset 17) maps them, so that an op from a .pt hashes as
 * the same op from the model's .onnx export: _convolution -> Conv,
 * batch_norm -> BatchNormalization (momentum 1 - m, training_mode 0),
 * linear -> Gemm(transB) on 2-D inputs else MatMul + Add,
 * adaptive_avg_pool2d(1) -> GlobalAveragePool, flatten -> Flatten,
 * silu -> Sigmoid + Mul, gelu -> the erf form, hardtanh -> Clip, ...  One
 * function per aten op or family, found through one table (ts_aten_find)
 * whose params string lets keyword arguments be put in place.
 *
 * Python-level arithmetic (ints of shapes known now) never reaches this
 * file: the interpreter computes it.  Arguments that are Python numbers
 * beside a tensor become Constants of the tensor's dtype, as torch.onnx
 * makes them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/ts_internal.h"

#define ARG(i) ((i) < n ? args[i] : NULL)

static int is_none(const ts_val *v)
{
	return !v || v->kind == TSV_NONE;
}

/* One node over in[], one output of dtype and rank; *out its value. */
static int emit(ts_ctx *c, const char *op, const char *const *in, int n_in, int dtype, int rank,
		ts_val **out, Onnx__NodeProto **node)
{
	for (int i = 0; i < n_in; i++)
		if (!in[i])
			return -1;
	Onnx__NodeProto *nd = ts_node(ts_cur(c), op, in, n_in, 1);
	if (!nd)
		return ts_err(c, "out of memory or more than %d nodes", TS_LIMIT_NODES);
	if (node)
		*node = nd;
	*out = ts_tensor(c, nd->output[0], dtype, rank);
	if (*out)
		(*out)->node = nd;
	return *out ? 0 : -1;
}

/* One number as the bytes of a dtype torch fills or compares with. */
typedef union scalar_bytes {
	float f32;
	double f64;
	int64_t i64;
	int32_t i32;
	uint8_t u8;
} scalar_bytes;

/* v as one element of dtype into *u; the dtype it took (float32 for one
 * of no such element type). */
static int scalar_of(int dtype, double v, scalar_bytes *u)
{
	memset(u, 0, sizeof(*u));
	switch (dtype) {
	case PN_DOUBLE: u->f64 = v; return dtype;
	case PN_INT64: u->i64 = (int64_t)v; return dtype;
	case PN_INT32: u->i32 = (int32_t)v; return dtype;
	case PN_BOOL: u->u8 = v != 0; return dtype;
	default: u->f32 = (float)v; return PN_FLOAT;
	}
}

/* A Python number beside a tensor of dtype: a Constant of that dtype. */
static const char *operand(ts_ctx *c, ts_val *v, int dtype)
{
	double f;
	if (v && v->kind != TSV_TENSOR && ts_get_float(v, &f)) {
		scalar_bytes u;
		pn_tensor t = {.rank = 0, .numel = 1, .data = &u};
		t.dtype = scalar_of(dtype, f, &u);
		return ts_constant(ts_cur(c), &t);
	}
	return ts_as_tensor(c, v);
}

static int max_rank(const ts_val *a, const ts_val *b)
{
	int ra = a && a->kind == TSV_TENSOR ? a->rank : 0;
	int rb = b && b->kind == TSV_TENSOR ? b->rank : 0;
	if (ra < 0 || rb < 0)
		return -1;
	return ra > rb ? ra : rb;
}

static int dtype_of(const ts_val *a, const ts_val *b)
{
	if (a && a->kind == TSV_TENSOR && a->dtype && !a->scalar)
		return a->dtype;
	if (b && b->kind == TSV_TENSOR && b->dtype && !b->scalar)
		return b->dtype;
	if (a && a->kind == TSV_TENSOR && a->dtype)
		return a->dtype;
	if (b && b->kind == TSV_TENSOR && b->dtype)
		return b->dtype;
	return (a && a->kind == TSV_FLOAT) || (b && b->kind == TSV_FLOAT) ? PN_FLOAT : PN_INT64;
}

/* --- elementwise ------------------------------------------------------------------------ */

/* aten name, ONNX op: the ops that map one to one (unary, then binary) */
#define TS_UNARIES(X)                                                                          \
	X(relu, Relu) X(sigmoid, Sigmoid) X(tanh, Tanh) X(hardswish, HardSwish) X(exp, Exp)     \
	X(log, Log) X(sqrt, Sqrt) X(neg, Neg) X(abs, Abs) X(erf, Erf) X(reciprocal, Reciprocal) \
	X(floor, Floor) X(ceil, Ceil) X(sin, Sin) X(cos, Cos) X(logical_not, Not) X(sign, Sign)  \
	X(round, Round) X(softplus, Softplus) X(mish, Mish)
#define TS_BINARIES(X)                                                                         \
	X(mul, Mul) X(div, Div) X(true_divide, Div) X(pow, Pow) X(matmul, MatMul) X(bmm, MatMul) \
	X(eq, Equal) X(lt, Less) X(gt, Greater) X(le, LessOrEqual) X(ge, GreaterOrEqual)        \
	X(remainder, Mod) X(bitwise_and, And) X(bitwise_or, Or) X(logical_and, And)              \
	X(logical_or, Or) X(maximum, Max) X(minimum, Min)

/* relu, relu_, ...: the in-place form lowers as the plain one (a trace's
 * values are never aliased in the ONNX graph) */
static const char *base_name(const char *aten, char *buf, size_t len)
{
	const char *s = strncmp(aten, "aten::", 6) ? aten : aten + 6;
	snprintf(buf, len, "%s", s);
	size_t l = strlen(buf);
	if (l > 1 && buf[l - 1] == '_' && buf[l - 2] != '_')
		buf[l - 1] = 0;
	return buf;
}

static int unary_op(ts_ctx *c, const char *onnx, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	const char *in = ts_as_tensor(c, x);
	return emit(c, onnx, &in, 1, x ? x->dtype : 0, x ? x->rank : -1, out, NULL);
}

static int is_compare(const char *onnx)
{
	return !strcmp(onnx, "Equal") || !strcmp(onnx, "Less") || !strcmp(onnx, "Greater") ||
	       !strcmp(onnx, "LessOrEqual") || !strcmp(onnx, "GreaterOrEqual");
}

static int cast_to(ts_ctx *c, ts_val *x, int dtype, ts_val **out)
{
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "Cast", &x->name, 1, dtype, x->rank, out, &nd))
		return -1;
	(*out)->scalar = x->scalar;
	return ts_attr_int(ts_cur(c), nd, "to", dtype);
}

/* The Python operator an ONNX op is on numbers known now. */
static const char *py_operator(const char *onnx)
{
	static const char *const map[][2] = {
		{"Add", "+"}, {"Sub", "-"}, {"Mul", "*"}, {"Div", "/"}, {"Pow", "**"}, {"Mod", "%"},
		{"Equal", "=="}, {"Less", "<"}, {"Greater", ">"}, {"LessOrEqual", "<="},
		{"GreaterOrEqual", ">="}, {"And", "&"}, {"Or", "|"},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (!strcmp(map[i][0], onnx))
			return map[i][1];
	return NULL;
}

static int binary_op(ts_ctx *c, const char *onnx, ts_val *a, ts_val *b, ts_val **out)
{
	const char *py = py_operator(onnx);
	if (py && a->kind != TSV_TENSOR && b->kind != TSV_TENSOR) {
		*out = ts_py_binary(c, py, a, b);
		return *out ? 0 : ts_err(c, "%s of values that are not numbers", onnx);
	}
	/* an int tensor beside a Python float computes in float, as torch does */
	if (a->kind == TSV_TENSOR && b->kind == TSV_FLOAT && pn_dtype_is_int(a->dtype) && cast_to(c, a, PN_FLOAT, &a))
		return -1;
	if (b->kind == TSV_TENSOR && a->kind == TSV_FLOAT && pn_dtype_is_int(b->dtype) && cast_to(c, b, PN_FLOAT, &b))
		return -1;
	int dt = dtype_of(a, b);
	const char *in[2] = {operand(c, a, dt), operand(c, b, dt)};
	Onnx__NodeProto *nd = NULL;
	if (emit(c, onnx, in, 2, is_compare(onnx) ? PN_BOOL : dt, max_rank(a, b), out, &nd))
		return -1;
	if (!strcmp(onnx, "Mod") && ts_attr_int(ts_cur(c), nd, "fmod", 0))
		return -1;
	(*out)->scalar = (a->kind != TSV_TENSOR || a->scalar) && (b->kind != TSV_TENSOR || b->scalar);
	return 0;
}

/* add/sub(a, b, alpha): b * alpha first when alpha is not 1 */
static int add_sub(ts_ctx *c, const char *onnx, ts_val **args, int n, ts_val **out)
{
	ts_val *a = ARG(0), *b = ARG(1), *alpha = ARG(2);
	double al = 1;
	if (!a || !b)
		return ts_err(c, "%s with %d arguments", onnx, n);
	if (!is_none(alpha) && ts_get_float(alpha, &al) && al != 1) {
		ts_val *mul_args[2] = {b, alpha};
		if (binary_op(c, "Mul", mul_args[0], mul_args[1], &b))
			return -1;
	}
	return binary_op(c, onnx, a, b, out);
}

static int op_add(ts_ctx *c, ts_val **args, int n, ts_val **out) { return add_sub(c, "Add", args, n, out); }
static int op_sub(ts_ctx *c, ts_val **args, int n, ts_val **out) { return add_sub(c, "Sub", args, n, out); }

static int op_rsub(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *sw[3] = {ARG(1), ARG(0), ARG(2)};
	return add_sub(c, "Sub", sw, n < 3 ? n : 3, out);
}

static int op_ne(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *eq = NULL;
	if (!ARG(0) || !ARG(1) || binary_op(c, "Equal", args[0], args[1], &eq))
		return -1;
	if (eq->kind == TSV_BOOL) {   /* two numbers known now */
		*out = ts_bool(c, !eq->i);
		return *out ? 0 : -1;
	}
	return emit(c, "Not", &eq->name, 1, PN_BOOL, eq->rank, out, NULL);
}

static int op_div_mode(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *mode = ARG(2);
	if (!ARG(0) || !ARG(1) || binary_op(c, "Div", args[0], args[1], out))
		return -1;
	if (!is_none(mode) && mode->kind == TSV_STR && !strcmp(mode->s, "floor") &&
	    pn_dtype_is_float((*out)->dtype)) {
		ts_val *d = *out;
		return emit(c, "Floor", &d->name, 1, d->dtype, d->rank, out, NULL);
	}
	return 0;
}

static int op_floordiv(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *m[3] = {ARG(0), ARG(1), NULL};
	ts_val s = {.kind = TSV_STR, .s = "floor"};
	m[2] = &s;
	return op_div_mode(c, m, 3, out);
}

static int op_named(ts_ctx *c, const char *name, ts_val **args, int n, ts_val **out);

/* --- activations with parameters ------------------------------------------------------- */

static int clip(ts_ctx *c, ts_val *x, ts_val *lo, ts_val *hi, ts_val **out)
{
	const char *in[3] = {ts_as_tensor(c, x), is_none(lo) ? "" : operand(c, lo, x->dtype),
			     is_none(hi) ? "" : operand(c, hi, x->dtype)};
	return emit(c, "Clip", in, 3, x->dtype, x->rank, out, NULL);
}

static int op_hardtanh(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *lo = ARG(1), *hi = ARG(2);
	ts_val dlo = {.kind = TSV_FLOAT, .f = -1}, dhi = {.kind = TSV_FLOAT, .f = 1};
	return ARG(0) ? clip(c, args[0], lo ? lo : &dlo, hi ? hi : &dhi, out) : -1;
}

static int op_relu6(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val lo = {.kind = TSV_FLOAT, .f = 0}, hi = {.kind = TSV_FLOAT, .f = 6};
	return ARG(0) ? clip(c, args[0], &lo, &hi, out) : -1;
}

static int op_clamp(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	return ARG(0) ? clip(c, args[0], ARG(1), ARG(2), out) : -1;
}

static int op_hardsigmoid(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	Onnx__NodeProto *nd = NULL;
	ts_val *x = ARG(0);
	const char *in = ts_as_tensor(c, x);
	if (emit(c, "HardSigmoid", &in, 1, x ? x->dtype : 0, x ? x->rank : -1, out, &nd))
		return -1;
	return ts_attr_float(ts_cur(c), nd, "alpha", (float)(1.0 / 6));
}

static int op_silu(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *s = NULL;
	if (!x || unary_op(c, "Sigmoid", args, n, &s))
		return -1;
	const char *in[2] = {x->name, s->name};
	return emit(c, "Mul", in, 2, x->dtype, x->rank, out, NULL);
}

/* gelu(x, approximate="none"): x * 0.5 * (1 + erf(x / sqrt(2))), the
 * nodes torch.onnx writes below opset 20 */
static int op_gelu(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *mode = ARG(1), *t;
	if (!x)
		return -1;
	if (!is_none(mode) && mode->kind == TSV_STR && !strcmp(mode->s, "tanh"))
		return ts_err(c, "gelu with approximate='tanh' is not mapped");
	ts_val k = {.kind = TSV_FLOAT, .f = 1.4142135381698608}, one = {.kind = TSV_FLOAT, .f = 1},
	       half = {.kind = TSV_FLOAT, .f = 0.5};
	if (binary_op(c, "Div", x, &k, &t) || emit(c, "Erf", &t->name, 1, x->dtype, x->rank, &t, NULL) ||
	    binary_op(c, "Add", t, &one, &t) || binary_op(c, "Mul", x, t, &t))
		return -1;
	return binary_op(c, "Mul", t, &half, out);
}

static int op_leaky_relu(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	Onnx__NodeProto *nd = NULL;
	double a = 0.01;
	if (ARG(1))
		ts_get_float(args[1], &a);
	if (unary_op(c, "LeakyRelu", args, n, out))
		return -1;
	nd = ts_cur(c)->nodes[ts_cur(c)->n_nodes - 1];
	return ts_attr_float(ts_cur(c), nd, "alpha", (float)a);
}

static int softmax_like(ts_ctx *c, const char *op, ts_val **args, int n, ts_val **out)
{
	int64_t dim;
	if (!ARG(0) || !ts_get_int(ARG(1), &dim))
		return ts_err(c, "%s without a known dim", op);
	if (unary_op(c, op, args, n, out))
		return -1;
	Onnx__NodeProto *nd = ts_cur(c)->nodes[ts_cur(c)->n_nodes - 1];
	return ts_attr_int(ts_cur(c), nd, "axis", dim);
}

static int op_softmax(ts_ctx *c, ts_val **args, int n, ts_val **out) { return softmax_like(c, "Softmax", args, n, out); }
static int op_log_softmax(ts_ctx *c, ts_val **args, int n, ts_val **out) { return softmax_like(c, "LogSoftmax", args, n, out); }

/* --- convolution, normalisation, pooling ----------------------------------------------- */

static const char *spatial_names[3][3] = {{"time"}, {"height", "width"}, {"depth", "height", "width"}};

/* A graph input's rank and roles from a conv over it: [batch, C, spatial...] */
static void hint_image(ts_ctx *c, ts_val *x, int k, int64_t channels)
{
	int64_t dims[PN_MAX_RANK];
	const char *names[PN_MAX_RANK] = {"batch"};
	dims[0] = -1;
	dims[1] = channels;
	names[1] = NULL;
	for (int i = 0; i < k; i++) {
		dims[2 + i] = -1;
		names[2 + i] = spatial_names[k - 1][i];
	}
	ts_hint_input(c, x, k + 2, dims, names);
}

static int conv_common(ts_ctx *c, ts_val *x, ts_val *w, ts_val *b, ts_val *stride, ts_val *pad,
		       ts_val *dil, int transposed, ts_val *outpad, ts_val *groups, ts_val **out)
{
	if (!x || !w || w->kind != TSV_TENSOR || w->rank < 3 || w->rank > 5)
		return ts_err(c, "convolution with a weight of unknown rank");
	int k = w->rank - 2;
	int64_t g = 1, s[3], p[6], d[3], op[3], ks[3];
	if (!is_none(groups) && !ts_get_int(groups, &g))
		return ts_err(c, "convolution with groups known only at run time");
	if (pad && pad->kind == TSV_STR)
		return ts_err(c, "convolution with padding='%s' is not mapped", pad->s);
	if (ts_get_ints(stride, s, 3, k) != k || ts_get_ints(pad, p, 3, k) != k ||
	    ts_get_ints(dil, d, 3, k) != k)
		return ts_err(c, "convolution with stride, padding or dilation not of %d known ints", k);
	for (int i = 0; i < k; i++) {
		p[k + i] = p[i];
		ks[i] = w->dims[2 + i];
	}
	hint_image(c, x, k, transposed ? w->dims[0] : w->dims[1] * g);
	const char *in[3] = {ts_as_tensor(c, x), ts_as_tensor(c, w), is_none(b) ? NULL : ts_as_tensor(c, b)};
	Onnx__NodeProto *nd = NULL;
	if (emit(c, transposed ? "ConvTranspose" : "Conv", in, is_none(b) ? 2 : 3, x->dtype, k + 2, out, &nd))
		return -1;
	ts_graph *gr = ts_cur(c);
	if (ts_attr_ints(gr, nd, "dilations", d, k) || ts_attr_int(gr, nd, "group", g) ||
	    ts_attr_ints(gr, nd, "kernel_shape", ks, k))
		return -1;
	if (transposed && ts_get_ints(outpad, op, 3, k) == k) {
		int any = 0;
		for (int i = 0; i < k; i++)
			any |= op[i] != 0;
		if (any && ts_attr_ints(gr, nd, "output_padding", op, k))
			return -1;
	}
	return ts_attr_ints(gr, nd, "pads", p, 2 * k) || ts_attr_ints(gr, nd, "strides", s, k);
}

static int op_convolution(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	int64_t tr = 0;
	ts_get_int(ARG(6), &tr);
	return conv_common(c, ARG(0), ARG(1), ARG(2), ARG(3), ARG(4), ARG(5), (int)tr, ARG(7), ARG(8), out);
}

/* conv{1,2,3}d(input, weight, bias, stride, padding, dilation, groups) */
static int op_conv(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val one = {.kind = TSV_INT, .i = 1}, zero = {.kind = TSV_INT, .i = 0};
	return conv_common(c, ARG(0), ARG(1), ARG(2), ARG(3) ? ARG(3) : &one, ARG(4) ? ARG(4) : &zero,
			   ARG(5) ? ARG(5) : &one, 0, NULL, ARG(6), out);
}

static int op_batch_norm(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	double mom = 0.1, eps = 1e-5;
	int64_t training = 0;
	ts_get_int(ARG(5), &training);
	ts_get_float(ARG(6), &mom);
	ts_get_float(ARG(7), &eps);
	if (!x || is_none(ARG(1)) || is_none(ARG(2)) || is_none(ARG(3)) || is_none(ARG(4)))
		return ts_err(c, "batch_norm without weight, bias or running statistics is not mapped");
	const char *in[5];
	for (int i = 0; i < 5; i++)
		in[i] = ts_as_tensor(c, args[i]);
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "BatchNormalization", in, 5, x->dtype, x->rank, out, &nd))
		return -1;
	ts_graph *g = ts_cur(c);
	return ts_attr_float(g, nd, "epsilon", (float)eps) || ts_attr_float(g, nd, "momentum", (float)(1 - mom)) ||
	       ts_attr_int(g, nd, "training_mode", training);
}

static int op_layer_norm(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t shape[PN_MAX_RANK];
	double eps = 1e-5;
	int k = ts_get_ints(ARG(1), shape, PN_MAX_RANK, 1);
	ts_get_float(ARG(4), &eps);
	if (!x || k < 1 || is_none(ARG(2)))
		return ts_err(c, "layer_norm without a known shape or a weight is not mapped");
	if (k == 1) {
		/* a graph input normalised over its last dim: [batch, sequence, D] */
		int64_t dims[3] = {-1, -1, shape[0]};
		const char *names[3] = {"batch", "sequence", NULL};
		ts_hint_input(c, x, 3, dims, names);
	}
	const char *in[3] = {ts_as_tensor(c, x), ts_as_tensor(c, ARG(2)),
			     is_none(ARG(3)) ? NULL : ts_as_tensor(c, ARG(3))};
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "LayerNormalization", in, in[2] ? 3 : 2, x->dtype, x->rank, out, &nd))
		return -1;
	return ts_attr_int(ts_cur(c), nd, "axis", -k) || ts_attr_float(ts_cur(c), nd, "epsilon", (float)eps);
}

/* max_pool{1,2,3}d(input, kernel, stride, padding, dilation, ceil_mode) and
 * avg_pool{1,2,3}d(input, kernel, stride, padding, ceil_mode,
 * count_include_pad, divisor_override) */
static int pool(ts_ctx *c, int avg, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t ks[3], s[3], p[6], d[3] = {1, 1, 1}, ceil = 0, cip = 1;
	int k = ts_get_ints(ARG(1), ks, 3, 1);
	if (!x || k < 1)
		return ts_err(c, "pooling without a known kernel");
	if (k == 1 && x->rank > 3)
		k = ts_get_ints(ARG(1), ks, 3, x->rank - 2);
	ts_val *st = ARG(2);
	if (is_none(st) || ((st->kind == TSV_LIST || st->kind == TSV_TUPLE) && st->n == 0))
		memcpy(s, ks, sizeof(s));
	else if (ts_get_ints(st, s, 3, k) != k)
		return ts_err(c, "pooling with unknown strides");
	if (ts_get_ints(ARG(3), p, 3, k) != k)
		return ts_err(c, "pooling with unknown padding");
	for (int i = 0; i < k; i++)
		p[k + i] = p[i];
	if (!avg && ARG(4) && ts_get_ints(ARG(4), d, 3, k) != k)
		return ts_err(c, "pooling with unknown dilation");
	ts_get_int(ARG(avg ? 4 : 5), &ceil);
	if (avg)
		ts_get_int(ARG(5), &cip);
	if (avg && !is_none(ARG(6)))
		return ts_err(c, "avg_pool with divisor_override is not mapped");
	const char *in = ts_as_tensor(c, x);
	Onnx__NodeProto *nd = NULL;
	ts_graph *g = ts_cur(c);
	if (avg && cip) {
		/* padding averaged in: an explicit Pad first, as torch.onnx
		 * writes it (even of zeros), then a pool without pads */
		int64_t pads[2 * (PN_MAX_RANK)] = {0};
		int r = k + 2;
		for (int i = 0; i < k; i++)
			pads[2 + i] = pads[r + 2 + i] = p[i];
		const char *pin[2] = {in, ts_constant_i64(g, pads, 2 * r, 1)};
		ts_val *padded = NULL;
		Onnx__NodeProto *pn = NULL;
		if (emit(c, "Pad", pin, 2, x->dtype, x->rank, &padded, &pn) || ts_attr_str(g, pn, "mode", "constant"))
			return -1;
		in = padded->name;
		memset(p, 0, sizeof(p));
	}
	if (emit(c, avg ? "AveragePool" : "MaxPool", &in, 1, x->dtype, x->rank, out, &nd))
		return -1;
	int dil = 0;
	for (int i = 0; i < k; i++)
		dil |= d[i] != 1;
	if (ts_attr_int(g, nd, "ceil_mode", ceil) ||
	    (dil && ts_attr_ints(g, nd, "dilations", d, k)) || ts_attr_ints(g, nd, "kernel_shape", ks, k))
		return -1;
	return ts_attr_ints(g, nd, "pads", p, 2 * k) || ts_attr_ints(g, nd, "strides", s, k);
}

static int op_max_pool(ts_ctx *c, ts_val **args, int n, ts_val **out) { return pool(c, 0, args, n, out); }
static int op_avg_pool(ts_ctx *c, ts_val **args, int n, ts_val **out) { return pool(c, 1, args, n, out); }

/* adaptive pooling to 1 everywhere is global pooling; other sizes need
 * the input's size, known only when the graph's dims are */
static int adaptive(ts_ctx *c, const char *global, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t sz[3];
	int k = ts_get_ints(ARG(1), sz, 3, 1);
	int ones = k >= 1;
	for (int i = 0; i < k; i++)
		ones &= sz[i] == 1;
	if (!x || !ones)
		return 1;
	const char *in = ts_as_tensor(c, x);
	return emit(c, global, &in, 1, x->dtype, x->rank, out, NULL);
}

/* Adaptive pooling to sizes other than 1, for inputs whose spatial dims
 * the sizes divide: each spatial dim d of [N, C, d...] split as
 * [out_i, d / out_i] by a Reshape computed from the input's Shape, then
 * reduced over the inner parts.  torch.onnx can only write the pooling for
 * the one input size it traced; this form runs at every size the sizes
 * divide (VGG's 7x7 at 224), and a size they do not divide fails at run
 * time, where torch would pool overlapping windows. */
static int adaptive_reshape(ts_ctx *c, const char *reduce, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t sz[3];
	int k = ts_get_ints(ARG(1), sz, 3, 1);
	if (!x || k < 1 || (x->rank >= 0 && x->rank != k + 2))
		return ts_err(c, "adaptive pooling to sizes not known now");
	for (int i = 0; i < k; i++)
		if (sz[i] < 1)
			return ts_err(c, "adaptive pooling to size %lld", (long long)sz[i]);
	ts_graph *g = ts_cur(c);
	ts_val *shape = NULL, *lead = NULL;
	int64_t zero = 0, two = 2;
	if (emit(c, "Shape", &x->name, 1, PN_INT64, 1, &shape, NULL))
		return -1;
	const char *sl[3] = {shape->name, ts_constant_i64(g, &zero, 1, 1), ts_constant_i64(g, &two, 1, 1)};
	if (emit(c, "Slice", sl, 3, PN_INT64, 1, &lead, NULL))
		return -1;
	const char *parts[1 + 2 * 3];
	int64_t axes[3];
	parts[0] = lead->name;
	for (int i = 0; i < k; i++) {
		int64_t at = 2 + i;
		ts_val *d = NULL, *q = NULL;
		const char *ga[2] = {shape->name, ts_constant_i64(g, &at, 1, 1)};
		Onnx__NodeProto *nd = NULL;
		if (emit(c, "Gather", ga, 2, PN_INT64, 1, &d, &nd) || ts_attr_int(g, nd, "axis", 0))
			return -1;
		const char *dv[2] = {d->name, ts_constant_i64(g, &sz[i], 1, 1)};
		if (emit(c, "Div", dv, 2, PN_INT64, 1, &q, NULL))
			return -1;
		parts[1 + 2 * i] = ts_constant_i64(g, &sz[i], 1, 1);
		parts[2 + 2 * i] = q->name;
		axes[i] = 3 + 2 * i;
	}
	Onnx__NodeProto *cat = ts_node(g, "Concat", parts, 1 + 2 * k, 1);
	if (!cat || ts_attr_int(g, cat, "axis", 0))
		return ts_err(c, "out of memory");
	ts_val *r = NULL;
	Onnx__NodeProto *nd = NULL;
	const char *rs[2] = {x->name, cat->output[0]};
	if (emit(c, "Reshape", rs, 2, x->dtype, 2 + 2 * k, &r, NULL) ||
	    emit(c, reduce, &r->name, 1, x->dtype, k + 2, out, &nd))
		return -1;
	return ts_attr_ints(g, nd, "axes", axes, k) || ts_attr_int(g, nd, "keepdims", 0);
}

static int op_adaptive_avg(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	int rc = adaptive(c, "GlobalAveragePool", args, n, out);
	return rc > 0 ? adaptive_reshape(c, "ReduceMean", args, n, out) : rc;
}

/* --- linear algebra ------------------------------------------------------------------- */

static int op_linear(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *w = ARG(1), *b = ARG(2);
	if (!x || !w || w->kind != TSV_TENSOR)
		return ts_err(c, "linear without a weight");
	if (w->rank == 2) {
		int64_t dims[2] = {-1, w->dims[1]};
		const char *names[2] = {"batch", NULL};
		ts_hint_input(c, x, 2, dims, names);
	}
	if (x->rank == 2 && !is_none(b)) {
		const char *in[3] = {ts_as_tensor(c, x), ts_as_tensor(c, w), ts_as_tensor(c, b)};
		Onnx__NodeProto *nd = NULL;
		if (emit(c, "Gemm", in, 3, x->dtype, 2, out, &nd))
			return -1;
		ts_graph *g = ts_cur(c);
		return ts_attr_float(g, nd, "alpha", 1) || ts_attr_float(g, nd, "beta", 1) ||
		       ts_attr_int(g, nd, "transB", 1);
	}
	ts_val *wt = NULL, *y = NULL;
	Onnx__NodeProto *nd = NULL;
	int64_t perm[2] = {1, 0};
	if (emit(c, "Transpose", &w->name, 1, w->dtype, 2, &wt, &nd) || ts_attr_ints(ts_cur(c), nd, "perm", perm, 2))
		return -1;
	const char *in[2] = {ts_as_tensor(c, x), wt->name};
	if (emit(c, "MatMul", in, 2, x->dtype, x->rank, is_none(b) ? out : &y, NULL))
		return -1;
	return is_none(b) ? 0 : binary_op(c, "Add", y, b, out);
}

static int op_addmm(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *bias = ARG(0), *a = ARG(1), *b = ARG(2);
	double beta = 1, alpha = 1;
	ts_get_float(ARG(3), &beta);
	ts_get_float(ARG(4), &alpha);
	if (!bias || !a || !b)
		return -1;
	const char *in[3] = {ts_as_tensor(c, a), ts_as_tensor(c, b), ts_as_tensor(c, bias)};
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "Gemm", in, 3, a->dtype, 2, out, &nd))
		return -1;
	return ts_attr_float(ts_cur(c), nd, "alpha", (float)alpha) || ts_attr_float(ts_cur(c), nd, "beta", (float)beta);
}

static int op_embedding(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *w = ARG(0), *idx = ARG(1);
	if (!w || !idx)
		return -1;
	if (idx->input && idx->rank < 0) {
		const char *names[2] = {"batch", "sequence"};
		idx->dtype = PN_INT64;
		ts_hint_input(c, idx, 2, NULL, names);
	}
	const char *in[2] = {ts_as_tensor(c, w), ts_as_tensor(c, idx)};
	return emit(c, "Gather", in, 2, w->dtype, idx->rank >= 0 && w->rank >= 0 ? idx->rank + w->rank - 1 : -1,
		    out, NULL);
}

/* --- shapes ----------------------------------------------------------------------------- */

static int identity(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	(void)c;
	if (!ARG(0))
		return -1;
	*out = args[0];
	return 0;
}

/* dropout(x, p, train): identity in eval, as torch.onnx leaves it */
static int op_dropout(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	int64_t train = 0;
	double p = 0;
	ts_get_int(ARG(2), &train);
	ts_get_float(ARG(1), &p);
	if (train && p != 0)
		return ts_err(c, "dropout in training mode is not mapped");
	return identity(c, args, n, out);
}

static int op_flatten(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t start = 0, end = -1;
	if (ARG(1))
		ts_get_int(args[1], &start);
	if (ARG(2))
		ts_get_int(args[2], &end);
	if (!x)
		return -1;
	if (x->rank > 0 && start < 0)
		start += x->rank;
	if (!(end == -1 || (x->rank > 0 && end == x->rank - 1)) || start < 1)
		return op_named(c, "flatten", args, n, out);
	Onnx__NodeProto *nd = NULL;
	const char *in = ts_as_tensor(c, x);
	if (emit(c, "Flatten", &in, 1, x->dtype, (int)start + 1, out, &nd))
		return -1;
	return ts_attr_int(ts_cur(c), nd, "axis", start);
}

static int op_reshape(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *shape = ARG(1);
	if (!x || !shape || (shape->kind != TSV_LIST && shape->kind != TSV_TUPLE))
		return ts_err(c, "view/reshape without a shape list");
	const char *in[2] = {ts_as_tensor(c, x), ts_as_tensor(c, shape)};
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "Reshape", in, 2, x->dtype, shape->n, out, &nd))
		return -1;
	return ts_attr_int(ts_cur(c), nd, "allowzero", 0) ? -1 : 0;
}

/* The perm attribute of a Transpose node, or -1. */
static int node_perm(const Onnx__NodeProto *n, int64_t *perm)
{
	if (!n || strcmp(n->op_type, "Transpose") || n->domain || n->n_input != 1)
		return -1;
	for (size_t a = 0; a < n->n_attribute; a++)
		if (!strcmp(n->attribute[a]->name, "perm") && n->attribute[a]->n_ints <= PN_MAX_RANK) {
			memcpy(perm, n->attribute[a]->ints, sizeof(int64_t) * n->attribute[a]->n_ints);
			return (int)n->attribute[a]->n_ints;
		}
	return -1;
}

static int transpose_perm(ts_ctx *c, ts_val *x, const int64_t *perm, int k, ts_val **out)
{
	Onnx__NodeProto *nd = NULL;
	int64_t first[PN_MAX_RANK], q[PN_MAX_RANK];
	/* a transpose of a transpose is one transpose (none when the two undo
	 * each other), as torch.onnx's peephole writes it; the first becomes
	 * dead when nothing else reads it and goes with ts_graph_prune */
	if (x->kind == TSV_TENSOR && node_perm(x->node, first) == k) {
		int nop = 1;
		for (int i = 0; i < k; i++) {
			if (perm[i] < 0 || perm[i] >= k)
				return ts_err(c, "transpose with perm %lld of a rank-%d tensor", (long long)perm[i], k);
			q[i] = first[perm[i]];
			nop &= q[i] == i;
		}
		ts_val *src = ts_tensor(c, x->node->input[0], x->dtype, k);
		if (!src)
			return -1;
		if (nop) {
			*out = src;
			return 0;
		}
		x = src;
		perm = q;
	}
	const char *in = ts_as_tensor(c, x);
	if (emit(c, "Transpose", &in, 1, x->dtype, k, out, &nd))
		return -1;
	return ts_attr_ints(ts_cur(c), nd, "perm", perm, k);
}

static int op_transpose(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t d0, d1, perm[PN_MAX_RANK];
	if (!x || x->rank < 1 || !ts_get_int(ARG(1), &d0) || !ts_get_int(ARG(2), &d1))
		return op_named(c, "transpose", args, n, out);
	if (d0 < 0)
		d0 += x->rank;
	if (d1 < 0)
		d1 += x->rank;
	if (d0 < 0 || d1 < 0 || d0 >= x->rank || d1 >= x->rank)
		return ts_err(c, "transpose of dims %lld, %lld of a rank-%d tensor", (long long)d0, (long long)d1, x->rank);
	for (int i = 0; i < x->rank; i++)
		perm[i] = i;
	perm[d0] = d1;
	perm[d1] = d0;
	return transpose_perm(c, x, perm, x->rank, out);
}

static int op_permute(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	int64_t perm[PN_MAX_RANK];
	int k = ts_get_ints(ARG(1), perm, PN_MAX_RANK, 0);
	if (!ARG(0) || k < 1)
		return ts_err(c, "permute without known dims");
	for (int i = 0; i < k; i++)
		if (perm[i] < 0)
			perm[i] += k;
	return transpose_perm(c, args[0], perm, k, out);
}

static int op_t(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	int64_t perm[2] = {1, 0};
	return ARG(0) ? transpose_perm(c, args[0], perm, 2, out) : -1;
}

static int op_concat(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *l = ARG(0);
	int64_t dim = 0;
	if (ARG(1))
		ts_get_int(args[1], &dim);
	if (!l || (l->kind != TSV_LIST && l->kind != TSV_TUPLE) || l->n < 1)
		return ts_err(c, "cat of something other than a list of tensors");
	const char **in = pn_arena_alloc(ts_arena(c), sizeof(char *) * (size_t)l->n);
	if (!in)
		return ts_err(c, "out of memory");
	for (int i = 0; i < l->n; i++)
		in[i] = ts_as_tensor(c, l->items[i]);
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "Concat", in, l->n, l->items[0]->dtype, l->items[0]->rank, out, &nd))
		return -1;
	return ts_attr_int(ts_cur(c), nd, "axis", dim);
}

static int unsqueeze1(ts_ctx *c, ts_val *x, int64_t dim, ts_val **out)
{
	const char *in[2] = {ts_as_tensor(c, x), ts_constant_i64(ts_cur(c), &dim, 1, 1)};
	return emit(c, "Unsqueeze", in, 2, x->dtype, x->rank >= 0 ? x->rank + 1 : -1, out, NULL);
}

static int op_unsqueeze(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	int64_t d;
	if (!ARG(0) || !ts_get_int(ARG(1), &d))
		return ts_err(c, "unsqueeze without a known dim");
	return unsqueeze1(c, args[0], d, out);
}

static int op_squeeze(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t d;
	if (!x)
		return -1;
	if (ARG(1) && ts_get_int(args[1], &d)) {
		const char *in[2] = {ts_as_tensor(c, x), ts_constant_i64(ts_cur(c), &d, 1, 1)};
		return emit(c, "Squeeze", in, 2, x->dtype, x->rank > 0 ? x->rank - 1 : -1, out, NULL);
	}
	const char *in = ts_as_tensor(c, x);
	return emit(c, "Squeeze", &in, 1, x->dtype, -1, out, NULL);
}

static int op_stack(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *l = ARG(0);
	int64_t dim = 0;
	if (ARG(1))
		ts_get_int(args[1], &dim);
	if (!l || (l->kind != TSV_LIST && l->kind != TSV_TUPLE) || l->n < 1)
		return ts_err(c, "stack of something other than a list of tensors");
	ts_val *u = ts_seq(c, TSV_LIST, l->n);
	for (int i = 0; u && i < l->n; i++)
		if (unsqueeze1(c, l->items[i], dim, &u->items[i]))
			return -1;
	ts_val *cat[2] = {u, ts_int(c, dim)};
	return u ? op_concat(c, cat, 2, out) : -1;
}

/* size(x, d): a known dim as an int, else Shape -> Gather, a runtime int */
static int op_size(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t d;
	if (!x || x->kind != TSV_TENSOR)
		return ts_err(c, "size() of something other than a tensor");
	if (!ARG(1)) {
		if (x->rank < 0)
			return ts_err(c, "size() of a tensor of unknown rank");
		ts_val *l = ts_seq(c, TSV_LIST, x->rank);
		for (int i = 0; l && i < x->rank; i++) {
			ts_val *a2[2] = {x, ts_int(c, i)};
			if (op_size(c, a2, 2, &l->items[i]))
				return -1;
		}
		*out = l;
		return l ? 0 : -1;
	}
	if (!ts_get_int(args[1], &d))
		return ts_err(c, "size() of a dim known only at run time");
	if (x->rank > 0 && d < 0)
		d += x->rank;
	if (x->rank > 0 && d >= 0 && d < x->rank && x->dims[d] >= 0 && !x->input) {
		*out = ts_int(c, x->dims[d]);
		return *out ? 0 : -1;
	}
	ts_val *shape = NULL;
	if (emit(c, "Shape", &x->name, 1, PN_INT64, 1, &shape, NULL))
		return -1;
	const char *in[2] = {shape->name, ts_constant_i64(ts_cur(c), &d, 1, 0)};
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "Gather", in, 2, PN_INT64, 0, out, &nd) || ts_attr_int(ts_cur(c), nd, "axis", 0))
		return -1;
	(*out)->scalar = 1;
	return 0;
}

/* expand(x, size): Expand, with torch's -1 ("keep this dim") as 1, which
 * Expand's broadcasting keeps */
static int op_expand(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *size = ARG(1);
	if (!x || !size || (size->kind != TSV_LIST && size->kind != TSV_TUPLE))
		return ts_err(c, "expand without a size list");
	ts_val *sz = ts_seq(c, TSV_LIST, size->n);
	for (int i = 0; sz && i < size->n; i++) {
		int64_t d;
		sz->items[i] = ts_get_int(size->items[i], &d) && d == -1 ? ts_int(c, 1) : size->items[i];
	}
	const char *in[2] = {ts_as_tensor(c, x), sz ? ts_as_tensor(c, sz) : NULL};
	return emit(c, "Expand", in, 2, x->dtype, size->n, out, NULL);
}

static int op_expand_as(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *y = ARG(1), *shape = NULL;
	if (!x || !y || emit(c, "Shape", &y->name, 1, PN_INT64, 1, &shape, NULL))
		return -1;
	const char *in[2] = {ts_as_tensor(c, x), shape->name};
	return emit(c, "Expand", in, 2, x->dtype, y->rank, out, NULL);
}

static int op_num_to_tensor(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	return identity(c, args, n, out);
}

/* to(x, dtype, ...), to(x, device, dtype, ...), type_as: a Cast when the
 * dtype changes */
static int op_to(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t st;
	int dt = 0;
	if (!x)
		return -1;
	for (int i = 1; i < n && i < 3 && !dt; i++)
		if (args[i] && args[i]->kind == TSV_INT && ts_get_int(args[i], &st))
			dt = ts_dtype_from_scalar_type(st);
		else if (args[i] && args[i]->kind == TSV_TENSOR && i == 1)
			dt = args[i]->dtype;
	if (!dt || x->kind != TSV_TENSOR || dt == x->dtype) {
		*out = x;
		return 0;
	}
	Onnx__NodeProto *nd = NULL;
	const char *in = ts_as_tensor(c, x);
	if (emit(c, "Cast", &in, 1, dt, x->rank, out, &nd))
		return -1;
	(*out)->scalar = x->scalar;
	return ts_attr_int(ts_cur(c), nd, "to", dt);
}

static int reduce(ts_ctx *c, const char *op, ts_val **args, int n, ts_val **out, int axes_input)
{
	ts_val *x = ARG(0);
	int64_t axes[PN_MAX_RANK], keep = 0;
	int k = ARG(1) && !is_none(args[1]) ? ts_get_ints(args[1], axes, PN_MAX_RANK, 1) : 0;
	if (!x || k < 0)
		return ts_err(c, "%s over dims not known now", op);
	if (ARG(2))
		ts_get_int(args[2], &keep);
	if (k == 0)
		keep = 0;
	int rank = x->rank < 0 ? -1 : keep ? x->rank : k ? x->rank - k : 0;
	Onnx__NodeProto *nd = NULL;
	const char *in[2] = {ts_as_tensor(c, x), k && axes_input ? ts_constant_i64(ts_cur(c), axes, k, 1) : NULL};
	if (emit(c, op, in, k && axes_input ? 2 : 1, x->dtype, rank, out, &nd))
		return -1;
	if (k && !axes_input && ts_attr_ints(ts_cur(c), nd, "axes", axes, k))
		return -1;
	return ts_attr_int(ts_cur(c), nd, "keepdims", keep);
}

static int op_mean(ts_ctx *c, ts_val **args, int n, ts_val **out) { return reduce(c, "ReduceMean", args, n, out, 0); }
static int op_sum(ts_ctx *c, ts_val **args, int n, ts_val **out) { return reduce(c, "ReduceSum", args, n, out, 1); }

static int op_select(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t dim, idx;
	if (!x || !ts_get_int(ARG(1), &dim))
		return ts_err(c, "select without a known dim");
	const char *in[2] = {ts_as_tensor(c, x), ts_get_int(ARG(2), &idx) ? ts_constant_i64(ts_cur(c), &idx, 1, 0)
									 : ts_as_tensor(c, ARG(2))};
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "Gather", in, 2, x->dtype, x->rank > 0 ? x->rank - 1 : -1, out, &nd))
		return -1;
	return ts_attr_int(ts_cur(c), nd, "axis", dim);
}

/* slice(x, dim, start, end, step) */
static int op_slice(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t dim = 0, start = 0, end = INT64_MAX, step = 1;
	if (!x)
		return -1;
	if (ARG(1) && !ts_get_int(args[1], &dim))
		return ts_err(c, "slice without a known dim");
	ts_val *sv = ARG(2), *ev = ARG(3);
	if (ARG(4))
		ts_get_int(args[4], &step);
	const char *st = is_none(sv) ? ts_constant_i64(ts_cur(c), &start, 1, 1) : NULL;
	const char *en = is_none(ev) ? ts_constant_i64(ts_cur(c), &end, 1, 1) : NULL;
	ts_val *u;
	if (!st) {
		if (ts_get_int(sv, &start))
			st = ts_constant_i64(ts_cur(c), &start, 1, 1);
		else if (unsqueeze1(c, sv, 0, &u) == 0)
			st = u->name;
	}
	if (!en) {
		if (ts_get_int(ev, &end))
			en = ts_constant_i64(ts_cur(c), &end, 1, 1);
		else if (unsqueeze1(c, ev, 0, &u) == 0)
			en = u->name;
	}
	const char *in[5] = {ts_as_tensor(c, x), st, en, ts_constant_i64(ts_cur(c), &dim, 1, 1),
			     ts_constant_i64(ts_cur(c), &step, 1, 1)};
	if (emit(c, "Slice", in, 5, x->dtype, x->rank, out, NULL))
		return -1;
	/* remember the view, for an in-place fill_ through it */
	int64_t lo = 0, hi = INT64_MAX;
	int known = (is_none(sv) || ts_get_int(sv, &lo)) && (is_none(ev) || ts_get_int(ev, &hi));
	ts_val *base = x->view_base ? x->view_base : x;
	if (known && step == 1 && x->n_view < PN_MAX_RANK && base->rank > 0) {
		ts_val *v = *out;
		v->view_base = base;
		v->n_view = x->n_view;
		memcpy(v->view_dim, x->view_dim, sizeof(v->view_dim));
		memcpy(v->view_lo, x->view_lo, sizeof(v->view_lo));
		memcpy(v->view_hi, x->view_hi, sizeof(v->view_hi));
		v->view_dim[v->n_view] = dim < 0 ? dim + base->rank : dim;
		v->view_lo[v->n_view] = lo;
		v->view_hi[v->n_view++] = hi;
	}
	return 0;
}

/* A bound of a slice along an axis of run-time size: negative counts from
 * the end, past the end is the end. */
static const char *bound(ts_ctx *c, int64_t b, const char *size)
{
	ts_graph *g = ts_cur(c);
	if (b == INT64_MAX)
		return size;
	const char *k = ts_constant_i64(g, &b, 1, 0);
	if (b >= 0)
		return k;
	ts_val *r = NULL;
	const char *in[2] = {size, k};
	return emit(c, "Add", in, 2, PN_INT64, 0, &r, NULL) ? NULL : r->name;
}

/* fill_(view, value) on a view made by slices of a base tensor: the base
 * becomes Where(inside the view, value, base), the inside computed from
 * Range over each sliced axis; every holder of the base sees the new
 * value (the interpreter's values are shared), as torch's mutation makes
 * them see it. */
static int op_fill_(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *v = ARG(0), *value = ARG(1);
	if (!v || !value || v->kind != TSV_TENSOR)
		return -1;
	ts_val *base = v->view_base;
	if (!base) {
		/* a whole tensor filled: a tensor of its shape */
		ts_val *shape = NULL, *filled = NULL;
		if (emit(c, "Shape", &v->name, 1, PN_INT64, 1, &shape, NULL))
			return -1;
		const char *in[2] = {shape->name, operand(c, value, v->dtype)};
		if (emit(c, "Expand", in, 2, v->dtype, v->rank, &filled, NULL))
			return -1;
		v->name = filled->name;
		v->node = filled->node;
		*out = v;
		return 0;
	}
	ts_graph *g = ts_cur(c);
	int r = base->rank;
	ts_val *shape = NULL, *mask = NULL;
	if (r < 1 || emit(c, "Shape", &base->name, 1, PN_INT64, 1, &shape, NULL))
		return ts_err(c, "fill_ through a view of a tensor of unknown rank");
	for (int i = 0; i < v->n_view; i++) {
		int64_t d = v->view_dim[i], zero = 0, one = 1;
		if (d < 0 || d >= r)
			return ts_err(c, "fill_ through a slice of dim %lld", (long long)d);
		ts_val *size = NULL, *idx = NULL, *ge = NULL, *lt = NULL, *inside = NULL, *wide = NULL;
		Onnx__NodeProto *nd = NULL;
		const char *ga[2] = {shape->name, ts_constant_i64(g, &d, 1, 0)};
		if (emit(c, "Gather", ga, 2, PN_INT64, 0, &size, &nd) || ts_attr_int(g, nd, "axis", 0))
			return -1;
		const char *rg[3] = {ts_constant_i64(g, &zero, 1, 0), size->name, ts_constant_i64(g, &one, 1, 0)};
		if (emit(c, "Range", rg, 3, PN_INT64, 1, &idx, NULL))
			return -1;
		const char *lo[2] = {idx->name, bound(c, v->view_lo[i], size->name)};
		const char *hi[2] = {idx->name, bound(c, v->view_hi[i], size->name)};
		if (emit(c, "GreaterOrEqual", lo, 2, PN_BOOL, 1, &ge, NULL) || emit(c, "Less", hi, 2, PN_BOOL, 1, &lt, NULL))
			return -1;
		const char *an[2] = {ge->name, lt->name};
		if (emit(c, "And", an, 2, PN_BOOL, 1, &inside, NULL))
			return -1;
		/* [size] to a shape that broadcasts along every other axis */
		int64_t axes[PN_MAX_RANK];
		int k = 0;
		for (int a = 0; a < r; a++)
			if (a != d)
				axes[k++] = a;
		wide = inside;
		if (k) {
			const char *un[2] = {inside->name, ts_constant_i64(g, axes, k, 1)};
			if (emit(c, "Unsqueeze", un, 2, PN_BOOL, r, &wide, NULL))
				return -1;
		}
		if (mask) {
			const char *both[2] = {mask->name, wide->name};
			if (emit(c, "And", both, 2, PN_BOOL, r, &mask, NULL))
				return -1;
		} else {
			mask = wide;
		}
	}
	ts_val *res = NULL;
	if (value->kind == TSV_TENSOR && value->dtype != base->dtype && cast_to(c, value, base->dtype, &value))
		return -1;
	const char *wh[3] = {mask ? mask->name : NULL, operand(c, value, base->dtype), base->name};
	if (!mask || emit(c, "Where", wh, 3, base->dtype, base->rank, &res, NULL))
		return -1;
	base->name = res->name;
	base->node = res->node;
	*out = base;
	return 0;
}

/* masked_fill(x, mask, value): Where(mask, value, x) */
static int op_masked_fill(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *m = ARG(1), *value = ARG(2);
	if (!x || !m || !value)
		return -1;
	const char *in[3] = {ts_as_tensor(c, m), operand(c, value, x->dtype), ts_as_tensor(c, x)};
	return emit(c, "Where", in, 3, x->dtype, x->rank, out, NULL);
}

/* pad(x, pad, mode, value): torch lists (begin, end) pairs from the last
 * axis back; ONNX all begins, then all ends, over every axis */
static int op_pad(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *pads = ARG(1), *mode = ARG(2), *value = ARG(3);
	if (!x || !pads || (pads->kind != TSV_LIST && pads->kind != TSV_TUPLE) || pads->n % 2 || x->rank < 0 ||
	    pads->n / 2 > x->rank)
		return ts_err(c, "pad with a padding list not over known axes");
	const char *m = "constant";
	if (!is_none(mode) && mode->kind == TSV_STR)
		m = !strcmp(mode->s, "reflect") ? "reflect" : !strcmp(mode->s, "replicate") ? "edge"
		    : !strcmp(mode->s, "constant") ? "constant" : NULL;
	if (!m)
		return ts_err(c, "pad mode %s is not mapped", mode->s);
	int r = x->rank;
	ts_val *onnx = ts_seq(c, TSV_LIST, 2 * r);
	if (!onnx)
		return -1;
	for (int a = 0; a < r; a++) {
		int k = r - 1 - a;   /* torch's pair index of axis a */
		onnx->items[a] = k < pads->n / 2 ? pads->items[2 * k] : ts_int(c, 0);
		onnx->items[r + a] = k < pads->n / 2 ? pads->items[2 * k + 1] : ts_int(c, 0);
	}
	const char *in[3] = {ts_as_tensor(c, x), ts_as_tensor(c, onnx),
			     is_none(value) ? NULL : operand(c, value, x->dtype)};
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "Pad", in, in[2] ? 3 : 2, x->dtype, r, out, &nd))
		return -1;
	return ts_attr_str(ts_cur(c), nd, "mode", m);
}

static int op_constant_pad(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val mode = {.kind = TSV_STR, .s = "constant"};
	ts_val *a[4] = {ARG(0), ARG(1), &mode, ARG(2)};
	return op_pad(c, a, 4, out);
}

/* roll(x, shifts, dims): per axis the last s elements moved to the front,
 * a Concat of two Slices, as torch.onnx writes it */
static int op_roll(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t sh[PN_MAX_RANK], dims[PN_MAX_RANK];
	int k = ts_get_ints(ARG(1), sh, PN_MAX_RANK, 1), kd = ts_get_ints(ARG(2), dims, PN_MAX_RANK, 1);
	if (!x || k < 1 || kd != k)
		return ts_err(c, "roll over shifts or dims not known now");
	ts_val *cur = x;
	for (int i = 0; i < k; i++) {
		ts_val *a = NULL, *b = NULL;
		ts_val *s1[5] = {cur, ts_int(c, dims[i]), ts_int(c, -sh[i]), ts_int(c, INT64_MAX), ts_int(c, 1)};
		ts_val *s2[5] = {cur, ts_int(c, dims[i]), ts_int(c, 0), ts_int(c, -sh[i]), ts_int(c, 1)};
		if (op_slice(c, s1, 5, &a) || op_slice(c, s2, 5, &b))
			return -1;
		a->view_base = b->view_base = NULL;
		const char *in[2] = {a->name, b->name};
		Onnx__NodeProto *nd = NULL;
		if (emit(c, "Concat", in, 2, x->dtype, x->rank, &cur, &nd) || ts_attr_int(ts_cur(c), nd, "axis", dims[i]))
			return -1;
	}
	*out = cur;
	return 0;
}

/* index(x, [None, ..., idx, None...]) with one index tensor: a Gather
 * along its axis */
static int op_index(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *l = ARG(1);
	int axis = -1;
	if (!x || !l || (l->kind != TSV_LIST && l->kind != TSV_TUPLE))
		return ts_err(c, "index without a list of indices");
	for (int i = 0; i < l->n; i++)
		if (!is_none(l->items[i])) {
			if (axis >= 0 || l->items[i]->kind != TSV_TENSOR)
				return op_named(c, "index", args, n, out);
			axis = i;
		}
	if (axis < 0)
		return ts_err(c, "index with no index tensor");
	ts_val *idx = l->items[axis];
	const char *in[2] = {ts_as_tensor(c, x), idx->name};
	Onnx__NodeProto *nd = NULL;
	int rank = x->rank >= 0 && idx->rank >= 0 ? x->rank + idx->rank - 1 : -1;
	if (emit(c, "Gather", in, 2, x->dtype, rank, out, &nd))
		return -1;
	return ts_attr_int(ts_cur(c), nd, "axis", axis);
}

/* x[i] and x[a:b] from a subscript in scripted code */
static int op_index_value(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *idx = ARG(1);
	if (!x || !idx)
		return -1;
	if (idx->kind == TSV_TUPLE && idx->s && !strcmp(idx->s, "slice")) {
		ts_val *a[5] = {x, ts_int(c, 0), idx->items[0], idx->items[1], idx->items[2]};
		if (is_none(a[4]))
			a[4] = ts_int(c, 1);
		return op_slice(c, a, 5, out);
	}
	ts_val *a[3] = {x, ts_int(c, 0), idx};
	return op_select(c, a, 3, out);
}

static int op_where(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	if (!ARG(0) || !ARG(1) || !ARG(2))
		return ts_err(c, "where() with one argument is not mapped");
	int dt = dtype_of(args[1], args[2]);
	const char *in[3] = {ts_as_tensor(c, args[0]), operand(c, args[1], dt), operand(c, args[2], dt)};
	return emit(c, "Where", in, 3, dt, max_rank(args[1], args[2]), out, NULL);
}

/* chunk(x, chunks, dim): as torch.onnx writes it for a dim whose size it
 * does not fix, each part a Slice of ceil(size / chunks) elements, the
 * bounds computed from the input's Shape */
static int op_chunk(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0);
	int64_t chunks, dim = 0;
	if (ARG(2))
		ts_get_int(args[2], &dim);
	if (!x || !ts_get_int(ARG(1), &chunks) || chunks < 1 || chunks > 1024)
		return op_named(c, "chunk", args, n, out);
	ts_graph *g = ts_cur(c);
	int64_t up = chunks - 1, zero = 0;
	const char *axis = ts_constant_i64(g, &dim, 1, 1);
	ts_val *shape = NULL, *size = NULL, *plus = NULL, *step = NULL;
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "Shape", &x->name, 1, PN_INT64, 1, &shape, NULL))
		return -1;
	const char *ga[2] = {shape->name, axis};
	if (emit(c, "Gather", ga, 2, PN_INT64, 1, &size, &nd) || ts_attr_int(g, nd, "axis", 0))
		return -1;
	const char *ad[2] = {size->name, ts_constant_i64(g, &up, 1, 1)};
	const char *dv[2] = {NULL, ts_constant_i64(g, &chunks, 1, 1)};
	if (emit(c, "Add", ad, 2, PN_INT64, 1, &plus, NULL) || !(dv[0] = plus->name) ||
	    emit(c, "Div", dv, 2, PN_INT64, 1, &step, NULL))
		return -1;
	ts_val *l = ts_seq(c, TSV_LIST, (int)chunks);
	const char *from = ts_constant_i64(g, &zero, 1, 1);
	for (int64_t i = 0; l && i < chunks; i++) {
		ts_val *to = NULL;
		int64_t k = i + 1;
		const char *mu[2] = {step->name, ts_constant_i64(g, &k, 1, 1)};
		if (emit(c, "Mul", mu, 2, PN_INT64, 1, &to, NULL))
			return -1;
		const char *sl[4] = {x->name, from, to->name, axis};
		if (emit(c, "Slice", sl, 4, x->dtype, x->rank, &l->items[i], NULL))
			return -1;
		from = to->name;
	}
	*out = l;
	return l ? 0 : -1;
}

/* --- recurrent layers ------------------------------------------------------------------ */

/* Rows of a [G*H, K] (or [G*H]) weight regrouped by gate: torch's order to
 * ONNX's (LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h). */
static int regroup(const pn_tensor *w, const int *order, int gates, pn_tensor *out, pn_arena *a)
{
	int64_t rows = w->dims[0], inner = w->rank == 2 ? w->dims[1] : 1;
	if (w->dtype != PN_FLOAT || rows % gates || w->numel != rows * inner)
		return -1;
	int64_t h = rows / gates;
	*out = *w;
	out->data = pn_arena_alloc(a, (size_t)w->numel * sizeof(float));
	if (!out->data)
		return -1;
	for (int g = 0; g < gates; g++)
		memcpy((float *)out->data + (size_t)(g * h * inner), (const float *)w->data + (size_t)(order[g] * h * inner),
		       sizeof(float) * (size_t)(h * inner));
	return 0;
}

/* W, R and B of one layer of `dirs` directions, stacked as ONNX wants:
 * [dirs, G*H, K], [dirs, G*H, H], [dirs, 2*G*H] (input bias, then hidden). */
static int rnn_weights(ts_ctx *c, ts_val **p, int per, int dirs, int has_bias, const int *order, int gates,
		       const char *names[3])
{
	pn_arena *a = ts_arena(c);
	for (int k = 0; k < 2 + (has_bias ? 1 : 0); k++) {
		pn_tensor parts[4];
		int64_t total = 0;
		for (int d = 0; d < dirs; d++)
			for (int j = 0; j < (k < 2 ? 1 : 2); j++) {
				ts_val *v = p[d * per + (k < 2 ? k : 2 + j)];
				if (!v || v->kind != TSV_TENSOR || !v->data)
					return ts_err(c, "a recurrent layer's weights are not known tensors");
				if (regroup(v->data, order, gates, &parts[d * 2 + j], a))
					return ts_err(c, "a recurrent layer's weight of an unexpected shape or dtype");
				total += v->data->numel;
			}
		pn_tensor t = {.dtype = PN_FLOAT, .numel = total};
		t.data = pn_arena_alloc(a, sizeof(float) * (size_t)total);
		if (!t.data)
			return ts_err(c, "out of memory");
		float *o = t.data;
		for (int d = 0; d < dirs; d++)
			for (int j = 0; j < (k < 2 ? 1 : 2); j++) {
				pn_tensor *q = &parts[d * 2 + j];
				memcpy(o, q->data, sizeof(float) * (size_t)q->numel);
				o += q->numel;
			}
		const pn_tensor *first = &parts[0];
		t.rank = k < 2 ? 3 : 2;
		t.dims[0] = dirs;
		t.dims[1] = k < 2 ? first->dims[0] : 2 * first->dims[0];
		if (k < 2)
			t.dims[2] = first->dims[1];
		pn_tensor *tp = pn_arena_memdup(a, &t, sizeof(t));
		if (!tp || !(names[k] = ts_constant(ts_cur(c), tp)))
			return ts_err(c, "out of memory");
	}
	if (!has_bias)
		names[2] = "";
	return 0;
}

/* Slice [from, to) of axis 0 of x */
static const char *slice0(ts_ctx *c, const char *x, int64_t from, int64_t to)
{
	int64_t zero = 0;
	const char *in[4] = {x, ts_constant_i64(ts_cur(c), &from, 1, 1), ts_constant_i64(ts_cur(c), &to, 1, 1),
			     ts_constant_i64(ts_cur(c), &zero, 1, 1)};
	ts_val *out = NULL;
	return emit(c, "Slice", in, 4, PN_FLOAT, -1, &out, NULL) ? NULL : out->name;
}

/* lstm/gru(input, hx, params, has_biases, num_layers, dropout, train,
 * bidirectional, batch_first): one ONNX LSTM/GRU node per layer, the
 * weights regrouped by gate now; returns (output, h_n[, c_n]). */
static int recurrent(ts_ctx *c, int lstm, ts_val **args, int n, ts_val **out)
{
	static const int lstm_order[4] = {0, 3, 1, 2}, gru_order[3] = {1, 0, 2};
	ts_val *x = ARG(0), *hx = ARG(1), *params = ARG(2);
	int64_t has_bias = 1, layers = 1, train = 0, bidir = 0, bf = 0;
	ts_get_int(ARG(3), &has_bias);
	ts_get_int(ARG(4), &layers);
	ts_get_int(ARG(6), &train);
	ts_get_int(ARG(7), &bidir);
	ts_get_int(ARG(8), &bf);
	int dirs = bidir ? 2 : 1, per = has_bias ? 4 : 2, gates = lstm ? 4 : 3;
	if (!x || !params || params->kind != TSV_LIST || layers < 1 || layers > 64 ||
	    params->n != layers * dirs * per || train)
		return ts_err(c, "%s with parameters not as torch writes them", lstm ? "lstm" : "gru");
	ts_val *w0 = params->items[0];
	if (w0->kind != TSV_TENSOR || w0->rank != 2)
		return ts_err(c, "a recurrent layer's weights are not known tensors");
	int64_t hidden = w0->dims[0] / gates;
	{
		int64_t dims[3] = {-1, -1, w0->dims[1]};
		const char *names[3] = {bf ? "batch" : "sequence", bf ? "sequence" : "batch", NULL};
		ts_hint_input(c, x, 3, dims, names);
	}
	ts_val *h0 = lstm ? (hx && hx->kind == TSV_LIST && hx->n == 2 ? hx->items[0] : NULL) : hx;
	ts_val *c0 = lstm && hx && hx->kind == TSV_LIST && hx->n == 2 ? hx->items[1] : NULL;
	if (!h0 || (lstm && !c0))
		return ts_err(c, "%s without its initial state", lstm ? "lstm" : "gru");
	int64_t perm[3] = {1, 0, 2};
	ts_val *seq = x;
	if (bf && transpose_perm(c, x, perm, 3, &seq))
		return -1;
	const char **hn = pn_arena_alloc(ts_arena(c), sizeof(char *) * (size_t)layers * 2);
	if (!hn)
		return ts_err(c, "out of memory");
	for (int64_t l = 0; l < layers; l++) {
		const char *w[3];
		if (rnn_weights(c, params->items + l * dirs * per, per, dirs, (int)has_bias, lstm ? lstm_order : gru_order,
				gates, w))
			return -1;
		const char *in[7] = {seq->name, w[0], w[1], w[2], "", slice0(c, ts_as_tensor(c, h0), l * dirs, (l + 1) * dirs),
				     lstm ? slice0(c, ts_as_tensor(c, c0), l * dirs, (l + 1) * dirs) : NULL};
		Onnx__NodeProto *nd = ts_node(ts_cur(c), lstm ? "LSTM" : "GRU", in, lstm ? 7 : 6, lstm ? 3 : 2);
		if (!nd || ts_attr_int(ts_cur(c), nd, "hidden_size", hidden) ||
		    (bidir && ts_attr_str(ts_cur(c), nd, "direction", "bidirectional")) ||
		    (!lstm && ts_attr_int(ts_cur(c), nd, "linear_before_reset", 1)))
			return ts_err(c, "out of memory");
		hn[l] = nd->output[1];
		if (lstm)
			hn[layers + l] = nd->output[2];
		ts_val *y = ts_tensor(c, nd->output[0], PN_FLOAT, 4);
		if (!y)
			return -1;
		if (dirs == 1) {
			const char *sq[2] = {y->name, ts_constant_i64(ts_cur(c), (int64_t[]){1}, 1, 1)};
			if (emit(c, "Squeeze", sq, 2, PN_FLOAT, 3, &seq, NULL))
				return -1;
		} else {
			int64_t p4[4] = {0, 2, 1, 3}, shape[3] = {0, 0, -1};
			ts_val *t = NULL;
			if (transpose_perm(c, y, p4, 4, &t))
				return -1;
			const char *rs[2] = {t->name, ts_constant_i64(ts_cur(c), shape, 3, 1)};
			if (emit(c, "Reshape", rs, 2, PN_FLOAT, 3, &seq, NULL))
				return -1;
		}
	}
	ts_val *y = seq;
	if (bf && transpose_perm(c, seq, perm, 3, &y))
		return -1;
	ts_val *res = ts_seq(c, TSV_TUPLE, lstm ? 3 : 2);
	if (!res)
		return -1;
	res->items[0] = y;
	for (int k = 0; k < (lstm ? 2 : 1); k++) {
		Onnx__NodeProto *cat = ts_node(ts_cur(c), "Concat", hn + k * layers, (int)layers, 1);
		if (!cat || ts_attr_int(ts_cur(c), cat, "axis", 0) ||
		    !(res->items[1 + k] = ts_tensor(c, cat->output[0], PN_FLOAT, 3)))
			return ts_err(c, "out of memory");
	}
	*out = res;
	return 0;
}

static int op_lstm(ts_ctx *c, ts_val **args, int n, ts_val **out) { return recurrent(c, 1, args, n, out); }
static int op_gru(ts_ctx *c, ts_val **args, int n, ts_val **out) { return recurrent(c, 0, args, n, out); }

/* zeros/ones(size, dtype, ...): a Constant when the size is known now,
 * else ConstantOfShape over the size as a tensor */
static int filled(ts_ctx *c, double value, ts_val *size, ts_val *dtype, ts_val **out)
{
	int64_t st = 6;
	if (!is_none(dtype))
		ts_get_int(dtype, &st);
	int dt = ts_dtype_from_scalar_type(st);
	if (!dt || !size || (size->kind != TSV_LIST && size->kind != TSV_TUPLE) || size->n > PN_MAX_RANK)
		return ts_err(c, "zeros/ones/full of an unknown size or dtype");
	scalar_bytes u;
	if (dt != PN_FLOAT && dt != PN_DOUBLE && dt != PN_INT64 && dt != PN_INT32 && dt != PN_BOOL)
		return ts_err(c, "zeros/ones/full of dtype %s", pn_dtype_name(dt));
	pn_tensor one = {.dtype = scalar_of(dt, value, &u), .rank = 1, .numel = 1, .dims = {1}, .data = &u};
	Onnx__NodeProto *nd = NULL;
	const char *shape = ts_as_tensor(c, size);
	if (emit(c, "ConstantOfShape", &shape, 1, dt, size->n, out, &nd))
		return -1;
	return ts_attr_tensor(ts_cur(c), nd, "value", &one);
}

static int op_zeros(ts_ctx *c, ts_val **args, int n, ts_val **out) { return filled(c, 0, ARG(0), ARG(1), out); }
/* new_zeros(x, size, dtype, ...): the dtype given, else x's */
static int op_new_zeros(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *dt = ARG(2);
	ts_val f32 = {.kind = TSV_INT, .i = 6};
	if (!x)
		return -1;
	return filled(c, 0, ARG(1), is_none(dt) ? (x->dtype == PN_FLOAT ? &f32 : NULL) : dt, out);
}
static int op_ones(ts_ctx *c, ts_val **args, int n, ts_val **out) { return filled(c, 1, ARG(0), ARG(1), out); }

static int op_full(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	double v;
	if (!ts_get_float(ARG(1), &v))
		return ts_err(c, "full() with a fill value known only at run time");
	return filled(c, v, ARG(0), ARG(2), out);
}

/* --- resizing -------------------------------------------------------------------------- */

/* upsample_{bilinear,nearest,bicubic}{1,2,3}d(input, output_size,
 * [align_corners,] scale_factors): Resize with the attributes torch.onnx
 * gives it (opset 11+), sizes as [N, C] of the input's Shape then
 * output_size, or scales [1, 1, s...]. */
static int upsample(ts_ctx *c, const char *mode, int has_align, ts_val **args, int n, ts_val **out)
{
	ts_val *x = ARG(0), *size = ARG(1), *scales = ARG(has_align ? 3 : 2);
	int64_t align = 0;
	if (has_align)
		ts_get_int(ARG(2), &align);
	if (!x)
		return -1;
	ts_graph *g = ts_cur(c);
	const char *in[4] = {ts_as_tensor(c, x), "", "", NULL};
	int n_in = 4;
	if (!is_none(size)) {
		ts_val *shape = NULL, *lead = NULL;
		int64_t zero = 0, two = 2;
		if (emit(c, "Shape", &x->name, 1, PN_INT64, 1, &shape, NULL))
			return -1;
		const char *sl[4] = {shape->name, ts_constant_i64(g, &zero, 1, 1), ts_constant_i64(g, &two, 1, 1),
				     ts_constant_i64(g, &zero, 1, 1)};
		if (emit(c, "Slice", sl, 4, PN_INT64, 1, &lead, NULL))
			return -1;
		const char *cat[2] = {lead->name, ts_as_tensor(c, size)};
		Onnx__NodeProto *cn = ts_node(g, "Concat", cat, 2, 1);
		if (!cn || ts_attr_int(g, cn, "axis", 0))
			return ts_err(c, "out of memory");
		in[3] = cn->output[0];
	} else {
		double f[3];
		int k = -1;
		if (scales && (scales->kind == TSV_LIST || scales->kind == TSV_TUPLE) && scales->n <= 3) {
			k = scales->n;
			for (int i = 0; i < k; i++)
				if (!ts_get_float(scales->items[i], &f[i]))
					k = -1;
		}
		if (k < 1)
			return ts_err(c, "upsampling without a known size or scale");
		float sc[5] = {1, 1, 1, 1, 1};
		for (int i = 0; i < k; i++)
			sc[2 + i] = (float)f[i];
		pn_tensor t = {.dtype = PN_FLOAT, .rank = 1, .numel = k + 2, .dims = {k + 2}, .data = sc};
		in[2] = ts_constant(g, &t);
		n_in = 3;
	}
	Onnx__NodeProto *nd = NULL;
	if (emit(c, "Resize", in, n_in, x->dtype, x->rank, out, &nd))
		return -1;
	int linear = strcmp(mode, "nearest") != 0;
	const char *ctm = !linear ? "asymmetric" : align ? "align_corners" : "half_pixel";
	return ts_attr_str(g, nd, "coordinate_transformation_mode", ctm) ||
	       ts_attr_float(g, nd, "cubic_coeff_a", -0.75f) || ts_attr_str(g, nd, "mode", mode) ||
	       ts_attr_str(g, nd, "nearest_mode", "floor");
}

static int op_upsample_linear(ts_ctx *c, ts_val **args, int n, ts_val **out) { return upsample(c, "linear", 1, args, n, out); }
static int op_upsample_cubic(ts_ctx *c, ts_val **args, int n, ts_val **out) { return upsample(c, "cubic", 1, args, n, out); }
static int op_upsample_nearest(ts_ctx *c, ts_val **args, int n, ts_val **out) { return upsample(c, "nearest", 0, args, n, out); }

/* --- attention ------------------------------------------------------------------------ */

/* a runtime int: dim d of x's Shape */
static ts_val *dim_of(ts_ctx *c, ts_val *x, int64_t d)
{
	ts_val *a[2] = {x, ts_int(c, d)}, *out = NULL;
	return a[1] && !op_size(c, a, 2, &out) ? out : NULL;
}

static int reshape_to(ts_ctx *c, ts_val *x, ts_val **dims, int k, ts_val **out)
{
	ts_val *l = ts_seq(c, TSV_LIST, k);
	if (!l)
		return -1;
	memcpy(l->items, dims, sizeof(ts_val *) * (size_t)k);
	ts_val *a[2] = {x, l};
	return op_reshape(c, a, 2, out);
}

/* _native_multi_head_attention(query, key, value, embed_dim, num_head,
 * qkv_weight, qkv_bias, proj_weight, proj_bias, mask, need_weights, ...),
 * the fast path nn.MultiheadAttention takes in eval on batch-first inputs,
 * written out as torch.onnx writes the path it exports
 * (F.multi_head_attention_forward) for self-attention: [B, T, E] to
 * [T, B, E], one in-projection chunked in three, heads folded into the
 * batch ([T, B*H, D] then [B*H, T, D]), q / sqrt(D), softmax(q k^T) v, the
 * out-projection as a Gemm over [T*B, E], and back to [B, T, E].  Returns
 * (output, None). */
static int op_native_mha(ts_ctx *c, ts_val **args, int n, ts_val **out)
{
	ts_val *q = ARG(0), *k = ARG(1), *v = ARG(2), *w = ARG(5), *b = ARG(6), *pw = ARG(7), *pb = ARG(8);
	int64_t e, h, need = 0;
	if (ARG(10))
		ts_get_int(args[10], &need);
	if (!q || !k || !v || !w || !pw || is_none(pb) || is_none(b) || !ts_get_int(ARG(3), &e) ||
	    !ts_get_int(ARG(4), &h) || h < 1 || e % h || !is_none(ARG(9)) || need || q != k || q != v)
		return ts_err(c, "multi-head attention other than self-attention without a mask");
	int64_t dims[3] = {-1, -1, e}, d = e / h;
	const char *names[3] = {"batch", "sequence", NULL};
	ts_hint_input(c, q, 3, dims, names);
	int64_t p102[3] = {1, 0, 2}, p021[3] = {0, 2, 1};
	ts_val *x = NULL, *wt = NULL, *mm = NULL, *qkv = NULL, *parts = NULL;
	Onnx__NodeProto *nd = NULL;
	if (transpose_perm(c, q, p102, 3, &x) || transpose_perm(c, w, (int64_t[]){1, 0}, 2, &wt) ||
	    binary_op(c, "MatMul", x, wt, &mm) || binary_op(c, "Add", b, mm, &qkv))
		return -1;
	ts_val *ch[3] = {qkv, ts_int(c, 3), ts_int(c, -1)};
	if (op_chunk(c, ch, 3, &parts) || parts->kind != TSV_LIST || parts->n != 3)
		return -1;
	ts_val *T = dim_of(c, x, 0), *B = dim_of(c, x, 1), *H = ts_int(c, h), *D = ts_int(c, d), *E = ts_int(c, e);
	ts_val *BH = NULL, *TB = NULL;
	if (!T || !B || !H || !D || !E || binary_op(c, "Mul", B, H, &BH) || binary_op(c, "Mul", T, B, &TB))
		return -1;
	ts_val *heads[3];
	for (int i = 0; i < 3; i++) {
		ts_val *sh[3] = {T, BH, D}, *r = NULL;
		if (reshape_to(c, parts->items[i], sh, 3, &r) || transpose_perm(c, r, p102, 3, &heads[i]))
			return -1;
	}
	ts_val scale = {.kind = TSV_FLOAT, .f = sqrt((double)d)};
	ts_val *qs = NULL, *kt = NULL, *sc = NULL, *att = NULL, *ctx = NULL, *ct = NULL, *flat = NULL, *proj = NULL,
	       *tbe = NULL;
	if (binary_op(c, "Div", heads[0], &scale, &qs) || transpose_perm(c, heads[1], p021, 3, &kt) ||
	    binary_op(c, "MatMul", qs, kt, &sc) || emit(c, "Softmax", &sc->name, 1, sc->dtype, 3, &att, &nd) ||
	    ts_attr_int(ts_cur(c), nd, "axis", -1) || binary_op(c, "MatMul", att, heads[2], &ctx) ||
	    transpose_perm(c, ctx, p102, 3, &ct))
		return -1;
	ts_val *fl[2] = {TB, E};
	if (reshape_to(c, ct, fl, 2, &flat))
		return -1;
	ts_val *lin[3] = {flat, pw, pb};
	if (op_linear(c, lin, 3, &proj))
		return -1;
	ts_val *back[3] = {T, B, E};
	ts_val *res = ts_seq(c, TSV_TUPLE, 2);
	if (!res || reshape_to(c, proj, back, 3, &tbe) || transpose_perm(c, tbe, p102, 3, &res->items[0]))
		return -1;
	res->items[1] = ts_new(c, TSV_NONE);
	*out = res;
	return 0;
}

/* An op met by name whose mapping needs what the lowering cannot know now
 * (adaptive pooling to other sizes, flatten of inner dims): a node of
 * domain "torch", as for an op the table lacks. */
static int op_named(ts_ctx *c, const char *name, ts_val **args, int n, ts_val **out)
{
	const char *op = pn_arena_printf(ts_arena(c), "aten::%s", name);
	*out = op ? ts_unknown_op(c, op, args, n) : NULL;
	return *out ? 0 : -1;
}

/* --- the table ------------------------------------------------------------------------ */

static const ts_aten table[] = {
	{"aten::_convolution", "input,weight,bias,stride,padding,dilation,transposed,output_padding,groups", op_convolution},
	{"aten::conv1d", "input,weight,bias,stride,padding,dilation,groups", op_conv},
	{"aten::conv2d", "input,weight,bias,stride,padding,dilation,groups", op_conv},
	{"aten::conv3d", "input,weight,bias,stride,padding,dilation,groups", op_conv},
	{"aten::batch_norm", "input,weight,bias,running_mean,running_var,training,momentum,eps,cudnn_enabled", op_batch_norm},
	{"aten::layer_norm", "input,normalized_shape,weight,bias,eps,cudnn_enable", op_layer_norm},
	{"aten::max_pool1d", "input,kernel_size,stride,padding,dilation,ceil_mode", op_max_pool},
	{"aten::max_pool2d", "input,kernel_size,stride,padding,dilation,ceil_mode", op_max_pool},
	{"aten::max_pool3d", "input,kernel_size,stride,padding,dilation,ceil_mode", op_max_pool},
	{"aten::avg_pool1d", "input,kernel_size,stride,padding,ceil_mode,count_include_pad", op_avg_pool},
	{"aten::avg_pool2d", "input,kernel_size,stride,padding,ceil_mode,count_include_pad,divisor_override", op_avg_pool},
	{"aten::avg_pool3d", "input,kernel_size,stride,padding,ceil_mode,count_include_pad,divisor_override", op_avg_pool},
	{"aten::adaptive_avg_pool1d", "input,output_size", op_adaptive_avg},
	{"aten::adaptive_avg_pool2d", "input,output_size", op_adaptive_avg},
	{"aten::adaptive_avg_pool3d", "input,output_size", op_adaptive_avg},
	{"aten::linear", "input,weight,bias", op_linear},
	{"aten::addmm", "self,mat1,mat2,beta,alpha", op_addmm},
	{"aten::embedding", "weight,indices,padding_idx,scale_grad_by_freq,sparse", op_embedding},
	{"aten::add", "self,other,alpha", op_add},
	{"aten::sub", "self,other,alpha", op_sub},
	{"aten::rsub", "self,other,alpha", op_rsub},
	{"aten::ne", "self,other", op_ne},
	{"aten::div", "self,other,rounding_mode", op_div_mode},
	{"aten::floordiv", "self,other", op_floordiv},
	{"aten::floor_divide", "self,other", op_floordiv},
	{"aten::hardtanh", "self,min_val,max_val", op_hardtanh},
	{"aten::relu6", "self", op_relu6},
	{"aten::clamp", "self,min,max", op_clamp},
	{"aten::clip", "self,min,max", op_clamp},
	{"aten::hardsigmoid", "self", op_hardsigmoid},
	{"aten::silu", "self", op_silu},
	{"aten::gelu", "self,approximate", op_gelu},
	{"aten::leaky_relu", "self,negative_slope", op_leaky_relu},
	{"aten::softmax", "self,dim,dtype", op_softmax},
	{"aten::log_softmax", "self,dim,dtype", op_log_softmax},
	{"aten::dropout", "input,p,train", op_dropout},
	{"aten::feature_dropout", "input,p,train", op_dropout},
	{"aten::alpha_dropout", "input,p,train", op_dropout},
	{"aten::contiguous", "self,memory_format", identity},
	{"aten::detach", "self", identity},
	{"aten::clone", "self,memory_format", identity},
	{"aten::flatten", "input,start_dim,end_dim", op_flatten},
	{"aten::view", "self,size", op_reshape},
	{"aten::reshape", "self,shape", op_reshape},
	{"aten::transpose", "self,dim0,dim1", op_transpose},
	{"aten::permute", "self,dims", op_permute},
	{"aten::t", "self", op_t},
	{"aten::cat", "tensors,dim", op_concat},
	{"aten::concat", "tensors,dim", op_concat},
	{"aten::stack", "tensors,dim", op_stack},
	{"aten::unsqueeze", "self,dim", op_unsqueeze},
	{"aten::squeeze", "self,dim", op_squeeze},
	{"aten::size", "self,dim", op_size},
	{"prim.NumToTensor", "a", op_num_to_tensor},
	{"aten::expand", "self,size,implicit", op_expand},
	{"aten::expand_as", "self,other", op_expand_as},
	{"aten::to", "self,dtype,non_blocking,copy,memory_format", op_to},
	{"aten::type_as", "self,other", op_to},
	{"aten::mean", "self,dim,keepdim,dtype", op_mean},
	{"aten::sum", "self,dim,keepdim,dtype", op_sum},
	{"aten::select", "self,dim,index", op_select},
	{"aten::slice", "self,dim,start,end,step", op_slice},
	{"aten::index_value", "self,index", op_index_value},
	{"aten::where", "condition,self,other", op_where},
	{"aten::chunk", "self,chunks,dim", op_chunk},
	{"aten::lstm", "input,hx,params,has_biases,num_layers,dropout,train,bidirectional,batch_first", op_lstm},
	{"aten::gru", "input,hx,params,has_biases,num_layers,dropout,train,bidirectional,batch_first", op_gru},
	{"aten::zeros", "size,dtype,layout,device,pin_memory", op_zeros},
	{"aten::new_zeros", "self,size,dtype,layout,device,pin_memory", op_new_zeros},
	{"aten::fill_", "self,value", op_fill_},
	{"aten::masked_fill", "self,mask,value", op_masked_fill},
	{"aten::pad", "self,pad,mode,value", op_pad},
	{"aten::constant_pad_nd", "self,pad,value", op_constant_pad},
	{"aten::roll", "self,shifts,dims", op_roll},
	{"aten::index", "self,indices", op_index},
	{"aten::upsample_bilinear2d", "input,output_size,align_corners,scale_factors", op_upsample_linear},
	{"aten::upsample_linear1d", "input,output_size,align_corners,scale_factors", op_upsample_linear},
	{"aten::upsample_trilinear3d", "input,output_size,align_corners,scale_factors", op_upsample_linear},
	{"aten::upsample_bicubic2d", "input,output_size,align_corners,scale_factors", op_upsample_cubic},
	{"aten::upsample_nearest1d", "input,output_size,scale_factors", op_upsample_nearest},
	{"aten::upsample_nearest2d", "input,output_size,scale_factors", op_upsample_nearest},
	{"aten::upsample_nearest3d", "input,output_size,scale_factors", op_upsample_nearest},
	{"aten::_native_multi_head_attention", "query,key,value,embed_dim,num_head,qkv_weight,qkv_bias,proj_weight,proj_bias,mask,need_weights", op_native_mha},
	{"aten::ones", "size,dtype,layout,device,pin_memory", op_ones},
	{"aten::full", "size,fill_value,dtype,layout,device,pin_memory", op_full},
};

#define UNARY_FN(aten, onnx)                                                  \
	static int unary_##aten(ts_ctx *c, ts_val **args, int n, ts_val **out) \
	{                                                                     \
		return unary_op(c, #onnx, args, n, out);                      \
	}
#define BINARY_FN(aten, onnx)                                                  \
	static int binary_##aten(ts_ctx *c, ts_val **args, int n, ts_val **out) \
	{                                                                      \
		if (!ARG(0) || !ARG(1))                                        \
			return ts_err(c, #aten " with %d arguments", n);       \
		return binary_op(c, #onnx, args[0], args[1], out);             \
	}
TS_UNARIES(UNARY_FN)
TS_BINARIES(BINARY_FN)
#define UNARY_ENTRY(aten, onnx) {"aten::" #aten, "self", unary_##aten},
#define BINARY_ENTRY(aten, onnx) {"aten::" #aten, "self,other", binary_##aten},
static const ts_aten elementwise[] = {TS_UNARIES(UNARY_ENTRY) TS_BINARIES(BINARY_ENTRY)};

static const ts_aten *find_in(const ts_aten *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

const ts_aten *ts_aten_find(const char *name)
{
	const ts_aten *t = find_in(table, sizeof table / sizeof *table, name);
	if (!t)
		t = find_in(elementwise, sizeof elementwise / sizeof *elementwise, name);
	if (t || strncmp(name, "aten::", 6))
		return t;
	/* in-place forms (relu_, add_) lower as the plain op */
	char buf[128], full[140];
	const char *base = base_name(name, buf, sizeof buf);
	if (!strcmp(base, name + 6))
		return NULL;
	snprintf(full, sizeof full, "aten::%s", base);
	t = find_in(table, sizeof table / sizeof *table, full);
	return t ? t : find_in(elementwise, sizeof elementwise / sizeof *elementwise, full);
}
