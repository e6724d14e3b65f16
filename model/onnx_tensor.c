/*
 * onnx_tensor.c - TensorProto <-> pn_tensor, and the sequence/optional
 * wrappers that ONNX backend-test files use for non-tensor values.
 *
 * Every size is checked against the declared dims before anything is
 * allocated: a file that claims 2^62 elements fails here with a message
 * instead of asking malloc for it.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "model/onnx.h"
#include "testdata.pb-c.h"

static const char *tname(const Onnx__TensorProto *tp)
{
	return tp->name && *tp->name ? tp->name : "(unnamed)";
}

/* Validates dtype and dims and fills the header of out. */
static int tensor_header(const Onnx__TensorProto *tp, pn_tensor *out, char *err)
{
	memset(out, 0, sizeof(*out));
	if (!tp->has_data_type || !pn_dtype_size(tp->data_type))
		return pn_fail(err, "tensor '%s' has unsupported data type %d", tname(tp),
			       tp->data_type);
	if (tp->n_dims > PN_MAX_RANK)
		return pn_fail(err, "tensor '%s' has rank %zu (limit %d)", tname(tp), tp->n_dims,
			       PN_MAX_RANK);
	out->dtype = tp->data_type;
	out->rank = (int32_t)tp->n_dims;
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0 || tp->dims[i] > PN_MAX_NUMEL)
			return pn_fail(err, "tensor '%s' has dim %lld out of range", tname(tp),
				       (long long)tp->dims[i]);
		out->dims[i] = tp->dims[i];
	}
	out->numel = pn_numel(out->rank, out->dims);
	if (out->numel < 0)
		return pn_fail(err, "tensor '%s' has more than 2^40 elements", tname(tp));
	return 0;
}

/* Narrows int32_data into 1/2/4-byte element types as the format packs them. */
static void narrow_int32(const int32_t *src, int64_t n, int dtype, void *dst)
{
	for (int64_t i = 0; i < n; i++) {
		switch (pn_dtype_size(dtype)) {
		case 1: ((uint8_t *)dst)[i] = (uint8_t)src[i]; break;
		case 2: ((uint16_t *)dst)[i] = (uint16_t)src[i]; break;
		default: ((int32_t *)dst)[i] = src[i]; break;
		}
	}
	if (dtype == PN_BOOL)
		for (int64_t i = 0; i < n; i++)
			((uint8_t *)dst)[i] = ((uint8_t *)dst)[i] != 0;
}

/* How many numbers the typed field of out's dtype holds. */
static size_t typed_count(const Onnx__TensorProto *tp, int dtype)
{
	switch (dtype) {
	case PN_FLOAT: case PN_COMPLEX64: return tp->n_float_data;
	case PN_DOUBLE: case PN_COMPLEX128: return tp->n_double_data;
	case PN_INT64: return tp->n_int64_data;
	case PN_UINT32: case PN_UINT64: return tp->n_uint64_data;
	default: return tp->n_int32_data;
	}
}

