/*
 * infer.c - shape and type inference over a whole graph, with constant
 * folding of small tensors.
 *
 * Walks the nodes in topological order.  For each node it calls the op's
 * inference function, then, when every input's contents are known (or the op
 * reads only shapes, like Shape and Size) and the tensors involved are
 * small, runs the op's kernel to get the output contents too.  That is what
 * turns Shape -> Gather -> Concat -> Reshape chains into concrete dims: no op
 * needs its own constant-evaluation code.
 *
 * Symbolic input dims are bound first (by the model's binding, see
 * extract/binding.h, or --dim NAME=V; names bound nowhere are 1), so a model
 * exported with a dynamic batch gets concrete shapes everywhere except where
 * a size depends on float data (NonZero, NonMaxSuppression, ...).  A dim the
 * file leaves without a name is bound by the name "INPUT:AXIS"
 * (pn_dim_bind_name).
 */
#include "runtime/infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "runtime/session.h"

typedef struct pn_infer_env {
	const pn_graph *g;
	pn_infer_result *res;
	struct pn_infer_env *parent;
	const pn_dimbind *bind;
} pn_infer_env;

static int64_t bound_dim(const pn_dimbind *b, const char *name)
{
	for (int i = 0; b && name && i < b->n; i++)
		if (!strcmp(b->names[i], name))
			return b->values[i];
	return 1;
}

const char *pn_dim_bind_name(const char *input, const pn_type *t, int axis, char *buf, int n)
{
	if (t->dim_names[axis])
		return t->dim_names[axis];
	snprintf(buf, (size_t)n, "%s:%d", input ? input : "", axis);
	return buf;
}

/* Declared type with every unknown dim of a graph input bound. */
static pn_type bind_input(const pn_type *t, const char *input, const pn_dimbind *b)
{
	pn_type out = *t;
	char buf[256];
	for (int i = 0; i < out.rank; i++)
		if (out.dims[i] < 0)
			out.dims[i] = bound_dim(b, pn_dim_bind_name(input, t, i, buf, sizeof buf));
	return out;
}

static pn_type type_of_tensor(const pn_tensor *t)
{
	pn_type ty;
	memset(&ty, 0, sizeof(ty));
	ty.kind = PN_KIND_TENSOR;
	ty.dtype = t->dtype;
	ty.rank = t->rank;
	for (int i = 0; i < t->rank; i++)
		ty.dims[i] = t->dims[i];
	return ty;
}

/* Fills what inference left unknown from what the file declared. */
static void merge_declared(pn_type *inferred, const pn_type *declared)
{
	if (declared->rank < 0 && !declared->dtype)
		return;
	if (!inferred->dtype)
		inferred->dtype = declared->dtype;
	if (inferred->rank < 0 && declared->rank >= 0) {
		inferred->kind = declared->kind;
		inferred->rank = declared->rank;
		for (int i = 0; i < declared->rank; i++)
			inferred->dims[i] = declared->dims[i];
	} else if (inferred->rank == declared->rank) {
		for (int i = 0; i < inferred->rank; i++)
			if (inferred->dims[i] < 0 && declared->dims[i] >= 0)
				inferred->dims[i] = declared->dims[i];
	}
}

static int static_small(const pn_type *t, int64_t max)
{
	if (!pn_type_is_static(t))
		return 0;
	int64_t n = pn_numel(t->rank, t->dims);
	return n >= 0 && n <= max;
}

/* Folding is worth it when all inputs are known and small, and the op is
 * neither random nor control flow (those depend on more than their inputs). */
static int foldable(const pn_node *n, const pn_op_info *op, pn_tinfo *const *in, const pn_tinfo *out)
{
	if ((op->flags & (F_RANDOM | F_TRAINING | F_SEQ)) || op->kind == CONTROL || !pn_op_kernel(n->op))
		return 0;
	for (int i = 0; i < n->n_in; i++) {
		if (!in[i])
			continue;
		if (op->flags & F_SHAPE_ONLY) {
			if (!pn_type_is_static(&in[i]->type))
				return 0;
		} else if (!in[i]->value || in[i]->value->numel > PN_FOLD_MAX_NUMEL) {
			return 0;
		}
	}
	for (int i = 0; i < n->n_out; i++)
		if (out[i].type.rank >= 0 && pn_type_is_static(&out[i].type) &&
		    !static_small(&out[i].type, PN_FOLD_MAX_NUMEL))
			return 0;
	return 1;
}

