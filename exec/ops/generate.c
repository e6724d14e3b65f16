/*
 * generate.c - ops that make tensors from attributes or from shapes:
 * Constant, Shape, Size (and, to come: ConstantOfShape, Range, EyeLike,
 * random generators, window functions, MelWeightMatrix).
 */
#include <string.h>

#include "exec/infer.h"
#include "exec/kernel.h"

/* --- Constant ------------------------------------------------------------------ */

/* The attribute that holds a Constant's value, whichever form it takes. */
static const pn_attr *constant_attr(const pn_node *n)
{
	static const char *const names[] = {"value", "value_float", "value_floats", "value_int",
					    "value_ints", "value_string", "value_strings",
					    "sparse_value"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const pn_attr *a = pn_attr_find(n, names[i]);
		if (a)
			return a;
	}
	return NULL;
}

int pn_infer_Constant(pn_ictx *c)
{
	const pn_attr *a = constant_attr(c->node);
	if (!a)
		return pn_ifail(c, "Constant has no value attribute");
	int64_t n1[1];
	switch (a->type) {
	case PN_ATTR_TENSOR:
		if (a->t)   /* else a weight kept as metadata: its value is typed */
			pn_iset(c, 0, a->t->dtype, a->t->rank, a->t->dims);
		return 0;
	case PN_ATTR_FLOAT:
		pn_iset(c, 0, PN_FLOAT, 0, NULL);
		return 0;
	case PN_ATTR_INT:
		pn_iset(c, 0, PN_INT64, 0, NULL);
		return 0;
	case PN_ATTR_STRING:
		pn_iset(c, 0, PN_STRING, 0, NULL);
		return 0;
	case PN_ATTR_FLOATS:
	case PN_ATTR_INTS:
	case PN_ATTR_STRINGS:
		n1[0] = a->n;
		pn_iset(c, 0, a->type == PN_ATTR_FLOATS ? PN_FLOAT : a->type == PN_ATTR_INTS ? PN_INT64 : PN_STRING,
			1, n1);
		return 0;
	default:
		return pn_ifail(c, "Constant attribute '%s' has unsupported type %d", a->name, a->type);
	}
}

int pn_kernel_Constant(pn_kctx *k)
{
	const pn_attr *a = constant_attr(k->node);
	pn_tensor *o = k->out[0];
	if (!a)
		return pn_kfail(k, "Constant has no value attribute");
	switch (a->type) {
	case PN_ATTR_TENSOR:
		if (!a->t)
			return pn_kfail(k, "Constant value is metadata only");
		if (a->t->dtype == PN_STRING) {
			for (int64_t i = 0; i < o->numel; i++)
				((char **)o->data)[i] = strdup(((char **)a->t->data)[i]);
		} else {
			memcpy(o->data, a->t->data, pn_tensor_nbytes(o));
		}
		return 0;
	case PN_ATTR_FLOAT:
		((float *)o->data)[0] = a->f;
		return 0;
	case PN_ATTR_INT:
		((int64_t *)o->data)[0] = a->i;
		return 0;
	case PN_ATTR_FLOATS:
		memcpy(o->data, a->floats, sizeof(float) * (size_t)a->n);
		return 0;
	case PN_ATTR_INTS:
		memcpy(o->data, a->ints, sizeof(int64_t) * (size_t)a->n);
		return 0;
	case PN_ATTR_STRING:
		((char **)o->data)[0] = strdup(a->s);
		return 0;
	case PN_ATTR_STRINGS:
		for (int i = 0; i < a->n; i++)
			((char **)o->data)[i] = strdup(a->strings[i]);
		return 0;
	default:
		return pn_kfail(k, "unsupported Constant attribute");
	}
}

/* --- Shape, Size ----------------------------------------------------------------- */

/* Shape-15 slices the shape with start/end attributes (clamped like Slice). */
static void shape_range(const pn_node *n, int opset, int rank, int *lo, int *hi)
{
	*lo = 0;
	*hi = rank;
	if (opset < 15)
		return;
	int64_t s = pn_attr_int(n, "start", 0), e = pn_attr_int(n, "end", rank);
	if (s < 0)
		s += rank;
	if (e < 0)
		e += rank;
	*lo = (int)(s < 0 ? 0 : s > rank ? rank : s);
	*hi = (int)(e < 0 ? 0 : e > rank ? rank : e);
	if (*hi < *lo)
		*hi = *lo;
}

int pn_infer_Shape(pn_ictx *c)
{
	const pn_tinfo *x = pn_iin(c, 0);
	if (!x || x->type.rank < 0) {
		pn_iset(c, 0, PN_INT64, 1, (int64_t[]){-1});
		return 0;
	}
	int lo, hi;
	shape_range(c->node, c->opset, x->type.rank, &lo, &hi);
	pn_iset(c, 0, PN_INT64, 1, (int64_t[]){hi - lo});
	return 0;
}

int pn_kernel_Shape(pn_kctx *k)
{
	const pn_tensor *x = k->in[0];
	int lo, hi;
	shape_range(k->node, k->opset, x->rank, &lo, &hi);
	pn_tensor *o = pn_out_alloc(k, 0, PN_INT64, 1, (int64_t[]){hi - lo});
	if (!o)
		return -1;
	for (int i = lo; i < hi; i++)
		((int64_t *)o->data)[i - lo] = x->dims[i];
	return 0;
}

int pn_infer_Size(pn_ictx *c)
{
	pn_iset(c, 0, PN_INT64, 0, NULL);
	return 0;
}

int pn_kernel_Size(pn_kctx *k)
{
	((int64_t *)k->out[0]->data)[0] = pn_numel(k->in[0]->rank, k->in[0]->dims);
	return 0;
}
