/*
 * tensor.h - element types and the tensor every stage passes around.
 *
 * Element type codes are ONNX's TensorProto.DataType numbers, so a code read
 * from a file is used as is.  A pn_tensor is a dense row-major array, or a
 * sequence of tensors, or an optional that may hold nothing: the three kinds
 * of value an ONNX graph can carry that passnet supports.
 */
#ifndef PN_TENSOR_H
#define PN_TENSOR_H

#include <stddef.h>
#include <stdint.h>

enum pn_dtype {
	PN_UNDEFINED = 0,
	PN_FLOAT = 1,
	PN_UINT8 = 2,
	PN_INT8 = 3,
	PN_UINT16 = 4,
	PN_INT16 = 5,
	PN_INT32 = 6,
	PN_INT64 = 7,
	PN_STRING = 8,
	PN_BOOL = 9,
	PN_FLOAT16 = 10,
	PN_DOUBLE = 11,
	PN_UINT32 = 12,
	PN_UINT64 = 13,
	PN_COMPLEX64 = 14,
	PN_COMPLEX128 = 15,
	PN_BFLOAT16 = 16,
	PN_DTYPE_COUNT
};

/* Largest rank any tensor may have; checked before anything is allocated. */
#define PN_MAX_RANK 8
/* Largest element count of one tensor (2^40), also checked up front. */
#define PN_MAX_NUMEL ((int64_t)1 << 40)

enum pn_value_kind {
	PN_KIND_TENSOR = 0,
	PN_KIND_SEQUENCE = 1,
	PN_KIND_OPTIONAL = 2,
};

typedef struct pn_tensor {
	int32_t dtype;
	int32_t rank;
	int64_t dims[PN_MAX_RANK];
	int64_t numel;
	/* numel elements of pn_dtype_size(dtype) bytes; PN_STRING: char *[numel] */
	void *data;
	uint8_t kind;       /* enum pn_value_kind */
	uint8_t owns;       /* data (and strings) were malloc'd for this tensor */
	uint8_t none;       /* optional holding no value */
	int32_t n_items;    /* sequence length */
	struct pn_tensor **items;
	int32_t elem_kind;  /* optional: kind of the held value */
	uint8_t pooled;     /* data belongs to an executor buffer pool */
	size_t cap;         /* bytes behind data when pooled */
} pn_tensor;

size_t      pn_dtype_size(int dtype);        /* 0 for unknown codes */
const char *pn_dtype_name(int dtype);        /* "float32", "int64", ... */
int         pn_dtype_from_name(const char *name);
int         pn_dtype_is_float(int dtype);    /* f16, bf16, f32, f64 */
int         pn_dtype_is_int(int dtype);      /* signed or unsigned integers */
int         pn_dtype_is_signed(int dtype);

float    pn_f16_to_f32(uint16_t h);
uint16_t pn_f32_to_f16(float f);          /* round to nearest even */
float    pn_bf16_to_f32(uint16_t h);
uint16_t pn_f32_to_bf16(float f);         /* round to nearest even */

/* Element count of dims, or -1 if a dim is negative or the product overflows
 * PN_MAX_NUMEL. */
int64_t pn_numel(int rank, const int64_t *dims);

/* Heap tensors (owns = 1).  pn_tensor_new zero-fills. */
pn_tensor *pn_tensor_new(int dtype, int rank, const int64_t *dims);
int        pn_tensor_alloc_data(pn_tensor *t);   /* after dtype/rank/dims set */
void       pn_tensor_free(pn_tensor *t);         /* frees data it owns, items, t */
void       pn_tensor_clear(pn_tensor *t);        /* like free, but keeps t itself */
pn_tensor *pn_tensor_clone(const pn_tensor *t);  /* deep copy */
size_t     pn_tensor_nbytes(const pn_tensor *t);
/* 1 when a and b have the same rank and dims (dtype and kind not compared). */
int        pn_tensor_same_shape(const pn_tensor *a, const pn_tensor *b);
/* Appends item to sequence seq, which takes ownership of it; -1 when out of
 * memory (item is then still the caller's). */
int        pn_seq_push(pn_tensor *seq, pn_tensor *item);

/* Element i as double / as int64, for any numeric dtype (slow path helpers). */
double  pn_tensor_get_f64(const pn_tensor *t, int64_t i);
int64_t pn_tensor_get_i64(const pn_tensor *t, int64_t i);
void    pn_tensor_set_f64(pn_tensor *t, int64_t i, double v);

/* Writes "float32[1,3,224,224]" into buf. */
char *pn_tensor_desc(const pn_tensor *t, char *buf, size_t n);

#endif