static int keep_folded(pn_infer_result *res, pn_tensor *t)
{
	pn_tensor **f = realloc(res->folded, sizeof(*f) * (size_t)(res->n_folded + 1));
	if (!f)
		return -1;
	res->folded = f;
	res->folded[res->n_folded++] = t;
	return 0;
}

/* Runs the kernel on known inputs; on any failure the node just stays
 * unfolded (inference already has its types). */
static void fold(pn_infer_env *env, const pn_node *n, pn_tinfo *const *in)
{
	pn_tensor *ins_s[16], *outs_s[16];
	pn_tensor shapes_s[16];
	int nin = n->n_in, nout = n->n_out;
	pn_tensor **ins = nin > 16 ? calloc((size_t)nin, sizeof(void *)) : ins_s;
	pn_tensor *shapes = nin > 16 ? calloc((size_t)nin, sizeof(pn_tensor)) : shapes_s;
	pn_tensor **outs = nout > 16 ? calloc((size_t)nout, sizeof(void *)) : outs_s;
	char err[PN_ERRLEN];
	if (!ins || !shapes || !outs)
		goto done;
	for (int i = 0; i < nin; i++) {
		ins[i] = NULL;
		if (!in[i])
			continue;
		if (in[i]->value) {
			ins[i] = (pn_tensor *)in[i]->value;
		} else {   /* shape-only op: a dataless tensor of the right shape */
			memset(&shapes[i], 0, sizeof(pn_tensor));
			shapes[i].dtype = in[i]->type.dtype;
			shapes[i].rank = in[i]->type.rank;
			for (int d = 0; d < shapes[i].rank; d++)
				shapes[i].dims[d] = in[i]->type.dims[d];
			shapes[i].numel = pn_numel(shapes[i].rank, shapes[i].dims);
			ins[i] = &shapes[i];
		}
	}
	if (pn_exec_node(n, ins, nin, outs, 0, err))
		goto done;
	for (int i = 0; i < nout; i++) {
		int v = n->out[i];
		if (v < 0 || outs[i]->kind != PN_KIND_TENSOR || keep_folded(env->res, outs[i])) {
			pn_tensor_free(outs[i]);
			continue;
		}
		env->res->v[v].value = outs[i];
		env->res->v[v].type = type_of_tensor(outs[i]);
	}
done:
	if (ins != ins_s)
		free(ins);
	if (shapes != shapes_s)
		free(shapes);
	if (outs != outs_s)
		free(outs);
}

int pn_node_lacks_input0(const pn_node *n, int has_input0)
{
	if (has_input0)
		return 0;
	switch (n->op) {
	case PN_OP_Loop: case PN_OP_Scan: case PN_OP_Optional: case PN_OP_OptionalHasElement:
		return 0;   /* input 0 optional (Scan: opset 8's sequence_lens) */
	case PN_OP_Constant: case PN_OP_RandomNormal: case PN_OP_RandomUniform:
	case PN_OP_SequenceEmpty:
		return n->n_in > 0;   /* no inputs at all */
	default:
		return 1;
	}
}

