/*
 * onnx_types.c - a value's type as an ONNX TypeProto: tensors with the dims
 * that are known, sequences of tensors, optionals of either.  Used to write
 * inferred types into stored models and to rebuild subgraphs.
 */
#include "model/onnx.h"

static Onnx__TypeProto *tensor_type_proto(pn_arena *a, const pn_type *t)
{
	Onnx__TypeProto *tp = pn_arena_alloc(a, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = pn_arena_alloc(a, sizeof(*tt));
	if (!tp || !tt)
		return NULL;
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = t->dtype;
	if (t->rank < 0)
		return tp;
	Onnx__TensorShapeProto *sh = pn_arena_alloc(a, sizeof(*sh));
	if (!sh)
		return NULL;
	onnx__tensor_shape_proto__init(sh);
	tt->shape = sh;
	sh->n_dim = (size_t)t->rank;
	sh->dim = pn_arena_alloc(a, sizeof(void *) * (sh->n_dim + 1));
	for (size_t i = 0; sh->dim && i < sh->n_dim; i++) {
		Onnx__TensorShapeProto__Dimension *d = pn_arena_alloc(a, sizeof(*d));
		if (!d)
			return NULL;
		onnx__tensor_shape_proto__dimension__init(d);
		if (t->dims[i] >= 0) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = t->dims[i];
		}
		sh->dim[i] = d;
	}
	return tp;
}

Onnx__TypeProto *pn_type_to_proto(pn_arena *a, const pn_type *t)
{
	Onnx__TypeProto *inner = tensor_type_proto(a, t);
	if (!inner || t->kind == PN_KIND_TENSOR)
		return inner;
	Onnx__TypeProto *tp = pn_arena_alloc(a, sizeof(*tp));
	if (!tp)
		return NULL;
	onnx__type_proto__init(tp);
	if (t->kind == PN_KIND_SEQUENCE) {
		Onnx__TypeProto__Sequence *sq = pn_arena_alloc(a, sizeof(*sq));
		if (!sq)
			return NULL;
		onnx__type_proto__sequence__init(sq);
		sq->elem_type = inner;
		tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
		tp->sequence_type = sq;
	} else {
		Onnx__TypeProto__Optional *op = pn_arena_alloc(a, sizeof(*op));
		if (!op)
			return NULL;
		onnx__type_proto__optional__init(op);
		if (t->elem_kind == PN_KIND_SEQUENCE) {   /* optional(sequence(tensor)) */
			pn_type seq = *t;
			seq.kind = PN_KIND_SEQUENCE;
			inner = pn_type_to_proto(a, &seq);
		}
		op->elem_type = inner;
		tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
		tp->optional_type = op;
	}
	return tp;
}