static int typed_fields(const Onnx__TensorProto *tp, pn_tensor *out, void *dst, char *err)
{
	int64_t n = out->numel;
	int64_t cplx = (out->dtype == PN_COMPLEX64 || out->dtype == PN_COMPLEX128) ? 2 : 1;
	/* An empty tensor's field is a NULL array, which memcpy must not be
	 * given even for 0 bytes (UBSan, from fuzzing); the caller checked the
	 * count already. */
	if (n == 0)
		return 0;
	size_t have;
	/* An empty tensor's repeated fields are NULL, and memcpy's arguments must
	 * not be NULL even for 0 bytes: the copies below run only for have > 0. */
	switch (out->dtype) {
	case PN_FLOAT: case PN_COMPLEX64:
		have = tp->n_float_data;
		if (have && (int64_t)have == n * cplx)
			memcpy(dst, tp->float_data, have * 4);
		break;
	case PN_DOUBLE: case PN_COMPLEX128:
		have = tp->n_double_data;
		if (have && (int64_t)have == n * cplx)
			memcpy(dst, tp->double_data, have * 8);
		break;
	case PN_INT64:
		have = tp->n_int64_data;
		if (have && (int64_t)have == n)
			memcpy(dst, tp->int64_data, have * 8);
		break;
	case PN_UINT32: case PN_UINT64:
		have = tp->n_uint64_data;
		if ((int64_t)have == n)
			for (int64_t i = 0; i < n; i++) {
				if (out->dtype == PN_UINT32)
					((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
				else
					((uint64_t *)dst)[i] = tp->uint64_data[i];
			}
		break;
	default:
		have = tp->n_int32_data;
		if ((int64_t)have == n)
			narrow_int32(tp->int32_data, n, out->dtype, dst);
		break;
	}
	if ((int64_t)have != n * cplx)
		return pn_fail(err, "tensor '%s' declares %lld elements but holds %zu", tname(tp),
			       (long long)n, have);
	return 0;
}

static int string_fields(const Onnx__TensorProto *tp, pn_tensor *out, pn_arena *a, char *err)
{
	if ((int64_t)tp->n_string_data != out->numel)
		return pn_fail(err, "tensor '%s' declares %lld strings but holds %zu", tname(tp),
			       (long long)out->numel, tp->n_string_data);
	char **s = pn_arena_alloc(a, sizeof(char *) * (size_t)(out->numel ? out->numel : 1));
	if (!s)
		return pn_fail(err, "out of memory");
	for (int64_t i = 0; i < out->numel; i++) {
		s[i] = pn_arena_strndup(a, (const char *)tp->string_data[i].data,
					tp->string_data[i].len);
		if (!s[i])
			return pn_fail(err, "out of memory");
	}
	out->data = s;
	return 0;
}

int pn_tensor_from_proto(const Onnx__TensorProto *tp, pn_arena *a, pn_tensor *out, char *err)
{
	if (tensor_header(tp, out, err))
		return -1;
	if (tp->segment)
		return pn_fail(err, "tensor '%s' is segmented (unsupported)", tname(tp));
	if (out->dtype == PN_STRING)
		return string_fields(tp, out, a, err);
	size_t need = (size_t)out->numel * pn_dtype_size(out->dtype);
	int external = tp->has_data_location &&
		       tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	if (external && !tp->has_raw_data)
		return 1;
	/* The data must hold what the dims declare before the buffer is
	 * allocated: dims cost a few bytes of a file and may declare 2^40
	 * elements (fuzzing found 35 bytes asking malloc for terabytes). */
	int64_t cplx = (out->dtype == PN_COMPLEX64 || out->dtype == PN_COMPLEX128) ? 2 : 1;
	if (tp->has_raw_data ? tp->raw_data.len != need
			     : (int64_t)typed_count(tp, out->dtype) != out->numel * cplx)
		return tp->has_raw_data
		       ? pn_fail(err, "tensor '%s' has %zu bytes of data, expected %zu", tname(tp),
				 tp->raw_data.len, need)
		       : pn_fail(err, "tensor '%s' declares %lld elements but holds %zu", tname(tp),
				 (long long)out->numel, typed_count(tp, out->dtype));
	void *dst = pn_arena_alloc(a, need ? need : 1);
	if (!dst)
		return pn_fail(err, "out of memory for tensor '%s' (%zu bytes)", tname(tp), need);
	out->data = dst;
	if (tp->has_raw_data) {
		if (tp->raw_data.len != need)
			return pn_fail(err, "tensor '%s' has %zu bytes of data, expected %zu",
				       tname(tp), tp->raw_data.len, need);
		if (need)
			memcpy(dst, tp->raw_data.data, need);
		return 0;
	}
	return typed_fields(tp, out, dst, err);
}

Onnx__TensorProto *pn_tensor_to_proto(const pn_tensor *t, const char *name, pn_arena *a)
{
	Onnx__TensorProto *tp = pn_arena_alloc(a, sizeof(*tp));
	if (!tp)
		return NULL;
	onnx__tensor_proto__init(tp);
	tp->name = pn_arena_strdup(a, name ? name : "");
	tp->has_data_type = 1;
	tp->data_type = t->dtype;
	tp->n_dims = (size_t)t->rank;
	tp->dims = pn_arena_memdup(a, t->dims, sizeof(int64_t) * (size_t)(t->rank ? t->rank : 1));
	if (t->dtype == PN_STRING) {
		tp->n_string_data = (size_t)t->numel;
		tp->string_data = pn_arena_alloc(a, sizeof(ProtobufCBinaryData) *
						 (size_t)(t->numel ? t->numel : 1));
		if (!tp->string_data)
			return NULL;
		char *const *s = t->data;
		for (int64_t i = 0; i < t->numel; i++) {
			tp->string_data[i].data = (uint8_t *)(s[i] ? s[i] : "");
			tp->string_data[i].len = s[i] ? strlen(s[i]) : 0;
		}
	} else {
		tp->has_raw_data = 1;
		tp->raw_data.len = pn_tensor_nbytes(t);
		tp->raw_data.data = t->data;
	}
	return tp;
}

/* --- backend-test files ------------------------------------------------------ */

static pn_tensor *from_sequence(const Passnet__TestSequence *sq, pn_arena *a, char *err);
static pn_tensor *from_optional(const Passnet__TestOptional *op, pn_arena *a, char *err);

static pn_tensor *heap_from_proto(const Onnx__TensorProto *tp, pn_arena *a, char *err)
{
	pn_tensor tmp;
	int rc = pn_tensor_from_proto(tp, a, &tmp, err);
	if (rc > 0)
		pn_fail(err, "tensor '%s' refers to external data", tname(tp));
	if (rc)
		return NULL;
	pn_tensor *t = pn_tensor_clone(&tmp);
	if (!t)
		pn_fail(err, "out of memory");
	return t;
}

static pn_tensor *new_container(int kind)
{
	pn_tensor *t = calloc(1, sizeof(*t));
	if (t) {
		t->kind = (uint8_t)kind;
		t->owns = 1;
	}
	return t;
}

static pn_tensor *from_sequence(const Passnet__TestSequence *sq, pn_arena *a, char *err)
{
	pn_tensor *seq = new_container(PN_KIND_SEQUENCE);
	if (!seq)
		return NULL;
	seq->dtype = PN_UNDEFINED;
	for (size_t i = 0; i < sq->n_tensor_values; i++) {
		pn_tensor *t = heap_from_proto(sq->tensor_values[i], a, err);
		if (!t || pn_seq_push(seq, t)) {
			pn_tensor_free(t);
			pn_tensor_free(seq);
			return NULL;
		}
		seq->dtype = t->dtype;
	}
	if (sq->n_sequence_values || sq->n_optional_values) {
		pn_fail(err, "nested sequences in test data are not supported");
		pn_tensor_free(seq);
		return NULL;
	}
	return seq;
}

static pn_tensor *from_optional(const Passnet__TestOptional *op, pn_arena *a, char *err)
{
	pn_tensor *inner = NULL;
	if (op->tensor_value)
		inner = heap_from_proto(op->tensor_value, a, err);
	else if (op->sequence_value)
		inner = from_sequence(op->sequence_value, a, err);
	else if (op->optional_value)
		return pn_fail(err, "nested optionals are not supported"), NULL;
	if ((op->tensor_value || op->sequence_value) && !inner)
		return NULL;
	pn_tensor *t = inner ? inner : new_container(PN_KIND_OPTIONAL);
	if (!t)
		return NULL;
	/* An optional holding a value is represented by that value with the
	 * optional kind on top; elem_kind says what it holds. */
	t->elem_kind = inner ? inner->kind : (op->elem_type == 3 ? PN_KIND_SEQUENCE : PN_KIND_TENSOR);
	t->kind = PN_KIND_OPTIONAL;
	t->none = inner == NULL;
	return t;
}

int pn_tensor_read_pb(const void *bytes, size_t len, int kind, pn_tensor **out, char **name,
		      char *err)
{
	pn_arena a;
	ProtobufCAllocator al;
	pn_arena_init(&a, 0);
	pn_arena_protobuf_allocator(&a, &al);
	*out = NULL;
	const char *nm = NULL;
	if (kind == PN_KIND_SEQUENCE) {
		Passnet__TestSequence *sq = passnet__test_sequence__unpack(&al, len, bytes);
		if (sq) {
			*out = from_sequence(sq, &a, err);
			nm = sq->name;
		} else {
			pn_fail(err, "not a sequence protobuf");
		}
	} else if (kind == PN_KIND_OPTIONAL) {
		Passnet__TestOptional *op = passnet__test_optional__unpack(&al, len, bytes);
		if (op) {
			*out = from_optional(op, &a, err);
			nm = op->name;
		} else {
			pn_fail(err, "not an optional protobuf");
		}
	} else {
		Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&al, len, bytes);
		if (tp) {
			*out = heap_from_proto(tp, &a, err);
			nm = tp->name;
		} else {
			pn_fail(err, "not a TensorProto");
		}
	}
	if (*out && name)
		*name = strdup(nm ? nm : "");
	pn_arena_free(&a);
	return *out ? 0 : -1;
}

static Passnet__TestSequence *sequence_to_proto(const pn_tensor *t, const char *name, pn_arena *a)
{
	Passnet__TestSequence *sq = pn_arena_alloc(a, sizeof(*sq));
	if (!sq)
		return NULL;
	passnet__test_sequence__init(sq);
	sq->name = pn_arena_strdup(a, name ? name : "");
	sq->has_elem_type = 1;
	sq->elem_type = 1;
	sq->n_tensor_values = (size_t)t->n_items;
	sq->tensor_values = pn_arena_alloc(a, sizeof(void *) * (size_t)(t->n_items + 1));
	if (!sq->tensor_values)
		return NULL;
	for (int i = 0; i < t->n_items; i++)
		if (!(sq->tensor_values[i] = pn_tensor_to_proto(t->items[i], "", a)))
			return NULL;
	return sq;
}

int pn_tensor_write_pb(const pn_tensor *t, const char *name, void **bytes, size_t *len, char *err)
{
	pn_arena a;
	pn_arena_init(&a, 0);
	ProtobufCMessage *msg = NULL;
	if (t->kind == PN_KIND_SEQUENCE) {
		msg = (ProtobufCMessage *)sequence_to_proto(t, name, &a);
	} else if (t->kind == PN_KIND_OPTIONAL) {
		Passnet__TestOptional *op = pn_arena_alloc(&a, sizeof(*op));
		if (op) {
			passnet__test_optional__init(op);
			op->name = pn_arena_strdup(&a, name ? name : "");
			op->has_elem_type = 1;
			op->elem_type = t->elem_kind == PN_KIND_SEQUENCE ? 3 : 1;
			if (!t->none && t->elem_kind == PN_KIND_SEQUENCE)
				op->sequence_value = sequence_to_proto(t, "", &a);
			else if (!t->none)
				op->tensor_value = pn_tensor_to_proto(t, "", &a);
		}
		msg = (ProtobufCMessage *)op;
	} else {
		msg = (ProtobufCMessage *)pn_tensor_to_proto(t, name, &a);
	}
	int rc = -1;
	if (msg) {
		*len = protobuf_c_message_get_packed_size(msg);
		*bytes = malloc(*len ? *len : 1);
		if (*bytes) {
			protobuf_c_message_pack(msg, *bytes);
			rc = 0;
		}
	}
	if (rc)
		pn_fail(err, "out of memory encoding '%s'", name ? name : "");
	pn_arena_free(&a);
	return rc;
}