static int infer_node(pn_infer_env *env, const pn_node *n, char *err)
{
	pn_infer_result *res = env->res;
	pn_tinfo *in_s[16];
	pn_tinfo **in = n->n_in > 16 ? calloc((size_t)n->n_in, sizeof(void *)) : in_s;
	pn_tinfo *out = calloc((size_t)n->n_out + 1, sizeof(pn_tinfo));
	int rc = 0;
	if (!in || !out) {
		rc = pn_fail(err, "out of memory");
		goto done;
	}
	for (int i = 0; i < n->n_in; i++)
		in[i] = n->in[i] >= 0 ? &res->v[n->in[i]] : NULL;
	for (int i = 0; i < n->n_out; i++)
		out[i].type.rank = -1;
	const pn_op_info *op = n->op >= 0 ? &pn_ops[n->op] : NULL;
	/* found by fuzzing: a MaxPool or Unique whose X is "" was folded */
	if (op && pn_node_lacks_input0(n, n->n_in > 0 && n->in && n->in[0] >= 0)) {
		rc = pn_fail(err, "node '%s' (%s): input 0 is absent", n->name, n->op_type);
		goto done;
	}
	pn_infer_fn infer = pn_op_infer(n->op);
	if (op && infer) {
		pn_ictx c = {.node = n, .opset = n->opset, .n_in = n->n_in, .n_out = n->n_out,
			     .in = (const pn_tinfo *const *)in, .out = out, .env = env, .err = err};
		if (infer(&c)) {
			pn_errprefix(err, "node '%s' (%s)", n->name, n->op_type);
			rc = -1;
			goto done;
		}
	}
	/* An attribute such as GRU's hidden_size can ask for any dim: one beyond
	 * the decoder's limit would be stored in the model's record, which then
	 * no longer decodes (found by hostile_semantic.sh seed 2). */
	for (int i = 0; i < n->n_out; i++)
		for (int d = 0; d < out[i].type.rank && d < PN_MAX_RANK; d++)
			if (out[i].type.dims[d] > PN_MAX_NUMEL) {
				rc = pn_fail(err, "node '%s' (%s): output %d would have dim %lld (limit 2^40)",
					     n->name, n->op_type, i, (long long)out[i].type.dims[d]);
				goto done;
			}
	for (int i = 0; i < n->n_out; i++) {
		int v = n->out[i];
		if (v < 0)
			continue;
		const pn_value *val = &env->g->values[v];
		merge_declared(&out[i].type, &val->type);
		res->v[v].type = out[i].type;
		for (int d = 0; d < PN_MAX_RANK; d++)
			res->v[v].type.dim_names[d] = NULL;
		if (val->data) {   /* a Constant decoded at load time */
			res->v[v].value = val->data;
			res->v[v].type = type_of_tensor(val->data);
		}
	}
	if (op && !(n->n_out == 1 && n->out[0] >= 0 && res->v[n->out[0]].value) &&
	    foldable(n, op, in, out))
		fold(env, n, in);
done:
	if (in != in_s)
		free(in);
	free(out);
	return rc;
}

static int infer_env(pn_infer_env *env, const pn_type *input_types, char *err)
{
	const pn_graph *g = env->g;
	pn_infer_result *res = env->res;
	res->n = g->n_values;
	res->v = calloc((size_t)g->n_values + 1, sizeof(pn_tinfo));
	if (!res->v)
		return pn_fail(err, "out of memory");
	for (int v = 0; v < g->n_values; v++) {
		const pn_value *val = &g->values[v];
		res->v[v].type = val->type;
		if (val->data)
			res->v[v].value = val->data;
		if (val->role == PN_ROLE_OUTER && env->parent)
			res->v[v] = env->parent->res->v[val->outer];
	}
	for (int i = 0; i < g->n_inputs; i++) {
		pn_tinfo *t = &res->v[g->inputs[i]];
		t->type = input_types ? input_types[i]
				      : bind_input(&t->type, g->values[g->inputs[i]].name, env->bind);
	}
	for (int i = 0; i < g->n_nodes; i++)
		if (infer_node(env, &g->nodes[g->topo[i]], err))
			return -1;
	for (int v = 0; v < g->n_values; v++)
		if (!pn_type_is_static(&res->v[v].type) && res->v[v].type.kind == PN_KIND_TENSOR)
			res->unknown++;
	return 0;
}

int pn_infer_graph(const pn_graph *g, const pn_dimbind *bind, const pn_type *input_types,
		   pn_infer_result *res, char *err)
{
	memset(res, 0, sizeof(*res));
	pn_infer_env env = {.g = g, .res = res, .bind = bind};
	if (infer_env(&env, input_types, err)) {
		pn_infer_result_free(res);
		return -1;
	}
	return 0;
}

int pn_infer_subgraph(pn_ictx *c, const pn_graph *g, const pn_type *input_types,
		      pn_type *output_types, char *err)
{
	pn_infer_result res;
	memset(&res, 0, sizeof(res));
	pn_infer_env env = {.g = g, .res = &res, .parent = c->env,
			    .bind = c->env ? c->env->bind : NULL};
	int rc = c->env ? infer_env(&env, input_types, err) : -1;
	if (!rc)
		for (int i = 0; i < g->n_outputs; i++)
			output_types[i] = res.v[g->outputs[i]].type;
	pn_infer_result_free(&res);
	return rc;
}

void pn_infer_result_free(pn_infer_result *res)
{
	for (int i = 0; i < res->n_folded; i++)
		pn_tensor_free(res->folded[i]);
	free(res->folded);
	free(res->v);
	memset(res, 0, sizeof(*res));
}
