/*
 * compare.h - comparing an output with its reference under a tolerance:
 * |got - want| <= atol + rtol * |want| elementwise, NaN equal to NaN and
 * infinities to themselves.  Used by `passnet conformance`, the profiler's
 * checks and the export checker.
 */
#ifndef PN_COMPARE_H
#define PN_COMPARE_H

#include "schemas/tensor.h"

enum pn_cmp_class {
	PN_CMP_OK = 0,
	PN_CMP_ACCURACY,   /* values differ beyond tolerance */
	PN_CMP_NANINF,     /* NaN or Inf where the reference has a finite value */
	PN_CMP_SHAPE,
	PN_CMP_DTYPE,
	PN_CMP_KIND,       /* tensor vs sequence vs optional */
};

typedef struct pn_cmp {
	int cls;               /* enum pn_cmp_class */
	double max_abs, max_rel;
	int64_t worst;         /* index of the worst element */
	int64_t bad;           /* elements out of tolerance */
	char what[160];        /* one-line description when cls != OK */
} pn_cmp;

int pn_compare(const pn_tensor *got, const pn_tensor *want, double rtol, double atol, pn_cmp *r);
const char *pn_cmp_class_name(int cls);
/* Same kind, dtype, shape and bytes (strings by content). */
int pn_tensor_same_bits(const pn_tensor *a, const pn_tensor *b);

#endif
