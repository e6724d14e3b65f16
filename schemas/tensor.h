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

/*
 * float16 and bfloat16 to and from float32, rounding to nearest even; a NaN
 * stays a NaN, made quiet (as F16C does).  They are inline and branch-free,
 * in integer and float bit arithmetic, because kernels call them per
 * element: a loop over a tensor vectorises around them, conversions
 * included (gcc 12 vectorises no _Float16 conversion without AVX512-FP16,
 * so F16C's scalar form would keep such a loop scalar).  pn_f16_to_f32_n
 * and pn_f32_to_f16_n convert whole arrays, with F16C's vector form where
 * the build has it (-march=native).  pn_f16_to_f32_soft and
 * pn_f32_to_f16_soft are the plain field-by-field definitions;
 * test_dtype_convert checks that the other versions agree with them on all
 * 65,536 halves and on float32 patterns around every rounding boundary.
 */
float    pn_f16_to_f32_soft(uint16_t h);
uint16_t pn_f32_to_f16_soft(float f);

static inline float pn_f16_to_f32(uint16_t h)
{
	/* The exponent and mantissa moved into float32's fields, then scaled
	 * by 2^112 (the difference of the biases): exact, and a subnormal half
	 * comes out normalised.  Infinity and NaN get float32's top exponent. */
	uint32_t em = h & 0x7fffu;
	union { uint32_t u; float f; } v = {.u = em << 13};
	v.f *= 0x1p112f;
	v.u |= em >= 0x7c00u ? 0x7f800000u : 0;
	v.u |= em > 0x7c00u ? 0x400000u : 0;
	v.u |= (uint32_t)(h & 0x8000u) << 16;
	return v.f;
}

static inline uint16_t pn_f32_to_f16(float f)
{
	union { float f; uint32_t u; } v = {.f = f}, sub;
	uint32_t sign = (v.u >> 16) & 0x8000u, a = v.u & 0x7fffffffu;
	/* below 2^-14, a half subnormal: adding 0.5 (2^-1) leaves the
	 * rounded-to-nearest-even count of 2^-24 in the low mantissa bits */
	sub.u = a;
	sub.f += 0.5f;
	uint32_t small = sub.u - 0x3f000000u;
	/* normal: rebias, round to nearest even on the 13 dropped bits */
	uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1)) >> 13;
	uint32_t r = a < 0x38800000u ? small : normal;
	r = a >= 0x47800000u ? 0x7c00u : r;                        /* overflow */
	r = a > 0x7f800000u ? 0x7e00u | ((a >> 13) & 0x3ffu) : r;  /* NaN, quiet */
	return (uint16_t)(sign | r);
}

static inline float pn_bf16_to_f32(uint16_t h)
{
	union { uint32_t u; float f; } v = {.u = (uint32_t)h << 16};
	return v.f;
}
static inline uint16_t pn_f32_to_bf16(float f)
{
	union { float f; uint32_t u; } v = {.f = f};
	uint32_t x = v.u, rounded = (x + 0x7fff + ((x >> 16) & 1)) >> 16;
	return (uint16_t)((x & 0x7fffffff) > 0x7f800000 ? (x >> 16) | 0x40 : rounded);
}

/* n elements at once (the staging of a whole tensor through float32). */
void pn_f16_to_f32_n(const uint16_t *src, float *dst, int64_t n);
void pn_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n);

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
